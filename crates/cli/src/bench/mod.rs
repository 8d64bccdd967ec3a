//! `croupier bench`: its arguments, and which benchmark they run. Each
//! benchmark is a file of this folder (`rules.rs` the default); the files
//! that several share (`proc.rs`, `rest_bots.rs`, `server_stats.rs`,
//! `waits.rs`, `cores.rs`) are helpers that import no benchmark.

mod bare;
mod cgroup;
mod cgroup_cost;
mod cluster;
mod cluster_report;
mod cores;
mod flood;
mod http;
mod proc;
mod rest_bots;
mod rules;
mod sandbox;
mod server;
mod server_stats;
mod spectators;
mod strength;
mod subprocess;
mod tournament;
mod versus;
mod waits;
mod web;
mod workers; // issue 13 (wc)

use std::process::ExitCode;

use clap::Args;

use crate::error::CliError;

/// Arguments of `croupier bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// What to measure: `rules` (random playouts per second per game),
    /// `subprocess` (the cost of talking to bot programs), `server` (REST
    /// bots playing full games against `croupier serve`), `http` (the cost
    /// of calling HTTP bot servers, and of Nagle's algorithm) or `web`
    /// (website pages over a seeded database), `flood` (slow connections,
    /// a bot over its request rate and password guesses against `croupier
    /// serve`), `spectators` (SSE
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
    /// `bench subprocess`: milliseconds between one program's stop and the
    /// next one's start when starts are timed (0: back to back, which
    /// leaves a spare sandbox no time to be set up between starts; at most
    /// 10000).
    #[arg(long, default_value_t = 20, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(0..=10_000))]
    start_gap_ms: u64,
    /// `bench strength`: CPU cores each seat run as a program may use (its
    /// cgroup's quota, issue 51; its CPU time per decision is read from
    /// the cgroup).
    #[arg(
        long,
        value_name = "CORES",
        default_value = "1",
        env = "CROUPIER_BOT_CPUS"
    )]
    bot_cpus: croupier_arena::transport::process::cgroup::BotCpus,
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
    /// server`, `bench flood`; default: this binary), e.g. an older build
    /// to compare.
    #[arg(long, value_name = "FILE")]
    server_bin: Option<std::path::PathBuf>,
    /// Finished games to seed (`bench web`).
    #[arg(long, default_value_t = 100_000)]
    games: u64,
    /// SQLite file to seed and keep (`bench web`; reused if it holds games).
    #[arg(long)]
    db: Option<std::path::PathBuf>,
    /// `bench web`: seed ladder games only. By default a tenth of the
    /// seeded games are tournaments' (a cup of about 1,000 games in every
    /// 10,000; in runs of a third of a smaller series), so that the
    /// tournament lists are timed too.
    #[arg(long)]
    no_tournaments: bool,
    /// `bench web`: read the pages from PostgreSQL: the `--database`
    /// given (reused if it holds games), else a throw-away cluster.
    #[arg(long)]
    postgres: bool,
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
    /// `bench server --instances`: CPU cores each server instance may use,
    /// each in a cgroup of its own (e.g. 0.4), so that N instances are
    /// compared with one under equal quotas; PostgreSQL, haproxy and the
    /// bots run outside any quota. Needs root and the cgroup cpu
    /// controller (docs/benchmarks.md).
    #[arg(long, value_name = "CORES")]
    cpu_quota: Option<f64>,
    /// `bench server --instances`: route the PostgreSQL setups' requests on
    /// their session, as docs/deploy/haproxy.cfg does, instead of plain
    /// round robin.
    #[arg(long, requires = "instances")]
    affinity: bool,
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
    /// Rounds of `--versus` (each runs both builds; default 2), or of
    /// `bench server --instances` or `bench workers` (each runs every
    /// instance or worker count, in alternating order, and the medians are
    /// printed; default 1).
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
    if args.cpu_quota.is_some() && !matches!(args.what.as_str(), "server" | "workers") {
        return Err(CliError::Usage(
            "--cpu-quota is for bench server --instances and bench workers".into(),
        ));
    }
    if args.rounds.is_some() && !matches!(args.what.as_str(), "server" | "workers") {
        return Err(CliError::Usage(
            "--rounds is for bench server (--versus, --instances) and bench workers".into(),
        ));
    }
    if args.postgres && args.what != "web" {
        return Err(CliError::Usage(
            "--postgres is for bench web (bench server and bench workers take --database)".into(),
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
            let server = server_bin(args.server_bin)?;
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
            if args.rounds.is_some() && args.instances.is_none() {
                return Err(CliError::Usage(
                    "--rounds counts the rounds of --versus or --instances: give it a second build or instance counts".into(),
                ));
            }
            if args.cpu_quota.is_some() && args.instances.is_none() {
                return Err(CliError::Usage(
                    "--cpu-quota caps the instances of --instances (e.g. --instances 1,2,3 --cpu-quota 0.4)"
                        .into(),
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
                let rounds = args.rounds.unwrap_or(1);
                if !(1..=50).contains(&rounds) {
                    return Err(CliError::Usage("--rounds must be between 1 and 50".into()));
                }
                if let Some(q) = args.cpu_quota {
                    // Says at once, before anything runs, whether cgroups work.
                    crate::bench::cgroup::CpuGroup::capped(Some(q), "probe")
                    .map_err(|e| CliError::Usage(format!("{e:#}")))?;
                }
                crate::bench::cluster::run(crate::bench::cluster::Options {
                    bots: args.bots,
                    seconds: args.seconds,
                    json: args.json,
                    server,
                    database: args.database,
                    instances,
                    cpu_quota: args.cpu_quota,
                    affinity: args.affinity,
                    rounds,
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
                let gap = std::time::Duration::from_millis(args.start_gap_ms);
                let exe = crate::play::current_exe()?;
                crate::bench::sandbox::run(args.seconds, gap, &exe, sandbox)?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        "http" => {
            crate::bench::http::run(args.seconds)?;
            return Ok(ExitCode::SUCCESS);
        }
        "web" => {
            let db = if args.postgres {
                if args.db.is_some() {
                    return Err(CliError::Usage(
                        "--db names a SQLite file; with --postgres give --database postgres://… or nothing (a throw-away cluster)".into(),
                    ));
                }
                match args.database.clone() {
                    Some(url) if croupier_store::Backend::of(&url) != Some(croupier_store::Backend::Postgres) => {
                        return Err(CliError::Usage(format!(
                            "--postgres needs a postgres:// --database, not {}",
                            croupier_store::without_password(&url)
                        )));
                    }
                    url => crate::bench::web::WebDb::Postgres(url),
                }
            } else {
                if args.database.is_some() {
                    return Err(CliError::Usage(
                        "bench web reads SQLite from --db FILE, or PostgreSQL with --postgres [--database URL]".into(),
                    ));
                }
                crate::bench::web::WebDb::Sqlite(args.db.clone())
            };
            let cups = (!args.no_tournaments).then(|| croupier_web::seed::Cups::tenth(args.games));
            crate::bench::web::run(args.games, db, cups)?;
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
                bot_cpus: args.bot_cpus,
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
                &server_bin(args.server_bin)?,
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
            if let Some(q) = args.cpu_quota {
                crate::bench::cgroup::CpuGroup::capped(Some(q), "probe")
                    .map_err(|e| CliError::Usage(format!("{e:#}")))?;
            }
            let rounds = args.rounds.unwrap_or(1);
            if !(1..=50).contains(&rounds) {
                return Err(CliError::Usage("--rounds must be between 1 and 50".into()));
            }
            crate::bench::workers::run(
                args.seconds,
                args.ladder_bots,
                &crate::play::current_exe()?,
                args.cpu_quota,
                rounds,
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        other => {
            return Err(CliError::Usage(format!(
                "unknown benchmark '{other}' (known: rules, subprocess, server, http, web, flood, strength, tournament, spectators, workers)"
            )))
        }
    }
    rules::run(args.seconds)?;
    Ok(ExitCode::SUCCESS)
}

/// The server under test: `--server-bin`, or this binary.
fn server_bin(bin: Option<std::path::PathBuf>) -> Result<std::path::PathBuf, CliError> {
    match bin {
        Some(bin) if bin.is_file() => Ok(bin),
        Some(bin) => Err(CliError::Usage(format!(
            "--server-bin {}: no such file",
            bin.display()
        ))),
        None => Ok(crate::play::current_exe()?),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    /// `croupier bench`'s arguments alone.
    #[derive(Parser)]
    struct Bench {
        #[command(flatten)]
        args: super::BenchArgs,
    }

    #[test]
    fn the_start_gap_is_at_most_ten_seconds() {
        // Every timed start waits the gap: an hour's would run for days.
        let gap = |ms: &str| {
            Bench::try_parse_from(["bench", "subprocess", "--start-gap-ms", ms])
                .map(|b| b.args.start_gap_ms)
                .map_err(|e| e.to_string())
        };
        assert_eq!(gap("0"), Ok(0));
        assert_eq!(gap("10000"), Ok(10_000));
        let refused = gap("3600000").unwrap_err();
        assert!(refused.contains("--start-gap-ms"), "{refused}");
    }
}
