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
use std::thread::sleep;
use std::time::Duration;

use super::error::{At as _, BotSideError};
use croupier_bots::{bot_rng, Strategy};
use croupier_dialects::bot::skullwhist::{
    int_field, parse_cards, parse_reply, parse_status, required_int, GameResult, GameView, Reply,
    Status, ME,
};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistAction, SkullWhistVariant, TRICKS};
use serde_json::{json, Map, Value};

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

    /// Calls until the server stops answering `retry` (only `new-game`
    /// should) and turns a failure into an error.
    fn call_ok(&self, method: &str, body: &Value) -> Result<Map<String, Value>, BotSideError> {
        let mut retries = 0;
        loop {
            match self.call(method, body)? {
                Reply::Success(fields) => return Ok(fields),
                Reply::Failure(reason) => {
                    return Err(BotSideError::protocol(format!(
                        "the server refused {method}: {reason}"
                    )))
                }
                Reply::Retry(reason) => {
                    retries += 1;
                    if retries > 100 {
                        return Err(BotSideError::protocol(format!(
                            "the server keeps answering retry to {method}: {reason}"
                        )));
                    }
                    sleep(Duration::from_millis(100));
                }
            }
        }
    }

    fn status(&self, session: &str) -> Result<Status, BotSideError> {
        Ok(parse_status(
            &self.call_ok("status", &json!({ "session": session }))?,
        )?)
    }
}

// ---------------------------------------------------------------------------
// Playing

fn deliver(strategy: &mut dyn Strategy<SkullWhist>, view: &mut GameView) {
    for e in view.take_events() {
        strategy.notify(&e);
    }
}

/// Plays `strategy` through the REST API at `opts.url` as the bot
/// `opts.name`: registers it (a taken name is fine: it may be this bot's),
/// logs in, and plays `opts.games` games (or until an error). `log` gets one
/// line per game and a few about the session.
pub fn play_rest(
    mut strategy: Box<dyn Strategy<SkullWhist>>,
    opts: &RestOptions,
    mut log: impl FnMut(&str),
) -> Result<RestSummary, BotSideError> {
    let api = Api::new(parse_url(&opts.url)?, REPLY_TIMEOUT)?;
    let credentials = json!({ "name": opts.name, "password": opts.password });

    // Register; failure is fine (most often: the name is already ours).
    let refused = match api.call("register", &credentials)? {
        Reply::Success(fields) => {
            let id = int_field(&fields, "id")?
                .map_or_else(|| "with no id".to_string(), |id| format!("as bot {id}"));
            log(&format!("registered '{}' {id}", opts.name));
            None
        }
        Reply::Failure(reason) | Reply::Retry(reason) => {
            log(&format!("register: {reason} (logging in anyway)"));
            Some(reason)
        }
    };
    // Log in; failure ends the run.
    let fields = match api.call("login", &credentials)? {
        Reply::Success(fields) => fields,
        Reply::Failure(reason) | Reply::Retry(reason) => match refused {
            Some(why) => {
                return Err(BotSideError::protocol(format!(
                    "cannot log in as '{}': {reason} (registering it failed too: {why})",
                    opts.name
                )))
            }
            None => {
                return Err(BotSideError::protocol(format!(
                    "cannot log in as '{}': {reason}",
                    opts.name
                )))
            }
        },
    };
    let session = match fields.get("session") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(BotSideError::protocol("the login reply has no session")),
    };
    let me = required_int(&fields, "id")?;
    log(&format!("logged in as '{}' (bot {me})", opts.name));
    let session_body = json!({ "session": session });

    let mut rng = bot_rng(opts.seed);
    let mut summary = RestSummary::default();
    while opts.games.is_none_or(|n| summary.games < n) {
        // Join a game: new-game waits for an opponent and may ask to retry.
        let fields = loop {
            match api.call("new-game", &session_body)? {
                Reply::Success(fields) => break fields,
                Reply::Retry(_) => {}
                Reply::Failure(reason) => {
                    return Err(BotSideError::protocol(format!(
                        "the server refused new-game: {reason}"
                    )))
                }
            }
        };
        let game = required_int(&fields, "game")?;
        let opponent = required_int(&fields, "opponent")?;
        let mut view = GameView::new(parse_cards(&fields)?);
        strategy.new_game(ME, &SkullWhistVariant {}, 2);
        deliver(strategy.as_mut(), &mut view);

        // Bid.
        let (obs, legal) = view.bid_turn();
        let bid = match strategy.act(&obs, &legal, &mut rng) {
            SkullWhistAction::Bid(n) if (1..=TRICKS).contains(&n) => n,
            other => {
                return Err(BotSideError::protocol(format!(
                    "the strategy answered '{other}' when asked for a bid"
                )))
            }
        };
        api.call_ok("bid", &json!({ "session": session, "bid": bid }))
            .at(|| format!("game {game}"))?;
        view.record_bid(bid);

        // Play until status shows that the game is over.
        loop {
            let status = api.status(&session)?;
            if status.game != Some(game) {
                break;
            }
            view.update(&status)
                .at(|| format!("game {game}: the server's status disagrees"))?;
            if !status.your_turn {
                sleep(POLL_INTERVAL);
                continue;
            }
            deliver(strategy.as_mut(), &mut view);
            let (obs, legal) = view.play_turn();
            let action = strategy.act(&obs, &legal, &mut rng);
            let card = match action {
                SkullWhistAction::Play(c) if legal.contains(&action) => c,
                other => {
                    return Err(BotSideError::protocol(format!(
                    "game {game}: the strategy answered '{other}', which is not legal in round {}",
                    obs.trick
                )))
                }
            };
            api.call_ok(
                "play",
                &json!({ "session": session, "card": card.to_string() }),
            )
            .at(|| format!("game {game}, round {}", obs.trick))?;
            view.record_play(card)?;
        }
        summary.games += 1;

        // The result, from the game's record.
        let head = format!(
            "game {game} against bot {opponent}: bid {bid}, opponent bid {}",
            view.opponent_bid()
                .map_or_else(|| "unknown".to_string(), |b| b.to_string())
        );
        match api.call("old-game", &json!({ "session": session, "game": game }))? {
            Reply::Success(record) => {
                let result = view.finish(&record, me)?;
                summary.count(result);
                deliver(strategy.as_mut(), &mut view);
                log(&format!("{head}; {result}"));
            }
            Reply::Failure(reason) | Reply::Retry(reason) => {
                log(&format!("{head}; no result: {reason}"));
            }
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

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
