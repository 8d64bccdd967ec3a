//! What one seat may see of a Love Letter game.

use serde::{Deserialize, Serialize};

use super::card::Card;
use super::targets::{legal_plays, Targets};
use super::{no_effect, LoveLetterVariant, NoEffectReason, Play};
use crate::core::Seat;

/// The public state of one seat, as any seat sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatView {
    /// Whether the seat is still in the round.
    pub in_round: bool,
    /// Whether a Priestess protects it (until the start of its next turn).
    pub protected: bool,
    /// The cards it played or discarded face up this round, in order (a
    /// card a Wizard made it discard counts; these break ties at round end).
    pub played: Vec<Card>,
    /// The cards it showed when it went out this round (0 to 2).
    pub out_hand: Vec<Card>,
}

/// What one seat sees: never another player's hand (unless it has seen it),
/// never the set-aside card, never the order of the deck.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoveLetterObservation {
    /// The observing seat.
    pub seat: Seat,
    /// The current round, from 0.
    pub round: u32,
    /// Rounds won so far, per seat.
    pub wins: Vec<u8>,
    /// Round wins needed to win the match.
    pub wins_needed: u8,
    /// This seat's hand: one card, two while it is to act, none once out.
    pub hand: Vec<Card>,
    /// Every seat's public state, by seat.
    pub players: Vec<SeatView>,
    /// Cards left in the deck (the set-aside card is not counted).
    pub deck: u8,
    /// The seat to act, if the match is not over.
    pub to_act: Option<Seat>,
    /// The round's first player.
    pub first: Seat,
    /// Cards of other players still in that this seat has seen (Clown,
    /// Knight, its own General) and that are certainly still in their hands.
    pub known: Vec<(Seat, Card)>,
}

impl LoveLetterObservation {
    /// Why `play` by this seat would have no effect under `variant` (its
    /// target protected; under Postman's rules also out, or this seat
    /// itself), or `None` if it has a target it can affect or none at all.
    pub fn no_effect(&self, variant: &LoveLetterVariant, play: Play) -> Option<NoEffectReason> {
        let Play::Play {
            target: Some(t), ..
        } = play
        else {
            return None;
        };
        let view = self.players.get(t.index())?;
        no_effect(variant.rules, self.seat, t, view.in_round, view.protected)
    }

    /// Every legal play of `card` by this seat under `variant`, as the
    /// game would list it were this seat to act holding `card` (the rules'
    /// own list, from what the observation shows of each seat).
    pub fn legal_plays_of(&self, variant: &LoveLetterVariant, card: Card) -> Vec<Play> {
        let mut out = vec![];
        // Love Letter seats at most 4 players; the lists of the rules
        // hold 8 (an observation of more lists plays on the first 8).
        let (mut in_round, mut protected) = (0u8, 0u8);
        for (i, v) in self.players.iter().take(8).enumerate() {
            in_round |= u8::from(v.in_round) << i;
            protected |= u8::from(v.protected) << i;
        }
        let targets = Targets::new(variant, self.players.len(), self.seat, in_round, protected);
        legal_plays(targets, card, &mut out);
        out
    }

    /// Every legal play of the cards in this seat's hand (each card once,
    /// in hand order), as the game lists them while this seat is to act.
    pub fn legal_plays(&self, variant: &LoveLetterVariant) -> Vec<Play> {
        let mut out = vec![];
        for (i, card) in self.hand.iter().enumerate() {
            if !self.hand[..i].contains(card) {
                out.extend(self.legal_plays_of(variant, *card));
            }
        }
        out
    }
}
