//! Random playouts, as `croupier bench rules` times them: uniformly random
//! legal actions from a game's start to its end, and the bare Goofspiel
//! loop the engines are measured against. Here, beside the engines, so
//! that `cargo run --release -p croupier-rules --example playouts` times
//! a change to the rules without building the rest.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

use crate::Game;

/// What a playout loop did: games, actions and the time they took.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Tally {
    /// Games played to their end.
    pub games: u64,
    /// Actions applied (a bid, a card, a move).
    pub actions: u64,
    /// Time spent playing them.
    pub elapsed: Duration,
}

impl Tally {
    /// Games a second.
    pub fn games_per_sec(&self) -> f64 {
        self.games as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }

    fn as_tuple(self) -> (u64, u64, Duration) {
        (self.games, self.actions, self.elapsed)
    }
}

/// Random games of `G` from consecutive seeds, played in runs of about a
/// given time that add up ([`RandomPlayouts::run_for`]). Each game's own
/// chance (deals, shuffles) comes from its seed and its own generator, as
/// always; the choice among the legal actions comes from the same small
/// fast generator (xoshiro, `SmallRng`) as the bare loop's, uniformly, so
/// that the comparison with the bare loop measures the engine rather than
/// two generators.
pub struct RandomPlayouts<'v, G: Game> {
    variant: &'v G::Variant,
    seats: usize,
    rng: rand::rngs::SmallRng,
    legal: Vec<G::Action>,
    tally: Tally,
}

impl<G: Game> std::fmt::Debug for RandomPlayouts<'_, G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RandomPlayouts")
            .field("seats", &self.seats)
            .field("tally", &self.tally)
            .finish_non_exhaustive()
    }
}

impl<'v, G: Game> RandomPlayouts<'v, G> {
    /// No games played yet.
    pub fn new(variant: &'v G::Variant, seats: usize) -> Self {
        RandomPlayouts {
            variant,
            seats,
            rng: rand::rngs::SmallRng::seed_from_u64(0xBE7C4),
            legal: Vec::with_capacity(64),
            tally: Tally::default(),
        }
    }

    /// Plays on for about `time` (whole games, the clock read every 256);
    /// false if a game could not be set up (then nothing more is played).
    pub fn run_for(&mut self, time: Duration) -> bool {
        // The generator and the list of legal actions are the loop's own
        // while it runs (moved out and back): kept behind `self`, the
        // generator's state went to memory and back at every action
        // (SkullWhist 6% slower).
        let mut rng = self.rng.clone();
        let mut legal = std::mem::take(&mut self.legal);
        let (mut games, mut actions) = (self.tally.games, 0u64);
        let start = Instant::now();
        let made = 'playing: loop {
            for _ in 0..256 {
                let Ok(mut g) = G::new(self.variant, self.seats, games) else {
                    break 'playing false;
                };
                while let Some(seat) = g.to_act().first() {
                    legal.clear();
                    g.legal_actions(seat, &mut legal);
                    let a = legal[rng.random_range(0..legal.len())];
                    if g.apply(seat, a).is_err() {
                        break;
                    }
                    actions += 1;
                }
                games += 1;
            }
            if start.elapsed() >= time {
                break true;
            }
        };
        self.tally.elapsed += start.elapsed();
        self.rng = rng;
        self.legal = legal;
        if made {
            self.tally.games = games;
            self.tally.actions += actions;
        }
        made
    }

    /// What it played so far.
    pub fn tally(&self) -> Tally {
        self.tally
    }
}

/// Plays random games of `G` from consecutive seeds for about `time`
/// ([`RandomPlayouts`]); returns (games, actions, elapsed), or no games if
/// one could not be set up.
pub fn random_playouts<G: Game>(
    variant: &G::Variant,
    seats: usize,
    time: Duration,
) -> (u64, u64, Duration) {
    let mut p = RandomPlayouts::<G>::new(variant, seats);
    if !p.run_for(time) {
        return (0, 0, p.tally().elapsed);
    }
    p.tally().as_tuple()
}

/// Goofspiel with 13 cards played as bare as it goes, the limit a rules
/// engine is measured against: both hands and the prizes left as
/// bitmasks, a small fast generator (xoshiro) for the prize drawn and both
/// bids (uniform, as the engine's playouts choose), a tie discarding the
/// prize, and nothing kept but the score: no records, no checks, no
/// events. An action is one bid. Played in runs that add up, as
/// [`RandomPlayouts`].
#[derive(Debug)]
pub struct BareGoofspiel {
    rng: rand::rngs::SmallRng,
    tally: Tally,
}

impl Default for BareGoofspiel {
    fn default() -> Self {
        BareGoofspiel {
            rng: rand::rngs::SmallRng::seed_from_u64(0xBE7C4),
            tally: Tally::default(),
        }
    }
}

