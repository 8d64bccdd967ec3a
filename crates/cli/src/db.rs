//! `croupier db`: upkeep of a server's database, run beside or between the
//! server's processes.

use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand};
use croupier_store::Backend;

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
    /// that page numbers and list lengths read): after games were changed
    /// by hand, or finished by an instance of an older version during an
    /// upgrade (docs/deploy.md).
    Recount(RecountArgs),
}

/// Arguments of `croupier db recount`.
#[derive(Debug, Args)]
struct RecountArgs {
    /// The server's database: `sqlite://FILE` (which must exist) or
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (also `postgresql://`;
    /// a Unix socket folder goes in `?host=/path`). Migrated first, as
    /// `serve` would.
    #[arg(long, env = "CROUPIER_DATABASE")]
    database: String,
}

pub fn run(args: DbArgs) -> Result<ExitCode, CliError> {
    match args.command {
        DbCommand::Recount(args) => recount(args),
    }
}

fn recount(args: RecountArgs) -> Result<ExitCode, CliError> {
    let url = &args.database;
    match Backend::of(url) {
        Some(Backend::Postgres) => {}
        Some(Backend::Sqlite) => {
            let file = sqlite_file(url);
            if !std::path::Path::new(file).is_file() {
                return Err(CliError::Usage(format!(
                    "--database {url}: no such database file {file}"
                )));
            }
        }
        None => {
            return Err(CliError::Usage(format!(
            "--database {url}: not a database URL (use sqlite://FILE or postgres://USER@HOST/DB)"
        )))
        }
    }
    let rt = crate::serve::runtime()?;
    rt.block_on(async {
        let store = croupier_store::open(url)
            .await
            .map_err(|e| CliError::Usage(format!("database {url}: {e}")))?;
        let start = Instant::now();
        let counted = store
            .recount_lists()
            .await
            .map_err(|e| CliError::Failed(anyhow::anyhow!("recounting {url}: {e}")))?;
        println!(
            "counted {} finished games, {} of them tournament games, in every list's hours ({:.1} s)",
            counted.games,
            counted.marked,
            start.elapsed().as_secs_f64()
        );
        Ok(ExitCode::SUCCESS)
    })
}

/// The file of a `sqlite:` URL: after the scheme, before any parameters.
fn sqlite_file(url: &str) -> &str {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    rest.split('?').next().unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_of_a_sqlite_url() {
        assert_eq!(sqlite_file("sqlite://games.db"), "games.db");
        assert_eq!(sqlite_file("sqlite:///srv/c.db?mode=rwc"), "/srv/c.db");
        assert_eq!(sqlite_file("sqlite:c.db"), "c.db");
    }
}
