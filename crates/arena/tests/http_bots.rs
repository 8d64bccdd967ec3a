//! HTTP ("push") bots against real matches: `play_live` calls fake bot
//! servers on 127.0.0.1 that misbehave at the byte level (late, garbage,
//! error statuses, huge or chunked bodies, odd content types, dropped or
//! reset connections, wrong credentials, redirects, no answer at all), next
//! to well-behaved ones.
//!
//! Each test checks the record (every fault with its kind at the decision
//! where it happened, a random card for it in Goofspiel, a forfeit in the
//! other games, the record replays) and what the bots were sent (every
//! request body and header is logged by the fake servers): the documents of
//! the Psychological Jujitsu dialect hold nothing but completed turns, the
//! `…ResponseLegal` flags and clocks match the record, and each bot gets
//! exactly one final `gameEnded: true` request. The `croupier/1` dialect is
//! played over HTTP too (SkullWhist, Love Letter).
//!
//! Move times are short (a few hundred ms) so the file runs in seconds. No
//! test asserts how long a match took; the budget test bounds the clocks the
//! bots are told by the length of a bot's nap and a move time, with margins.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use croupier_arena::transport::http::{HttpClient, HttpEndpoint, HttpLimits};
use croupier_arena::transport::process::ProcessLimits;
use croupier_arena::transport::Link;
use croupier_arena::{play_live, LiveConfig, LiveSeat};
use croupier_bots::Builtins;
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
use croupier_rules::{Fault, Game, Record, Seat, SeatInfo, StepKind};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Move time of most matches.
const MOVE: Duration = Duration::from_millis(300);
/// Longer than [`MOVE`] with a wide margin: a "late" bot sleeps this long.
const LATE: Duration = Duration::from_millis(900);
/// The 64 KiB cap on reply bodies.
const CAP: usize = 64 * 1024;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn config(move_time: Duration) -> LiveConfig {
    LiveConfig {
        move_time,
        budget: None,
        limits: ProcessLimits {
            grace: ms(200),
            ..ProcessLimits::default()
        },
    }
}

// ---------------------------------------------------------------------------
// A fake bot server: raw HTTP/1.1 over a TcpListener, keep-alive, every
// request logged.

/// One request a fake bot received.
#[derive(Clone, Debug)]
struct Req {
    method: String,
    path: String,
    /// Header names in lower case, in the order received.
    headers: Vec<(String, String)>,
    body: String,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, for a fake bot (which answers 400 otherwise).
    fn try_json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("request body is not JSON ({e}): {}", self.body))
    }
}

/// What a fake bot does with a request.
#[derive(Clone, Debug)]
enum Reply {
    /// A complete response with a Content-Length.
    Full {
        status: u16,
        content_type: Option<&'static str>,
        extra: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A long body of `total` bytes, either declared with Content-Length or
    /// chunked without one; written until done or the client hangs up.
    Stream { total: usize, chunked: bool },
    /// Closes the connection without a reply.
    Close,
    /// Resets the connection (RST) without a reply.
    Reset,
    /// Never answers (waits until the client gives up).
    Hang,
    /// These bytes as they are, then the connection is closed.
    Raw(Vec<u8>),
    /// A 200 text/plain reply whose body is sent chunked, one part at a
    /// time with a pause before each.
    Chunks {
        parts: Vec<Vec<u8>>,
        pause: Duration,
    },
    /// The reply after a pause.
    After(Duration, Box<Reply>),
}

fn plain(body: impl Into<String>) -> Reply {
    typed(200, "text/plain", body.into().into_bytes())
}

fn typed(status: u16, content_type: &'static str, body: Vec<u8>) -> Reply {
    Reply::Full {
        status,
        content_type: Some(content_type),
        extra: Vec::new(),
        body,
    }
}

fn bad_request() -> Reply {
    typed(400, "text/plain", b"expected a JSON body".to_vec())
}

fn late(d: Duration, r: Reply) -> Reply {
    Reply::After(d, Box::new(r))
}

type Handler = Arc<dyn Fn(&Req) -> Reply + Send + Sync>;

/// A running fake bot server.
struct FakeBot {
    url: String,
    log: Arc<Mutex<Vec<Req>>>,
    /// Body bytes written by [`Reply::Stream`] replies.
    streamed: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Drop for FakeBot {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeBot {
    async fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> FakeBot {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/bot", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let streamed = Arc::new(AtomicUsize::new(0));
        let handler: Handler = Arc::new(handler);
        let (l, s) = (Arc::clone(&log), Arc::clone(&streamed));
        let task = tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            while let Ok((sock, _)) = listener.accept().await {
                let _ = sock.set_nodelay(true);
                conns.spawn(serve_conn(
                    sock,
                    Arc::clone(&handler),
                    Arc::clone(&l),
                    Arc::clone(&s),
                ));
            }
        });
        FakeBot {
            url,
            log,
            streamed,
            task,
        }
    }

    fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }

