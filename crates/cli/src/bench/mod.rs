//! `croupier bench`: random playouts per second for each rules engine.

mod bare;
mod cluster;
mod cores;
mod flood;
mod http;
mod proc;
mod rest_bots;
mod sandbox;
mod server;
mod server_stats;
mod spectators;
mod strength;
mod tournament;
mod versus;
mod waits;
mod web;
mod workers; // issue 13 (wc)

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
use croupier_rules::Game;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::CliError;

/// Arguments of `croupier bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// What to measure: `rules` (random playouts per second per game),
    /// `subprocess` (the cost of talking to bot programs), `server` (REST
    /// bots playing full games against `croupier serve`), `http` (the cost
    /// of calling HTTP bot servers, and of Nagle's algorithm) or `web`
    /// (website pages over a seeded database), `flood` (slow connections
    /// and password guesses against `croupier serve`), `spectators` (SSE
    /// clients watching live games), `workers` (ladder matches of push bots
    /// with 1 and 2 `croupier worker`s on PostgreSQL, and the fault table),
    /// or `strength GAME`
    /// (duplicate matches of the `strong` built-in against the others).
    #[arg(default_value = "rules")]
    what: String,
    /// The game (`bench strength`).
    game: Option<String>,
    /// Deals per pair (`bench strength`; each is played with `strong` in
    /// every seat).
    #[arg(long, default_value_t = 100)]
    deals: u64,
    /// First deal's seed (`bench strength`).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Players per table (`bench strength`; Love Letter 2 to 4).
    #[arg(long)]
    players: Option<usize>,
    /// Rules variant (`bench strength`), e.g. `gops`, `jujitsu rounds=13`.
    #[arg(long)]
    variant: Option<String>,
    /// The bot under test (`bench strength`).
    #[arg(long, default_value = "builtin:strong", value_name = "SPEC")]
    strong: String,
    /// Another opponent beside the built-ins (`bench strength`; repeat).
    #[arg(long, value_name = "SPEC")]
    against: Vec<String>,
    /// Play only the --against opponents, not the built-ins.
    #[arg(long)]
    no_builtins: bool,
    /// Thinking time per decision of `strong` in ms (`bench strength`).
    #[arg(long, value_name = "MS")]
    think_ms: Option<u64>,
    /// Fixed samples per decision of `strong` (`bench strength`).
    #[arg(long, value_name = "N")]
    iterations: Option<u32>,
    /// Threads for `strong`'s search (`bench strength`).
    #[arg(long, value_name = "N")]
    threads: Option<u32>,
    /// `bench subprocess`: `strict` measures bot programs in the sandbox
    /// beside the same measures without it (the baseline); `off` only the
    /// baseline.
    #[arg(long, value_enum)]
    sandbox: Option<crate::sandbox::SandboxMode>,
    /// Deals played side by side, each on its own thread (`bench strength`).
    #[arg(long, default_value_t = 1, value_name = "N")]
    jobs: usize,
    /// Seconds to measure each game for.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Concurrent REST bots (`bench server`).
    #[arg(long, default_value_t = 200)]
    bots: usize,
    /// Push HTTP bots on the ladder (`bench workers`, issue 13).
    #[arg(long, default_value_t = 32)]
    ladder_bots: usize,
    /// JSON instead of the table: one object (`bench server`), one line per
    /// pair (`bench strength`).
    #[arg(long)]
    json: bool,
    /// The `croupier` binary to run as the server under test (`bench
    /// server`; default: this binary), e.g. an older build to compare.
    #[arg(long, value_name = "FILE")]
    server_bin: Option<std::path::PathBuf>,
    /// Finished games to seed (`bench web`).
    #[arg(long, default_value_t = 100_000)]
    games: u64,
    /// SQLite file to seed and keep (`bench web`; reused if it holds games).
    #[arg(long)]
    db: Option<std::path::PathBuf>,
    /// Database URL the server uses (`bench server`; default: a new SQLite
    /// file in a temporary folder). A `postgres://` database should be
    /// empty or used only by earlier runs of this benchmark.
    #[arg(long, value_name = "URL")]
    database: Option<String>,
    /// Instance counts on PostgreSQL behind haproxy, comma-separated
    /// (`bench server`: e.g. `1,2,3`; measured after one SQLite instance in
    /// the same run; `--database` is then the PostgreSQL URL, default a
    /// throw-away cluster). See docs/deploy.md.
    #[arg(long, value_name = "N,N,…", value_delimiter = ',')]
    instances: Option<Vec<usize>>,
    /// `bench server`: run the server under test, and then the bare
    /// endpoint, on one half of the CPUs and the load generator on the
    /// other half, so that they do not take each other's time.
    #[arg(long)]
    split_cores: bool,
    /// `bench server`: a second server build to compare with the first
    /// (`--server-bin`, default this binary), run in alternating order (A B,
    /// then B A) for `--rounds` rounds; prints every run and the medians.
    #[arg(long, value_name = "FILE")]
    versus: Option<std::path::PathBuf>,
    /// `bench server`: cut the measured time into N slices, each followed
    /// by a slice of the bare endpoint while the bots pause between games,
    /// so that the server and the bare endpoint see the machine alike.
    /// (Default 5.)
    #[arg(long, value_name = "N")]
    alternations: Option<usize>,
    /// Rounds of `--versus` (each runs both builds).
    /// (Default 2.)
    #[arg(long, value_name = "N")]
    rounds: Option<usize>,
    /// Slow connections to open (`bench flood`; fewer if the open-file
    /// limit is lower).
    #[arg(long, default_value_t = 21_000)]
    connections: usize,
    /// Loopback addresses (127.0.0.2 on) they come from (`bench flood`).
    #[arg(long, default_value_t = 3)]
    addresses: u8,
    /// Tournaments to run on a server (`bench tournament`): FORMAT:BOTS[:ROUNDS],
    /// e.g. `swiss:16:7`, `round-robin:12` (repeat; default both of those).
    #[arg(long = "tournament", value_name = "SPEC")]
    tournaments: Vec<String>,
    /// Server-Sent-Event clients watching (`bench spectators`).
    #[arg(long, default_value_t = 1000)]
    spectators: usize,
    /// Moves the person makes in each run (`bench spectators`; 2 to 24).
    #[arg(long, default_value_t = 24)]
    moves: usize,
    /// Where `bench bare-endpoint` listens (started by `bench server`).
    #[arg(long, hide = true, value_name = "ADDR")]
    listen: Option<std::net::SocketAddr>,
    /// Milliseconds between the person's moves (`bench spectators`).
    #[arg(long, default_value_t = 100)]
    move_ms: u64,
}

