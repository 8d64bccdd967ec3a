//! Issue 16 over HTTP (no browser): a person plays a whole game of each
//! kind against a house bot through the plain forms (POST, 303, GET), as a
//! browser without JavaScript would; the game is stored, marked as a
//! person's, and rates no bot. A spectator's NDJSON stream of a running
//! game carries exactly the events every seat may see (checked against the
//! record afterwards), and the bounds on games per person hold.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use crate::common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use common::{config, TestServer};
use croupier_rules::{Event as _, Game, GameKind, Record, Seat};
use croupier_store::Store;
use serde_json::Value;

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// The text of attribute `attr` after each `marker` in `html`.
fn attrs(html: &str, marker: &str, attr: &str) -> Vec<String> {
    html.match_indices(marker)
        .filter_map(|(i, _)| {
            let rest = &html[i..];
            let end = rest.find('>')?;
            let tag = &rest[..end];
            let start = tag.find(&format!("{attr}=\""))? + attr.len() + 2;
            let len = tag[start..].find('"')?;
            Some(
                tag[start..start + len]
                    .replace("&amp;", "&")
                    .replace("&quot;", "\""),
            )
        })
        .collect()
}

/// Starts a game; returns (game id, cookie header).
fn start(
    srv: &TestServer,
    c: &reqwest::blocking::Client,
    form: &[(&str, &str)],
    cookie: Option<&str>,
) -> Result<(i64, String), (u16, String)> {
    let mut req = c.post(format!("{}/play", srv.base)).form(form);
    if let Some(k) = cookie {
        req = req.header("cookie", k);
    }
    let r = req.send().unwrap();
    if r.status().as_u16() != 303 {
        let status = r.status().as_u16();
        return Err((status, r.text().unwrap()));
    }
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let set = r
        .headers()
        .get("set-cookie")
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_string());
    let id = location.strip_prefix("/play/").unwrap().parse().unwrap();
    Ok((id, set.or(cookie.map(str::to_string)).unwrap()))
}

/// Plays game `id` to its end with the first legal move each time; returns
/// the number of moves made.
fn play_out(srv: &TestServer, c: &reqwest::blocking::Client, id: i64, cookie: &str) -> usize {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut moves = 0;
    loop {
        assert!(Instant::now() < deadline, "game {id} did not end");
        let r = c
            .get(format!("{}/play/{id}", srv.base))
            .header("cookie", cookie)
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let html = r.text().unwrap();
        let status = attrs(&html, "<div id=\"table\"", "data-status");
        if status.first().map(String::as_str) != Some("running") {
            assert_eq!(status[0], "finished", "{html}");
            return moves;
        }
        let decision = attrs(&html, "name=\"decision\"", "value");
        let actions = attrs(&html, "name=\"action\"", "value");
        let (Some(d), Some(a)) = (decision.first(), actions.first()) else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let r = c
            .post(format!("{}/play/{id}", srv.base))
            .header("cookie", cookie)
            .form(&[("decision", d.as_str()), ("action", a.as_str())])
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 303);
        assert_eq!(r.headers()["location"], format!("/play/{id}").as_str());
        moves += 1;
    }
}

fn store(srv: &TestServer) -> (tokio::runtime::Runtime, std::sync::Arc<dyn Store>) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(croupier_store::open(&srv.db)).unwrap();
    (rt, s)
}

