//! Bans and a season change in the middle of play (issue 49 item 5), over
//! real HTTP with push bots on the ladder and in a tournament: "a ban and a
//! season change in the middle of play, with nothing lost".

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use crate::admin::{make_admin, root, with_store};
use crate::common;
use crate::ladder::{
    croupier_push, finished_games, ladder_config, owner, register, spawn_bot_server, v1, verify,
};

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use croupier_rules::goofspiel::Goofspiel;
use reqwest::Method;
use serde_json::{json, Value};

/// The games of `bot` in the server's database: (id, status).
fn games_of(srv: &TestServer, bot: i64) -> Vec<(i64, String)> {
    with_store(srv, async |s| {
        let mut out = Vec::new();
        let (mut id, mut misses) = (1, 0);
        while misses < 20 {
            match s.game(id).await.unwrap() {
                Some(g) => {
                    misses = 0;
                    if s.game_bots(id).await.unwrap().contains(&bot) {
                        out.push((id, g.status));
                    }
                }
                None => misses += 1,
            }
            id += 1;
        }
        out
    })
}

fn leaderboard(srv: &TestServer, q: &str) -> Vec<Value> {
    let r = srv.get(&format!("/json/leaderboard/goofspiel{q}"));
    assert_eq!(r.status, 200, "{}", r.body);
    let v: Value = serde_json::from_str(&r.body).unwrap();
    v["bots"].as_array().unwrap().clone()
}

fn games_in(board: &[Value], name: &str) -> i64 {
    board
        .iter()
        .find(|r| r["name"] == name)
        .map_or(0, |r| r["games"].as_i64().unwrap())
}

