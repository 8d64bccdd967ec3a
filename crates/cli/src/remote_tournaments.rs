//! `croupier tournaments`: create, list and follow tournaments on a server
//! (`/v1/tournaments`), and give an owner the organiser flag in the database.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::client::{call, print, Owner, Server};
use crate::error::CliError;

/// `croupier tournaments`.
#[derive(Debug, Args)]
pub struct TournamentsArgs {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per run: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Create a tournament (organisers only).
    Create {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// Its name (1-64 of [-_a-zA-Z0-9]).
        #[arg(long)]
        name: String,
        /// The game: skullwhist, loveletter or goofspiel.
        #[arg(long)]
        game: String,
        /// The rules variant (default: the game's).
        #[arg(long)]
        variant: Option<String>,
        /// round-robin or swiss.
        #[arg(long, default_value = "round-robin")]
        format: String,
        /// Rounds of a Swiss.
        #[arg(long)]
        rounds: Option<i64>,
        /// Deals per pairing and round (each under every seating when duplicate).
        #[arg(long, default_value_t = 1)]
        games_per_pairing: i64,
        /// Play each deal once only (not under every seating).
        #[arg(long)]
        no_duplicate: bool,
        /// Largest table of a Love Letter Swiss (2-4).
        #[arg(long)]
        seats: Option<i64>,
        /// Milliseconds per decision.
        #[arg(long, default_value_t = 5000)]
        move_time_ms: i64,
        /// Thinking milliseconds per bot per game.
        #[arg(long)]
        budget_ms: Option<i64>,
        /// The bots, comma-separated; without it, every active bot of the game.
        #[arg(long, value_delimiter = ',')]
        entries: Vec<String>,
        /// Start time (RFC 3339, e.g. 2026-11-24T20:00:00Z); default now.
        #[arg(long)]
        start: Option<String>,
    },
    /// List the server's tournaments, the last announced first, 25 a page.
    List {
        #[command(flatten)]
        server: Server,
        /// The page, from 1 (page 1 holds the 25 announced last).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i64).range(1..))]
        page: i64,
    },
    /// Show a tournament: progress, standings, crosstable.
    Show {
        #[command(flatten)]
        server: Server,
        /// The tournament's name.
        name: String,
    },
    /// Cancel a tournament (organisers only): games not yet started are
    /// never played; games in progress finish.
    Cancel {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// The tournament's name.
        name: String,
        /// Why (shown on its page).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Set (or with --revoke clear) an owner's organiser flag, in the
    /// server's database directly.
    Admin {
        /// The owner's name.
        owner: String,
        /// The database (as for croupier serve).
        #[arg(
            long,
            env = "CROUPIER_DATABASE",
            hide_env_values = true,
            default_value = "sqlite://croupier.db"
        )]
        database: String,
        /// Clear the flag instead.
        #[arg(long)]
        revoke: bool,
    },
}

/// A page of the list, one tournament a line, and where the next page is.
fn list(v: &Value) -> String {
    let mut lines: Vec<String> = v["tournaments"]
        .as_array()
        .into_iter()
        .flatten()
        .map(brief)
        .collect();
    if lines.is_empty() {
        lines.push("no tournaments".into());
    }
    let (page, pages) = (v["page"].as_i64(), v["pages"].as_i64());
    if let (Some(page), Some(pages)) = (page, pages) {
        if pages > 1 {
            let total = v["total"].as_i64().unwrap_or_default();
            let mut more = format!("page {page} of {pages} ({total} tournaments)");
            if page < pages {
                more.push_str(&format!("; older ones: --page {}", page + 1));
            }
            lines.push(more);
        }
    }
    lines.join("\n")
}

fn brief(b: &Value) -> String {
    let t = &b["tournament"];
    let p = &b["progress"];
    let name = t["name"].as_str().unwrap_or("?");
    let kind = format!(
        "{} {}",
        t["game"].as_str().unwrap_or("?"),
        t["format"].as_str().unwrap_or("?")
    );
    let status = t["status"].as_str().unwrap_or("?");
    if status == "scheduled" {
        // Entries are frozen, and a round-robin's rounds set, at the start.
        let starts = t["starts_at"].as_str().unwrap_or("?");
        return if t["all_bots"] == Value::Bool(true) {
            format!(
                "{name} ({kind}): scheduled for {starts}; every active bot of the game at the start{}",
                match p["rounds"].as_i64() {
                    Some(r) if t["format"] == "swiss" => format!(", {r} rounds"),
                    _ => String::new(),
                }
            )
        } else {
            format!(
                "{name} ({kind}): scheduled for {starts}; {} bots entered, {} rounds, {} games",
                b["entries"], p["rounds"], p["total"]
            )
        };
    }
    format!(
        "{name} ({kind}, {} bots): {status}, {} of {} games, round {} of {}",
        b["entries"], p["done"], p["total"], p["current_round"], p["rounds"]
    )
}

