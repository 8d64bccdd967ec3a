//! The `/v1` API and the ladder over real HTTP: owners register push and
//! pull bots, the ladder seats them against each other and house bots, the
//! records are stored and replay, and faulty bots are paused with a reason.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use common::*;
use croupier_arena::bot_side::{jujitsu_bid, CroupierBot, Handled};
use croupier_bots::{bot_rng, Builtins};
use croupier_competition::ladder::{GameLadder, LadderConfig};
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{GameKind, Record};
use serde_json::{json, Value};

/// A fast ladder: small Goofspiel matches, short rests, no house-only games.
pub(crate) fn ladder_config(strikes: u32) -> croupier_server::ServerConfig {
    let mut c = config();
    let mut goofspiel = GameLadder::default_for(GameKind::Goofspiel);
    goofspiel.variant = Some("jujitsu rounds=5".into());
    goofspiel.move_time = Duration::from_secs(2);
    goofspiel.house_games = false;
    let mut loveletter = GameLadder::default_for(GameKind::LoveLetter);
    loveletter.move_time = Duration::from_secs(2);
    loveletter.house_games = false;
    let mut skullwhist = GameLadder::default_for(GameKind::SkullWhist);
    skullwhist.move_time = Duration::from_secs(2);
    c.ladder = Some(LadderConfig {
        games: vec![goofspiel, loveletter, skullwhist],
        rest: Duration::from_millis(50),
        tick: Duration::from_millis(50),
        strikes,
        pause_for: Duration::from_secs(3600),
        poll_grace: Duration::from_secs(2),
        ..LadderConfig::default()
    });
    c
}

