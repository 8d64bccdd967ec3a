//! `croupier db`: upkeep of a server's database, run beside or between the
//! server's processes.

use std::process::ExitCode;
use std::str::FromStr;
use std::time::Instant;

use clap::{Args, Subcommand};
use croupier_competition::tournaments::winners::{mend_winners, Rewon};
use croupier_store::Backend;
use sqlx::sqlite::SqliteConnectOptions;

use crate::error::CliError;

/// Arguments of `croupier db`.
#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    command: DbCommand,
}

#[derive(Debug, Subcommand)]
enum DbCommand {
    /// Count every games list's finished games, and the tournament games
    /// among them, per hour and in all again from the games (the counts
    /// that page numbers and list lengths read), after giving every seat
    /// its game's tournament: after games were changed by hand, or played
    /// by an instance of an older version during an upgrade
    /// (docs/deploy.md). Then keeps, for each finished tournament, the
    /// winner its games give (one finished before 6 Dec 2026 may have kept
    /// another, or none), and names each one it mended.
    Recount(RecountArgs),
}

/// Arguments of `croupier db recount`.
#[derive(Debug, Args)]
struct RecountArgs {
    /// The server's database: `sqlite://FILE` (which must exist) or
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (also `postgresql://`;
    /// a Unix socket folder goes in `?host=/path`). Migrated first, as
    /// `serve` would.
    #[arg(long, env = "CROUPIER_DATABASE", hide_env_values = true)]
    database: String,
}

pub fn run(args: DbArgs) -> Result<ExitCode, CliError> {
    match args.command {
        DbCommand::Recount(args) => recount(args),
    }
}

fn recount(args: RecountArgs) -> Result<ExitCode, CliError> {
    let url = &args.database;
    // What errors say: the URL without its password.
    let shown = croupier_store::without_password(url);
    match Backend::of(url) {
        Some(Backend::Postgres) => {}
        Some(Backend::Sqlite) => {
            let file = sqlite_file(url)?;
            if !file.is_file() {
                return Err(CliError::Usage(format!(
                    "--database {shown}: no such database file {}",
                    file.display()
                )));
            }
        }
        None => {
            return Err(CliError::Usage(format!(
            "--database {shown}: not a database URL (use sqlite://FILE or postgres://USER@HOST/DB)"
        )))
        }
    }
    let rt = crate::start::runtime(&crate::start::RuntimeArgs::default())?;
    rt.block_on(async {
        let store = crate::start::open_store(url).await?;
        let start = Instant::now();
        let counted = store
            .recount_lists()
            .await
            .map_err(|e| CliError::Failed(anyhow::anyhow!("recounting {shown}: {e}")))?;
        if counted.mended_seats > 0 {
            println!(
                "gave {} seats the tournament of their game, which they did not carry",
                counted.mended_seats
            );
        }
        if counted.mended_scores > 0 {
            println!(
                "gave {} done tournament games their game's scores, which they did not keep",
                counted.mended_scores
            );
        }
        println!(
            "counted {} finished games, {} of them tournament games, in every list's hours ({:.1} s)",
            counted.games,
            counted.marked,
            start.elapsed().as_secs_f64()
        );
        let said = |r: &Rewon| {
            let now = r.now.as_deref().unwrap_or("nobody");
            match &r.was {
                Some(was) => println!(
                    "tournament {}: won by {now} (as its games give), not {was} as kept",
                    r.tournament
                ),
                None => println!(
                    "tournament {}: won by {now} (as its games give), kept now",
                    r.tournament
                ),
            }
        };
        let winners = mend_winners(store.as_ref(), said)
            .await
            .map_err(|e| CliError::Failed(anyhow::anyhow!("deciding winners in {shown}: {e}")))?;
        println!(
            "decided the winners of {} finished tournaments from their games: {} mended",
            winners.finished,
            winners.mended.len()
        );
        Ok(ExitCode::SUCCESS)
    })
}

/// The file of a `sqlite:` URL, as the store will open it (sqlx's reading
/// of the URL: percent-decoded, parameters apart).
fn sqlite_file(url: &str) -> Result<std::path::PathBuf, CliError> {
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| CliError::Usage(format!("--database {url}: {e}")))?;
    Ok(options.get_filename().to_path_buf())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn the_file_of_a_sqlite_url() {
        let file = |url| sqlite_file(url).unwrap();
        assert_eq!(file("sqlite://games.db"), Path::new("games.db"));
        assert_eq!(file("sqlite:///srv/c.db?mode=rwc"), Path::new("/srv/c.db"));
        assert_eq!(file("sqlite:c.db"), Path::new("c.db"));
        assert_eq!(
            file("sqlite:///srv/my%20games.db"),
            Path::new("/srv/my games.db")
        );
    }
}
