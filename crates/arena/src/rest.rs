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
//! The server only sends cards and a status, so [`GameView`] rebuilds the
//! [`SkullWhistObservation`] a strategy expects (hand, bids, trick, leader,
//! led card, tricks won and the full trick history) and the events it would
//! see in a local match. In that view this bot is always seat 0 and the
//! opponent seat 1, whatever the server's seat order.
//!
//! The HTTP side is a minimal HTTP/1.1 client on [`std::net::TcpStream`]: JSON
//! POSTs with `Content-Length`, one kept-alive connection with `TCP_NODELAY`,
//! connect/read/write timeouts, a cap on the reply size, `Content-Length` or
//! chunked replies, and one reconnection when a kept-alive connection turns
//! out to have been closed by the server.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::thread::sleep;
use std::time::Duration;

use anyhow::{anyhow, bail, Context as _};
use croupier_bots::{bot_rng, Strategy};
use croupier_rules::skullwhist::{
    trick_winner, Card, Phase, SkullWhist, SkullWhistAction, SkullWhistEvent,
    SkullWhistObservation, SkullWhistVariant, Trick, TRICKS,
};
use croupier_rules::Seat;
use serde_json::{json, Map, Value};

/// This bot's seat in its own view of a game.
pub const ME: Seat = Seat(0);
/// The opponent's seat in this bot's view of a game.
pub const OPPONENT: Seat = Seat(1);

/// Pause between two `status` requests while waiting for the turn.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Time to open a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time to wait for a reply: `new-game` holds the request for about 30 s
/// before it answers `retry`, so this is well above that.
pub const READ_TIMEOUT: Duration = Duration::from_secs(120);
/// Time to send a request.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest reply body accepted.
pub const MAX_BODY: usize = 1 << 20;
/// Largest status line plus headers accepted.
pub const MAX_HEAD: usize = 16 * 1024;

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
// URL and HTTP/1.1

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
pub fn parse_url(url: &str) -> anyhow::Result<ServerUrl> {
    let text = url.trim();
    let rest = match text.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("https") => bail!(
            "'{url}': this client speaks plain HTTP only; use an http:// URL (through a local TLS proxy if need be)"
        ),
        Some((scheme, _)) => bail!("'{url}': unsupported scheme '{scheme}' (expected http://)"),
        None => text,
    };
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if path.contains(['?', '#']) {
        bail!("'{url}': a server URL has no query or fragment");
    }
    if authority.contains('@') {
        bail!("'{url}': user names and passwords in the URL are not supported");
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| anyhow!("'{url}': unclosed '[' in the address"))?;
        match after {
            "" => (host, None),
            p => match p.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None => bail!("'{url}': unexpected '{p}' after the address"),
            },
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        bail!("'{url}': no host");
    }
    let port = match port {
        None => 80,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| anyhow!("'{url}': '{p}' is not a port"))?,
    };
    Ok(ServerUrl {
        host: host.to_string(),
        port,
        base: path.trim_end_matches('/').to_string(),
    })
}

/// The bytes of a JSON POST request.
pub fn encode_post(host: &str, path: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: croupier-bot\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// A reply read from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Body (chunked encoding removed).
    pub body: Vec<u8>,
    /// Whether the connection may carry another request.
    pub keep_alive: bool,
}

/// Why a reply could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The connection ended before the first byte of a reply: on a
    /// kept-alive connection, the server had closed it while it was idle.
    #[error("the server closed the connection before replying")]
    Closed,
    /// A network error.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Not HTTP as expected.
    #[error("bad HTTP reply: {0}")]
    Protocol(String),
    /// The reply is larger than the cap.
    #[error("the reply is larger than {0} bytes")]
    TooLarge(usize),
}

fn protocol(msg: impl Into<String>) -> HttpError {
    HttpError::Protocol(msg.into())
}

/// Reads one line ending in `\n` (without the line ending), at most `limit`
/// bytes. `Ok(None)` at end of input before any byte.
fn read_line_limited<R: BufRead>(r: &mut R, limit: usize) -> Result<Option<String>, HttpError> {
    let mut line = Vec::new();
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if buf.is_empty() {
            if line.is_empty() {
                return Ok(None);
            }
            return Err(protocol("the connection ended inside a line"));
        }
        let (take, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        line.extend_from_slice(&buf[..take]);
        r.consume(take);
        if line.len() > limit {
            return Err(protocol(format!(
                "a header line is longer than {limit} bytes"
            )));
        }
        if done {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return String::from_utf8(line)
                .map(Some)
                .map_err(|_| protocol("a header line is not UTF-8"));
        }
    }
}

fn read_exact_capped<R: Read>(r: &mut R, n: usize, out: &mut Vec<u8>) -> Result<(), HttpError> {
    let start = out.len();
    out.resize(start + n, 0);
    r.read_exact(&mut out[start..]).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            protocol("the connection ended inside the body")
        } else {
            HttpError::Io(e)
        }
    })
}