#[test]
fn a_person_plays_every_game_through_plain_forms_and_rates_no_bot() {
    let srv = TestServer::with_config(config());
    let c = client();
    for (game, opponent) in [
        (GameKind::Goofspiel, "house:random"),
        (GameKind::LoveLetter, "house:heuristic"),
        (GameKind::SkullWhist, "house:random"),
    ] {
        let (id, cookie) = start(
            &srv,
            &c,
            &[
                ("game", game.name()),
                ("opponent1", opponent),
                ("seat", "1"),
            ],
            None,
        )
        .unwrap();
        // Someone else's cookie sees no hand.
        let other = c
            .get(format!("{}/play/{id}", srv.base))
            .header("cookie", "croupier_player=00000000000000000000000000000000")
            .send()
            .unwrap();
        assert_eq!(other.status().as_u16(), 403);
        let moves = play_out(&srv, &c, id, &cookie);
        assert!(moves > 0, "{game}: the person made no move");
        let (rt, s) = store(&srv);
        let row = rt.block_on(s.game(id)).unwrap().unwrap();
        assert_eq!(row.status, "finished", "{game}");
        let person = rt.block_on(s.person_game(id)).unwrap().unwrap();
        assert_eq!(person.seat, 1);
        // A guest's name is drawn from their cookie, never the cookie.
        let cookie_value = cookie.split('=').nth(1).unwrap();
        assert!(person.player.starts_with("guest-") && !person.player.contains(cookie_value));
        assert_eq!(person.player.len(), "guest-".len() + 6);
        let record: Record = serde_json::from_str(row.record.as_deref().unwrap()).unwrap();
        assert_eq!(record.seats[1].name, format!("person-{game}"));
        // No rating moved: neither the person nor the house bot is ranked.
        let board = rt.block_on(s.leaderboard(game.name())).unwrap();
        assert!(board.is_empty(), "{game}: {board:?}");
        // The finished page shows the replay link.
        let page = c
            .get(format!("{}/play/{id}", srv.base))
            .header("cookie", &cookie)
            .send()
            .unwrap()
            .text()
            .unwrap();
        assert!(page.contains(&format!("/games/{id}")));
        // Issue 48: the people's pool rates the person and the bot, apart.
        let v: serde_json::Value = c
            .get(format!("{}/json/leaderboard/{game}/people", srv.base))
            .send()
            .unwrap()
            .json()
            .unwrap();
        let rows = v["rows"].as_array().unwrap();
        assert!(
            rows.iter().any(|r| r["kind"] == "person"
                && r["name"] == person.player.as_str()
                && r["games"] == 1),
            "{game}: {v}"
        );
        let house = opponent.strip_prefix("house:").unwrap();
        assert!(
            rows.iter().any(|r| r["kind"] == "bot"
                && r["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("house-{house}"))),
            "{game}: {v}"
        );
        let mine = c
            .get(format!("{}/people/{}", srv.base, person.player))
            .send()
            .unwrap()
            .text()
            .unwrap();
        assert!(
            mine.contains(&format!("href=\"/games/{id}\"")),
            "{game}: the person's page lists the game"
        );
        // The people's seat page speaks of people, with their move limit.
        let seat = c
            .get(format!("{}/bots/person-{game}", srv.base))
            .send()
            .unwrap()
            .text()
            .unwrap();
        assert!(seat.contains("people, from the website"), "{game}");
        assert!(!seat.contains("No finished games yet"), "{game}");
        assert!(
            seat.contains(&format!("/leaderboard/{game}/people")),
            "{game}"
        );
        // The replay draws the same card table.
        let replay = c
            .get(format!("{}/games/{id}", srv.base))
            .send()
            .unwrap()
            .text()
            .unwrap();
        assert!(replay.contains("class=\"felt\""), "{game}");
    }
    for (path, status) in [
        ("/people/nobody-here", 404),
        ("/json/people/nobody-here", 404),
        ("/json/live/999999", 404),
        ("/live/999999", 303),
        ("/json/leaderboard/chess/people", 404),
    ] {
        let r = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .get(format!("{}{path}", srv.base))
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), status, "{path}");
    }
}

#[test]
fn bad_requests_and_bounds_get_clear_answers() {
    let srv = TestServer::with_config(config());
    let c = client();
    let bad = start(
        &srv,
        &c,
        &[("game", "chess"), ("opponent1", "house:random")],
        None,
    )
    .unwrap_err();
    assert_eq!(bad.0, 400);
    let bad = start(
        &srv,
        &c,
        &[("game", "goofspiel"), ("opponent1", "house:nobody")],
        None,
    )
    .unwrap_err();
    assert!(bad.1.contains("no house bot"), "{}", bad.1);
    let bad = start(
        &srv,
        &c,
        &[("game", "goofspiel"), ("opponent1", "bot:ghost")],
        None,
    )
    .unwrap_err();
    assert!(bad.1.contains("no registered bot"), "{}", bad.1);
    let bad = start(
        &srv,
        &c,
        &[
            ("game", "goofspiel"),
            ("opponent1", "house:random"),
            ("opponent2", "house:random"),
        ],
        None,
    )
    .unwrap_err();
    assert!(bad.1.contains("takes 2 to 2 players"), "{}", bad.1);
    let form = [("game", "goofspiel"), ("opponent1", "house:random")];
    let (id, cookie) = start(&srv, &c, &form, None).unwrap();
    start(&srv, &c, &form, Some(&cookie)).unwrap();
    let (status, body) = start(&srv, &c, &form, Some(&cookie)).unwrap_err();
    assert_eq!(status, 429);
    assert!(body.contains("finish one first"), "{body}");
    // An illegal move is refused with a notice; the game goes on.
    let r = c
        .post(format!("{}/play/{id}", srv.base))
        .header("cookie", &cookie)
        .form(&[("decision", "1"), ("action", "99")])
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 303);
    let page = c
        .get(format!("{}/play/{id}", srv.base))
        .header("cookie", &cookie)
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(page.contains("not one of your legal moves"), "{page}");
}

