//! `croupier play`: a series of games between bots.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use std::time::Duration;

use croupier_arena::series::{run_series, SeriesConfig, SeriesError, SeriesSummary};
use croupier_arena::spec::{default_variant, BotSpec};
use croupier_arena::LiveConfig;
use croupier_bots::Builtins;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::GameKind;
use indicatif::{ProgressBar, ProgressStyle};

use crate::error::CliError;
use crate::sandbox::SandboxMode;
use croupier_arena::transport::process::cgroup::BotCpus;

/// Arguments of `croupier play`.
#[derive(Debug, Args)]
pub struct PlayArgs {
    /// The game: skullwhist, loveletter or goofspiel.
    game: String,
    /// The bots, one per seat: a program with its arguments (`./ai`,
    /// `"python3 bot.py"`), `builtin:NAME`, or an HTTP bot server URL
    /// (`http://user:pass@host:port/path`), each with an optional `@DIALECT`
    /// (croupier, gops, loveletter, loveletter-postman, jujitsu).
    #[arg(required = true, num_args = 1..)]
    bots: Vec<String>,
    /// Number of games; seats rotate between games.
    #[arg(long, default_value_t = 1)]
    games: u64,
    #[command(flatten)]
    common: MatchArgs,
}

/// Options shared by `play` and `tournament`.
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// Rules variant, e.g. `gops`, `jujitsu`, `jujitsu rounds=5,6,7,8`.
    #[arg(long)]
    pub variant: Option<String>,
    /// Seed of the whole run (random if not given; the summary shows it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write one JSON record per game into this directory.
    #[arg(long, value_name = "DIR")]
    pub records: Option<PathBuf>,
    /// Seconds a bot has for each decision.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub move_time: f64,
    /// Thinking time each bot has for a whole game, in seconds (default:
    /// unlimited). Once spent, the bot is no longer asked and its moves are
    /// ruled as faults (random cards in Goofspiel).
    #[arg(long, value_name = "SECONDS")]
    pub time_budget: Option<f64>,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// How bot programs are confined: `strict` (bubblewrap: no network, own
    /// PID namespace, read-only files, resource limits) or `off`; see
    /// docs/sandbox.md.
    #[arg(long, value_enum, default_value_t = SandboxMode::Strict)]
    pub sandbox: SandboxMode,
    /// CPU cores each bot may use: a bot program's cgroup quota (its whole
    /// process tree), and the most search threads of a built-in `strong`
    /// bot (default threads: this, rounded); see docs/sandbox.md.
    #[arg(
        long,
        value_name = "CORES",
        default_value = "1",
        env = "CROUPIER_BOT_CPUS"
    )]
    pub bot_cpus: BotCpus,
    /// Print each fault on stderr as it happens, with the last lines of the
    /// bot's stderr.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Runs `croupier play`.
pub fn run(args: PlayArgs) -> Result<ExitCode, CliError> {
    let kind: GameKind = args
        .game
        .parse()
        .map_err(|e| CliError::Usage(format!("{e}")))?;
    match kind {
        GameKind::SkullWhist => play_builtin::<SkullWhist>(args),
        GameKind::LoveLetter => play_builtin::<LoveLetter>(args),
        GameKind::Goofspiel => play_builtin::<Goofspiel>(args),
    }
}

/// A progress bar on stderr for `total` games (drawn only on a terminal).
pub fn progress_bar(total: u64, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} games, {per_sec}, eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Bad bots are the user's error (exit 2); anything else failed (exit 1).
pub fn series_error(e: SeriesError) -> CliError {
    match e {
        SeriesError::Spec(u) => CliError::Usage(u.to_string()),
        other => CliError::Failed(other.into()),
    }
}

/// Width of the bot-name column of a summary table.
pub fn name_width(bots: &[croupier_arena::series::BotSummary]) -> usize {
    bots.iter().map(|b| b.name.len()).max().unwrap_or(0).max(4)
}

/// Parses every bot specification.
pub fn parse_specs(specs: &[String]) -> Result<Vec<BotSpec>, CliError> {
    specs
        .iter()
        .map(|s| {
            s.parse::<BotSpec>()
                .map_err(|e| CliError::Usage(format!("bot '{s}': {e}")))
        })
        .collect()
}

