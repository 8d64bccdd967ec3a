//! `croupier bench strength GAME`: duplicate matches of the `strong`
//! built-in against every other built-in of the game (and any bot specs
//! given), with win rate, its 95% interval, mean score difference and think
//! time per decision.
//!
//! Each deal (game seed) is played once with `strong` in every seat and the
//! opponent in all the others, so the luck of the deal cancels out. A game
//! counts 1 when `strong` alone ranks first, 1/k when it shares first place
//! with k−1 others, 0 otherwise; the interval is the normal approximation
//! over the games played. Think times are the records' thinking times of
//! `strong`'s decisions, and the opponents'.
//!
//! A seat run as a program (`exec:…`, `builtin:…@dialect`) runs in a cgroup
//! of its own with a quota of `--bot-cpus` cores where cgroups can be made
//! (issue 51), and its records carry each decision's CPU time: the `cpu ms`
//! columns, beside the wall time. In-process built-ins have no cgroup and
//! show `—` (their CPU time is not measured).

use std::path::Path;

use croupier_arena::series::Table;
use croupier_arena::spec::BotSpec;
use croupier_arena::transport::process::cgroup::BotCpus;
use croupier_arena::LiveConfig;
use croupier_bots::Builtins;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{GameKind, Record, Seat, StepKind};
use serde::Serialize;

use crate::error::CliError;
use crate::play::series_error;

/// What `bench strength` plays.
#[derive(Debug, Clone)]
pub struct StrengthOptions {
    /// The game.
    pub game: String,
    /// Rules variant text, if not the game's default.
    pub variant: Option<String>,
    /// Seats at the table.
    pub players: Option<usize>,
    /// Deals per pair.
    pub deals: u64,
    /// First deal's seed.
    pub seed: u64,
    /// The bot under test (default `builtin:strong` with the budget flags).
    pub strong: String,
    /// Opponents beside the other built-ins.
    pub against: Vec<String>,
    /// Leave the built-ins out (only `against`).
    pub no_builtins: bool,
    /// One JSON line per pair instead of a table.
    pub json: bool,
    /// Deals played side by side (each on its own thread).
    pub jobs: usize,
    /// The CPU quota of each seat run as a program (its cgroup).
    pub bot_cpus: BotCpus,
}

/// One pair's figures.
#[derive(Debug, Clone, Serialize)]
pub struct PairLine {
    bench: &'static str,
    game: &'static str,
    variant: String,
    players: usize,
    strong: String,
    against: String,
    deals: u64,
    games: u64,
    win_rate: f64,
    ci95: f64,
    mean_score: f64,
    mean_score_diff: f64,
    decisions: u64,
    /// The thinking budget per decision of the bot under test, if it has a
    /// time budget (not a fixed number of iterations).
    budget_ms: Option<f64>,
    /// Decisions over the budget by more than [`OVER_MS`].
    over_budget: u64,
    think_ms_mean: f64,
    think_ms_p99: f64,
    think_ms_max: f64,
    /// Mean CPU time per decision of the bot under test (ms), over its
    /// decisions whose records carry it (`None`: not measured, e.g. an
    /// in-process built-in).
    cpu_ms_mean: Option<f64>,
    /// Its decisions with a CPU time.
    cpu_decisions: u64,
    /// The opponent's mean wall time per decision (ms).
    against_think_ms_mean: f64,
    /// The opponent's mean CPU time per decision (ms), when measured.
    against_cpu_ms_mean: Option<f64>,
}

/// A decision is over budget when it takes this much longer than the budget.
pub const OVER_MS: f64 = croupier_bots::duplicate::OVER_MS;

/// The time budget per decision of a `builtin:strong…` spec (100 ms unless
/// its options say otherwise); `None` for other bots and for a fixed number
/// of iterations.
pub fn budget_ms(spec: &str) -> Option<f64> {
    let name = spec.strip_prefix("builtin:")?;
    let name = name.split('@').next().unwrap_or(name);
    let (base, options) = name.split_once('?').unwrap_or((name, ""));
    if base != "strong" {
        return None;
    }
    let b = croupier_bots::strong::Budget::parse(options).ok()?;
    match b.iterations {
        Some(_) => None,
        None => Some(b.think.as_secs_f64() * 1000.0),
    }
}

