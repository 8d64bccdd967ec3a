//! Where a request's time goes on PostgreSQL (issue 13, speed): how long
//! each kind of database wait took — a statement (with its pool acquire),
//! a group commit, a notification sent, a request relayed to another
//! instance — recorded only when the process runs with
//! `CROUPIER_WAITS=FILE` (otherwise [`record`] is one relaxed load).
//!
//! On `SIGUSR1` the process appends one JSON line to `FILE`: per kind, the
//! count, p50, p99, max and total seconds since the previous signal, and
//! starts over. `croupier bench server --instances` sends the signal at the
//! start and at the end of each measured run (with
//! `CROUPIER_BENCH_WAITS=1`) and prints the table.

use std::collections::BTreeMap;
use std::future::Future;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

static ON: AtomicBool = AtomicBool::new(false);
static SAMPLES: OnceLock<Mutex<BTreeMap<&'static str, Vec<u32>>>> = OnceLock::new();

/// The environment variable naming the file the summaries go to.
pub const ENV: &str = "CROUPIER_WAITS";

/// Whether waits are recorded in this process.
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Records that a wait of kind `kind` took `d`.
pub fn record(kind: &'static str, d: Duration) {
    if !enabled() {
        return;
    }
    let micros = u32::try_from(d.as_micros()).unwrap_or(u32::MAX);
    let mut s = samples().lock().unwrap_or_else(|p| p.into_inner());
    s.entry(kind).or_default().push(micros);
}

/// Runs `f`, recording its time as `kind`.
pub async fn timed<F: Future>(kind: &'static str, f: F) -> F::Output {
    if !enabled() {
        return f.await;
    }
    let t = Instant::now();
    let out = f.await;
    record(kind, t.elapsed());
    out
}

fn samples() -> &'static Mutex<BTreeMap<&'static str, Vec<u32>>> {
    SAMPLES.get_or_init(Default::default)
}

/// One kind's figures in a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Waits recorded.
    pub n: usize,
    /// Median (ms).
    pub p50_ms: f64,
    /// 99th percentile, nearest rank (ms).
    pub p99_ms: f64,
    /// Longest (ms).
    pub max_ms: f64,
    /// All of them together (s).
    pub total_s: f64,
}

fn summary(mut v: Vec<u32>) -> Summary {
    v.sort_unstable();
    let at = |q: f64| -> f64 {
        if v.is_empty() {
            return 0.0;
        }
        let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
        f64::from(v[rank - 1]) / 1000.0
    };
    Summary {
        n: v.len(),
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        max_ms: at(1.0),
        total_s: v.iter().map(|x| f64::from(*x)).sum::<f64>() / 1e6,
    }
}

/// The figures since the last call, by kind (and starts over).
pub fn take() -> BTreeMap<String, Summary> {
    let taken = std::mem::take(&mut *samples().lock().unwrap_or_else(|p| p.into_inner()));
    taken
        .into_iter()
        .map(|(k, v)| (k.to_string(), summary(v)))
        .collect()
}

/// Turns recording on if [`ENV`] names a file, and appends a summary to it
/// on each `SIGUSR1` (call inside a Tokio runtime; once is enough).
pub fn start() {
    static STARTED: OnceLock<()> = OnceLock::new();
    let Some(file) = std::env::var_os(ENV) else {
        return;
    };
    if STARTED.set(()).is_err() {
        return;
    }
    let Ok(mut signals) =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1())
    else {
        return;
    };
    ON.store(true, Ordering::Relaxed);
    tokio::spawn(async move {
        while signals.recv().await.is_some() {
            let line = serde_json::to_string(&take()).unwrap_or_default();
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&file)
                .and_then(|mut f| writeln!(f, "{line}"));
            if let Err(e) = written {
                eprintln!("{ENV}: cannot write {}: {e}", file.to_string_lossy());
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_has_nearest_rank_percentiles() {
        let s = summary((1..=100).map(|i| i * 1000).collect());
        assert_eq!(s.n, 100);
        assert_eq!(s.p50_ms, 50.0);
        assert_eq!(s.p99_ms, 99.0);
        assert_eq!(s.max_ms, 100.0);
        assert!((s.total_s - 5.05).abs() < 1e-9);
        assert_eq!(summary(Vec::new()).n, 0);
    }
}
