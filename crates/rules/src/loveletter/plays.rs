//! What a seat may play now, in the game's own state: whom it may name,
//! whether a named player is affected, and the check of a whole play (the
//! rules themselves are `targets`' pure functions).

use super::play_lists::append_plays_of;
use super::targets::{no_effect, Targets};
use super::{bit, Card, LoveLetter, NoEffectReason, Play, Seat};
use crate::core::RuleError;

impl LoveLetter {
    /// Whether `seat` may name `target` with `card`. The play may still
    /// have no effect (see [`LoveLetter::no_effect`]).
    /// (The rule of [`targets`], for one seat.)
    pub(super) fn may_name(&self, seat: Seat, card: Card, target: Seat) -> bool {
        if target.index() >= self.n() {
            return false;
        }
        if self.variant.is_postman() {
            return true;
        }
        if target == seat {
            return card == Card::Wizard;
        }
        self.is_in(target) && !(self.variant.refuse_protected && self.is_protected(target))
    }

    /// Whom `seat` may name with each card, and affect.
    #[inline(always)]
    pub(super) fn targets(&self, seat: Seat) -> Targets {
        // A game seats at most `MAX_SEATS` (fewer than 8), `seat` among them.
        let table = ((1u16 << self.seats) - 1) as u8;
        Targets::at_table(
            &self.variant,
            table,
            bit(seat) & table,
            self.in_round,
            self.protected,
        )
    }

    /// Why a card `seat` aims at `target` has no effect, if it has none.
    pub(super) fn no_effect(&self, seat: Seat, target: Seat) -> Option<NoEffectReason> {
        no_effect(
            self.variant.rules,
            seat,
            target,
            self.is_in(target),
            self.is_protected(target),
        )
    }

    /// Whether `seat` may name a player on whom `card` has an effect.
    pub(super) fn has_target(&self, seat: Seat, card: Card) -> bool {
        self.targets(seat).of(card).1 != 0
    }

    /// Appends every legal play of each card of `hand` (once each) by
    /// `seat`.
    #[inline(always)]
    pub(super) fn legal_plays_of(&self, seat: Seat, hand: &[Card], out: &mut Vec<Play>) {
        let targets = self.targets(seat);
        match *hand {
            [a, b] => {
                append_plays_of(targets, a, out);
                if b != a {
                    append_plays_of(targets, b, out);
                }
            }
            ref hand => {
                for (i, &card) in hand.iter().enumerate() {
                    if !hand[..i].contains(&card) {
                        append_plays_of(targets, card, out);
                    }
                }
            }
        }
    }

    /// Checks a play of `card` by `seat` (who holds it, on its turn).
    #[inline]
    pub(super) fn check_play(
        &self,
        seat: Seat,
        card: Card,
        target: Option<Seat>,
        guess: Option<Card>,
    ) -> Result<(), RuleError> {
        if guess.is_some() && card != Card::Soldier {
            return Err(RuleError::illegal("only the soldier names a guess"));
        }
        if !card.takes_target() {
            if target.is_some() {
                return Err(RuleError::illegal(format!("the {card} takes no target")));
            }
            return Ok(());
        }
        let Some(t) = target else {
            if guess.is_some() {
                return Err(RuleError::illegal("a guess needs a target"));
            }
            if self.variant.is_postman() {
                return Err(RuleError::illegal(format!(
                    "the {card} must name a player (under postman's rules, even one it cannot affect)"
                )));
            }
            if self.has_target(seat, card) {
                return Err(RuleError::illegal(format!(
                    "the {card} needs a target while a player it can affect exists"
                )));
            }
            return Ok(());
        };
        if t.index() >= self.n() {
            return Err(RuleError::illegal(format!("there is no seat {t}")));
        }
        if !self.may_name(seat, card, t) {
            return Err(if t == seat {
                RuleError::illegal("only the wizard may target yourself")
            } else if !self.is_in(t) {
                RuleError::illegal(format!("seat {t} is out of the round"))
            } else {
                RuleError::illegal("the target is protected")
            });
        }
        if card == Card::Soldier {
            match guess {
                None => return Err(RuleError::illegal("the soldier must name a card")),
                // Any card but the Soldier, or (Postman) any.
                Some(Card::Soldier) if !self.variant.is_postman() => {
                    return Err(RuleError::illegal("a soldier cannot guess soldier"))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}
