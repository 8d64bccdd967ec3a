//! Issue 18, item 1, through the ladder: a Love Letter game is played by a
//! pull bot against house bots; whenever the pull bot holds the move (so the
//! game cannot end meanwhile), every public page, JSON twin and `/v1` reply
//! is fetched, and none may show the game's seed (in any textual form) or
//! anything derived from the deal (record, replay, other seats' cards).
//! Once the game is over its seed is shown: the probe could have seen it.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::{config, TestServer};
use croupier_arena::bot_side::{CroupierBot, Handled};
use croupier_bots::Builtins;
use croupier_competition::ladder::{GameLadder, LadderConfig};
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::GameKind;
use serde_json::{json, Value};

/// A ladder of Love Letter only, against the house bots, with decisions
/// long enough to probe every route before answering.
fn ladder_config() -> croupier_server::ServerConfig {
    let mut c = config();
    let mut loveletter = GameLadder::default_for(GameKind::LoveLetter);
    loveletter.move_time = Duration::from_secs(20);
    loveletter.house_games = false;
    c.ladder = Some(LadderConfig {
        games: vec![loveletter],
        rest: Duration::from_millis(50),
        tick: Duration::from_millis(50),
        poll_grace: Duration::from_secs(5),
        ..LadderConfig::default()
    });
    c
}

/// The forms a seed may take in a reply.
fn seed_forms(seed: i64) -> Vec<String> {
    vec![
        seed.to_string(),
        (seed as u64).to_string(),
        format!("{:x}", seed as u64),
        format!("{:X}", seed as u64),
    ]
}

/// The names of the Love Letter cards (held cards are shown by name).
const CARDS: [&str; 8] = [
    "Guard", "Priest", "Baron", "Handmaid", "Prince", "King", "Countess", "Princess",
];

/// A request with an optional bearer token and JSON body: (status, body).
fn send(
    srv: &TestServer,
    method: reqwest::Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, String) {
    let mut req = srv.client.request(method, format!("{}{path}", srv.base));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let resp = req.send().unwrap();
    (resp.status().as_u16(), resp.text().unwrap())
}

/// The store's view: (id, seed, status, record) of the latest game `bot`
/// sits at, if any.
fn game_of(db: &str, bot: &str) -> Option<(i64, i64, String, Option<String>)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = croupier_store::open(db).await.unwrap();
        let me = store.bot_by_name(bot).await.unwrap().unwrap().id;
        let mut found = None;
        let mut id = 1;
        while let Some(g) = store.game(id).await.unwrap() {
            if store.game_bots(id).await.unwrap().contains(&me) {
                found = Some((g.id, g.seed, g.status, g.record));
            }
            id += 1;
        }
        found
    })
}

#[test]
fn no_page_twin_or_api_reply_shows_the_seed_or_hidden_cards_of_a_running_ladder_game() {
    let srv = TestServer::with_config(ladder_config());
    let (s, body) = send(
        &srv,
        reqwest::Method::POST,
        "/v1/owners",
        None,
        Some(json!({"name": "dora", "password": "pw"})),
    );
    assert_eq!(s, 201, "{body}");
    let name = "hidden-pull";
    let (s, body) = send(
        &srv,
        reqwest::Method::POST,
        "/v1/bots",
        None,
        Some(json!({"name": name, "game": "loveletter", "kind": "pull"})),
    );
    assert_eq!(s, 401, "owner endpoints need the owner's password: {body}");
    let reply = srv
        .client
        .post(format!("{}/v1/bots", srv.base))
        .basic_auth("dora", Some("pw"))
        .body(json!({"name": name, "game": "loveletter", "kind": "pull"}).to_string())
        .send()
        .unwrap();
    assert_eq!(reply.status().as_u16(), 201);
    let pull: Value = serde_json::from_str(&reply.text().unwrap()).unwrap();
    let token = pull["token"].as_str().unwrap().to_string();

    let mut bots: HashMap<String, CroupierBot<LoveLetter>> = HashMap::new();
    let mut after = 0u64;
    let mut probes = 0usize;
    let mut fetched = 0usize;
    let mut probed_game: Option<i64> = None;
    let deadline = Instant::now() + Duration::from_secs(120);
    // Play until the probed game is finished in the store.
    let (game, seed) = loop {
        assert!(Instant::now() < deadline, "the ladder game did not finish");
        if let Some(game) = probed_game {
            let (seed, status) = stored_game(&srv, game);
            if status != "running" {
                assert_eq!(status, "finished", "game {game}");
                if probes >= 2 {
                    break (game, seed);
                }
                // The pull bot was knocked out after one decision (a
                // Guard's guess on the first turn): probe the next game.
                (probed_game, probes, fetched) = (None, 0, 0);
            }
        }
        let (s, text) = send(
            &srv,
            reqwest::Method::GET,
            &format!("/v1/messages?after={after}&wait=1"),
            Some(&token),
            None,
        );
        assert_eq!(s, 200, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        for m in v["messages"].as_array().unwrap() {
            after = m["seq"].as_u64().unwrap();
            let tag = m["match"].as_str().unwrap().to_string();
            let bot = bots
                .entry(tag.clone())
                .or_insert_with(|| CroupierBot::new(LoveLetter::builtin("random").unwrap(), 3));
            let Handled::Answer(a) = bot.handle(&m["message"].to_string()).unwrap() else {
                continue;
            };
            // The pull bot holds the move: its game is running and stays so.
            let (id, seed, status, record) = game_of(&srv.db, name).unwrap();
            assert_eq!(status, "running", "a decision is asked in game {id}");
            assert!(record.is_none(), "no record is stored while running");
            if probed_game.is_none_or(|g| g == id) && probes < 6 {
                probed_game = Some(id);
                probes += 1;
                fetched += probe(&srv, id, seed, &token, after);
            }
            let a: Value = serde_json::from_str(&a).unwrap();
            let body = json!({"match": tag, "decision": a["decision"], "action": a["action"]});
            let (s, r) = send(
                &srv,
                reqwest::Method::POST,
                "/v1/answer",
                Some(&token),
                Some(body.clone()),
            );
            assert_eq!(s, 200, "{body}: {r}");
        }
    };
    assert!(probes >= 2, "probed at {probes} decisions");
    assert!(fetched > 40, "{fetched} fetches");
    // Once the game is over, its seed is public: the probe could have seen it.
    let (s, page) = send(
        &srv,
        reqwest::Method::GET,
        &format!("/json/games/{game}"),
        None,
        None,
    );
    assert_eq!(s, 200, "{page}");
    assert!(
        page.contains(&format!("\"seed\":\"{}\"", seed as u64)),
        "the finished game shows its seed: {page}"
    );
    let v: Value = serde_json::from_str(&page).unwrap();
    assert!(v["record"].is_object(), "and its record: {page}");
}

/// The stored (seed, status) of `game`.
fn stored_game(srv: &TestServer, game: i64) -> (i64, String) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = croupier_store::open(&srv.db).await.unwrap();
        let g = store.game(game).await.unwrap().unwrap();
        (g.seed, g.status)
    })
}

