//! The client side of a Croupier server's `/v1` API that `croupier owner`,
//! `bots` and `tournaments` share: where the server is and who is asking
//! (flattened into their arguments), one JSON call, and how a reply prints.

use std::time::Duration;

use clap::Args;
use serde_json::Value;

use crate::error::CliError;

/// Where the server is and who is asking.
#[derive(Debug, Args)]
pub struct Server {
    /// The server's base URL.
    #[arg(long, env = "CROUPIER_SERVER", default_value = "http://127.0.0.1:8080")]
    pub(crate) server: String,
    /// Print the server's JSON reply instead of a summary.
    #[arg(long)]
    pub(crate) json: bool,
}

/// An owner's credentials.
#[derive(Debug, Args)]
pub struct Owner {
    /// The owner's name.
    #[arg(long, env = "CROUPIER_OWNER")]
    pub(crate) owner: String,
    /// The owner's password.
    #[arg(long, env = "CROUPIER_PASSWORD", hide_env_values = true)]
    pub(crate) password: String,
}

fn client() -> Result<reqwest::blocking::Client, CliError> {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| CliError::Failed(e.into()))
}

/// Sends a request and returns the JSON reply, or the server's reason.
pub(crate) fn call(
    server: &Server,
    method: reqwest::Method,
    path: &str,
    owner: Option<&Owner>,
    body: Option<Value>,
) -> Result<Value, CliError> {
    let url = format!("{}{path}", server.server.trim_end_matches('/'));
    let mut req = client()?.request(method, &url);
    if let Some(o) = owner {
        req = req.basic_auth(&o.owner, Some(&o.password));
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req
        .send()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot reach {url}: {e}")))?;
    let status = resp.status();
    let text = resp
        .text()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("reading the reply of {url}: {e}")))?;
    let value: Value = serde_json::from_str(&text).map_err(|_| {
        CliError::Failed(anyhow::anyhow!(
            "{url} answered HTTP {status} with no JSON (is it a Croupier server?)"
        ))
    })?;
    if !status.is_success() {
        let why = value["error"].as_str().unwrap_or("no reason given");
        return Err(CliError::Failed(anyhow::anyhow!("HTTP {status}: {why}")));
    }
    Ok(value)
}

/// Prints the reply as it came (`--json`) or the summary made of it.
pub(crate) fn print(server: &Server, v: &Value, summary: impl FnOnce(&Value) -> String) {
    if server.json {
        say(&v.to_string());
    } else {
        say(&summary(v));
    }
}

/// Writes a line to stdout. When the reader has gone (`croupier
/// tournaments show X | head`), the command stops quietly with status 0, as
/// a Unix tool does, instead of panicking in `println!`; any other failure
/// to write says so on stderr and exits 1.
pub(crate) fn say(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let written = writeln!(out, "{text}").and_then(|()| out.flush());
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("error: cannot write the output: {e}");
            std::process::exit(1);
        }
    }
}
