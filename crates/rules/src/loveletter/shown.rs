//! The short lists an event shows (the cards of a player going out, the
//! hands at a round's end), held inline: a game's log then allocates
//! nothing per event and drops as plain memory. In JSON each is a list,
//! as the `Vec` it replaced was.

use std::fmt;
use std::ops::Deref;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::card::{Card, Hand};
use crate::core::Seat;

/// An item an inline list can hold: a value for its empty places.
pub trait Item: Copy {
    /// What fills the places not in use (never seen).
    const BLANK: Self;
}

impl Item for Card {
    const BLANK: Self = Card::Soldier;
}

impl Item for (Seat, Card) {
    const BLANK: Self = (Seat(0), Card::Soldier);
}

/// Up to `N` items in order, stored inline.
#[derive(Copy, Clone)]
pub struct Few<T: Item, const N: usize> {
    items: [T; N],
    len: u8,
}

/// The cards a player showed as it went out: none, one or two.
pub type OutCards = Few<Card, 2>;

/// Every card still held at a round's end, by seat: at most two for each
/// of four players.
pub type RoundHands = Few<(Seat, Card), 8>;

/// More items than a list holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooMany {
    /// How many it holds.
    pub most: usize,
}

impl fmt::Display for TooMany {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at most {} items", self.most)
    }
}

impl std::error::Error for TooMany {}

impl<T: Item, const N: usize> Few<T, N> {
    /// The empty list.
    pub const EMPTY: Self = Few {
        items: [T::BLANK; N],
        len: 0,
    };

    /// The list of `items`, if it holds them all.
    pub fn of(items: &[T]) -> Result<Self, TooMany> {
        let mut few = Self::EMPTY;
        for item in items {
            few.push(*item)?;
        }
        Ok(few)
    }

    /// Adds `item` at the end, if there is room.
    pub fn push(&mut self, item: T) -> Result<(), TooMany> {
        let slot = self
            .items
            .get_mut(usize::from(self.len))
            .ok_or(TooMany { most: N })?;
        *slot = item;
        self.len += 1;
        Ok(())
    }

    /// The items, in order.
    pub fn as_slice(&self) -> &[T] {
        &self.items[..usize::from(self.len)]
    }
}

impl OutCards {
    /// The cards of `hand` (a hand holds two at most, as this list does).
    pub(crate) fn held(hand: &Hand) -> Self {
        let mut few = Self::EMPTY;
        for (slot, card) in few.items.iter_mut().zip(hand.as_slice()) {
            *slot = *card;
            few.len += 1;
        }
        few
    }
}

impl<T: Item, const N: usize> Default for Few<T, N> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<T: Item, const N: usize> Deref for Few<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<'a, T: Item, const N: usize> IntoIterator for &'a Few<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: Item + PartialEq, const N: usize> PartialEq for Few<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Item + Eq, const N: usize> Eq for Few<T, N> {}

impl<T: Item + fmt::Debug, const N: usize> fmt::Debug for Few<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<T: Item + Serialize, const N: usize> Serialize for Few<T, N> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.as_slice())
    }
}

impl<'de, T: Item + Deserialize<'de>, const N: usize> Deserialize<'de> for Few<T, N> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(deserializer)?;
        Few::of(&items).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_json_as_a_vec_was() {
        let out = OutCards::of(&[Card::Knight, Card::Princess]).unwrap();
        let json = serde_json::to_string(&out).unwrap();
        assert_eq!(json, r#"["knight","princess"]"#);
        assert_eq!(serde_json::from_str::<OutCards>(&json).unwrap(), out);
        let hands = RoundHands::of(&[(Seat(2), Card::Clown)]).unwrap();
        assert_eq!(serde_json::to_string(&hands).unwrap(), r#"[[2,"clown"]]"#);
        assert_eq!(serde_json::to_string(&OutCards::EMPTY).unwrap(), "[]");
    }

    #[test]
    fn more_than_it_holds_is_refused() {
        let three = [Card::Soldier, Card::Clown, Card::Knight];
        assert_eq!(OutCards::of(&three), Err(TooMany { most: 2 }));
        let err = serde_json::from_str::<OutCards>(r#"["soldier","clown","knight"]"#);
        assert!(err.unwrap_err().to_string().contains("at most 2"));
        let mut full = OutCards::of(&three[..2]).unwrap();
        assert!(full.push(Card::Princess).is_err());
        assert_eq!(full.as_slice(), &three[..2]);
    }
}
