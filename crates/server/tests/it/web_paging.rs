//! Issue 53: the games list's `older` and `newer` links start from a game
//! (`before=ID`, `after=ID`) and walk the whole list once, in order, as
//! page numbers do; bad cursors get a clear 400 or 404.

#![allow(clippy::unwrap_used)] // a test fails loudly

use axum::http::StatusCode;
use croupier_store::web::GameFilter;
use croupier_store::WebReads;
use serde_json::Value;

use crate::web::{get, site};

/// The ids of a JSON page, and its `older` and `newer` links.
async fn page(app: &croupier_server::App, uri: &str) -> (Vec<i64>, Option<String>, Option<String>) {
    let (status, _, body) = get(app, uri).await;
    assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let ids = v["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_i64().unwrap())
        .collect();
    let link = |k: &str| v[k].as_str().map(str::to_string);
    (ids, link("older"), link("newer"))
}

/// The id of the finished game with `n` newer ones before it.
async fn nth_newest(store: &croupier_store::SqliteStore, n: i64) -> i64 {
    store
        .games_page(&GameFilter::default(), n, 1)
        .await
        .unwrap()[0]
        .id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn older_and_newer_links_walk_every_list_once_in_order() {
    let s = site(450).await;
    let bot = s.store.leaderboard("loveletter").await.unwrap()[0].clone();
    let lists = [
        (GameFilter::default(), "/json/games".to_string()),
        (
            GameFilter {
                game: Some("loveletter".into()),
                bot: None,
            },
            "/json/games?game=loveletter".to_string(),
        ),
        (
            GameFilter {
                game: None,
                bot: Some(bot.bot),
            },
            format!("/json/games?bot={}", bot.name),
        ),
    ];
    for (filter, first) in lists {
        let all: Vec<i64> = s
            .store
            .games_page(&filter, 0, 10_000)
            .await
            .unwrap()
            .iter()
            .map(|g| g.id)
            .collect();
        assert!(all.len() > 100, "{first}: {} games", all.len());

        // Older, from the first page to the last.
        let (mut seen, mut pages): (Vec<i64>, Vec<String>) = (Vec::new(), Vec::new());
        let mut next = Some(first.clone());
        while let Some(uri) = next {
            let (ids, older, _) = page(&s.app, &uri).await;
            assert!(!ids.is_empty(), "{uri}");
            seen.extend(&ids);
            pages.push(uri);
            next = older;
        }
        assert_eq!(seen, all, "{first}");
        assert!(pages[1].contains("page=2&before="), "{pages:?}");
        // The page reached by links is the page of that number.
        let numbered = pages[2].split("&before=").next().unwrap();
        assert_eq!(
            page(&s.app, &pages[2]).await.0,
            page(&s.app, numbered).await.0
        );
        // On its HTML page, the numbers next to it are those links too.
        let (_, _, html) = get(&s.app, pages[2].trim_start_matches("/json")).await;
        assert!(
            html.contains(">2</a>") && html.contains("page=2&amp;after="),
            "{html}"
        );
        if pages.len() > 3 {
            assert!(html.contains("page=4&amp;before="), "{html}");
        }
        // Newer, from the last page back to the first.
        let mut back = Vec::new();
        let mut next = Some(pages.last().unwrap().clone());
        while let Some(uri) = next {
            let (ids, _, newer) = page(&s.app, &uri).await;
            back.push(ids);
            next = newer;
        }
        back.reverse();
        assert_eq!(back.concat(), all, "{first}: newer links");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_cursors_are_clear_errors() {
    let s = site(60).await;
    let newest = nth_newest(&s.store, 0).await;
    for (uri, status, says) in [
        (
            "/games?before=x",
            StatusCode::BAD_REQUEST,
            "'x' is not a game id",
        ),
        (
            "/games?after=-3",
            StatusCode::BAD_REQUEST,
            "'-3' is not a game id",
        ),
        (
            "/games?before=1&after=2",
            StatusCode::BAD_REQUEST,
            "not both",
        ),
        (
            "/games?before=999999",
            StatusCode::NOT_FOUND,
            "There is no finished game #999999",
        ),
        (
            "/games?tournaments=only&before=1",
            StatusCode::BAD_REQUEST,
            "page by number",
        ),
        (
            "/games?page=2&before=1&game=chess",
            StatusCode::BAD_REQUEST,
            "no game 'chess'",
        ),
    ] {
        let (got, _, body) = get(&s.app, uri).await;
        assert_eq!(got, status, "{uri}: {body}");
        assert!(body.contains(says), "{uri}: {body}");
    }
    // Before the oldest game: an empty page, not an error.
    let oldest = nth_newest(&s.store, 59).await;
    let (got, _, body) = get(&s.app, &format!("/json/games?before={oldest}")).await;
    assert_eq!(got, StatusCode::OK, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(v["games"].as_array().unwrap().is_empty() && v["older"].is_null());
    // Page 1 is the newest page: with a cursor, the cursor decides and the
    // page has no number.
    let (_, _, body) = get(&s.app, &format!("/json/games?page=1&before={newest}")).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(v["page"].is_null(), "{body}");
    assert_eq!(v["before"].as_i64(), Some(newest));
    assert_ne!(v["games"][0]["id"].as_i64(), Some(newest));
    assert!(v["newer"].as_str().unwrap().contains("after="), "{body}");
    // After the newest: the first page.
    let (ids, older, newer) = page(&s.app, &format!("/json/games?after={newest}")).await;
    assert_eq!(ids[0], newest);
    assert!(older.is_some() && newer.is_none());
}

/// The tournaments list shows 25 tournaments a page, newest first, with
/// links between its pages and clear errors past them; a bot's page shows
/// its 10 newest tournaments and says how many it entered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tournaments_list_pages_and_a_bot_shows_its_newest() {
    use croupier_web::seed::{seed_with_cups, Cups};
    let s = site(0).await;
    // Runs of 12 games, a cup of one game in each: 35 cups, the kinds in
    // turn, so 12 of them SkullWhist's, with every SkullWhist demo bot.
    let end = std::time::SystemTime::now();
    let cups = Cups {
        every: 12,
        burst: 3,
    };
    let spacing = std::time::Duration::from_secs(30);
    seed_with_cups(s.store.as_ref(), 420, spacing, end, Some(cups))
        .await
        .unwrap();
    let json = |uri: &'static str| {
        let app = s.app.clone();
        async move {
            let (status, _, body) = get(&app, uri).await;
            assert_eq!(status, StatusCode::OK, "{uri}: {body}");
            serde_json::from_str::<Value>(&body).unwrap()
        }
    };
    let names = |v: &Value| -> Vec<String> {
        v["tournaments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["tournament"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let first = json("/json/tournaments").await;
    assert_eq!(
        (first["page"].as_i64(), first["pages"].as_i64()),
        (Some(1), Some(2))
    );
    assert_eq!(first["total"].as_i64(), Some(35));
    let second = json("/json/tournaments?page=2").await;
    let mut listed = names(&first);
    listed.extend(names(&second));
    let newest_first: Vec<String> = (1..=35).rev().map(|k| format!("cup-{k}")).collect();
    assert_eq!(listed, newest_first);
    assert_eq!(names(&first).len(), 25);

    let (status, _, html) = get(&s.app, "/tournaments").await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("href=\"/tournaments?page=2\""), "{html}");
    assert!(
        html.contains("page 1 of 2") && !html.contains("‹ newer"),
        "{html}"
    );
    let (status, _, html) = get(&s.app, "/tournaments?page=2").await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("href=\"/tournaments?page=1\""), "{html}");
    assert!(html.contains("href=\"/json/tournaments?page=2\""), "{html}");
    assert!(!html.contains("older ›"), "{html}");
    let (status, _, body) = get(&s.app, "/tournaments?page=3").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body.contains("There is no page 3"), "{body}");
    for bad in [
        "/tournaments?page=0",
        "/tournaments?page=x",
        "/json/tournaments?page=-1",
    ] {
        let (status, _, body) = get(&s.app, bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (status, _, body) = get(&s.app, "/json/tournaments?page=9223372036854775807").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        serde_json::from_str::<Value>(&body).unwrap()["error"].is_string(),
        "{body}"
    );
    // The API's list is the same page, in the API's error shapes.
    assert_eq!(json("/v1/tournaments").await, first);
    assert_eq!(json("/v1/tournaments?page=2").await, second);
    for (bad, status) in [
        ("/v1/tournaments?page=0", StatusCode::BAD_REQUEST),
        ("/v1/tournaments?page=two", StatusCode::BAD_REQUEST),
        ("/v1/tournaments?page=3", StatusCode::NOT_FOUND),
        (
            "/v1/tournaments?page=9223372036854775807",
            StatusCode::NOT_FOUND,
        ),
    ] {
        let (got, _, body) = get(&s.app, bad).await;
        assert_eq!(got, status, "{bad}: {body}");
        let error = serde_json::from_str::<Value>(&body).unwrap()["error"].clone();
        assert!(error.is_string(), "{bad}: {body}");
    }
    // A long page parameter is echoed cut to 24 characters.
    let long = "9".repeat(30) + "x";
    let (got, _, body) = get(&s.app, &format!("/v1/tournaments?page={long}")).await;
    assert_eq!(got, StatusCode::BAD_REQUEST, "{body}");
    let error = serde_json::from_str::<Value>(&body).unwrap()["error"].clone();
    assert_eq!(
        error.as_str(),
        Some(format!("'{}' is not a page number (1 or more)", "9".repeat(24)).as_str()),
        "{body}"
    );
    // A brief's winner (kept with the cup at its end) is the
    // tournament's own page's first standing.
    for brief in first["tournaments"].as_array().unwrap() {
        let name = brief["tournament"]["name"].as_str().unwrap();
        let (status, _, body) = get(&s.app, &format!("/json/tournaments/{name}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let own: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(brief["winner"], own["standings"][0]["name"], "{name}");
    }

    let bot = json("/json/bots/ace-of-spades").await;
    assert_eq!(bot["tournaments_entered"].as_u64(), Some(12), "{bot}");
    let shown = names(&bot);
    let skullwhist_cups: Vec<String> = (1..=35)
        .rev()
        .filter(|k| (k - 1) % 3 == 0)
        .take(10)
        .map(|k| format!("cup-{k}"))
        .collect();
    assert_eq!(shown, skullwhist_cups);
    let (_, _, html) = get(&s.app, "/bots/ace-of-spades").await;
    assert!(
        html.contains("The newest 10 of the 12 it entered"),
        "{html}"
    );
}

/// A tournament's page lists its games 200 at a time, by round, table and
/// game, with links between the pages; every game is on exactly one page,
/// its JSON twin has them all, and pages past the end or not numbers get
/// clear errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_page_lists_its_games_a_page_at_a_time() {
    use croupier_web::seed::{seed_with_cups, Cups};
    let s = site(0).await;
    // One cup: the first 900 of 1,000 games, every third of them (300).
    let cups = Cups {
        every: 1000,
        burst: 900,
    };
    let end = std::time::SystemTime::now();
    let spacing = std::time::Duration::from_secs(30);
    seed_with_cups(s.store.as_ref(), 1000, spacing, end, Some(cups))
        .await
        .unwrap();
    let (status, kind, body) = get(&s.app, "/json/tournaments/cup-1").await;
    assert_eq!(
        (status, kind.as_str()),
        (StatusCode::OK, "application/json"),
        "{body}"
    );
    // The kept page's JSON (written once, `view::json` tests that), asked
    // again: the same.
    assert_eq!(get(&s.app, "/json/tournaments/cup-1").await.2, body);
    let all: Vec<i64> = serde_json::from_str::<Value>(&body).unwrap()["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_i64().unwrap())
        .collect();
    assert_eq!(all.len(), 300);
    // The games a page links to, in order.
    let shown = |html: &str| -> Vec<i64> {
        html.split("href=\"/games/")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap())
            .collect()
    };
    // A page of games: its range, the page it links to, and the one it
    // must not link to (past either end).
    let games_page = |uri: &'static str, range: &'static str, to: i64, not_to: i64| {
        let app = s.app.clone();
        async move {
            let (status, _, html) = get(&app, uri).await;
            assert_eq!(status, StatusCode::OK, "{uri}: {html}");
            assert!(html.contains(range), "{uri}: {html}");
            let link = format!("href=\"/tournaments/cup-1?games={to}#games\"");
            assert!(html.contains(&link), "{uri}: {html}");
            assert!(!html.contains(&format!("games={not_to}")), "{uri}: {html}");
            html
        }
    };
    let first = games_page("/tournaments/cup-1", "games 1–200 of 300", 2, 0).await;
    let second = games_page("/tournaments/cup-1?games=2", "games 201–300 of 300", 1, 3).await;
    // The one round goes on from page 1 to page 2.
    assert!(!first.contains("(continued)"), "{first}");
    assert!(second.contains("Round 1 (continued)"), "{second}");
    let mut both = shown(&first);
    assert_eq!(both.len(), 200);
    both.extend(shown(&second));
    assert_eq!(both, all, "each game once, in the twin's order");
    // Explicit page 1 is the page itself.
    let (_, _, again) = get(&s.app, "/tournaments/cup-1?games=1").await;
    assert_eq!(shown(&again), shown(&first));

    let (status, _, body) = get(&s.app, "/tournaments/cup-1?games=3").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body.contains("has 2 pages of games"), "{body}");
    for bad in ["0", "x", "-1"] {
        let (status, _, body) = get(&s.app, &format!("/tournaments/cup-1?games={bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "games={bad}: {body}");
        assert!(body.contains("is not a page of games"), "{body}");
    }
    // No such tournament is a 404, whatever the page.
    let (status, _, body) = get(&s.app, "/tournaments/cup-0?games=0").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // The JSON twin has every game, whatever the page.
    let (status, _, body) = get(&s.app, "/json/tournaments/cup-1?games=x").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _, body) = get(&s.app, "/json/tournaments/cup-1?games=3").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["games"]
            .as_array()
            .unwrap()
            .len(),
        300
    );
}
