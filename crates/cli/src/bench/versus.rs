//! `croupier bench server --versus OTHER`: two server builds measured in
//! alternating order, A B then B A, round after round (ABBA). On a shared
//! machine the build that runs second in a pair was the slower one in 8 of
//! 10 pairs, whichever it was (docs/benchmarks.md), so repeating A B makes
//! B look worse than it is. Each run is a fresh `bench server --json` child
//! of this binary (the same load generator for both builds); the table
//! lists every run and then each build's medians and their ratio.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{anyhow, Context as _};
use serde_json::{json, Value};

use crate::bench::server_stats::{median, round};

/// What to compare.
#[derive(Debug, Clone)]
pub struct Options {
    /// Concurrent REST bots.
    pub bots: usize,
    /// Seconds measured in each run.
    pub seconds: f64,
    /// One JSON object instead of the table.
    pub json: bool,
    /// Build A (`--server-bin`, default this binary) and build B
    /// (`--versus`).
    pub builds: [PathBuf; 2],
    /// Rounds; each runs both builds, the order alternating.
    pub rounds: usize,
    /// `--split-cores`.
    pub split_cores: bool,
    /// `--database` (default: a new SQLite file in each run).
    pub database: Option<String>,
    /// This binary: the load generator of every run.
    pub exe: PathBuf,
    /// `--alternations` of each run.
    pub alternations: usize,
}

/// The builds' names.
const NAMES: [&str; 2] = ["A", "B"];

/// One run's figures, from its JSON line.
struct Run {
    round: usize,
    build: usize,
    games_per_sec: f64,
    requests_per_sec: f64,
    of_bare: f64,
    service_p99_ms: f64,
    bare_p99_ms: f64,
    /// The server's CPU time per request (µs).
    cpu_us_per_request: f64,
}

impl Run {
    fn from_json(round: usize, build: usize, v: &Value) -> anyhow::Result<Run> {
        let num = |path: &[&str]| -> anyhow::Result<f64> {
            let mut x = v;
            for k in path {
                x = &x[*k];
            }
            x.as_f64()
                .ok_or_else(|| anyhow!("bench server's JSON has no number at {}", path.join(".")))
        };
        let requests_per_sec = num(&["requests_per_sec"])?;
        Ok(Run {
            round,
            build,
            games_per_sec: num(&["games_per_sec"])?,
            requests_per_sec,
            of_bare: num(&["requests_per_sec_over_bare"])?,
            service_p99_ms: num(&["service", "p99_ms"])?,
            bare_p99_ms: num(&["bare", "latency", "p99_ms"])?,
            cpu_us_per_request: num(&["server_cpu_cores"])? * 1e6 / requests_per_sec.max(1e-9),
        })
    }

    fn json(&self) -> Value {
        let build = NAMES[self.build];
        json!({
            "round": self.round,
            "build": build,
            "games_per_sec": round(self.games_per_sec),
            "requests_per_sec": round(self.requests_per_sec),
            "requests_per_sec_over_bare": round(self.of_bare),
            "service_p99_ms": round(self.service_p99_ms),
            "bare_p99_ms": round(self.bare_p99_ms),
            "server_cpu_us_per_request": round(self.cpu_us_per_request),
        })
    }
}

/// The builds' order in round `r` (0-based): A B, then B A, and so on.
pub fn order(r: usize) -> [usize; 2] {
    if r.is_multiple_of(2) {
        [0, 1]
    } else {
        [1, 0]
    }
}

/// Runs the comparison and prints its table (or JSON).
pub fn run(options: Options) -> anyhow::Result<()> {
    let exe = &options.exe;
    let mut runs = Vec::with_capacity(options.rounds * 2);
    for r in 0..options.rounds {
        for b in order(r) {
            let bin = &options.builds[b];
            eprintln!(
                "bench server --versus: round {} of {}, build {} ({})",
                r + 1,
                options.rounds,
                NAMES[b],
                bin.display()
            );
            let mut command = Command::new(exe);
            command
                .args(["bench", "server", "--json", "--bots"])
                .arg(options.bots.to_string())
                .arg("--seconds")
                .arg(options.seconds.to_string())
                .arg("--server-bin")
                .arg(bin)
                .arg("--alternations")
                .arg(options.alternations.to_string());
            if options.split_cores {
                command.arg("--split-cores");
            }
            if let Some(db) = &options.database {
                command.arg("--database").arg(db);
            }
            let out = command
                .stdin(Stdio::null())
                .stderr(Stdio::inherit())
                .output()
                .with_context(|| format!("cannot run {} bench server", exe.display()))?;
            if !out.status.success() {
                return Err(anyhow!(
                    "bench server with {} failed ({})",
                    bin.display(),
                    out.status
                ));
            }
            let text = String::from_utf8_lossy(&out.stdout);
            let line = text
                .lines()
                .rev()
                .find(|l| l.starts_with('{'))
                .ok_or_else(|| anyhow!("bench server with {} printed no JSON", bin.display()))?;
            let v: Value = serde_json::from_str(line).context("bench server's JSON line")?;
            runs.push(Run::from_json(r + 1, b, &v)?);
        }
    }
    report(&options, &runs);
    Ok(())
}