fn details(v: &Value) -> String {
    let t = &v["tournament"];
    let p = &v["progress"];
    let mut out = format!(
        "{} ({} {}): {}, {} of {} games, round {} of {}\n\nStandings after round {}:\n",
        t["name"].as_str().unwrap_or("?"),
        t["game"].as_str().unwrap_or("?"),
        t["format"].as_str().unwrap_or("?"),
        t["status"].as_str().unwrap_or("?"),
        p["done"],
        p["total"],
        p["current_round"],
        p["rounds"],
        v["standings_after_round"]
    );
    out += &format!(
        "{:>3}  {:<24} {:>6} {:>8} {:>6} {:>6}\n",
        "#", "bot", "points", "buchholz", "games", "faulty"
    );
    for s in v["standings"].as_array().into_iter().flatten() {
        out += &format!(
            "{:>3}  {:<24} {:>6} {:>8} {:>6} {:>6}\n",
            s["rank"].to_string(),
            s["name"].as_str().unwrap_or("?"),
            s["points"].to_string(),
            s["buchholz"].to_string(),
            s["games"].to_string(),
            s["faulty"].to_string()
        );
    }
    for e in v["entries"].as_array().into_iter().flatten() {
        if let Some(w) = e["withdrawn"].as_str() {
            out += &format!("withdrawn: {}: {w}\n", e["name"].as_str().unwrap_or("?"));
        }
    }
    out.trim_end().to_string()
}

fn check_name(name: &str) -> Result<(), CliError> {
    if name.is_empty() || name.contains(['/', '?', '#', '%']) {
        return Err(CliError::Usage(format!(
            "'{name}' is not a tournament name"
        )));
    }
    Ok(())
}

/// Runs `croupier tournaments`.
pub fn run(args: TournamentsArgs) -> Result<ExitCode, CliError> {
    match args.command {
        Command::Create {
            server,
            owner,
            name,
            game,
            variant,
            format,
            rounds,
            games_per_pairing,
            no_duplicate,
            seats,
            move_time_ms,
            budget_ms,
            entries,
            start,
        } => {
            let mut body = json!({
                "name": name,
                "game": game,
                "format": format,
                "games_per_pairing": games_per_pairing,
                "duplicate": !no_duplicate,
                "move_time_ms": move_time_ms,
                "entries": if entries.is_empty() { json!("all") } else { json!(entries) },
            });
            for (key, value) in [
                ("variant", variant.map(Value::from)),
                ("rounds", rounds.map(Value::from)),
                ("seats", seats.map(Value::from)),
                ("budget_ms", budget_ms.map(Value::from)),
                ("start", start.map(Value::from)),
            ] {
                if let Some(v) = value {
                    body[key] = v;
                }
            }
            let v = call(
                &server,
                reqwest::Method::POST,
                "/v1/tournaments",
                Some(&owner),
                Some(body),
            )?;
            print(&server, &v, |v| format!("created {}", brief(v)));
        }
        Command::List { server, page } => {
            let path = format!("/v1/tournaments?page={page}");
            let v = call(&server, reqwest::Method::GET, &path, None, None)?;
            print(&server, &v, list);
        }
        Command::Cancel {
            server,
            owner,
            name,
            reason,
        } => {
            check_name(&name)?;
            let body = reason.map(|r| json!({ "reason": r }));
            let v = call(
                &server,
                reqwest::Method::POST,
                &format!("/v1/tournaments/{name}/cancel"),
                Some(&owner),
                Some(body.unwrap_or_else(|| json!({}))),
            )?;
            print(&server, &v, |v| format!("cancelled {}", brief(v)));
        }
        Command::Show { server, name } => {
            check_name(&name)?;
            let v = call(
                &server,
                reqwest::Method::GET,
                &format!("/v1/tournaments/{name}"),
                None,
                None,
            )?;
            print(&server, &v, details);
        }
        Command::Admin {
            owner,
            database,
            revoke,
        } => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| CliError::Failed(e.into()))?;
            let found = rt.block_on(async {
                let store = crate::start::open_store(&database).await?;
                store
                    .tournaments()
                    .set_owner_admin(&owner, !revoke)
                    .await
                    .map_err(|e| CliError::Failed(e.into()))
            })?;
            if !found {
                return Err(CliError::Usage(format!(
                    "no owner '{owner}' in {} (croupier owner register first)",
                    croupier_store::without_password(&database)
                )));
            }
            crate::client::say(&format!(
                "owner {owner} {} organise tournaments",
                if revoke { "may no longer" } else { "may" }
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cup(name: &str) -> Value {
        json!({
            "tournament": {"name": name, "game": "goofspiel", "format": "swiss", "status": "finished"},
            "progress": {"done": 4, "running": 0, "total": 4, "current_round": 2, "rounds": 2},
            "entries": 3,
            "winner": "ace",
        })
    }

    #[test]
    fn a_page_of_the_list_says_where_the_older_ones_are() {
        let one = list(&json!({"tournaments": [cup("a")], "page": 1, "pages": 1, "total": 1}));
        assert_eq!(one.lines().count(), 1, "{one}");
        assert!(one.starts_with("a (goofspiel swiss"), "{one}");
        let first = list(&json!({
            "tournaments": [cup("c"), cup("b")], "page": 1, "pages": 2, "total": 3,
        }));
        let lines: Vec<&str> = first.lines().collect();
        assert_eq!(lines.len(), 3, "{first}");
        assert_eq!(
            lines[2],
            "page 1 of 2 (3 tournaments); older ones: --page 2"
        );
        let last = list(&json!({"tournaments": [cup("a")], "page": 2, "pages": 2, "total": 3}));
        assert!(last.ends_with("\npage 2 of 2 (3 tournaments)"), "{last}");
        let none = list(&json!({"tournaments": [], "page": 1, "pages": 1, "total": 0}));
        assert_eq!(none, "no tournaments");
    }
}