impl BareGoofspiel {
    /// Plays on for about `time` (whole games, the clock read every 256).
    pub fn run_for(&mut self, time: Duration) {
        const FULL: u16 = 0x1FFF; // cards 1..=13 as bits 0..=12
        /// The `k`-th set bit of `mask`, counted from the lowest, from 0.
        fn nth_card(mut mask: u16, k: u32) -> u16 {
            for _ in 0..k {
                mask &= mask - 1;
            }
            mask & mask.wrapping_neg()
        }
        fn draw(rng: &mut rand::rngs::SmallRng, mask: u16) -> u16 {
            nth_card(mask, rng.random_range(0..mask.count_ones()))
        }
        // The generator is the loop's own while it runs, as in
        // `RandomPlayouts::run_for`.
        let mut rng = self.rng.clone();
        let (mut games, mut actions) = (0u64, 0u64);
        let start = Instant::now();
        loop {
            for _ in 0..256 {
                let (mut prizes, mut hands, mut score) = (FULL, [FULL; 2], [0u32; 2]);
                while prizes != 0 {
                    let prize = draw(&mut rng, prizes);
                    prizes &= !prize;
                    let bids = [draw(&mut rng, hands[0]), draw(&mut rng, hands[1])];
                    hands[0] &= !bids[0];
                    hands[1] &= !bids[1];
                    let value = prize.trailing_zeros() + 1;
                    match bids[0].cmp(&bids[1]) {
                        std::cmp::Ordering::Greater => score[0] += value,
                        std::cmp::Ordering::Less => score[1] += value,
                        std::cmp::Ordering::Equal => {}
                    }
                    actions += 2;
                }
                std::hint::black_box(score);
                games += 1;
            }
            if start.elapsed() >= time {
                break;
            }
        }
        self.tally.elapsed += start.elapsed();
        self.rng = rng;
        self.tally.games += games;
        self.tally.actions += actions;
    }

    /// What it played so far.
    pub fn tally(&self) -> Tally {
        self.tally
    }
}

/// The bare loop ([`BareGoofspiel`]) for about `time`; returns (games,
/// actions, elapsed).
pub fn bare_goofspiel_playouts(time: Duration) -> (u64, u64, Duration) {
    let mut bare = BareGoofspiel::default();
    bare.run_for(time);
    bare.tally().as_tuple()
}

/// The Goofspiel-13 engine's playouts and the bare loop's, about `time`
/// each, in `rounds` rounds of turns (bare, engine; then engine, bare; and
/// so on), so that a slow or quick spell of the machine falls on both
/// alike instead of on whichever ran then. Returns the engine's tally and
/// the bare loop's, and each round's share (the engine's games/s over the
/// bare loop's in that round).
pub fn goofspiel_beside_bare(time: Duration, rounds: u32) -> (Tally, Tally, Vec<f64>) {
    let variant = crate::goofspiel::GoofspielVariant::gops();
    let mut engine = RandomPlayouts::<crate::goofspiel::Goofspiel>::new(&variant, 2);
    let mut bare = BareGoofspiel::default();
    let rounds = rounds.max(1);
    let slice = time / rounds;
    let mut shares = Vec::with_capacity(rounds as usize);
    for round in 0..rounds {
        let (e0, b0) = (engine.tally(), bare.tally());
        let mut engine_turn = || engine.run_for(slice);
        if round % 2 == 0 {
            bare.run_for(slice);
            engine_turn();
        } else {
            engine_turn();
            bare.run_for(slice);
        }
        let since = |now: Tally, then: Tally| Tally {
            games: now.games - then.games,
            actions: now.actions - then.actions,
            elapsed: now.elapsed - then.elapsed,
        };
        let (e, b) = (since(engine.tally(), e0), since(bare.tally(), b0));
        shares.push(e.games_per_sec() / b.games_per_sec().max(f64::MIN_POSITIVE));
    }
    (engine.tally(), bare.tally(), shares)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goofspiel::{Goofspiel, GoofspielVariant};

    #[test]
    fn the_bare_loop_plays_whole_games_of_13_turns() {
        let (games, actions, _) = bare_goofspiel_playouts(Duration::from_millis(5));
        assert!(games >= 256, "{games}");
        assert_eq!(actions, games * 26, "two bids per prize, 13 prizes");
    }

    #[test]
    fn runs_in_turns_add_up() {
        let variant = GoofspielVariant::gops();
        let mut p = RandomPlayouts::<Goofspiel>::new(&variant, 2);
        assert!(p.run_for(Duration::from_millis(2)));
        let first = p.tally();
        assert!(p.run_for(Duration::from_millis(2)));
        let both = p.tally();
        assert!(both.games >= first.games + 256, "{first:?} then {both:?}");
        assert_eq!(both.actions, both.games * 26);
        assert!(both.elapsed > first.elapsed);
    }

    #[test]
    fn goofspiel_beside_bare_takes_turns_and_gives_each_rounds_share() {
        let (engine, bare, shares) = goofspiel_beside_bare(Duration::from_millis(20), 4);
        assert_eq!(shares.len(), 4);
        assert!(engine.games >= 4 * 256 && bare.games >= 4 * 256);
        assert_eq!(engine.actions, engine.games * 26);
        assert_eq!(bare.actions, bare.games * 26);
        assert!(
            shares.iter().all(|s| s.is_finite() && *s > 0.0),
            "{shares:?}"
        );
    }

    #[test]
    fn the_engine_plays_as_many_bids_as_the_bare_loop() {
        let (games, actions, _) =
            random_playouts::<Goofspiel>(&GoofspielVariant::gops(), 2, Duration::from_millis(5));
        assert!(games >= 256, "{games}");
        assert_eq!(actions, games * 26);
    }
}
