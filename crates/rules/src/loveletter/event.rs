//! The Love Letter event log, each event tagged with who may see it.
//!
//! Events come in the order of the competition's message flow (seed 001): a
//! turn is `Turn`, `Draw` (and `Out` at once if the Minister strikes), then
//! `Played` followed by the card's consequences (`NoEffect`, `Reveal`,
//! `Swap`, `Discard`, `SetAsideTaken`, `Draw`, `Out`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::card::Card;
use super::shown::{OutCards, RoundHands};
use crate::core::Seat;

/// An entry of the Love Letter log (plain data: `Copy`, nothing to free).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum LoveLetterEvent {
    /// A round begins (public). The set-aside card is never shown.
    RoundStart {
        /// Round index from 0.
        round: u32,
        /// The round's first player.
        first: Seat,
    },
    /// It is `seat`'s turn (public).
    Turn {
        /// The player to act.
        seat: Seat,
    },
    /// `seat` takes `card` into its hand: the deal, the draw at the start of
    /// a turn, or the new card after a Wizard (seen by `seat` only).
    Draw {
        /// Who draws.
        seat: Seat,
        /// The card drawn.
        card: Card,
    },
    /// `seat` played `card` face up (public).
    Played {
        /// Who played.
        seat: Seat,
        /// The card played.
        card: Card,
        /// The target, if the card had one.
        target: Option<Seat>,
        /// The card a Soldier named.
        guess: Option<Card>,
    },
    /// `seat`'s card, aimed at `target`, has no effect (public; it follows
    /// the `Played`): the target is protected by a Priestess or, under
    /// Postman's rules, out of the round or the player itself. Nothing else
    /// happens and nothing is revealed.
    NoEffect {
        /// Who played the card.
        seat: Seat,
        /// The player it was aimed at.
        target: Seat,
        /// Why it has no effect.
        reason: NoEffectReason,
    },
    /// After a General, `seat` now holds `card` (seen by `seat` only; both
    /// players of the swap get one).
    Swap {
        /// Who receives the card.
        seat: Seat,
        /// The card received.
        card: Card,
    },
    /// `to` sees that `of` holds `card` (Clown; both sides of a Knight).
    Reveal {
        /// Who sees the card.
        to: Seat,
        /// Whose card it is.
        of: Seat,
        /// The card.
        card: Card,
    },
    /// A Wizard made `seat` discard `card` face up, without effect (public).
    Discard {
        /// Who discards.
        seat: Seat,
        /// The card discarded.
        card: Card,
    },
    /// The deck was empty, so `seat` took the set-aside card (public; the card
    /// itself follows in a `Draw` that only `seat` sees).
    SetAsideTaken {
        /// Who took the set-aside card.
        seat: Seat,
    },
    /// `seat` gave up the round (an action or a fault ruling); an `Out`
    /// follows (public).
    Forfeit {
        /// Who forfeited.
        seat: Seat,
    },
    /// `seat` is out of the round, showing the cards it held (0 to 2; public).
    Out {
        /// Who is out.
        seat: Seat,
        /// The cards it held.
        cards: OutCards,
    },
    /// The round is over (public): `hands` holds every card still held by a
    /// player still in, in turn order from the round's first player (a player
    /// left alone in the middle of its turn holds two).
    RoundEnd {
        /// Who won the round.
        winner: Seat,
        /// The cards of the players still in.
        hands: RoundHands,
    },
    /// The match is over (public).
    MatchEnd {
        /// Who won the match.
        winner: Seat,
    },
}

/// Why a card aimed at a player has no effect.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoEffectReason {
    /// The target is protected by a Priestess.
    Protected,
    /// The target is out of the round (Postman's rules).
    Out,
    /// The player aimed it at itself (Postman's rules; the Wizard included).
    Itself,
}

impl crate::core::Event for LoveLetterEvent {
    fn visible_to(&self, seat: Seat) -> bool {
        match self {
            LoveLetterEvent::Draw { seat: s, .. } | LoveLetterEvent::Swap { seat: s, .. } => {
                *s == seat
            }
            LoveLetterEvent::Reveal { to, .. } => *to == seat,
            LoveLetterEvent::RoundStart { .. }
            | LoveLetterEvent::Turn { .. }
            | LoveLetterEvent::Played { .. }
            | LoveLetterEvent::NoEffect { .. }
            | LoveLetterEvent::Discard { .. }
            | LoveLetterEvent::SetAsideTaken { .. }
            | LoveLetterEvent::Forfeit { .. }
            | LoveLetterEvent::Out { .. }
            | LoveLetterEvent::RoundEnd { .. }
            | LoveLetterEvent::MatchEnd { .. } => true,
        }
    }
}

impl fmt::Display for LoveLetterEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoveLetterEvent::RoundStart { round, first } => {
                write!(f, "round {} begins; seat {first} plays first", round + 1)
            }
            LoveLetterEvent::Turn { seat } => write!(f, "seat {seat}'s turn"),
            LoveLetterEvent::Draw { seat, card } => write!(f, "seat {seat} draws the {card}"),
            LoveLetterEvent::Played {
                seat,
                card,
                target,
                guess,
            } => {
                write!(f, "seat {seat} plays the {card}")?;
                match (target, guess) {
                    (Some(t), Some(g)) => write!(f, " on seat {t}, naming the {g}"),
                    (Some(t), None) => write!(f, " on seat {t}"),
                    (None, _) if card.takes_target() => f.write_str(" with no target"),
                    (None, _) => Ok(()),
                }
            }
            LoveLetterEvent::NoEffect {
                seat: _,
                target,
                reason,
            } => match reason {
                NoEffectReason::Protected => {
                    write!(f, "no effect: seat {target} is protected by a priestess")
                }
                NoEffectReason::Out => write!(f, "no effect: seat {target} is out of the round"),
                NoEffectReason::Itself => {
                    f.write_str("no effect: the card was aimed at its player")
                }
            },
            LoveLetterEvent::Swap { seat, card } => {
                write!(f, "seat {seat} receives the {card} in the swap")
            }
            LoveLetterEvent::Reveal { to, of, card } => {
                write!(f, "seat {to} sees that seat {of} holds the {card}")
            }
            LoveLetterEvent::Discard { seat, card } => write!(f, "seat {seat} discards the {card}"),
            LoveLetterEvent::SetAsideTaken { seat } => {
                write!(f, "the deck is empty: seat {seat} takes the set-aside card")
            }
            LoveLetterEvent::Forfeit { seat } => write!(f, "seat {seat} forfeits the round"),
            LoveLetterEvent::Out { seat, cards } => {
                write!(f, "seat {seat} is out")?;
                for (i, c) in cards.iter().enumerate() {
                    f.write_str(if i == 0 {
                        ", holding the "
                    } else {
                        " and the "
                    })?;
                    write!(f, "{c}")?;
                }
                Ok(())
            }
            LoveLetterEvent::RoundEnd { winner, hands } => {
                write!(f, "the round ends; seat {winner} wins it")?;
                for (i, (s, c)) in hands.iter().enumerate() {
                    f.write_str(if i == 0 { " (" } else { ", " })?;
                    write!(f, "seat {s}: {c}")?;
                }
                if !hands.is_empty() {
                    f.write_str(")")?;
                }
                Ok(())
            }
            LoveLetterEvent::MatchEnd { winner } => write!(f, "seat {winner} wins the match"),
        }
    }
}
