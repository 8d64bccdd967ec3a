//! Issue 16, item 3, for the SkullWhist REST games of the 2014 API: a game
//! two REST clients play is listed on the live page while it runs, and its
//! event stream carries exactly the events both seats may see (checked
//! against the stored record), never a card still in a hand.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use std::io::{BufRead, BufReader};
use std::time::Duration;

use common::{cards_of, legal_cards, TestServer};
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Event, Game, Record, Seat};
use serde_json::{json, Value};

fn turn_of(sa: &Value, sb: &Value) -> usize {
    match (sa["your-turn"] == true, sb["your-turn"] == true) {
        (true, false) => 0,
        (false, true) => 1,
        _ => panic!("exactly one bot has your-turn: {sa} / {sb}"),
    }
}

/// The events of a finished record that every seat may see.
fn public_events(record: &Record) -> Vec<String> {
    let g: SkullWhist = record.verify::<SkullWhist>().unwrap();
    g.events()
        .iter()
        .filter(|e| (0..2).all(|s| e.visible_to(Seat(s))))
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_rest_game_is_live_and_its_stream_shows_only_public_events() {
    let srv = TestServer::start();
    let bots = [srv.bot("live-a"), srv.bot("live-b")];
    let (ra, rb) = srv.pair(&bots[0], &bots[1]);
    let game = ra["game"].as_i64().unwrap();
    let mut hands = [cards_of(&ra), cards_of(&rb)];

    // Listed while it runs, on the page and its JSON twin (the game's task
    // opens its live entry right after the deal).
    let link = format!("/live/{game}");
    let mut list = srv.get("/live");
    for _ in 0..50 {
        if list.body.contains(&link) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        list = srv.get("/live");
    }
    assert!(list.body.contains(&link), "{}", list.body);
    let twin = srv.get("/json/live");
    assert!(twin.body.contains(&bots[0].name), "{}", twin.body);

    let url = format!("{}/v1/games/{game}/events", srv.api.base);
    let reader = std::thread::spawn(move || {
        let r = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .unwrap()
            .get(url)
            .send()
            .unwrap();
        assert_eq!(r.headers()["content-type"], "application/x-ndjson");
        let mut out: Vec<Value> = Vec::new();
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
    srv.bid(&bots[0], json!(5));
    srv.bid(&bots[1], json!(8));
    for _round in 1..=13 {
        let s = [srv.status(&bots[0]), srv.status(&bots[1])];
        let leader = turn_of(&s[0], &s[1]);
        let lead = hands[leader].last().unwrap().clone();
        srv.play(&bots[leader], &lead);
        hands[leader].retain(|c| *c != lead);
        let follower = 1 - leader;
        let follow = legal_cards(&hands[follower], Some(&lead))[0].clone();
        srv.play(&bots[follower], &follow);
        hands[follower].retain(|c| *c != follow);
    }
    let got = reader.join().unwrap();
    assert_eq!(got[0]["type"], "start");
    assert_eq!(got.last().unwrap()["type"], "end");
    assert_eq!(got.last().unwrap()["status"], "finished");
    let texts: Vec<String> = got
        .iter()
        .filter(|m| m["type"] == "event")
        .map(|m| m["text"].as_str().unwrap().to_string())
        .collect();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let record: Record = rt.block_on(async {
        let store = croupier_store::open(&srv.db).await.unwrap();
        let row = store.game(game).await.unwrap().unwrap();
        serde_json::from_str(row.record.as_deref().unwrap()).unwrap()
    });
    let public = public_events(&record);
    assert!(public.len() > 26, "{} public events", public.len());
    assert_eq!(texts, public);
    // The deal itself (each seat's hand) is never on the stream.
    let dealt: Vec<String> = record
        .verify::<SkullWhist>()
        .unwrap()
        .events()
        .iter()
        .filter(|e| !(0..2).all(|s| e.visible_to(Seat(s))))
        .map(ToString::to_string)
        .collect();
    assert!(!dealt.is_empty());
    for hidden in &dealt {
        assert!(!texts.contains(hidden), "the stream shows {hidden}");
    }
}
