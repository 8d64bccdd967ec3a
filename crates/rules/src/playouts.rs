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
    /// Games a second (none when no time has passed).
    pub fn games_per_sec(&self) -> f64 {
        match self.elapsed.as_secs_f64() {
            0.0 => 0.0,
            s => self.games as f64 / s,
        }
    }

    /// What was played since `then`, a tally of the same loop.
    fn since(self, then: Tally) -> Tally {
        Tally {
            games: self.games - then.games,
            actions: self.actions - then.actions,
            elapsed: self.elapsed - then.elapsed,
        }
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

    /// Plays the next `games` games (consecutive seeds, the one generator
    /// going on); false if a game could not be set up: then the games
    /// before it count, and it and the rest do not.
    pub fn play(&mut self, games: u64) -> bool {
        // The generator and the list of legal actions are the loop's own
        // while it runs (copied and taken out, then put back): kept behind
        // `self`, the generator's state went to memory and back at every
        // action (SkullWhist 6% slower).
        let mut rng = self.rng.clone();
        let mut legal = std::mem::take(&mut self.legal);
        let mut made = true;
        let (first, mut actions) = (self.tally.games, 0u64);
        let mut next = first;
        while next < first + games {
            let Ok(mut g) = G::new(self.variant, self.seats, next) else {
                made = false;
                break;
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
            next += 1;
        }
        self.rng = rng;
        self.legal = legal;
        self.tally.games = next;
        self.tally.actions += actions;
        made
    }

    /// Plays on for about `time`, 256 games between readings of the
    /// clock, and adds the time to the tally; false if a game could not be
    /// set up (see [`RandomPlayouts::play`]).
    pub fn run_for(&mut self, time: Duration) -> bool {
        let (made, took) = for_about(time, || self.play(256));
        self.tally.elapsed += took;
        made
    }

    /// What it played so far.
    pub fn tally(&self) -> Tally {
        self.tally
    }
}

/// Calls `play_some` until it fails or `time` has passed (the clock read
/// between calls, so that a call of many games keeps the timer's cost
/// away); whether it never failed, and the time taken.
fn for_about(time: Duration, mut play_some: impl FnMut() -> bool) -> (bool, Duration) {
    let start = Instant::now();
    let made = loop {
        if !play_some() {
            break false;
        }
        if start.elapsed() >= time {
            break true;
        }
    };
    (made, start.elapsed())
}

/// Plays random games of `G` from consecutive seeds for about `time`
/// ([`RandomPlayouts`]); no games if one could not be set up.
pub fn random_playouts<G: Game>(variant: &G::Variant, seats: usize, time: Duration) -> Tally {
    let mut p = RandomPlayouts::<G>::new(variant, seats);
    if !p.run_for(time) {
        return Tally {
            elapsed: p.tally().elapsed,
            ..Tally::default()
        };
    }
    p.tally()
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
        let (_, took) = for_about(time, || {
            self.play(256);
            true
        });
        self.tally.elapsed += took;
    }

    /// Plays the next `games` games.
    fn play(&mut self, games: u64) {
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
        // `RandomPlayouts::play`.
        let mut rng = self.rng.clone();
        let mut actions = 0u64;
        for _ in 0..games {
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
        }
        self.rng = rng;
        self.tally.games += games;
        self.tally.actions += actions;
    }

    /// What it played so far.
    pub fn tally(&self) -> Tally {
        self.tally
    }
}

/// The bare loop ([`BareGoofspiel`]) for about `time`.
pub fn bare_goofspiel_playouts(time: Duration) -> Tally {
    let mut bare = BareGoofspiel::default();
    bare.run_for(time);
    bare.tally()
}

/// Rounds of turns in which [`goofspiel_beside_bare`] plays the engine
/// and the bare loop, as `croupier bench rules` does.
pub const ROUNDS_BESIDE_BARE: u32 = 4;

/// The Goofspiel-13 engine's playouts and the bare loop's, about `time`
/// each (so about twice `time` in all), in `rounds` rounds of turns (bare
/// loop then engine; then engine then bare loop; and so on: an even number
/// of rounds gives each the first turn as often), so that a slow or quick
/// spell of the machine falls on both alike instead of on whichever ran
/// then. Returns the engine's tally and the bare loop's, and each round's
/// share (the engine's games/s over the bare loop's in that round).
pub fn goofspiel_beside_bare(time: Duration, rounds: u32) -> (Tally, Tally, Vec<f64>) {
    let variant = crate::goofspiel::GoofspielVariant::gops();
    let mut engine = RandomPlayouts::<crate::goofspiel::Goofspiel>::new(&variant, 2);
    let mut bare = BareGoofspiel::default();
    let rounds = rounds.max(1);
    let slice = time / rounds;
    let mut shares = Vec::with_capacity(rounds as usize);
    for round in 0..rounds {
        let (e0, b0) = (engine.tally(), bare.tally());
        // Two-seat GOPS always sets up; were it not to, the engine's
        // tally would stop growing and its share fall to 0.
        let mut engine_turn = || engine.run_for(slice);
        if round % 2 == 0 {
            bare.run_for(slice);
            engine_turn();
        } else {
            engine_turn();
            bare.run_for(slice);
        }
        let (e, b) = (engine.tally().since(e0), bare.tally().since(b0));
        shares.push(e.games_per_sec() / b.games_per_sec());
    }
    (engine.tally(), bare.tally(), shares)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goofspiel::{Goofspiel, GoofspielVariant};

    #[test]
    fn the_bare_loop_plays_whole_games_of_13_turns() {
        let Tally { games, actions, .. } = bare_goofspiel_playouts(Duration::from_millis(5));
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
    fn games_played_in_parts_go_on_from_the_seed_and_choices_before() {
        use crate::loveletter::{LoveLetter, LoveLetterVariant};
        // Love Letter's games vary in length with their deal and choices,
        // so a part that started its seeds or its generator over would
        // count other actions than one run of as many games.
        let variant = LoveLetterVariant::default();
        let mut parts = RandomPlayouts::<LoveLetter>::new(&variant, 4);
        assert!(parts.play(100) && parts.play(28) && parts.play(372));
        let mut whole = RandomPlayouts::<LoveLetter>::new(&variant, 4);
        assert!(whole.play(500));
        assert_eq!(parts.tally().games, 500);
        assert_eq!(parts.tally().actions, whole.tally().actions);
        // And the count is the games' own: 100 games fewer count fewer.
        let mut fewer = RandomPlayouts::<LoveLetter>::new(&variant, 4);
        assert!(fewer.play(400));
        assert!(fewer.tally().actions < whole.tally().actions);
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
        let Tally { games, actions, .. } =
            random_playouts::<Goofspiel>(&GoofspielVariant::gops(), 2, Duration::from_millis(5));
        assert!(games >= 256, "{games}");
        assert_eq!(actions, games * 26);
    }
}