/// Fetches every route while game `id` (dealt from `seed`) runs; returns how
/// many replies were checked.
fn probe(srv: &TestServer, id: i64, seed: i64, token: &str, after: u64) -> usize {
    let seeds = seed_forms(seed);
    let (s, twin) = send(
        srv,
        reqwest::Method::GET,
        &format!("/json/games/{id}"),
        None,
        None,
    );
    assert_eq!(s, 200, "{twin}");
    let twin: Value = serde_json::from_str(&twin).unwrap();
    assert_eq!(twin["game"]["status"], "running", "{twin}");
    // Nothing derived from the deal: no seed, record or replay.
    for key in ["seed", "record", "replay"] {
        assert!(
            twin[key].is_null(),
            "a running game shows its {key}: {twin}"
        );
    }
    let names: Vec<String> = twin["game"]["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.len() >= 2, "{twin}");
    let mut public: Vec<String> = vec![
        "/".into(),
        "/json/home".into(),
        "/games".into(),
        "/json/games".into(),
        "/activity".into(),
        "/json/activity".into(),
        "/bots".into(),
        "/json/bots".into(),
        "/leaderboard/loveletter".into(),
        "/json/leaderboard/loveletter".into(),
        "/api/".into(),
    ];
    for prefix in ["", "/json"] {
        public.push(format!("{prefix}/games/{id}"));
        for step in [1, 3] {
            public.push(format!("{prefix}/games/{id}?step={step}"));
        }
        for n in &names {
            public.push(format!("{prefix}/bots/{n}"));
        }
        public.push(format!("{prefix}/versus/{}/{}", names[0], names[1]));
    }
    let mut fetched = 0;
    for path in &public {
        let (_, body) = send(srv, reqwest::Method::GET, path, None, None);
        fetched += 1;
        for s in &seeds {
            assert!(!body.contains(s.as_str()), "{path} shows the seed {s}");
        }
        // No card of this (the only) game is shown anywhere in public while
        // it runs: no hand, discard or deck.
        for c in CARDS {
            assert!(!body.contains(c), "{path} shows the card {c}: {body}");
        }
    }
    // The bot's own view: its messages (its hand and public plays, never the
    // seed) and its account.
    for path in [
        "/v1/me".to_string(),
        "/v1/messages?wait=0".into(),
        format!("/v1/messages?after={}&wait=0", after.saturating_sub(3)),
    ] {
        let (s, body) = send(srv, reqwest::Method::GET, &path, Some(token), None);
        assert_eq!(s, 200, "{path}: {body}");
        fetched += 1;
        for s in &seeds {
            assert!(!body.contains(s.as_str()), "{path} shows the seed {s}");
        }
        assert!(!body.contains("\"seed\""), "{path} has a seed: {body}");
    }
    fetched
}