/// A JSON request to the server; returns the status and the JSON body.
pub(crate) fn v1(
    srv: &Api,
    method: reqwest::Method,
    path: &str,
    auth: Option<(&str, &str)>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = srv.client.request(method, format!("{}{path}", srv.base));
    if let Some((u, p)) = auth {
        req = req.basic_auth(u, Some(p));
    }
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let resp = req.send().unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().unwrap();
    let v: Value =
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: not JSON: {text}"));
    if status >= 400 {
        assert!(
            v["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{path}: {v}"
        );
    }
    (status, v)
}

fn bearer(
    srv: &Api,
    method: reqwest::Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = srv
        .client
        .request(method, format!("{}{path}", srv.base))
        .bearer_auth(token);
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let resp = req.send().unwrap();
    let status = resp.status().as_u16();
    (status, serde_json::from_str(&resp.text().unwrap()).unwrap())
}

pub(crate) fn owner(srv: &Api, name: &str) {
    let (s, v) = v1(
        srv,
        reqwest::Method::POST,
        "/v1/owners",
        None,
        Some(json!({"name": name, "password": "pw"})),
    );
    assert_eq!(s, 201, "{v}");
}

pub(crate) fn register(srv: &Api, owner: &str, bot: Value) -> Value {
    let (s, v) = v1(
        srv,
        reqwest::Method::POST,
        "/v1/bots",
        Some((owner, "pw")),
        Some(bot.clone()),
    );
    assert_eq!(s, 201, "{bot}: {v}");
    v
}

#[test]
fn registration_is_checked_and_authenticated() {
    let srv = TestServer::start();
    use reqwest::Method;
    owner(&srv, "alice");
    let (s, _) = v1(
        &srv,
        Method::POST,
        "/v1/owners",
        None,
        Some(json!({"name": "alice", "password": "x"})),
    );
    assert_eq!(s, 409);
    for bad in [
        json!({"name": "a b", "password": "x"}),
        json!({"name": "ok", "password": ""}),
        json!({"name": "ok"}),
    ] {
        let (s, _) = v1(&srv, Method::POST, "/v1/owners", None, Some(bad.clone()));
        assert_eq!(s, 400, "{bad}");
    }
    // Owner endpoints need the owner's password.
    let push =
        json!({"name": "p1", "game": "goofspiel", "kind": "push", "url": "http://127.0.0.1:9/bot"});
    for auth in [None, Some(("alice", "wrong")), Some(("nobody", "pw"))] {
        let (s, _) = v1(&srv, Method::POST, "/v1/bots", auth, Some(push.clone()));
        assert_eq!(s, 401, "{auth:?}");
    }
    let raw = srv
        .client
        .get(format!("{}/v1/bots", srv.base))
        .send()
        .unwrap();
    assert_eq!(raw.status().as_u16(), 401);
    assert!(raw.headers().contains_key("www-authenticate"));
    // Bad registrations say why and create nothing.
    for (bad, needle) in [
        (
            json!({"name": "x", "game": "chess", "kind": "push", "url": "http://h/"}),
            "chess",
        ),
        (
            json!({"name": "x", "game": "goofspiel", "kind": "carrier-pigeon"}),
            "kind",
        ),
        (
            json!({"name": "x", "game": "goofspiel", "kind": "push"}),
            "url",
        ),
        (
            json!({"name": "x", "game": "goofspiel", "kind": "push", "url": "ftp://h/"}),
            "http",
        ),
        (
            json!({"name": "x", "game": "goofspiel", "kind": "push", "url": "http://h/#x"}),
            "fragment",
        ),
        (
            json!({"name": "x", "game": "loveletter", "kind": "push", "url": "http://h/", "dialect": "jujitsu"}),
            "cannot play",
        ),
        (
            json!({"name": "x", "game": "loveletter", "kind": "push", "url": "http://h/", "dialect": "gops"}),
            "croupier or jujitsu",
        ),
        (
            json!({"name": "x", "game": "goofspiel", "kind": "pull", "url": "http://h/"}),
            "pull bot",
        ),
        (
            json!({"name": "x y", "game": "goofspiel", "kind": "pull"}),
            "name",
        ),
        (
            json!({"name": "x", "game": "goofspiel", "kind": "pull", "extra": 1}),
            "unknown field",
        ),
    ] {
        let (s, v) = v1(
            &srv,
            Method::POST,
            "/v1/bots",
            Some(("alice", "pw")),
            Some(bad.clone()),
        );
        assert_eq!(s, 400, "{bad}: {v}");
        assert!(v["error"].as_str().unwrap().contains(needle), "{bad}: {v}");
    }
    let (s, v) = v1(&srv, Method::POST, "/v1/bots", Some(("alice", "pw")), None);
    assert_eq!(s, 400, "{v}");
    // A push bot with credentials in its URL: they become its basic auth
    // and are never shown back (only the user name).
    let b = register(
        &srv,
        "alice",
        json!({"name": "p1", "game": "goofspiel", "kind": "push", "url": "http://me:secret@127.0.0.1:9/bot"}),
    );
    assert_eq!(b["url"], "http://127.0.0.1:9/bot");
    assert_eq!(
        (b["dialect"].as_str(), b["auth_user"].as_str()),
        (Some("jujitsu"), Some("me"))
    );
    assert!(!b.to_string().contains("secret"), "{b}");
    assert!(b.get("token").is_none());
    let (s, _) = v1(
        &srv,
        Method::POST,
        "/v1/bots",
        Some(("alice", "pw")),
        Some(push),
    );
    assert_eq!(s, 409, "names are unique");
    // A pull bot gets a token once.
    let pull = register(
        &srv,
        "alice",
        json!({"name": "q1", "game": "loveletter", "kind": "pull"}),
    );
    let token = pull["token"].as_str().unwrap().to_string();
    assert!(token.starts_with("crp_") && token.len() == 36, "{token}");
    let (s, me) = bearer(&srv, Method::GET, "/v1/me", &token, None);
    assert_eq!((s, me["name"].as_str()), (200, Some("q1")));
    assert!(me.get("token").is_none());
    // Another owner sees none of alice's bots.
    owner(&srv, "bob");
    let (_, list) = v1(&srv, Method::GET, "/v1/bots", Some(("bob", "pw")), None);
    assert_eq!(list["bots"], json!([]));
    let (s, _) = v1(&srv, Method::GET, "/v1/bots/p1", Some(("bob", "pw")), None);
    assert_eq!(s, 404);
    let (_, list) = v1(&srv, Method::GET, "/v1/bots", Some(("alice", "pw")), None);
    assert_eq!(list["bots"].as_array().unwrap().len(), 2);
    // Switching off and on.
    let (s, b) = v1(
        &srv,
        Method::PATCH,
        "/v1/bots/p1",
        Some(("alice", "pw")),
        Some(json!({"enabled": false})),
    );
    assert_eq!((s, &b["enabled"]), (200, &json!(false)));
    let (s, _) = v1(
        &srv,
        Method::PATCH,
        "/v1/bots/p1",
        Some(("alice", "pw")),
        Some(json!({"enabled": "yes"})),
    );
    assert_eq!(s, 400);
    // A new token replaces the old one.
    let (s, t) = v1(
        &srv,
        Method::POST,
        "/v1/bots/q1/token",
        Some(("alice", "pw")),
        None,
    );
    assert_eq!(s, 200);
    let fresh = t["token"].as_str().unwrap();
    assert_ne!(fresh, token);
    assert_eq!(bearer(&srv, Method::GET, "/v1/me", &token, None).0, 401);
    assert_eq!(bearer(&srv, Method::GET, "/v1/me", fresh, None).0, 200);
    let (s, _) = v1(
        &srv,
        Method::POST,
        "/v1/bots/p1/token",
        Some(("alice", "pw")),
        None,
    );
    assert_eq!(s, 409, "push bots have no token");
    // Pull endpoints check their input.
    assert_eq!(
        bearer(&srv, Method::GET, "/v1/messages?wait=31", fresh, None).0,
        400
    );
    assert_eq!(
        bearer(&srv, Method::GET, "/v1/messages?after=-1", fresh, None).0,
        400
    );
    let (s, v) = bearer(&srv, Method::GET, "/v1/messages?wait=0", fresh, None);
    assert_eq!((s, &v["messages"]), (200, &json!([])));
    let (s, _) = bearer(
        &srv,
        Method::POST,
        "/v1/answer",
        fresh,
        Some(json!({"match": "nope", "decision": 1, "action": "x"})),
    );
    assert_eq!(s, 404);
    let (s, _) = bearer(
        &srv,
        Method::POST,
        "/v1/answer",
        fresh,
        Some(json!({"decision": 1})),
    );
    assert_eq!(s, 400);
    assert_eq!(
        bearer(
            &srv,
            Method::GET,
            "/v1/me",
            "crp_00000000000000000000000000000000",
            None
        )
        .0,
        401
    );
}

#[test]
fn the_openapi_document_describes_every_v1_route() {
    let srv = TestServer::start();
    let r = srv.get("/openapi.json");
    assert_eq!(r.status, 200);
    let doc: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    for path in [
        "/v1/owners",
        "/v1/bots",
        "/v1/bots/{name}",
        "/v1/bots/{name}/token",
        "/v1/messages",
        "/v1/answer",
        "/v1/me",
        "/v1/bots/{name}/versions",
        "/v1/bots/{name}/stderr",
        "/v1/admin/bots/{name}/ban",
        "/v1/admin/bots/{name}/unban",
        "/v1/admin/bots/{name}/reset-rating",
        "/v1/admin/owners/{name}/ban",
        "/v1/admin/owners/{name}/unban",
        "/v1/admin/bans",
        "/v1/admin/seasons",
        "/v1/admin/audit",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} missing");
    }
    assert!(doc["webhooks"]["jujitsuPush"].is_object());
    // Every schema reference resolves.
    let text = doc.to_string();
    for part in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = &part[..part.find('"').unwrap()];
        assert!(doc["components"]["schemas"][name].is_object(), "{name}");
    }
}