/// Runs `croupier bench strength`.
pub fn run(opts: &StrengthOptions, exe: &Path) -> Result<(), CliError> {
    if !(1..=1_000_000).contains(&opts.deals) {
        return Err(CliError::Usage(
            "--deals must be between 1 and 1000000".into(),
        ));
    }
    let kind: GameKind = opts
        .game
        .parse()
        .map_err(|e| CliError::Usage(format!("{e}")))?;
    match kind {
        GameKind::SkullWhist => pairs::<SkullWhist>(opts, exe, kind.seats()),
        GameKind::LoveLetter => pairs::<LoveLetter>(opts, exe, kind.seats()),
        GameKind::Goofspiel => pairs::<Goofspiel>(opts, exe, kind.seats()),
    }
}

fn pairs<G: Builtins>(
    opts: &StrengthOptions,
    exe: &Path,
    seats: std::ops::RangeInclusive<usize>,
) -> Result<(), CliError> {
    let players = opts.players.unwrap_or(2);
    if !seats.contains(&players) {
        return Err(CliError::Usage(format!(
            "{} is played by {} to {} players, not {players}",
            G::NAME,
            seats.start(),
            seats.end()
        )));
    }
    let variant = parse_variant::<G>(opts.variant.as_deref())
        .map_err(|e| CliError::Usage(format!("{}: {e}", G::NAME)))?;
    let variant_text = opts.variant.clone().unwrap_or_else(|| "default".into());
    let parse = |s: &str| {
        s.parse::<BotSpec>()
            .map_err(|e| CliError::Usage(format!("bot '{s}': {e}")))
    };
    let strong = parse(&opts.strong)?;
    let mut against: Vec<BotSpec> = vec![];
    if !opts.no_builtins {
        for name in G::NAMES.iter().filter(|n| **n != "strong") {
            against.push(parse(&format!("builtin:{name}"))?);
        }
    }
    for s in &opts.against {
        against.push(parse(s)?);
    }
    if !(1..=256).contains(&opts.jobs) {
        return Err(CliError::Usage("--jobs must be between 1 and 256".into()));
    }
    if against.is_empty() {
        return Err(CliError::Usage("no opponents: give --against SPEC".into()));
    }
    let mut live = LiveConfig::default();
    let process = |b: &BotSpec| {
        matches!(
            b,
            BotSpec::Program { .. }
                | BotSpec::Builtin {
                    dialect: Some(_),
                    ..
                }
        )
    };
    if process(&strong) || against.iter().any(process) {
        // Issue 51: their CPU time per decision, read from their cgroups.
        live.limits.cgroup = crate::sandbox::resolve_cgroups(opts.bot_cpus, &live.limits.sandbox);
    }
    if !opts.json {
        println!(
            "{} ({variant_text}, {players} players, {} deals per pair): {}",
            G::NAME,
            opts.deals,
            strong
        );
        println!("{}", header());
    }
    let budget = budget_ms(&opts.strong);
    for other in &against {
        // Deal d is played by job d mod jobs; each job has its own table.
        let play_share = |job: u64| -> Result<Tally, CliError> {
            let table = Table::<G>::new(&variant, &[strong.clone(), other.clone()], &live, exe)
                .map_err(series_error)?;
            let mut tally = Tally::default();
            for d in (job..opts.deals).step_by(opts.jobs) {
                let seed = opts.seed.wrapping_add(d);
                for s in 0..players {
                    let seating: Vec<&BotSpec> = (0..players)
                        .map(|i| if i == s { &strong } else { other })
                        .collect();
                    let record = table.play(&seating, seed).map_err(series_error)?;
                    tally.add(&record, s);
                }
            }
            Ok(tally)
        };
        let shares: Vec<Result<Tally, CliError>> = if opts.jobs == 1 {
            vec![play_share(0)]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..opts.jobs as u64)
                    .map(|j| {
                        let play_share = &play_share;
                        scope.spawn(move || play_share(j))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(CliError::Failed(anyhow::anyhow!("a bench job panicked")))
                        })
                    })
                    .collect()
            })
        };
        let mut tally = Tally::default();
        for share in shares {
            tally.merge(share?);
        }
        let line = tally.line(
            G::NAME,
            &variant_text,
            players,
            &strong,
            other,
            opts.deals,
            budget,
        );
        if opts.json {
            println!(
                "{}",
                serde_json::to_string(&line).map_err(|e| CliError::Failed(e.into()))?
            );
        } else {
            println!("{}", row(&line));
        }
    }
    Ok(())
}

