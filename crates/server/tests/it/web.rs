//! The website without a browser or socket: every page kind and its JSON
//! twin through the router, bad parameters, escaping, replays.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use croupier_server::App;
use croupier_server::ServerConfig;
use croupier_store::web::GameFilter;
use croupier_store::{SqliteStore, Store, WebReads};
use croupier_web::seed;
use serde_json::Value;
use tower::ServiceExt as _;

pub(crate) struct Site {
    _dir: tempfile::TempDir,
    pub(crate) store: Arc<SqliteStore>,
    pub(crate) app: App,
}

pub(crate) async fn site(games: u64) -> Site {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("web.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    seed::seed(store.as_ref(), games, Duration::from_secs(30))
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

pub(crate) async fn get(app: &App, uri: &str) -> (StatusCode, String, String) {
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
    assert!(body.contains("&lt;b&gt;x&lt;/b&gt;&quot;'"));
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
        assert!(page.contains("step </span>3 of") && page.contains("rel=\"next\""));
        assert!(
            page.contains(" ms</td>"),
            "{game}: thinking times are shown"
        );
    }
    let sw = first_of(&s.store, "skullwhist").await;
    let (_, _, page) = get(&s.app, &format!("/games/{sw}?step=28")).await;
    assert!(page.contains("class=\"card red\"") && page.contains("♠"));
    assert!(page.contains("<th>Leader</th>") && page.contains(">Follower</th>"));
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

/// A finished SkullWhist game of `a` (seat `seat_a`) against `b` with a
/// hand-made record: `a` thinks `a_ms` per move, the first card is played
/// by `leader`, and `fault` (if any) is `a`'s forfeit. Games finished at
/// an even minute are stored with their facts (as every game is now), the
/// others without (as games stored before issue 53), so that the pages
/// read both.
#[allow(clippy::too_many_arguments)]
async fn sw_game(
    store: &SqliteStore,
    (a, b): (i64, i64),
    seat_a: usize,
    a_ms: f64,
    leader: usize,
    scores: [i64; 2],
    fault: Option<&str>,
    at: &str,
) {
    let bots = if seat_a == 0 { [a, b] } else { [b, a] };
    let g = store.start_game("skullwhist", &bots, 7, at).await.unwrap();
    let mut seats = vec![
        serde_json::json!({"name": "b"}),
        serde_json::json!({"name": "b"}),
    ];
    seats[seat_a] = serde_json::json!({"name": "timer", "version": "1.2.0", "dialect": "croupier"});
    let mut steps = vec![
        serde_json::json!({"seat": seat_a, "action": "bid 3", "ms": a_ms}),
        serde_json::json!({"seat": 1 - seat_a, "action": "bid 4", "ms": 0.004}),
        serde_json::json!({"seat": leader, "action": "play C05", "ms": a_ms}),
    ];
    if let Some(kind) = fault {
        steps.push(
            serde_json::json!({"seat": seat_a, "forfeit": true, "ms": 10000.0,
            "fault": {"kind": kind, "detail": "no <answer> in time"}}),
        );
    }
    // Scores by seat; ranks from them.
    let by_seat = if seat_a == 0 {
        scores
    } else {
        [scores[1], scores[0]]
    };
    let ranks: Vec<u8> = (0..2)
        .map(|i| if by_seat[i] >= by_seat[1 - i] { 1 } else { 2 })
        .collect();
    let record = serde_json::json!({
        "format": "croupier-record/1", "game": "skullwhist", "rules_version": 1,
        "variant": {}, "seed": 7, "seats": seats, "steps": steps,
        "outcome": {"scores": by_seat, "ranks": ranks}
    });
    store
        .finish_game(
            g,
            &croupier_store::GameEnd {
                finished: at.into(),
                scores: by_seat.iter().map(|s| Some(*s)).collect(),
                ranks,
                forfeited_by: None,
                record: record.to_string(),
                facts: at
                    .get(15..16)
                    .and_then(|m| m.parse::<u8>().ok())
                    .filter(|m| m % 2 == 0)
                    .map(|_| {
                        let r: croupier_rules::Record = serde_json::from_value(record).unwrap();
                        croupier_store::facts::GameFacts::of(&r).to_text()
                    }),
            },
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bot_and_versus_pages_read_times_faults_margins_and_splits() {
    let s = site(0).await;
    let a = s.store.create_bot("timer", "h", false).await.unwrap();
    let b = s.store.create_bot("rival", "h", false).await.unwrap();
    // Four games: timer sits first in two, leads first in three, wins three
    // (margins +70, +20, −50, +5) and times out once (a forfeit step).
    let games = [
        (0, 10.0, 0, [40, -30], None),
        (1, 20.0, 1, [30, 10], None),
        (0, 30.0, 0, [-20, 30], Some("timeout")),
        (1, 40.0, 0, [15, 10], None),
    ];
    for (i, (seat, ms, lead_seat, scores, fault)) in games.into_iter().enumerate() {
        sw_game(
            &s.store,
            (a, b),
            seat,
            ms,
            lead_seat,
            scores,
            fault,
            &format!("2026-01-01T00:0{i}:00.000Z"),
        )
        .await;
    }
    let (_, _, json) = get(&s.app, "/json/bots/timer").await;
    let v: Value = serde_json::from_str(&json).unwrap();
    let p = &v["profile"];
    assert_eq!(p["games"], 4);
    assert_eq!(p["version"], "1.2.0");
    // Its bids and the cards it led (10, 10, 20, 20, 30, 30, 40) and the
    // 10 s of the forfeit step; the rival's steps are not its own.
    assert_eq!(p["thinking"]["moves"], 8);
    assert_eq!(p["thinking"]["p50"], 20.0);
    assert_eq!(p["thinking"]["max"], 10000.0);
    assert_eq!(p["faults"]["timeout"], 1);
    assert_eq!(p["recent_faults"][0]["step"], 4);
    assert_eq!(v["move_limit_ms"], 120_000.0, "a REST bot: the hub's limit");
    assert_eq!(v["last_seen"], "2026-01-01T00:03:00.000Z");
    let (_, _, html) = get(&s.app, "/bots/timer").await;
    for says in [
        // A REST bot polls for its turn (issue 52): response, not thinking.
        "Response time",
        "polling delay is included",
        "median (p50)",
        "p99",
        "1.2.0",
        "finished a game <span class=\"nowrap\">2026-01-01</span> <span class=\"nowrap\">00:03:00</span>",
        "no &lt;answer&gt; in time",
        "step=4\">#",
    ] {
        assert!(html.contains(says), "the bot page lacks '{says}'");
    }
    // The rival's moves are not timed (in-process), and it has no faults.
    let (_, _, rival) = get(&s.app, "/bots/rival").await;
    assert!(rival.contains("moves are not timed") && rival.contains("No faults"));

    let (_, _, json) = get(&s.app, "/json/versus/timer/rival").await;
    let v: Value = serde_json::from_str(&json).unwrap();
    let sp = &v["splits"][0];
    assert_eq!(sp["game"], "skullwhist");
    assert_eq!(sp["margins"]["all"], serde_json::json!([70, 20, -50, 5]));
    assert_eq!(sp["margins"]["best"], 70);
    assert_eq!(sp["margins"]["worst"], -50);
    assert_eq!(
        sp["a_first_seat"],
        serde_json::json!({"games": 2, "wins": 1, "losses": 1, "ties": 0})
    );
    assert_eq!(
        sp["b_first_seat"],
        serde_json::json!({"games": 2, "wins": 2, "losses": 0, "ties": 0})
    );
    // timer led the first trick in the first three games (from either
    // seat), the rival in the last.
    assert_eq!(
        sp["a_led_first"],
        serde_json::json!({"games": 3, "wins": 2, "losses": 1, "ties": 0})
    );
    assert_eq!(
        sp["b_led_first"],
        serde_json::json!({"games": 1, "wins": 1, "losses": 0, "ties": 0})
    );
    assert_eq!(v["history"][0]["a"].as_array().unwrap().len(), 4);
    let (_, _, html) = get(&s.app, "/versus/timer/rival").await;
    for says in [
        "Score margins",
        "+70",
        "−50",
        "By seat",
        "By who led the first trick",
        "Ratings over their shared games",
    ] {
        assert!(html.contains(says), "the versus page lacks '{says}'");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_pages_speak_to_bot_authors() {
    let s = site(0).await;
    for game in ["skullwhist", "loveletter", "goofspiel"] {
        let (status, _, html) = get(&s.app, &format!("/rules/{game}")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("What your bot sees and does"), "{game}");
        assert!(
            html.contains("href=\"/start\""),
            "{game}: no link to Start here"
        );
        for dev in ["crates/", "testdata", "SPEC", "seed 00", ".json`", "golden"] {
            assert!(!html.contains(dev), "{game}: the rules page says '{dev}'");
        }
    }
}

/// Issue 52: names that hold markup and script, of a bot, its owner and a
/// tournament (the HTTP APIs refuse such names, so they are written to the
/// store directly, as an older version or a hand-edited database might
/// have left them), show as text on every page kind that names them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_in_names_shows_as_text_on_every_page_kind() {
    use croupier_store::tournaments::{EntryRow, NewTournament};
    use croupier_store::{BotKind, NewBot};
    const BOT: &str = "<script>alert(1)</script>";
    const OWNER: &str = "<b onmouseover=\"alert(2)\">o</b>";
    const CUP: &str = "<img src=x onerror='alert(3)'>";
    let s = site(0).await;
    let store = &s.store;
    let owner = store.create_owner(OWNER, "unused-hash").await.unwrap();
    let bot = store
        .create_remote_bot(&NewBot {
            name: BOT.into(),
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
    // The demo series with this bot in gops-planner's place.
    let mut ids = seed::demo_bots(store.as_ref()).await.unwrap();
    let planner = seed::BOTS
        .iter()
        .position(|b| b.0 == "gops-planner")
        .unwrap();
    ids[planner] = bot;
    let games = seed::play_games(
        0..24,
        24,
        Duration::from_secs(5),
        std::time::SystemTime::now(),
        &ids,
    )
    .await
    .unwrap();
    let stored = store.import_games(games).await.unwrap();
    let filter = GameFilter {
        game: None,
        bot: Some(bot),
    };
    let played = store.games_page(&filter, 0, 1).await.unwrap();
    assert!(!played.is_empty(), "the bot played: {stored:?}");
    let lizard = store.web_bot("lot-lizard").await.unwrap().unwrap();
    let entry = |id: i64, name: &str| EntryRow::new(id, 0, name, BotKind::Pull);
    store
        .tournaments()
        .create_tournament(&NewTournament {
            starts_at: 4_000_000_000,
            seed: 1,
            created_by: Some(owner),
            ..NewTournament::round_robin(
                CUP,
                "goofspiel",
                vec![entry(bot, BOT), entry(lizard.id, "lot-lizard")],
            )
        })
        .await
        .unwrap();
    let name = croupier_web::html::url(BOT);
    let cup = croupier_web::html::url(CUP);
    let game = played[0].id;
    let pages = [
        "/".to_string(),
        "/bots".into(),
        format!("/bots/{name}"),
        "/leaderboard/goofspiel".into(),
        format!("/versus/{name}/lot-lizard"),
        "/games".into(),
        format!("/games?bot={name}"),
        format!("/games?tournament={cup}"),
        format!("/games/{game}"),
        format!("/games/{game}?step=4"),
        "/tournaments".into(),
        format!("/tournaments/{cup}"),
        format!("/no/such/{name}"),
    ];
    for p in &pages {
        let (status, _, body) = get(&s.app, p).await;
        assert!(
            status == StatusCode::OK || p.starts_with("/no/"),
            "{p}: {status}"
        );
        for raw in ["<script>alert", "<b onmouseover", "<img src=x"] {
            assert!(!body.contains(raw), "{p} holds markup {raw}");
        }
    }
    let shows = |body: &str, text: &str| body.contains(text);
    let escaped_bot = "&lt;script&gt;alert(1)&lt;/script&gt;";
    let escaped_owner = "&lt;b onmouseover=&quot;alert(2)&quot;&gt;o&lt;/b&gt;";
    let escaped_cup = "&lt;img src=x onerror='alert(3)'&gt;";
    let (_, _, page) = get(&s.app, &format!("/bots/{name}")).await;
    assert!(
        shows(&page, escaped_bot) && shows(&page, escaped_owner),
        "{page}"
    );
    assert!(
        shows(&page, escaped_cup),
        "the bot page lists its tournament"
    );
    for p in ["/tournaments".to_string(), format!("/tournaments/{cup}")] {
        let (_, _, page) = get(&s.app, &p).await;
        assert!(shows(&page, escaped_cup), "{p}");
    }
    let (_, _, page) = get(&s.app, &format!("/tournaments/{cup}")).await;
    assert!(shows(&page, escaped_bot), "its entrant is named");
    for p in [
        format!("/games/{game}"),
        format!("/versus/{name}/lot-lizard"),
        "/leaderboard/goofspiel".into(),
        "/games".into(),
        "/".into(),
    ] {
        let (_, _, page) = get(&s.app, &p).await;
        assert!(shows(&page, escaped_bot), "{p} names the bot");
    }
}

/// Issue 52: /start names this site's address and offers each example bot
/// as a file; only the examples it shows can be fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_page_fills_in_the_server_and_offers_its_bots_as_files() {
    let s = site(0).await;
    let resp = s
        .app
        .clone()
        .oneshot(
            Request::get("/start")
                .header("host", "cards.example:8080")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let body = axum::body::to_bytes(resp.into_body(), 1 << 24)
        .await
        .unwrap();
    let page = String::from_utf8(body.to_vec()).unwrap();
    assert!(page.contains("curl -X POST http://cards.example:8080/v1/owners"));
    assert!(!page.contains("SERVER/"), "every SERVER is filled in");
    assert!(page.contains("id=\"hosted-program\""));
    let path = "/start/examples/bots/croupier/random_bot.py";
    assert!(page.contains(&format!("href=\"{path}\"")));
    let (status, kind, code) = get(&s.app, path).await;
    assert_eq!(status, StatusCode::OK);
    assert!(kind.starts_with("text/plain"), "{kind}");
    assert!(
        code.contains("import json") || code.contains("json"),
        "{code}"
    );
    for bad in [
        "/start/examples/../../Cargo.toml",
        "/start/examples/bots/croupier/nope.py",
        "/start/examples/%2e%2e/README.md",
    ] {
        let (status, _, _) = get(&s.app, bad).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{bad}");
    }
}

/// Issue 52, item 8: JSON twins write seeds as strings (a 64-bit seed
/// above 2^53 loses digits as a JavaScript number) and times as RFC 3339;
/// a JSON path that names nothing answers in JSON; About lists every twin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_twins_write_seeds_as_strings_and_times_as_rfc3339() {
    let s = site(6).await;
    let id = first_of(&s.store, "goofspiel").await;
    let (_, _, body) = get(&s.app, &format!("/json/games/{id}")).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    let seed = v["seed"].as_str().expect("the seed is a string");
    let seed: u64 = seed.parse().unwrap();
    assert_eq!(
        v["record"]["seed"].as_str(),
        Some(seed.to_string().as_str())
    );
    // The twin's record reads back as a record, string seed and all.
    let record: croupier_rules::Record = serde_json::from_value(v["record"].clone()).unwrap();
    assert_eq!(record.seed, seed);
    assert!(
        v["game"]["started"].as_str().unwrap().ends_with('Z'),
        "{}",
        v["game"]
    );
    // A tournament's times.
    use croupier_store::tournaments::NewTournament;
    s.store
        .tournaments()
        .create_tournament(&NewTournament {
            format: "swiss".into(),
            rounds: 3,
            starts_at: 1_790_856_000,
            seed: 1,
            all_bots: true,
            ..NewTournament::round_robin("cup", "goofspiel", Vec::new())
        })
        .await
        .unwrap();
    let (_, _, body) = get(&s.app, "/json/tournaments").await;
    let v: Value = serde_json::from_str(&body).unwrap();
    let t = &v["tournaments"][0]["tournament"];
    assert_eq!(t["starts_at"], "2026-10-01T12:00:00Z", "{t}");
    let created = t["created_at"].as_str().unwrap();
    assert!(created.starts_with("20") && created.ends_with('Z'), "{t}");
    // Nothing there: a JSON 404.
    for p in ["/json/unknown", "/json/bots/a/b/c", "/json"] {
        let (status, kind, body) = get(&s.app, p).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{p}");
        assert!(kind.starts_with("application/json"), "{p}: {kind}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert!(v["error"].as_str().unwrap().contains(p), "{p}: {v}");
    }
    let (_, _, about) = get(&s.app, "/about").await;
    for twin in [
        "/json/home",
        "/json/leaderboard/{game}",
        "/json/bots",
        "/json/bots/{name}",
        "/json/versus/{a}/{b}",
        "/json/games",
        "/json/games/{id}",
        "/json/activity",
        "/json/tournaments",
        "/json/tournaments/{name}",
        "/json/live",
    ] {
        assert!(about.contains(&format!("<code>{twin}</code>")), "{twin}");
    }
}

/// Issue 52, item 7: the home page has one table of games in progress, and
/// its leaders show the number they are ordered by (μ − 3σ).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_shows_one_live_table_and_leaders_by_their_number() {
    let s = site(30).await;
    let (a, b) = (seed::BOTS[0].0, seed::BOTS[1].0);
    let ids = (
        s.store.bot_by_name(a).await.unwrap().unwrap().id,
        s.store.bot_by_name(b).await.unwrap().unwrap().id,
    );
    let g = s
        .store
        .start_game("skullwhist", &[ids.0, ids.1], 1, "2026-01-01T00:00:00.000Z")
        .await
        .unwrap();
    let (_, _, home) = get(&s.app, "/").await;
    assert_eq!(
        home.matches("<table class=\"live-games\"").count(),
        1,
        "{home}"
    );
    assert!(!home.contains("Watch as they happen"));
    let live = &home[home.find("class=\"live-games\"").unwrap()..];
    let live = &live[..live.find("</table>").unwrap()];
    assert!(live.contains(&format!("href=\"/games/{g}\"")), "{live}");
    // Leaders: each panel's numbers never rise.
    for panel in home.split("<ol>").skip(1) {
        let list = &panel[..panel.find("</ol>").unwrap()];
        let shown: Vec<f64> = list
            .split("<span class=\"rating\"")
            .skip(1)
            .map(|r| {
                let text = &r[r.find('>').unwrap() + 1..];
                text[..text.find(' ').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(!shown.is_empty(), "{list}");
        assert!(shown.windows(2).all(|w| w[0] >= w[1]), "{shown:?}");
        assert!(list.contains("μ − 3σ"), "{list}");
    }
}