/// Reads one HTTP/1.x reply (skipping `1xx` interim replies), with the
/// status line and headers capped at [`MAX_HEAD`] and the body at `cap`.
pub fn read_response<R: BufRead>(r: &mut R, cap: usize) -> Result<HttpResponse, HttpError> {
    loop {
        let Some(status_line) = read_line_limited(r, MAX_HEAD)? else {
            return Err(HttpError::Closed);
        };
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default();
        let http10 = match version {
            "HTTP/1.1" => false,
            "HTTP/1.0" => true,
            _ => return Err(protocol(format!("unexpected status line '{status_line}'"))),
        };
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .filter(|s| (100..1000).contains(s))
            .ok_or_else(|| protocol(format!("unexpected status line '{status_line}'")))?;
        let mut head = status_line.len();
        let mut length: Option<usize> = None;
        let mut chunked = false;
        let mut keep_alive = !http10;
        loop {
            let line = read_line_limited(r, MAX_HEAD)?
                .ok_or_else(|| protocol("the connection ended inside the headers"))?;
            head += line.len() + 2;
            if head > MAX_HEAD {
                return Err(protocol(format!(
                    "the headers are longer than {MAX_HEAD} bytes"
                )));
            }
            if line.is_empty() {
                break;
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| protocol(format!("bad header line '{line}'")))?;
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                let n: usize = value
                    .parse()
                    .map_err(|_| protocol(format!("bad Content-Length '{value}'")))?;
                if length.is_some_and(|l| l != n) {
                    return Err(protocol("conflicting Content-Length headers"));
                }
                length = Some(n);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                let last = value.rsplit(',').next().unwrap_or_default().trim();
                if last.eq_ignore_ascii_case("chunked") {
                    chunked = true;
                } else {
                    return Err(protocol(format!("unsupported Transfer-Encoding '{value}'")));
                }
            } else if name.eq_ignore_ascii_case("connection") {
                for token in value.split(',').map(str::trim) {
                    if token.eq_ignore_ascii_case("close") {
                        keep_alive = false;
                    } else if token.eq_ignore_ascii_case("keep-alive") {
                        keep_alive = true;
                    }
                }
            }
        }
        if (100..200).contains(&status) {
            continue; // an interim reply (100 Continue): the real one follows
        }
        let mut body = Vec::new();
        if status == 204 || status == 304 {
            // no body
        } else if chunked {
            loop {
                let size_line = read_line_limited(r, MAX_HEAD)?
                    .ok_or_else(|| protocol("the connection ended inside the body"))?;
                let hex = size_line.split(';').next().unwrap_or_default().trim();
                let size = usize::from_str_radix(hex, 16)
                    .map_err(|_| protocol(format!("bad chunk size '{size_line}'")))?;
                if size == 0 {
                    // Trailers, up to the blank line.
                    while !read_line_limited(r, MAX_HEAD)?
                        .ok_or_else(|| protocol("the connection ended inside the trailers"))?
                        .is_empty()
                    {}
                    break;
                }
                if body.len().saturating_add(size) > cap {
                    return Err(HttpError::TooLarge(cap));
                }
                read_exact_capped(r, size, &mut body)?;
                let end = read_line_limited(r, 2)?;
                if end.as_deref() != Some("") {
                    return Err(protocol("a chunk does not end with CRLF"));
                }
            }
        } else if let Some(n) = length {
            if n > cap {
                return Err(HttpError::TooLarge(cap));
            }
            read_exact_capped(r, n, &mut body)?;
        } else {
            // No length: the body runs to the end of the connection.
            Read::take(&mut *r, cap as u64 + 1).read_to_end(&mut body)?;
            if body.len() > cap {
                return Err(HttpError::TooLarge(cap));
            }
            keep_alive = false;
        }
        return Ok(HttpResponse {
            status,
            body,
            keep_alive,
        });
    }
}

/// One kept-alive connection to the server, reopened when needed.
#[derive(Debug)]
pub struct HttpClient {
    url: ServerUrl,
    conn: Option<BufReader<TcpStream>>,
    /// Time to wait for each reply.
    pub read_timeout: Duration,
}

impl HttpClient {
    /// A client for `url` (connects on the first request).
    pub fn new(url: ServerUrl) -> Self {
        HttpClient {
            url,
            conn: None,
            read_timeout: READ_TIMEOUT,
        }
    }

    fn connect(&self) -> anyhow::Result<BufReader<TcpStream>> {
        let target = (self.url.host.as_str(), self.url.port);
        let addrs: Vec<_> = target
            .to_socket_addrs()
            .with_context(|| format!("cannot resolve {}", self.url.host))?
            .collect();
        let mut last = None;
        for addr in &addrs {
            match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    stream.set_read_timeout(Some(self.read_timeout))?;
                    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
                    return Ok(BufReader::new(stream));
                }
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => anyhow!(e).context(format!(
                "cannot connect to {}:{}",
                self.url.host, self.url.port
            )),
            None => anyhow!("{} has no address", self.url.host),
        })
    }

    fn exchange(
        conn: &mut BufReader<TcpStream>,
        request: &[u8],
    ) -> Result<HttpResponse, HttpError> {
        conn.get_mut().write_all(request)?;
        conn.get_mut().flush()?;
        read_response(conn, MAX_BODY)
    }

    /// POSTs `body` as JSON to `path` and returns the reply. A kept-alive
    /// connection that the server closed meanwhile is reopened once.
    pub fn post(&mut self, path: &str, body: &[u8]) -> anyhow::Result<HttpResponse> {
        let request = encode_post(&self.url.host_header(), path, body);
        let mut retried = false;
        loop {
            let reused = self.conn.is_some();
            let mut conn = match self.conn.take() {
                Some(c) => c,
                None => self.connect()?,
            };
            match Self::exchange(&mut conn, &request) {
                Ok(reply) => {
                    if reply.keep_alive {
                        self.conn = Some(conn);
                    }
                    return Ok(reply);
                }
                Err(e) if reused && !retried && stale(&e) => retried = true,
                Err(e) => {
                    return Err(
                        anyhow!(e).context(format!("POST {path} to {}", self.url.host_header()))
                    )
                }
            }
        }
    }
}

/// Whether an error means that a kept-alive connection was already closed
/// (so the request never reached the server and may be sent again).
fn stale(e: &HttpError) -> bool {
    match e {
        HttpError::Closed => true,
        HttpError::Io(e) => matches!(
            e.kind(),
            io::ErrorKind::BrokenPipe
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
        ),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// The API's replies

/// An API reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `result: success`, with the reply's other fields.
    Success(Map<String, Value>),
    /// `result: retry`, with the reason.
    Retry(String),
    /// `result: failure`, with the reason.
    Failure(String),
}

/// Reads an API reply from an HTTP reply.
pub fn parse_reply(method: &str, reply: &HttpResponse) -> anyhow::Result<Reply> {
    let text = String::from_utf8_lossy(&reply.body);
    if reply.status != 200 {
        let snippet: String = text.chars().take(200).collect();
        bail!(
            "{method}: HTTP {} from the server (is this a SkullWhist server?): {snippet}",
            reply.status
        );
    }
    let value: Value = serde_json::from_slice(&reply.body).with_context(|| {
        let snippet: String = text.chars().take(200).collect();
        format!("{method}: the reply is not JSON: {snippet}")
    })?;
    let Value::Object(mut fields) = value else {
        bail!("{method}: the reply is not a JSON object: {text}");
    };
    let reason = |f: &Map<String, Value>| match f.get("reason") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "no reason given".to_string(),
    };
    match fields.get("result").and_then(Value::as_str) {
        Some("success") => {
            fields.remove("result");
            Ok(Reply::Success(fields))
        }
        Some("retry") => Ok(Reply::Retry(reason(&fields))),
        Some("failure") => Ok(Reply::Failure(reason(&fields))),
        _ => bail!("{method}: the reply has no 'result' of success, failure or retry: {text}"),
    }
}

