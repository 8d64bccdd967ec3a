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

/// Appends every legal play of `card` by `seat` at a table of `seats`
/// where `in_round(t)` and `protected(t)` say each seat's state: the one
/// rule for a game and for an observation of it.
pub(super) fn legal_plays(
    variant: &LoveLetterVariant,
    seats: usize,
    seat: Seat,
    card: Card,
    in_round: impl Fn(Seat) -> bool,
    protected: impl Fn(Seat) -> bool,
    out: &mut Vec<Play>,
) {
    if !card.takes_target() {
        out.push(Play::card(card));
        return;
    }
    let may_name = |t: Seat| -> bool {
        if t.index() >= seats {
            return false;
        }
        if variant.is_postman() {
            return true;
        }
        if t == seat {
            return card == Card::Wizard;
        }
        in_round(t) && !(variant.refuse_protected && protected(t))
    };
    let guesses: &[Card] = if variant.is_postman() {
        &Card::ALL
    } else {
        &Card::GUESSES
    };
    let mut has_target = false;
    for t in (0..seats).map(|t| Seat(t as u8)) {
        if !may_name(t) {
            continue;
        }
        has_target |= no_effect(variant.rules, seat, t, in_round(t), protected(t)).is_none();
        if card == Card::Soldier {
            out.extend(guesses.iter().map(|g| Play::soldier(t, *g)));
        } else {
            out.push(Play::on(card, t));
        }
    }
    // Standard rules: without target only when no player can be
    // affected. Postman's rules always want a target.
    if !variant.is_postman() && !has_target {
        out.push(Play::card(card));
    }
}
