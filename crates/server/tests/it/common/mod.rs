//! Shared helpers of the server's integration tests: a real server on an
//! ephemeral port (in-process, on its own tokio runtime, over a temporary
//! SQLite file), a blocking HTTP client that checks the envelope of every
//! reply (HTTP 200, a JSON object with a known `result`), bots, and the
//! SkullWhist rules the tests need to check what the server says.

#![allow(dead_code)] // each test file uses a different part of this module
#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use croupier_live::hub::HubConfig;
use croupier_server::ServerConfig;
use serde_json::{json, Map, Value};

/// The server settings of most tests: no house bots, short long polls, and
/// clocks long enough that they never fire unless a test is about them.
pub fn config() -> ServerConfig {
    ServerConfig {
        hub: HubConfig {
            session_idle: Duration::from_secs(120),
            move_timeout: Duration::from_secs(60),
            poll_timeout: Duration::from_secs(5),
            lease: Default::default(),
        },
        house_bots: Vec::new(),
        house_pause: Duration::from_millis(1),
        ladder: None,
        // Test bots listen on loopback.
        allow_private_bot_urls: true,
        sandbox: Default::default(),
    }
}

/// A hub over the database at `url`, prepared as `serve` prepares it
/// (on PostgreSQL it joins the other instances on that database).
pub async fn hub_on(
    url: &str,
) -> (
    std::sync::Arc<croupier_live::hub::Hub>,
    std::sync::Arc<dyn croupier_store::Store>,
) {
    let store = croupier_store::open(url).await.unwrap();
    let (state, _) = croupier_server::prepare(std::sync::Arc::clone(&store), &config())
        .await
        .unwrap();
    (std::sync::Arc::clone(&state.hub), store)
}

/// Runs `test` with the URL of a fresh database in a throw-away
/// PostgreSQL cluster, on a runtime of its own; without PostgreSQL's
/// binaries it says so and returns (the test passes).
pub fn on_postgres<F, Fut>(test: F)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    if croupier_store::scratch::find_bin().is_none() {
        eprintln!("skipped: PostgreSQL's binaries (initdb, pg_ctl) are not installed");
        return;
    }
    let cluster = croupier_store::scratch::ScratchCluster::start(false).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let url = cluster.create_database().await.unwrap();
        test(url).await;
    });
}

/// `n` new bots (names from `prefix`), each logged in at `hub`.
pub async fn logged_in(
    store: &dyn croupier_store::Store,
    hub: &croupier_live::hub::Hub,
    prefix: &str,
    n: usize,
) -> Vec<croupier_store::BotId> {
    let mut bots = Vec::new();
    for _ in 0..n {
        let name = unique_name(prefix);
        let bot = store.create_bot(&name, "x", false).await.unwrap();
        hub.login(bot, format!("{name}-1")).await.unwrap();
        bots.push(bot);
    }
    bots
}

/// Two instances on one PostgreSQL database, a pool on it, and bots
/// logged in at `two`.
pub struct TwoInstances {
    pub one: std::sync::Arc<croupier_live::hub::Hub>,
    pub two: std::sync::Arc<croupier_live::hub::Hub>,
    pub store: std::sync::Arc<dyn croupier_store::Store>,
    pub pool: sqlx::PgPool,
    pub bots: Vec<croupier_store::BotId>,
}

/// Starts two instances on the database at `url` and logs `n` new bots
/// (names from `prefix`) in at the second.
pub async fn two_instances(url: &str, prefix: &str, n: usize) -> TwoInstances {
    let (one, store) = hub_on(url).await;
    let (two, _) = hub_on(url).await;
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    let bots = logged_in(&*store, &two, prefix, n).await;
    // Each login tells every instance to drop the bot's cached session
    // ("s BOT"): heard before the test begins, not in the middle of it
    // (where it emptied a cache a test had just filled).
    for hub in [&one, &two] {
        heard_so_far(hub.relay().expect("in a cluster")).await;
    }
    TwoInstances {
        one,
        two,
        store,
        pool,
        bots,
    }
}

