//! What `croupier bench server` measures: latencies per REST endpoint, kept
//! apart so that service time (status, bid, play, old-game) is not mixed
//! with the time `new-game` waits for an opponent (the matchmaking wait).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

/// The endpoints the benchmark bots call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Status,
    Bid,
    Play,
    OldGame,
    /// A long poll that waits for an opponent: matchmaking, not service.
    NewGame,
    Register,
    Login,
}

impl Endpoint {
    /// The calls whose latency is the server's service time.
    pub const SERVICE: [Endpoint; 4] = [
        Endpoint::Status,
        Endpoint::Bid,
        Endpoint::Play,
        Endpoint::OldGame,
    ];

    /// The method in `/api/<method>/`.
    pub fn method(self) -> &'static str {
        match self {
            Endpoint::Status => "status",
            Endpoint::Bid => "bid",
            Endpoint::Play => "play",
            Endpoint::OldGame => "old-game",
            Endpoint::NewGame => "new-game",
            Endpoint::Register => "register",
            Endpoint::Login => "login",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Latencies (µs) per endpoint and counters, shared by all bots.
#[derive(Default)]
pub struct Stats {
    latencies: [Mutex<Vec<u32>>; 7],
    /// Latencies are not kept (calls are still counted): outside the
    /// measured time.
    muted: AtomicBool,
    /// Completed requests, every endpoint.
    pub requests: AtomicU64,
    /// Bots that have logged in.
    pub logged_in: AtomicU64,
    /// Game ends seen by bots (two per game).
    pub game_ends: AtomicU64,
    /// Plays the server refused (a bot bug, or a lost race).
    pub refused_plays: AtomicU64,
    /// `new-game` answers `retry` (no opponent within the poll timeout).
    pub new_game_retries: AtomicU64,
    /// `old-game` answers that were not a finished game.
    pub old_game_refusals: AtomicU64,
    /// `register`/`login` answers "retry" or "busy" (throttle, hash queue).
    pub auth_retries: AtomicU64,
    /// Answers of a game's calls throttled or refused (`retry` with
    /// `Retry-After`: the per-bot rate limit, or too many connections),
    /// waited out and asked again; not counted in `requests`.
    pub throttled: AtomicU64,
}

impl Stats {
    /// Records one call of `endpoint` that started at `t`.
    pub fn record(&self, endpoint: Endpoint, t: Instant) {
        let us = t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
        self.requests.fetch_add(1, Ordering::Relaxed);
        if self.muted.load(Ordering::Relaxed) {
            return;
        }
        if let Ok(mut l) = self.latencies[endpoint.index()].lock() {
            l.push(us);
        }
    }

    /// Keeps latencies from now on (`true`) or not.
    pub fn keep_latencies(&self, keep: bool) {
        self.muted.store(!keep, Ordering::Relaxed);
    }

    /// Forgets the latencies so far (the end of the warm-up).
    pub fn clear_latencies(&self) {
        for l in &self.latencies {
            if let Ok(mut l) = l.lock() {
                l.clear();
            }
        }
    }

    fn take(&self, endpoints: &[Endpoint]) -> Vec<u32> {
        let mut all = Vec::new();
        for e in endpoints {
            if let Ok(l) = self.latencies[e.index()].lock() {
                all.extend_from_slice(&l);
            }
        }
        all
    }

    /// The distribution of one endpoint's latencies.
    pub fn summary(&self, endpoint: Endpoint) -> Summary {
        Summary::of(self.take(&[endpoint]))
    }

    /// The distribution of the service calls' latencies together.
    pub fn service(&self) -> Summary {
        Summary::of(self.take(&Endpoint::SERVICE))
    }
}

/// Call count and latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Summary {
    pub calls: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Summary {
    /// Nearest-rank percentiles of `us` (microseconds).
    pub fn of(mut us: Vec<u32>) -> Summary {
        if us.is_empty() {
            return Summary::default();
        }
        us.sort_unstable();
        let at = |q: f64| {
            let rank = (q * us.len() as f64).ceil() as usize;
            f64::from(us[rank.clamp(1, us.len()) - 1]) / 1000.0
        };
        Summary {
            calls: us.len(),
            p50_ms: round(at(0.50)),
            p90_ms: round(at(0.90)),
            p99_ms: round(at(0.99)),
            max_ms: round(at(1.0)),
        }
    }

    /// One row of the Markdown table, with this row's p99 over `bare_p99`.
    pub fn row(&self, name: &str, bare_p99: f64, note: &str) -> String {
        let ratio = if bare_p99 > 0.0 && self.calls > 0 {
            format!("{:.1}×", self.p99_ms / bare_p99)
        } else {
            "–".to_string()
        };
        format!(
            "| {name} | {} | {} | {} | {} | {} | {ratio} | {note} |",
            self.calls, self.p50_ms, self.p90_ms, self.p99_ms, self.max_ms
        )
    }
}

/// Two decimals.
pub fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The median of `v` (the mean of the middle two for an even count; NaN
/// for none).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if !n.is_multiple_of(2) => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn medians_of_odd_and_even_counts() {
        use super::median;
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }

    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let s = Summary::of((1..=1000).map(|ms| ms * 1000).collect());
        assert_eq!(s.calls, 1000);
        assert_eq!(s.p50_ms, 500.0);
        assert_eq!(s.p90_ms, 900.0);
        assert_eq!(s.p99_ms, 990.0);
        assert_eq!(s.max_ms, 1000.0);
        let one = Summary::of(vec![2500]);
        assert_eq!((one.p50_ms, one.p99_ms, one.max_ms), (2.5, 2.5, 2.5));
        assert_eq!(Summary::of(Vec::new()).calls, 0);
    }

    #[test]
    fn matchmaking_is_not_service_time() {
        let stats = Stats::default();
        let long_ago = Instant::now() - std::time::Duration::from_millis(400);
        stats.record(Endpoint::NewGame, long_ago);
        stats.record(Endpoint::Status, Instant::now());
        stats.record(Endpoint::Play, Instant::now());
        let service = stats.service();
        assert_eq!(service.calls, 2);
        assert!(service.max_ms < 400.0, "{service:?}");
        let wait = stats.summary(Endpoint::NewGame);
        assert_eq!(wait.calls, 1);
        assert!(wait.p50_ms >= 400.0, "{wait:?}");
        assert_eq!(stats.requests.load(Ordering::Relaxed), 3);
        stats.clear_latencies();
        assert_eq!(stats.service().calls, 0);
    }
}
