//! `croupier bots upload` and `croupier bots versions`: hosted bots, whose
//! programs the server keeps and runs in its sandbox (docs/hosted-bots.md).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::Value;

use crate::client::{call, print, Owner, Server};
use crate::error::CliError;

/// Largest upload the server takes (16 MiB).
const MAX_UPLOAD: u64 = 16 << 20;

/// Arguments of `croupier bots upload`.
#[derive(Debug, Args)]
pub struct UploadArgs {
    /// The bot's name (created on its first upload).
    name: String,
    /// The program: one file, or a .tar.gz / .tgz / .zip of its folder.
    file: PathBuf,
    /// How it runs: native (the file is executable), python3, node, ruby or
    /// java (`java -jar`).
    #[arg(long)]
    runtime: String,
    /// What it speaks: loveletter, loveletter-postman, gops or croupier.
    #[arg(long)]
    dialect: String,
    /// The file to run inside an archive (a path inside it).
    #[arg(long)]
    entry: Option<String>,
    /// The game it plays (needed on the first upload): loveletter,
    /// goofspiel or skullwhist.
    #[arg(long)]
    game: Option<String>,
    /// Wait for the validation match and report its verdict (exit 1 if the
    /// version failed).
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    server: Server,
    #[command(flatten)]
    owner: Owner,
}

/// A bot name goes into the URL's path: only the characters names have.
fn check_name(name: &str) -> Result<(), CliError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(CliError::Usage(format!("'{name}' is not a bot name")))
    }
}

fn failed(why: String) -> CliError {
    CliError::Failed(anyhow::anyhow!(why))
}

/// Runs `croupier bots upload`.
pub fn upload(a: UploadArgs) -> Result<ExitCode, CliError> {
    check_name(&a.name)?;
    let file_name = a
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| CliError::Usage(format!("{} is not a file", a.file.display())))?;
    let file = std::fs::File::open(&a.file)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", a.file.display())))?;
    let size = file
        .metadata()
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", a.file.display())))?
        .len();
    if size > MAX_UPLOAD {
        return Err(CliError::Usage(format!(
            "{} is {size} bytes: uploads are limited to 16 MiB",
            a.file.display()
        )));
    }
    let url = format!(
        "{}/v1/bots/{}/versions",
        a.server.server.trim_end_matches('/'),
        a.name
    );
    let mut query = vec![
        ("file", file_name),
        ("runtime", a.runtime.clone()),
        ("dialect", a.dialect.clone()),
    ];
    if let Some(e) = &a.entry {
        query.push(("entry", e.clone()));
    }
    if let Some(g) = &a.game {
        query.push(("game", g.clone()));
    }
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(300))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| CliError::Failed(e.into()))?;
    let resp = client
        .post(&url)
        .query(&query)
        .basic_auth(&a.owner.owner, Some(&a.owner.password))
        .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
        .body(reqwest::blocking::Body::sized(file, size))
        .send()
        .map_err(|e| failed(format!("cannot reach {url}: {e}")))?;
    let status = resp.status();
    let text = resp
        .text()
        .map_err(|e| failed(format!("reading the reply of {url}: {e}")))?;
    let v: Value = serde_json::from_str(&text).map_err(|_| {
        failed(format!(
            "{url} answered HTTP {status} with no JSON (is it a Croupier server?)"
        ))
    })?;
    if !status.is_success() {
        let why = v["error"].as_str().unwrap_or("no reason given");
        return Err(failed(format!("HTTP {status}: {why}")));
    }
    let version = v["version"].as_i64().unwrap_or(0);
    if !a.wait {
        print(&a.server, &v, |v| {
            format!(
                "uploaded {} version {version} ({}), validating",
                v["bot"].as_str().unwrap_or("?"),
                &v["sha256"].as_str().unwrap_or("?")
                    [..12.min(v["sha256"].as_str().map_or(1, str::len))]
            )
        });
        return Ok(ExitCode::SUCCESS);
    }
    let start = Instant::now();
    loop {
        let list = call(
            &a.server,
            reqwest::Method::GET,
            &format!("/v1/bots/{}/versions", a.name),
            Some(&a.owner),
            None,
        )?;
        let this = list["versions"]
            .as_array()
            .and_then(|vs| vs.iter().find(|x| x["version"] == version))
            .cloned()
            .unwrap_or(Value::Null);
        match this["status"].as_str() {
            Some("validating") if start.elapsed() < Duration::from_secs(600) => {
                std::thread::sleep(Duration::from_millis(500));
            }
            Some("active") => {
                print(&a.server, &this, |_| {
                    format!(
                        "{} version {version} passed validation and is active",
                        a.name
                    )
                });
                return Ok(ExitCode::SUCCESS);
            }
            Some("failed") => {
                print(&a.server, &this, |t| {
                    format!(
                        "{} version {version} failed validation: {}\n--- stderr (last 64 KiB) ---\n{}",
                        a.name,
                        t["reason"].as_str().unwrap_or("no reason given"),
                        t["stderr"].as_str().unwrap_or("")
                    )
                });
                return Ok(ExitCode::FAILURE);
            }
            other => {
                return Err(failed(format!(
                    "version {version} is still {}",
                    other.unwrap_or("unknown")
                )))
            }
        }
    }
}

/// Runs `croupier bots versions`.
pub fn versions(name: &str, server: &Server, owner: &Owner) -> Result<ExitCode, CliError> {
    check_name(name)?;
    let v = call(
        server,
        reqwest::Method::GET,
        &format!("/v1/bots/{name}/versions"),
        Some(owner),
        None,
    )?;
    print(server, &v, |v| {
        let mut out = Vec::new();
        for x in v["versions"].as_array().into_iter().flatten() {
            let mut line = format!(
                "version {} {}{}: {} ({} {}, {})",
                x["version"],
                x["status"].as_str().unwrap_or("?"),
                if x["active"] == true { ", playing" } else { "" },
                x["file"].as_str().unwrap_or("?"),
                x["runtime"].as_str().unwrap_or("?"),
                x["entry"].as_str().unwrap_or("?"),
                x["dialect"].as_str().unwrap_or("?"),
            );
            if let Some(r) = x["reason"].as_str() {
                line += &format!("\n  why: {r}");
            }
            out.push(line);
        }
        if out.is_empty() {
            format!("{name} has no versions")
        } else {
            out.join("\n")
        }
    });
    Ok(ExitCode::SUCCESS)
}