/// Sends `payload` on the instances' shared channel, as a home would, and
/// gives the instances a moment to hear it.
pub async fn announce(pool: &sqlx::PgPool, payload: &str) {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(croupier_store::postgres::cluster::SHARED_CHANNEL)
        .bind(payload)
        .execute(pool)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// Ends the connection of `relay`'s listener (`pg_terminate_backend`) and
/// waits until it listens again and the relay has handled the loss.
pub async fn lose_listener(pool: &sqlx::PgPool, relay: &croupier_live::hub::relay::Relay) {
    let channel = croupier_store::postgres::cluster::instance_channel(relay.instance());
    let pattern = format!("%\"{channel}\"%");
    let listeners = || async {
        sqlx::query_scalar::<_, i32>(
            "SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()",
        )
        .bind(&pattern)
        .fetch_all(pool)
        .await
        .unwrap()
    };
    let old = listeners().await;
    assert_eq!(old.len(), 1, "one listener of {channel}: {old:?}");
    sqlx::query("SELECT pg_terminate_backend($1)")
        .bind(old[0])
        .execute(pool)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let now = listeners().await;
            if now.len() == 1 && now != old {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the listener did not listen again");
    // The new connection listens before the relay's task is told of the
    // loss (and empties its caches). That task hears the answer to a
    // request this instance sends itself now only after it handled the
    // loss (a request under way then is sent again).
    heard_so_far(relay).await;
}

/// Waits until `relay`'s task has handled every notification committed
/// before this call: it hears them in commit order on one connection, so
/// the answer to a request this instance sends itself now comes after
/// them.
pub async fn heard_so_far(relay: &croupier_live::hub::relay::Relay) {
    let answer = relay
        .ask_home(
            croupier_live::hub::relay::HomeRead::Status,
            relay.instance(),
            0,
            0,
            Duration::from_secs(10),
        )
        .await;
    assert_eq!(answer.as_deref(), Some(croupier_live::hub::relay::GONE));
}

/// Deals `a` and `b` a game on `hub` (`a` waits, `b` takes it): the game
/// and the bots' cards, `a`'s first.
pub async fn deal(
    hub: &std::sync::Arc<croupier_live::hub::Hub>,
    a: croupier_store::BotId,
    b: croupier_store::BotId,
) -> (croupier_store::GameId, [Vec<String>; 2]) {
    use croupier_live::hub::NewGame;
    let waiting = {
        let hub = std::sync::Arc::clone(hub);
        tokio::spawn(async move { hub.new_game(a).await })
    };
    tokio::time::timeout(Duration::from_secs(10), async {
        while hub.counts().1 == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the first bot never started waiting");
    let Ok(NewGame::Game { game, cards, .. }) = hub.new_game(b).await else {
        panic!("the second bot was dealt no game");
    };
    let text = |cards: Vec<croupier_rules::skullwhist::Card>| -> Vec<String> {
        cards.iter().map(|c| c.to_string()).collect()
    };
    match waiting.await.unwrap() {
        Ok(NewGame::Game {
            game: g,
            cards: first,
            ..
        }) => {
            assert_eq!(g, game);
            (game, [text(first), text(cards)])
        }
        other => panic!("the waiting bot was told {other:?}"),
    }
}

/// A blocking HTTP client for one server.
#[derive(Clone, Debug)]
pub struct Api {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Shared connection pool (cheap to clone, usable from many threads).
    pub client: reqwest::blocking::Client,
}

/// A plain HTTP reply.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

/// A logged-in bot.
#[derive(Clone, Debug)]
pub struct Bot {
    pub id: i64,
    pub name: String,
    pub password: String,
    pub session: String,
}

static NAMES: AtomicUsize = AtomicUsize::new(0);

/// A bot name unique in this process.
pub fn unique_name(prefix: &str) -> String {
    format!("{prefix}-{}", NAMES.fetch_add(1, Ordering::Relaxed))
}

impl Api {
    /// A client for `base`.
    pub fn new(base: String) -> Api {
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(64)
            .build()
            .unwrap();
        Api { base, client }
    }

    /// POSTs `body` as is to `/api/<method>/` and checks the envelope: HTTP
    /// 200, a JSON object whose `result` is success, failure or retry, with a
    /// non-empty `reason` unless it is success.
    pub fn post_raw(&self, method: &str, body: &str) -> Value {
        let url = format!("{}/api/{method}/", self.base);
        let reply = self
            .client
            .post(&url)
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .unwrap_or_else(|e| panic!("POST {url}: {e}"));
        let status = reply.status().as_u16();
        let text = reply.text().unwrap();
        assert_eq!(status, 200, "POST {url} {body:?}: HTTP {status}: {text}");
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("POST {url} {body:?}: not JSON ({e}): {text}"));
        check_envelope(&v, &format!("POST {url} {body:?}"));
        v
    }

    /// POSTs a JSON value to `/api/<method>/`.
    pub fn call(&self, method: &str, body: Value) -> Value {
        self.post_raw(method, &body.to_string())
    }

    /// Calls `method` as `bot`: `extra`'s keys plus the bot's session.
    pub fn as_bot(&self, bot: &Bot, method: &str, extra: Value) -> Value {
        let mut body = match extra {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => panic!("extra must be an object, not {other}"),
        };
        body.insert("session".into(), bot.session.clone().into());
        self.call(method, Value::Object(body))
    }

    /// `status` of a bot (must succeed).
    pub fn status(&self, bot: &Bot) -> Value {
        let s = self.as_bot(bot, "status", Value::Null);
        assert_success(&s, "status");
        s
    }

    /// `bid` (must succeed); the bid is sent as given (number or string).
    pub fn bid(&self, bot: &Bot, bid: Value) {
        let r = self.as_bot(bot, "bid", json!({ "bid": bid }));
        assert_success(&r, "bid");
    }

    /// `play` (must succeed).
    pub fn play(&self, bot: &Bot, card: &str) {
        let r = self.as_bot(bot, "play", json!({ "card": card }));
        assert_success(&r, &format!("play {card}"));
    }

    /// `old-game` as `bot` (any result).
    pub fn old_game(&self, bot: &Bot, game: i64) -> Value {
        self.as_bot(bot, "old-game", json!({ "game": game }))
    }

    /// A GET, any status.
    pub fn get(&self, path: &str) -> Raw {
        let url = format!("{}{path}", self.base);
        let reply = self
            .client
            .get(&url)
            .send()
            .unwrap_or_else(|e| panic!("GET {url}: {e}"));
        let status = reply.status().as_u16();
        let content_type = reply
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        Raw {
            status,
            content_type,
            body: reply.text().unwrap(),
        }
    }

    /// Registers `name` (must succeed) and returns its id.
    pub fn register(&self, name: &str, password: &str) -> i64 {
        let r = self.call("register", json!({"name": name, "password": password}));
        assert_success(&r, &format!("register {name}"));
        r["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("register: no integer id: {r}"))
    }

    /// Logs `name` in (must succeed): (session, id).
    pub fn login(&self, name: &str, password: &str) -> (String, i64) {
        let r = self.call("login", json!({"name": name, "password": password}));
        assert_success(&r, &format!("login {name}"));
        let session = r["session"].as_str().unwrap().to_string();
        (session, r["id"].as_i64().unwrap())
    }

    /// Registers and logs in a new bot with a unique name.
    pub fn bot(&self, prefix: &str) -> Bot {
        let name = unique_name(prefix);
        let password = format!("pw of {name}");
        let id = self.register(&name, &password);
        let (session, login_id) = self.login(&name, &password);
        assert_eq!(id, login_id, "login returns the registered id");
        Bot {
            id,
            name,
            password,
            session,
        }
    }

    /// `new-game` until it is not `retry` (must then succeed).
    pub fn new_game(&self, bot: &Bot) -> Value {
        loop {
            let r = self.as_bot(bot, "new-game", Value::Null);
            if r["result"] != "retry" {
                assert_success(&r, "new-game");
                return r;
            }
        }
    }

    /// Puts two idle bots into one game: both call `new-game` at once (on a
    /// server where nobody else is waiting). Returns both replies.
    pub fn pair(&self, a: &Bot, b: &Bot) -> (Value, Value) {
        let (ra, rb) = std::thread::scope(|s| {
            let ta = s.spawn(|| self.new_game(a));
            let tb = s.spawn(|| self.new_game(b));
            (ta.join().unwrap(), tb.join().unwrap())
        });
        assert_eq!(ra["game"], rb["game"], "paired bots share a game");
        assert_eq!(ra["opponent"], b.id);
        assert_eq!(rb["opponent"], a.id);
        (ra, rb)
    }

    /// Plays `bot`'s current game to its end on its own (bidding `bid`, then
    /// the first legal card whenever it is its turn), polling `status`;
    /// returns the cards it played in order.
    pub fn play_out(&self, bot: &Bot, hand: &[String], bid: i64) -> Vec<String> {
        let mut hand = hand.to_vec();
        let mut played = Vec::new();
        self.bid(bot, json!(bid));
        loop {
            let s = self.status(bot);
            if s["game"].is_null() {
                assert_all_null(&s);
                return played;
            }
            if s["your-turn"] == true {
                let lead = s["opponent-current-card"].as_str();
                let card = legal_cards(&hand, lead)[0].clone();
                self.play(bot, &card);
                hand.retain(|c| *c != card);
                played.push(card);
            } else {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}

/// With `CROUPIER_TEST_DATABASE=postgres`, the throw-away PostgreSQL
/// cluster of this test binary (started once; each server gets a fresh
/// database in it); otherwise `None` and servers use SQLite files.
fn scratch_postgres() -> Option<&'static croupier_store::scratch::ScratchCluster> {
    static CLUSTER: std::sync::OnceLock<Option<croupier_store::scratch::ScratchCluster>> =
        std::sync::OnceLock::new();
    CLUSTER
        .get_or_init(|| {
            let wanted = std::env::var("CROUPIER_TEST_DATABASE").ok()?;
            assert_eq!(
                wanted, "postgres",
                "CROUPIER_TEST_DATABASE must be 'postgres'"
            );
            Some(croupier_store::scratch::ScratchCluster::start(false).unwrap())
        })
        .as_ref()
}

/// A real server on 127.0.0.1 (ephemeral port) with its own runtime and a
/// temporary database (SQLite, or PostgreSQL: see [`scratch_postgres`]);
/// stopped when dropped.
pub struct TestServer {
    pub api: Api,
    /// The database URL (`sqlite://...` or `postgres://...`).
    pub db: String,
    rt: Option<tokio::runtime::Runtime>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for TestServer {
    type Target = Api;
    fn deref(&self) -> &Api {
        &self.api
    }
}

impl TestServer {
    /// A server with [`config`].
    pub fn start() -> TestServer {
        TestServer::with_config(config())
    }

    /// A server with `config`.
    pub fn with_config(config: ServerConfig) -> TestServer {
        TestServer::with_net(config, croupier_server::net::NetConfig::default())
    }

    /// A server with `config` and connection timeouts and caps `net`.
    pub fn with_net(config: ServerConfig, net: croupier_server::net::NetConfig) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let url = match scratch_postgres() {
            Some(cluster) => rt.block_on(cluster.create_database()).unwrap(),
            None => format!("sqlite://{}", dir.path().join("croupier.db").display()),
        };
        let db = url.clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let addr = rt.block_on(async move {
            let store = croupier_store::open(&url).await.unwrap();
            let (state, house) = croupier_server::prepare(store, &config).await.unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                let shutdown = async move {
                    let _ = rx.await;
                };
                croupier_server::run_on(listener, state, house, &config, net, shutdown)
                    .await
                    .unwrap();
            });
            addr
        });
        TestServer {
            api: Api::new(format!("http://{addr}")),
            db,
            rt: Some(rt),
            shutdown: Some(tx),
            _dir: dir,
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

// ---------------------------------------------------------------------------
// Assertions

const RESULTS: [&str; 3] = ["success", "failure", "retry"];

/// Every reply: a JSON object whose `result` is success, failure (with a
/// reason) or retry (with a reason).
pub fn check_envelope(v: &Value, what: &str) {
    let result = v["result"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no string 'result' in {v}"));
    assert!(
        RESULTS.contains(&result),
        "{what}: result {result:?} in {v}"
    );
    if result != "success" {
        let reason = v["reason"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: {result} without a reason: {v}"));
        assert!(!reason.trim().is_empty(), "{what}: empty reason: {v}");
    }
}

/// `result` is success.
pub fn assert_success(v: &Value, what: &str) {
    assert_eq!(v["result"], "success", "{what}: expected success, got {v}");
}

/// `result` is failure and the reason contains `needle` (case-insensitive).
pub fn assert_failure(v: &Value, needle: &str, what: &str) {
    assert_eq!(v["result"], "failure", "{what}: expected failure, got {v}");
    let reason = v["reason"].as_str().unwrap_or("").to_lowercase();
    assert!(
        reason.contains(&needle.to_lowercase()),
        "{what}: reason should mention {needle:?}: {v}"
    );
}

/// The status keys of SPEC §2.1.
pub const STATUS_KEYS: [&str; 8] = [
    "game",
    "round",
    "your-turn",
    "opponent",
    "opponent-bid",
    "opponent-previous-card",
    "opponent-current-card",
    "you-won-previous-round",
];

/// A `status` reply outside a game: success with every field present and null.
pub fn assert_all_null(s: &Value) {
    assert_success(s, "status");
    for k in STATUS_KEYS {
        let obj = s.as_object().unwrap();
        assert!(obj.contains_key(k), "status lacks '{k}': {s}");
        assert!(
            obj[k].is_null(),
            "status outside a game: '{k}' not null: {s}"
        );
    }
}

/// A `new-game` reply's cards, checked: 13 distinct well-formed cards, sorted.
pub fn cards_of(reply: &Value) -> Vec<String> {
    let cards: Vec<String> = reply["cards"]
        .as_array()
        .unwrap_or_else(|| panic!("no cards in {reply}"))
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert_eq!(cards.len(), 13, "13 cards: {reply}");
    for c in &cards {
        assert!(is_card(c), "malformed card {c:?} in {reply}");
    }
    let distinct: BTreeSet<&String> = cards.iter().collect();
    assert_eq!(distinct.len(), 13, "distinct cards: {reply}");
    let mut sorted = cards.clone();
    sorted.sort();
    assert_eq!(cards, sorted, "cards are sorted: {reply}");
    cards
}

// ---------------------------------------------------------------------------
// Rules (SPEC §1.1)

/// `H05`-style text: suit letter and a two-digit value 01..13.
pub fn is_card(c: &str) -> bool {
    let b = c.as_bytes();
    b.len() == 3
        && b"CDHS".contains(&b[0])
        && c[1..].bytes().all(|d| d.is_ascii_digit())
        && (1..=13).contains(&c[1..].parse::<u8>().unwrap_or(0))
}

/// A card's suit letter.
pub fn suit(c: &str) -> char {
    c.chars().next().unwrap()
}

/// A card's value, 1..13.
pub fn value(c: &str) -> u8 {
    c[1..].parse().unwrap()
}

/// Whether the leader takes the trick.
pub fn leader_wins(lead: &str, follow: &str) -> bool {
    if suit(lead) == suit(follow) {
        value(lead) > value(follow)
    } else {
        suit(follow) != 'S'
    }
}

/// The cards of `hand` that may be played: any when leading, else the led
/// suit if the hand holds it.
pub fn legal_cards(hand: &[String], lead: Option<&str>) -> Vec<String> {
    let Some(lead) = lead else {
        return hand.to_vec();
    };
    let same: Vec<String> = hand
        .iter()
        .filter(|c| suit(c) == suit(lead))
        .cloned()
        .collect();
    if same.is_empty() {
        hand.to_vec()
    } else {
        same
    }
}

/// SPEC §1.1 score.
pub fn score(bid: i64, tricks: i64) -> i64 {
    if tricks == bid {
        10 * bid
    } else if tricks < bid {
        -10 * bid
    } else {
        10 * bid + (tricks - bid)
    }
}

/// Checks the record of a game that ended normally: 13 rounds consistent
/// with the hands and the rules, tricks summing to 13, scores by §1.1.
pub fn check_finished_record(g: &Value) {
    assert_success(g, "old-game");
    assert!(g["forfeited_by"].is_null(), "not forfeited: {g}");
    assert_eq!(g["round"], 13, "13 rounds: {g}");
    let bots = [g["bot1"].as_i64().unwrap(), g["bot2"].as_i64().unwrap()];
    assert_ne!(bots[0], bots[1]);
    let tricks = [
        g["tricks1"].as_i64().unwrap(),
        g["tricks2"].as_i64().unwrap(),
    ];
    assert_eq!(tricks[0] + tricks[1], 13, "tricks sum to 13: {g}");
    let bids = [g["bid1"].as_i64().unwrap(), g["bid2"].as_i64().unwrap()];
    for (i, b) in bids.iter().enumerate() {
        assert!((1..=13).contains(b), "bid {b}: {g}");
        let key = format!("score{}", i + 1);
        assert_eq!(g[&key], score(*b, tricks[i]), "{key}: {g}");
    }
    let mut hands: Vec<Vec<String>> = ["hand1", "hand2"]
        .iter()
        .map(|k| {
            g[*k]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    for h in &hands {
        assert_eq!(h.len(), 13, "13 cards dealt: {g}");
    }
    let rounds = g["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 13, "every trick in rounds: {g}");
    let seat = |id: &Value| {
        bots.iter()
            .position(|b| *id == *b)
            .unwrap_or_else(|| panic!("{id} is not a player: {g}"))
    };
    let mut won = [0i64; 2];
    let mut next_leader: Option<usize> = None;
    for (i, r) in rounds.iter().enumerate() {
        assert_eq!(r["round"], i + 1, "{r}");
        let leader = seat(&r["leader"]);
        let follower = seat(&r["follower"]);
        assert_ne!(leader, follower, "{r}");
        if let Some(l) = next_leader {
            assert_eq!(leader, l, "the winner leads the next trick: {r}");
        }
        let lead = r["leader-card"].as_str().unwrap().to_string();
        let follow = r["follower-card"].as_str().unwrap().to_string();
        assert!(
            hands[leader].contains(&lead),
            "{lead} from the leader's hand: {g}"
        );
        assert!(
            legal_cards(&hands[follower], Some(&lead)).contains(&follow),
            "{follow} is a legal follow to {lead}: {g}"
        );
        hands[leader].retain(|c| *c != lead);
        hands[follower].retain(|c| *c != follow);
        let winner = if leader_wins(&lead, &follow) {
            leader
        } else {
            follower
        };
        assert_eq!(seat(&r["winner"]), winner, "trick winner by the rules: {r}");
        won[winner] += 1;
        next_leader = Some(winner);
    }
    assert_eq!(won, tricks, "tricks1/tricks2 count the rounds won: {g}");
}