    fn endpoint(&self) -> HttpEndpoint {
        HttpEndpoint::parse(&self.url, None).unwrap()
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

async fn serve_conn(
    mut sock: TcpStream,
    handler: Handler,
    log: Arc<Mutex<Vec<Req>>>,
    streamed: Arc<AtomicUsize>,
) {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i;
            }
            if buf.len() > 1 << 20 {
                return;
            }
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        buf.drain(..head_end + 4);
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or("").split(' ');
        let method = first.next().unwrap_or("").to_string();
        let path = first.next().unwrap_or("").to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < len {
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Vec<u8> = buf.drain(..len).collect();
        let req = Req {
            method,
            path,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        log.lock().unwrap().push(req.clone());
        let reply = handler(&req);
        if !respond(&mut sock, reply, &streamed).await {
            return;
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        302 => "Found",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        500 => "Internal Server Error",
        _ => "Whatever",
    }
}

/// Writes `reply`; false when the connection is to be dropped.
async fn respond(sock: &mut TcpStream, mut reply: Reply, streamed: &AtomicUsize) -> bool {
    while let Reply::After(d, r) = reply {
        tokio::time::sleep(d).await;
        reply = *r;
    }
    match reply {
        Reply::After(..) => unreachable!(),
        Reply::Close => false,
        Reply::Reset => {
            let _ = sock.set_zero_linger();
            false
        }
        Reply::Raw(bytes) => {
            let _ = sock.write_all(&bytes).await;
            let _ = sock.shutdown().await;
            false
        }
        Reply::Chunks { parts, pause } => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\
                        Transfer-Encoding: chunked\r\n\r\n";
            if sock.write_all(head.as_bytes()).await.is_err() {
                return false;
            }
            for part in parts.iter().filter(|p| !p.is_empty()) {
                tokio::time::sleep(pause).await;
                let mut framed = format!("{:x}\r\n", part.len()).into_bytes();
                framed.extend_from_slice(part);
                framed.extend_from_slice(b"\r\n");
                if sock.write_all(&framed).await.is_err() {
                    return false;
                }
            }
            sock.write_all(b"0\r\n\r\n").await.is_ok()
        }
        Reply::Hang => {
            // Until the client gives up on the request and hangs up.
            let mut b = [0u8; 1024];
            while matches!(sock.read(&mut b).await, Ok(n) if n > 0) {}
            false
        }
        Reply::Full {
            status,
            content_type,
            extra,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
            if let Some(ct) = content_type {
                head += &format!("Content-Type: {ct}\r\n");
            }
            for (n, v) in &extra {
                head += &format!("{n}: {v}\r\n");
            }
            if status != 204 {
                head += &format!("Content-Length: {}\r\n", body.len());
            }
            head += "\r\n";
            let mut out = head.into_bytes();
            out.extend_from_slice(&body);
            sock.write_all(&out).await.is_ok()
        }
        Reply::Stream { total, chunked } => {
            let mut head = String::from("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n");
            if chunked {
                head += "Transfer-Encoding: chunked\r\n\r\n";
            } else {
                head += &format!("Content-Length: {total}\r\n\r\n");
            }
            if sock.write_all(head.as_bytes()).await.is_err() {
                return false;
            }
            let piece = vec![b'7'; 32 * 1024];
            let mut sent = 0;
            while sent < total {
                let n = piece.len().min(total - sent);
                let ok = if chunked {
                    let mut framed = format!("{n:x}\r\n").into_bytes();
                    framed.extend_from_slice(&piece[..n]);
                    framed.extend_from_slice(b"\r\n");
                    sock.write_all(&framed).await.is_ok()
                } else {
                    sock.write_all(&piece[..n]).await.is_ok()
                };
                if !ok {
                    return false;
                }
                sent += n;
                streamed.fetch_add(n, Ordering::Relaxed);
            }
            !chunked || sock.write_all(b"0\r\n\r\n").await.is_ok()
        }
    }
}

// ---------------------------------------------------------------------------
// Psychological Jujitsu bots.

/// The variant of most matches: two rounds, 11 decisions per bot.
fn jujitsu() -> GoofspielVariant {
    GoofspielVariant::jujitsu(vec![5, 6])
}

/// (round, turn) a decision document asks about: the last round, and the
/// turn after its last completed one.
fn position(doc: &Value) -> (usize, usize) {
    let rounds = doc["rounds"].as_array().unwrap();
    let r = rounds.len() - 1;
    (r, rounds[r]["turns"].as_array().unwrap().len())
}

/// The decision number (from 0, over the whole match) of a document.
fn decision_of(doc: &Value) -> usize {
    let (r, t) = position(doc);
    let before: u64 = doc["match"].as_array().unwrap()[..r]
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    before as usize + t
}

/// The bid cards a document says its bot still holds.
fn hand(doc: &Value) -> Vec<u64> {
    let (r, _) = position(doc);
    let n = doc["match"][r].as_u64().unwrap();
    let played: HashSet<u64> = doc["rounds"][r]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["myBid"].as_u64().unwrap())
        .collect();
    (1..=n).filter(|c| !played.contains(c)).collect()
}

/// What a well-behaved bot bids: its lowest or highest card.
fn good_bid(doc: &Value, high: bool) -> u64 {
    let h = hand(doc);
    if high {
        *h.last().unwrap()
    } else {
        h[0]
    }
}

/// A Psychological Jujitsu bot that bids well (lowest or highest card) unless
/// `quirk` says otherwise for a decision (numbered from 0 over the match);
/// the final `gameEnded` request gets `ok`.
fn jujitsu_bot(
    high: bool,
    quirk: impl Fn(usize, &Value) -> Option<Reply> + Send + Sync + 'static,
) -> impl Fn(&Req) -> Reply + Send + Sync + 'static {
    move |req| {
        let Some(doc) = req.try_json() else {
            return bad_request();
        };
        if doc["gameEnded"] == true {
            return plain("ok");
        }
        quirk(decision_of(&doc), &doc).unwrap_or_else(|| plain(good_bid(&doc, high).to_string()))
    }
}

fn good_jujitsu(high: bool) -> impl Fn(&Req) -> Reply + Send + Sync + 'static {
    jujitsu_bot(high, |_, _| None)
}

fn client() -> Arc<HttpClient> {
    Arc::new(HttpClient::new(HttpLimits::default()).unwrap())
}

fn http_seat<G: Game>(
    name: &str,
    endpoint: HttpEndpoint,
    dialect: DialectKind,
    client: &Arc<HttpClient>,
) -> LiveSeat<G> {
    LiveSeat::remote(
        SeatInfo::named(name),
        Link::Http(Arc::clone(client), endpoint),
        croupier_dialects::make::<G>(dialect).unwrap(),
    )
}

/// Plays one Jujitsu match between two HTTP bots; checks that the record
/// replays.
async fn play_jujitsu(
    variant: &GoofspielVariant,
    a: HttpEndpoint,
    b: HttpEndpoint,
    cfg: &LiveConfig,
    seed: u64,
) -> Record {
    let client = client();
    let mut seats = vec![
        http_seat::<Goofspiel>("a", a, DialectKind::Jujitsu, &client),
        http_seat::<Goofspiel>("b", b, DialectKind::Jujitsu, &client),
    ];
    let record = play_live(variant, seed, &mut seats, cfg).await.unwrap();
    record.verify::<Goofspiel>().unwrap();
    record
}

/// The steps of `seat` in order (in Goofspiel, the n-th is its decision n).
fn steps_of(record: &Record, seat: u8) -> Vec<(String, Option<Fault>)> {
    record
        .steps
        .iter()
        .filter(|s| s.seat == Seat(seat))
        .map(|s| match &s.kind {
            StepKind::Action(a) => (a.clone(), s.fault.clone()),
            StepKind::Forfeit => ("<forfeit>".to_string(), s.fault.clone()),
        })
        .collect()
}

/// The faults of `seat`, by decision.
fn faults_of(record: &Record, seat: u8) -> BTreeMap<usize, Fault> {
    steps_of(record, seat)
        .into_iter()
        .enumerate()
        .filter_map(|(i, (_, f))| f.map(|f| (i, f)))
        .collect()
}

fn kinds(faults: &BTreeMap<usize, Fault>) -> BTreeMap<usize, &str> {
    faults.iter().map(|(&i, f)| (i, f.kind.as_str())).collect()
}

/// A bot's decision documents, by decision, and its final documents.
fn documents(bot: &FakeBot) -> (BTreeMap<usize, Value>, Vec<Value>) {
    let mut asked = BTreeMap::new();
    let mut finals = Vec::new();
    for req in bot.requests() {
        let doc = req.json();
        if doc["gameEnded"] == true {
            finals.push(doc);
        } else {
            let k = decision_of(&doc);
            assert!(
                asked.insert(k, doc).is_none(),
                "decision {k} was asked twice"
            );
        }
    }
    (asked, finals)
}

/// Checks a Jujitsu match between a well-behaved bot (seat `good`, bidding
/// low or high) and anything: the good bot played exactly what it answered,
/// has no fault, and got every decision and one final request last.
fn check_good_side(record: &Record, bot: &FakeBot, good: u8, high: bool, decisions: usize) {
    let steps = steps_of(record, good);
    assert_eq!(steps.len(), decisions);
    assert_eq!(faults_of(record, good), BTreeMap::new(), "{steps:?}");
    let (asked, finals) = documents(bot);
    assert_eq!(
        asked.len(),
        decisions,
        "the good bot was not asked every decision"
    );
    for (k, doc) in &asked {
        assert_eq!(steps[*k].0, good_bid(doc, high).to_string(), "decision {k}");
    }
    assert_eq!(finals.len(), 1);
    assert_eq!(bot.requests().last().unwrap().json()["gameEnded"], true);
}