/// The table's header: the bot under test's wall (`think ms`) and CPU
/// time per decision, then the opponent's (`opp ms`, `opp cpu`).
fn header() -> String {
    format!(
        "{:<28} {:>6} {:>15} {:>8} {:>11} {:>9} {:>9} {:>9} {:>9} {:>6} {:>9} {:>9}",
        "against",
        "games",
        "win rate",
        "score",
        "score diff",
        "think ms",
        "cpu ms",
        "p99 ms",
        "max ms",
        "over",
        "opp ms",
        "opp cpu"
    )
}

/// One pair's row of the table (`—`: CPU time not measured).
fn row(line: &PairLine) -> String {
    let cpu = |c: Option<f64>| c.map_or("—".to_string(), |c| format!("{c:.2}"));
    format!(
        "{:<28} {:>6} {:>7.1}% ± {:>4.1} {:>+8.2} {:>+11.2} {:>9.2} {:>9} {:>9.2} {:>9.2} {:>6} {:>9.2} {:>9}",
        line.against,
        line.games,
        line.win_rate * 100.0,
        line.ci95 * 100.0,
        line.mean_score,
        line.mean_score_diff,
        line.think_ms_mean,
        cpu(line.cpu_ms_mean),
        line.think_ms_p99,
        line.think_ms_max,
        line.budget_ms
            .map_or("-".to_string(), |_| line.over_budget.to_string()),
        line.against_think_ms_mean,
        cpu(line.against_cpu_ms_mean),
    )
}

/// Running totals of one pair: the shared [`croupier_bots::duplicate::Tally`]
/// fed from game records, and the CPU and opponents' times beside it.
#[derive(Debug, Default)]
struct Tally {
    duplicate: croupier_bots::duplicate::Tally,
    /// The bot under test's CPU time per decision, where measured (ms).
    cpu_ms: Vec<f64>,
    /// The opponents' wall time per decision (ms).
    against_ms: Vec<f64>,
    /// The opponents' CPU time per decision, where measured (ms).
    against_cpu_ms: Vec<f64>,
}

impl Tally {
    /// Counts one game in which the bot under test held seat `s`.
    fn add(&mut self, record: &Record, s: usize) {
        let me = Seat(s as u8);
        let actions = record
            .steps
            .iter()
            .filter(|st| matches!(st.kind, StepKind::Action(_)));
        let (mine, theirs): (Vec<_>, Vec<_>) = actions.partition(|st| st.seat == me);
        self.cpu_ms.extend(mine.iter().filter_map(|st| st.cpu_ms));
        self.against_ms.extend(theirs.iter().filter_map(|st| st.ms));
        self.against_cpu_ms
            .extend(theirs.iter().filter_map(|st| st.cpu_ms));
        self.duplicate
            .add(&record.outcome, s, mine.iter().filter_map(|st| st.ms));
    }

    /// Adds another job's totals.
    fn merge(&mut self, other: Tally) {
        self.duplicate.merge(other.duplicate);
        self.cpu_ms.extend(other.cpu_ms);
        self.against_ms.extend(other.against_ms);
        self.against_cpu_ms.extend(other.against_cpu_ms);
    }

    #[allow(clippy::too_many_arguments)]
    fn line(
        self,
        game: &'static str,
        variant: &str,
        players: usize,
        strong: &BotSpec,
        against: &BotSpec,
        deals: u64,
        budget_ms: Option<f64>,
    ) -> PairLine {
        let m = self.duplicate.summary(budget_ms, OVER_MS);
        PairLine {
            bench: "strength",
            game,
            variant: variant.to_string(),
            players,
            strong: strong.to_string(),
            against: against.to_string(),
            deals,
            games: m.games,
            win_rate: m.win_rate,
            ci95: m.ci95,
            mean_score: m.mean_score,
            mean_score_diff: m.mean_score_diff,
            decisions: m.decisions,
            budget_ms,
            over_budget: m.over_budget,
            think_ms_mean: m.think_ms_mean,
            think_ms_p99: m.think_ms_p99,
            think_ms_max: m.think_ms_max,
            cpu_ms_mean: mean(&self.cpu_ms),
            cpu_decisions: self.cpu_ms.len() as u64,
            against_think_ms_mean: mean(&self.against_ms).unwrap_or(0.0),
            against_cpu_ms_mean: mean(&self.against_cpu_ms),
        }
    }
}

