//! Issue 48 in a real browser (headless Chromium through chromedriver): a
//! spectator watches a ladder game at its card table. A push bot that
//! thinks 300 ms a move plays the house bot on the Goofspiel ladder; the
//! live page, with JavaScript, redraws its table from the game's event
//! stream without reloading, its clock ticks, and its JSON twin holds the
//! same public view. Screenshots at 1280 and 390 px go to
//! `target/screenshots/`.
//!
//! Without chromedriver the test prints a notice and passes, unless
//! `CI=true`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly

use crate::browser_support;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use croupier_arena::bot_side::{CroupierBot, Handled};
use croupier_bots::Builtins;
use croupier_competition::ladder::{GameLadder, LadderConfig};
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::GameKind;
use croupier_store::{SqliteStore, Store};
use fantoccini::Locator;
use serde_json::{json, Value};

use browser_support::{eval, shot, Driver};

async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    http.get(url).send().await.unwrap().json().await.unwrap()
}

async fn get_text(http: &reqwest::Client, url: &str) -> String {
    http.get(url).send().await.unwrap().text().await.unwrap()
}

/// A croupier/1 Goofspiel push bot playing `random`, 300 ms a move; its URL.
async fn slow_push_bot() -> String {
    let bots: Arc<Mutex<HashMap<String, CroupierBot<Goofspiel>>>> = Arc::default();
    let app = axum::Router::new().route(
        "/",
        post(move |headers: HeaderMap, body: Bytes| {
            let bots = Arc::clone(&bots);
            async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                let tag = headers["x-croupier-match"].to_str().unwrap().to_string();
                let mut m = bots.lock().unwrap();
                let bot = m
                    .entry(tag)
                    .or_insert_with(|| CroupierBot::new(Goofspiel::builtin("random").unwrap(), 1));
                match bot.handle(std::str::from_utf8(&body).unwrap_or("")) {
                    Ok(Handled::Answer(a)) => (StatusCode::OK, a).into_response(),
                    _ => StatusCode::NO_CONTENT.into_response(),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_watches_a_ladder_game_at_its_table() {
    let Some(mut driver) = Driver::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("live.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    let mut goofspiel = GameLadder::default_for(GameKind::Goofspiel);
    goofspiel.move_time = Duration::from_secs(5);
    goofspiel.house = vec!["random".into()];
    goofspiel.house_games = false;
    let config = croupier_server::ServerConfig {
        house_bots: Vec::new(),
        allow_private_bot_urls: true,
        ladder: Some(LadderConfig {
            games: vec![goofspiel],
            rest: Duration::from_millis(50),
            tick: Duration::from_millis(50),
            ..LadderConfig::default()
        }),
        ..croupier_server::ServerConfig::default()
    };
    let dyn_store: Arc<dyn Store> = store.clone();
    let (state, house) = croupier_server::prepare(dyn_store, &config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        croupier_server::run(listener, state, house, &config, async {
            let _ = stopped.await;
        })
        .await
    });
    let http = reqwest::Client::new();
    let r = http
        .post(format!("{base}/v1/owners"))
        .json(&json!({"name": "dora", "password": "pw"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    // The browser starts before the game does: on a busy machine its start
    // can take longer than the whole game.
    let js = driver.session(true).await;
    js.goto(&format!("{base}/live")).await.unwrap();
    let bot_url = slow_push_bot().await;
    let r = http
        .post(format!("{base}/v1/bots"))
        .basic_auth("dora", Some("pw"))
        .json(&json!({"name": "slowpoke", "game": "goofspiel", "kind": "push", "url": bot_url, "dialect": "croupier"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201, "{}", r.text().await.unwrap());

    // The ladder seats it against the house bot: find the game.
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        assert!(Instant::now() < deadline, "no ladder game started");
        let live = get_json(&http, &format!("{base}/json/live")).await;
        if let Some(g) = live
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["seats"].to_string().contains("slowpoke"))
        {
            break g["id"].as_i64().unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };

    js.goto(&format!("{base}/live/{id}")).await.unwrap();
    // A mark that a reload would wipe.
    eval(&js, "(window.stayed = 'yes')").await;
    let mut prizes = BTreeSet::new();
    let mut clocks = BTreeSet::new();
    let mut events = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the watched game did not end");
        let state = eval(
            &js,
            "[document.querySelector('#live') ? document.querySelector('#live').dataset.over || '' : '',
              document.querySelector('.felt .centre') ? document.querySelector('.felt .centre').textContent : '',
              document.querySelector('.clock') ? document.querySelector('.clock').textContent : '',
              document.querySelectorAll('#live-events li').length]",
        )
        .await;
        let a = state.as_array().unwrap();
        prizes.insert(a[1].as_str().unwrap().to_string());
        clocks.insert(a[2].as_str().unwrap().to_string());
        events.insert(a[3].as_u64().unwrap());
        if prizes.len() == 4 {
            shot(&js, "live-ladder-1280").await;
            js.set_window_size(390, 844).await.unwrap();
            tokio::time::sleep(Duration::from_millis(150)).await;
            shot(&js, "live-ladder-390").await;
            let wide = eval(&js, "document.documentElement.scrollWidth").await;
            assert!(
                wide.as_i64().unwrap() <= 392,
                "the live table is {wide} px wide"
            );
            js.set_window_size(1280, 1000).await.unwrap();
            // The JSON twin holds the public view and whose turn it is.
            let twin = get_json(&http, &format!("{base}/json/live/{id}")).await;
            assert_eq!(twin["game"], "goofspiel");
            assert!(
                twin["view"]["current"].is_u64() || twin["status"] != "running",
                "{twin}"
            );
            assert!(twin["view"]["my_bid"].is_null(), "no sealed bid: {twin}");
            assert!(twin["events"].as_array().unwrap().len() > 1);
        }
        if a[0] == "finished" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(120)).await;
    }
    assert_eq!(
        eval(&js, "window.stayed || ''").await,
        "yes",
        "the page redrew in place, without a reload"
    );
    assert!(
        prizes.len() >= 5,
        "the table changed as the game went: {prizes:?}"
    );
    assert!(events.len() >= 5, "the events grew: {events:?}");
    assert!(clocks.len() >= 2, "the clock moved: {clocks:?}");
    // The end: scores, the winner, and the replay's link.
    let finals = eval(&js, "document.querySelectorAll('.seat-box .final').length").await;
    assert_eq!(finals, 2);
    assert!(js
        .find(Locator::Css("#live-status a[href^='/games/']"))
        .await
        .is_ok());
    shot(&js, "live-ladder-over").await;

    // The running game was linked from its bot's page and its game page
    // while it ran (checked on the next game the ladder starts).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "no second ladder game");
        let live = get_json(&http, &format!("{base}/json/live")).await;
        if let Some(g) = live.as_array().unwrap().iter().find(|g| g["id"] != id) {
            let next = g["id"].as_i64().unwrap();
            let bot = get_text(&http, &format!("{base}/bots/slowpoke")).await;
            let game = get_text(&http, &format!("{base}/games/{next}")).await;
            let link = format!("href=\"/live/{next}\"");
            if bot.contains(&link) && game.contains(&link) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    js.close().await.unwrap();
    driver.stop().await;
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
