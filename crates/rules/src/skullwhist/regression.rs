//! A pin on the engine's whole behaviour over many seeded random games, so
//! that work on its speed cannot change a game unnoticed.

use std::fmt::{self, Write as _};

use rand::{Rng, SeedableRng};

use super::*;
use crate::core::Event as _;

/// FNV-1a over everything written to it: a digest of text.
struct Digest(u64);

impl fmt::Write for Digest {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        Ok(())
    }
}

/// Every action shape there is: the 13 bids, two bids out of range, and a
/// play of each of the 52 cards.
fn every_action() -> Vec<SkullWhistAction> {
    let bids = (0..=14).map(SkullWhistAction::Bid);
    let plays = (0..52).map(|i| SkullWhistAction::Play(Card::from_index(i)));
    bids.chain(plays).collect()
}

/// Plays `games` random games from consecutive seeds and digests what
/// the engine shows on the way: at every step the seats to act, their
/// legal actions in order, `check` of every action shape by seats 0..3,
/// both seats' observations and the public view, and the result of one
/// arbitrary action applied to a copy; at the end the event log (text,
/// JSON and who sees what), the history and the outcome. One game in
/// seven ends by a forfeit at a random step.
fn digest_of_random_games(games: u64) -> u64 {
    let mut d = Digest(0xcbf2_9ce4_8422_2325);
    let all = every_action();
    let mut legal = Vec::new();
    for seed in 0..games {
        let mut g = SkullWhist::new(&SkullWhistVariant {}, 2, seed).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5EED);
        let forfeit_at = (seed % 7 == 0).then(|| rng.random_range(0..29usize));
        let mut step = 0;
        loop {
            write!(d, "{:?}|", g.to_act()).unwrap();
            for s in 0..3u8 {
                let seat = Seat(s);
                legal.clear();
                g.legal_actions(seat, &mut legal);
                write!(d, "{legal:?}|").unwrap();
                for &a in &all {
                    write!(d, "{:?}", g.check(seat, a)).unwrap();
                }
                write!(d, "{:?}|", g.observation(seat)).unwrap();
            }
            write!(d, "{:?}|{:?}|", g.public_view(), g.outcome()).unwrap();
            let (seat, a) = (Seat(rng.random_range(0..3)), all[rng.random_range(0..67)]);
            let mut copy = g.clone();
            write!(d, "{:?}{}|", copy.apply(seat, a), copy.events().len()).unwrap();
            if forfeit_at == Some(step) {
                let loser = Seat(rng.random_range(0..2));
                write!(d, "{:?}", g.forfeit(loser)).unwrap();
            }
            let Some(seat) = g.to_act().first() else {
                break;
            };
            legal.clear();
            g.legal_actions(seat, &mut legal);
            let a = legal[rng.random_range(0..legal.len())];
            g.apply(seat, a).unwrap();
            step += 1;
        }
        write!(d, "{:?}", g.forfeit(Seat(0))).unwrap();
        for e in g.events() {
            let seen: Vec<bool> = (0..3).map(|s| e.visible_to(Seat(s))).collect();
            write!(d, "{e}{seen:?}").unwrap();
        }
        let json = serde_json::to_string(g.events()).unwrap();
        write!(d, "{json}{:?}{:?}", g.history(), g.outcome()).unwrap();
        write!(d, "{:?}{:?}{:?}", g.bids(), g.tricks_won(), g.phase()).unwrap();
        write!(d, "{:?}{:?}", g.hand(Seat(0)), g.first_leader()).unwrap();
    }
    d.0
}

/// The digest was computed by the engine as it stood before its speed work
/// (commit 2318c67 of main), the reference every later version must match:
/// the same deals, legal actions in the same order, the same refusals,
/// observations, events and scores.
#[test]
fn random_games_are_as_the_reference_engine_played_them() {
    assert_eq!(digest_of_random_games(1500), 4_339_149_460_652_421_169);
}
