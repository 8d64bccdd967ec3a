//! `croupier admin`: what the server's admins do through `/v1/admin` (issue
//! 49): ban and unban bots and owners, reset a bot's rating, start a new
//! season, and read the bans, the seasons and the audit log. The admin is an
//! owner with the admin flag (`croupier serve --admin NAME`); see
//! docs/admin.md.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::client::{call, print, Owner, Server};
use crate::error::CliError;

/// `croupier admin`.
#[derive(Debug, Args)]
pub struct AdminArgs {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ban a bot: it gets no new ladder or tournament games (a game it is
    /// playing finishes), and its page says why.
    BanBot {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// The bot's name.
        name: String,
        /// Why (shown on its page and in the audit log).
        #[arg(long)]
        reason: String,
    },
    /// Lift a bot's ban.
    UnbanBot {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// The bot's name.
        name: String,
        /// Why (for the audit log).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Ban an owner: each of their bots is banned, and their credentials
    /// open nothing.
    BanOwner {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// The owner's name.
        name: String,
        /// Why (shown on their bots' pages and in the audit log).
        #[arg(long)]
        reason: String,
    },
    /// Lift an owner's ban.
    UnbanOwner {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// The owner's name.
        name: String,
        /// Why (for the audit log).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Set a bot's rating in the current season back to the start (its
    /// game counts stay).
    ResetRating {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// The bot's name.
        name: String,
        /// Only this game (skullwhist, loveletter, goofspiel); default every
        /// game it is rated in.
        #[arg(long)]
        game: Option<String>,
        /// Why (for the audit log).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Start a new season: the leaderboard starts afresh, the season that
    /// ends stays at /leaderboard/GAME?season=N.
    NewSeason {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// Only this game; default every game.
        #[arg(long)]
        game: Option<String>,
        /// Why (for the audit log).
        #[arg(long)]
        reason: Option<String>,
    },
    /// List every game's seasons.
    Seasons {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
    },
    /// List the bans in force.
    Bans {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
    },
    /// Read the audit log, newest first.
    Audit {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// At most this many entries (1-1000).
        #[arg(long, default_value_t = 100)]
        limit: i64,
        /// Only entries older than this id (the next page).
        #[arg(long)]
        before: Option<i64>,
    },
}

/// A bot's or owner's name as it goes in a path.
fn check_name(name: &str) -> Result<(), CliError> {
    if name.trim().is_empty() || name.contains(['/', '?', '#', '%']) {
        return Err(CliError::Usage(format!("'{name}' is not a name")));
    }
    Ok(())
}

fn check_game(game: &Option<String>) -> Result<(), CliError> {
    match game {
        Some(g) => g
            .parse::<croupier_rules::GameKind>()
            .map(drop)
            .map_err(|e| CliError::Usage(format!("--game: {e}"))),
        None => Ok(()),
    }
}

fn check_reason(reason: &str) -> Result<(), CliError> {
    if reason.trim().is_empty() {
        return Err(CliError::Usage(
            "--reason: say why (it is shown on the bot's page)".into(),
        ));
    }
    Ok(())
}

/// `{"reason": ...}` (and `game`) with only what was given.
fn body(game: Option<String>, reason: Option<String>) -> Value {
    let mut b = json!({});
    if let Some(g) = game {
        b["game"] = g.into();
    }
    if let Some(r) = reason {
        b["reason"] = r.into();
    }
    b
}

fn season_line(s: &Value) -> String {
    let game = s["game"].as_str().unwrap_or("?");
    let n = &s["season"];
    match (s["started_at"].as_str(), s["ended_at"].as_str()) {
        (_, Some(end)) => format!("{game} season {n}: ended {end}"),
        (Some(start), None) => format!("{game} season {n}: current, since {start}"),
        (None, None) => format!("{game} season {n}: current"),
    }
}

fn post(
    server: &Server,
    owner: &Owner,
    path: &str,
    body: Value,
    summary: impl FnOnce(&Value) -> String,
) -> Result<(), CliError> {
    let v = call(server, reqwest::Method::POST, path, Some(owner), Some(body))?;
    print(server, &v, summary);
    Ok(())
}

/// Runs `croupier admin`.
pub fn run(args: AdminArgs) -> Result<ExitCode, CliError> {
    match args.command {
        Command::BanBot {
            server,
            owner,
            name,
            reason,
        } => {
            check_name(&name)?;
            check_reason(&reason)?;
            let path = format!("/v1/admin/bots/{name}/ban");
            post(&server, &owner, &path, body(None, Some(reason)), |_| {
                format!("bot {name} is banned")
            })?;
        }
        Command::UnbanBot {
            server,
            owner,
            name,
            reason,
        } => {
            check_name(&name)?;
            let path = format!("/v1/admin/bots/{name}/unban");
            post(&server, &owner, &path, body(None, reason), |_| {
                format!("bot {name} is no longer banned")
            })?;
        }
        Command::BanOwner {
            server,
            owner,
            name,
            reason,
        } => {
            check_name(&name)?;
            check_reason(&reason)?;
            let path = format!("/v1/admin/owners/{name}/ban");
            post(&server, &owner, &path, body(None, Some(reason)), |_| {
                format!("owner {name} and their bots are banned")
            })?;
        }
        Command::UnbanOwner {
            server,
            owner,
            name,
            reason,
        } => {
            check_name(&name)?;
            let path = format!("/v1/admin/owners/{name}/unban");
            post(&server, &owner, &path, body(None, reason), |_| {
                format!("owner {name} is no longer banned")
            })?;
        }
        Command::ResetRating {
            server,
            owner,
            name,
            game,
            reason,
        } => {
            check_name(&name)?;
            check_game(&game)?;
            let path = format!("/v1/admin/bots/{name}/reset-rating");
            post(&server, &owner, &path, body(game, reason), |v| {
                let games: Vec<&str> = v["games"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                format!(
                    "the rating of {name} is back to {} ± {:.2} in {}",
                    v["mu"],
                    v["sigma"].as_f64().unwrap_or_default(),
                    games.join(", ")
                )
            })?;
        }
        Command::NewSeason {
            server,
            owner,
            game,
            reason,
        } => {
            check_game(&game)?;
            post(
                &server,
                &owner,
                "/v1/admin/seasons",
                body(game, reason),
                |v| {
                    v["started"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|s| {
                            format!(
                                "{} season {} started",
                                s["game"].as_str().unwrap_or("?"),
                                s["season"]
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                },
            )?;
        }
        Command::Seasons { server, owner } => {
            let v = call(
                &server,
                reqwest::Method::GET,
                "/v1/admin/seasons",
                Some(&owner),
                None,
            )?;
            print(&server, &v, |v| {
                v["seasons"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(season_line)
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        Command::Bans { server, owner } => {
            let v = call(
                &server,
                reqwest::Method::GET,
                "/v1/admin/bans",
                Some(&owner),
                None,
            )?;
            print(&server, &v, |v| {
                let lines: Vec<String> = v["bans"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| {
                        format!(
                            "{} {}: {} (by {}, {})",
                            b["kind"].as_str().unwrap_or("?"),
                            b["name"].as_str().unwrap_or("?"),
                            b["reason"].as_str().unwrap_or(""),
                            b["banned_by"].as_str().unwrap_or("?"),
                            b["banned_at"].as_str().unwrap_or("?")
                        )
                    })
                    .collect();
                if lines.is_empty() {
                    "no bans".into()
                } else {
                    lines.join("\n")
                }
            });
        }
        Command::Audit {
            server,
            owner,
            limit,
            before,
        } => {
            if !(1..=1000).contains(&limit) {
                return Err(CliError::Usage("--limit: 1 to 1000".into()));
            }
            let mut path = format!("/v1/admin/audit?limit={limit}");
            if let Some(b) = before {
                if b < 1 {
                    return Err(CliError::Usage("--before: an id from 1".into()));
                }
                path += &format!("&before={b}");
            }
            let v = call(&server, reqwest::Method::GET, &path, Some(&owner), None)?;
            print(&server, &v, |v| {
                let lines: Vec<String> = v["entries"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|e| {
                        let mut line = format!(
                            "#{} {} {} {} {}",
                            e["id"],
                            e["at"].as_str().unwrap_or("?"),
                            e["actor"].as_str().unwrap_or("?"),
                            e["action"].as_str().unwrap_or("?"),
                            e["target"].as_str().unwrap_or("?")
                        );
                        if let Some(r) = e["reason"].as_str() {
                            line += &format!(": {r}");
                        }
                        if let Some(d) = e["details"].as_str() {
                            line += &format!(" ({d})");
                        }
                        line
                    })
                    .collect();
                if lines.is_empty() {
                    "the audit log is empty".into()
                } else {
                    lines.join("\n")
                }
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}
