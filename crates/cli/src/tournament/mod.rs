//! `croupier tournament`: round-robin (or rotating tables) or Swiss, with
//! duplicate deals, a progress bar, and a final table: for a round-robin
//! with a head-to-head matrix, for a Swiss the standings with tie-breaks and
//! the crosstable.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use croupier_arena::spec::default_variant;
use croupier_arena::tournament::{
    run_tournament, total_games, Format, TournamentConfig, TournamentError, TournamentResult,
};
use croupier_bots::Builtins;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::GameKind;

use crate::error::CliError;
use crate::play::{
    current_exe, live_config, name_width, parse_specs, progress_bar, series_error, MatchArgs,
};

mod swiss;

/// Arguments of `croupier tournament`.
#[derive(Debug, Args)]
pub struct TournamentArgs {
    /// The game: skullwhist, loveletter or goofspiel.
    game: String,
    /// A bot (repeat for each): a program with arguments or builtin:NAME,
    /// with an optional @DIALECT.
    #[arg(long = "bot", required = true, value_name = "SPEC")]
    bots: Vec<String>,
    /// Deals each pair (or table) plays; each deal is played under every
    /// seating unless --no-duplicate.
    #[arg(long, default_value_t = 10)]
    games_per_pair: u64,
    /// Players per table (Love Letter: 2 to 4; default: all bots, at most 4).
    #[arg(long)]
    players: Option<usize>,
    /// Play each deal once, rotating seats from deal to deal instead.
    #[arg(long)]
    no_duplicate: bool,
    /// round-robin: every table of bots once; swiss: rounds paired by score
    /// (Love Letter: tables of up to --players, default 4).
    #[arg(long, value_enum, default_value_t = FormatArg::RoundRobin)]
    format: FormatArg,
    /// Rounds of a Swiss (default: enough to separate the bots, the base-2
    /// logarithm of their number, rounded up).
    #[arg(long, value_name = "R")]
    rounds: Option<u32>,
    #[command(flatten)]
    common: MatchArgs,
}

/// The tournament format on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    /// Every pair (or table) of bots.
    RoundRobin,
    /// Rounds paired by score.
    Swiss,
}

/// Runs `croupier tournament`.
pub fn run(args: TournamentArgs) -> Result<ExitCode, CliError> {
    let kind: GameKind = args
        .game
        .parse()
        .map_err(|e| CliError::Usage(format!("{e}")))?;
    match kind {
        GameKind::SkullWhist => tournament::<SkullWhist>(args, *kind.seats().end()),
        GameKind::LoveLetter => tournament::<LoveLetter>(args, *kind.seats().end()),
        GameKind::Goofspiel => tournament::<Goofspiel>(args, *kind.seats().end()),
    }
}

