//! The eight kinds of card, the deck, and small fixed-size card lists used
//! for hands and piles (no allocation on the hot path).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::core::RuleError;

/// A Love Letter card. The discriminant is the card's value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Card {
    /// 1 (×5): names a non-Soldier card; if the target holds it, it is out.
    Soldier = 1,
    /// 2 (×2): the player looks at the target's hand.
    Clown = 2,
    /// 3 (×2): player and target compare hands; the lower is out.
    Knight = 3,
    /// 4 (×2): the player cannot be targeted until its next turn.
    Priestess = 4,
    /// 5 (×2): the target (maybe oneself) discards its hand and draws anew.
    Wizard = 5,
    /// 6 (×1): swap hands with the target.
    General = 6,
    /// 7 (×1): holding it with a card worth 5 or more puts the holder out.
    Minister = 7,
    /// 8 (×1): whoever plays or discards her is out.
    Princess = 8,
}

/// Number of cards in the deck.
pub const DECK_SIZE: usize = 16;

/// The deck in a fixed canonical order (lowest first).
pub const DECK: [Card; DECK_SIZE] = [
    Card::Soldier,
    Card::Soldier,
    Card::Soldier,
    Card::Soldier,
    Card::Soldier,
    Card::Clown,
    Card::Clown,
    Card::Knight,
    Card::Knight,
    Card::Priestess,
    Card::Priestess,
    Card::Wizard,
    Card::Wizard,
    Card::General,
    Card::Minister,
    Card::Princess,
];

impl Card {
    /// Every kind of card, lowest value first.
    pub const ALL: [Card; 8] = [
        Card::Soldier,
        Card::Clown,
        Card::Knight,
        Card::Priestess,
        Card::Wizard,
        Card::General,
        Card::Minister,
        Card::Princess,
    ];

    /// The cards a Soldier may name (every card but the Soldier).
    pub const GUESSES: [Card; 7] = [
        Card::Clown,
        Card::Knight,
        Card::Priestess,
        Card::Wizard,
        Card::General,
        Card::Minister,
        Card::Princess,
    ];

    /// The card's value, 1..=8.
    pub fn value(self) -> u8 {
        self as u8
    }

    /// The card of value `v`, if there is one.
    pub fn from_value(v: u8) -> Option<Card> {
        Card::ALL.get(usize::from(v).wrapping_sub(1)).copied()
    }

    /// How many copies of this card the deck holds.
    pub fn copies(self) -> u8 {
        match self {
            Card::Soldier => 5,
            Card::Clown | Card::Knight | Card::Priestess | Card::Wizard => 2,
            Card::General | Card::Minister | Card::Princess => 1,
        }
    }

    /// Whether playing this card names a target (Soldier, Clown, Knight,
    /// Wizard, General).
    pub fn takes_target(self) -> bool {
        matches!(
            self,
            Card::Soldier | Card::Clown | Card::Knight | Card::Wizard | Card::General
        )
    }

    /// The lower-case name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Card::Soldier => "soldier",
            Card::Clown => "clown",
            Card::Knight => "knight",
            Card::Priestess => "priestess",
            Card::Wizard => "wizard",
            Card::General => "general",
            Card::Minister => "minister",
            Card::Princess => "princess",
        }
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Card {
    type Err = RuleError;
    /// Case-insensitive card name (`Princess`, `princess`, `PRINCESS`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Card::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                RuleError::malformed(
                    "unknown card (expected soldier, clown, knight, priestess, wizard, \
                     general, minister or princess)",
                )
            })
    }
}

/// Up to `N` cards in order, stored inline.
#[derive(Copy, Clone)]
pub(crate) struct Cards<const N: usize> {
    cards: [Card; N],
    len: u8,
}

/// A hand: 0, 1 or 2 cards.
pub(crate) type Hand = Cards<2>;
/// A pile or the deck: up to 16 cards.
pub(crate) type Pile = Cards<DECK_SIZE>;

impl<const N: usize> Cards<N> {
    pub(crate) const EMPTY: Self = Cards {
        cards: [Card::Soldier; N],
        len: 0,
    };

    pub(crate) fn as_slice(&self) -> &[Card] {
        &self.cards[..usize::from(self.len)]
    }

    #[cfg(test)]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [Card] {
        &mut self.cards[..usize::from(self.len)]
    }

    pub(crate) fn len(&self) -> usize {
        usize::from(self.len)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn push(&mut self, card: Card) {
        self.cards[usize::from(self.len)] = card;
        self.len += 1;
    }

    /// Removes and returns the last card.
    pub(crate) fn pop(&mut self) -> Option<Card> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.cards[usize::from(self.len)])
    }

    /// The first `len` cards (all of them if there are fewer).
    pub(crate) fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.len = len as u8;
        }
    }

    /// Total value of the cards.
    pub(crate) fn total(&self) -> u32 {
        self.as_slice().iter().map(|c| u32::from(c.value())).sum()
    }

    pub(crate) fn from_array(cards: [Card; N]) -> Self {
        Cards {
            cards,
            len: N as u8,
        }
    }
}

/// A hand's operations, written for its two places: no loop and no
/// bounds checks.
impl Hand {
    /// A hand of one card.
    pub(crate) fn one(card: Card) -> Self {
        Cards {
            cards: [card; 2],
            len: 1,
        }
    }

    pub(crate) fn contains(&self, card: Card) -> bool {
        let [a, b] = self.cards;
        (self.len >= 1 && a == card) || (self.len >= 2 && b == card)
    }

    /// Removes one copy of `card`, keeping the order of the others.
    pub(crate) fn remove(&mut self, card: Card) -> bool {
        let [a, b] = self.cards;
        match self.len {
            2 if a == card || b == card => {
                // The first copy goes: the other card is kept, in front.
                self.cards[0] = if a == card { b } else { a };
                self.len = 1;
                true
            }
            1 if a == card => {
                self.len = 0;
                true
            }
            _ => false,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// The highest card, if any.
    pub(crate) fn max(&self) -> Option<Card> {
        let [a, b] = self.cards;
        match self.len {
            0 => None,
            1 => Some(a),
            _ => Some(a.max(b)),
        }
    }
}

impl<const N: usize> PartialEq for Cards<N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> Eq for Cards<N> {}

impl<const N: usize> fmt::Debug for Cards<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_behaves_as_the_list_of_its_cards() {
        let mut hands = vec![vec![]];
        for a in Card::ALL {
            hands.push(vec![a]);
            for b in Card::ALL {
                hands.push(vec![a, b]);
            }
        }
        for cards in hands {
            let mut hand = Hand::EMPTY;
            cards.iter().for_each(|c| hand.push(*c));
            assert_eq!(hand.max(), cards.iter().copied().max());
            for card in Card::ALL {
                assert_eq!(hand.contains(card), cards.contains(&card), "{cards:?}");
                let mut after = hand;
                let mut want = cards.clone();
                let found = want.iter().position(|c| *c == card).map(|i| want.remove(i));
                assert_eq!(after.remove(card), found.is_some(), "{cards:?} {card}");
                assert_eq!(after.as_slice(), &want[..], "{cards:?} {card}");
            }
        }
    }
}