#[derive(Serialize)]
struct RulesLine {
    bench: &'static str,
    game: &'static str,
    games_per_sec: f64,
    actions_per_game: f64,
    ns_per_action: f64,
}

/// Plays random games of `G` from consecutive seeds for about `time`;
/// returns (games, actions, elapsed).
pub fn random_playouts<G: Game>(
    variant: &G::Variant,
    seats: usize,
    time: Duration,
) -> (u64, u64, Duration) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xBE7C4);
    let mut legal = Vec::with_capacity(64);
    let (mut games, mut actions) = (0u64, 0u64);
    let start = Instant::now();
    loop {
        // Check the clock every 256 games so the timer costs nothing.
        for _ in 0..256 {
            let Ok(mut g) = G::new(variant, seats, games) else {
                return (0, 0, start.elapsed());
            };
            while let Some(seat) = g.to_act().first() {
                legal.clear();
                g.legal_actions(seat, &mut legal);
                let a = legal[rng.random_range(0..legal.len())];
                if g.apply(seat, a).is_err() {
                    break;
                }
                actions += 1;
            }
            games += 1;
        }
        if start.elapsed() >= time {
            return (games, actions, start.elapsed());
        }
    }
}

fn line<G: Game>(name: &'static str, variant: &G::Variant, seats: usize, secs: f64) -> RulesLine {
    let (games, actions, elapsed) =
        random_playouts::<G>(variant, seats, Duration::from_secs_f64(secs));
    let s = elapsed.as_secs_f64();
    RulesLine {
        bench: "rules",
        game: name,
        games_per_sec: (games as f64 / s).round(),
        actions_per_game: actions as f64 / games.max(1) as f64,
        ns_per_action: s * 1e9 / actions.max(1) as f64,
    }
}

