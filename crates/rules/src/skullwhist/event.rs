//! The log of a game of SkullWhist: its events, who sees each, and the
//! line a transcript shows for it.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Card;
use crate::core::Seat;

/// The game's log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SkullWhistEvent {
    /// A seat is dealt its hand (seen by that seat only).
    Deal {
        /// Who.
        seat: Seat,
        /// Its 13 cards, sorted.
        hand: Vec<Card>,
    },
    /// A seat sealed its bid (seen by that seat only).
    Sealed {
        /// Who.
        seat: Seat,
        /// The bid.
        bid: u8,
    },
    /// Both bids are in and shown; `leader` leads the first trick.
    Bids {
        /// Bids by seat.
        bids: [u8; 2],
        /// First leader (chosen at random at the deal).
        leader: Seat,
    },
    /// A card is played.
    Played {
        /// Who.
        seat: Seat,
        /// The card.
        card: Card,
    },
    /// A trick is complete.
    TrickWon {
        /// Trick number from 1.
        trick: u8,
        /// Who took it (and leads next).
        winner: Seat,
    },
    /// The game is scored.
    Scored {
        /// Tricks by seat.
        tricks: [u8; 2],
        /// Scores by seat.
        scores: [i64; 2],
    },
    /// A seat forfeited.
    Forfeit {
        /// Who.
        seat: Seat,
    },
}

impl crate::core::Event for SkullWhistEvent {
    fn visible_to(&self, seat: Seat) -> bool {
        match self {
            SkullWhistEvent::Deal { seat: s, .. } | SkullWhistEvent::Sealed { seat: s, .. } => {
                *s == seat
            }
            SkullWhistEvent::Bids { .. }
            | SkullWhistEvent::Played { .. }
            | SkullWhistEvent::TrickWon { .. }
            | SkullWhistEvent::Scored { .. }
            | SkullWhistEvent::Forfeit { .. } => true,
        }
    }
}

impl fmt::Display for SkullWhistEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkullWhistEvent::Deal { seat, hand } => {
                write!(f, "seat {seat} is dealt")?;
                for c in hand {
                    write!(f, " {c}")?;
                }
                Ok(())
            }
            SkullWhistEvent::Sealed { seat, bid } => write!(f, "seat {seat} bids {bid}"),
            SkullWhistEvent::Bids { bids, leader } => {
                write!(
                    f,
                    "bids are {} and {}; seat {leader} leads",
                    bids[0], bids[1]
                )
            }
            SkullWhistEvent::Played { seat, card } => write!(f, "seat {seat} plays {card}"),
            SkullWhistEvent::TrickWon { trick, winner } => {
                write!(f, "trick {trick} to seat {winner}")
            }
            SkullWhistEvent::Scored { tricks, scores } => write!(
                f,
                "tricks {} and {}; scores {} and {}",
                tricks[0], tricks[1], scores[0], scores[1]
            ),
            SkullWhistEvent::Forfeit { seat } => write!(f, "seat {seat} forfeits"),
        }
    }
}