/// An integer field: `None` when null or absent; numeric strings accepted.
pub fn int_field(fields: &Map<String, Value>, key: &str) -> anyhow::Result<Option<i64>> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| anyhow!("'{key}' is not an integer: {n}")),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| anyhow!("'{key}' is not an integer: '{s}'")),
        Some(v) => bail!("'{key}' is not an integer: {v}"),
    }
}

fn required_int(fields: &Map<String, Value>, key: &str) -> anyhow::Result<i64> {
    int_field(fields, key)?.ok_or_else(|| anyhow!("the reply has no '{key}'"))
}

fn card_field(fields: &Map<String, Value>, key: &str) -> anyhow::Result<Option<Card>> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => s.parse().map(Some).map_err(|e| anyhow!("'{key}': {e}")),
        Some(v) => bail!("'{key}' is not a card: {v}"),
    }
}

fn bool_field(fields: &Map<String, Value>, key: &str) -> anyhow::Result<Option<bool>> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => bail!("'{key}' is not true or false: {v}"),
    }
}

fn small(value: Option<i64>, key: &str) -> anyhow::Result<Option<u8>> {
    value
        .map(|v| u8::try_from(v).map_err(|_| anyhow!("'{key}' is out of range: {v}")))
        .transpose()
}

/// A `status` reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// The game, or `None` outside a game.
    pub game: Option<i64>,
    /// The current trick, 1..=13.
    pub round: Option<u8>,
    /// Whether this bot must play now.
    pub your_turn: bool,
    /// The opponent's bot id.
    pub opponent: Option<i64>,
    /// The opponent's bid (once both have bid).
    pub opponent_bid: Option<u8>,
    /// The opponent's card in the previous trick.
    pub opponent_previous_card: Option<Card>,
    /// The opponent's card in the current trick (when it led).
    pub opponent_current_card: Option<Card>,
    /// Whether this bot took the previous trick (`None` in trick 1).
    pub you_won_previous_round: Option<bool>,
}

/// Reads the fields of a successful `status` reply.
pub fn parse_status(fields: &Map<String, Value>) -> anyhow::Result<Status> {
    Ok(Status {
        game: int_field(fields, "game")?,
        round: small(int_field(fields, "round")?, "round")?,
        your_turn: bool_field(fields, "your-turn")?.unwrap_or(false),
        opponent: int_field(fields, "opponent")?,
        opponent_bid: small(int_field(fields, "opponent-bid")?, "opponent-bid")?,
        opponent_previous_card: card_field(fields, "opponent-previous-card")?,
        opponent_current_card: card_field(fields, "opponent-current-card")?,
        you_won_previous_round: bool_field(fields, "you-won-previous-round")?,
    })
}

/// Reads the 13 cards of a `new-game` reply.
pub fn parse_cards(fields: &Map<String, Value>) -> anyhow::Result<Vec<Card>> {
    let Some(Value::Array(cards)) = fields.get("cards") else {
        bail!("the new-game reply has no list of 'cards'");
    };
    let mut hand = cards
        .iter()
        .map(|c| match c {
            Value::String(s) => s.parse::<Card>().map_err(|e| anyhow!("'cards': {e}")),
            other => Err(anyhow!("'cards' holds {other}, not a card")),
        })
        .collect::<anyhow::Result<Vec<Card>>>()?;
    hand.sort();
    let before = hand.len();
    hand.dedup();
    if hand.len() != usize::from(TRICKS) || before != hand.len() {
        bail!("new-game dealt {before} cards, not 13 distinct ones");
    }
    Ok(hand)
}

// ---------------------------------------------------------------------------
// This bot's view of a game

/// This bot's side of a game, rebuilt from the `new-game` and `status`
/// replies: what [`SkullWhistObservation`] needs, and the events the bot
/// would have seen in a local match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameView {
    hand: Vec<Card>,
    my_bid: Option<u8>,
    opponent_bid: Option<u8>,
    history: Vec<Trick>,
    tricks_won: [u8; 2],
    /// The card this bot led to the current trick, while the opponent has
    /// not answered.
    my_lead: Option<Card>,
    /// The card the opponent led to the current trick.
    their_lead: Option<Card>,
    /// Whether the first leader (the `Bids` event) is known yet.
    bids_announced: bool,
    events: Vec<SkullWhistEvent>,
}

impl GameView {
    /// A new game with the dealt hand.
    pub fn new(mut hand: Vec<Card>) -> Self {
        hand.sort();
        let events = vec![SkullWhistEvent::Deal {
            seat: ME,
            hand: hand.clone(),
        }];
        GameView {
            hand,
            my_bid: None,
            opponent_bid: None,
            history: Vec::with_capacity(usize::from(TRICKS)),
            tricks_won: [0; 2],
            my_lead: None,
            their_lead: None,
            bids_announced: false,
            events,
        }
    }

    /// The events learnt since the last call, in game order.
    pub fn take_events(&mut self) -> Vec<SkullWhistEvent> {
        std::mem::take(&mut self.events)
    }

    /// Finished tricks so far.
    pub fn history(&self) -> &[Trick] {
        &self.history
    }

    /// Cards still in hand.
    pub fn hand(&self) -> &[Card] {
        &self.hand
    }

    /// The observation and legal actions for the bid.
    pub fn bid_turn(&self) -> (SkullWhistObservation, Vec<SkullWhistAction>) {
        let obs = SkullWhistObservation {
            seat: ME,
            phase: Phase::Bidding,
            hand: self.hand.clone(),
            my_bid: None,
            opponent_bid: None,
            trick: 0,
            leader: None,
            lead_card: None,
            to_act: true,
            tricks_won: [0, 0],
            history: Vec::new(),
        };
        (obs, (1..=TRICKS).map(SkullWhistAction::Bid).collect())
    }

    /// Notes the bid the server accepted.
    pub fn record_bid(&mut self, bid: u8) {
        self.my_bid = Some(bid);
        self.events.push(SkullWhistEvent::Sealed { seat: ME, bid });
    }

