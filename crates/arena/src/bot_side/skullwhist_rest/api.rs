//! The REST client's ground: the server's URL, the API over HTTP (one
//! kept-alive connection, timeouts, a cap on the reply), the options of a
//! run and its summary. The game loop is `play.rs`.

use std::fmt;
use std::io::Read as _;
use std::time::Duration;

use crate::bot_side::error::{At as _, BotSideError};
use croupier_dialects::bot::skullwhist::{parse_reply, GameResult, Reply};
use serde_json::Value;

/// Pause between two `status` calls while the opponent thinks.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Longest wait for a TCP connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for a whole reply (the server may hold `new-game` until an
/// opponent turns up).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(120);
/// Largest reply body read.
pub const MAX_BODY: usize = 1 << 20;

/// How to reach the server and how long to play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestOptions {
    /// The server, e.g. `http://127.0.0.1:8080` (a path prefix is kept:
    /// `http://host/skullwhist` posts to `/skullwhist/api/<method>/`).
    pub url: String,
    /// The bot's name (registered on first use).
    pub name: String,
    /// Its password.
    pub password: String,
    /// Games to play; `None` plays until an error.
    pub games: Option<u64>,
    /// Seed of the strategy's generator ([`croupier_bots::bot_rng`]).
    pub seed: u64,
}

/// What a run of games came to, from this bot's side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RestSummary {
    /// Games joined and finished (including any the server aborted, which
    /// count in none of the columns below).
    pub games: u64,
    /// Games won on score, or forfeited by the opponent.
    pub wins: u64,
    /// Games lost on score.
    pub losses: u64,
    /// Games with equal scores.
    pub ties: u64,
    /// Games this bot forfeited (too slow, or logged in elsewhere).
    pub forfeits: u64,
}

impl RestSummary {
    /// Counts a finished game's result (not the game itself).
    pub fn count(&mut self, result: GameResult) {
        match result {
            GameResult::Scored { mine, theirs, .. } => match mine.cmp(&theirs) {
                std::cmp::Ordering::Greater => self.wins += 1,
                std::cmp::Ordering::Less => self.losses += 1,
                std::cmp::Ordering::Equal => self.ties += 1,
            },
            GameResult::Forfeit { by_me: true } => self.forfeits += 1,
            GameResult::Forfeit { by_me: false } => self.wins += 1,
        }
    }
}

impl fmt::Display for RestSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} games: {} won, {} lost, {} tied, {} forfeited",
            self.games, self.wins, self.losses, self.ties, self.forfeits
        )
    }
}

// ---------------------------------------------------------------------------
// The server's URL

/// Where the API lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// Host name or address (an IPv6 address without brackets).
    pub host: String,
    /// Port.
    pub port: u16,
    /// Path prefix without a trailing slash (usually empty).
    pub base: String,
}

impl ServerUrl {
    /// The URL of an API method.
    pub fn method_url(&self, method: &str) -> String {
        format!("http://{}{}", self.host_header(), self.method_path(method))
    }

    /// The `Host` header's value.
    pub fn host_header(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The request path of an API method.
    pub fn method_path(&self, method: &str) -> String {
        format!("{}/api/{method}/", self.base)
    }
}

/// Parses `http://host[:port][/prefix]`; a URL without a scheme is taken as
/// `http://`. HTTPS is refused with an explanation (this client speaks plain
/// HTTP only).
pub fn parse_url(url: &str) -> Result<ServerUrl, BotSideError> {
    let text = url.trim();
    let rest = match text.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("https") => return Err(BotSideError::protocol(format!(
            "'{url}': this client speaks plain HTTP only; use an http:// URL (through a local TLS proxy if need be)"
        ))),
        Some((scheme, _)) => return Err(BotSideError::protocol(format!("'{url}': unsupported scheme '{scheme}' (expected http://)"))),
        None => text,
    };
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if path.contains(['?', '#']) {
        return Err(BotSideError::protocol(format!(
            "'{url}': a server URL has no query or fragment"
        )));
    }
    if authority.contains('@') {
        return Err(BotSideError::protocol(format!(
            "'{url}': user names and passwords in the URL are not supported"
        )));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(|| {
            BotSideError::protocol(format!("'{url}': unclosed '[' in the address"))
        })?;
        match after {
            "" => (host, None),
            p => match p.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None => {
                    return Err(BotSideError::protocol(format!(
                        "'{url}': unexpected '{p}' after the address"
                    )))
                }
            },
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(BotSideError::protocol(format!("'{url}': no host")));
    }
    let port = match port {
        None => 80,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| BotSideError::protocol(format!("'{url}': '{p}' is not a port")))?,
    };
    Ok(ServerUrl {
        host: host.to_string(),
        port,
        base: path.trim_end_matches('/').to_string(),
    })
}

// ---------------------------------------------------------------------------
// The API over HTTP

/// The API through one kept-alive `reqwest` client.
#[derive(Debug)]
pub struct Api {
    http: reqwest::blocking::Client,
    url: ServerUrl,
}

impl Api {
    /// A client of the API at `url`; `reply_timeout` bounds each call.
    pub fn new(url: ServerUrl, reply_timeout: Duration) -> Result<Api, BotSideError> {
        let http = reqwest::blocking::Client::builder()
            .user_agent("croupier-bot")
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(reply_timeout)
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .at(|| "cannot set up the HTTP client")?;
        Ok(Api { http, url })
    }

    /// POSTs `body` to `method`; the reply's status and body (at most
    /// [`MAX_BODY`] bytes).
    fn post(&self, method: &str, body: &Value) -> Result<(u16, Vec<u8>), BotSideError> {
        let path = self.url.method_path(method);
        let what = || format!("POST {path} to {}", self.url.host_header());
        let reply = self
            .http
            .post(self.url.method_url(method))
            .header(reqwest::header::ACCEPT, "application/json")
            .json(body)
            .send()
            .map_err(|e| {
                if e.is_connect() {
                    BotSideError::Unreachable(format!(
                        "cannot connect to {}: {e}",
                        self.url.host_header()
                    ))
                } else {
                    BotSideError::from(e)
                }
            })
            .at(what)?;
        let status = reply.status().as_u16();
        if reply.content_length().is_some_and(|n| n > MAX_BODY as u64) {
            return Err(BotSideError::protocol(format!(
                "{}: the reply is larger than {MAX_BODY} bytes",
                what()
            )));
        }
        let mut bytes = Vec::new();
        reply
            .take(MAX_BODY as u64 + 1)
            .read_to_end(&mut bytes)
            .at(what)?;
        if bytes.len() > MAX_BODY {
            return Err(BotSideError::protocol(format!(
                "{}: the reply is larger than {MAX_BODY} bytes",
                what()
            )));
        }
        Ok((status, bytes))
    }

    /// Calls `method` and reads its reply.
    pub fn call(&self, method: &str, body: &Value) -> Result<Reply, BotSideError> {
        let (status, bytes) = self.post(method, body)?;
        Ok(parse_reply(method, status, &bytes)?)
    }
}
