//! Where a benchmarked server's time goes (`CROUPIER_BENCH_WAITS`): each
//! `croupier serve` child gets `CROUPIER_WAITS=FILE` (see
//! `croupier_store::waits`), the benchmark sends it `SIGUSR1` at the start
//! and at the end of the measured time, reads the summary it appended, and
//! prints one table per setup. `bench server` and `bench server
//! --instances` share this.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use croupier_store::waits::Summary;

/// The variable that turns the timing on.
pub const ENV: &str = "CROUPIER_BENCH_WAITS";

/// The file the server known as `tag` (a number of its own in this
/// benchmark: its port, or `bench::proc`'s tag) writes its waits to, when
/// [`ENV`] is set.
pub fn file(tag: u16) -> Option<PathBuf> {
    std::env::var_os(ENV)?;
    Some(std::env::temp_dir().join(format!(
        "croupier-bench-waits-{}-{tag}.jsonl",
        std::process::id()
    )))
}

/// Makes `command` (a `croupier serve`) time its waits into [`file`]`(tag)`.
pub fn arm(command: &mut Command, tag: u16) {
    if let Some(f) = file(tag) {
        let _ = std::fs::remove_file(&f);
        command.env(croupier_store::waits::ENV, f);
    }
}

/// Asks each server for its waits so far (`SIGUSR1`) and reads them; empty
/// unless [`ENV`] is set.
pub async fn take(tags: &[u16], pids: &[u32]) -> Vec<BTreeMap<String, Summary>> {
    if tags.is_empty() || tags.iter().any(|p| file(*p).is_none()) {
        return Vec::new();
    }
    for pid in pids {
        // SIGUSR1 ends a process that does not catch it: an older build
        // given with --server-bin must not be killed by the benchmark.
        if catches_usr1(*pid) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid as i32),
                nix::sys::signal::Signal::SIGUSR1,
            );
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    tags.iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(file(*p)?).ok()?;
            serde_json::from_str(text.lines().last()?).ok()
        })
        .collect()
}

/// Whether process `pid` catches `SIGUSR1` (`SigCgt` in
/// `/proc/PID/status`).
fn catches_usr1(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (nix::libc::SIGUSR1 - 1)) != 0)
}

/// Several servers' waits together: counts and totals added, the largest
/// p50/p99/max of any of them.
pub fn merge(all: Vec<BTreeMap<String, Summary>>) -> Vec<(String, Summary)> {
    let mut out: BTreeMap<String, Summary> = BTreeMap::new();
    for m in all {
        for (k, v) in m {
            let e = out.entry(k).or_insert(Summary {
                n: 0,
                p50_ms: 0.0,
                p99_ms: 0.0,
                max_ms: 0.0,
                total_s: 0.0,
            });
            e.n += v.n;
            e.p50_ms = e.p50_ms.max(v.p50_ms);
            e.p99_ms = e.p99_ms.max(v.p99_ms);
            e.max_ms = e.max_ms.max(v.max_ms);
            e.total_s += v.total_s;
        }
    }
    out.into_iter().collect()
}

/// Prints `waits` (measured over `seconds`) as a table under `title`.
pub fn print(title: &str, waits: &[(String, Summary)], seconds: f64) {
    if waits.is_empty() {
        return;
    }
    println!("\nWaits, {title}:\n");
    println!("| wait | count | per s | p50 ms | p99 ms | max ms | total s |");
    println!("|---|---|---|---|---|---|---|");
    for (k, v) in waits {
        println!(
            "| {k} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} |",
            v.n,
            v.n as f64 / seconds,
            v.p50_ms,
            v.p99_ms,
            v.max_ms,
            v.total_s
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: usize, p50: f64, p99: f64, total: f64) -> Summary {
        Summary {
            n,
            p50_ms: p50,
            p99_ms: p99,
            max_ms: p99,
            total_s: total,
        }
    }

    #[test]
    fn only_a_process_that_catches_usr1_is_signalled() {
        // This test process does not catch SIGUSR1; a dead pid catches nothing.
        assert!(!catches_usr1(std::process::id()));
        assert!(!catches_usr1(u32::MAX));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        let _usr1 =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()).unwrap();
        assert!(catches_usr1(std::process::id()));
    }

    #[test]
    fn merged_waits_add_counts_and_keep_the_largest_percentiles() {
        let a = BTreeMap::from([("x".to_string(), s(10, 1.0, 5.0, 0.5))]);
        let b = BTreeMap::from([
            ("x".to_string(), s(30, 2.0, 4.0, 1.5)),
            ("y".to_string(), s(1, 0.1, 0.1, 0.0)),
        ]);
        let m = merge(vec![a, b]);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].0, "x");
        assert_eq!(m[0].1, s(40, 2.0, 5.0, 2.0));
        assert_eq!(m[1].1.n, 1);
    }
}