    fn complete_trick(&mut self, leader: Seat, lead: Card, follow: Card) {
        let winner = trick_winner(leader, lead, follow);
        self.history.push(Trick {
            leader,
            lead,
            follow,
            winner,
        });
        self.tricks_won[winner.index()] += 1;
        self.events.push(SkullWhistEvent::TrickWon {
            trick: self.history.len() as u8,
            winner,
        });
        self.my_lead = None;
        self.their_lead = None;
    }

    fn announce_bids(&mut self, first_leader: Seat) {
        if self.bids_announced {
            return;
        }
        self.bids_announced = true;
        if let (Some(mine), Some(theirs)) = (self.my_bid, self.opponent_bid) {
            self.events.push(SkullWhistEvent::Bids {
                bids: [mine, theirs],
                leader: first_leader,
            });
        }
    }

    /// Takes in a `status` of this game: completes the trick this bot led
    /// once the opponent has answered, notes the opponent's bid and led
    /// card, and checks that the server agrees with this view.
    pub fn update(&mut self, status: &Status) -> anyhow::Result<()> {
        if self.opponent_bid.is_none() {
            self.opponent_bid = status.opponent_bid;
        }
        let Some(round) = status.round else {
            bail!("status shows a game but no round");
        };
        let next = self.history.len() as u8 + 1;
        if round == next + 1 {
            // The opponent answered the trick this bot led.
            let Some(lead) = self.my_lead else {
                bail!(
                    "status skipped to round {round} while this bot had not played in round {next}"
                );
            };
            let follow = status.opponent_previous_card.ok_or_else(|| {
                anyhow!("status shows round {round} but no opponent-previous-card")
            })?;
            self.announce_bids(ME);
            self.events.push(SkullWhistEvent::Played {
                seat: OPPONENT,
                card: follow,
            });
            self.complete_trick(ME, lead, follow);
        } else if round != next {
            bail!("status shows round {round} but this bot is in round {next}");
        }
        // The server's account of the previous trick must match this view.
        if let Some(last) = self.history.last() {
            let theirs = if last.leader == OPPONENT {
                last.lead
            } else {
                last.follow
            };
            if status.opponent_previous_card.is_some_and(|c| c != theirs) {
                bail!(
                    "status says the opponent played {} in round {}, but it played {theirs}",
                    status
                        .opponent_previous_card
                        .map(|c| c.to_string())
                        .unwrap_or_default(),
                    self.history.len()
                );
            }
            if let Some(won) = status.you_won_previous_round {
                if won != (last.winner == ME) {
                    bail!(
                        "status says this bot {} round {}, but by the rules it {}",
                        if won { "won" } else { "lost" },
                        self.history.len(),
                        if won { "lost" } else { "won" }
                    );
                }
            }
        }
        if status.your_turn {
            if self.my_bid.is_none() {
                bail!("status says it is this bot's turn to play before it has bid");
            }
            if self.my_lead.is_some() {
                bail!("status says it is this bot's turn, but it has played in round {round}");
            }
            match status.opponent_current_card {
                Some(card) => {
                    if self.their_lead.is_some_and(|c| c != card) {
                        bail!("the opponent's card in round {round} changed");
                    }
                    if self.their_lead.is_none() {
                        self.announce_bids(OPPONENT);
                        self.their_lead = Some(card);
                        self.events.push(SkullWhistEvent::Played {
                            seat: OPPONENT,
                            card,
                        });
                    }
                }
                None => self.announce_bids(ME),
            }
        }
        Ok(())
    }

    /// The observation and legal cards when it is this bot's turn (after
    /// [`GameView::update`] with a status that says so).
    pub fn play_turn(&self) -> (SkullWhistObservation, Vec<SkullWhistAction>) {
        let leader = if self.their_lead.is_some() {
            OPPONENT
        } else {
            ME
        };
        let obs = SkullWhistObservation {
            seat: ME,
            phase: Phase::Playing,
            hand: self.hand.clone(),
            my_bid: self.my_bid,
            opponent_bid: self.opponent_bid,
            trick: self.history.len() as u8 + 1,
            leader: Some(leader),
            lead_card: self.their_lead,
            to_act: true,
            tricks_won: self.tricks_won,
            history: self.history.clone(),
        };
        let legal = legal_cards(&self.hand, self.their_lead)
            .into_iter()
            .map(SkullWhistAction::Play)
            .collect();
        (obs, legal)
    }

    /// Notes a card the server accepted: it leaves the hand, and completes
    /// the trick when the opponent led.
    pub fn record_play(&mut self, card: Card) -> anyhow::Result<()> {
        let Some(i) = self.hand.iter().position(|c| *c == card) else {
            bail!("{card} is not in this bot's hand");
        };
        self.hand.remove(i);
        self.events.push(SkullWhistEvent::Played { seat: ME, card });
        match self.their_lead {
            Some(lead) => self.complete_trick(OPPONENT, lead, card),
            None => self.my_lead = Some(card),
        }
        Ok(())
    }

    /// Takes in the finished game's `old-game` record: the last trick if
    /// this bot led it, the score or forfeit; returns the result for the
    /// bot with id `me`.
    pub fn finish(&mut self, record: &Map<String, Value>, me: i64) -> anyhow::Result<GameResult> {
        let bot1 = required_int(record, "bot1")?;
        let bot2 = required_int(record, "bot2")?;
        let (us, them) = if bot1 == me {
            ("1", "2")
        } else if bot2 == me {
            ("2", "1")
        } else {
            bail!("old-game: this bot ({me}) did not play this game ({bot1} against {bot2})");
        };
        // The trick this bot led last, which status no longer shows.
        if let Some(lead) = self.my_lead {
            let number = self.history.len() + 1;
            let follow = record
                .get("rounds")
                .and_then(Value::as_array)
                .and_then(|rounds| {
                    rounds
                        .iter()
                        .find(|r| r.get("round").and_then(Value::as_u64) == Some(number as u64))
                })
                .and_then(|r| r.get("follower-card"))
                .and_then(Value::as_str)
                .and_then(|c| c.parse::<Card>().ok());
            if let Some(follow) = follow {
                self.events.push(SkullWhistEvent::Played {
                    seat: OPPONENT,
                    card: follow,
                });
                self.complete_trick(ME, lead, follow);
            }
        }
        if let Some(by) = int_field(record, "forfeited_by")? {
            let seat = if by == me { ME } else { OPPONENT };
            self.events.push(SkullWhistEvent::Forfeit { seat });
            return Ok(GameResult::Forfeit { by_me: by == me });
        }
        let mine = required_int(record, &format!("score{us}"))?;
        let theirs = required_int(record, &format!("score{them}"))?;
        let tricks = [
            small(int_field(record, &format!("tricks{us}"))?, "tricks")?.unwrap_or(0),
            small(int_field(record, &format!("tricks{them}"))?, "tricks")?.unwrap_or(0),
        ];
        self.events.push(SkullWhistEvent::Scored {
            tricks,
            scores: [mine, theirs],
        });
        Ok(GameResult::Scored {
            mine,
            theirs,
            tricks: tricks[0],
        })
    }
}

