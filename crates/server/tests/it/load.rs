//! Many REST bots at once, and house bots: every game finishes, and every
//! stored record is consistent.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

/// Bots playing at once.
const BOTS: usize = 40;
/// Games each bot must finish.
const GAMES: usize = 3;

/// What one bot saw of one game.
#[derive(Debug)]
struct Seen {
    bot: i64,
    game: i64,
    opponent: i64,
    cards: Vec<String>,
    bid: i64,
    played: Vec<String>,
}

#[test]
fn many_concurrent_bots_finish_their_games_with_consistent_records() {
    let mut cfg = config();
    cfg.hub.poll_timeout = Duration::from_secs(1);
    let srv = TestServer::with_config(cfg);
    let api: &Api = &srv;
    let start = Instant::now();
    // bots that have finished their GAMES games; the others keep playing
    // until all have, so that nobody is left without a partner
    let done = AtomicUsize::new(0);
    let seen: Vec<Seen> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..BOTS)
            .map(|i| {
                let done = &done;
                s.spawn(move || {
                    let bot = api.bot("load");
                    let mut seen = Vec::new();
                    let mut counted = false;
                    loop {
                        if seen.len() >= GAMES && !counted {
                            done.fetch_add(1, Ordering::SeqCst);
                            counted = true;
                        }
                        if done.load(Ordering::SeqCst) == BOTS {
                            return seen;
                        }
                        assert!(
                            start.elapsed() < Duration::from_secs(60),
                            "bot {i} stuck after {} games",
                            seen.len()
                        );
                        let r = api.as_bot(&bot, "new-game", Value::Null);
                        if r["result"] == "retry" {
                            continue;
                        }
                        assert_success(&r, "new-game");
                        let cards = cards_of(&r);
                        let bid = 1 + (i + seen.len()) as i64 % 5;
                        let played = api.play_out(&bot, &cards, bid);
                        assert_eq!(played.len(), 13, "bot {} played 13 cards", bot.id);
                        seen.push(Seen {
                            bot: bot.id,
                            game: r["game"].as_i64().unwrap(),
                            opponent: r["opponent"].as_i64().unwrap(),
                            cards,
                            bid,
                            played,
                        });
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let elapsed = start.elapsed();

    // every game was seen by exactly its two players, consistently
    let mut by_game: BTreeMap<i64, Vec<&Seen>> = BTreeMap::new();
    for s in &seen {
        by_game.entry(s.game).or_default().push(s);
    }
    let bots: BTreeSet<i64> = seen.iter().map(|s| s.bot).collect();
    assert_eq!(bots.len(), BOTS);
    for b in &bots {
        let n = seen.iter().filter(|s| s.bot == *b).count();
        assert!(n >= GAMES, "bot {b} finished {n} games");
    }
    let viewer = Bot {
        id: 0,
        name: String::new(),
        password: String::new(),
        session: srv.bot("viewer").session,
    };
    for (game, views) in &by_game {
        assert_eq!(views.len(), 2, "game {game} has two players: {views:?}");
        let (x, y) = (views[0], views[1]);
        assert_eq!((x.opponent, y.opponent), (y.bot, x.bot), "game {game}");
        let g = srv.old_game(&viewer, *game);
        check_finished_record(&g);
        for v in [x, y] {
            let k = if g["bot1"] == v.bot { 1 } else { 2 };
            assert_eq!(g[format!("bid{k}")], v.bid, "game {game}");
            assert_eq!(g[format!("hand{k}")], json!(v.cards), "game {game}");
            let mine: Vec<&str> = g["rounds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    if r["leader"] == v.bot {
                        r["leader-card"].as_str().unwrap()
                    } else {
                        r["follower-card"].as_str().unwrap()
                    }
                })
                .collect();
            assert_eq!(
                mine, v.played,
                "game {game}: the cards bot {} played",
                v.bot
            );
        }
    }
    println!(
        "{} games by {BOTS} bots in {elapsed:?} ({:.1} games/s)",
        by_game.len(),
        by_game.len() as f64 / elapsed.as_secs_f64()
    );
}

#[test]
fn a_lone_bot_gets_a_house_bot_game_within_seconds_and_finishes_it() {
    let mut cfg = config();
    cfg.house_bots = vec!["random".into()];
    cfg.house_pause = Duration::from_millis(1);
    cfg.hub.poll_timeout = Duration::from_secs(10);
    let srv = TestServer::with_config(cfg);
    // the house bot is a registered bot that cannot log in
    let r = srv.call("register", json!({"name": "house-random", "password": "x"}));
    assert_failure(&r, "taken", "register the house bot's name");
    let r = srv.call(
        "login",
        json!({"name": "house-random", "password": "!house"}),
    );
    assert_failure(&r, "wrong name or password", "log in as the house bot");

    let bot = srv.bot("lone");
    for round in 0..2 {
        let start = Instant::now();
        let r = srv.as_bot(&bot, "new-game", Value::Null);
        let took = start.elapsed();
        assert_success(&r, "new-game against the house");
        assert!(
            took < Duration::from_secs(3),
            "a house bot is waiting: matched in {took:?}"
        );
        let game = r["game"].as_i64().unwrap();
        let house = r["opponent"].as_i64().unwrap();
        assert_ne!(house, bot.id);
        let played = srv.play_out(&bot, &cards_of(&r), 1 + round);
        assert_eq!(played.len(), 13);
        let g = srv.old_game(&bot, game);
        check_finished_record(&g);
        let ids = BTreeSet::from([g["bot1"].as_i64().unwrap(), g["bot2"].as_i64().unwrap()]);
        assert_eq!(ids, BTreeSet::from([bot.id, house]));
    }
}
