//! A Love Letter action and its text form.
//!
//! `play soldier 2 princess`, `play wizard 3`, `play priestess`, `forfeit`.
//! Target numbers are 0-based seat indices (the 1-based player numbers of the
//! competition's protocol belong to its dialect). Parsing is case-insensitive,
//! tolerant of extra whitespace, and the leading `play` may be left out.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::card::Card;
use crate::core::{RuleError, Seat};

/// What the player to act does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Play {
    /// Play `card` from the hand, on `target` (cards that take one, when a
    /// legal target exists), naming `guess` (the Soldier, with a target).
    Play {
        /// The card played.
        card: Card,
        /// The targeted seat.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Seat>,
        /// The card a Soldier names.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guess: Option<Card>,
    },
    /// Give up the round: the player is out.
    Forfeit,
}

impl Play {
    /// Plays a card without target or guess (Priestess, Minister, Princess,
    /// or a targeting card when no target is legal).
    pub const fn card(card: Card) -> Play {
        Play::Play {
            card,
            target: None,
            guess: None,
        }
    }

    /// Plays a card on `target` (Clown, Knight, Wizard, General).
    pub const fn on(card: Card, target: Seat) -> Play {
        Play::Play {
            card,
            target: Some(target),
            guess: None,
        }
    }

    /// Plays the Soldier on `target`, naming `guess`.
    pub const fn soldier(target: Seat, guess: Card) -> Play {
        Play::Play {
            card: Card::Soldier,
            target: Some(target),
            guess: Some(guess),
        }
    }

    /// The card played, if this is not a forfeit.
    pub fn played_card(self) -> Option<Card> {
        match self {
            Play::Play { card, .. } => Some(card),
            Play::Forfeit => None,
        }
    }
}

impl fmt::Display for Play {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Play::Forfeit => f.write_str("forfeit"),
            Play::Play {
                card,
                target,
                guess,
            } => {
                write!(f, "play {card}")?;
                if let Some(t) = target {
                    write!(f, " {t}")?;
                }
                if let Some(g) = guess {
                    write!(f, " {g}")?;
                }
                Ok(())
            }
        }
    }
}

const SHAPE: &str = "a love letter action looks like 'play soldier 2 princess', \
                     'play wizard 3', 'play priestess' or 'forfeit'";

impl FromStr for Play {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut words = s.split_whitespace().peekable();
        let first = words.next().ok_or_else(|| RuleError::malformed(SHAPE))?;
        if first.eq_ignore_ascii_case("forfeit") {
            return match words.next() {
                None => Ok(Play::Forfeit),
                Some(_) => Err(RuleError::malformed("'forfeit' takes nothing after it")),
            };
        }
        let card_word = if first.eq_ignore_ascii_case("play") {
            words
                .next()
                .ok_or_else(|| RuleError::malformed("'play' must be followed by a card name"))?
        } else {
            first
        };
        let card: Card = card_word.parse().map_err(|_| RuleError::malformed(SHAPE))?;
        let mut target = None;
        if let Some(w) = words.peek() {
            if w.bytes().all(|b| b.is_ascii_digit()) {
                let n = w
                    .parse::<u8>()
                    .map_err(|_| RuleError::malformed("the target must be a seat number"))?;
                target = Some(Seat(n));
                words.next();
            }
        }
        let guess = match words.next() {
            None => None,
            Some(w) => Some(w.parse::<Card>().map_err(|_| {
                RuleError::malformed("after the card come an optional target seat and guess card")
            })?),
        };
        if words.next().is_some() {
            return Err(RuleError::malformed(
                "too many words: a play is a card, a target and a guess at most",
            ));
        }
        Ok(Play::Play {
            card,
            target,
            guess,
        })
    }
}