/// The cards that may be played: the led suit if the hand holds it, else
/// any card (the leader, `lead == None`, plays any card).
pub fn legal_cards(hand: &[Card], lead: Option<Card>) -> Vec<Card> {
    if let Some(lead) = lead {
        let same: Vec<Card> = hand
            .iter()
            .copied()
            .filter(|c| c.suit() == lead.suit())
            .collect();
        if !same.is_empty() {
            return same;
        }
    }
    hand.to_vec()
}

/// How a finished game ended for this bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameResult {
    /// Both played to the end.
    Scored {
        /// This bot's score.
        mine: i64,
        /// The opponent's score.
        theirs: i64,
        /// Tricks this bot took.
        tricks: u8,
    },
    /// A bot forfeited.
    Forfeit {
        /// Whether it was this bot.
        by_me: bool,
    },
}

impl GameResult {
    /// Counts the result in a summary.
    pub fn tally(self, summary: &mut RestSummary) {
        match self {
            GameResult::Scored { mine, theirs, .. } => match mine.cmp(&theirs) {
                std::cmp::Ordering::Greater => summary.wins += 1,
                std::cmp::Ordering::Less => summary.losses += 1,
                std::cmp::Ordering::Equal => summary.ties += 1,
            },
            GameResult::Forfeit { by_me: true } => summary.forfeits += 1,
            GameResult::Forfeit { by_me: false } => summary.wins += 1,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameResult::Scored {
                mine,
                theirs,
                tricks,
            } => {
                let verdict = match mine.cmp(theirs) {
                    std::cmp::Ordering::Greater => "won",
                    std::cmp::Ordering::Less => "lost",
                    std::cmp::Ordering::Equal => "tied",
                };
                write!(f, "took {tricks} tricks, {mine} to {theirs}: {verdict}")
            }
            GameResult::Forfeit { by_me: true } => write!(f, "forfeited by this bot"),
            GameResult::Forfeit { by_me: false } => write!(f, "forfeited by the opponent: won"),
        }
    }
}

// ---------------------------------------------------------------------------
// Playing

/// The API over one connection.
#[derive(Debug)]
struct Api {
    http: HttpClient,
}

impl Api {
    fn call(&mut self, method: &str, body: &Value) -> anyhow::Result<Reply> {
        let bytes = serde_json::to_vec(body)?;
        let path = self.http.url.method_path(method);
        let reply = self.http.post(&path, &bytes)?;
        parse_reply(method, &reply)
    }

    /// Calls until the server stops answering `retry` (only `new-game`
    /// should) and turns a failure into an error.
    fn call_ok(&mut self, method: &str, body: &Value) -> anyhow::Result<Map<String, Value>> {
        let mut retries = 0;
        loop {
            match self.call(method, body)? {
                Reply::Success(fields) => return Ok(fields),
                Reply::Failure(reason) => bail!("the server refused {method}: {reason}"),
                Reply::Retry(reason) => {
                    retries += 1;
                    if retries > 100 {
                        bail!("the server keeps answering retry to {method}: {reason}");
                    }
                    sleep(Duration::from_millis(100));
                }
            }
        }
    }

