//! The website without a browser or socket: every page kind and its JSON
//! twin through the router, bad parameters, escaping, replays.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use croupier_server::web::seed;
use croupier_server::ServerConfig;
use croupier_store::web::GameFilter;
use croupier_store::{SqliteStore, Store, WebReads};
use serde_json::Value;
use tower::ServiceExt as _;

struct Site {
    _dir: tempfile::TempDir,
    store: Arc<SqliteStore>,
    app: Router,
}

async fn site(games: u64) -> Site {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("web.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    seed::seed(&store, games, Duration::from_secs(30))
        .await
        .unwrap();
    let config = ServerConfig {
        house_bots: Vec::new(),
        ..ServerConfig::default()
    };
    let dyn_store: Arc<dyn Store> = store.clone();
    let (state, _) = croupier_server::prepare(dyn_store, &config).await.unwrap();
    Site {
        _dir: dir,
        store,
        app: croupier_server::app(state),
    }
}

async fn get(app: &Router, uri: &str) -> (StatusCode, String, String) {
    let resp = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let kind = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = axum::body::to_bytes(resp.into_body(), 1 << 24)
        .await
        .unwrap();
    (status, kind, String::from_utf8(body.to_vec()).unwrap())
}

async fn first_of(store: &SqliteStore, game: &str) -> i64 {
    let filter = GameFilter {
        game: Some(game.into()),
        bot: None,
    };
    store.games_page(&filter, 0, 1).await.unwrap()[0].id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_and_json_twin_answers() {
    let s = site(30).await;
    let (a, b) = (seed::BOTS[4].0, seed::BOTS[5].0);
    let sw = first_of(&s.store, "skullwhist").await;
    let pages = [
        "/".to_string(),
        "/about".into(),
        "/rules".into(),
        "/rules/skullwhist".into(),
        "/docs".into(),
        "/docs/croupier".into(),
        "/docs/records".into(),
        "/leaderboard/loveletter".into(),
        "/bots".into(),
        format!("/bots/{a}"),
        format!("/versus/{a}/{b}"),
        "/games".into(),
        format!("/games?game=loveletter&bot={a}"),
        format!("/games/{sw}"),
        format!("/games/{sw}?step=5"),
        "/activity".into(),
    ];
    for p in &pages {
        let (status, kind, body) = get(&s.app, p).await;
        assert_eq!(status, StatusCode::OK, "{p}");
        assert!(kind.starts_with("text/html"), "{p}: {kind}");
        assert!(body.contains("/static/croupier.css"), "{p}");
    }
    let twins = [
        ("/json/home".to_string(), "recent"),
        ("/json/leaderboard/loveletter".into(), "head_to_head"),
        ("/json/bots".into(), "online"),
        (format!("/json/bots/{a}"), "ratings"),
        (format!("/json/versus/{a}/{b}"), "results"),
        ("/json/games?game=goofspiel".into(), "games"),
        (format!("/json/games/{sw}"), "replay"),
        ("/json/activity".into(), "minutes"),
    ];
    for (p, key) in &twins {
        let (status, kind, body) = get(&s.app, p).await;
        assert_eq!(status, StatusCode::OK, "{p}");
        assert!(kind.starts_with("application/json"), "{p}: {kind}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert!(v.get(*key).is_some(), "{p} lacks {key}");
    }
    let (_, _, css) = get(&s.app, "/static/croupier.css").await;
    assert!(css.contains(".card.red"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_parameters_get_clear_error_pages() {
    let s = site(6).await;
    let sw = first_of(&s.store, "skullwhist").await;
    let cases = [
        (
            "/games?page=abc",
            StatusCode::BAD_REQUEST,
            "not a page number",
        ),
        (
            "/games?page=0",
            StatusCode::BAD_REQUEST,
            "not a page number",
        ),
        (
            "/games?page=99999999999999999999999",
            StatusCode::BAD_REQUEST,
            "not a page",
        ),
        (
            "/games?page=9223372036854775807",
            StatusCode::NOT_FOUND,
            "does not exist",
        ),
        ("/games?game=chess", StatusCode::BAD_REQUEST, "no game"),
        ("/games?bot=nobody", StatusCode::NOT_FOUND, "no bot named"),
        ("/games/abc", StatusCode::NOT_FOUND, "no game"),
        ("/games/-1", StatusCode::NOT_FOUND, "no game"),
        (
            "/games/99999999999999999999",
            StatusCode::NOT_FOUND,
            "no game",
        ),
        ("/bots/nobody", StatusCode::NOT_FOUND, "no bot named"),
        ("/versus/nobody/else", StatusCode::NOT_FOUND, "no bot named"),
        ("/leaderboard/chess", StatusCode::NOT_FOUND, "no game"),
        ("/rules/chess", StatusCode::NOT_FOUND, "no rules page"),
        (
            "/docs/nothing",
            StatusCode::NOT_FOUND,
            "no documentation page",
        ),
        ("/no/such/page", StatusCode::NOT_FOUND, "no page at"),
    ];
    for (uri, status, says) in cases {
        let (got, kind, body) = get(&s.app, uri).await;
        assert_eq!(got, status, "{uri}");
        assert!(kind.starts_with("text/html"), "{uri}");
        assert!(body.contains(says), "{uri} does not say '{says}': {body}");
    }
    let (got, _, body) = get(&s.app, &format!("/games/{sw}?step=10000")).await;
    assert_eq!(got, StatusCode::NOT_FOUND);
    assert!(body.contains("has 28 steps"), "{body}");
    let (got, _, _) = get(&s.app, &format!("/games/{sw}?step=-2")).await;
    assert_eq!(got, StatusCode::BAD_REQUEST);
    let a = seed::BOTS[0].0;
    let (got, _, _) = get(&s.app, &format!("/versus/{a}/{a}")).await;
    assert_eq!(got, StatusCode::BAD_REQUEST);
    let (got, kind, body) = get(&s.app, "/json/bots/nobody").await;
    assert_eq!(got, StatusCode::NOT_FOUND);
    assert!(kind.starts_with("application/json"));
    assert!(body.contains("\"error\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_escaped_and_replays_list_every_step() {
    let s = site(9).await;
    let evil = s.store.create_bot("<b>x</b>\"'", "h", false).await.unwrap();
    let other = s.store.create_bot("plain", "h", false).await.unwrap();
    let g = s
        .store
        .start_game("skullwhist", &[evil, other], 1, "2026-01-01T00:00:00.000Z")
        .await
        .unwrap();
    let (status, _, body) = get(&s.app, "/bots/%3Cb%3Ex%3C%2Fb%3E%22'").await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("&lt;b&gt;x&lt;/b&gt;&quot;&#39;"));
    assert!(!body.contains("<b>x</b>"));
    let (_, _, running) = get(&s.app, &format!("/games/{g}")).await;
    assert!(running.contains("No record yet") && !running.contains("<b>x</b>"));

    for game in ["skullwhist", "loveletter", "goofspiel"] {
        let id = first_of(&s.store, game).await;
        let (_, _, json) = get(&s.app, &format!("/json/games/{id}")).await;
        let v: Value = serde_json::from_str(&json).unwrap();
        let steps = v["record"]["steps"].as_array().unwrap().len();
        assert_eq!(v["replay"]["steps"].as_array().unwrap().len(), steps);
        assert!(
            v["replay"]["error"].is_null(),
            "{game}: {}",
            v["replay"]["error"]
        );
        let (_, _, page) = get(&s.app, &format!("/games/{id}?step=3")).await;
        assert_eq!(page.matches("<tr id=\"step-").count(), steps + 1, "{game}");
        assert!(page.contains("step 3 of") && page.contains("rel=\"next\""));
        assert!(
            page.contains(" ms</td>"),
            "{game}: thinking times are shown"
        );
    }
    let sw = first_of(&s.store, "skullwhist").await;
    let (_, _, page) = get(&s.app, &format!("/games/{sw}?step=28")).await;
    assert!(page.contains("class=\"card red\"") && page.contains("♠"));
    assert!(page.contains("<th>Leader</th>") && page.contains("<th>Follower</th>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaderboards_order_by_conservative_rating_and_pages_hold_fifty() {
    let s = site(160).await;
    for game in ["skullwhist", "loveletter", "goofspiel"] {
        let (_, _, body) = get(&s.app, &format!("/json/leaderboard/{game}")).await;
        let v: Value = serde_json::from_str(&body).unwrap();
        let c: Vec<f64> = v["bots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["conservative"].as_f64().unwrap())
            .collect();
        assert!(c.len() >= 2, "{game}");
        assert!(c.windows(2).all(|w| w[0] >= w[1]), "{game}: {c:?}");
    }
    let total = s
        .store
        .count_finished(&GameFilter::default())
        .await
        .unwrap();
    let (_, _, p1) = get(&s.app, "/json/games").await;
    let v: Value = serde_json::from_str(&p1).unwrap();
    assert_eq!(v["games"].as_array().unwrap().len(), 50);
    assert_eq!(v["total"].as_i64().unwrap(), total);
    let last = (total + 49) / 50;
    let (_, _, pl) = get(&s.app, &format!("/json/games?page={last}")).await;
    let v: Value = serde_json::from_str(&pl).unwrap();
    let on_last = v["games"].as_array().unwrap().len() as i64;
    assert_eq!(on_last, total - 50 * (last - 1));
    let (_, _, html) = get(&s.app, "/games?page=2").await;
    assert!(html.contains("« first") && html.contains("older ›"));
}
