//! What `croupier bench server --instances` prints: each setup's figures
//! (one row per run), the scale-out efficiency, and with `--rounds` the
//! medians of the alternated runs of each instance count.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::bench::server_stats::{median, round, Endpoint, Stats};
use croupier_store::waits::Summary;

/// What `bench server --instances` runs (and prints).
#[derive(Debug, Clone)]
pub struct Options {
    /// Concurrent REST bots.
    pub bots: usize,
    /// Seconds measured per setup, after its warm-up.
    pub seconds: f64,
    /// One JSON object instead of the table.
    pub json: bool,
    /// The `croupier` binary to serve with.
    pub server: PathBuf,
    /// A PostgreSQL URL (default: a throw-away cluster).
    pub database: Option<String>,
    /// Instance counts to measure on PostgreSQL.
    pub instances: Vec<usize>,
    /// CPU cores each instance may use, each in a cgroup of its own
    /// (PostgreSQL, haproxy and the bots outside any quota).
    pub cpu_quota: Option<f64>,
    /// Route the PostgreSQL setups on the session (docs/deploy/haproxy.cfg as it
    /// is), else round robin.
    pub affinity: bool,
    /// Runs of each instance count, in alternating order (the SQLite
    /// setups and the direct PostgreSQL one run once).
    pub rounds: usize,
}

/// One setup's figures in one run.
pub(crate) struct Row {
    pub(crate) setup: String,
    /// The round of the instance counts it was measured in (from 1; the
    /// setups measured once are in round 1).
    pub(crate) round: usize,
    /// On SQLite (else PostgreSQL).
    pub(crate) sqlite: bool,
    /// Behind haproxy (else reached directly).
    pub(crate) proxied: bool,
    pub(crate) games_per_sec: f64,
    pub(crate) requests_per_sec: f64,
    pub(crate) stats: Arc<Stats>,
    pub(crate) cpu_cores: f64,
    pub(crate) errors: usize,
    /// Statements PostgreSQL ran in the measured time (every round trip:
    /// `BEGIN` and `COMMIT` too), when the database has
    /// `pg_stat_statements` loaded.
    pub(crate) statements: Option<i64>,
    /// The measured time (s).
    pub(crate) seconds: f64,
    /// The instances' database waits in the measured time, by kind (with
    /// `CROUPIER_BENCH_WAITS`).
    pub(crate) waits: Vec<(String, Summary)>,
}

impl Row {
    /// PostgreSQL statements per game finished in the measured time.
    fn per_game(&self) -> Option<f64> {
        let games = self.games_per_sec * self.seconds;
        self.statements
            .filter(|_| games > 0.0)
            .map(|n| round(n as f64 / games))
    }

    /// PostgreSQL statements per REST request in the measured time.
    fn per_request(&self) -> Option<f64> {
        let requests = self.requests_per_sec * self.seconds;
        self.statements
            .filter(|_| requests > 0.0)
            .map(|n| round(n as f64 / requests))
    }

    /// The number of instances of a proxied PostgreSQL setup.
    pub(crate) fn instances(&self) -> Option<usize> {
        if self.sqlite || !self.proxied {
            return None;
        }
        self.setup
            .strip_prefix("PostgreSQL, ")?
            .split(' ')
            .next()?
            .parse()
            .ok()
    }

    /// The setup's name, with its round when there are several.
    fn name(&self, rounds: usize) -> String {
        match self.instances() {
            Some(_) if rounds > 1 => format!("{}, round {}", self.setup, self.round),
            _ => self.setup.clone(),
        }
    }
}

/// `r`'s games/s as a share of SQLite's: reached directly (`direct`), or
/// the same way as `r` (directly, or through the proxy).
fn of_sqlite(rows: &[Row], r: &Row, direct: bool) -> f64 {
    let proxied = r.proxied && !direct;
    rows.iter()
        .find(|s| s.sqlite && s.proxied == proxied)
        .map(|s| s.games_per_sec)
        .filter(|g| *g > 0.0)
        .map_or(0.0, |g| r.games_per_sec / g)
}

/// Scale-out efficiency: games/s with N instances ÷ (N × games/s with one),
/// one being the proxied single instance of the same round if measured,
/// else the direct one.
fn efficiency(rows: &[Row], r: &Row) -> Option<f64> {
    let n = r.instances()?;
    let one = rows
        .iter()
        .find(|o| o.instances() == Some(1) && o.round == r.round)
        .or_else(|| rows.iter().find(|o| !o.sqlite && !o.proxied))?;
    (one.games_per_sec > 0.0).then(|| r.games_per_sec / (n as f64 * one.games_per_sec))
}

