//! A built-in SkullWhist strategy as a client of a SkullWhist REST server
//! (`croupier bot <strategy> --connect http://HOST:PORT`): it plays through
//! the 2014 SkullSpace API exactly as the event's example bots did.
//!
//! The flow is the example bots': `register` (a taken name is fine),
//! `login` (a failure ends the run), then for each game `new-game` until it
//! succeeds (`retry` means ask again), `bid`, and for each trick `status`
//! until it is this bot's turn, then `play`; the game is over when `status`
//! shows no game, and `old-game` tells the result.
//!
//! What the replies say and the game the bot rebuilds from them are the
//! dialect's bot side ([`croupier_dialects::bot::skullwhist`]); this module
//! holds the I/O: JSON POSTs through the workspace's `reqwest` (one
//! kept-alive connection, connect and reply timeouts, a cap on the reply
//! size) and the polling loop.

use std::fmt;
use std::io::Read as _;
use std::time::Duration;

use super::error::{At as _, BotSideError};
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

mod play;
pub use play::{play_rest, RETRY_FOR};

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    use croupier_bots::Strategy;
    use croupier_rules::skullwhist::SkullWhist;
    use serde_json::{json, Map};

    use super::*;

    // --- URL -------------------------------------------------------------

    #[test]
    fn urls_are_parsed_with_defaults_and_prefixes() {
        let u = parse_url("http://127.0.0.1:18181").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.base.as_str()),
            ("127.0.0.1", 18181, "")
        );
        assert_eq!(u.method_path("new-game"), "/api/new-game/");
        assert_eq!(u.host_header(), "127.0.0.1:18181");

        let u = parse_url("HTTP://example.org/games/skullwhist/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("example.org", 80));
        assert_eq!(u.method_path("bid"), "/games/skullwhist/api/bid/");

        let u = parse_url("localhost:8080").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("localhost", 8080));

        let u = parse_url("http://[::1]:9000/").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.base.as_str()),
            ("::1", 9000, "")
        );
        assert_eq!(u.host_header(), "[::1]:9000");
    }

    #[test]
    fn bad_urls_are_explained() {
        for (url, part) in [
            ("https://example.org", "plain HTTP"),
            ("ftp://example.org", "scheme"),
            ("http://:80", "no host"),
            ("http://host:99999", "not a port"),
            ("http://host:0", "not a port"),
            ("http://host:x", "not a port"),
            ("http://[::1", "unclosed"),
            ("http://u:p@host", "not supported"),
            ("http://host/?q=1", "query"),
        ] {
            let e = parse_url(url).unwrap_err().to_string();
            assert!(e.contains(part), "{url}: {e}");
        }
    }

    // --- HTTP ------------------------------------------------------------

    /// A one-thread server that answers each request on a connection with
    /// the next canned reply, then closes; counts connections.
    fn canned_server(
        per_connection: Vec<Vec<String>>,
    ) -> (ServerUrl, std::thread::JoinHandle<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for replies in per_connection {
                let (stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                for reply in replies {
                    // Read one request: headers, then Content-Length bytes.
                    let mut len = 0;
                    let mut first = String::new();
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).unwrap();
                        if first.is_empty() {
                            first = line.trim_end().to_string();
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap();
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; len];
                    reader.read_exact(&mut body).unwrap();
                    seen.push(format!("{first} {}", String::from_utf8(body).unwrap()));
                    writer.write_all(reply.as_bytes()).unwrap();
                }
                // Dropping the stream closes the connection.
            }
            seen
        });
        let url = parse_url(&format!("http://127.0.0.1:{port}")).unwrap();
        (url, handle)
    }

    const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n{\"result\":\"success\"}";

    #[test]
    fn the_client_keeps_the_connection_and_reconnects_once_when_closed() {
        // Connection 1 serves two requests then closes; the third request
        // finds it closed and is sent again on connection 2.
        let (url, server) = canned_server(vec![vec![OK.into(), OK.into()], vec![OK.into()]]);
        let api = Api::new(url, REPLY_TIMEOUT).unwrap();
        for i in 0..3 {
            let r = api.call("status", &json!({ "n": i })).unwrap();
            assert_eq!(r, Reply::Success(Map::new()));
        }
        let seen = server.join().unwrap();
        assert_eq!(
            seen,
            vec![
                "POST /api/status/ HTTP/1.1 {\"n\":0}",
                "POST /api/status/ HTTP/1.1 {\"n\":1}",
                "POST /api/status/ HTTP/1.1 {\"n\":2}",
            ]
        );
    }

    #[test]
    fn a_fresh_connection_that_fails_is_an_error_not_a_loop() {
        let (url, server) = canned_server(vec![vec![]]);
        let api = Api::new(url, REPLY_TIMEOUT).unwrap();
        let e = api.call("status", &json!({})).unwrap_err();
        assert!(e.report().contains("POST /api/status/"), "{}", e.report());
        server.join().unwrap();
    }

    #[test]
    fn a_failed_login_ends_the_run_with_both_reasons() {
        let taken = r#"{"reason":"the name 'x' is taken","result":"failure"}"#;
        let wrong = r#"{"reason":"wrong name or password","result":"failure"}"#;
        let replies: Vec<String> = [taken, wrong]
            .iter()
            .map(|b| format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{b}", b.len()))
            .collect();
        let (url, server) = canned_server(vec![replies]);
        let opts = RestOptions {
            url: format!("http://{}", url.host_header()),
            name: "x".into(),
            password: "p".into(),
            games: Some(1),
            seed: 1,
        };
        let mut lines = Vec::new();
        let bot: Box<dyn Strategy<SkullWhist>> = Box::new(croupier_bots::RandomBot);
        let e = play_rest(bot, &opts, |l| lines.push(l.to_string())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot log in as 'x': wrong name or password (registering it failed too: the name 'x' is taken)"
        );
        assert_eq!(
            lines,
            vec!["register: the name 'x' is taken (logging in anyway)"]
        );
        let seen = server.join().unwrap();
        assert!(
            seen[0].starts_with("POST /api/register/ HTTP/1.1 {"),
            "{seen:?}"
        );
        assert!(
            seen[1].starts_with("POST /api/login/ HTTP/1.1 {"),
            "{seen:?}"
        );
    }

    #[test]
    fn connection_refused_is_an_error() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = parse_url(&format!("127.0.0.1:{port}")).unwrap();
        let e = Api::new(url, REPLY_TIMEOUT)
            .unwrap()
            .call("login", &json!({}))
            .unwrap_err();
        assert!(e.report().contains("cannot connect"), "{}", e.report());
    }

    #[test]
    fn read_timeouts_end_a_silent_request() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hold = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            std::thread::sleep(Duration::from_millis(500));
            drop(s);
        });
        let url = parse_url(&format!("127.0.0.1:{port}")).unwrap();
        let api = Api::new(url, Duration::from_millis(100)).unwrap();
        let t = std::time::Instant::now();
        assert!(api.call("status", &json!({})).is_err());
        assert!(t.elapsed() < Duration::from_millis(450));
        hold.join().unwrap();
    }

    #[test]
    fn oversized_replies_are_refused() {
        let big = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        let (url, server) = canned_server(vec![vec![big]]);
        let e = Api::new(url, REPLY_TIMEOUT)
            .unwrap()
            .call("status", &json!({}))
            .unwrap_err();
        assert!(e.report().contains("larger than"), "{}", e.report());
        server.join().unwrap();
    }

    #[test]
    fn results_are_tallied() {
        let mut summary = RestSummary::default();
        for r in [
            GameResult::Scored {
                mine: 35,
                theirs: -100,
                tricks: 8,
            },
            GameResult::Forfeit { by_me: true },
            GameResult::Forfeit { by_me: false },
            GameResult::Scored {
                mine: 20,
                theirs: 20,
                tricks: 2,
            },
            GameResult::Scored {
                mine: -20,
                theirs: 20,
                tricks: 1,
            },
        ] {
            summary.count(r);
        }
        assert_eq!(
            summary,
            RestSummary {
                games: 0,
                wins: 2,
                losses: 1,
                ties: 1,
                forfeits: 1
            }
        );
    }

    /// Plays 3 games (or `CROUPIER_REST_GAMES`) with each of two strategies
    /// against a running server, e.g.
    /// `croupier serve --listen 127.0.0.1:18181 --house-pause-ms 5`, then
    /// `CROUPIER_REST_URL=http://127.0.0.1:18181 cargo test -p croupier-arena rest -- --ignored --nocapture`.
    #[test]
    #[ignore = "needs a running croupier server (CROUPIER_REST_URL)"]
    fn plays_three_games_against_a_live_server() {
        use croupier_bots::Builtins;
        let url = std::env::var("CROUPIER_REST_URL")
            .unwrap_or_else(|_| "http://127.0.0.1:18181".to_string());
        let games: u64 = std::env::var("CROUPIER_REST_GAMES")
            .ok()
            .and_then(|g| g.parse().ok())
            .unwrap_or(3);
        for strategy in ["heuristic", "random"] {
            let opts = RestOptions {
                url: url.clone(),
                name: format!("rest-test-{strategy}-{}", std::process::id()),
                password: "rest-test-password".into(),
                games: Some(games),
                seed: 7,
            };
            let bot = SkullWhist::builtin(strategy).unwrap();
            let summary = play_rest(bot, &opts, |line| println!("{strategy}: {line}")).unwrap();
            println!("{strategy}: {summary}");
            assert_eq!(summary.games, games);
            assert_eq!(summary.wins + summary.losses + summary.ties, games);
            assert_eq!(summary.forfeits, 0);
        }
    }
}
