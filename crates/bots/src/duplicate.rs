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
use croupier_rules::{Outcome, RuleError, Seat, SetupError};

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

/// Running totals of one pair: what `croupier bench strength` and
/// [`pair`] both count, game by game.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    credit: f64,
    score: f64,
    diff: f64,
    games: u64,
    think_ms: Vec<f64>,
}

/// A [`Tally`]'s figures, rounded for printing.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Games counted.
    pub games: u64,
    /// Win credit per game (a shared first place counts 1/k).
    pub win_rate: f64,
    /// Half-width of the win rate's 95% interval (normal approximation).
    pub ci95: f64,
    /// Mean score of the seat under test.
    pub mean_score: f64,
    /// Mean of its score less the mean of the others' scores.
    pub mean_score_diff: f64,
    /// Decisions timed.
    pub decisions: u64,
    /// Decisions longer than `budget + over_ms` (0 without a budget).
    pub over_budget: u64,
    /// Mean think time per decision (ms).
    pub think_ms_mean: f64,
    /// 99th percentile of think time (ms).
    pub think_ms_p99: f64,
    /// Longest think time (ms).
    pub think_ms_max: f64,
}

impl Tally {
    /// Counts one game in which the bot under test held `seat`, with its
    /// think times (ms) in that game.
    pub fn add(&mut self, outcome: &Outcome, seat: usize, think_ms: impl IntoIterator<Item = f64>) {
        let firsts = outcome.ranks.iter().filter(|r| **r == 1).count().max(1);
        if outcome.ranks.get(seat) == Some(&1) {
            self.credit += 1.0 / firsts as f64;
        }
        let n = outcome.scores.len();
        let mine = outcome.scores.get(seat).copied().unwrap_or(0) as f64;
        let others: f64 = outcome
            .scores
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != seat)
            .map(|(_, x)| *x as f64)
            .sum::<f64>()
            / (n.saturating_sub(1)).max(1) as f64;
        self.score += mine;
        self.diff += mine - others;
        self.games += 1;
        self.think_ms.extend(think_ms);
    }

    /// Adds another tally's games.
    pub fn merge(&mut self, other: Tally) {
        self.credit += other.credit;
        self.score += other.score;
        self.diff += other.diff;
        self.games += other.games;
        self.think_ms.extend(other.think_ms);
    }

    /// Every think time counted (ms), in the order counted.
    pub fn think_ms(&self) -> &[f64] {
        &self.think_ms
    }

    /// The figures, with decisions over `budget_ms + over_ms` counted when
    /// there is a time budget.
    pub fn summary(&self, budget_ms: Option<f64>, over_ms: f64) -> Summary {
        let n = self.games.max(1) as f64;
        let p = self.credit / n;
        let mut t = self.think_ms.clone();
        t.sort_by(f64::total_cmp);
        let p99 = t
            .get(((t.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0);
        let round = |x: f64, k: f64| (x * k).round() / k;
        Summary {
            games: self.games,
            win_rate: round(p, 1000.0),
            ci95: round(1.96 * (p * (1.0 - p) / n).sqrt(), 1000.0),
            mean_score: round(self.score / n, 100.0),
            mean_score_diff: round(self.diff / n, 100.0),
            decisions: t.len() as u64,
            over_budget: budget_ms
                .map_or(0, |b| t.iter().filter(|x| **x > b + over_ms).count() as u64),
            think_ms_mean: round(t.iter().sum::<f64>() / t.len().max(1) as f64, 100.0),
            think_ms_p99: round(p99, 100.0),
            think_ms_max: round(t.last().copied().unwrap_or(0.0), 100.0),
        }
    }
}

/// One pair's figures.
#[derive(Debug, Clone)]
pub struct PairLine {
    /// The game.
    pub game: &'static str,
    /// The variant as given.
    pub variant: String,
    /// Seats at the table.
    pub players: usize,
    /// The bot under test.
    pub strong: String,
    /// Its opponent.
    pub against: String,
    /// Deals played.
    pub deals: u64,
    /// The budget, as text.
    pub budget: String,
    /// The figures.
    pub summary: Summary,
    /// Every think time of the bot under test (µs), for merging runs.
    pub think_us: Vec<u64>,
}

/// Plays one game with `strong` in `strong_seat` and `against` in the
/// others; returns the outcome and `strong`'s think times (ms).
fn play_one<G: Builtins>(
    variant: &G::Variant,
    seats: usize,
    seed: u64,
    strong_seat: usize,
    (strong, against): (&str, &str),
    budget: &Budget,
) -> Result<(Outcome, Vec<f64>), DuplicateError> {
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
    let mut think = Vec::new();
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
            think.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        if game.apply(seat, action).is_err() {
            game.forfeit(seat).map_err(DuplicateError::Forfeit)?;
        }
    }
    let outcome = game.outcome().ok_or(DuplicateError::Unfinished)?;
    Ok((outcome, think))
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
    let mut tally = Tally::default();
    for d in 0..deals {
        let seed = first_seed.wrapping_add(d);
        for s in 0..seats {
            let (outcome, think) =
                play_one::<G>(variant, seats, seed, s, (strong, against), budget)?;
            tally.add(&outcome, s, think);
        }
    }
    let budget_ms = budget
        .iterations
        .is_none()
        .then_some(budget.think.as_secs_f64() * 1000.0);
    Ok(PairLine {
        game: G::NAME,
        variant: variant_text.to_string(),
        players: seats,
        strong: strong.to_string(),
        against: against.to_string(),
        deals,
        budget: match budget.iterations {
            Some(n) => format!("{n} iterations"),
            None => format!("{} ms", budget.think.as_millis()),
        },
        summary: tally.summary(budget_ms, OVER_MS),
        think_us: tally
            .think_ms()
            .iter()
            .map(|ms| (ms * 1000.0) as u64)
            .collect(),
    })
}

/// A decision is over budget when it takes this much longer than the budget.
pub const OVER_MS: f64 = 20.0;