/// Issue 49's check: "a ban and a season change in the middle of play, with
/// nothing lost". Two push bots and the house bots play Goofspiel on the
/// ladder; one bot is held in the middle of a game while an admin bans it
/// and starts a new season. The game finishes and is stored and rated (in
/// the new season), the banned bot gets no new game, the new season starts
/// afresh and the old one stays readable, and every game adds up.
#[test]
fn a_ban_and_a_season_change_in_the_middle_of_play_lose_nothing() {
    let mut config = ladder_config(3);
    // Time enough for the admin's requests while the victim is held.
    for g in &mut config.ladder.as_mut().unwrap().games {
        g.move_time = Duration::from_secs(6);
    }
    let srv = TestServer::with_config(config);
    let rt = tokio::runtime::Runtime::new().unwrap();
    owner(&srv, "root");
    owner(&srv, "carol");
    make_admin(&srv, "root");
    // The victim plays at random, but while `hold` is set it waits (within
    // its move time) before answering a decision: its game is then surely
    // in progress.
    let hold = Arc::new(AtomicBool::new(false));
    let held = Arc::new(AtomicUsize::new(0));
    let play = croupier_push::<Goofspiel>("random");
    let (h, n) = (Arc::clone(&hold), Arc::clone(&held));
    let victim_url = spawn_bot_server(&rt, move |headers, body| {
        // Only a decision is held: the game cannot be over while the
        // victim still owes it a move.
        if h.load(Ordering::SeqCst) && body.contains("\"type\":\"act\"") {
            n.fetch_add(1, Ordering::SeqCst);
            let until = Instant::now() + Duration::from_secs(4);
            while h.load(Ordering::SeqCst) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        play(headers, body)
    });
    let other_url = spawn_bot_server(&rt, croupier_push::<Goofspiel>("random"));
    let victim = register(
        &srv,
        "carol",
        json!({"name": "victim", "game": "goofspiel", "kind": "push", "dialect": "croupier", "url": victim_url}),
    )["id"]
        .as_i64()
        .unwrap();
    let other = register(
        &srv,
        "carol",
        json!({"name": "other", "game": "goofspiel", "kind": "push", "dialect": "croupier", "url": other_url}),
    )["id"]
        .as_i64()
        .unwrap();
    let finished = |bot: i64| {
        games_of(&srv, bot)
            .iter()
            .filter(|(_, s)| s == "finished")
            .count() as i64
    };
    // Season 1: both bots play a few games.
    let deadline = Instant::now() + Duration::from_secs(60);
    while finished(victim) < 3 || finished(other) < 3 {
        assert!(Instant::now() < deadline, "too few games");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Hold the victim in the middle of a game.
    hold.store(true, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(20);
    while held.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "the victim was never asked again: {:?} {:?}",
            games_of(&srv, victim),
            games_of(&srv, other)
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let running: Vec<i64> = games_of(&srv, victim)
        .into_iter()
        .filter(|(_, s)| s == "running")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(running.len(), 1, "the victim is in one game: {running:?}");
    let victim_season1 = finished(victim);
    let (s, v) = root(
        &srv,
        Method::POST,
        "/v1/admin/bots/victim/ban",
        Some(json!({"reason": "caught colluding"})),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = root(
        &srv,
        Method::POST,
        "/v1/admin/seasons",
        Some(json!({"game": "goofspiel"})),
    );
    assert_eq!(s, 201, "{v}");
    // Still held: its game is still running, and the old season is frozen
    // with every game the victim finished before.
    assert_eq!(
        games_of(&srv, victim)
            .iter()
            .filter(|(_, s)| s == "running")
            .count(),
        1
    );
    let season1 = leaderboard(&srv, "?season=1");
    assert_eq!(games_in(&season1, "victim"), victim_season1);
    assert!(games_in(&leaderboard(&srv, ""), "victim") == 0);
    hold.store(false, Ordering::SeqCst);

    // The game in progress finishes, is stored with its record, and counts
    // in the new season.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = games_of(&srv, victim);
        if now
            .iter()
            .any(|(id, s)| *id == running[0] && s == "finished")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the held game never ended: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Play goes on without the banned bot.
    let other_at_ban = finished(other);
    let deadline = Instant::now() + Duration::from_secs(30);
    while finished(other) < other_at_ban + 3 {
        assert!(Instant::now() < deadline, "the ladder stopped");
        std::thread::sleep(Duration::from_millis(100));
    }
    let victim_games = games_of(&srv, victim);
    assert!(
        victim_games.iter().all(|(id, _)| *id <= running[0]),
        "the banned bot got a new game: {victim_games:?}"
    );
    assert!(
        victim_games.iter().all(|(_, s)| s == "finished"),
        "{victim_games:?}"
    );
    assert_eq!(victim_games.len() as i64, victim_season1 + 1);
    // Nothing lost, nothing counted twice: each bot's games in the two
    // seasons are its finished games, and every record replays.
    let season1 = leaderboard(&srv, "?season=1");
    let season2 = leaderboard(&srv, "");
    assert_eq!(games_in(&season1, "victim"), victim_season1);
    assert_eq!(games_in(&season2, "victim"), 1);
    // `other` may be in a game right now: compare while it is not.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let before = finished(other);
        let s1 = games_in(&leaderboard(&srv, "?season=1"), "other");
        let s2 = games_in(&leaderboard(&srv, ""), "other");
        if before == finished(other) && s1 + s2 == before {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "other: {s1} + {s2} rated games, {before} finished"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let aborted = with_store(&srv, async |s| s.count_games("aborted").await.unwrap());
    assert_eq!(aborted, 0);
    for (record, _) in finished_games(&srv) {
        verify(&record);
    }
    let page: Value = serde_json::from_str(&srv.get("/json/bots/victim").body).unwrap();
    assert_eq!(page["banned"]["reason"], "caught colluding");
}

/// A ban in the middle of a running tournament: the bot's game in progress
/// finishes and counts, its games not yet dealt are void, later rounds do
/// not pair it, and the tournament ends as usual.
#[test]
fn a_ban_withdraws_a_bot_from_a_running_tournament_and_its_game_in_progress_counts() {
    let mut config = ladder_config(3);
    for g in &mut config.ladder.as_mut().unwrap().games {
        g.move_time = Duration::from_secs(6);
    }
    let srv = TestServer::with_config(config);
    let rt = tokio::runtime::Runtime::new().unwrap();
    owner(&srv, "root");
    owner(&srv, "carol");
    make_admin(&srv, "root");
    for name in ["victim", "other", "third"] {
        // Slow enough (a decision takes 60 ms) for the ban to fall inside
        // a game.
        let play = croupier_push::<Goofspiel>("random");
        let url = spawn_bot_server(&rt, move |headers, body| {
            if body.contains("\"type\":\"act\"") {
                std::thread::sleep(Duration::from_millis(60));
            }
            play(headers, body)
        });
        register(
            &srv,
            "carol",
            json!({"name": name, "game": "goofspiel", "kind": "push", "dialect": "croupier", "url": url}),
        );
    }
    let (s, v) = root(
        &srv,
        Method::POST,
        "/v1/tournaments",
        Some(json!({
            "name": "cup", "game": "goofspiel", "variant": "jujitsu rounds=5",
            "format": "round-robin", "games_per_pairing": 1, "duplicate": false,
            "move_time_ms": 6000, "entries": ["victim", "other", "third"],
        })),
    );
    assert_eq!(s, 201, "{v}");
    let show = || -> Value {
        let (s, v) = v1(&srv, Method::GET, "/v1/tournaments/cup", None, None);
        assert_eq!(s, 200, "{v}");
        v
    };
    let plays = |g: &Value| g["seats"].as_array().unwrap().iter().any(|n| n == "victim");
    // Wait for the victim's first tournament game to be under way.
    let deadline = Instant::now() + Duration::from_secs(60);
    let in_progress = loop {
        let v = show();
        let running: Vec<Value> = v["games"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["status"] == "running" && plays(g))
            .cloned()
            .collect();
        if let Some(g) = running.first() {
            break g.clone();
        }
        assert!(Instant::now() < deadline, "the victim never played: {v}");
        std::thread::sleep(Duration::from_millis(10));
    };
    let (s, v) = root(
        &srv,
        Method::POST,
        "/v1/admin/bots/victim/ban",
        Some(json!({"reason": "collusion"})),
    );
    assert_eq!(s, 200, "{v}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let v = loop {
        let v = show();
        if v["tournament"]["status"] == "finished" {
            break v;
        }
        assert!(Instant::now() < deadline, "not finished: {v}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let entry = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "victim")
        .unwrap();
    assert_eq!(entry["withdrawn"], "banned: collusion", "{v}");
    let games = v["games"].as_array().unwrap();
    let victims: Vec<&Value> = games.iter().filter(|g| plays(g)).collect();
    // Its game in progress finished and counts; none of its others was
    // played (those of its round not dealt yet are void, later rounds
    // never paired it).
    let done: Vec<&&Value> = victims.iter().filter(|g| g["status"] == "done").collect();
    assert!(
        done.len() <= 2 && done.iter().any(|g| g["id"] == in_progress["id"]),
        "{v}"
    );
    let last_done = done.iter().map(|g| g["round"].as_i64().unwrap()).max();
    assert_eq!(last_done, in_progress["round"].as_i64(), "{v}");
    assert!(
        victims
            .iter()
            .all(|g| g["status"] == "done" || g["status"] == "void"),
        "{v}"
    );
    // The others played every game between them.
    assert!(
        games
            .iter()
            .filter(|g| !plays(g))
            .all(|g| g["status"] == "done"),
        "{v}"
    );
    let finished = with_store(&srv, async |s| {
        s.game(in_progress["id"].as_i64().unwrap())
            .await
            .unwrap()
            .unwrap()
    });
    assert_eq!(finished.status, "finished");
    assert!(finished.record.is_some());
}
