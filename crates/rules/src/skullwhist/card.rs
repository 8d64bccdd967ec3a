//! Cards of SkullWhist: four suits, values 1 (lowest) to 13, written `H05`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::core::RuleError;

/// A suit. Spades are trumps.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    /// Clubs, `C`.
    Clubs,
    /// Diamonds, `D`.
    Diamonds,
    /// Hearts, `H`.
    Hearts,
    /// Spades, `S`: the trump suit.
    Spades,
}

impl Suit {
    /// All suits in index order.
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    /// The suit's letter.
    pub fn letter(self) -> char {
        match self {
            Suit::Clubs => 'C',
            Suit::Diamonds => 'D',
            Suit::Hearts => 'H',
            Suit::Spades => 'S',
        }
    }

    fn index(self) -> u8 {
        match self {
            Suit::Clubs => 0,
            Suit::Diamonds => 1,
            Suit::Hearts => 2,
            Suit::Spades => 3,
        }
    }

    /// Bit mask of this suit's 13 cards in a [`CardSet`].
    pub fn mask(self) -> u64 {
        0x1FFFu64 << (13 * u32::from(self.index()))
    }
}

/// One card, stored as `suit * 13 + value - 1` (0..52).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card(u8);

impl Card {
    /// The card with index 0, the club of value 1.
    pub(crate) const LOWEST: Card = Card(0);

    /// Builds a card; `None` unless `1 <= value <= 13`.
    pub fn new(suit: Suit, value: u8) -> Option<Card> {
        (1..=13)
            .contains(&value)
            .then(|| Card(suit.index() * 13 + value - 1))
    }

    /// The card with index 0..52.
    pub(crate) fn from_index(i: u8) -> Card {
        debug_assert!(i < 52);
        Card(i)
    }

    /// Index 0..52.
    pub fn index(self) -> u8 {
        self.0
    }

    /// The card's suit.
    pub fn suit(self) -> Suit {
        Suit::ALL[usize::from(self.0 / 13)]
    }

    /// The card's value, 1..=13 (1 is the lowest).
    pub fn value(self) -> u8 {
        self.0 % 13 + 1
    }

    /// Single-bit mask for a [`CardSet`].
    pub fn bit(self) -> u64 {
        1u64 << self.0
    }

    /// The card's text: its suit's letter and its value in two digits
    /// (`C01` … `S13`), as it is written on the wire, in records and on
    /// pages. Read from a table: cards are written on every move of every
    /// game, for its record and its spectators (issue 53).
    pub fn text(self) -> &'static str {
        // Three ASCII bytes each (see TEXTS).
        std::str::from_utf8(&TEXTS[usize::from(self.0)]).unwrap_or("???")
    }
}

/// Every card's [`Card::text`], by index.
static TEXTS: [[u8; 3]; 52] = {
    let mut t = [[0u8; 3]; 52];
    let mut i = 0;
    while i < 52 {
        let value = (i % 13 + 1) as u8;
        t[i] = [b"CDHS"[i / 13], b'0' + value / 10, b'0' + value % 10];
        i += 1;
    }
    t
};

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl FromStr for Card {
    type Err = RuleError;
    /// `H05`, `S13`, `c1` (suit letter in either case, value 1..13, one or two digits).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || RuleError::malformed(format!("'{s}' is not a card (expected e.g. H05)"));
        let mut chars = s.chars();
        let suit = match chars.next().map(|c| c.to_ascii_uppercase()) {
            Some('C') => Suit::Clubs,
            Some('D') => Suit::Diamonds,
            Some('H') => Suit::Hearts,
            Some('S') => Suit::Spades,
            _ => return Err(bad()),
        };
        let digits = chars.as_str();
        if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let value: u8 = digits.parse().map_err(|_| bad())?;
        Card::new(suit, value).ok_or_else(bad)
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.text())
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A set of cards as a 52-bit mask; iterates in sorted order (suit, value).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, Hash)]
pub struct CardSet(pub u64);

impl CardSet {
    /// Whether `card` is in the set.
    pub fn contains(self, card: Card) -> bool {
        self.0 & card.bit() != 0
    }
    /// Number of cards.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }
    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The cards of one suit.
    pub fn of_suit(self, suit: Suit) -> CardSet {
        CardSet(self.0 & suit.mask())
    }
    /// Cards in sorted order.
    pub fn iter(self) -> Cards {
        Cards(self.0)
    }
    /// Cards as a sorted vector.
    pub fn to_vec(self) -> Vec<Card> {
        // Gathered on the stack, then copied into a vector of the right
        // size at once: collected one by one, each card would check the
        // vector's room and store its length. (Room for every bit of the
        // set, as `iter` yields one card a bit.)
        let mut cards = [Card::LOWEST; 64];
        let mut n = 0;
        for card in self.iter() {
            cards[n] = card;
            n += 1;
        }
        cards[..n].to_vec()
    }
}

/// The cards of a [`CardSet`] in sorted order. It knows how many are left,
/// so a vector collected or extended from it is sized once.
#[derive(Clone, Debug)]
pub struct Cards(u64);

impl Iterator for Cards {
    type Item = Card;
    #[inline]
    fn next(&mut self) -> Option<Card> {
        (self.0 != 0).then(|| {
            let i = self.0.trailing_zeros() as u8;
            self.0 &= self.0 - 1;
            Card::from_index(i)
        })
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Cards {}

impl std::iter::FusedIterator for Cards {}

impl FromIterator<Card> for CardSet {
    fn from_iter<I: IntoIterator<Item = Card>>(cards: I) -> Self {
        CardSet(cards.into_iter().fold(0, |mask, c| mask | c.bit()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_is_written_as_its_suit_letter_and_two_digit_value() {
        for suit in Suit::ALL {
            for value in 1..=13 {
                let c = Card::new(suit, value).unwrap();
                let expected = format!("{}{:02}", suit.letter(), value);
                assert_eq!(c.text(), expected);
                assert_eq!(c.to_string(), expected);
                assert_eq!(
                    serde_json::to_string(&c).unwrap(),
                    format!("\"{expected}\"")
                );
            }
        }
    }

    #[test]
    fn card_text_round_trips_for_all_52_cards() {
        for i in 0..52 {
            let c = Card::from_index(i);
            assert_eq!(c.to_string().parse::<Card>(), Ok(c));
        }
        assert_eq!(Card::new(Suit::Hearts, 5).unwrap().to_string(), "H05");
    }

    #[test]
    fn lenient_card_forms_are_accepted_and_junk_refused() {
        assert_eq!(
            "s1".parse::<Card>(),
            Ok(Card::new(Suit::Spades, 1).unwrap())
        );
        for bad in [
            "", "H", "H00", "H14", "X05", "H005", "H+5", "H 5", "5H", "Hé",
        ] {
            assert!(bad.parse::<Card>().is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn one_is_the_lowest_value() {
        let ace = Card::new(Suit::Clubs, 1).unwrap();
        let two = Card::new(Suit::Clubs, 2).unwrap();
        assert!(ace.value() < two.value());
    }
}
