//! Admin over real HTTP (issue 49 item 5): who may act (401, 403), each
//! action's input checks and effects (bans of bots and owners, the 2014 API
//! refusing a banned bot, a rating reset, seasons and their leaderboards,
//! the audit log). Bans and seasons in the middle of play: `admin_play`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use crate::common;
use crate::ladder::{owner, register, v1};

use common::*;
use croupier_store::web::ImportGame;
use croupier_store::GameEnd;
use reqwest::Method;
use serde_json::{json, Value};

/// Runs `f` with the server's database open (as another process would).
pub(crate) fn with_store<T>(
    srv: &TestServer,
    f: impl AsyncFnOnce(&dyn croupier_store::Store) -> T,
) -> T {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = croupier_store::open(&srv.db).await.unwrap();
        f(store.as_ref()).await
    })
}

/// Gives owner `name` the admin flag, as `croupier serve --admin` does.
pub(crate) fn make_admin(srv: &TestServer, name: &str) {
    let done = with_store(srv, async |s| {
        s.tournaments().set_owner_admin(name, true).await.unwrap()
    });
    assert!(done);
}

pub(crate) fn root(srv: &Api, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    v1(srv, method, path, Some(("root", "pw")), body)
}

/// An audit log's (action, target) pairs, newest first.
fn audit(srv: &Api) -> Vec<(String, String)> {
    let (s, v) = root(srv, Method::GET, "/v1/admin/audit", None);
    assert_eq!(s, 200, "{v}");
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["target"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn only_admins_act_and_every_action_is_checked_and_logged() {
    let srv = TestServer::start();
    for who in ["root", "olga"] {
        owner(&srv, who);
    }
    make_admin(&srv, "root");
    register(
        &srv,
        "olga",
        json!({"name": "olgabot", "game": "goofspiel", "kind": "push", "url": "http://127.0.0.1:9/"}),
    );
    // Who may act: no credentials 401, a wrong password 401, an owner
    // without the flag 403; each with a JSON reason, and nothing changes.
    let calls: [(Method, &str, Option<Value>); 8] = [
        (
            Method::POST,
            "/v1/admin/bots/olgabot/ban",
            Some(json!({"reason": "x"})),
        ),
        (Method::POST, "/v1/admin/bots/olgabot/unban", None),
        (Method::POST, "/v1/admin/bots/olgabot/reset-rating", None),
        (
            Method::POST,
            "/v1/admin/owners/olga/ban",
            Some(json!({"reason": "x"})),
        ),
        (Method::POST, "/v1/admin/owners/olga/unban", None),
        (Method::POST, "/v1/admin/seasons", None),
        (Method::GET, "/v1/admin/seasons", None),
        (Method::GET, "/v1/admin/audit", None),
    ];
    // A wrong password (once: failed logins are throttled).
    let (s, v) = v1(
        &srv,
        Method::GET,
        "/v1/admin/audit",
        Some(("root", "nope")),
        None,
    );
    assert_eq!(s, 401, "{v}");
    for (m, path, body) in &calls {
        let (s, v) = v1(&srv, m.clone(), path, None, body.clone());
        assert_eq!(s, 401, "{path}: {v}");
        let (s, v) = v1(&srv, m.clone(), path, Some(("olga", "pw")), body.clone());
        assert_eq!(s, 403, "{path}: {v}");
        assert!(v["error"].as_str().unwrap().contains("not an admin"), "{v}");
    }
    assert!(audit(&srv).is_empty());
    let page: Value = serde_json::from_str(&srv.get("/json/bots/olgabot").body).unwrap();
    assert!(page["banned"].is_null(), "{page}");

    // Bad input: a clear error, nothing changes.
    for (path, body, status, needle) in [
        ("/v1/admin/bots/olgabot/ban", json!({}), 400, "reason"),
        (
            "/v1/admin/bots/olgabot/ban",
            json!({"reason": "  "}),
            400,
            "reason",
        ),
        (
            "/v1/admin/bots/olgabot/ban",
            json!({"reason": "x".repeat(501)}),
            400,
            "500",
        ),
        (
            "/v1/admin/bots/olgabot/ban",
            json!({"reason": "x", "why": 1}),
            400,
            "unknown field",
        ),
        (
            "/v1/admin/bots/nobody/ban",
            json!({"reason": "x"}),
            404,
            "no bot named 'nobody'",
        ),
        ("/v1/admin/bots/olgabot/unban", json!({}), 409, "not banned"),
        (
            "/v1/admin/owners/nobody/ban",
            json!({"reason": "x"}),
            404,
            "no owner",
        ),
        (
            "/v1/admin/owners/root/ban",
            json!({"reason": "x"}),
            400,
            "yourself",
        ),
        (
            "/v1/admin/bots/olgabot/reset-rating",
            json!({"game": "chess"}),
            400,
            "unknown game",
        ),
        (
            "/v1/admin/bots/olgabot/reset-rating",
            json!({}),
            404,
            "no rating",
        ),
        (
            "/v1/admin/seasons",
            json!({"game": "chess"}),
            400,
            "unknown game",
        ),
    ] {
        let (s, v) = root(&srv, Method::POST, path, Some(body.clone()));
        assert_eq!(s, status, "{path} {body}: {v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(needle), "{path} {body}: {e}");
    }
    for q in ["?limit=0", "?limit=1001", "?before=x", "?page=2"] {
        let (s, v) = root(&srv, Method::GET, &format!("/v1/admin/audit{q}"), None);
        assert_eq!(s, 400, "{q}: {v}");
    }
    assert!(audit(&srv).is_empty());

    // A bot's ban: its page says why; twice is a conflict.
    let (s, v) = root(
        &srv,
        Method::POST,
        "/v1/admin/bots/olgabot/ban",
        Some(json!({"reason": "it calls a scoring service"})),
    );
    assert_eq!((s, &v["banned"]), (200, &json!(true)), "{v}");
    let (s, v) = root(
        &srv,
        Method::POST,
        "/v1/admin/bots/olgabot/ban",
        Some(json!({"reason": "again"})),
    );
    assert_eq!(s, 409, "{v}");
    let page: Value = serde_json::from_str(&srv.get("/json/bots/olgabot").body).unwrap();
    assert_eq!(page["banned"]["reason"], "it calls a scoring service");
    assert_eq!(page["banned"]["banned_by"], "root");
    let html = srv.get("/bots/olgabot").body;
    assert!(html.contains("Banned") && html.contains("it calls a scoring service"));
    assert!(html.contains("Banned: it gets no new games."), "{html}");
    assert!(!html.contains("On the ladder."), "{html}");
    let (_, v) = root(&srv, Method::GET, "/v1/admin/bans", None);
    assert_eq!(v["bans"][0]["name"], "olgabot", "{v}");
    let (s, _) = root(&srv, Method::POST, "/v1/admin/bots/olgabot/unban", None);
    assert_eq!(s, 200);
    let page: Value = serde_json::from_str(&srv.get("/json/bots/olgabot").body).unwrap();
    assert!(page["banned"].is_null(), "{page}");

    // An owner's ban: their bots are banned, their credentials open nothing.
    let (s, v) = root(
        &srv,
        Method::POST,
        "/v1/admin/owners/olga/ban",
        Some(json!({"reason": "spam"})),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = v1(&srv, Method::GET, "/v1/bots", Some(("olga", "pw")), None);
    assert_eq!(s, 403, "{v}");
    assert!(v["error"].as_str().unwrap().contains("banned: spam"), "{v}");
    let page: Value = serde_json::from_str(&srv.get("/json/bots/olgabot").body).unwrap();
    assert_eq!(page["banned"]["owner"], "olga", "{page}");
    let (s, v) = root(&srv, Method::POST, "/v1/admin/bots/olgabot/unban", None);
    assert_eq!(s, 409, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("its owner olga is banned"),
        "{v}"
    );
    let (s, _) = root(&srv, Method::POST, "/v1/admin/owners/olga/unban", None);
    assert_eq!(s, 200);
    let (s, _) = v1(&srv, Method::GET, "/v1/bots", Some(("olga", "pw")), None);
    assert_eq!(s, 200);

    // A 2014 REST bot: banned, it cannot ask for a game nor log in again.
    let rest = srv.bot("resty");
    let (s, _) = root(
        &srv,
        Method::POST,
        &format!("/v1/admin/bots/{}/ban", rest.name),
        Some(json!({"reason": "abuse"})),
    );
    assert_eq!(s, 200);
    assert_failure(
        &srv.as_bot(&rest, "new-game", Value::Null),
        "banned",
        "new-game",
    );
    assert_failure(
        &srv.call(
            "login",
            json!({"name": rest.name, "password": rest.password}),
        ),
        "banned: abuse",
        "login",
    );

    // A rating reset, then seasons.
    let (a, b) = with_store(&srv, async |s| {
        let a = s.create_bot("alpha", "h", false).await.unwrap();
        let b = s.create_bot("beta", "h", false).await.unwrap();
        let games = (0..3)
            .map(|i| ImportGame {
                tournament: None,
                game: "goofspiel".into(),
                bots: vec![a, b],
                seed: i,
                started: "2026-12-01T09:00:00Z".into(),
                end: GameEnd {
                    finished: "2026-12-01T09:01:00Z".into(),
                    scores: vec![Some(2), Some(1)],
                    ranks: vec![1, 2],
                    forfeited_by: None,
                    record: "{}".into(),
                    facts: None,
                },
            })
            .collect();
        s.import_games(games).await.unwrap();
        (a, b)
    });
    let board = |q: &str| -> (u16, Value) {
        let r = srv.get(&format!("/json/leaderboard/goofspiel{q}"));
        (r.status, serde_json::from_str(&r.body).unwrap())
    };
    let (_, before) = board("");
    assert_eq!(before["season"], 1);
    assert_eq!(before["bots"][0]["name"], "alpha");
    assert!(before["bots"][0]["mu"].as_f64().unwrap() > 25.0);
    let (s, v) = root(
        &srv,
        Method::POST,
        "/v1/admin/bots/alpha/reset-rating",
        Some(json!({"game": "goofspiel", "reason": "shared account"})),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["games"], json!(["goofspiel"]));
    let (_, after) = board("");
    let alpha = after["bots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["bot"] == a)
        .unwrap();
    assert_eq!(
        (alpha["mu"].as_f64(), alpha["games"].as_i64()),
        (Some(25.0), Some(3))
    );

    let (s, v) = root(
        &srv,
        Method::POST,
        "/v1/admin/seasons",
        Some(json!({"game": "goofspiel", "reason": "spring"})),
    );
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["started"][0]["season"], 2);
    let (_, now) = board("");
    assert_eq!(
        (now["season"].as_i64(), now["current_season"].as_i64()),
        (Some(2), Some(2))
    );
    assert!(now["bots"].as_array().unwrap().is_empty(), "{now}");
    let (s, past) = board("?season=1");
    assert_eq!(s, 200);
    assert_eq!(past["season"], 1);
    assert_eq!(past["bots"].as_array().unwrap().len(), 2);
    assert!(past["bots"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["bot"] == b));
    assert_eq!(past["head_to_head"].as_array().unwrap().len(), 2);
    let (s, v) = board("?season=3");
    assert_eq!(s, 404, "{v}");
    assert!(v["error"].as_str().unwrap().contains("current season is 2"));
    for q in ["?season=0", "?season=x"] {
        assert_eq!(board(q).0, 400, "{q}");
    }
    let html = srv.get("/leaderboard/goofspiel?season=1");
    assert_eq!(html.status, 200);
    assert!(html.body.contains("season 1") && html.body.contains("alpha"));
    assert!(html.body.contains("/json/leaderboard/goofspiel?season=1"));
    assert!(srv
        .get("/leaderboard/goofspiel")
        .body
        .contains("/leaderboard/goofspiel?season=1"));
    assert_eq!(srv.get("/leaderboard/goofspiel?season=9").status, 404);
    // Every game at once.
    let (s, v) = root(&srv, Method::POST, "/v1/admin/seasons", None);
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["started"].as_array().unwrap().len(), 3);
    let (_, v) = root(&srv, Method::GET, "/v1/admin/seasons", None);
    let goofspiel: Vec<i64> = v["seasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["game"] == "goofspiel")
        .map(|s| s["season"].as_i64().unwrap())
        .collect();
    assert_eq!(goofspiel, [1, 2, 3]);

    // The audit log: every action that changed something, newest first.
    let log = audit(&srv);
    let rest_name = rest.name.as_str();
    let expected: Vec<(&str, &str)> = vec![
        ("new-season", "goofspiel"),
        ("new-season", "loveletter"),
        ("new-season", "skullwhist"),
        ("new-season", "goofspiel"),
        ("reset-rating", "alpha"),
        ("ban-bot", rest_name),
        ("unban-owner", "olga"),
        ("ban-owner", "olga"),
        ("unban-bot", "olgabot"),
        ("ban-bot", "olgabot"),
    ];
    let mut expected_sorted = expected.clone();
    let mut log_sorted: Vec<(&str, &str)> =
        log.iter().map(|(a, t)| (a.as_str(), t.as_str())).collect();
    // One request's seasons share a time and come in the games' order.
    expected_sorted[..3].sort_unstable();
    log_sorted[..3].sort_unstable();
    assert_eq!(log_sorted, expected_sorted);
    let (_, v) = root(&srv, Method::GET, "/v1/admin/audit?limit=2", None);
    let page = v["entries"].as_array().unwrap();
    assert_eq!(page.len(), 2);
    let last = page[1]["id"].as_i64().unwrap();
    let (_, v) = root(
        &srv,
        Method::GET,
        &format!("/v1/admin/audit?before={last}"),
        None,
    );
    assert_eq!(v["entries"].as_array().unwrap().len(), log.len() - 2);
    let (_, v) = root(&srv, Method::GET, "/v1/admin/audit", None);
    let reset = &v["entries"][4];
    assert_eq!(
        (&reset["actor"], &reset["reason"]),
        (&json!("root"), &json!("shared account"))
    );
}
