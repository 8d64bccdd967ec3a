//! The legal plays of one card at a game's table (at most [`MAX_SEATS`]),
//! listed in advance for every set of seats it may name: a turn's list is
//! then a copy per card of its hand, of a fixed length (the compiler writes
//! it out) cut to the list's own. No loop over the seats named, whose
//! number is as good as random. The lists are those of
//! [`legal_plays`](super::targets::legal_plays), which the tests compare
//! them with.

use super::action::Play;
use super::card::Card;
use super::targets::Targets;
use super::MAX_SEATS;
use crate::core::Seat;

/// Every set of seats a card may name, as a bit per seat.
const SETS: usize = 1 << MAX_SEATS;

/// A card's lists by slot: its value, and 0 for Postman's Soldier (which
/// may name the Soldier too).
const SLOTS: usize = 9;

/// The card of `slot`: Postman's Soldier in slot 0, then every card by
/// its value.
const fn card_of(slot: usize) -> Card {
    if slot == 0 {
        Card::Soldier
    } else {
        Card::ALL[slot - 1]
    }
}

/// Whether the card of `slot` names a target ([`Card::takes_target`]).
const fn takes_target(slot: usize) -> bool {
    matches!(slot, 0 | 1 | 2 | 3 | 5 | 6)
}

/// The guesses of the Soldier of `slot`: any card (Postman's, slot 0) or
/// any but the Soldier.
const fn guesses(slot: usize) -> &'static [Card] {
    if slot == 0 {
        &Card::ALL
    } else {
        &Card::GUESSES
    }
}

/// How many plays the list of `slot` naming `named` holds, with the play
/// without target last if `untargeted`.
const fn list_len(slot: usize, named: usize, untargeted: bool) -> usize {
    if !takes_target(slot) {
        return 1;
    }
    let per_seat = if slot <= 1 { guesses(slot).len() } else { 1 };
    named.count_ones() as usize * per_seat + untargeted as usize
}

/// The most plays a list of each kind holds, rounded up to whole lines of
/// 32 bytes: a Soldier's (Postman's names 8 cards on each of 4 seats; the
/// standard one 7, and may have to be played without target), any other
/// card's (4 seats, and the play without target).
const COPY_SOLDIER: usize = 32;
const COPY_OTHER: usize = 8;

/// The lists end to end.
const TOTAL: usize = {
    let mut total = 0;
    let mut slot = 0;
    while slot < SLOTS {
        let mut named = 0;
        while named < SETS {
            total += list_len(slot, named, false) + list_len(slot, named, slot != 0);
            named += 1;
        }
        slot += 1;
    }
    total
};

/// Every list, and where each one lies: `at[slot][named][untargeted]` is
/// its start and length in `plays`, which has room at its end for a
/// longest copy from its last list.
struct Lists {
    plays: [Play; TOTAL + COPY_SOLDIER],
    at: [[[(u16, u8); 2]; SETS]; SLOTS],
}

/// Writes the list of `slot` naming `named` at `plays[at..]`, in the order
/// of `legal_plays`: by seat, a Soldier's guesses in card order, the play
/// without target last. Returns where it ends.
const fn write_list(
    plays: &mut [Play; TOTAL + COPY_SOLDIER],
    mut at: usize,
    slot: usize,
    named: usize,
    untargeted: bool,
) -> usize {
    let card = card_of(slot);
    if !takes_target(slot) {
        plays[at] = Play::card(card);
        return at + 1;
    }
    let mut t = 0;
    while t < MAX_SEATS {
        if named & (1 << t) != 0 {
            if slot <= 1 {
                let guesses = guesses(slot);
                let mut g = 0;
                while g < guesses.len() {
                    plays[at] = Play::soldier(Seat(t as u8), guesses[g]);
                    at += 1;
                    g += 1;
                }
            } else {
                plays[at] = Play::on(card, Seat(t as u8));
                at += 1;
            }
        }
        t += 1;
    }
    if untargeted {
        plays[at] = Play::card(card);
        at += 1;
    }
    at
}

const fn build() -> Lists {
    let mut lists = Lists {
        plays: [Play::Forfeit; TOTAL + COPY_SOLDIER],
        at: [[[(0, 0); 2]; SETS]; SLOTS],
    };
    let mut at = 0;
    let mut slot = 0;
    while slot < SLOTS {
        let mut named = 0;
        while named < SETS {
            let mut u = 0;
            while u < 2 {
                // Postman's rules never play a card without target.
                let untargeted = u == 1 && slot != 0;
                let end = write_list(&mut lists.plays, at, slot, named, untargeted);
                assert!(end - at <= copy_len(slot), "a list longer than its copy");
                lists.at[slot][named][u] = (at as u16, (end - at) as u8);
                at = end;
                u += 1;
            }
            named += 1;
        }
        slot += 1;
    }
    lists
}

/// How many plays are copied for a list of `slot`.
const fn copy_len(slot: usize) -> usize {
    if slot <= 1 {
        COPY_SOLDIER
    } else {
        COPY_OTHER
    }
}

static LISTS: Lists = build();

/// The slot of `card`'s lists, and where its list for the player whose
/// `targets` these are lies in `LISTS.plays`.
#[inline(always)]
fn list_of(targets: Targets, card: Card) -> (usize, usize, usize) {
    let (named, affected) = targets.of(card);
    let postman = targets.postman();
    // Standard rules: without target only when no player can be affected.
    let untargeted = !postman && affected == 0;
    let slot = if postman && card == Card::Soldier {
        0
    } else {
        usize::from(card.value())
    };
    let (at, len) = LISTS.at[slot][usize::from(named)][usize::from(untargeted)];
    (slot, usize::from(at), usize::from(len))
}

/// Appends every legal play of `card` by the player whose `targets` these
/// are, at a table of at most [`MAX_SEATS`]: the list `legal_plays` makes.
#[inline(always)]
pub(super) fn append_plays_of(targets: Targets, card: Card, out: &mut Vec<Play>) {
    let (slot, at, len) = list_of(targets, card);
    let end = out.len() + len;
    let from = &LISTS.plays[at..];
    if slot <= 1 {
        out.extend_from_slice(&from[..COPY_SOLDIER]);
    } else {
        out.extend_from_slice(&from[..COPY_OTHER]);
    }
    out.truncate(end);
}

#[cfg(test)]
mod tests {
    use super::super::targets::{legal_plays, Targets};
    use super::super::variant::LoveLetterVariant;
    use super::*;

    #[test]
    fn the_lists_are_those_legal_plays_makes() {
        let variants = [
            LoveLetterVariant::standard(),
            LoveLetterVariant::postman(),
            LoveLetterVariant::standard_v1(),
        ];
        for variant in &variants {
            for seats in 2..=MAX_SEATS {
                for seat in 0..seats {
                    for in_round in 0..=u8::MAX >> (8 - seats) {
                        for protected in 0..=u8::MAX >> (8 - seats) {
                            let seat = Seat(seat as u8);
                            let targets = Targets::new(variant, seats, seat, in_round, protected);
                            for card in Card::ALL {
                                let mut want = vec![Play::Forfeit];
                                legal_plays(targets, card, &mut want);
                                let mut got = vec![Play::Forfeit];
                                append_plays_of(targets, card, &mut got);
                                assert_eq!(got, want, "{variant:?} {seat} {card}");
                            }
                        }
                    }
                }
            }
        }
    }
}