/// The events of a finished record that every seat may see.
fn public_events<G: Game>(record: &Record) -> Vec<String> {
    let g: G = record.verify::<G>().unwrap();
    let n = record.seats.len() as u8;
    g.events()
        .iter()
        .filter(|e| (0..n).all(|s| e.visible_to(Seat(s))))
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_spectator_stream_carries_every_public_event_and_nothing_hidden() {
    let srv = TestServer::with_config(config());
    let c = client();
    let (id, cookie) = start(
        &srv,
        &c,
        &[
            ("game", "skullwhist"),
            ("opponent1", "house:random"),
            ("seat", "0"),
        ],
        None,
    )
    .unwrap();
    let url = format!("{}/v1/games/{id}/events", srv.base);
    let reader = std::thread::spawn(move || {
        let r = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .unwrap()
            .get(url)
            .send()
            .unwrap();
        assert_eq!(r.headers()["content-type"], "application/x-ndjson");
        let mut out = Vec::new();
        for line in BufReader::new(r).lines() {
            let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
            let end = v["type"] == "end";
            out.push(v);
            if end {
                break;
            }
        }
        out
    });
    // Let the spectator connect before the first move.
    std::thread::sleep(Duration::from_millis(300));
    play_out(&srv, &c, id, &cookie);
    let got = reader.join().unwrap();
    assert_eq!(got[0]["type"], "start");
    assert_eq!(got[0]["person_seat"], 0);
    assert_eq!(got.last().unwrap()["status"], "finished");
    let texts: Vec<String> = got
        .iter()
        .filter(|m| m["type"] == "event")
        .map(|m| m["text"].as_str().unwrap().to_string())
        .collect();
    let (rt, s) = store(&srv);
    let row = rt.block_on(s.game(id)).unwrap().unwrap();
    let record: Record = serde_json::from_str(row.record.as_deref().unwrap()).unwrap();
    let public = public_events::<croupier_rules::skullwhist::SkullWhist>(&record);
    assert!(!public.is_empty());
    assert_eq!(texts, public);
    // Over: the stream is gone (404) or ends at once with the end message.
    let after = c
        .get(format!("{}/v1/games/999999/events", srv.base))
        .send()
        .unwrap();
    assert_eq!(after.status().as_u16(), 404);
}

/// Breaks the store under a running server: the table of bots open to
/// challenges is dropped, so reading it fails.
fn drop_challenges(srv: &TestServer) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let sql = "DROP TABLE bot_challenges";
        if srv.db.starts_with("sqlite:") {
            let pool = sqlx::SqlitePool::connect(&srv.db).await.unwrap();
            sqlx::query(sql).execute(&pool).await.unwrap();
        } else {
            let pool = sqlx::PgPool::connect(&srv.db).await.unwrap();
            sqlx::query(sql).execute(&pool).await.unwrap();
        }
    });
}

/// A store that fails is a server error on the play pages and the bot
/// page, logged, not an empty list of opponents (nor a bot shown as closed
/// to challenges).
#[test]
fn a_store_failure_is_an_error_page_not_an_empty_list() {
    let srv = TestServer::start();
    let c = client();
    let bot = srv.bot("shown");
    let page = |path: &str| {
        let r = c.get(format!("{}{path}", srv.base)).send().unwrap();
        (r.status().as_u16(), r.text().unwrap())
    };
    let (status, html) = page("/play?game=skullwhist");
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("house bot: random"), "{html}");
    let (status, _) = page(&format!("/bots/{}", bot.name));
    assert_eq!(status, 200);
    drop_challenges(&srv);
    let (status, html) = page("/play?game=skullwhist");
    assert_eq!(status, 500, "{html}");
    assert!(html.contains("Server error"), "{html}");
    assert!(!html.contains("house bot: random"), "{html}");
    let (status, html) = page(&format!("/bots/{}", bot.name));
    assert_eq!(status, 500, "{html}");
    let started = start(
        &srv,
        &c,
        &[("game", "skullwhist"), ("opponent1", "house:random")],
        None,
    );
    let (status, html) = started.expect_err("no game without the store");
    assert_eq!(status, 500, "{html}");
    assert!(html.contains("Server error"), "{html}");
}