    fn status(&mut self, session: &str) -> anyhow::Result<Status> {
        parse_status(&self.call_ok("status", &json!({ "session": session }))?)
    }
}

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
) -> anyhow::Result<RestSummary> {
    let url = parse_url(&opts.url)?;
    let mut api = Api {
        http: HttpClient::new(url),
    };
    let credentials = json!({ "name": opts.name, "password": opts.password });

    // Register; failure is fine (most often: the name is already ours).
    let refused = match api.call("register", &credentials)? {
        Reply::Success(fields) => {
            log(&format!(
                "registered '{}' as bot {}",
                opts.name,
                int_field(&fields, "id")?.unwrap_or_default()
            ));
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
            Some(why) => bail!(
                "cannot log in as '{}': {reason} (registering it failed too: {why})",
                opts.name
            ),
            None => bail!("cannot log in as '{}': {reason}", opts.name),
        },
    };
    let session = match fields.get("session") {
        Some(Value::String(s)) => s.clone(),
        _ => bail!("the login reply has no session"),
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
                Reply::Failure(reason) => bail!("the server refused new-game: {reason}"),
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
            other => bail!("the strategy answered '{other}' when asked for a bid"),
        };
        api.call_ok("bid", &json!({ "session": session, "bid": bid }))
            .with_context(|| format!("game {game}"))?;
        view.record_bid(bid);

        // Play until status shows that the game is over.
        loop {
            let status = api.status(&session)?;
            if status.game != Some(game) {
                break;
            }
            view.update(&status)
                .with_context(|| format!("game {game}: the server's status disagrees"))?;
            if !status.your_turn {
                sleep(POLL_INTERVAL);
                continue;
            }
            deliver(strategy.as_mut(), &mut view);
            let (obs, legal) = view.play_turn();
            let action = strategy.act(&obs, &legal, &mut rng);
            let card = match action {
                SkullWhistAction::Play(c) if legal.contains(&action) => c,
                other => bail!(
                    "game {game}: the strategy answered '{other}', which is not legal in round {}",
                    obs.trick
                ),
            };
            api.call_ok(
                "play",
                &json!({ "session": session, "card": card.to_string() }),
            )
            .with_context(|| format!("game {game}, round {}", obs.trick))?;
            view.record_play(card)?;
        }
        summary.games += 1;

        // The result, from the game's record.
        let head = format!(
            "game {game} against bot {opponent}: bid {bid}, opponent bid {}",
            view.opponent_bid
                .map_or_else(|| "unknown".to_string(), |b| b.to_string())
        );
        match api.call("old-game", &json!({ "session": session, "game": game }))? {
            Reply::Success(record) => {
                let result = view.finish(&record, me)?;
                result.tally(&mut summary);
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
    use std::io::Cursor;
    use std::net::TcpListener;

    use super::*;

    fn c(s: &str) -> Card {
        s.parse().unwrap()
    }

    fn cards(s: &str) -> Vec<Card> {
        s.split_whitespace().map(c).collect()
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

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

    #[test]
    fn posts_carry_length_host_and_json() {
        let req = encode_post("h:1", "/api/bid/", br#"{"bid":3}"#);
        let text = String::from_utf8(req).unwrap();
        assert!(text.starts_with("POST /api/bid/ HTTP/1.1\r\nHost: h:1\r\n"));
        assert!(text.contains("\r\nContent-Type: application/json\r\n"));
        assert!(text.contains("\r\nContent-Length: 9\r\n"));
        assert!(text.ends_with("\r\n\r\n{\"bid\":3}"));
    }

    fn read(raw: &str) -> Result<HttpResponse, HttpError> {
        read_response(&mut Cursor::new(raw.as_bytes().to_vec()), 64)
    }

    #[test]
    fn replies_with_content_length_keep_the_connection() {
        let raw = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\nnullHTTP/1.1";
        let r = read(raw).unwrap();
        assert_eq!(
            (r.status, r.body.as_slice(), r.keep_alive),
            (200, &b"null"[..], true)
        );
    }

    #[test]
    fn two_replies_in_a_row_are_read_apart() {
        let raw = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n[1]";
        let mut cur = Cursor::new(raw.as_bytes().to_vec());
        assert_eq!(read_response(&mut cur, 64).unwrap().body, b"{}");
        assert_eq!(read_response(&mut cur, 64).unwrap().body, b"[1]");
        assert!(matches!(
            read_response(&mut cur, 64),
            Err(HttpError::Closed)
        ));
    }

    #[test]
    fn chunked_replies_and_interim_replies_are_read() {
        let raw = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n";
        let r = read(raw).unwrap();
        assert_eq!(r.body, b"abc0123456789");
        assert!(r.keep_alive);
    }

    #[test]
    fn close_and_http10_end_keep_alive() {
        let r = read("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert!(!r.keep_alive);
        let r = read("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert!(!r.keep_alive);
        let r =
            read("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert!(r.keep_alive);
        // No length: the body runs to the end and the connection is spent.
        let r = read("HTTP/1.1 200 OK\r\n\r\n{\"a\":1}").unwrap();
        assert_eq!(
            (r.body.as_slice(), r.keep_alive),
            (&b"{\"a\":1}"[..], false)
        );
    }

    #[test]
    fn oversized_truncated_and_garbled_replies_are_errors() {
        let big = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n{}",
            "x".repeat(65)
        );
        assert!(matches!(read(&big), Err(HttpError::TooLarge(64))));
        let big = format!("HTTP/1.1 200 OK\r\n\r\n{}", "x".repeat(100));
        assert!(matches!(read(&big), Err(HttpError::TooLarge(64))));
        let big = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n41\r\n";
        assert!(matches!(read(big), Err(HttpError::TooLarge(64))));
        let long_header = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "y".repeat(MAX_HEAD));
        assert!(matches!(read(&long_header), Err(HttpError::Protocol(_))));
        for raw in [
            "",
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n",
            "SSH-2.0-OpenSSH\r\n",
            "HTTP/1.1 abc OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n",
        ] {
            let r = read(raw);
            assert!(r.is_err(), "{raw:?} gave {r:?}");
        }
        assert!(matches!(read(""), Err(HttpError::Closed)));
    }

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
        let mut client = HttpClient::new(url);
        for i in 0..3 {
            let r = client
                .post("/api/status/", format!("{{\"n\":{i}}}").as_bytes())
                .unwrap();
            assert_eq!(
                parse_reply("status", &r).unwrap(),
                Reply::Success(Map::new())
            );
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
        let mut client = HttpClient::new(url);
        let e = client.post("/api/status/", b"{}").unwrap_err();
        assert!(format!("{e:#}").contains("POST /api/status/"), "{e:#}");
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
        let mut client = HttpClient::new(parse_url(&format!("127.0.0.1:{port}")).unwrap());
        let e = client.post("/api/login/", b"{}").unwrap_err();
        assert!(format!("{e:#}").contains("cannot connect"), "{e:#}");
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
        let mut client = HttpClient::new(parse_url(&format!("127.0.0.1:{port}")).unwrap());
        client.read_timeout = Duration::from_millis(100);
        let t = std::time::Instant::now();
        assert!(client.post("/api/status/", b"{}").is_err());
        assert!(t.elapsed() < Duration::from_millis(450));
        hold.join().unwrap();
    }

    // --- API replies -----------------------------------------------------

    fn reply(status: u16, body: &str) -> HttpResponse {
        HttpResponse {
            status,
            body: body.as_bytes().to_vec(),
            keep_alive: true,
        }
    }

    #[test]
    fn replies_are_success_retry_or_failure() {
        let r = parse_reply(
            "login",
            &reply(200, r#"{"result":"success","id":3,"session":"ab"}"#),
        );
        let Reply::Success(f) = r.unwrap() else {
            panic!()
        };
        assert_eq!(int_field(&f, "id").unwrap(), Some(3));
        assert!(!f.contains_key("result"));
        assert_eq!(
            parse_reply(
                "new-game",
                &reply(200, r#"{"result":"retry","reason":"wait"}"#)
            )
            .unwrap(),
            Reply::Retry("wait".into())
        );
        assert_eq!(
            parse_reply("bid", &reply(200, r#"{"result":"failure","reason":"no"}"#)).unwrap(),
            Reply::Failure("no".into())
        );
        for (status, body) in [
            (404, "<html>"),
            (200, "not json"),
            (200, "[1]"),
            (200, r#"{"result":"maybe"}"#),
        ] {
            assert!(
                parse_reply("x", &reply(status, body)).is_err(),
                "{status} {body}"
            );
        }
    }

    #[test]
    fn status_fields_are_read_including_nulls_and_numeric_strings() {
        let s = parse_status(&obj(json!({
            "game": 22, "round": "2", "your-turn": true, "opponent": 1,
            "opponent-bid": 10, "opponent-previous-card": "C04",
            "opponent-current-card": "H06", "you-won-previous-round": false,
        })))
        .unwrap();
        assert_eq!(
            s,
            Status {
                game: Some(22),
                round: Some(2),
                your_turn: true,
                opponent: Some(1),
                opponent_bid: Some(10),
                opponent_previous_card: Some(c("C04")),
                opponent_current_card: Some(c("H06")),
                you_won_previous_round: Some(false),
            }
        );
        let none = parse_status(&obj(json!({
            "game": null, "round": null, "your-turn": null, "opponent": null,
            "opponent-bid": null, "opponent-previous-card": null,
            "opponent-current-card": null, "you-won-previous-round": null,
        })))
        .unwrap();
        assert_eq!(none, Status::default());
        assert!(parse_status(&obj(json!({"game": 1, "opponent-current-card": "X99"}))).is_err());
        assert!(parse_status(&obj(json!({"game": 1, "your-turn": "yes"}))).is_err());
        assert!(parse_status(&obj(json!({"game": 1, "round": 300}))).is_err());
    }

    #[test]
    fn new_game_cards_are_sorted_and_checked() {
        let hand = "S13 C01 C03 C05 C09 D01 D06 D10 H01 H08 H10 S02 S03";
        let list: Vec<&str> = hand.split_whitespace().collect();
        let got = parse_cards(&obj(json!({ "cards": list }))).unwrap();
        assert_eq!(got[0], c("C01"));
        assert_eq!(got[12], c("S13"));
        assert!(parse_cards(&obj(json!({"cards": ["C01", "C01"]}))).is_err());
        assert!(parse_cards(&obj(json!({"cards": "C01"}))).is_err());
        assert!(parse_cards(&obj(json!({}))).is_err());
    }

    // --- The view of a game ----------------------------------------------

    #[test]
    fn followers_must_follow_suit_when_they_can() {
        let hand = cards("C03 D06 H08 S02");
        assert_eq!(legal_cards(&hand, Some(c("C04"))), cards("C03"));
        assert_eq!(legal_cards(&hand, Some(c("S13"))), cards("S02"));
        assert_eq!(
            legal_cards(&cards("D06 H08"), Some(c("C04"))),
            cards("D06 H08")
        );
        assert_eq!(legal_cards(&hand, None), hand);
    }

    fn status(round: u8, your_turn: bool) -> Status {
        Status {
            game: Some(22),
            round: Some(round),
            your_turn,
            opponent: Some(1),
            opponent_bid: Some(4),
            ..Status::default()
        }
    }

    const HAND: &str = "C01 C03 C05 C09 D01 D06 D10 H01 H08 H10 S02 S03 S12";

    #[test]
    fn the_view_rebuilds_observations_trick_by_trick() {
        let mut v = GameView::new(cards(HAND));
        let (obs, legal) = v.bid_turn();
        assert_eq!(
            (obs.phase, obs.to_act, legal.len()),
            (Phase::Bidding, true, 13)
        );
        v.record_bid(3);

        // Round 1: waiting for the opponent's bid, then it leads C04.
        let mut s = status(1, false);
        s.opponent_bid = None;
        v.update(&s).unwrap();
        let mut s = status(1, true);
        s.opponent_current_card = Some(c("C04"));
        v.update(&s).unwrap();
        v.update(&s).unwrap(); // polling again changes nothing
        let (obs, legal) = v.play_turn();
        assert_eq!(obs.trick, 1);
        assert_eq!(obs.leader, Some(OPPONENT));
        assert_eq!(obs.lead_card, Some(c("C04")));
        assert_eq!((obs.my_bid, obs.opponent_bid), (Some(3), Some(4)));
        assert_eq!(
            legal,
            cards("C01 C03 C05 C09")
                .into_iter()
                .map(SkullWhistAction::Play)
                .collect::<Vec<_>>()
        );
        // C05 beats C04: this bot leads round 2.
        v.record_play(c("C05")).unwrap();
        assert_eq!(v.history().len(), 1);

        let mut s = status(2, true);
        s.opponent_previous_card = Some(c("C04"));
        s.you_won_previous_round = Some(true);
        v.update(&s).unwrap();
        let (obs, legal) = v.play_turn();
        assert_eq!((obs.trick, obs.leader, obs.lead_card), (2, Some(ME), None));
        assert_eq!(obs.tricks_won, [1, 0]);
        assert_eq!(legal.len(), 12);
        assert_eq!(obs.hand.len(), 12);
        // Lead H08; the opponent trumps with S05 and leads D02 in round 3.
        v.record_play(c("H08")).unwrap();
        let mut s = status(2, false);
        s.opponent_previous_card = Some(c("C04"));
        s.you_won_previous_round = Some(true);
        v.update(&s).unwrap(); // not answered yet
        assert_eq!(v.history().len(), 1);
        let mut s = status(3, false);
        s.opponent_previous_card = Some(c("S05"));
        s.you_won_previous_round = Some(false);
        v.update(&s).unwrap();
        s.your_turn = true;
        s.opponent_current_card = Some(c("D02"));
        v.update(&s).unwrap();
        let (obs, _) = v.play_turn();
        assert_eq!(obs.trick, 3);
        assert_eq!(obs.tricks_won, [1, 1]);
        assert_eq!(
            obs.history,
            vec![
                Trick {
                    leader: OPPONENT,
                    lead: c("C04"),
                    follow: c("C05"),
                    winner: ME
                },
                Trick {
                    leader: ME,
                    lead: c("H08"),
                    follow: c("S05"),
                    winner: OPPONENT
                },
            ]
        );
        assert_eq!(
            (obs.leader, obs.lead_card),
            (Some(OPPONENT), Some(c("D02")))
        );

        // The events a local match would have shown, in order.
        let events = v.take_events();
        let text: Vec<String> = events.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            vec![
                format!("seat 0 is dealt {HAND}"),
                "seat 0 bids 3".into(),
                "bids are 3 and 4; seat 1 leads".into(),
                "seat 1 plays C04".into(),
                "seat 0 plays C05".into(),
                "trick 1 to seat 0".into(),
                "seat 0 plays H08".into(),
                "seat 1 plays S05".into(),
                "trick 2 to seat 1".into(),
                "seat 1 plays D02".into(),
            ]
        );
        assert!(v.take_events().is_empty());
    }

    #[test]
    fn the_view_matches_the_rules_engine_over_whole_games() {
        // Play random games in the engine; feed this bot's (seat 0's) view
        // the statuses the server would send and compare observations.
        use croupier_bots::RandomBot;
        use croupier_rules::{Event as _, Game};
        for seed in 0..40u64 {
            let mut g = SkullWhist::new(&SkullWhistVariant {}, 2, seed).unwrap();
            let mut rng = bot_rng(seed);
            let mut random = RandomBot;
            let mut view = GameView::new(g.observation(ME).hand);
            for seat in [ME, OPPONENT] {
                let legal = g.legal_vec(seat);
                let a = Strategy::<SkullWhist>::act(
                    &mut random,
                    &g.observation(seat),
                    &legal,
                    &mut rng,
                );
                g.apply(seat, a).unwrap();
                if let (SkullWhistAction::Bid(n), true) = (a, seat == ME) {
                    view.record_bid(n);
                }
            }
            while !g.is_over() {
                let seat = g.to_act().first().unwrap();
                let obs = g.observation(ME);
                let hist = g.history();
                let status = Status {
                    game: Some(1),
                    round: Some(hist.len() as u8 + 1),
                    your_turn: seat == ME,
                    opponent: Some(2),
                    opponent_bid: obs.opponent_bid,
                    opponent_previous_card: hist.last().map(|t| {
                        if t.leader == OPPONENT {
                            t.lead
                        } else {
                            t.follow
                        }
                    }),
                    opponent_current_card: obs.lead_card.filter(|_| obs.leader == Some(OPPONENT)),
                    you_won_previous_round: hist.last().map(|t| t.winner == ME),
                };
                view.update(&status).unwrap();
                let legal = g.legal_vec(seat);
                if seat == ME {
                    let (mine, my_legal) = view.play_turn();
                    assert_eq!(mine, obs, "seed {seed}");
                    assert_eq!(my_legal, legal, "seed {seed}");
                }
                let a = Strategy::<SkullWhist>::act(
                    &mut random,
                    &g.observation(seat),
                    &legal,
                    &mut rng,
                );
                g.apply(seat, a).unwrap();
                if let (SkullWhistAction::Play(card), true) = (a, seat == ME) {
                    view.record_play(card).unwrap();
                }
            }
            // The server's record completes a last trick that this bot led.
            let bots = [7i64, 9];
            let scores = g.outcome().unwrap().scores;
            let rounds: Vec<Value> = g
                .history()
                .iter()
                .enumerate()
                .map(|(i, t)| json!({"round": i + 1, "follower-card": t.follow.to_string()}))
                .collect();
            let record = obj(json!({
                "bot1": bots[0], "bot2": bots[1],
                "score1": scores[0], "score2": scores[1],
                "tricks1": g.tricks_won()[0], "tricks2": g.tricks_won()[1],
                "forfeited_by": null, "rounds": rounds,
            }));
            let result = view.finish(&record, 7).unwrap();
            assert_eq!(view.history(), g.history(), "seed {seed}");
            assert_eq!(
                result,
                GameResult::Scored {
                    mine: scores[0],
                    theirs: scores[1],
                    tricks: g.tricks_won()[0]
                }
            );
            // Every public event of the engine, in the engine's order.
            let expected: Vec<SkullWhistEvent> = g
                .events()
                .iter()
                .filter(|e| e.visible_to(ME))
                .cloned()
                .collect();
            assert_eq!(view.take_events(), expected, "seed {seed}");
        }
    }

    #[test]
    fn the_view_refuses_a_server_that_disagrees() {
        let mut v = GameView::new(cards(HAND));
        v.record_bid(2);
        // Round 2 before this bot played in round 1.
        assert!(v.update(&status(2, true)).is_err());

        let mut v = GameView::new(cards(HAND));
        v.record_bid(2);
        v.update(&status(1, true)).unwrap();
        v.record_play(c("H10")).unwrap();
        // It is "our turn" again in round 1.
        assert!(v.clone().update(&status(1, true)).is_err());
        // Round 2 without the opponent's card.
        assert!(v.clone().update(&status(2, true)).is_err());
        // The opponent answered H09 (H10 wins) but the server says we lost.
        let mut s = status(2, true);
        s.opponent_previous_card = Some(c("H09"));
        s.you_won_previous_round = Some(false);
        let e = v.clone().update(&s).unwrap_err();
        assert!(e.to_string().contains("by the rules"), "{e}");
        // Skipping a round.
        let mut s = status(3, true);
        s.opponent_previous_card = Some(c("H09"));
        assert!(v.clone().update(&s).is_err());
        // A card that is not in hand.
        assert!(v.record_play(c("S13")).is_err());
    }

    #[test]
    fn results_are_tallied_from_old_game() {
        let mut v = GameView::new(cards(HAND));
        let record = obj(json!({
            "bot1": 1, "bot2": 3, "score1": -100, "score2": 35,
            "tricks1": 5, "tricks2": 8, "forfeited_by": null, "rounds": [],
        }));
        let r = v.finish(&record, 3).unwrap();
        assert_eq!(
            r,
            GameResult::Scored {
                mine: 35,
                theirs: -100,
                tricks: 8
            }
        );
        assert_eq!(r.to_string(), "took 8 tricks, 35 to -100: won");

        let forfeit = obj(json!({
            "bot1": 1, "bot2": 3, "score1": null, "score2": null,
            "forfeited_by": 3, "rounds": [],
        }));
        let mut summary = RestSummary::default();
        r.tally(&mut summary);
        let f = GameView::new(cards(HAND)).finish(&forfeit, 3).unwrap();
        assert_eq!(f, GameResult::Forfeit { by_me: true });
        f.tally(&mut summary);
        let f = GameView::new(cards(HAND)).finish(&forfeit, 1).unwrap();
        f.tally(&mut summary);
        GameResult::Scored {
            mine: 20,
            theirs: 20,
            tricks: 2,
        }
        .tally(&mut summary);
        GameResult::Scored {
            mine: -20,
            theirs: 20,
            tricks: 1,
        }
        .tally(&mut summary);
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
        assert!(GameView::new(cards(HAND)).finish(&record, 99).is_err());
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