/// Each build's medians over its runs.
fn medians(runs: &[Run], build: usize) -> Value {
    let of = |f: fn(&Run) -> f64| {
        round(median(
            runs.iter().filter(|r| r.build == build).map(f).collect(),
        ))
    };
    json!({
        "games_per_sec": of(|r| r.games_per_sec),
        "requests_per_sec": of(|r| r.requests_per_sec),
        "requests_per_sec_over_bare": of(|r| r.of_bare),
        "service_p99_ms": of(|r| r.service_p99_ms),
        "server_cpu_us_per_request": of(|r| r.cpu_us_per_request),
    })
}

fn report(options: &Options, runs: &[Run]) {
    let (a, b) = (medians(runs, 0), medians(runs, 1));
    let ratio = |k: &str| {
        let (x, y) = (
            a[k].as_f64().unwrap_or(f64::NAN),
            b[k].as_f64().unwrap_or(f64::NAN),
        );
        round(y / x)
    };
    let keys = [
        "games_per_sec",
        "requests_per_sec",
        "requests_per_sec_over_bare",
        "service_p99_ms",
        "server_cpu_us_per_request",
    ];
    if options.json {
        let ratios: serde_json::Map<String, Value> = keys
            .iter()
            .map(|k| (k.to_string(), json!(ratio(k))))
            .collect();
        println!(
            "{}",
            json!({
                "bench": "server-versus",
                "bots": options.bots,
                "seconds": options.seconds,
                "split_cores": options.split_cores,
                "builds": {
                    "A": options.builds[0].display().to_string(),
                    "B": options.builds[1].display().to_string(),
                },
                "runs": runs.iter().map(Run::json).collect::<Vec<_>>(),
                "medians": {"A": a, "B": b},
                "b_over_a": ratios,
            })
        );
        return;
    }
    println!(
        "croupier bench server --versus: {} REST bots, {} s per run, {} rounds (A B, then B A)",
        options.bots, options.seconds, options.rounds
    );
    println!("A: {}", options.builds[0].display());
    println!("B: {}", options.builds[1].display());
    println!();
    println!("| round | build | games/s | requests/s | of bare | service p99 ms | bare p99 ms | server CPU µs/request |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in runs {
        println!(
            "| {} | {} | {:.1} | {:.0} | {:.0}% | {:.2} | {:.2} | {:.1} |",
            r.round,
            NAMES[r.build],
            r.games_per_sec,
            r.requests_per_sec,
            r.of_bare * 100.0,
            r.service_p99_ms,
            r.bare_p99_ms,
            r.cpu_us_per_request
        );
    }
    println!();
    println!(
        "| median | games/s | requests/s | of bare | service p99 ms | server CPU µs/request |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, m) in [("A", &a), ("B", &b)] {
        println!(
            "| {name} | {} | {} | {}% | {} | {} |",
            m["games_per_sec"],
            m["requests_per_sec"],
            round(m["requests_per_sec_over_bare"].as_f64().unwrap_or(f64::NAN) * 100.0),
            m["service_p99_ms"],
            m["server_cpu_us_per_request"]
        );
    }
    println!(
        "| B / A | {} | {} | {} | {} | {} |",
        ratio(keys[0]),
        ratio(keys[1]),
        ratio(keys[2]),
        ratio(keys[3]),
        ratio(keys[4])
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_the_order() {
        let seq: Vec<usize> = (0..4).flat_map(order).collect();
        assert_eq!(seq, [0, 1, 1, 0, 0, 1, 1, 0]);
    }
}
