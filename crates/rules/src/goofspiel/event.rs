//! Goofspiel's bids and the events of its log, with their transcript
//! lines.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::core::{RuleError, Seat};

/// A bid: the value of one of the bidder's cards.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bid(pub u8);

impl fmt::Display for Bid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for Bid {
    type Err = RuleError;
    /// Accepts `7` or `bid 7` (the keyword in any case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || RuleError::malformed("a goofspiel action is a card number such as 7");
        let mut words = s.split_whitespace();
        let number = match (words.next(), words.next(), words.next()) {
            (Some(n), None, None) => n,
            (Some(w), Some(n), None) if w.eq_ignore_ascii_case("bid") => n,
            _ => return Err(bad()),
        };
        if !number.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        // Digits beyond a u8 are still a well-formed bid of a card nobody holds.
        Ok(Bid(number.parse::<u8>().unwrap_or(u8::MAX)))
    }
}

/// One resolved turn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnResult {
    /// The victory card drawn into the lot this turn.
    pub drawn: u8,
    /// Both bids, by seat.
    pub bids: [u8; 2],
    /// Points gained this turn, by seat.
    pub gained: [u32; 2],
}

/// The game's log.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum GoofspielEvent {
    /// A round begins with `cards` cards per hand.
    RoundStart {
        /// Round index from 0.
        round: usize,
        /// Cards per hand.
        cards: u8,
    },
    /// A victory card is turned into the lot; `next` is the card after it if
    /// the variant shows it.
    Draw {
        /// The card drawn.
        card: u8,
        /// The next card, when previewed.
        next: Option<u8>,
    },
    /// A seat sealed its bid (seen only by that seat until the reveal).
    Sealed {
        /// Who bid.
        seat: Seat,
        /// The bid.
        card: u8,
    },
    /// Both bids are revealed.
    Reveal {
        /// Bids by seat.
        bids: [u8; 2],
        /// Who took the lot; `None` on a tie.
        winner: Option<Seat>,
        /// The value of the cards taken.
        points: u32,
    },
    /// A round ended; `discarded` is the value of an unwon lot thrown away.
    RoundEnd {
        /// Points of each seat in this round.
        points: [u32; 2],
        /// Victory cards left in the lot, discarded.
        discarded: u32,
    },
    /// A seat forfeited the game.
    Forfeit {
        /// Who forfeited.
        seat: Seat,
    },
}

impl crate::core::Event for GoofspielEvent {
    fn visible_to(&self, seat: Seat) -> bool {
        match self {
            GoofspielEvent::Sealed { seat: s, .. } => *s == seat,
            GoofspielEvent::RoundStart { .. }
            | GoofspielEvent::Draw { .. }
            | GoofspielEvent::Reveal { .. }
            | GoofspielEvent::RoundEnd { .. }
            | GoofspielEvent::Forfeit { .. } => true,
        }
    }
}

impl fmt::Display for GoofspielEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GoofspielEvent::RoundStart { round, cards } => {
                write!(f, "round {} begins with {cards} cards each", round + 1)
            }
            GoofspielEvent::Draw {
                card,
                next: Some(n),
            } => {
                write!(f, "victory card {card} turned into the lot (next: {n})")
            }
            GoofspielEvent::Draw { card, next: None } => {
                write!(f, "victory card {card} turned into the lot")
            }
            GoofspielEvent::Sealed { seat, card } => write!(f, "seat {seat} seals bid {card}"),
            GoofspielEvent::Reveal {
                bids,
                winner: Some(w),
                points,
            } => write!(
                f,
                "bids {} vs {}: seat {w} takes {points} point{}",
                bids[0],
                bids[1],
                if *points == 1 { "" } else { "s" }
            ),
            GoofspielEvent::Reveal {
                bids, winner: None, ..
            } => {
                write!(f, "bids {} vs {}: tie", bids[0], bids[1])
            }
            GoofspielEvent::RoundEnd { points, discarded } => write!(
                f,
                "round ends {} to {}{}",
                points[0],
                points[1],
                if *discarded > 0 {
                    format!(", {discarded} points left in the lot are discarded")
                } else {
                    String::new()
                }
            ),
            GoofspielEvent::Forfeit { seat } => write!(f, "seat {seat} forfeits"),
        }
    }
}