#[test]
fn uploads_to_a_server_without_hosted_bots_are_refused_with_a_reason() {
    let srv = TestServer::start();
    let (status, _) = v1(
        &srv,
        reqwest::Method::POST,
        "/v1/owners",
        None,
        Some(json!({"name": "hoster", "password": "pw-123456"})),
    );
    assert_eq!(status, 201);
    let r = srv
        .client
        .post(format!(
            "{}/v1/bots/hb/versions?file=bot.py&runtime=python3&dialect=gops&game=goofspiel",
            srv.base
        ))
        .basic_auth("hoster", Some("pw-123456"))
        .body("print(1)")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 503);
    let v: Value = r.json().unwrap();
    assert!(v["error"].as_str().unwrap().contains("--bot-files"), "{v}");
    // Anonymous uploads are refused before anything else.
    let r = srv
        .client
        .post(format!(
            "{}/v1/bots/hb/versions?file=bot.py&runtime=python3&dialect=gops",
            srv.base
        ))
        .body("print(1)")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
}

/// An in-process HTTP bot server; returns its base URL.
pub(crate) fn spawn_bot_server(
    rt: &tokio::runtime::Runtime,
    handler: impl Fn(&HeaderMap, &str) -> (StatusCode, String) + Send + Sync + 'static,
) -> String {
    let handler = Arc::new(handler);
    rt.block_on(async move {
        let app = axum::Router::new().route(
            "/",
            post(move |headers: HeaderMap, body: Bytes| {
                let handler = Arc::clone(&handler);
                async move {
                    let (s, b) = handler(&headers, std::str::from_utf8(&body).unwrap_or(""));
                    (s, b).into_response()
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/")
    })
}

/// A croupier/1 push bot of game `G` playing `strategy`, keyed by match.
pub(crate) fn croupier_push<G: Builtins>(
    strategy: &'static str,
) -> impl Fn(&HeaderMap, &str) -> (StatusCode, String) {
    let matches: Mutex<HashMap<String, CroupierBot<G>>> = Mutex::new(HashMap::new());
    move |headers, body| {
        let tag = headers["x-croupier-match"].to_str().unwrap().to_string();
        let mut m = matches.lock().unwrap();
        let bot = m
            .entry(tag)
            .or_insert_with(|| CroupierBot::new(G::builtin(strategy).unwrap(), 1));
        match bot.handle(body).unwrap() {
            Handled::Answer(a) => (StatusCode::OK, a),
            _ => (StatusCode::NO_CONTENT, String::new()),
        }
    }
}

/// Finished games of the server, with their bots by seat.
pub(crate) fn finished_games(srv: &TestServer) -> Vec<(Record, Vec<i64>)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = croupier_store::open(&srv.db).await.unwrap();
        let mut out = Vec::new();
        let mut id = 1;
        let mut misses = 0;
        while misses < 20 {
            match store.game(id).await.unwrap() {
                Some(g) if g.status == "finished" => {
                    let record: Record =
                        serde_json::from_str(g.record.as_deref().unwrap()).unwrap();
                    out.push((record, store.game_bots(id).await.unwrap()));
                    misses = 0;
                }
                Some(_) => misses = 0,
                None => misses += 1,
            }
            id += 1;
        }
        out
    })
}

pub(crate) fn verify(record: &Record) {
    let r = match record.game.as_str() {
        "goofspiel" => record.verify::<Goofspiel>().map(drop),
        "loveletter" => record.verify::<LoveLetter>().map(drop),
        _ => record.verify::<SkullWhist>().map(drop),
    };
    r.unwrap_or_else(|e| panic!("record of {} does not replay: {e}", record.game));
}

#[test]
fn the_ladder_seats_push_pull_and_house_bots() {
    let srv = TestServer::with_config(ladder_config(3));
    let rt = tokio::runtime::Runtime::new().unwrap();
    owner(&srv, "carol");
    // A Psychological Jujitsu push bot that wants basic auth.
    let jj_requests = Arc::new(Mutex::new(0u32));
    let seen = Arc::clone(&jj_requests);
    let expected = format!("Basic {}", "dTpw"); // base64("u:p")
    let jj = spawn_bot_server(&rt, move |headers, body| {
        if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
            return (StatusCode::UNAUTHORIZED, "no".into());
        }
        *seen.lock().unwrap() += 1;
        if body.contains("\"gameEnded\":true") {
            return (StatusCode::OK, "ok".into());
        }
        let mut s = Goofspiel::builtin("random").unwrap();
        let bid = jujitsu_bid(s.as_mut(), body, &mut bot_rng(7)).unwrap();
        (StatusCode::OK, bid.to_string())
    });
    register(
        &srv,
        "carol",
        json!({"name": "jj", "game": "goofspiel", "kind": "push", "url": jj, "auth_user": "u", "auth_password": "p"}),
    );
    // A croupier/1 push bot for Love Letter and one for SkullWhist.
    let ll = spawn_bot_server(&rt, croupier_push::<LoveLetter>("heuristic"));
    register(
        &srv,
        "carol",
        json!({"name": "ll", "game": "loveletter", "kind": "push", "url": ll}),
    );
    let sw = spawn_bot_server(&rt, croupier_push::<SkullWhist>("heuristic"));
    register(
        &srv,
        "carol",
        json!({"name": "sw", "game": "skullwhist", "kind": "push", "url": sw}),
    );
    // A pull bot for Love Letter, polling from a thread.
    let pull = register(
        &srv,
        "carol",
        json!({"name": "pl", "game": "loveletter", "kind": "pull"}),
    );
    let token = pull["token"].as_str().unwrap().to_string();
    let api = srv.api.clone();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let poller = std::thread::spawn(move || {
        let mut bots: HashMap<String, CroupierBot<LoveLetter>> = HashMap::new();
        let mut after = 0u64;
        while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
            let (s, v) = bearer(
                &api,
                reqwest::Method::GET,
                &format!("/v1/messages?after={after}&wait=1"),
                &token,
                None,
            );
            assert_eq!(s, 200, "{v}");
            for m in v["messages"].as_array().unwrap() {
                after = m["seq"].as_u64().unwrap();
                let tag = m["match"].as_str().unwrap().to_string();
                let bot = bots
                    .entry(tag.clone())
                    .or_insert_with(|| CroupierBot::new(LoveLetter::builtin("random").unwrap(), 3));
                if let Handled::Answer(a) = bot.handle(&m["message"].to_string()).unwrap() {
                    let a: Value = serde_json::from_str(&a).unwrap();
                    let body =
                        json!({"match": tag, "decision": a["decision"], "action": a["action"]});
                    let (s, r) = bearer(
                        &api,
                        reqwest::Method::POST,
                        "/v1/answer",
                        &token,
                        Some(body.clone()),
                    );
                    assert_eq!(s, 200, "{body}: {r}");
                    // The same answer again is refused: late (409), or its
                    // match is already over (404).
                    let (s, _) = bearer(
                        &api,
                        reqwest::Method::POST,
                        "/v1/answer",
                        &token,
                        Some(body),
                    );
                    assert!(s == 409 || s == 404, "{s}");
                }
            }
        }
    });
    // Wait until every remote bot has played three games.
    let names = ["jj", "ll", "sw", "pl"];
    let deadline = Instant::now() + Duration::from_secs(90);
    let games = loop {
        let games = finished_games(&srv);
        let count = |n: &str| {
            games
                .iter()
                .filter(|(r, _)| r.seats.iter().any(|s| s.name == n))
                .count()
        };
        // Opponents are spread: the two Love Letter bots meet, though house
        // bots are always available.
        let met = games.iter().any(|(r, _)| {
            r.seats.iter().any(|s| s.name == "ll") && r.seats.iter().any(|s| s.name == "pl")
        });
        if met && names.iter().all(|n| count(n) >= 3) {
            break games;
        }
        assert!(
            Instant::now() < deadline,
            "not enough games: {:?}, ll met pl: {met}",
            names.map(count)
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    poller.join().unwrap();
    assert!(*jj_requests.lock().unwrap() > 0);
    let mut opponents: HashMap<&str, std::collections::HashSet<String>> = HashMap::new();
    for (record, bots) in &games {
        verify(record);
        assert_eq!(record.seats.len(), bots.len());
        for (seat, info) in record.seats.iter().enumerate() {
            if let Some(n) = names.iter().find(|n| **n == info.name) {
                // Well-behaved bots never fault.
                let faults: Vec<_> = record
                    .steps
                    .iter()
                    .filter(|s| s.seat.index() == seat && s.fault.is_some())
                    .collect();
                assert!(
                    faults.is_empty(),
                    "{n} faulted in {}: {:?}",
                    record.game,
                    faults.first().map(|s| &s.fault)
                );
                for other in &record.seats {
                    if other.name != info.name {
                        opponents.entry(n).or_default().insert(other.name.clone());
                    }
                }
            }
        }
        if record.game == "loveletter" {
            assert!((2..=4).contains(&record.seats.len()));
        } else {
            assert_eq!(record.seats.len(), 2);
        }
        // Nobody sits twice at one table.
        let mut names: Vec<&str> = record.seats.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), record.seats.len());
    }
    // Opponents are spread: the Love Letter bots met each other and a house bot.
    assert!(
        opponents["ll"].contains("pl") || opponents["pl"].contains("ll"),
        "{opponents:?}"
    );
    assert!(
        opponents["jj"].iter().any(|o| o.starts_with("house-")),
        "{opponents:?}"
    );
    assert!(
        opponents["sw"].iter().any(|o| o.starts_with("house-")),
        "{opponents:?}"
    );
}