fn tournament<G: Builtins>(args: TournamentArgs, max_players: usize) -> Result<ExitCode, CliError> {
    let bots = parse_specs(&args.bots)?;
    let variant = match args.common.variant.as_deref() {
        Some(text) => parse_variant::<G>(Some(text))
            .map_err(|e| CliError::Usage(format!("{}: {e}", G::NAME)))?,
        None => default_variant::<G>(&bots),
    };
    if bots.len() < 2 {
        return Err(CliError::Usage(
            "a tournament needs at least two --bot".into(),
        ));
    }
    let format = match (args.format, args.rounds) {
        (FormatArg::RoundRobin, None) => Format::RoundRobin,
        (FormatArg::RoundRobin, Some(_)) => {
            return Err(CliError::Usage(
                "--rounds is for --format swiss (a round-robin plays every table once)".into(),
            ))
        }
        (FormatArg::Swiss, Some(0)) => {
            return Err(CliError::Usage("--rounds must be at least 1".into()))
        }
        (FormatArg::Swiss, Some(rounds)) => Format::Swiss { rounds },
        (FormatArg::Swiss, None) => Format::Swiss {
            rounds: bots.len().next_power_of_two().trailing_zeros().max(1),
        },
    };
    let players = match format {
        Format::RoundRobin => args.players.unwrap_or(bots.len().min(max_players)),
        Format::Swiss { .. } => args.players.unwrap_or(max_players),
    };
    if players > bots.len() && format == Format::RoundRobin {
        return Err(CliError::Usage(format!(
            "--players {players} needs at least {players} bots"
        )));
    }
    if players < 2 {
        return Err(CliError::Usage("--players must be at least 2".into()));
    }
    G::new(&variant, players, 0).map_err(|e| CliError::Usage(e.to_string()))?;
    if let Format::Swiss { .. } = format {
        // Swiss tables may be smaller than --players: check every size used.
        for k in croupier_arena::tournament::swiss_table_sizes(bots.len(), players) {
            G::new(&variant, k, 0)
                .map_err(|e| CliError::Usage(format!("a Swiss table of {k} players: {e}")))?;
        }
    }
    for (text, b) in args.bots.iter().zip(&bots) {
        b.check::<G>(&variant)
            .map_err(|e| CliError::Usage(format!("bot '{text}': {e}")))?;
    }
    if args.games_per_pair == 0 {
        return Err(CliError::Usage(
            "--games-per-pair must be at least 1".into(),
        ));
    }
    let seed = args.common.seed.unwrap_or_else(rand::random);
    let bots = crate::play::fit_threads(&args.common, bots)?;
    let live = live_config(&args.common, &bots)?;
    let config = TournamentConfig {
        variant,
        bots,
        format,
        players,
        deals: args.games_per_pair,
        duplicate: !args.no_duplicate,
        seed,
        records: args.common.records.clone(),
        live,
        exe: current_exe()?,
        on_fault: None,
    };
    let total = total_games(&config);
    crate::interrupt::guard_matches();
    let bar = progress_bar(total, true);
    let config = TournamentConfig {
        on_fault: crate::faults::live_sink(args.common.verbose, &bar),
        ..config
    };
    let result = run_tournament::<G>(&config, |_| bar.inc(1));
    crate::interrupt::hold_if_interrupted();
    let result = result.map_err(|e| match e {
        TournamentError::Series(e) => series_error(e),
        other => CliError::Failed(other.into()),
    })?;
    bar.finish_and_clear();
    if args.common.json {
        let mut v = serde_json::to_value(&result).map_err(|e| CliError::Failed(e.into()))?;
        v["seed"] = seed.into();
        println!("{v}");
    } else {
        match &result.swiss {
            Some(swiss) => swiss::print_swiss(&result, swiss, seed),
            None => print_table(&result, seed),
        }
        crate::faults::print_explanations(&result.bots);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(r: &TournamentResult, seed: u64) {
    println!(
        "{} games of {} ({} per table, {} deals, seed {seed})",
        r.games,
        r.game,
        r.players,
        if r.duplicate { "duplicate" } else { "single" }
    );
    let width = name_width(&r.bots);
    println!(
        "{:>3} {:width$}  {:>6} {:>6} {:>6} {:>6} {:>7} {:>10} {:>6} {:>11}",
        "#", "bot", "games", "wins", "draws", "losses", "win %", "mean score", "faults", "rating"
    );
    let mut order: Vec<usize> = (0..r.bots.len()).collect();
    order.sort_by(|a, b| {
        let (x, y) = (&r.bots[*a], &r.bots[*b]);
        let score = |s: &croupier_arena::series::BotSummary| {
            (s.wins as f64 + 0.5 * s.draws as f64) / s.games.max(1) as f64
        };
        score(y)
            .total_cmp(&score(x))
            .then(y.mean_score.total_cmp(&x.mean_score))
    });
    // Best first; `#` is the bot's number in the head-to-head matrix.
    for &i in &order {
        let b = &r.bots[i];
        println!(
            "{:>3} {:width$}  {:>6} {:>6} {:>6} {:>6} {:>6.1}% {:>10.2} {:>6} {:>11}",
            format!("#{}", i + 1),
            b.name,
            b.games,
            b.wins,
            b.draws,
            b.losses,
            100.0 * b.wins as f64 / b.games.max(1) as f64,
            b.mean_score,
            b.faults,
            swiss::rating(&r.ratings[i])
        );
    }
    println!();
    print_head_to_head(r);
}

/// The head-to-head matrix in games: row against column.
pub fn print_head_to_head(r: &TournamentResult) {
    println!("head to head (row against column: wins-draws-losses)");
    print!("{:>3} ", "");
    for j in 0..r.bots.len() {
        print!("{:>12}", format!("#{}", j + 1));
    }
    println!();
    for (i, row) in r.head_to_head.iter().enumerate() {
        print!("{:>3} ", format!("#{}", i + 1));
        for (j, c) in row.iter().enumerate() {
            if i == j {
                print!("{:>12}", "-");
            } else {
                print!("{:>12}", format!("{}-{}-{}", c.wins, c.draws, c.losses));
            }
        }
        println!("  {}", r.bots[i].name);
    }
}
