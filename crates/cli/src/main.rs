//! `croupier`: runs matches between game-playing bots, replays and verifies
//! game records, and measures the rules engines.

mod bench;
mod bot;
mod bot_serve;
mod client;
mod db;
mod error;
mod faults;
mod interrupt;
mod logging;
mod play;
mod remote;
mod remote_admin;
mod remote_tournaments;
mod replay;
mod sandbox;
mod serve;
mod start;
mod tournament;
mod upload;
mod worker; // issue 13 (wc)

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use error::CliError;

// mimalloc gives memory back after the server's large, short-lived argon2
// buffers, where the system allocator keeps hundreds of MiB.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Croupier runs competitions between game-playing programs.
#[derive(Debug, Parser)]
#[command(name = "croupier", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How log lines (on stderr) are written: `text`, or `json` for a log
    /// collector. `RUST_LOG` filters them (default: `info` for `serve` and
    /// `worker`, `warn` for the rest); colour codes only on a terminal,
    /// never with `NO_COLOR`.
    #[arg(long, global = true, value_enum, default_value_t)]
    log_format: logging::LogFormat,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server (SkullWhist REST API, house bots) on SQLite by default.
    Serve(serve::ServeArgs),
    /// Play a series of games between bots and print a summary per bot.
    Play(play::PlayArgs),
    /// Play a round-robin tournament with duplicate deals.
    Tournament(tournament::TournamentArgs),
    /// Re-play a game record through the rules, print it, and verify it.
    Replay(replay::ReplayArgs),
    /// Run a built-in strategy as a bot: over stdin/stdout, as an HTTP bot
    /// server (--serve), or as a client of a SkullWhist server (--connect).
    Bot(bot::BotArgs),
    /// Measure how fast the rules engines play random games.
    Bench(Box<bench::BenchArgs>),
    /// Create an owner account on a server (owners register HTTP bots).
    Owner(remote::OwnerArgs),
    /// Register and manage your HTTP bots (push or pull) on a server.
    Bots(remote::BotsArgs),
    /// Create, list and follow tournaments on a server (docs/tournaments.md).
    Tournaments(remote_tournaments::TournamentsArgs),
    /// Admin (owners with the admin flag): ban and unban bots and owners,
    /// reset ratings, start seasons, read the audit log (docs/admin.md).
    Admin(remote_admin::AdminArgs),
    /// Run only ladder matches, leased from a PostgreSQL database shared
    /// with the serve instances (docs/workers.md).
    Worker(worker::WorkerArgs),
    /// Upkeep of a server's database: `db recount` counts every games
    /// list's games per hour again (docs/deploy.md).
    Db(db::DbArgs),
}

fn main() -> ExitCode {
    // What croupier's own parent left open never reaches a bot program.
    croupier_arena::transport::process::seal_inherited_descriptors();
    let cli = Cli::parse();
    let default = match cli.command {
        Command::Serve(_) | Command::Worker(_) => "info",
        // A recount's statements are slow by nature: sqlx's warning of a
        // slow statement would only repeat them.
        Command::Db(_) => "warn,sqlx::query=error",
        _ => "warn",
    };
    logging::init(cli.log_format, default);
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Play(args) => play::run(args),
        Command::Tournament(args) => tournament::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Bot(args) => bot::run(args),
        Command::Bench(args) => bench::run(*args),
        Command::Owner(args) => remote::owner(args),
        Command::Bots(args) => remote::bots(args),
        Command::Tournaments(args) => remote_tournaments::run(args),
        Command::Admin(args) => remote_admin::run(args),
        Command::Worker(args) => worker::run(args),
        Command::Db(args) => db::run(args),
    };
    match result {
        Ok(code) => code,
        Err(CliError::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(CliError::Failed(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