#[test]
fn a_bot_that_keeps_faulting_is_paused_with_the_reason() {
    let srv = TestServer::with_config(ladder_config(2));
    let rt = tokio::runtime::Runtime::new().unwrap();
    owner(&srv, "dave");
    let broken = spawn_bot_server(&rt, |_, _| {
        (StatusCode::INTERNAL_SERVER_ERROR, "oops".into())
    });
    register(
        &srv,
        "dave",
        json!({"name": "broken", "game": "goofspiel", "kind": "push", "url": broken}),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let bot = loop {
        let (_, b) = v1(
            &srv,
            reqwest::Method::GET,
            "/v1/bots/broken",
            Some(("dave", "pw")),
            None,
        );
        if b["paused_until"].is_i64() {
            break b;
        }
        assert!(Instant::now() < deadline, "never paused: {b}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let reason = bot["pause_reason"].as_str().unwrap();
    assert!(
        reason.contains("2 faulty matches") && reason.contains("500"),
        "{reason}"
    );
    assert_eq!(bot["strikes"], 2);
    // The website shows the pause and its reason to everyone.
    let page = srv.get("/bots/broken");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Paused until"), "{}", page.body);
    let twin: Value = serde_json::from_str(&srv.get("/json/bots/broken").body).unwrap();
    assert_eq!(twin["health"]["pause_reason"], bot["pause_reason"]);
    // Paused: it plays no more.
    let played = |srv: &TestServer| {
        finished_games(srv)
            .iter()
            .filter(|(r, _)| r.seats.iter().any(|s| s.name == "broken"))
            .count()
    };
    let before = played(&srv);
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(played(&srv), before);
    // Its owner switches it back on: strikes and pause are cleared.
    let (_, b) = v1(
        &srv,
        reqwest::Method::PATCH,
        "/v1/bots/broken",
        Some(("dave", "pw")),
        Some(json!({"enabled": true})),
    );
    assert_eq!(
        (b["strikes"].as_i64(), b["paused_until"].is_null()),
        (Some(0), true),
        "{b}"
    );
}

/// Issue 18, item 4: unless the organiser allows private bot URLs, a push
/// bot cannot be registered at an address of the server's own network.
/// Every URL here is refused by looking at it (no name is looked up and no
/// connection is opened).
#[test]
fn push_bots_on_private_addresses_are_refused_unless_allowed() {
    use reqwest::Method;
    let mut config = config();
    config.allow_private_bot_urls = false;
    let srv = TestServer::with_config(config);
    owner(&srv, "mallory");
    for url in [
        "http://127.0.0.1:9/",
        "http://127.1:8080/bot",
        "http://localhost:8080/",
        "http://[::1]/",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://224.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
    ] {
        let (s, v) = v1(
            &srv,
            Method::POST,
            "/v1/bots",
            Some(("mallory", "pw")),
            Some(json!({"name": "scan", "game": "goofspiel", "kind": "push", "url": url})),
        );
        assert_eq!(s, 400, "{url}: {v}");
        let error = v["error"].as_str().unwrap();
        assert!(error.contains("not a public"), "{url}: {v}");
        // Issue 52: the error names the way out.
        assert!(error.contains("--allow-private-bot-urls"), "{url}: {v}");
    }
    // Nothing was stored.
    let (s, v) = v1(&srv, Method::GET, "/v1/bots", Some(("mallory", "pw")), None);
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["bots"].as_array().map(Vec::len), Some(0), "{v}");
}
