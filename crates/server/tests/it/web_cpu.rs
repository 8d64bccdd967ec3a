//! Issue 51: a bot's page and a replay show the CPU time of its decisions
//! (the records' `cpu_ms`) beside their wall time, and say "not measured"
//! where the records have none.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use croupier_server::App;
use croupier_server::ServerConfig;
use croupier_store::{BotKind, NewBot, SqliteStore, Store};
use serde_json::{json, Value};
use tower::ServiceExt as _;

async fn get(app: &App, uri: &str) -> String {
    let resp = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{uri}: {}", resp.status());
    let body = axum::body::to_bytes(resp.into_body(), 1 << 24)
        .await
        .unwrap();
    String::from_utf8(body.to_vec()).unwrap()
}

/// A finished Psychological Jujitsu game of one round of 3 cards: `a`
/// (seat 0, a program) takes 400 ms of wall time per move, and `cpu` of
/// CPU where given; `b` is in-process.
async fn game(store: &SqliteStore, a: i64, b: i64, cpu: Option<f64>, at: &str) -> i64 {
    let g = store
        .start_game("goofspiel", &[a, b], 11, at)
        .await
        .unwrap();
    let mine = |card: &str| match cpu {
        Some(c) => json!({"seat": 0, "action": card, "ms": 400.0, "cpu_ms": c}),
        None => json!({"seat": 0, "action": card, "ms": 400.0}),
    };
    let theirs = |card: &str| json!({"seat": 1, "action": card, "ms": 0.01});
    let record = json!({
        "format": "croupier-record/1", "game": "goofspiel", "rules_version": 1,
        "variant": {"rounds": [3], "ties": "carry", "preview": true}, "seed": 11,
        "seats": [{"name": "thinker", "dialect": "croupier"}, {"name": "rival"}],
        "steps": [mine("2"), theirs("2"), mine("3"), theirs("1"), mine("1"), theirs("3")],
        "outcome": {"scores": [5, 1], "ranks": [1, 2]}
    });
    store
        .finish_game(
            g,
            &croupier_store::GameEnd {
                finished: at.into(),
                scores: vec![Some(5), Some(1)],
                ranks: vec![1, 2],
                forfeited_by: None,
                record: record.to_string(),
                facts: None,
            },
        )
        .await
        .unwrap();
    g
}

async fn site() -> (tempfile::TempDir, Arc<SqliteStore>, App, (i64, i64)) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("web.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    let owner = store.create_owner("ops", "!").await.unwrap();
    let thinker = store
        .create_remote_bot(&NewBot {
            name: "thinker".into(),
            game: "goofspiel".into(),
            kind: BotKind::Pull,
            owner,
            endpoint: None,
            dialect: "croupier".into(),
            auth_user: None,
            auth_password: None,
            token_hash: None,
        })
        .await
        .unwrap();
    let rival = store.create_bot("rival", "h", false).await.unwrap();
    let config = ServerConfig {
        house_bots: Vec::new(),
        ..ServerConfig::default()
    };
    let dyn_store: Arc<dyn Store> = store.clone();
    let (state, _) = croupier_server::prepare(dyn_store, &config).await.unwrap();
    (dir, store, croupier_server::app(state), (thinker, rival))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_page_shows_cpu_beside_wall_time() {
    let (_dir, store, app, (a, b)) = site().await;
    // An older record without CPU time first: "not measured".
    game(&store, a, b, None, "2026-01-01T00:00:00.000Z").await;
    let html = get(&app, "/bots/thinker").await;
    assert!(html.contains("CPU time: not measured"), "{html}");
    let v: Value = serde_json::from_str(&get(&app, "/json/bots/thinker").await).unwrap();
    assert_eq!(v["profile"]["cpu"], Value::Null);

    // Then one whose three moves each took 40 ms of CPU in 400 ms.
    let id = game(&store, a, b, Some(40.0), "2026-01-01T00:01:00.000Z").await;
    let v: Value = serde_json::from_str(&get(&app, "/json/bots/thinker").await).unwrap();
    let cpu = &v["profile"]["cpu"];
    assert_eq!(cpu["thinking"]["moves"], 3);
    assert_eq!(cpu["thinking"]["p50"], 40.0);
    assert_eq!(cpu["wall"]["p50"], 400.0);
    assert_eq!(
        (cpu["mean_ms"].as_f64(), cpu["wall_mean_ms"].as_f64()),
        (Some(40.0), Some(400.0))
    );
    assert_eq!(v["profile"]["thinking"]["moves"], 6);
    let html = get(&app, "/bots/thinker").await;
    for says in [
        "<td class=\"num\">400 ms</td><td class=\"num cpu\">40 ms</td>",
        "measured for 3 of these 6 moves",
        "<strong>40 ms of CPU</strong> in <strong>400 ms of wall time</strong>",
        "the other 360 ms it was waiting",
    ] {
        assert!(html.contains(says), "the bot page lacks '{says}': {html}");
    }

    // The replay shows each move's CPU time under its wall time.
    let replay = get(&app, &format!("/games/{id}")).await;
    assert!(replay.contains(">CPU 40 ms</small>"), "{replay}");
    let v: Value = serde_json::from_str(&get(&app, &format!("/json/games/{id}")).await).unwrap();
    let steps = &v["replay"]["steps"];
    assert_eq!(steps[0]["cpu_ms"], 40.0);
    assert!(steps[1].get("cpu_ms").is_none(), "{}", steps[1]);
}
