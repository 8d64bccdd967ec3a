//! `croupier owner` and `croupier bots`: register an owner account and HTTP
//! bots (push or pull) on a Croupier server through its `/v1` API.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::client::{call, print, Owner, Server};
use crate::error::CliError;

/// `croupier owner`.
#[derive(Debug, Args)]
pub struct OwnerArgs {
    #[command(subcommand)]
    command: OwnerCommand,
}

#[derive(Debug, Subcommand)]
enum OwnerCommand {
    /// Create an owner account (who registers bots).
    Register {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
    },
}

/// `croupier bots`.
#[derive(Debug, Args)]
pub struct BotsArgs {
    #[command(subcommand)]
    command: BotsCommand,
}

#[derive(Debug, Subcommand)]
enum BotsCommand {
    /// Register a push bot (an HTTP server the server calls: --url) or a
    /// pull bot (a client of the /v1 API: --pull; prints its token once).
    Register {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
        /// The bot's name (1-32 of [-_a-zA-Z0-9]).
        #[arg(long)]
        name: String,
        /// The game it plays: skullwhist, loveletter or goofspiel.
        #[arg(long)]
        game: String,
        /// A push bot's URL (http or https).
        #[arg(long, conflicts_with = "pull", required_unless_present = "pull")]
        url: Option<String>,
        /// Register a pull bot instead.
        #[arg(long)]
        pull: bool,
        /// The dialect: jujitsu (Goofspiel push bots' default) or croupier.
        #[arg(long)]
        dialect: Option<String>,
        /// Basic-auth credentials the server sends to a push bot.
        #[arg(long, value_name = "USER:PASSWORD", requires = "url")]
        auth: Option<String>,
    },
    /// List your bots.
    List {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
    },
    /// Show one of your bots, with its strikes and pause.
    Show {
        /// The bot's name.
        name: String,
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
    },
    /// Switch a bot on (also clears its strikes and pause).
    Enable {
        /// The bot's name.
        name: String,
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
    },
    /// Switch a bot off (the ladder no longer seats it).
    Disable {
        /// The bot's name.
        name: String,
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
    },
    /// Issue a new token for a pull bot (the old one stops working).
    Token {
        /// The bot's name.
        name: String,
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
    },
    /// Upload a new version of a hosted bot (a program the server runs in
    /// its sandbox; docs/hosted-bots.md). The first upload creates the bot.
    Upload(crate::upload::UploadArgs),
    /// List a hosted bot's versions, with why any failed validation and
    /// their stderr.
    Versions {
        /// The bot's name.
        name: String,
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        owner: Owner,
    },
}

fn describe(b: &Value) -> String {
    let mut line = format!(
        "{} ({} {} bot, dialect {})",
        b["name"].as_str().unwrap_or("?"),
        b["game"].as_str().unwrap_or("?"),
        b["kind"].as_str().unwrap_or("?"),
        b["dialect"].as_str().unwrap_or("?")
    );
    if let Some(u) = b["url"].as_str() {
        line += &format!(" at {u}");
    }
    if b["enabled"] == false {
        line += ", disabled";
    }
    if let Some(r) = b["pause_reason"].as_str() {
        line += &format!(", {r}");
    } else if b["strikes"].as_i64().is_some_and(|s| s > 0) {
        line += &format!(", {} strike(s)", b["strikes"]);
    }
    line
}

/// Runs `croupier owner`.
pub fn owner(args: OwnerArgs) -> Result<ExitCode, CliError> {
    let OwnerCommand::Register { server, owner } = args.command;
    let v = call(
        &server,
        reqwest::Method::POST,
        "/v1/owners",
        None,
        Some(json!({"name": owner.owner, "password": owner.password})),
    )?;
    print(&server, &v, |v| {
        format!("owner {} registered", v["name"].as_str().unwrap_or("?"))
    });
    Ok(ExitCode::SUCCESS)
}

/// Runs `croupier bots`.
pub fn bots(args: BotsArgs) -> Result<ExitCode, CliError> {
    use reqwest::Method;
    match args.command {
        BotsCommand::Upload(a) => return crate::upload::upload(a),
        BotsCommand::Versions {
            name,
            server,
            owner,
        } => return crate::upload::versions(&name, &server, &owner),
        BotsCommand::Register {
            server,
            owner,
            name,
            game,
            url,
            pull,
            dialect,
            auth,
        } => {
            let mut body = json!({
                "name": name,
                "game": game,
                "kind": if pull { "pull" } else { "push" },
            });
            if let Some(u) = url {
                body["url"] = json!(u);
            }
            if let Some(d) = dialect {
                body["dialect"] = json!(d);
            }
            if let Some(a) = auth {
                let (user, pass) = a
                    .split_once(':')
                    .ok_or_else(|| CliError::Usage("--auth must be USER:PASSWORD".into()))?;
                body["auth_user"] = json!(user);
                body["auth_password"] = json!(pass);
            }
            let v = call(&server, Method::POST, "/v1/bots", Some(&owner), Some(body))?;
            print(&server, &v, |v| {
                let mut s = format!("registered {}", describe(v));
                if let Some(t) = v["token"].as_str() {
                    s += &format!(
                        "\ntoken: {t}\n(shown once: the bot sends it as 'Authorization: Bearer {t}')"
                    );
                }
                s
            });
        }
        BotsCommand::List { server, owner } => {
            let v = call(&server, Method::GET, "/v1/bots", Some(&owner), None)?;
            print(&server, &v, |v| {
                let Some(bots) = v["bots"].as_array() else {
                    return format!("the server's reply has no list of bots: {v}");
                };
                if bots.is_empty() {
                    "no bots".to_string()
                } else {
                    bots.iter().map(describe).collect::<Vec<_>>().join("\n")
                }
            });
        }
        BotsCommand::Show {
            name,
            server,
            owner,
        } => {
            let v = call(&server, Method::GET, &bot_path(&name)?, Some(&owner), None)?;
            print(&server, &v, describe);
        }
        BotsCommand::Enable {
            name,
            server,
            owner,
        } => switch(&name, &server, &owner, true)?,
        BotsCommand::Disable {
            name,
            server,
            owner,
        } => switch(&name, &server, &owner, false)?,
        BotsCommand::Token {
            name,
            server,
            owner,
        } => {
            let path = format!("{}/token", bot_path(&name)?);
            let v = call(&server, Method::POST, &path, Some(&owner), None)?;
            print(&server, &v, |v| {
                format!(
                    "new token for {}: {}",
                    describe(v),
                    v["token"].as_str().unwrap_or("?")
                )
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn switch(name: &str, server: &Server, owner: &Owner, on: bool) -> Result<(), CliError> {
    let v = call(
        server,
        reqwest::Method::PATCH,
        &bot_path(name)?,
        Some(owner),
        Some(json!({ "enabled": on })),
    )?;
    print(server, &v, describe);
    Ok(())
}

fn bot_path(name: &str) -> Result<String, CliError> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(CliError::Usage(format!("'{name}' is not a bot name")));
    }
    Ok(format!("/v1/bots/{name}"))
}
