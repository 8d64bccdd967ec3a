//! The thinking time each remote bot has left in a match with a budget
//! ([`LiveConfig::budget`](super::LiveConfig::budget)).

use std::time::Duration;

/// Thinking time left per seat in a match with a budget.
pub(super) struct Clocks {
    left: Vec<Option<Duration>>,
}

impl Clocks {
    /// Every one of `seats` seats starts with `budget`.
    pub(super) fn new(budget: Option<Duration>, seats: usize) -> Self {
        Clocks {
            left: vec![budget; seats],
        }
    }

    pub(super) fn ms(&self) -> Vec<Option<u64>> {
        self.left
            .iter()
            .map(|c| c.map(|d| d.as_millis().try_into().unwrap_or(u64::MAX)))
            .collect()
    }

    pub(super) fn spent(&self, i: usize) -> bool {
        self.left[i].is_some_and(|d| d.is_zero())
    }

    /// The time seat `i` may think now.
    pub(super) fn limit(&self, i: usize, move_time: Duration) -> Duration {
        self.left[i].map_or(move_time, |d| d.min(move_time))
    }

    pub(super) fn charge(&mut self, i: usize, used: Duration) {
        if let Some(d) = &mut self.left[i] {
            *d = d.saturating_sub(used);
        }
    }
}
