//! Issues 11 and 20: a seat's `status` reply is written once per move by
//! the game's runner and served from that copy to every poll. The copy must
//! follow the game (after every move each seat's reply is what the game
//! says now, never a stale one) and belongs to its seat alone (no seat ever
//! sees a card the other has not played).

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use common::{cards_of, leader_wins, legal_cards, Api, Bot, TestServer};
use serde_json::{json, Value};

/// What the test knows of the game, to tell each seat's status.
struct Table {
    game: Value,
    ids: [i64; 2],
    bids: [Option<i64>; 2],
    /// Trick number from 1.
    round: u64,
    /// Who leads the current trick (known once both have bid).
    leader: Option<usize>,
    /// The card led to the current trick.
    lead: Option<String>,
    /// The previous trick: (leader, lead, follow, winner).
    previous: Option<(usize, String, String, usize)>,
    /// Cards each seat has played (public once played).
    played: [Vec<String>; 2],
}

impl Table {
    /// The status seat `i` must get now.
    fn expected(&self, i: usize) -> Value {
        let both = self.bids.iter().all(Option::is_some);
        let turn = match (self.leader, &self.lead) {
            (Some(l), None) => l == i,
            (Some(l), Some(_)) => l != i,
            (None, _) => false,
        };
        let current = match (self.leader, &self.lead) {
            (Some(l), Some(c)) if l != i => json!(c),
            _ => Value::Null,
        };
        let (previous, won) = match &self.previous {
            None => (Value::Null, Value::Null),
            Some((l, lead, follow, w)) => {
                let theirs = if *l == i { follow } else { lead };
                (json!(theirs), json!(*w == i))
            }
        };
        json!({
            "result": "success",
            "game": self.game,
            "round": self.round,
            "your-turn": turn,
            "opponent": self.ids[1 - i],
            "opponent-bid": if both { json!(self.bids[1 - i]) } else { Value::Null },
            "opponent-previous-card": previous,
            "opponent-current-card": current,
            "you-won-previous-round": won,
        })
    }
}

/// Every card a status shows.
fn cards_in(status: &Value) -> Vec<String> {
    ["opponent-previous-card", "opponent-current-card"]
        .iter()
        .filter_map(|k| status[*k].as_str().map(str::to_string))
        .collect()
}

/// Polls both seats (twice: the second poll is served from the same copy)
/// and checks each against the table and against the other's hand.
fn check(api: &Api, bots: [&Bot; 2], t: &Table, hands: &[Vec<String>; 2], when: &str) {
    for i in 0..2 {
        for poll in 0..2 {
            let s = api.status(bots[i]);
            assert_eq!(s, t.expected(i), "seat {i} {when} (poll {poll})");
            for c in cards_in(&s) {
                assert!(
                    t.played[1 - i].contains(&c),
                    "seat {i} {when}: sees {c}, which its opponent has not played"
                );
                assert!(!hands[i].contains(&c), "seat {i} {when}: its own card {c}");
            }
        }
    }
}

#[test]
fn each_seats_status_follows_every_move_and_shows_no_unplayed_card() {
    let server = TestServer::start();
    let (a, b) = (server.bot("views"), server.bot("views"));
    let (ra, rb) = server.pair(&a, &b);
    let bots = [&a, &b];
    let dealt = [cards_of(&ra), cards_of(&rb)];
    let mut hands = dealt.clone();
    let mut t = Table {
        game: ra["game"].clone(),
        ids: [a.id, b.id],
        bids: [None, None],
        round: 1,
        leader: None,
        lead: None,
        previous: None,
        played: [Vec::new(), Vec::new()],
    };
    check(&server, bots, &t, &hands, "at the deal");
    server.bid(&a, json!(3));
    t.bids[0] = Some(3);
    check(&server, bots, &t, &hands, "after the first bid");
    server.bid(&b, json!(5));
    t.bids[1] = Some(5);
    // The first leader is the server's to tell (the deal's).
    let first = server.status(&a)["your-turn"] == true;
    t.leader = Some(if first { 0 } else { 1 });
    check(&server, bots, &t, &hands, "after both bids");
    for trick in 1..=13 {
        let l = t.leader.unwrap();
        let f = 1 - l;
        let lead = legal_cards(&hands[l], None)[0].clone();
        server.play(bots[l], &lead);
        hands[l].retain(|c| *c != lead);
        t.played[l].push(lead.clone());
        t.lead = Some(lead.clone());
        check(
            &server,
            bots,
            &t,
            &hands,
            &format!("after the lead of trick {trick}"),
        );
        let follow = legal_cards(&hands[f], Some(&lead))[0].clone();
        server.play(bots[f], &follow);
        hands[f].retain(|c| *c != follow);
        t.played[f].push(follow.clone());
        let winner = if leader_wins(&lead, &follow) { l } else { f };
        if trick == 13 {
            break;
        }
        t.previous = Some((l, lead, follow, winner));
        t.lead = None;
        t.leader = Some(winner);
        t.round += 1;
        check(&server, bots, &t, &hands, &format!("after trick {trick}"));
    }
    // Over: each seat is told it is in no game.
    for bot in bots {
        common::assert_all_null(&server.status(bot));
    }
    assert!(hands.iter().all(Vec::is_empty));
    assert_eq!(t.played[0].len() + t.played[1].len(), 26);
    assert_ne!(dealt[0], dealt[1]);
}