/// The live-match settings from the shared options; the sandbox is checked
/// when some bot runs as a program.
pub fn live_config(args: &MatchArgs, bots: &[BotSpec]) -> Result<LiveConfig, CliError> {
    if !(args.move_time > 0.0 && args.move_time <= 3600.0) {
        return Err(CliError::Usage(
            "--move-time must be between 0 and 3600 seconds".into(),
        ));
    }
    let budget = match args.time_budget {
        None => None,
        Some(b) if (0.0..=86_400.0).contains(&b) => Some(Duration::from_secs_f64(b)),
        Some(_) => {
            return Err(CliError::Usage(
                "--time-budget must be between 0 and 86400 seconds".into(),
            ))
        }
    };
    let mut live = LiveConfig {
        move_time: Duration::from_secs_f64(args.move_time),
        budget,
        ..LiveConfig::default()
    };
    let programs = bots.iter().any(|b| {
        matches!(
            b,
            BotSpec::Program { .. }
                | BotSpec::Builtin {
                    dialect: Some(_),
                    ..
                }
        )
    });
    if programs {
        live.limits.sandbox = crate::sandbox::resolve(args.sandbox)?;
        live.limits.cgroup = crate::sandbox::resolve_cgroups(args.bot_cpus, &live.limits.sandbox);
        // Issue 49: each program must be able to run in the sandbox, or
        // every one of its decisions would be a fault.
        if let croupier_arena::transport::process::Sandbox::Strict(limits) = &live.limits.sandbox {
            for b in bots {
                if let BotSpec::Program { argv, .. } = b {
                    croupier_arena::transport::process::check_program(argv, limits)
                        .map_err(|e| CliError::Usage(format!("bot '{}': {e}", argv.join(" "))))?;
                }
            }
        }
    }
    Ok(live)
}

/// The bots with their search threads within `--bot-cpus` (issue 51).
pub fn fit_threads(args: &MatchArgs, bots: Vec<BotSpec>) -> Result<Vec<BotSpec>, CliError> {
    bots.iter()
        .map(|b| {
            croupier_arena::fair_threads::fit_threads(b, args.bot_cpus)
                .map_err(|e| CliError::Usage(e.to_string()))
        })
        .collect()
}

/// This program, to run built-in strategies as bot processes.
pub fn current_exe() -> Result<PathBuf, CliError> {
    std::env::current_exe()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot find the croupier binary: {e}")))
}

/// Plays the series for a game with built-in bots.
pub fn play_builtin<G: Builtins>(args: PlayArgs) -> Result<ExitCode, CliError> {
    let bots = parse_specs(&args.bots)?;
    let variant = match args.common.variant.as_deref() {
        Some(text) => parse_variant::<G>(Some(text))
            .map_err(|e| CliError::Usage(format!("{}: {e}", G::NAME)))?,
        None => default_variant::<G>(&bots),
    };
    // Check the table size and bots before playing anything.
    G::new(&variant, bots.len(), 0).map_err(|e| CliError::Usage(e.to_string()))?;
    for (text, b) in args.bots.iter().zip(&bots) {
        b.check::<G>(&variant)
            .map_err(|e| CliError::Usage(format!("bot '{text}': {e}")))?;
    }
    if args.games == 0 {
        return Err(CliError::Usage("--games must be at least 1".into()));
    }
    let seed = args.common.seed.unwrap_or_else(rand::random);
    let bots = fit_threads(&args.common, bots)?;
    let live = live_config(&args.common, &bots)?;
    let config = SeriesConfig {
        variant,
        bots,
        games: args.games,
        seed,
        records: args.common.records.clone(),
        live,
        exe: current_exe()?,
        on_fault: None,
    };
    crate::interrupt::guard_matches();
    let bar = progress_bar(args.games, args.games >= 50);
    let config = SeriesConfig {
        on_fault: crate::faults::live_sink(args.common.verbose, &bar),
        ..config
    };
    let summary = run_series::<G>(&config, |i, record| {
        // `RUST_LOG=croupier=debug` follows the series game by game.
        tracing::debug!(
            game = i,
            seed = record.seed,
            scores = ?record.outcome.scores,
            faults = record.steps.iter().filter(|s| s.fault.is_some()).count(),
            "game finished"
        );
        bar.inc(1);
    });
    crate::interrupt::hold_if_interrupted();
    let summary = summary.map_err(series_error)?;
    bar.finish_and_clear();
    if args.common.json {
        let json = serde_json::to_string(&summary).map_err(|e| CliError::Failed(e.into()))?;
        println!("{json}");
    } else {
        print_table(&summary, seed, args.common.records.as_deref());
        crate::faults::print_explanations(&summary.bots);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(s: &SeriesSummary, seed: u64, records: Option<&std::path::Path>) {
    let plural = if s.games == 1 { "" } else { "s" };
    println!("{} game{plural} of {} (seed {seed})", s.games, s.game);
    let width = name_width(&s.bots);
    println!(
        "{:width$}  {:>6} {:>6} {:>6} {:>8} {:>10} {:>6}",
        "bot", "wins", "draws", "losses", "win %", "mean score", "faults"
    );
    for b in &s.bots {
        let pct = 100.0 * b.wins as f64 / s.games.max(1) as f64;
        println!(
            "{:width$}  {:>6} {:>6} {:>6} {:>7.1}% {:>10.2} {:>6}",
            b.name, b.wins, b.draws, b.losses, pct, b.mean_score, b.faults
        );
    }
    if let Some(dir) = records {
        println!("records written to {}", dir.display());
    }
}
