//! Issue 16 in a real browser (headless Chromium through chromedriver): a
//! person plays a whole game of each kind against a house bot through the
//! pages, once with JavaScript and once without; a spectator's live page
//! (JavaScript, Server-Sent Events) receives every public event of a running
//! game and no hidden one, checked against the record afterwards.
//! Screenshots of each new page go to `target/screenshots/`.
//!
//! Without chromedriver (`/usr/bin/chromedriver`, or `CHROMEDRIVER`) the test
//! prints a notice and passes, unless `CI=true`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly

use crate::browser_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use croupier_rules::{Event as _, Game, GameKind, Record, Seat};
use croupier_server::ServerConfig;
use croupier_store::{SqliteStore, Store};
use fantoccini::{Client, Locator};
use serde_json::Value;

use browser_support::{eval, shot, Driver};

/// The `data-status` of the play page's table, if the page shows one.
async fn table_status(c: &Client) -> Option<String> {
    let t = c.find(Locator::Css("#table")).await.ok()?;
    t.attr("data-status").await.ok().flatten()
}

/// Plays the game on the current page to its end by clicking the first
/// legal move each time; returns the moves made.
async fn play_in_browser(c: &Client, game: GameKind, js: bool) -> usize {
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut moves = 0;
    let mut missing_since: Option<Instant> = None;
    loop {
        assert!(Instant::now() < deadline, "{game}: the game did not end");
        // Without JavaScript every click reloads the page: while the browser
        // is between two pages there is no table to read yet, so a missing
        // table is only an error once it stays missing.
        match table_status(c).await.as_deref() {
            Some("running") => missing_since = None,
            Some("finished") => return moves,
            None if missing_since.get_or_insert_with(Instant::now).elapsed()
                < Duration::from_secs(20) =>
            {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            other => panic!("{game}: the table says {other:?}"),
        }
        if let Ok(b) = c.find(Locator::Css("button.move")).await {
            if moves == 1 {
                shot(c, &format!("play-{game}{}", if js { "" } else { "-nojs" })).await;
            }
            if b.click().await.is_ok() {
                moves += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

/// Issue 48: the person's card table at their first move. Their seat reads
/// "you", the legal moves are buttons (Goofspiel's and SkullWhist's plays
/// are the cards themselves), and with JavaScript the move clock ticks.
/// Saves the table at 1280 and 390 px.
async fn check_table(c: &Client, game: GameKind, js: bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while c
        .find(Locator::Css("form.moves button.move"))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "{game}: no move to make");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let you = eval(
        c,
        "document.querySelector('.seat-box.you .who-line').textContent",
    )
    .await;
    assert!(you.as_str().unwrap().starts_with("you"), "{game}: {you}");
    let buttons = eval(
        c,
        "[...document.querySelectorAll('form.moves button.move')].map(b => [b.className, !!b.querySelector('.card')])",
    )
    .await;
    let buttons = buttons.as_array().unwrap();
    assert!(!buttons.is_empty());
    for b in buttons {
        let (class, card) = (b[0].as_str().unwrap(), b[1].as_bool().unwrap());
        // A card move shows its card; a SkullWhist bid is a number, a Love
        // Letter target or guess a word beside its card.
        assert_eq!(class.contains("card-move"), card, "{game}: {b}");
    }
    if game == GameKind::Goofspiel {
        assert!(
            buttons.iter().all(|b| b[1] == true),
            "Goofspiel bids are cards"
        );
    }
    let clock = || eval(c, "document.querySelector('.clock').textContent");
    let before = clock().await;
    assert!(before.as_str().unwrap().contains("min"), "{game}: {before}");
    if js {
        tokio::time::sleep(Duration::from_millis(2200)).await;
        let after = clock().await;
        assert_ne!(before, after, "{game}: the clock ticks");
    }
    if js {
        shot(c, &format!("table-{game}-1280")).await;
        c.set_window_size(390, 844).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        shot(c, &format!("table-{game}-390")).await;
        let wide = eval(c, "document.documentElement.scrollWidth").await;
        assert!(
            wide.as_i64().unwrap() <= 392,
            "{game}: the table is {wide} px wide at 390"
        );
        c.set_window_size(1280, 1000).await.unwrap();
    }
}

/// Issue 48: the end of a person's game: every seat's final score, the
/// winner, and links to the replay and to play again.
async fn check_end(c: &Client, game: GameKind) {
    let finals = eval(c, "document.querySelectorAll('.seat-box .final').length").await;
    assert!(
        finals.as_u64().unwrap() >= 2,
        "{game}: final scores: {finals}"
    );
    let winners = eval(c, "document.querySelectorAll('.seat-box.won').length").await;
    assert!(winners.as_u64().unwrap() >= 1, "{game}: a winner is marked");
    for link in ["p.over a[href^='/games/']", "p.over a[href^='/play?game=']"] {
        assert!(c.find(Locator::Css(link)).await.is_ok(), "{game}: {link}");
    }
}

/// Starts a game from the form of `/play?game=…` in the browser.
async fn start_in_browser(c: &Client, base: &str, game: GameKind, shot_name: Option<&str>) -> i64 {
    c.goto(&format!("{base}/play?game={game}")).await.unwrap();
    if let Some(name) = shot_name {
        shot(c, name).await;
    }
    let button = c
        .find(Locator::Css(&format!("#play-{game} button[type=submit]")))
        .await
        .unwrap();
    button.click().await.unwrap();
    // The post answers with a redirect to the game's page; under load the
    // browser may still be on the form when the click returns.
    let mut url = c.current_url().await.unwrap();
    for _ in 0..100 {
        if url.path().starts_with("/play/") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        url = c.current_url().await.unwrap();
    }
    url.path()
        .strip_prefix("/play/")
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("{game}: the form led to {url}"))
}

/// The positions in the game's log of its public and its hidden events.
fn public_events<G: Game>(record: &Record) -> (Vec<u64>, Vec<u64>) {
    let g: G = record.verify::<G>().unwrap();
    let n = record.seats.len() as u8;
    let (public, hidden): (Vec<_>, Vec<_>) = g
        .events()
        .iter()
        .enumerate()
        .partition(|(_, e)| (0..n).all(|s| e.visible_to(Seat(s))));
    (
        public.iter().map(|(i, _)| *i as u64).collect(),
        hidden.iter().map(|(i, _)| *i as u64).collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_play_and_watch_in_headless_chromium() {
    let Some(mut driver) = Driver::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("web.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    let config = ServerConfig {
        house_bots: Vec::new(),
        ladder: None,
        ..ServerConfig::default()
    };
    let dyn_store: Arc<dyn Store> = store.clone();
    let (state, house) = croupier_server::prepare(dyn_store, &config).await.unwrap();
    // Both sessions come from one address and play several games each.
    state
        .people
        .set_limits(croupier_competition::human::PeopleLimits {
            per_client: 16,
            ..Default::default()
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        croupier_server::run(listener, state, house, &config, async {
            let _ = stopped.await;
        })
        .await
    });
    let js = driver.session(true).await;
    let plain = driver.session(false).await;

    // A whole game of each kind, with and without JavaScript.
    for game in GameKind::ALL {
        for (c, with_js) in [(&js, true), (&plain, false)] {
            let form_shot = (with_js && game == GameKind::Goofspiel).then_some("play-form");
            let id = start_in_browser(c, &base, game, form_shot).await;
            // The script runs only where JavaScript is on (it marks the body).
            // The page may still be loading after the redirect: wait for its
            // table, then give the script a moment to run.
            let loaded = Instant::now() + Duration::from_secs(20);
            while table_status(c).await.is_none() && Instant::now() < loaded {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let mut marked = false;
            for _ in 0..if with_js { 50 } else { 1 } {
                marked = c.find(Locator::Css("body[data-js='on']")).await.is_ok();
                if marked {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            assert_eq!(
                marked, with_js,
                "{game}: the play page's script ran: {marked}"
            );
            check_table(c, game, with_js).await;
            let moves = play_in_browser(c, game, with_js).await;
            assert!(moves > 0, "{game}: no move was made");
            let text = c
                .find(Locator::Css("#turn"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(text.contains("The game is over"), "{game}: {text}");
            check_end(c, game).await;
            if with_js && game == GameKind::LoveLetter {
                shot(c, "play-over").await;
            }
            let row = store.game(id).await.unwrap().unwrap();
            assert_eq!(row.status, "finished", "{game} ({with_js})");
            assert!(store.person_game(id).await.unwrap().is_some());
        }
    }

    // A spectator watches a SkullWhist game that a person plays over HTTP.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = http
        .post(format!("{base}/play"))
        .form(&[
            ("game", "skullwhist"),
            ("opponent1", "house:heuristic"),
            ("seat", "1"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 303);
    let cookie = r.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let id: i64 = location.strip_prefix("/play/").unwrap().parse().unwrap();
    js.goto(&format!("{base}/live/{id}")).await.unwrap();
    // Home and the live list show it.
    plain.goto(&format!("{base}/live")).await.unwrap();
    plain
        .find(Locator::Css(&format!("a[href='/live/{id}']")))
        .await
        .expect("the live list links the game");
    shot(&plain, "live-list").await;
    plain.goto(&format!("{base}/")).await.unwrap();
    plain
        .find(Locator::Css(&format!("a[href='/live/{id}']")))
        .await
        .expect("the home page links the game");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut moves = 0;
    loop {
        assert!(Instant::now() < deadline, "the watched game did not end");
        let html = http
            .get(format!("{base}/play/{id}"))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if !html.contains("data-status=\"running\"") {
            break;
        }
        let find = |marker: &str| {
            html.split(marker)
                .nth(1)
                .and_then(|r| r.split("value=\"").nth(1))
                .and_then(|r| r.split('"').next())
                .map(|s| s.replace("&amp;", "&"))
        };
        if let (Some(d), Some(a)) = (find("name=\"decision\""), find("name=\"action\"")) {
            if moves == 0 {
                // A move the page does not offer (made by hand) is refused,
                // and the page says why.
                let r = http
                    .post(format!("{base}/play/{id}"))
                    .header("cookie", &cookie)
                    .form(&[("decision", d.as_str()), ("action", "play Z99")])
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status().as_u16(), 303);
                let page = http
                    .get(format!("{base}/play/{id}"))
                    .header("cookie", &cookie)
                    .send()
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                let notice = page
                    .split("class=\"notice\">")
                    .nth(1)
                    .map(|n| n.split('<').next().unwrap_or(""));
                assert!(
                    notice.is_some_and(|n| !n.is_empty()),
                    "a refused move says why"
                );
            }
            let r = http
                .post(format!("{base}/play/{id}"))
                .header("cookie", &cookie)
                .form(&[("decision", d), ("action", a)])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 303);
            moves += 1;
            if moves == 4 {
                tokio::time::sleep(Duration::from_millis(300)).await;
                shot(&js, "live-game").await;
            }
        }
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    // The page hears the end, then holds every public event.
    let deadline = Instant::now() + Duration::from_secs(20);
    while eval(&js, "document.getElementById('live').dataset.over || ''").await != "finished" {
        assert!(
            Instant::now() < deadline,
            "the live page did not hear the end"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    shot(&js, "live-over").await;
    let shown: Vec<u64> = serde_json::from_value(
        eval(
            &js,
            "[...document.querySelectorAll('#live-events li')].map(li => Number(li.dataset.index))",
        )
        .await,
    )
    .unwrap();
    let row = store.game(id).await.unwrap().unwrap();
    let record: Record = serde_json::from_str(row.record.as_deref().unwrap()).unwrap();
    let (public, hidden) = public_events::<croupier_rules::skullwhist::SkullWhist>(&record);
    assert!(
        !hidden.is_empty(),
        "dealt hands and sealed bids are hidden events"
    );
    assert_eq!(
        shown, public,
        "the live page must show exactly the public events"
    );
    assert!(
        shown.iter().all(|i| !hidden.contains(i)),
        "no hidden event is listed"
    );

    // People are rated apart from the bots (issue 48): the guests who
    // played are on each game's people-against-bots leaderboard, each with
    // a page of their own.
    for game in GameKind::ALL {
        let v: Value = http
            .get(format!("{base}/json/leaderboard/{game}/people"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let rows = v["rows"].as_array().unwrap();
        let people: Vec<&str> = rows
            .iter()
            .filter(|r| r["kind"] == "person")
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert!(!people.is_empty(), "{game}: {v}");
        assert!(
            people.iter().all(|p| p.starts_with("guest-")),
            "{game}: {people:?}"
        );
        assert!(rows.iter().any(|r| r["kind"] == "bot"), "{game}: {v}");
        let page = http
            .get(format!("{base}/people/{}", people[0]))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status().as_u16(), 200);
        assert!(page.text().await.unwrap().contains("Ratings against bots"));
    }
    plain
        .goto(&format!("{base}/leaderboard/goofspiel/people"))
        .await
        .unwrap();
    shot(&plain, "people-leaderboard").await;

    js.close().await.unwrap();
    plain.close().await.unwrap();
    driver.stop().await;
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
