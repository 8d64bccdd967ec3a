//! Which plays the rules accept, and whom a targeting card may name under
//! each rules variant: a named player on whom the card has no effect
//! (protected by a Priestess; under Postman's rules also out of the round,
//! or the player itself) is a legal play that does nothing.

use super::action::Play;
use super::card::Card;
use super::event::NoEffectReason;
use super::variant::{LoveLetterVariant, Rules};
use crate::core::Seat;

/// Why a card `player` aims at `target` (who is in the round or not,
/// protected or not) has no effect under `rules`, if it has none: the target
/// is protected by a Priestess, or (Postman's rules) out of the round or the
/// player itself, the Wizard included.
pub fn no_effect(
    rules: Rules,
    player: Seat,
    target: Seat,
    target_in: bool,
    target_protected: bool,
) -> Option<NoEffectReason> {
    if rules == Rules::Postman {
        if target == player {
            return Some(NoEffectReason::Itself);
        }
        if !target_in {
            return Some(NoEffectReason::Out);
        }
    }
    // A player's own protection ends as its turn begins, so it is never
    // protected against itself.
    (target != player && target_protected).then_some(NoEffectReason::Protected)
}

/// Whom a player may name with each card, and on whom of them the card
/// has an effect (bit per seat), at a table of `seats` (at most 8) where
/// `in_round` and `protected` hold each seat's state (bit per seat): the
/// one rule for a game and for an observation of it ([`Targets::of`]).
///
/// A seat may be named if it is at the table and (Postman's rules) in any
/// case, or (standard rules) it is another player still in the round (and,
/// under rules version 1, not protected), or the player itself with the
/// Wizard. The card has no effect on a protected player other than the
/// player itself, nor (Postman's rules) on a player out of the round or on
/// the player itself ([`no_effect`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Targets {
    postman: bool,
    /// Whom any targeting card may name, and of them whom it affects.
    named: u8,
    affected: u8,
    /// The player itself, if at the table (the Wizard's own target under
    /// the standard rules).
    me: u8,
}

impl Targets {
    /// The targets of `seat`'s cards.
    #[inline(always)]
    pub(super) fn new(
        variant: &LoveLetterVariant,
        seats: usize,
        seat: Seat,
        in_round: u8,
        protected: u8,
    ) -> Targets {
        let table = if seats >= 8 {
            u8::MAX
        } else {
            (1u8 << seats) - 1
        };
        let me = 1u8.checked_shl(u32::from(seat.0)).unwrap_or(0);
        Targets::at_table(variant, table, me, in_round, protected)
    }

    /// The targets of the player `me` (its bit, or none) at the table
    /// `table` (a bit per seat).
    #[inline(always)]
    pub(super) fn at_table(
        variant: &LoveLetterVariant,
        table: u8,
        me: u8,
        in_round: u8,
        protected: u8,
    ) -> Targets {
        if variant.is_postman() {
            return Targets {
                postman: true,
                named: table,
                affected: table & in_round & !protected & !me,
                me: me & table,
            };
        }
        let refused = if variant.refuse_protected {
            protected
        } else {
            0
        };
        let named = table & in_round & !me & !refused;
        Targets {
            postman: false,
            named,
            affected: named & !protected,
            me: me & table,
        }
    }

    /// Whether these are Postman's rules.
    #[inline(always)]
    pub(super) fn postman(self) -> bool {
        self.postman
    }

    /// Whom `card` may name, and on whom of them it has an effect.
    #[inline(always)]
    pub(super) fn of(self, card: Card) -> (u8, u8) {
        if !self.postman && card == Card::Wizard {
            (self.named | self.me, self.affected | self.me)
        } else {
            (self.named, self.affected)
        }
    }
}

/// Every Soldier play on each seat (up to 8), naming each of `guesses`
/// in order.
const fn soldier_plays<const N: usize>(guesses: [Card; N]) -> [[Play; N]; 8] {
    let mut plays = [[Play::Forfeit; N]; 8];
    let mut t = 0;
    while t < 8 {
        let mut g = 0;
        while g < N {
            plays[t][g] = Play::soldier(Seat(t as u8), guesses[g]);
            g += 1;
        }
        t += 1;
    }
    plays
}

/// The Soldier plays of the standard rules (any card but the Soldier) and
/// of Postman's (any card), by target: copied whole, a row at a time.
static SOLDIER_PLAYS: [[Play; 7]; 8] = soldier_plays(Card::GUESSES);
static POSTMAN_SOLDIER_PLAYS: [[Play; 8]; 8] = soldier_plays(Card::ALL);

/// Appends every legal play of `card` by the player whose `targets` these
/// are, in seat order (a Soldier's guesses in card order), the
/// play without target last: the one list for a game and for an
/// observation of it (a game copies it from `play_lists`, made in advance
/// to match it).
#[inline(always)]
pub(super) fn legal_plays(targets: Targets, card: Card, out: &mut Vec<Play>) {
    if !card.takes_target() {
        out.push(Play::card(card));
        return;
    }
    let (mut named, affected) = targets.of(card);
    let postman = targets.postman;
    // Standard rules: without target only when no player can be affected.
    // Postman's rules always want a target.
    let untargeted = !postman && affected == 0;
    if card == Card::Soldier {
        // Postman's Soldier may name the Soldier too.
        while named != 0 {
            let t = named.trailing_zeros() as usize;
            named &= named - 1;
            if postman {
                out.extend_from_slice(&POSTMAN_SOLDIER_PLAYS[t]);
            } else {
                out.extend_from_slice(&SOLDIER_PLAYS[t]);
            }
        }
    } else {
        while named != 0 {
            let t = Seat(named.trailing_zeros() as u8);
            named &= named - 1;
            out.push(Play::on(card, t));
        }
    }
    if untargeted {
        out.push(Play::card(card));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soldier_tables_name_every_guess_on_every_seat() {
        for t in 0..8u8 {
            let row = &SOLDIER_PLAYS[usize::from(t)];
            let expected: Vec<Play> = Card::GUESSES.map(|g| Play::soldier(Seat(t), g)).into();
            assert_eq!(row[..], expected[..]);
            let row = &POSTMAN_SOLDIER_PLAYS[usize::from(t)];
            let expected: Vec<Play> = Card::ALL.map(|g| Play::soldier(Seat(t), g)).into();
            assert_eq!(row[..], expected[..]);
        }
    }
}