/// Every document's clocks are `null` (no budget).
fn check_no_clocks(bot: &FakeBot) {
    for req in bot.requests() {
        let doc = req.json();
        assert!(doc["myTimeRemainingMs"].is_null(), "{doc}");
        assert!(doc["opponentTimeRemainingMs"].is_null(), "{doc}");
    }
}

/// The final document of a bot (there must be exactly one).
fn final_doc(bot: &FakeBot) -> Value {
    let (_, finals) = documents(bot);
    assert_eq!(finals.len(), 1, "final requests: {finals:?}");
    finals.into_iter().next().unwrap()
}

/// Checks every `…ResponseLegal` flag each bot was ever sent against the
/// faults of the record, and the bids in the final documents against the
/// recorded actions.
fn check_flags(record: &Record, bots: [&FakeBot; 2]) {
    let faulty: [BTreeSet<usize>; 2] = [0, 1].map(|s| faults_of(record, s).into_keys().collect());
    for (me, bot) in bots.iter().enumerate() {
        let opp = 1 - me;
        for req in bot.requests() {
            let doc = req.json();
            let mut k = 0;
            for round in doc["rounds"].as_array().unwrap() {
                for turn in round["turns"].as_array().unwrap() {
                    assert_eq!(
                        turn["myResponseLegal"],
                        !faulty[me].contains(&k),
                        "seat {me}, decision {k}: {doc}"
                    );
                    assert_eq!(
                        turn["opponentResponseLegal"],
                        !faulty[opp].contains(&k),
                        "seat {me}, decision {k}: {doc}"
                    );
                    k += 1;
                }
            }
        }
        let fin = final_doc(bot);
        check_final_arithmetic(&fin, record, me);
        let (mine, theirs) = (steps_of(record, me as u8), steps_of(record, opp as u8));
        let turns: Vec<&Value> = fin["rounds"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["turns"].as_array().unwrap())
            .collect();
        assert_eq!(turns.len(), mine.len());
        for (k, t) in turns.iter().enumerate() {
            assert_eq!(t["myBid"].to_string(), mine[k].0, "decision {k}");
            assert_eq!(t["opponentBid"].to_string(), theirs[k].0, "decision {k}");
        }
    }
}

/// The final document's arithmetic, worked out again from its turns: the
/// lot of each turn (ties carry), who won it, each round's unwon lot, the
/// totals, and the match's scores.
fn check_final_arithmetic(fin: &Value, record: &Record, me: usize) {
    let (mut mine, mut theirs) = (0u64, 0u64);
    for round in fin["rounds"].as_array().unwrap() {
        let mut lot: Vec<u64> = Vec::new();
        for t in round["turns"].as_array().unwrap() {
            lot.push(t["drawnVictoryCard"].as_u64().unwrap());
            let pot: u64 = lot.iter().sum();
            let bids = (t["myBid"].as_u64(), t["opponentBid"].as_u64());
            let gained = match bids.0.cmp(&bids.1) {
                std::cmp::Ordering::Greater => (pot, 0),
                std::cmp::Ordering::Less => (0, pot),
                std::cmp::Ordering::Equal => (0, 0),
            };
            assert_eq!(
                (
                    t["myPointsGained"].as_u64(),
                    t["opponentPointsGained"].as_u64()
                ),
                (Some(gained.0), Some(gained.1)),
                "{t}"
            );
            if bids.0 != bids.1 {
                lot.clear();
            }
            mine += gained.0;
            theirs += gained.1;
        }
        assert_eq!(round["lot"], json!(lot), "{round}");
        assert_eq!(round["nextVictoryCard"], Value::Null, "{round}");
    }
    assert_eq!(fin["myPointsTotal"], mine);
    assert_eq!(fin["opponentPointsTotal"], theirs);
    assert_eq!(record.outcome.scores[me], mine as i64);
    assert_eq!(record.outcome.scores[1 - me], theirs as i64);
}

// ---------------------------------------------------------------------------
// 1. Slow answers.

#[tokio::test]
async fn a_late_answer_is_a_timeout_with_a_random_card_and_the_next_decision_is_asked() {
    let slow_at = [1usize, 4, 5, 9];
    let slow = FakeBot::start(jujitsu_bot(false, move |k, doc| {
        slow_at
            .contains(&k)
            .then(|| late(LATE, plain(good_bid(doc, false).to_string())))
    }))
    .await;
    let good = FakeBot::start(good_jujitsu(true)).await;
    let v = jujitsu();
    let record = play_jujitsu(&v, slow.endpoint(), good.endpoint(), &config(MOVE), 1).await;

    let faults = faults_of(&record, 0);
    assert_eq!(
        kinds(&faults),
        slow_at.iter().map(|&k| (k, "timeout")).collect(),
        "{faults:?}"
    );
    // Every decision was asked, the late ones included, and every other one
    // was played as answered.
    let (asked, _) = documents(&slow);
    assert_eq!(
        asked.keys().copied().collect::<Vec<_>>(),
        (0..11).collect::<Vec<_>>()
    );
    let steps = steps_of(&record, 0);
    for (k, doc) in &asked {
        if !slow_at.contains(k) {
            assert_eq!(
                steps[*k],
                (good_bid(doc, false).to_string(), None),
                "decision {k}"
            );
        }
    }
    check_good_side(&record, &good, 1, true, 11);
    check_flags(&record, [&slow, &good]);
    check_no_clocks(&slow);
}

// ---------------------------------------------------------------------------
// 2. Garbage, out-of-range and already-played cards.

#[tokio::test]
async fn garbage_is_malformed_and_cards_not_held_are_illegal() {
    let bad = FakeBot::start(jujitsu_bot(false, |k, doc| match k {
        0 => Some(plain("banana")),
        // Out of range: the first round has cards 1..=5.
        2 => Some(plain("9")),
        // Already played in this round (turn 0's bid).
        3 => Some(plain(doc["rounds"][0]["turns"][0]["myBid"].to_string())),
        6 => Some(plain("0")),
        // Round 1 has 6 cards: 6 is fine there, then played again.
        7 => Some(plain(doc["rounds"][1]["turns"][0]["myBid"].to_string())),
        _ => None,
    }))
    .await;
    let good = FakeBot::start(good_jujitsu(true)).await;
    let record = play_jujitsu(
        &jujitsu(),
        bad.endpoint(),
        good.endpoint(),
        &config(MOVE),
        2,
    )
    .await;
    let faults = faults_of(&record, 0);
    assert_eq!(
        kinds(&faults),
        BTreeMap::from([
            (0, "malformed"),
            (2, "illegal"),
            (3, "illegal"),
            (6, "illegal"),
            (7, "illegal")
        ]),
        "{faults:?}"
    );
    assert!(faults[&0].detail.contains("banana"), "{:?}", faults[&0]);
    assert!(faults[&2].detail.contains('9'), "{:?}", faults[&2]);
    check_good_side(&record, &good, 1, true, 11);
    check_flags(&record, [&bad, &good]);
}

// ---------------------------------------------------------------------------
// 3. Error statuses.

