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
//! `strong`'s decisions.

use std::path::Path;

use croupier_arena::series::Table;
use croupier_arena::spec::BotSpec;
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
    let live = LiveConfig::default();
    if !opts.json {
        println!(
            "{} ({variant_text}, {players} players, {} deals per pair): {}",
            G::NAME,
            opts.deals,
            strong
        );
        println!(
            "{:<28} {:>6} {:>15} {:>8} {:>11} {:>9} {:>9} {:>9} {:>6}",
            "against",
            "games",
            "win rate",
            "score",
            "score diff",
            "think ms",
            "p99 ms",
            "max ms",
            "over"
        );
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
            println!(
                "{:<28} {:>6} {:>7.1}% ± {:>4.1} {:>+8.2} {:>+11.2} {:>9.2} {:>9.2} {:>9.2} {:>6}",
                line.against,
                line.games,
                line.win_rate * 100.0,
                line.ci95 * 100.0,
                line.mean_score,
                line.mean_score_diff,
                line.think_ms_mean,
                line.think_ms_p99,
                line.think_ms_max,
                line.budget_ms
                    .map_or("-".to_string(), |_| line.over_budget.to_string())
            );
        }
    }
    Ok(())
}

/// Running totals of one pair: the shared [`croupier_bots::duplicate::Tally`]
/// fed from game records.
#[derive(Debug, Default)]
struct Tally(croupier_bots::duplicate::Tally);

impl Tally {
    /// Counts one game in which the bot under test held seat `s`.
    fn add(&mut self, record: &Record, s: usize) {
        let me = Seat(s as u8);
        let think = record
            .steps
            .iter()
            .filter(|st| st.seat == me && matches!(st.kind, StepKind::Action(_)))
            .filter_map(|st| st.ms);
        self.0.add(&record.outcome, s, think);
    }

    /// Adds another job's totals.
    fn merge(&mut self, other: Tally) {
        self.0.merge(other.0);
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
        let m = self.0.summary(budget_ms, OVER_MS);
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
        }
    }
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
            cpu_ms: None,
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
