//! The `strong` strategies: search-based bots, one per game.
//!
//! - Goofspiel: each turn solved as a matrix game over exactly valued
//!   endgames ([`goofspiel::Strong`]).
//! - SkullWhist: determinized sampling with play-outs and an exact
//!   double-dummy endgame ([`skullwhist::Strong`]).
//! - Love Letter: determinized Monte Carlo with heuristic play-outs
//!   ([`loveletter::Strong`]).

pub mod goofspiel;
pub mod loveletter;
pub mod matrix;
pub mod skullwhist;

use std::time::{Duration, Instant};

/// How long a strategy may think per decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Wall-clock time per decision (the default budget, 100 ms).
    pub think: Duration,
    /// A fixed number of samples per decision instead of a time budget: with
    /// it (and a seed) every choice is deterministic.
    pub iterations: Option<u32>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            think: Duration::from_millis(100),
            iterations: None,
        }
    }
}

/// Most samples a time budget takes, however fast the machine.
pub const MAX_SAMPLES: u32 = 100_000;

impl Budget {
    /// A fixed number of samples per decision.
    pub fn iterations(n: u32) -> Self {
        Budget {
            think: Duration::from_millis(100),
            iterations: Some(n.max(1)),
        }
    }

    /// A time budget per decision.
    pub fn think_ms(ms: u64) -> Self {
        Budget {
            think: Duration::from_millis(ms),
            iterations: None,
        }
    }

    /// Whether a search that has taken `samples` samples since `start` must
    /// stop. A time budget always allows one sample, and stops 10% early
    /// for the answer to go out in time.
    pub fn spent(&self, samples: u32, start: Instant) -> bool {
        match self.iterations {
            Some(n) => samples >= n,
            None => {
                samples >= MAX_SAMPLES
                    || (samples > 0 && start.elapsed() >= self.think.mul_f64(0.9))
            }
        }
    }
}