/// One instance count's runs over the rounds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Medians {
    pub(crate) instances: usize,
    /// Games/s of each run, in round order.
    pub(crate) runs: Vec<f64>,
    pub(crate) games_per_sec: f64,
    /// The median games/s ÷ the median of one instance.
    pub(crate) ratio: Option<f64>,
    /// Each round's games/s ÷ that round's one instance.
    pub(crate) round_ratios: Vec<f64>,
    /// The median service p99 (ms), and its ratio to one instance's.
    pub(crate) p99_ms: f64,
    pub(crate) p99_of_one: Option<f64>,
}

impl Medians {
    fn json(&self) -> Value {
        json!({
            "instances": self.instances,
            "runs_games_per_sec": self.runs.iter().copied().map(round).collect::<Vec<_>>(),
            "games_per_sec": round(self.games_per_sec),
            "of_one_instance": self.ratio.map(round),
            "scale_out_efficiency": self.ratio.map(|r| round(r / self.instances as f64)),
            "each_round_of_one_instance": self.round_ratios.iter().copied().map(round).collect::<Vec<_>>(),
            "service_p99_ms": round(self.p99_ms),
            "p99_of_one_instance": self.p99_of_one.map(round),
        })
    }
}

/// The medians of each instance count over the rounds (the proxied
/// PostgreSQL setups), in the order the counts were given.
pub(crate) fn medians(rows: &[Row], counts: &[usize]) -> Vec<Medians> {
    let of = |n: usize| rows.iter().filter(move |r| r.instances() == Some(n));
    let one = |n: usize| -> (f64, f64) {
        let g = median(of(n).map(|r| r.games_per_sec).collect());
        let p = median(of(n).map(|r| r.stats.service().p99_ms).collect());
        (g, p)
    };
    let (one_games, one_p99) = one(1);
    let mut seen = Vec::new();
    counts
        .iter()
        .filter(|n| {
            let new = !seen.contains(*n);
            seen.push(**n);
            new
        })
        .map(|&n| {
            let (games, p99) = one(n);
            let ratio = (one_games > 0.0).then(|| games / one_games);
            Medians {
                instances: n,
                runs: of(n).map(|r| r.games_per_sec).collect(),
                games_per_sec: games,
                ratio,
                round_ratios: of(n)
                    .filter_map(|r| efficiency(rows, r).map(|e| e * n as f64))
                    .collect(),
                p99_ms: p99,
                p99_of_one: (one_p99 > 0.0).then(|| p99 / one_p99),
            }
        })
        .collect()
}

/// Prints every run's row, the medians over the rounds, and the waits
/// (or one JSON object).
pub(crate) fn report(options: &Options, rows: &[Row]) {
    let medians = medians(rows, &options.instances);
    let json_rows: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "setup": r.setup,
                "round": r.round,
                "scale_out_efficiency": efficiency(rows, r).map(round),
                "games_per_sec": round(r.games_per_sec),
                "of_sqlite": round(of_sqlite(rows, r, true)),
                "of_sqlite_same_path": round(of_sqlite(rows, r, false)),
                "requests_per_sec": round(r.requests_per_sec),
                "service": r.stats.service(),
                "status": r.stats.summary(Endpoint::Status),
                "play": r.stats.summary(Endpoint::Play),
                "new_game_wait": r.stats.summary(Endpoint::NewGame),
                "server_cpu_cores": round(r.cpu_cores),
                "bot_errors": r.errors,
                "pg_statements": r.statements,
                "pg_statements_per_game": r.per_game(),
                "pg_statements_per_request": r.per_request(),
                "waits": r.waits.iter().cloned().collect::<BTreeMap<String, Summary>>(),
            })
        })
        .collect();
    if options.json {
        println!(
            "{}",
            json!({"bots": options.bots, "seconds": options.seconds,
                   "cpu_quota": options.cpu_quota, "affinity": options.affinity,
                   "rounds": options.rounds,
                   "setups": json_rows,
                   "medians": medians.iter().map(Medians::json).collect::<Vec<_>>()})
        );
        return;
    }
    let mut quota = options.cpu_quota.map_or_else(
        || "no CPU quota".to_string(),
        |q| format!("each instance capped to {q} cores in a cgroup of its own"),
    );
    if options.affinity {
        quota += ", PostgreSQL setups routed on the session";
    }
    println!(
        "croupier bench server --instances: {} REST bots, {} s per setup, {quota}\n",
        options.bots, options.seconds
    );
    println!("| setup | games/s | scale-out efficiency | of SQLite | of SQLite, same path | requests/s | service p50 ms | service p99 ms | status p99 | play p99 | new-game p50 | server CPU cores | bot errors | PG statements per game | per request |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let s = r.stats.service();
        println!(
            "| {} | {:.1} | {} | {:.0}% | {:.0}% | {:.0} | {} | {} | {} | {} | {} | {:.2} | {} | {} | {} |",
            r.name(options.rounds),
            r.games_per_sec,
            efficiency(rows, r).map_or("—".into(), |e| format!("{:.0}%", 100.0 * e)),
            100.0 * of_sqlite(rows, r, true),
            100.0 * of_sqlite(rows, r, false),
            r.requests_per_sec,
            s.p50_ms,
            s.p99_ms,
            r.stats.summary(Endpoint::Status).p99_ms,
            r.stats.summary(Endpoint::Play).p99_ms,
            r.stats.summary(Endpoint::NewGame).p50_ms,
            r.cpu_cores,
            r.errors,
            r.per_game().map_or("—".into(), |v| format!("{v:.1}")),
            r.per_request().map_or("—".into(), |v| format!("{v:.2}")),
        );
    }
    if options.rounds > 1 {
        print_medians(&medians, options.rounds);
    }
    for r in rows {
        let title = format!(
            "{} (all instances; p50/p99/max: the largest of any instance)",
            r.name(options.rounds)
        );
        crate::bench::waits::print(&title, &r.waits, r.seconds);
    }
}

