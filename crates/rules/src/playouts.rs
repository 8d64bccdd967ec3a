//! Random playouts, as `croupier bench rules` times them: uniformly random
//! legal actions from a game's start to its end, and the bare Goofspiel
//! loop the engines are measured against. Here, beside the engines, so
//! that `cargo run --release -p croupier-rules --example playouts` times
//! a change to the rules without building the rest.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

use crate::Game;

/// Plays random games of `G` from consecutive seeds for about `time`;
/// returns (games, actions, elapsed). Each game's own chance (deals,
/// shuffles) comes from its seed and its own generator, as always; the
/// choice among the legal actions comes from the same small fast generator
/// (xoshiro, `SmallRng`) as the bare loop's, uniformly, so that the
/// comparison with the bare loop measures the engine rather than two
/// generators.
pub fn random_playouts<G: Game>(
    variant: &G::Variant,
    seats: usize,
    time: Duration,
) -> (u64, u64, Duration) {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0xBE7C4);
    let mut legal = Vec::with_capacity(64);
    let (mut games, mut actions) = (0u64, 0u64);
    let start = Instant::now();
    loop {
        // Check the clock every 256 games so the timer costs nothing.
        for _ in 0..256 {
            let Ok(mut g) = G::new(variant, seats, games) else {
                return (0, 0, start.elapsed());
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
            return (games, actions, start.elapsed());
        }
    }
}

/// Goofspiel with 13 cards played as bare as it goes, the limit a rules
/// engine is measured against: both hands and the prizes left as
/// bitmasks, a small fast generator (xoshiro) for the prize drawn and both
/// bids (uniform, as the engine's playouts choose), a tie discarding the
/// prize, and nothing kept but the score: no records, no checks, no
/// events. Returns (games, actions, elapsed), an action being one bid.
pub fn bare_goofspiel_playouts(time: Duration) -> (u64, u64, Duration) {
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
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0xBE7C4);
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
            return (games, actions, start.elapsed());
        }
    }
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
    fn the_engine_plays_as_many_bids_as_the_bare_loop() {
        let (games, actions, _) =
            random_playouts::<Goofspiel>(&GoofspielVariant::gops(), 2, Duration::from_millis(5));
        assert!(games >= 256, "{games}");
        assert_eq!(actions, games * 26);
    }
}