#[tokio::test]
async fn an_error_status_is_a_crash_fault_with_a_random_card() {
    let bad = FakeBot::start(jujitsu_bot(true, |k, doc| match k {
        // The body holds a legal bid: the status alone makes it a fault.
        1 | 5 | 10 => Some(typed(
            500,
            "text/plain",
            good_bid(doc, true).to_string().into(),
        )),
        3 => Some(typed(204, "text/plain", Vec::new())),
        _ => None,
    }))
    .await;
    let good = FakeBot::start(good_jujitsu(false)).await;
    let record = play_jujitsu(
        &jujitsu(),
        good.endpoint(),
        bad.endpoint(),
        &config(MOVE),
        3,
    )
    .await;
    let faults = faults_of(&record, 1);
    assert_eq!(
        kinds(&faults),
        BTreeMap::from([(1, "crash"), (3, "malformed"), (5, "crash"), (10, "crash")]),
        "{faults:?}"
    );
    assert!(faults[&1].detail.contains("500"), "{:?}", faults[&1]);
    check_good_side(&record, &good, 0, false, 11);
    check_flags(&record, [&good, &bad]);
}

// ---------------------------------------------------------------------------
// 4. Huge bodies.

#[tokio::test]
async fn huge_bodies_are_refused_at_64_kib_and_the_match_goes_on() {
    const TEN_MB: usize = 10 * 1024 * 1024;
    const CHUNKED: usize = 64 * 1024 * 1024;
    let padded = |doc: &Value, len: usize| {
        let bid = good_bid(doc, false).to_string();
        let mut body = " ".repeat(len - bid.len());
        body.insert_str(len / 2 - bid.len(), &bid);
        body.truncate(len);
        assert_eq!(body.len(), len);
        plain(body)
    };
    let huge = FakeBot::start(jujitsu_bot(false, move |k, doc| match k {
        0 => Some(Reply::Stream {
            total: TEN_MB,
            chunked: false,
        }),
        1 => Some(Reply::Stream {
            total: CHUNKED,
            chunked: true,
        }),
        // Exactly at the cap: accepted (the bid amid white space).
        2 => Some(padded(doc, CAP)),
        // One byte over, with and without Content-Length.
        3 => Some(padded(doc, CAP + 1)),
        4 => Some(Reply::Stream {
            total: CAP + 1,
            chunked: true,
        }),
        _ => None,
    }))
    .await;
    let good = FakeBot::start(good_jujitsu(true)).await;
    let record = play_jujitsu(
        &jujitsu(),
        huge.endpoint(),
        good.endpoint(),
        &config(MOVE),
        4,
    )
    .await;
    // The client hung up instead of reading the streams to the end (the
    // socket buffers hold a few MB at most).
    let streamed = huge.streamed.load(Ordering::Relaxed);
    assert!(
        streamed < TEN_MB + CHUNKED / 2,
        "{streamed} bytes were read from the huge bodies"
    );
    // Nothing near the size of a huge body was ever held in memory: the
    // whole test process stays well below the 64 MB of the chunked one.
    if let Some(kb) = peak_rss_kb() {
        assert!(kb < 60 * 1024, "peak RSS {kb} kB");
    }
    let faults = faults_of(&record, 0);
    assert_eq!(
        kinds(&faults),
        BTreeMap::from([
            (0, "malformed"),
            (1, "malformed"),
            (3, "malformed"),
            (4, "malformed")
        ]),
        "{faults:?}"
    );
    for f in faults.values() {
        assert!(f.detail.contains("65536"), "{f:?}");
    }
    let (asked, _) = documents(&huge);
    assert_eq!(
        steps_of(&record, 0)[2],
        (good_bid(&asked[&2], false).to_string(), None)
    );
    check_good_side(&record, &good, 1, true, 11);
}

/// This process's peak resident memory (VmHWM) in kB, where /proc has it.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

// ---------------------------------------------------------------------------
// 5. Content types.

#[tokio::test]
async fn any_content_type_with_a_number_is_accepted_but_binary_bytes_are_malformed() {
    // Express sends text/html by default.
    let html = FakeBot::start(jujitsu_bot(false, |k, doc| {
        let ct = match k % 3 {
            0 => "text/html; charset=utf-8",
            1 => "application/json",
            _ => "application/octet-stream",
        };
        Some(typed(
            200,
            ct,
            format!("{}\n", good_bid(doc, false)).into_bytes(),
        ))
    }))
    .await;
    let binary = FakeBot::start(jujitsu_bot(true, |k, _| {
        k.is_multiple_of(2).then(|| {
            typed(
                200,
                "application/octet-stream",
                vec![0xff, 0xfe, 0x00, b'3', 0x80],
            )
        })
    }))
    .await;
    let record = play_jujitsu(
        &jujitsu(),
        html.endpoint(),
        binary.endpoint(),
        &config(MOVE),
        5,
    )
    .await;
    check_good_side(&record, &html, 0, false, 11);
    let faults = faults_of(&record, 1);
    assert_eq!(
        kinds(&faults),
        (0..11).step_by(2).map(|k| (k, "malformed")).collect(),
        "{faults:?}"
    );
    assert!(faults[&0].detail.contains("UTF-8"), "{:?}", faults[&0]);
    check_flags(&record, [&html, &binary]);
}

#[tokio::test]
async fn old_style_and_chunked_replies_are_read_and_a_trickling_body_times_out() {
    let odd = FakeBot::start(jujitsu_bot(false, |k, doc| {
        let bid = good_bid(doc, false).to_string();
        match k % 4 {
            // Python's http.server: HTTP/1.0, no Content-Length, the body
            // ends when the connection closes.
            0 => Some(Reply::Raw(
                format!(
                    "HTTP/1.0 200 OK\r\nServer: BaseHTTP/0.6 Python/3.12\r\n\
                     Content-type: text/plain\r\n\r\n{bid}"
                )
                .into_bytes(),
            )),
            // Chunked, the number split over chunks.
            1 => Some(Reply::Chunks {
                parts: vec![b" ".to_vec(), bid.into_bytes(), b"\r\n".to_vec()],
                pause: ms(5),
            }),
            _ => None,
        }
    }))
    .await;
    // Headers at once, then the body a byte at a time, past the deadline.
    let trickle = FakeBot::start(jujitsu_bot(true, |k, doc| {
        let mut parts = vec![b" ".to_vec(); 30];
        parts.push(good_bid(doc, true).to_string().into_bytes());
        (k == 1 || k == 6).then(|| Reply::Chunks {
            parts,
            pause: ms(50),
        })
    }))
    .await;
    let record = play_jujitsu(
        &jujitsu(),
        odd.endpoint(),
        trickle.endpoint(),
        &config(MOVE),
        24,
    )
    .await;
    check_good_side(&record, &odd, 0, false, 11);
    assert_eq!(
        kinds(&faults_of(&record, 1)),
        BTreeMap::from([(1, "timeout"), (6, "timeout")])
    );
    check_flags(&record, [&odd, &trickle]);
}

// ---------------------------------------------------------------------------
// 6. Dropped connections.