fn print_medians(medians: &[Medians], rounds: usize) {
    let times = |v: Option<f64>| v.map_or("—".into(), |x| format!("{x:.2}×"));
    println!("\nMedians over {rounds} rounds (the instance counts in alternating order):\n");
    println!("| instances behind haproxy | games/s, median | each run | of one instance (medians) | scale-out efficiency | each round, of that round's one instance | service p99 ms, median | p99 of one instance's |");
    println!("|---|---|---|---|---|---|---|---|");
    for m in medians {
        let list = |v: &[f64], f: &dyn Fn(f64) -> String| {
            v.iter().map(|x| f(*x)).collect::<Vec<_>>().join(", ")
        };
        println!(
            "| {} | {:.1} | {} | {} | {} | {} | {} | {} |",
            m.instances,
            m.games_per_sec,
            list(&m.runs, &|x| format!("{x:.1}")),
            times(m.ratio),
            m.ratio.map_or("—".into(), |r| format!(
                "{:.0}%",
                100.0 * r / m.instances as f64
            )),
            list(&m.round_ratios, &|x| format!("{x:.2}×")),
            m.p99_ms,
            times(m.p99_of_one),
        );
    }
}

/// The order of the instance counts in round `round` (from 1): as given
/// in odd rounds, reversed in even ones, so that no count always runs
/// first (on a machine that warms up or slows down over the run).
pub(crate) fn order(counts: &[usize], round: usize) -> Vec<usize> {
    let mut v = counts.to_vec();
    if round.is_multiple_of(2) {
        v.reverse();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(instances: usize, round: usize, games: f64) -> Row {
        Row {
            setup: format!("PostgreSQL, {instances} instance(s), haproxy"),
            round,
            sqlite: false,
            proxied: true,
            games_per_sec: games,
            requests_per_sec: games * 90.0,
            stats: Arc::new(Stats::default()),
            cpu_cores: 0.2 * instances as f64,
            errors: 0,
            statements: None,
            seconds: 10.0,
            waits: Vec::new(),
        }
    }

    #[test]
    fn the_rounds_alternate_the_order_of_the_counts() {
        assert_eq!(order(&[1, 2, 3], 1), [1, 2, 3]);
        assert_eq!(order(&[1, 2, 3], 2), [3, 2, 1]);
        assert_eq!(order(&[1, 2, 3], 3), [1, 2, 3]);
    }

    #[test]
    fn each_round_is_compared_with_its_own_single_instance() {
        let rows = [
            row(1, 1, 20.0),
            row(2, 1, 30.0),
            row(2, 2, 50.0),
            row(1, 2, 25.0),
            row(1, 3, 40.0),
            row(2, 3, 60.0),
        ];
        assert_eq!(efficiency(&rows, &rows[1]), Some(0.75));
        assert_eq!(efficiency(&rows, &rows[2]), Some(1.0));
        let m = medians(&rows, &[1, 2]);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].games_per_sec, 25.0);
        assert_eq!(m[0].ratio, Some(1.0));
        assert_eq!(m[1].runs, [30.0, 50.0, 60.0]);
        assert_eq!(m[1].games_per_sec, 50.0);
        // The ratio of the medians, not the median of the ratios.
        assert_eq!(m[1].ratio, Some(2.0));
        assert_eq!(m[1].round_ratios, [1.5, 2.0, 1.5]);
        assert_eq!(m[1].json()["scale_out_efficiency"], 1.0);
    }

    #[test]
    fn no_single_instance_gives_no_ratio() {
        let rows = [row(2, 1, 30.0), row(3, 1, 40.0)];
        let m = medians(&rows, &[2, 3, 2]);
        assert_eq!(m.len(), 2, "a count given twice is one line");
        assert_eq!(m[0].ratio, None);
        assert!(m[0].round_ratios.is_empty());
    }
}
