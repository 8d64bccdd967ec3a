//! The `strong` strategies: search-based bots, one per game.
//!
//! - Goofspiel: each turn solved as a matrix game over exactly valued
//!   endgames ([`goofspiel::Strong`]).
//! - SkullWhist: determinized sampling with play-outs against a random
//!   opponent, weighted by its follows ([`skullwhist::Strong`]).
//! - Love Letter: information-set Monte Carlo tree search with a belief
//!   over the other hands and heuristic play-outs ([`loveletter::Strong`]).

pub mod goofspiel;
pub mod loveletter;
pub mod matrix;
pub mod skullwhist;

use std::time::{Duration, Instant};

use rand::Rng;

use crate::BotRng;

/// How long a strategy may think per decision, and on how many threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Wall-clock time per decision (the default budget, 100 ms).
    pub think: Duration,
    /// A fixed number of samples per decision instead of a time budget: with
    /// it (and a seed) every choice is deterministic.
    pub iterations: Option<u32>,
    /// Threads the search may use (default 1, so that matches can run side
    /// by side).
    pub threads: u32,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            think: Duration::from_millis(100),
            iterations: None,
            threads: 1,
        }
    }
}

/// Most samples a time budget takes, however fast the machine.
pub const MAX_SAMPLES: u32 = 100_000;
/// Share of a time budget after which no new sample starts.
pub const SOFT_STOP: f64 = 0.75;
/// Share of a time budget after which a sample under way is dropped.
pub const HARD_STOP: f64 = 0.9;
/// Most threads a search may use.
pub const MAX_THREADS: u32 = 256;
/// Longest time budget per decision (10 minutes).
pub const MAX_THINK_MS: u64 = 600_000;

/// The options a built-in takes after `?` (`strong?think-ms=50&threads=2`).
pub const OPTIONS: &[&str] = &["think-ms", "iterations", "threads"];

/// Why budget options do not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// `key` without `=value`.
    #[error("option '{0}' needs a value (key=value)")]
    NoValue(String),
    /// The same key twice.
    #[error("option '{0}' is given twice")]
    Twice(String),
    /// A value that is not a whole number in range.
    #[error("{key} must be a whole number from 1 to {max}, not '{value}'")]
    OutOfRange {
        /// The option.
        key: String,
        /// Its largest value.
        max: u64,
        /// What was given.
        value: String,
    },
    /// A key the budget does not know.
    #[error("unknown option '{0}' (options: {options})", options = OPTIONS.join(", "))]
    Unknown(String),
}

impl Budget {
    /// A fixed number of samples per decision.
    pub fn iterations(n: u32) -> Self {
        Budget {
            iterations: Some(n.max(1)),
            ..Budget::default()
        }
    }

    /// A time budget per decision.
    pub fn think_ms(ms: u64) -> Self {
        Budget {
            think: Duration::from_millis(ms),
            ..Budget::default()
        }
    }

    /// The same budget searched on `n` threads (at least 1).
    pub fn with_threads(self, n: u32) -> Self {
        Budget {
            threads: n.clamp(1, MAX_THREADS),
            ..self
        }
    }