#[tokio::test]
async fn a_closed_or_reset_connection_is_a_disconnect() {
    let rude = FakeBot::start(jujitsu_bot(false, |k, _| match k {
        1 | 2 => Some(Reply::Close),
        4 | 8 => Some(Reply::Reset),
        _ => None,
    }))
    .await;
    let good = FakeBot::start(good_jujitsu(true)).await;
    let record = play_jujitsu(
        &jujitsu(),
        rude.endpoint(),
        good.endpoint(),
        &config(MOVE),
        6,
    )
    .await;
    let faults = faults_of(&record, 0);
    assert_eq!(
        kinds(&faults),
        BTreeMap::from([
            (1, "disconnect"),
            (2, "disconnect"),
            (4, "disconnect"),
            (8, "disconnect")
        ]),
        "{faults:?}"
    );
    check_good_side(&record, &good, 1, true, 11);
    check_flags(&record, [&rude, &good]);
}

#[tokio::test]
async fn a_bot_that_is_down_is_a_disconnect_on_every_decision() {
    let gone = {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        format!("http://{}/bot", l.local_addr().unwrap())
    };
    let good = FakeBot::start(good_jujitsu(false)).await;
    let record = play_jujitsu(
        &jujitsu(),
        good.endpoint(),
        HttpEndpoint::parse(&gone, None).unwrap(),
        &config(MOVE),
        7,
    )
    .await;
    let faults = faults_of(&record, 1);
    assert_eq!(kinds(&faults), (0..11).map(|k| (k, "disconnect")).collect());
    assert!(faults[&0].detail.contains("connect"), "{:?}", faults[&0]);
    check_good_side(&record, &good, 0, false, 11);
}

// ---------------------------------------------------------------------------
// 7. Credentials.

