//! Duplicate matches of the `strong` built-in
//! against every other built-in of the game.
//!
//! Each deal (game seed) is played once with `strong` in every seat and the
//! opponent in the others, so luck of the deal cancels out. A game counts 1
//! when `strong` alone ranks first, 1/k when it shares first place with k−1
//! others, and 0 otherwise; the win rate's 95% interval is the normal
//! approximation over the games played. Think time is wall-clock time spent
//! in `strong`'s `act` per decision.

use std::time::Instant;

use crate::strong::Budget;
use crate::{bot_rng, Builtins, Strategy, UnknownBot};
use croupier_rules::{RuleError, Seat, SetupError};

/// Why a duplicate deal could not be played.
#[derive(Debug, thiserror::Error)]
pub enum DuplicateError {
    /// The table could not be dealt.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// A bot named is not a built-in.
    #[error(transparent)]
    Bot(#[from] UnknownBot),
    /// A seat's illegal move could not be ruled a forfeit.
    #[error("forfeit refused: {0}")]
    Forfeit(RuleError),
    /// The game stopped with no outcome.
    #[error("the game stopped before its end")]
    Unfinished,
}

/// One pair's figures.
#[derive(Debug, Clone)]
pub struct PairLine {
    /// Always `strength`.
    pub bench: &'static str,
    pub game: &'static str,
    pub variant: String,
    pub players: usize,
    pub strong: String,
    pub against: String,
    pub deals: u64,
    pub games: u64,
    pub win_rate: f64,
    pub ci95: f64,
    pub mean_score_diff: f64,
    pub decisions: u64,
    pub think_ms_mean: f64,
    pub think_ms_p99: f64,
    pub think_ms_max: f64,
    pub budget: String,
    /// Mean score of the bot under test per game.
    pub mean_score: f64,
    /// Every think time of the bot under test (µs), for merging runs.
    pub think_us: Vec<u64>,
}

/// The outcome of one game for the seat under test: win credit, score
/// difference against the mean of the others, and think times (µs); the
/// seat's own score is added to `own`.
#[allow(clippy::too_many_arguments)]
fn play_one<G: Builtins>(
    variant: &G::Variant,
    seats: usize,
    seed: u64,
    strong_seat: usize,
    strong: &str,
    against: &str,
    budget: &Budget,
    think_us: &mut Vec<u64>,
    own: &mut f64,
) -> Result<(f64, f64), DuplicateError> {
    let mut game = G::new(variant, seats, seed)?;
    let mut bots: Vec<Box<dyn Strategy<G>>> = Vec::with_capacity(seats);
    for s in 0..seats {
        let name = if s == strong_seat { strong } else { against };
        let mut b = G::builtin_with(name, budget)?;
        b.new_game(Seat(s as u8), variant, seats);
        bots.push(b);
    }
    let mut rngs: Vec<_> = (0..seats)
        .map(|s| bot_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (s as u64 + 1)))
        .collect();
    let mut seen = vec![0usize; seats];
    let mut legal = Vec::new();
    loop {
        for (s, (bot, seen)) in bots.iter_mut().zip(&mut seen).enumerate() {
            crate::catch_up(&game, Seat(s as u8), bot.as_mut(), seen);
        }
        let Some(seat) = game.to_act().first() else {
            break;
        };
        legal.clear();
        game.legal_actions(seat, &mut legal);
        let obs = game.observation(seat);
        let start = Instant::now();
        let action = bots[seat.index()].act(&obs, &legal, &mut rngs[seat.index()]);
        if seat.index() == strong_seat {
            think_us.push(start.elapsed().as_micros() as u64);
        }
        if game.apply(seat, action).is_err() {
            game.forfeit(seat).map_err(DuplicateError::Forfeit)?;
        }
    }
    let outcome = game.outcome().ok_or(DuplicateError::Unfinished)?;
    let firsts = outcome.ranks.iter().filter(|r| **r == 1).count().max(1);
    let credit = if outcome.ranks[strong_seat] == 1 {
        1.0 / firsts as f64
    } else {
        0.0
    };
    let mine = outcome.scores[strong_seat] as f64;
    *own += mine;
    let others: f64 = outcome
        .scores
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != strong_seat)
        .map(|(_, s)| *s as f64)
        .sum::<f64>()
        / (seats - 1).max(1) as f64;
    Ok((credit, mine - others))
}

/// Plays `deals` duplicate deals of `strong` against `against`.
#[allow(clippy::too_many_arguments)]
pub fn pair<G: Builtins>(
    variant: &G::Variant,
    variant_text: &str,
    seats: usize,
    deals: u64,
    first_seed: u64,
    strong: &str,
    against: &str,
    budget: &Budget,
) -> Result<PairLine, DuplicateError> {
    let mut think = Vec::new();
    let (mut credit, mut diff, mut games, mut own) = (0.0, 0.0, 0u64, 0.0);
    for d in 0..deals {
        let seed = first_seed.wrapping_add(d);
        for s in 0..seats {
            let (c, x) = play_one::<G>(
                variant, seats, seed, s, strong, against, budget, &mut think, &mut own,
            )?;
            credit += c;
            diff += x;
            games += 1;
        }
    }
    let n = games.max(1) as f64;
    let p = credit / n;
    think.sort_unstable();
    let ms = |us: u64| (us as f64 / 10.0).round() / 100.0;
    let p99 = think
        .get(((think.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or(0);
    let mean_us = think.iter().sum::<u64>() as f64 / think.len().max(1) as f64;
    Ok(PairLine {
        bench: "strength",
        game: G::NAME,
        variant: variant_text.to_string(),
        players: seats,
        strong: strong.to_string(),
        against: against.to_string(),
        deals,
        games,
        win_rate: (p * 1000.0).round() / 1000.0,
        ci95: (1.96 * (p * (1.0 - p) / n).sqrt() * 1000.0).round() / 1000.0,
        mean_score_diff: (diff / n * 100.0).round() / 100.0,
        decisions: think.len() as u64,
        think_ms_mean: (mean_us / 10.0).round() / 100.0,
        think_ms_p99: ms(p99),
        think_ms_max: ms(think.last().copied().unwrap_or(0)),
        budget: match budget.iterations {
            Some(n) => format!("{n} iterations"),
            None => format!("{} ms", budget.think.as_millis()),
        },
        mean_score: (own / n * 100.0).round() / 100.0,
        think_us: think,
    })
}