    /// Reads options written `key=value&key=value` (see [`OPTIONS`]) on top
    /// of the default budget.
    pub fn parse(options: &str) -> Result<Budget, BudgetError> {
        let mut b = Budget::default();
        let mut seen: Vec<&str> = vec![];
        for part in options.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| BudgetError::NoValue(part.to_string()))?;
            if seen.contains(&key.trim()) {
                return Err(BudgetError::Twice(key.trim().to_string()));
            }
            seen.push(key.trim());
            let number = |max: u64| -> Result<u64, BudgetError> {
                match value.trim().parse::<u64>() {
                    Ok(n) if n >= 1 && n <= max => Ok(n),
                    Ok(_) | Err(_) => Err(BudgetError::OutOfRange {
                        key: key.to_string(),
                        max,
                        value: value.to_string(),
                    }),
                }
            };
            match key.trim() {
                "think-ms" => b.think = Duration::from_millis(number(MAX_THINK_MS)?),
                "iterations" => b.iterations = Some(number(u64::from(MAX_SAMPLES))? as u32),
                "threads" => b.threads = number(u64::from(MAX_THREADS))? as u32,
                other => return Err(BudgetError::Unknown(other.to_string())),
            }
        }
        Ok(b)
    }

    /// The budget written as options, as [`Budget::parse`] reads them;
    /// empty for the default.
    pub fn options(&self) -> String {
        let d = Budget::default();
        let mut parts = vec![];
        if self.think != d.think {
            parts.push(format!("think-ms={}", self.think.as_millis()));
        }
        if let Some(n) = self.iterations {
            parts.push(format!("iterations={n}"));
        }
        if self.threads != d.threads {
            parts.push(format!("threads={}", self.threads));
        }
        parts.join("&")
    }

    /// Whether a search that has taken `samples` samples since `start` must
    /// stop. A time budget always allows one sample, and starts no new one
    /// after [`SOFT_STOP`] of the budget, for the answer to go out in time
    /// on a busy machine.
    pub fn spent(&self, samples: u32, start: Instant) -> bool {
        match self.iterations {
            Some(n) => samples >= n,
            None => {
                samples >= MAX_SAMPLES
                    || (samples > 0 && start.elapsed() >= self.think.mul_f64(SOFT_STOP))
            }
        }
    }

    /// Whether a sample under way since the search began at `start` must be
    /// dropped unfinished: past [`HARD_STOP`] of a time budget (never with
    /// a fixed number of iterations, so those stay deterministic). Searches
    /// check it between the candidates of one sample.
    pub fn cut(&self, start: Instant) -> bool {
        self.iterations.is_none() && start.elapsed() >= self.think.mul_f64(HARD_STOP)
    }

    /// Runs a sampling search on the budget's threads. Each sample calls
    /// `step` with a per-thread total (`width` zeros to begin with) and a
    /// per-thread generator seeded from `rng`; `step` returns `false` to stop
    /// its thread. The totals of all threads are summed; the second value is
    /// the number of samples taken. With `iterations` the samples are split
    /// evenly, so the result depends only on `rng` and the thread count.
    pub fn search<F>(&self, rng: &mut BotRng, width: usize, step: F) -> (Vec<f64>, u32)
    where
        F: Fn(&mut [f64], &mut BotRng) -> bool + Sync,
    {
        let parts = self.search_with(rng, || vec![0.0; width], |t, r| step(t, r));
        let mut totals = vec![0.0; width];
        let mut samples = 0;
        for (t, n) in parts {
            for (a, b) in totals.iter_mut().zip(t) {
                *a += b;
            }
            samples += n;
        }
        (totals, samples)
    }

    /// [`Budget::search`] with any per-thread state (a search tree, say):
    /// each thread starts from `init()` and calls `step` with its state and
    /// its own generator once per iteration until the budget is spent or
    /// `step` returns `false`. Returns every thread's state and iteration
    /// count, in thread order. With `iterations` they are split evenly, so
    /// the result depends only on `rng` and the thread count.
    pub fn search_with<S, I, F>(&self, rng: &mut BotRng, init: I, step: F) -> Vec<(S, u32)>
    where
        S: Send,
        I: Fn() -> S + Sync,
        F: Fn(&mut S, &mut BotRng) -> bool + Sync,
    {
        let start = Instant::now();
        let threads = self.threads.clamp(1, MAX_THREADS);
        let share = |k: u32| -> Budget {
            let mut b = *self;
            b.iterations = self
                .iterations
                .map(|n| n / threads + u32::from(k < n % threads));
            b
        };
        let seeds: Vec<u64> = (0..threads).map(|_| rng.random()).collect();
        let work = |k: u32, seed: u64| -> (S, u32) {
            let budget = share(k);
            let mut r = crate::bot_rng(seed);
            let mut state = init();
            let mut samples = 0u32;
            let cap = MAX_SAMPLES / threads;
            while !budget.spent(samples, start) && samples < cap.max(1) {
                if !step(&mut state, &mut r) {
                    break;
                }
                samples += 1;
            }
            (state, samples)
        };
        if threads == 1 {
            return vec![work(0, seeds[0])];
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = seeds
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let work = &work;
                    scope.spawn(move || work(k as u32, *s))
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_print_back() {
        let b = Budget::parse("think-ms=50&threads=2").unwrap();
        assert_eq!(b.think, Duration::from_millis(50));
        assert_eq!((b.threads, b.iterations), (2, None));
        assert_eq!(Budget::parse(&b.options()).unwrap(), b);
        let i = Budget::parse("iterations=300").unwrap();
        assert_eq!(i, Budget::iterations(300));
        assert_eq!(i.options(), "iterations=300");
        assert_eq!(Budget::parse("").unwrap(), Budget::default());
        for (bad, needle) in [
            ("depth=3", "unknown option 'depth'"),
            ("threads=0", "threads must be"),
            ("think-ms=soon", "think-ms must be"),
            ("iterations", "needs a value"),
            ("threads=2&threads=3", "given twice"),
        ] {
            let e = Budget::parse(bad).unwrap_err().to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn iterations_are_split_over_threads_exactly() {
        for threads in [1, 2, 3, 7] {
            let b = Budget::iterations(100).with_threads(threads);
            let (totals, n) = b.search(&mut crate::bot_rng(1), 2, |t, _| {
                t[0] += 1.0;
                true
            });
            assert_eq!(n, 100, "{threads} threads");
            assert_eq!(totals, vec![100.0, 0.0]);
        }
        // The same seed and thread count give the same draws.
        let draw = |seed| {
            Budget::iterations(40)
                .with_threads(3)
                .search(&mut crate::bot_rng(seed), 1, |t, r| {
                    t[0] += r.random::<f64>();
                    true
                })
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
    }
}