/// A good bot that answers 401 unless the Authorization header is exactly
/// `expected`.
fn guarded(expected: &'static str) -> impl Fn(&Req) -> Reply + Send + Sync + 'static {
    let inner = good_jujitsu(false);
    move |req| {
        if req.header("authorization") == Some(expected) {
            inner(req)
        } else {
            Reply::Full {
                status: 401,
                content_type: Some("text/plain"),
                extra: vec![(
                    "WWW-Authenticate".to_string(),
                    "Basic realm=\"bot\"".to_string(),
                )],
                body: b"who are you?".to_vec(),
            }
        }
    }
}

#[tokio::test]
async fn credentials_are_sent_as_basic_auth_and_wrong_ones_are_faults() {
    // base64("bot:s@cret") and base64("alice:open sesame"), worked out by hand.
    const BOT: &str = "Basic Ym90OnNAY3JldA==";
    const ALICE: &str = "Basic YWxpY2U6b3BlbiBzZXNhbWU=";
    let bot = FakeBot::start(guarded(BOT)).await;
    let alice = FakeBot::start(guarded(ALICE)).await;
    let with_user =
        |b: &FakeBot, creds: &str| b.url.replacen("http://", &format!("http://{creds}@"), 1);

    // Right credentials: in the URL (percent-encoded), and given apart (they
    // win over any in the URL).
    let a = HttpEndpoint::parse(&with_user(&bot, "bot:s%40cret"), None).unwrap();
    let b = HttpEndpoint::parse(
        &with_user(&alice, "mallory:x"),
        Some(("alice".to_string(), "open sesame".to_string())),
    )
    .unwrap();
    let record = play_jujitsu(&jujitsu(), a, b, &config(MOVE), 8).await;
    assert!(faults_of(&record, 0).is_empty() && faults_of(&record, 1).is_empty());
    for (b, expected) in [(&bot, BOT), (&alice, ALICE)] {
        let reqs = b.requests();
        assert_eq!(reqs.len(), 12);
        for r in &reqs {
            assert_eq!(r.method, "POST");
            assert_eq!(r.path, "/bot");
            assert_eq!(r.header("authorization"), Some(expected));
            assert_eq!(r.header("content-type"), Some("application/json"));
            assert_eq!(r.header("accept"), Some("text/plain, application/json"));
            let ua = r.header("user-agent").unwrap_or("");
            assert!(ua.starts_with("croupier/"), "{ua}");
            // The credentials never travel in the URL.
            assert!(!r.path.contains('@') && !r.path.contains("cret"));
        }
    }

    // Wrong credentials, and none: every decision is a fault, the match ends.
    let before = bot.requests().len();
    let wrong = HttpEndpoint::parse(&with_user(&bot, "bot:wrong"), None).unwrap();
    let none = alice.endpoint();
    let record = play_jujitsu(&jujitsu(), wrong, none, &config(MOVE), 9).await;
    for seat in [0, 1] {
        let faults = faults_of(&record, seat);
        assert_eq!(kinds(&faults), (0..11).map(|k| (k, "crash")).collect());
        assert!(faults[&0].detail.contains("401"), "{:?}", faults[&0]);
    }
    let sent: Vec<Req> = bot.requests()[before..].to_vec();
    assert_eq!(sent.len(), 12);
    for r in &sent {
        assert_eq!(r.header("authorization"), Some("Basic Ym90Ondyb25n"));
    }
    let alice_reqs = alice.requests();
    assert!(alice_reqs[12..]
        .iter()
        .all(|r| r.header("authorization").is_none()));
}

// ---------------------------------------------------------------------------
// 8. Redirects.

#[tokio::test]
async fn redirects_are_not_followed() {
    let target = FakeBot::start(good_jujitsu(false)).await;
    let to = target.url.clone();
    let redirect = FakeBot::start(move |req| {
        let Some(doc) = req.try_json() else {
            return bad_request();
        };
        let status = if decision_of(&doc).is_multiple_of(2) {
            302
        } else {
            307
        };
        Reply::Full {
            status,
            content_type: Some("text/plain"),
            extra: vec![("Location".to_string(), to.clone())],
            body: b"3".to_vec(),
        }
    })
    .await;
    let good = FakeBot::start(good_jujitsu(true)).await;
    let record = play_jujitsu(
        &jujitsu(),
        redirect.endpoint(),
        good.endpoint(),
        &config(MOVE),
        10,
    )
    .await;
    let faults = faults_of(&record, 0);
    assert_eq!(kinds(&faults), (0..11).map(|k| (k, "crash")).collect());
    assert!(faults[&0].detail.contains("302"), "{:?}", faults[&0]);
    assert!(faults[&1].detail.contains("307"), "{:?}", faults[&1]);
    assert!(target.requests().is_empty(), "the redirect was followed");
    check_good_side(&record, &good, 1, true, 11);
}

// ---------------------------------------------------------------------------
// 9. Thinking-time budget.

#[tokio::test]
async fn a_spent_budget_stops_the_calls_and_makes_the_remaining_bids_random() {
    const BUDGET: u64 = 1000;
    const NAP: u64 = 120;
    let sleepy = FakeBot::start(jujitsu_bot(false, |_, doc| {
        Some(late(ms(NAP), plain(good_bid(doc, false).to_string())))
    }))
    .await;
    let quick = FakeBot::start(good_jujitsu(true)).await;
    let cfg = LiveConfig {
        budget: Some(ms(BUDGET)),
        ..config(MOVE)
    };
    let record = play_jujitsu(&jujitsu(), sleepy.endpoint(), quick.endpoint(), &cfg, 11).await;

    // The sleepy bot runs out after about BUDGET / NAP decisions; every bid
    // from then on is a budget fault.
    let faults = faults_of(&record, 0);
    let first = *faults.keys().next().expect("the budget never ran out");
    assert!((4..11).contains(&first), "ran out at decision {first}");
    assert_eq!(kinds(&faults), (first..11).map(|k| (k, "budget")).collect());
    let (asked, finals) = documents(&sleepy);
    // Not called after it ran out (the decision where it ran out may have
    // been asked), except for the final request.
    assert!(asked.keys().all(|&k| k <= first), "{:?}", asked.keys());
    assert!(asked.len() >= first);
    assert_eq!(finals.len(), 1);
    assert_eq!(finals[0]["myTimeRemainingMs"], 0);
    assert_eq!(sleepy.requests().last().unwrap().json()["gameEnded"], true);

    // Its clock: the full budget at first, then down by at least its nap and
    // at most a move time (plus slack) per decision.
    let clock: Vec<u64> = asked
        .values()
        .map(|d| d["myTimeRemainingMs"].as_u64().expect("a number"))
        .collect();
    assert_eq!(clock[0], BUDGET);
    for w in clock.windows(2) {
        let drop = w[0] - w[1];
        assert!(drop + 1 >= NAP, "{clock:?}");
        assert!(drop <= MOVE.as_millis() as u64 + 200, "{clock:?}");
    }
    // The quick bot sees that clock as its opponent's, 0 once spent, and
    // its own barely moves.
    let (seen, quick_finals) = documents(&quick);
    assert_eq!(seen.len(), 11);
    check_good_side(&record, &quick, 1, true, 11);
    for (k, doc) in &seen {
        let theirs = doc["opponentTimeRemainingMs"].as_u64().unwrap();
        if let Some(d) = asked.get(k) {
            assert_eq!(
                theirs,
                d["myTimeRemainingMs"].as_u64().unwrap(),
                "decision {k}"
            );
        }
        if *k > first {
            assert_eq!(theirs, 0, "decision {k}");
        }
        let mine = doc["myTimeRemainingMs"].as_u64().unwrap();
        assert!(mine > BUDGET / 2 && mine <= BUDGET, "{doc}");
    }
    assert_eq!(quick_finals[0]["opponentTimeRemainingMs"], 0);
    check_flags(&record, [&sleepy, &quick]);
}

// ---------------------------------------------------------------------------
// 10. Nothing about the opponent's sealed bid.

/// The document a seat should get for decision (r, t), built from the final
/// document (which holds every turn): only completed turns, the lot and next
/// card of the current turn, totals so far. Clocks are not compared.
fn expected_document(fin: &Value, r: usize, t: usize) -> Value {
    let rounds = fin["rounds"].as_array().unwrap();
    let mut out_rounds: Vec<Value> = rounds[..r].to_vec();
    let turns = rounds[r]["turns"].as_array().unwrap();
    let mut lot = Vec::new();
    for turn in &turns[..t] {
        lot.push(turn["drawnVictoryCard"].clone());
        if turn["myBid"] != turn["opponentBid"] {
            lot.clear();
        }
    }
    lot.push(turns[t]["drawnVictoryCard"].clone());
    let next = turns
        .get(t + 1)
        .map_or(Value::Null, |n| n["drawnVictoryCard"].clone());
    out_rounds.push(json!({"lot": lot, "nextVictoryCard": next, "turns": turns[..t].to_vec()}));
    let past = rounds[..r]
        .iter()
        .flat_map(|x| x["turns"].as_array().unwrap().iter())
        .chain(&turns[..t]);
    let (mut mine, mut theirs) = (0, 0);
    for turn in past {
        mine += turn["myPointsGained"].as_u64().unwrap();
        theirs += turn["opponentPointsGained"].as_u64().unwrap();
    }
    json!({
        "match": fin["match"],
        "myTimeRemainingMs": null,
        "opponentTimeRemainingMs": null,
        "rounds": out_rounds,
        "myPointsTotal": mine,
        "opponentPointsTotal": theirs,
        "gameEnded": false,
    })
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

/// Every document `bot` got is exactly what the completed turns before it
/// determine, with the seed's keys and no others.
fn check_no_leak(bot: &FakeBot, decisions: usize) {
    let fin = final_doc(bot);
    let top = BTreeSet::from([
        "match",
        "myTimeRemainingMs",
        "opponentTimeRemainingMs",
        "rounds",
        "myPointsTotal",
        "opponentPointsTotal",
        "gameEnded",
    ]);
    let round_keys = BTreeSet::from(["lot", "nextVictoryCard", "turns"]);
    let turn_keys = BTreeSet::from([
        "drawnVictoryCard",
        "myBid",
        "opponentBid",
        "myPointsGained",
        "opponentPointsGained",
        "myResponseLegal",
        "opponentResponseLegal",
    ]);
    let (asked, _) = documents(bot);
    assert_eq!(asked.len(), decisions);
    for doc in asked.values().chain([&fin]) {
        assert_eq!(keys(doc), top, "{doc}");
        for round in doc["rounds"].as_array().unwrap() {
            assert_eq!(keys(round), round_keys, "{doc}");
            for turn in round["turns"].as_array().unwrap() {
                assert_eq!(keys(turn), turn_keys, "{doc}");
            }
        }
    }
    for (k, doc) in &asked {
        let (r, t) = position(doc);
        let mut got = doc.clone();
        got["myTimeRemainingMs"] = Value::Null;
        got["opponentTimeRemainingMs"] = Value::Null;
        assert_eq!(
            got,
            expected_document(&fin, r, t),
            "decision {k} (round {r}, turn {t}) of {}",
            bot.url
        );
    }
}

#[tokio::test]
async fn documents_hold_only_completed_turns_when_the_opponent_has_already_bid() {
    // Seat 0 answers at once, seat 1 a while later: seat 0's bid is in before
    // seat 1 answers. Seat 1 also faults now and then, so flags are covered.
    let quick = FakeBot::start(good_jujitsu(true)).await;
    let slow = FakeBot::start(jujitsu_bot(false, |k, doc| {
        let bid = if k == 6 {
            "banana".to_string()
        } else {
            good_bid(doc, false).to_string()
        };
        Some(late(ms(60), plain(bid)))
    }))
    .await;
    let v = GoofspielVariant::jujitsu(vec![5, 6, 7]);
    let record = play_jujitsu(&v, quick.endpoint(), slow.endpoint(), &config(MOVE), 12).await;
    assert_eq!(
        kinds(&faults_of(&record, 1)),
        BTreeMap::from([(6, "malformed")])
    );
    check_no_leak(&quick, 18);
    check_no_leak(&slow, 18);
    check_flags(&record, [&quick, &slow]);

    // A built-in opponent has bid before the HTTP bot is even asked.
    let http = FakeBot::start(good_jujitsu(false)).await;
    let client = client();
    let mut seats = vec![
        LiveSeat::builtin(
            SeatInfo::named("planner"),
            Goofspiel::builtin("planner").unwrap(),
        ),
        http_seat::<Goofspiel>("http", http.endpoint(), DialectKind::Jujitsu, &client),
    ];
    let record = play_live(&v, 13, &mut seats, &config(MOVE)).await.unwrap();
    record.verify::<Goofspiel>().unwrap();
    check_good_side(&record, &http, 1, false, 18);
    check_no_leak(&http, 18);
}

// ---------------------------------------------------------------------------
// 11. Legality flags from both sides, one final request, match tags.

#[tokio::test]
async fn faults_are_flagged_to_both_bots_and_each_seat_has_its_own_match_tag() {
    // Faults in the middle of a round, on the last turn of a round by both
    // bots (flagged first in the next round's document) and on the very
    // last turn (flagged in the final document only).
    let a = FakeBot::start(jujitsu_bot(false, |k, _| match k {
        2 => Some(plain("banana")),
        4 => Some(typed(500, "text/plain", b"oops".to_vec())),
        10 => Some(plain("42")),
        _ => None,
    }))
    .await;
    let b = FakeBot::start(jujitsu_bot(true, |k, _| {
        (k == 4 || k == 7).then_some(Reply::Close)
    }))
    .await;
    let record = play_jujitsu(&jujitsu(), a.endpoint(), b.endpoint(), &config(MOVE), 14).await;
    assert_eq!(
        kinds(&faults_of(&record, 0)),
        BTreeMap::from([(2, "malformed"), (4, "crash"), (10, "illegal")])
    );
    assert_eq!(
        kinds(&faults_of(&record, 1)),
        BTreeMap::from([(4, "disconnect"), (7, "disconnect")])
    );
    check_flags(&record, [&a, &b]);

    // Spelled out for one case: the request right after seat 0's fault at
    // decision 2 says so to both.
    let (asked_a, _) = documents(&a);
    let (asked_b, _) = documents(&b);
    assert_eq!(
        asked_a[&3]["rounds"][0]["turns"][2]["myResponseLegal"],
        false
    );
    assert_eq!(
        asked_b[&3]["rounds"][0]["turns"][2]["opponentResponseLegal"],
        false
    );
    assert_eq!(
        asked_b[&3]["rounds"][0]["turns"][2]["myResponseLegal"],
        true
    );
    // Round 0's last turn, seen at the start of round 1.
    assert_eq!(
        asked_a[&5]["rounds"][0]["turns"][4]["myResponseLegal"],
        false
    );
    assert_eq!(
        asked_b[&5]["rounds"][0]["turns"][4]["opponentResponseLegal"],
        false
    );
    // Both faulted on that turn.
    assert_eq!(
        asked_b[&5]["rounds"][0]["turns"][4]["myResponseLegal"],
        false
    );
    assert_eq!(
        asked_a[&5]["rounds"][0]["turns"][4]["opponentResponseLegal"],
        false
    );
    // The last turn, in the final document.
    assert_eq!(
        final_doc(&a)["rounds"][1]["turns"][5]["myResponseLegal"],
        false
    );
    assert_eq!(
        final_doc(&b)["rounds"][1]["turns"][5]["opponentResponseLegal"],
        false
    );
    check_no_leak(&a, 11);
    check_no_leak(&b, 11);

    // One tag per seat, on every request; another match, other tags.
    let tags = |bot: &FakeBot| -> BTreeSet<String> {
        bot.requests()
            .iter()
            .map(|r| {
                r.header("x-croupier-match")
                    .expect("no X-Croupier-Match")
                    .to_string()
            })
            .collect()
    };
    let (ta, tb) = (tags(&a), tags(&b));
    assert_eq!(ta.len(), 1, "{ta:?}");
    assert_eq!(tb.len(), 1, "{tb:?}");
    assert_ne!(ta, tb);
    let again_a = FakeBot::start(good_jujitsu(false)).await;
    // Both bid low: every turn ties, so every lot carries to the end of its
    // round and stays unwon; nobody scores.
    let again_b = FakeBot::start(good_jujitsu(false)).await;
    let record = play_jujitsu(
        &jujitsu(),
        again_a.endpoint(),
        again_b.endpoint(),
        &config(MOVE),
        14,
    )
    .await;
    check_flags(&record, [&again_a, &again_b]);
    let fin = final_doc(&again_a);
    let mut unwon: Vec<u64> = serde_json::from_value(fin["rounds"][1]["lot"].clone()).unwrap();
    unwon.sort_unstable();
    assert_eq!(unwon, (1..=6).collect::<Vec<_>>());
    assert_eq!(record.outcome.scores, vec![0, 0]);
    check_no_leak(&again_b, 11);
    let all: BTreeSet<String> = [&a, &b, &again_a, &again_b]
        .into_iter()
        .flat_map(tags)
        .collect();
    assert_eq!(all.len(), 4, "{all:?}");
}

// ---------------------------------------------------------------------------
// 12. A bot that never answers.

#[tokio::test]
async fn a_bot_that_never_answers_does_not_stall_matches() {
    let mute = FakeBot::start(|_: &Req| Reply::Hang).await;
    let good1 = FakeBot::start(good_jujitsu(false)).await;
    let good2 = FakeBot::start(good_jujitsu(true)).await;
    let cfg = config(ms(200));
    // Two matches at once against the same mute bot, through one client.
    let client = client();
    let v = jujitsu();
    let mut seats1 = vec![
        http_seat::<Goofspiel>("mute", mute.endpoint(), DialectKind::Jujitsu, &client),
        http_seat::<Goofspiel>("good", good1.endpoint(), DialectKind::Jujitsu, &client),
    ];
    let mut seats2 = vec![
        http_seat::<Goofspiel>("good", good2.endpoint(), DialectKind::Jujitsu, &client),
        http_seat::<Goofspiel>("mute", mute.endpoint(), DialectKind::Jujitsu, &client),
    ];
    let play = async {
        tokio::join!(
            play_live(&v, 15, &mut seats1, &cfg),
            play_live(&v, 16, &mut seats2, &cfg)
        )
    };
    // Each match needs about 11 move times: far below this bound.
    let (r1, r2) = tokio::time::timeout(Duration::from_secs(60), play)
        .await
        .expect("a match stalled");
    let (r1, r2) = (r1.unwrap(), r2.unwrap());
    for (record, mute_seat, good, good_seat, high) in
        [(&r1, 0, &good1, 1, false), (&r2, 1, &good2, 0, true)]
    {
        record.verify::<Goofspiel>().unwrap();
        let faults = faults_of(record, mute_seat);
        assert_eq!(kinds(&faults), (0..11).map(|k| (k, "timeout")).collect());
        check_good_side(record, good, good_seat, high, 11);
    }
    // Every decision of both matches was asked, and each match said goodbye.
    let reqs = mute.requests();
    assert_eq!(reqs.len(), 2 * 12);
    let ended = reqs
        .iter()
        .filter(|r| r.json()["gameEnded"] == true)
        .count();
    assert_eq!(ended, 2);
}

// ---------------------------------------------------------------------------
// The croupier dialect over HTTP (SkullWhist, Love Letter).

/// A `croupier/1` HTTP bot: answers `act` with the first legal action
/// (unless `quirk` says otherwise for its n-th act, from 0), and every
/// other message with 204.
fn croupier_bot(
    quirk: impl Fn(usize, &Value) -> Option<Reply> + Send + Sync + 'static,
) -> impl Fn(&Req) -> Reply + Send + Sync + 'static {
    let acts = AtomicUsize::new(0);
    move |req| {
        let Some(msg) = req.try_json() else {
            return bad_request();
        };
        if msg["type"] != "act" {
            return typed(204, "text/plain", Vec::new());
        }
        let n = acts.fetch_add(1, Ordering::Relaxed);
        quirk(n, &msg).unwrap_or_else(|| {
            let answer = json!({"action": msg["legal"][0], "decision": msg["decision"]});
            typed(200, "application/json", answer.to_string().into_bytes())
        })
    }
}

fn messages(bot: &FakeBot) -> Vec<Value> {
    bot.requests().iter().map(Req::json).collect()
}

fn types(msgs: &[Value]) -> Vec<&str> {
    msgs.iter().map(|m| m["type"].as_str().unwrap()).collect()
}

async fn play_croupier<G: Game>(
    variant: &G::Variant,
    bots: [&FakeBot; 2],
    cfg: &LiveConfig,
    seed: u64,
) -> Record {
    let client = client();
    let mut seats: Vec<LiveSeat<G>> = bots
        .iter()
        .enumerate()
        .map(|(i, b)| {
            http_seat::<G>(
                &format!("bot{i}"),
                b.endpoint(),
                DialectKind::Croupier,
                &client,
            )
        })
        .collect();
    let record = play_live(variant, seed, &mut seats, cfg).await.unwrap();
    record.verify::<G>().unwrap();
    record
}

#[tokio::test]
async fn skullwhist_over_http_plays_cleanly_in_the_croupier_dialect() {
    let a = FakeBot::start(croupier_bot(|_, _| None)).await;
    let b = FakeBot::start(croupier_bot(|_, _| None)).await;
    let record =
        play_croupier::<SkullWhist>(&SkullWhistVariant::default(), [&a, &b], &config(MOVE), 20)
            .await;
    assert!(record.steps.iter().all(|s| s.fault.is_none()));
    assert_eq!(record.steps.len(), 2 + 26, "two bids and 26 cards");
    assert_eq!(record.outcome.forfeited_by, None);
    for (seat, bot) in [&a, &b].into_iter().enumerate() {
        let msgs = messages(bot);
        let t = types(&msgs);
        assert_eq!(t[0], "start");
        assert_eq!(msgs[0]["protocol"], "croupier/1");
        assert_eq!(msgs[0]["game"], "skullwhist");
        assert_eq!(msgs[0]["seat"], seat);
        assert_eq!(*t.last().unwrap(), "end");
        assert_eq!(t.iter().filter(|&&x| x == "start").count(), 1);
        assert_eq!(t.iter().filter(|&&x| x == "end").count(), 1);
        let acts: Vec<&Value> = msgs.iter().filter(|m| m["type"] == "act").collect();
        assert_eq!(acts.len(), steps_of(&record, seat as u8).len());
        for (i, act) in acts.iter().enumerate() {
            assert_eq!(act["decision"], i + 1);
            let deadline = act["deadline_ms"].as_u64().unwrap();
            assert!(deadline > 0 && deadline <= MOVE.as_millis() as u64, "{act}");
        }
        assert_eq!(
            msgs.last().unwrap()["outcome"],
            serde_json::to_value(&record.outcome).unwrap()
        );
        for r in bot.requests() {
            assert_eq!(r.header("content-type"), Some("application/json"));
            assert!(r.header("x-croupier-match").is_some());
        }
    }
}

#[tokio::test]
async fn a_bad_skullwhist_answer_over_http_forfeits_the_game() {
    let a = FakeBot::start(croupier_bot(|_, _| None)).await;
    let b = FakeBot::start(croupier_bot(|n, _| (n == 3).then(|| plain("banana")))).await;
    let record =
        play_croupier::<SkullWhist>(&SkullWhistVariant::default(), [&a, &b], &config(MOVE), 21)
            .await;
    let last = record.steps.last().unwrap();
    assert_eq!(last.seat, Seat(1));
    assert_eq!(last.kind, StepKind::Forfeit);
    assert_eq!(last.fault.as_ref().unwrap().kind, "malformed");
    assert_eq!(record.outcome.forfeited_by, Some(Seat(1)));
    assert_eq!(record.outcome.ranks, vec![1, 2]);
    assert_eq!(record.steps.iter().filter(|s| s.fault.is_some()).count(), 1);
    for bot in [&a, &b] {
        let msgs = messages(bot);
        assert_eq!(types(&msgs).iter().filter(|&&x| x == "end").count(), 1);
        assert_eq!(types(&msgs).last(), Some(&"end"));
    }
    // The bad bot was asked four times: nothing after the forfeit.
    let acts = messages(&b).iter().filter(|m| m["type"] == "act").count();
    assert_eq!(acts, 4);
}

#[tokio::test]
async fn a_late_love_letter_bot_over_http_is_out_of_each_round_but_asked_again() {
    let good = FakeBot::start(croupier_bot(|_, _| None)).await;
    let slow = FakeBot::start(croupier_bot(|_, msg| {
        let answer = json!({"action": msg["legal"][0], "decision": msg["decision"]});
        Some(late(
            LATE,
            typed(200, "application/json", answer.to_string().into_bytes()),
        ))
    }))
    .await;
    let record = play_croupier::<LoveLetter>(
        &LoveLetterVariant::default(),
        [&good, &slow],
        &config(MOVE),
        22,
    )
    .await;
    let faults = faults_of(&record, 1);
    assert!(faults.values().all(|f| f.kind == "timeout"), "{faults:?}");
    assert!(faults_of(&record, 0).is_empty());
    let steps = steps_of(&record, 1);
    assert!(steps.iter().all(|(a, _)| a == "<forfeit>"), "{steps:?}");
    // Asked afresh in later rounds: one act per fault, more than one round.
    let acts = messages(&slow)
        .iter()
        .filter(|m| m["type"] == "act")
        .count();
    assert_eq!(acts, faults.len());
    assert!(acts >= 2, "asked {acts} times");
    assert_eq!(record.outcome.ranks, vec![1, 2]);
    for bot in [&good, &slow] {
        assert_eq!(types(&messages(bot)).last(), Some(&"end"));
    }
}

#[tokio::test]
async fn a_failed_start_over_http_makes_every_decision_a_fault_without_asking() {
    let good = FakeBot::start(croupier_bot(|_, _| None)).await;
    let inner = croupier_bot(|_, _| None);
    let refuses = FakeBot::start(move |req: &Req| {
        if req.try_json().is_some_and(|m| m["type"] == "start") {
            typed(500, "text/plain", b"not today".to_vec())
        } else {
            inner(req)
        }
    })
    .await;
    let record = play_croupier::<SkullWhist>(
        &SkullWhistVariant::default(),
        [&refuses, &good],
        &config(MOVE),
        23,
    )
    .await;
    let faults = faults_of(&record, 0);
    assert_eq!(faults.len(), 1, "{faults:?}");
    let f = faults.values().next().unwrap();
    assert!(
        f.detail.contains("at start") && f.detail.contains("500"),
        "{f:?}"
    );
    assert_eq!(record.outcome.forfeited_by, Some(Seat(0)));
    let msgs = messages(&refuses);
    assert!(!types(&msgs).contains(&"act"), "{:?}", types(&msgs));
    assert_eq!(types(&messages(&good)).last(), Some(&"end"));
}