/// Runs `croupier bench`.
pub fn run(args: BenchArgs) -> Result<ExitCode, CliError> {
    if !(args.seconds > 0.0 && args.seconds <= 600.0) {
        return Err(CliError::Usage(
            "--seconds must be between 0 and 600".into(),
        ));
    }
    if args.listen.is_some() && args.what != "bare-endpoint" {
        return Err(CliError::Usage(
            "--listen is for bench bare-endpoint (which bench server starts)".into(),
        ));
    }
    match args.what.as_str() {
        "rules" => {}
        // Started by `bench server` (see `bench::bare`), not by hand.
        "bare-endpoint" => {
            let listen = args.listen.ok_or_else(|| {
                CliError::Usage("bench bare-endpoint needs --listen ADDR".into())
            })?;
            crate::bench::bare::serve_child(listen).map_err(CliError::Failed)?;
            return Ok(ExitCode::SUCCESS);
        }
        "server" => {
            if !(2..=5000).contains(&args.bots) {
                return Err(CliError::Usage("--bots must be between 2 and 5000".into()));
            }
            if args.instances.is_some() && args.alternations.is_some() {
                return Err(CliError::Usage(
                    "--alternations is for one server against the bare endpoint: leave out --instances"
                        .into(),
                ));
            }
            let alternations = args.alternations.unwrap_or(5);
            if !(1..=50).contains(&alternations) {
                return Err(CliError::Usage(
                    "--alternations must be between 1 and 50".into(),
                ));
            }
            let server = match args.server_bin {
                Some(bin) if bin.is_file() => bin,
                Some(bin) => {
                    return Err(CliError::Usage(format!(
                        "--server-bin {}: no such file",
                        bin.display()
                    )))
                }
                None => crate::play::current_exe()?,
            };
            if let Some(other) = args.versus {
                if !other.is_file() {
                    return Err(CliError::Usage(format!(
                        "--versus {}: no such file",
                        other.display()
                    )));
                }
                if args.instances.is_some() {
                    return Err(CliError::Usage(
                        "--versus compares single servers: leave out --instances".into(),
                    ));
                }
                let rounds = args.rounds.unwrap_or(2);
                if !(1..=50).contains(&rounds) {
                    return Err(CliError::Usage("--rounds must be between 1 and 50".into()));
                }
                crate::bench::versus::run(crate::bench::versus::Options {
                    bots: args.bots,
                    seconds: args.seconds,
                    json: args.json,
                    builds: [server, other],
                    rounds,
                    split_cores: args.split_cores,
                    database: args.database,
                    exe: crate::play::current_exe()?,
                    alternations,
                })?;
                return Ok(ExitCode::SUCCESS);
            }
            if args.rounds.is_some() {
                return Err(CliError::Usage(
                    "--rounds counts the rounds of --versus: give it a second build".into(),
                ));
            }
            if let Some(instances) = args.instances {
                if instances.is_empty() || instances.iter().any(|n| !(1..=16).contains(n)) {
                    return Err(CliError::Usage(
                        "--instances takes counts from 1 to 16, e.g. 1,2,3".into(),
                    ));
                }
                if args
                    .database
                    .as_deref()
                    .is_some_and(|d| croupier_store::Backend::of(d) != Some(croupier_store::Backend::Postgres))
                {
                    return Err(CliError::Usage(
                        "--instances needs a postgres:// --database (or none: a throw-away cluster)"
                            .into(),
                    ));
                }
                crate::bench::cluster::run(crate::bench::cluster::Options {
                    bots: args.bots,
                    seconds: args.seconds,
                    json: args.json,
                    server,
                    database: args.database,
                    instances,
                })?;
                return Ok(ExitCode::SUCCESS);
            }
            crate::bench::server::run(crate::bench::server::Options {
                bots: args.bots,
                seconds: args.seconds,
                json: args.json,
                server,
                database: args.database,
                split_cores: args.split_cores,
                exe: crate::play::current_exe()?,
                alternations,
            })?;
            return Ok(ExitCode::SUCCESS);
        }
        "subprocess" => {
            let sandbox = match args.sandbox {
                Some(crate::sandbox::SandboxMode::Strict) => {
                    Some(crate::sandbox::resolve(crate::sandbox::SandboxMode::Strict)?)
                }
                _ => None,
            };
            subprocess::run(args.seconds, &crate::play::current_exe()?)?;
            if args.sandbox.is_some() {
                crate::bench::sandbox::run(args.seconds, &crate::play::current_exe()?, sandbox)?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        "http" => {
            crate::bench::http::run(args.seconds)?;
            return Ok(ExitCode::SUCCESS);
        }
        "web" => {
            crate::bench::web::run(args.games, args.db)?;
            return Ok(ExitCode::SUCCESS);
        }
        "strength" => {
            let game = args.game.clone().ok_or_else(|| {
                CliError::Usage("bench strength needs a game: skullwhist, loveletter or goofspiel".into())
            })?;
            let opts = crate::bench::strength::StrengthOptions {
                game,
                variant: args.variant.clone(),
                players: args.players,
                deals: args.deals,
                seed: args.seed,
                strong: crate::bot::with_budget(
                    &args.strong,
                    args.think_ms,
                    args.iterations,
                    args.threads,
                ),
                against: args.against.clone(),
                no_builtins: args.no_builtins,
                json: args.json,
                jobs: args.jobs,
            };
            crate::bench::strength::run(&opts, &crate::play::current_exe()?)?;
            return Ok(ExitCode::SUCCESS);
        }
        "tournament" => {
            crate::bench::tournament::run(&args.tournaments, args.json, &crate::play::current_exe()?)?;
            return Ok(ExitCode::SUCCESS);
        }
        "flood" => {
            if !(1..=200).contains(&args.addresses) {
                return Err(CliError::Usage(
                    "--addresses must be between 1 and 200".into(),
                ));
            }
            crate::bench::flood::run(
                args.connections,
                args.addresses,
                &crate::play::current_exe()?,
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        "spectators" => {
            crate::bench::spectators::run(
                args.spectators,
                args.moves,
                args.move_ms,
                &crate::play::current_exe()?,
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        "workers" => {
            // Issue 13 (wc): ladder matches/s with 1 and 2 workers, faults.
            crate::bench::workers::run(
                args.seconds,
                args.ladder_bots,
                &crate::play::current_exe()?,
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        other => {
            return Err(CliError::Usage(format!(
                "unknown benchmark '{other}' (known: rules, subprocess, server, http, web, flood, strength, tournament, spectators, workers)"
            )))
        }
    }
    let lines = [
        line::<Goofspiel>("goofspiel-13", &GoofspielVariant::gops(), 2, args.seconds),
        line::<SkullWhist>("skullwhist", &SkullWhistVariant {}, 2, args.seconds),
        line::<LoveLetter>(
            "loveletter-4p",
            &LoveLetterVariant::default(),
            4,
            args.seconds,
        ),
    ];
    for l in lines {
        println!(
            "{}",
            serde_json::to_string(&l).map_err(|e| CliError::Failed(e.into()))?
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `croupier bench subprocess`: the cost of talking to bot programs.
mod subprocess {
    use std::io::{BufRead, BufReader, Write};
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use croupier_arena::series::{run_series, SeriesConfig};
    use croupier_arena::transport::process::{BotProcess, ProcessLimits};
    use croupier_arena::LiveConfig;
    use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
    use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
    use serde_json::json;

    /// Round trips of one short line through `cat` over plain blocking pipes.
    fn bare_pipe_rtt(time: Duration) -> anyhow::Result<f64> {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stdin"))?;
        let mut stdout = BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| anyhow::anyhow!("no stdout"))?,
        );
        let (mut n, mut line) = (0u64, String::new());
        let start = Instant::now();
        while start.elapsed() < time {
            for _ in 0..100 {
                stdin.write_all(b"Competition card:  7\n")?;
                stdin.flush()?;
                line.clear();
                stdout.read_line(&mut line)?;
                n += 1;
            }
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / n as f64;
        drop(stdin);
        child.wait()?;
        Ok(us)
    }

    /// The same round trips through Croupier's transport (actor, deadlines).
    fn transport_rtt(time: Duration) -> anyhow::Result<f64> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async {
            let mut p = BotProcess::spawn(&["cat".to_string()], &ProcessLimits::default())?;
            let line = vec!["Competition card:  7".to_string()];
            let (mut n, start) = (0u64, tokio::time::Instant::now());
            while start.elapsed() < time {
                for _ in 0..100 {
                    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
                    p.send(&line, deadline).await?;
                    p.recv(deadline).await?;
                    n += 1;
                }
            }
            let us = start.elapsed().as_secs_f64() * 1e6 / n as f64;
            p.terminate().await;
            Ok::<f64, anyhow::Error>(us)
        })
    }

    /// Mean time per decision of bot programs in whole matches (from the
    /// records' thinking times) and matches per second.
    fn matches<G: croupier_bots::Builtins>(
        variant: G::Variant,
        bots: &[&str],
        games: u64,
        exe: &Path,
    ) -> anyhow::Result<(f64, f64)> {
        let config = SeriesConfig::<G::Variant> {
            variant,
            bots: bots.iter().map(|b| b.parse()).collect::<Result<_, _>>()?,
            games,
            seed: 1,
            records: None,
            live: LiveConfig::default(),
            exe: exe.to_path_buf(),
        };
        let (mut ms, mut steps) = (0.0, 0u64);
        let start = Instant::now();
        run_series::<G>(&config, |_, r| {
            for s in &r.steps {
                ms += s.ms.unwrap_or(0.0);
                steps += 1;
            }
        })?;
        let secs = start.elapsed().as_secs_f64();
        Ok((ms * 1000.0 / steps.max(1) as f64, games as f64 / secs))
    }

    pub fn run(seconds: f64, exe: &Path) -> anyhow::Result<()> {
        let time = Duration::from_secs_f64(seconds);
        let pipe = bare_pipe_rtt(time)?;
        println!(
            "{}",
            json!({"bench": "subprocess", "what": "bare_pipe_round_trip_us", "value": round(pipe)})
        );
        let transport = transport_rtt(time)?;
        println!(
            "{}",
            json!({"bench": "subprocess", "what": "transport_round_trip_us", "value": round(transport), "overhead_us": round(transport - pipe)})
        );
        let games = ((seconds * 40.0) as u64).max(5);
        let (decision, gps) = matches::<Goofspiel>(
            GoofspielVariant::gops(),
            &["builtin:random@gops", "builtin:random@gops"],
            games,
            exe,
        )?;
        println!(
            "{}",
            json!({"bench": "subprocess", "what": "gops_decision_us", "value": round(decision), "overhead_us": round(decision - pipe), "games_per_sec": round(gps)})
        );
        let (decision, mps) = matches::<LoveLetter>(
            LoveLetterVariant::default(),
            &["builtin:random@loveletter"; 4],
            (games / 4).max(3),
            exe,
        )?;
        println!(
            "{}",
            json!({"bench": "subprocess", "what": "loveletter_4p_matches_per_sec", "value": round(mps), "decision_us": round(decision), "bot": "croupier bot random --dialect loveletter (one process per seat per round)"})
        );
        Ok(())
    }

    fn round(x: f64) -> f64 {
        (x * 10.0).round() / 10.0
    }
}
