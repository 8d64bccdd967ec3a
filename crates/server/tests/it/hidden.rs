//! Issue 18, item 1: nothing hidden is shown before its time. A game is
//! played over the REST API; before every move, every page, JSON twin and
//! API endpoint an outsider or either bot can reach is fetched, and none may
//! show the game's seed or a card its requester may not see.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use common::{cards_of, legal_cards, TestServer};
use serde_json::{json, Value};

fn turn_of(sa: &Value, sb: &Value) -> usize {
    match (sa["your-turn"] == true, sb["your-turn"] == true) {
        (true, false) => 0,
        (false, true) => 1,
        _ => panic!("exactly one bot has your-turn: {sa} / {sb}"),
    }
}

/// The forms a seed may take in a reply.
fn seed_forms(seed: i64) -> Vec<String> {
    vec![
        seed.to_string(),
        (seed as u64).to_string(),
        format!("{:x}", seed as u64),
    ]
}

/// The stored seed of game `id` (read from the server's database).
fn stored_seed(db: &str, id: i64) -> i64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = croupier_store::open(db).await.unwrap();
        store.game(id).await.unwrap().unwrap().seed
    })
}

#[test]
fn no_page_twin_or_api_reply_shows_the_seed_or_hidden_cards_of_a_running_game() {
    let srv = TestServer::start();
    let bots = [srv.bot("hid-a"), srv.bot("hid-b")];
    let (ra, rb) = srv.pair(&bots[0], &bots[1]);
    let game = ra["game"].as_i64().unwrap();
    let seed = stored_seed(&srv.db, game);
    let seeds = seed_forms(seed);
    let mut hands = [cards_of(&ra), cards_of(&rb)];
    let (na, nb) = (bots[0].name.clone(), bots[1].name.clone());
    let public_paths: Vec<String> = [
        "/".to_string(),
        "/json/home".into(),
        "/games".into(),
        "/json/games".into(),
        format!("/games/{game}"),
        format!("/json/games/{game}"),
        format!("/games/{game}?step=1"),
        format!("/json/games/{game}?step=1"),
        "/activity".into(),
        "/json/activity".into(),
        "/bots".into(),
        "/json/bots".into(),
        format!("/bots/{na}"),
        format!("/json/bots/{nb}"),
        format!("/versus/{na}/{nb}"),
        format!("/json/versus/{na}/{nb}"),
        "/leaderboard/skullwhist".into(),
        "/json/leaderboard/skullwhist".into(),
        "/api/".into(),
    ]
    .into();
    let mut fetched = 0usize;
    let mut probe = |hands: &[Vec<String>; 2]| {
        // An outsider sees no unplayed card of either hand.
        let unplayed: Vec<&String> = hands.iter().flatten().collect();
        for path in &public_paths {
            let r = srv.get(path);
            fetched += 1;
            for s in &seeds {
                assert!(!r.body.contains(s.as_str()), "{path} shows the seed {s}");
            }
            for c in &unplayed {
                assert!(
                    !r.body.contains(c.as_str()),
                    "{path} shows the unplayed card {c}"
                );
            }
        }
        // Each bot sees its own cards and nothing else hidden.
        for (i, bot) in bots.iter().enumerate() {
            let replies = [
                srv.status(bot),
                srv.old_game(bot, game),
                srv.as_bot(bot, "new-game", Value::Null),
            ];
            for r in &replies {
                fetched += 1;
                let text = r.to_string();
                for s in &seeds {
                    assert!(!text.contains(s.as_str()), "a reply shows the seed: {r}");
                }
                for c in &hands[1 - i] {
                    assert!(!text.contains(c.as_str()), "a reply shows {c}: {r}");
                }
            }
        }
    };
    probe(&hands);
    srv.bid(&bots[0], json!(6));
    srv.bid(&bots[1], json!(7));
    for _round in 1..=13 {
        probe(&hands);
        let s = [srv.status(&bots[0]), srv.status(&bots[1])];
        let leader = turn_of(&s[0], &s[1]);
        let lead = hands[leader].last().unwrap().clone();
        srv.play(&bots[leader], &lead);
        hands[leader].retain(|c| *c != lead);
        probe(&hands);
        let follower = 1 - leader;
        let follow = legal_cards(&hands[follower], Some(&lead))[0].clone();
        srv.play(&bots[follower], &follow);
        hands[follower].retain(|c| *c != follow);
    }
    assert!(fetched > 500, "{fetched} fetches");
    // Once the game is over, its seed is public: the probe could have
    // seen it.
    let page = srv.get(&format!("/json/games/{game}"));
    assert!(
        page.body.contains(&format!("\"seed\":\"{}\"", seed as u64)),
        "the finished game shows its seed: {}",
        page.body
    );
}