/// The mean of `v` rounded to 0.01, or `None` if empty.
fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| (v.iter().sum::<f64>() / v.len() as f64 * 100.0).round() / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::{Outcome, RecordedStep};

    #[test]
    fn a_tally_counts_shared_firsts_as_fractions() {
        let step = |seat: u8, ms: f64| RecordedStep {
            seat: Seat(seat),
            kind: StepKind::Action("1".into()),
            ms: Some(ms),
            cpu_ms: (seat == 1).then_some(ms / 10.0),
            fault: None,
        };
        let mut record = Record {
            format: String::new(),
            game: "goofspiel".into(),
            rules_version: 1,
            variant: serde_json::Value::Null,
            seed: 1,
            seats: vec![],
            steps: vec![step(0, 5.0), step(1, 90.0), step(0, 7.0)],
            outcome: Outcome::from_scores(vec![0, 0]),
            started: None,
            finished: None,
        };
        let mut t = Tally::default();
        record.outcome = Outcome::from_scores(vec![10, 4]);
        t.add(&record, 0);
        record.outcome = Outcome::from_scores(vec![3, 3]);
        t.add(&record, 1);
        record.outcome = Outcome::from_scores(vec![0, 5]);
        t.add(&record, 0);
        let spec: BotSpec = "builtin:strong".parse().unwrap();
        let line = t.line("goofspiel", "gops", 2, &spec, &spec, 1, Some(60.0));
        assert_eq!(line.games, 3);
        assert_eq!(line.win_rate, 0.5);
        assert_eq!(line.mean_score_diff, round2((6.0 + 0.0 - 5.0) / 3.0));
        assert_eq!(line.mean_score, round2((10.0 + 3.0 + 0.0) / 3.0));
        // Seat 0's two steps in games 1 and 3, seat 1's one in game 2.
        assert_eq!(line.decisions, 5);
        assert_eq!(line.think_ms_max, 90.0);
        // Only the 90 ms decision is more than 20 ms over a 60 ms budget.
        assert_eq!(line.over_budget, 1);
        // Seat 1's steps carry CPU time (a tenth of their wall time), seat
        // 0's do not: the bot under test's 9 ms in game 2, the opponent's 9
        // ms in games 1 and 3 (wall 90 ms) and none in game 2.
        assert_eq!((line.cpu_ms_mean, line.cpu_decisions), (Some(9.0), 1));
        assert_eq!(
            line.against_think_ms_mean,
            round2((90.0 + 5.0 + 7.0 + 90.0) / 4.0)
        );
        assert_eq!(line.against_cpu_ms_mean, Some(9.0));
        // The columns line up: each figure under its heading.
        let (head, body) = (header(), row(&line));
        let under = |name: &str| -> String {
            let end = head[..head.find(name).unwrap() + name.len()]
                .chars()
                .count();
            let cells: Vec<char> = body.chars().collect();
            cells[end - 9..end]
                .iter()
                .collect::<String>()
                .trim()
                .to_string()
        };
        assert_eq!(under("think ms"), "22.80", "{head}\n{body}");
        assert_eq!(under("cpu ms"), "9.00", "{head}\n{body}");
        assert_eq!(under("opp ms"), "48.00", "{head}\n{body}");
        assert_eq!(under("opp cpu"), "9.00", "{head}\n{body}");
        let none = Tally::default().line("goofspiel", "gops", 2, &spec, &spec, 1, None);
        assert!(
            row(&none).contains('—') && row(&none).ends_with('—'),
            "{}",
            row(&none)
        );
    }

    #[test]
    fn the_budget_is_read_from_the_strong_spec() {
        assert_eq!(budget_ms("builtin:strong"), Some(100.0));
        assert_eq!(
            budget_ms("builtin:strong?think-ms=40&threads=2"),
            Some(40.0)
        );
        assert_eq!(budget_ms("builtin:strong?think-ms=40@gops"), Some(40.0));
        assert_eq!(budget_ms("builtin:strong?iterations=50"), None);
        assert_eq!(budget_ms("builtin:heuristic"), None);
        assert_eq!(budget_ms("exec:./bot"), None);
    }

    fn round2(x: f64) -> f64 {
        (x * 100.0).round() / 100.0
    }
}
