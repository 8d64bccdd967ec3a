//! The server's clocks over real HTTP, with short limits: the new-game long
//! poll, matchmaking latency, session expiry, and move timeouts that run
//! from the moment a bot became due, whatever else it requests meanwhile.
//!
//! Timings have generous margins (the sweep runs every 100 ms, the machine
//! may be small and busy): a move limit of 1 s is checked as "not before
//! 0.9 s after the bot was due, and by 3 s".

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

fn clock_config(poll: f64, moves: f64, idle: f64) -> croupier_server::ServerConfig {
    let mut c = config();
    c.hub.poll_timeout = Duration::from_secs_f64(poll);
    c.hub.move_timeout = Duration::from_secs_f64(moves);
    c.hub.session_idle = Duration::from_secs_f64(idle);
    c
}

/// Polls `bot`'s status every 100 ms until it is all null (its game ended);
/// returns how long that took. Fails after `limit`.
fn status_until_out_of_game(srv: &Api, bot: &Bot, limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        let s = srv.status(bot);
        if s["game"].is_null() {
            assert_all_null(&s);
            return start.elapsed();
        }
        assert!(
            start.elapsed() < limit,
            "still in game {} after {limit:?}",
            s["game"]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Polls `bot`'s status every 100 ms for `d`, checking it stays in `game`.
fn status_for(srv: &Api, bot: &Bot, game: i64, d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        let s = srv.status(bot);
        assert_eq!(s["game"], game, "still in the game: {s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn new_game_answers_retry_after_the_poll_timeout() {
    let srv = TestServer::with_config(clock_config(1.0, 60.0, 60.0));
    let bot = srv.bot("lonely");
    for _ in 0..2 {
        let start = Instant::now();
        let r = srv.as_bot(&bot, "new-game", Value::Null);
        let took = start.elapsed();
        assert_eq!(r["result"], "retry", "{r}");
        assert!(r["reason"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(3),
            "retry after about the poll timeout (1 s), took {took:?}"
        );
    }
    // the bot is still fine
    assert_all_null(&srv.status(&bot));
}

#[test]
fn a_waiting_bot_is_matched_as_soon_as_a_partner_arrives() {
    let srv = TestServer::with_config(clock_config(10.0, 60.0, 60.0));
    let (a, b) = (srv.bot("early"), srv.bot("late"));
    let (ra, rb, took_a, took_b) = std::thread::scope(|s| {
        let t = s.spawn(|| {
            let start = Instant::now();
            let r = srv.as_bot(&a, "new-game", Value::Null);
            (r, start.elapsed())
        });
        std::thread::sleep(Duration::from_millis(500));
        let start = Instant::now();
        let rb = srv.as_bot(&b, "new-game", Value::Null);
        let took_b = start.elapsed();
        let (ra, took_a) = t.join().unwrap();
        (ra, rb, took_a, took_b)
    });
    assert_success(&ra, "the waiting bot");
    assert_success(&rb, "the partner");
    assert_eq!(ra["game"], rb["game"]);
    assert_eq!(ra["opponent"], b.id);
    assert_eq!(rb["opponent"], a.id);
    assert!(
        took_b < Duration::from_secs(1),
        "the partner is matched at once (took {took_b:?}; poll timeout 10 s)"
    );
    assert!(
        took_a < Duration::from_millis(2500),
        "the waiting bot is released as soon as the partner comes (took {took_a:?} \
         for a partner arriving after 0.5 s; poll timeout 10 s)"
    );
}

#[test]
fn an_expired_session_is_refused_as_expired() {
    let srv = TestServer::with_config(clock_config(1.0, 60.0, 1.0));
    let bot = srv.bot("idle");
    assert_all_null(&srv.status(&bot));
    std::thread::sleep(Duration::from_millis(1600));
    let r = srv.as_bot(&bot, "status", Value::Null);
    assert_failure(&r, "expired", "status after 1.6 s idle (limit 1 s)");
}

#[test]
fn a_session_expires_after_the_idle_time_unless_used() {
    let srv = TestServer::with_config(clock_config(1.0, 60.0, 1.0));
    let (idle, busy) = (srv.bot("idle"), srv.bot("busy"));
    // `busy` makes a request every 300 ms for 2 s: its session lives on
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        assert_all_null(&srv.status(&busy));
        std::thread::sleep(Duration::from_millis(300));
    }
    // `idle` made none for 2 s: refused (as expired or unknown)
    for method in ["status", "new-game", "bid", "play", "old-game"] {
        let r = srv.as_bot(&idle, method, json!({"bid": 1, "card": "H05", "game": 1}));
        assert_failure(
            &r,
            "session",
            &format!("{method} after 2 s idle (limit 1 s)"),
        );
        let reason = r["reason"].as_str().unwrap();
        assert!(
            reason.contains("expired") || reason.contains("unknown"),
            "{r}"
        );
    }
    // logging in again works
    let (session, _) = srv.login(&idle.name, &idle.password);
    assert_all_null(&srv.status(&Bot { session, ..idle }));
}

#[test]
fn a_bot_that_does_not_bid_forfeits_even_while_polling_status() {
    let srv = TestServer::with_config(clock_config(5.0, 1.0, 60.0));
    let (a, b) = (srv.bot("silent"), srv.bot("prompt"));
    let (ra, _) = srv.pair(&a, &b);
    let dealt = Instant::now();
    let game = ra["game"].as_i64().unwrap();
    srv.bid(&b, json!(3));
    // A keeps asking for its status (and its game) but never bids
    status_for(&srv, &a, game, Duration::from_millis(500));
    assert_eq!(srv.as_bot(&a, "new-game", Value::Null), ra);
    let _ = status_until_out_of_game(&srv, &a, Duration::from_secs(4));
    let took = dealt.elapsed();
    assert!(
        took > Duration::from_millis(900) && took < Duration::from_secs(3),
        "forfeit about 1 s after the deal, took {took:?}"
    );
    assert_all_null(&srv.status(&b));
    let g = srv.old_game(&b, game);
    assert_success(&g, "old-game of the forfeited game");
    assert_eq!(g["forfeited_by"], a.id, "{g}");
    assert!(g["score1"].is_null() && g["score2"].is_null(), "{g}");
    // both are released
    let (rb, _) = srv.pair(&b, &a);
    assert_ne!(rb["game"], game);
}

#[test]
fn a_bot_that_does_not_play_forfeits_from_when_its_turn_began() {
    let srv = TestServer::with_config(clock_config(5.0, 1.5, 60.0));
    let bots = [srv.bot("a"), srv.bot("b")];
    let (ra, rb) = srv.pair(&bots[0], &bots[1]);
    let game = ra["game"].as_i64().unwrap();
    let mut hands = [cards_of(&ra), cards_of(&rb)];
    srv.bid(&bots[0], json!(2));
    srv.bid(&bots[1], json!(2));
    let s = [srv.status(&bots[0]), srv.status(&bots[1])];
    let leader = usize::from(s[1]["your-turn"] == true);
    assert_eq!(s[leader]["your-turn"], true);

    // Trick 1 is slow but within the limit (1.5 s) for each bot: the leader
    // thinks 0.8 s, then the follower 0.8 s (1.6 s after the bids in all).
    status_for(&srv, &bots[leader], game, Duration::from_millis(800));
    let lead = hands[leader][0].clone();
    srv.play(&bots[leader], &lead);
    hands[leader].retain(|c| *c != lead);
    let follower = 1 - leader;
    status_for(&srv, &bots[follower], game, Duration::from_millis(800));
    let follow = legal_cards(&hands[follower], Some(&lead))[0].clone();
    srv.play(&bots[follower], &follow);
    let turn_began = Instant::now();
    let next = if leader_wins(&lead, &follow) {
        leader
    } else {
        follower
    };

    // The winner of trick 1 must lead trick 2, keeps asking for its status,
    // and never plays: it forfeits about 1.5 s after its turn began.
    let sn = srv.status(&bots[next]);
    assert_eq!(
        (sn["round"].clone(), sn["your-turn"].clone()),
        (json!(2), json!(true))
    );
    let _ = status_until_out_of_game(&srv, &bots[next], Duration::from_secs(5));
    let took = turn_began.elapsed();
    assert!(
        took > Duration::from_millis(1400) && took < Duration::from_secs(4),
        "forfeit about 1.5 s after the turn began, took {took:?}"
    );
    assert_all_null(&srv.status(&bots[1 - next]));
    let g = srv.old_game(&bots[1 - next], game);
    assert_success(&g, "old-game");
    assert_eq!(g["forfeited_by"], bots[next].id, "{g}");
    assert_eq!(g["rounds"].as_array().unwrap().len(), 1, "{g}");
}

#[test]
fn only_the_due_bot_forfeits_when_both_are_silent() {
    // The bot that is not due may be silent for any time: only the due bot's
    // clock runs. B bids, then waits 2.5 s while A, due to lead, is silent.
    let srv = TestServer::with_config(clock_config(5.0, 1.0, 60.0));
    let bots = [srv.bot("a"), srv.bot("b")];
    let (ra, _) = srv.pair(&bots[0], &bots[1]);
    let game = ra["game"].as_i64().unwrap();
    srv.bid(&bots[0], json!(1));
    srv.bid(&bots[1], json!(1));
    let s0 = srv.status(&bots[0]);
    let due = usize::from(s0["your-turn"] != true);
    std::thread::sleep(Duration::from_millis(2500));
    let g = srv.old_game(&bots[0], game);
    assert_success(&g, "old-game");
    assert_eq!(g["forfeited_by"], bots[due].id, "{g}");
}

#[test]
fn default_limits_are_those_of_the_spec() {
    let c = croupier_server::ServerConfig::default();
    assert_eq!(c.hub.session_idle, Duration::from_secs(300), "5 minutes");
    assert_eq!(c.hub.move_timeout, Duration::from_secs(120), "120 s");
    assert_eq!(c.hub.poll_timeout, Duration::from_secs(30), "about 30 s");
}
