use serde_json::json;

use super::*;

fn c(s: &str) -> Card {
    s.parse().unwrap()
}

fn cards(s: &str) -> Vec<Card> {
    s.split_whitespace().map(c).collect()
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

// --- API replies -----------------------------------------------------

fn reply(status: u16, body: &str) -> (u16, &[u8]) {
    (status, body.as_bytes())
}

fn parse(method: &str, (status, body): (u16, &[u8])) -> Result<Reply> {
    parse_reply(method, status, body)
}

#[test]
fn replies_are_success_retry_or_failure() {
    let r = parse(
        "login",
        reply(200, r#"{"result":"success","id":3,"session":"ab"}"#),
    );
    let Reply::Success(f) = r.unwrap() else {
        panic!()
    };
    assert_eq!(int_field(&f, "id").unwrap(), Some(3));
    assert!(!f.contains_key("result"));
    assert_eq!(
        parse(
            "new-game",
            reply(200, r#"{"result":"retry","reason":"wait"}"#)
        )
        .unwrap(),
        Reply::Retry("wait".into())
    );
    assert_eq!(
        parse("bid", reply(200, r#"{"result":"failure","reason":"no"}"#)).unwrap(),
        Reply::Failure("no".into())
    );
    for (status, body) in [
        (404, "<html>"),
        (200, "not json"),
        (200, "[1]"),
        (200, r#"{"result":"maybe"}"#),
    ] {
        assert!(parse("x", reply(status, body)).is_err(), "{status} {body}");
    }
}

#[test]
fn status_fields_are_read_including_nulls_and_numeric_strings() {
    let s = parse_status(&obj(json!({
        "game": 22, "round": "2", "your-turn": true, "opponent": 1,
        "opponent-bid": 10, "opponent-previous-card": "C04",
        "opponent-current-card": "H06", "you-won-previous-round": false,
    })))
    .unwrap();
    assert_eq!(
        s,
        Status {
            game: Some(22),
            round: Some(2),
            your_turn: true,
            opponent: Some(1),
            opponent_bid: Some(10),
            opponent_previous_card: Some(c("C04")),
            opponent_current_card: Some(c("H06")),
            you_won_previous_round: Some(false),
        }
    );
    let none = parse_status(&obj(json!({
        "game": null, "round": null, "your-turn": null, "opponent": null,
        "opponent-bid": null, "opponent-previous-card": null,
        "opponent-current-card": null, "you-won-previous-round": null,
    })))
    .unwrap();
    assert_eq!(none, Status::default());
    assert!(parse_status(&obj(json!({"game": 1, "opponent-current-card": "X99"}))).is_err());
    assert!(parse_status(&obj(json!({"game": 1, "your-turn": "yes"}))).is_err());
    assert!(parse_status(&obj(json!({"game": 1, "round": 300}))).is_err());
}

#[test]
fn new_game_cards_are_sorted_and_checked() {
    let hand = "S13 C01 C03 C05 C09 D01 D06 D10 H01 H08 H10 S02 S03";
    let list: Vec<&str> = hand.split_whitespace().collect();
    let got = parse_cards(&obj(json!({ "cards": list }))).unwrap();
    assert_eq!(got[0], c("C01"));
    assert_eq!(got[12], c("S13"));
    assert!(parse_cards(&obj(json!({"cards": ["C01", "C01"]}))).is_err());
    assert!(parse_cards(&obj(json!({"cards": "C01"}))).is_err());
    assert!(parse_cards(&obj(json!({}))).is_err());
}

// --- The view of a game ----------------------------------------------

#[test]
fn followers_must_follow_suit_when_they_can() {
    // The view's legal cards are the rules' own.
    let mut v = GameView::new(cards("C03 D06 H08 S02 C05 C07 C09 C11 C13 D02 D04 D08 D10"));
    v.record_bid(3);
    let mut s = Status {
        game: Some(1),
        round: Some(1),
        your_turn: true,
        opponent_bid: Some(4),
        opponent_current_card: Some(c("S13")),
        ..Status::default()
    };
    v.update(&s).unwrap();
    let (_, legal) = v.play_turn();
    assert_eq!(legal, [SkullWhistAction::Play(c("S02"))]);
    let mut v = GameView::new(cards("D06 H08 H01 H02 H03 H04 H05 H06 H07 H09 H10 H11 H12"));
    v.record_bid(3);
    s.opponent_current_card = Some(c("C04"));
    v.update(&s).unwrap();
    assert_eq!(v.play_turn().1.len(), 13);
}

fn status(round: u8, your_turn: bool) -> Status {
    Status {
        game: Some(22),
        round: Some(round),
        your_turn,
        opponent: Some(1),
        opponent_bid: Some(4),
        ..Status::default()
    }
}

const HAND: &str = "C01 C03 C05 C09 D01 D06 D10 H01 H08 H10 S02 S03 S12";

#[test]
fn the_view_rebuilds_observations_trick_by_trick() {
    let mut v = GameView::new(cards(HAND));
    let (obs, legal) = v.bid_turn();
    assert_eq!(
        (obs.phase, obs.to_act, legal.len()),
        (Phase::Bidding, true, 13)
    );
    v.record_bid(3);

    // Round 1: waiting for the opponent's bid, then it leads C04.
    let mut s = status(1, false);
    s.opponent_bid = None;
    v.update(&s).unwrap();
    let mut s = status(1, true);
    s.opponent_current_card = Some(c("C04"));
    v.update(&s).unwrap();
    v.update(&s).unwrap(); // polling again changes nothing
    let (obs, legal) = v.play_turn();
    assert_eq!(obs.trick, 1);
    assert_eq!(obs.leader, Some(OPPONENT));
    assert_eq!(obs.lead_card, Some(c("C04")));
    assert_eq!((obs.my_bid, obs.opponent_bid), (Some(3), Some(4)));
    assert_eq!(
        legal,
        cards("C01 C03 C05 C09")
            .into_iter()
            .map(SkullWhistAction::Play)
            .collect::<Vec<_>>()
    );
    // C05 beats C04: this bot leads round 2.
    v.record_play(c("C05")).unwrap();
    assert_eq!(v.history().len(), 1);

    let mut s = status(2, true);
    s.opponent_previous_card = Some(c("C04"));
    s.you_won_previous_round = Some(true);
    v.update(&s).unwrap();
    let (obs, legal) = v.play_turn();
    assert_eq!((obs.trick, obs.leader, obs.lead_card), (2, Some(ME), None));
    assert_eq!(obs.tricks_won, [1, 0]);
    assert_eq!(legal.len(), 12);
    assert_eq!(obs.hand.len(), 12);
    // Lead H08; the opponent trumps with S05 and leads D02 in round 3.
    v.record_play(c("H08")).unwrap();
    let mut s = status(2, false);
    s.opponent_previous_card = Some(c("C04"));
    s.you_won_previous_round = Some(true);
    v.update(&s).unwrap(); // not answered yet
    assert_eq!(v.history().len(), 1);
    let mut s = status(3, false);
    s.opponent_previous_card = Some(c("S05"));
    s.you_won_previous_round = Some(false);
    v.update(&s).unwrap();
    s.your_turn = true;
    s.opponent_current_card = Some(c("D02"));
    v.update(&s).unwrap();
    let (obs, _) = v.play_turn();
    assert_eq!(obs.trick, 3);
    assert_eq!(obs.tricks_won, [1, 1]);
    assert_eq!(
        obs.history,
        vec![
            Trick {
                leader: OPPONENT,
                lead: c("C04"),
                follow: c("C05"),
                winner: ME
            },
            Trick {
                leader: ME,
                lead: c("H08"),
                follow: c("S05"),
                winner: OPPONENT
            },
        ]
    );
    assert_eq!(
        (obs.leader, obs.lead_card),
        (Some(OPPONENT), Some(c("D02")))
    );

    // The events a local match would have shown, in order.
    let events = v.take_events();
    let text: Vec<String> = events.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        vec![
            format!("seat 0 is dealt {HAND}"),
            "seat 0 bids 3".into(),
            "bids are 3 and 4; seat 1 leads".into(),
            "seat 1 plays C04".into(),
            "seat 0 plays C05".into(),
            "trick 1 to seat 0".into(),
            "seat 0 plays H08".into(),
            "seat 1 plays S05".into(),
            "trick 2 to seat 1".into(),
            "seat 1 plays D02".into(),
        ]
    );
    assert!(v.take_events().is_empty());
}

#[test]
fn the_view_matches_the_rules_engine_over_whole_games() {
    // Play random games in the engine; feed this bot's (seat 0's) view
    // the statuses the server would send and compare observations.
    use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
    use croupier_rules::{Event as _, Game};
    // A fixed pseudo-random choice among the legal actions.
    fn pick(legal: &[SkullWhistAction], state: &mut u64) -> SkullWhistAction {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        legal[(*state >> 33) as usize % legal.len()]
    }
    for seed in 0..40u64 {
        let mut g = SkullWhist::new(&SkullWhistVariant {}, 2, seed).unwrap();
        let mut rng = seed;
        let mut view = GameView::new(g.observation(ME).hand);
        for seat in [ME, OPPONENT] {
            let legal = g.legal_vec(seat);
            let a = pick(&legal, &mut rng);
            g.apply(seat, a).unwrap();
            if let (SkullWhistAction::Bid(n), true) = (a, seat == ME) {
                view.record_bid(n);
            }
        }
        while !g.is_over() {
            let seat = g.to_act().first().unwrap();
            let obs = g.observation(ME);
            let hist = g.history();
            let status = Status {
                game: Some(1),
                round: Some(hist.len() as u8 + 1),
                your_turn: seat == ME,
                opponent: Some(2),
                opponent_bid: obs.opponent_bid,
                opponent_previous_card: hist.last().map(|t| {
                    if t.leader == OPPONENT {
                        t.lead
                    } else {
                        t.follow
                    }
                }),
                opponent_current_card: obs.lead_card.filter(|_| obs.leader == Some(OPPONENT)),
                you_won_previous_round: hist.last().map(|t| t.winner == ME),
            };
            view.update(&status).unwrap();
            let legal = g.legal_vec(seat);
            if seat == ME {
                let (mine, my_legal) = view.play_turn();
                assert_eq!(mine, obs, "seed {seed}");
                assert_eq!(my_legal, legal, "seed {seed}");
            }
            let a = pick(&legal, &mut rng);
            g.apply(seat, a).unwrap();
            if let (SkullWhistAction::Play(card), true) = (a, seat == ME) {
                view.record_play(card).unwrap();
            }
        }
        // The server's record completes a last trick that this bot led.
        let bots = [7i64, 9];
        let scores = g.outcome().unwrap().scores;
        let rounds: Vec<Value> = g
            .history()
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"round": i + 1, "follower-card": t.follow.to_string()}))
            .collect();
        let record = obj(json!({
            "bot1": bots[0], "bot2": bots[1],
            "score1": scores[0], "score2": scores[1],
            "tricks1": g.tricks_won()[0], "tricks2": g.tricks_won()[1],
            "forfeited_by": null, "rounds": rounds,
        }));
        let result = view.finish(&record, 7).unwrap();
        assert_eq!(view.history(), g.history(), "seed {seed}");
        assert_eq!(
            result,
            GameResult::Scored {
                mine: scores[0],
                theirs: scores[1],
                tricks: g.tricks_won()[0]
            }
        );
        // Every public event of the engine, in the engine's order.
        let expected: Vec<SkullWhistEvent> = g
            .events()
            .iter()
            .filter(|e| e.visible_to(ME))
            .cloned()
            .collect();
        assert_eq!(view.take_events(), expected, "seed {seed}");
    }
}

#[test]
fn the_view_refuses_a_server_that_disagrees() {
    let mut v = GameView::new(cards(HAND));
    v.record_bid(2);
    // Round 2 before this bot played in round 1.
    assert!(v.update(&status(2, true)).is_err());

    let mut v = GameView::new(cards(HAND));
    v.record_bid(2);
    v.update(&status(1, true)).unwrap();
    v.record_play(c("H10")).unwrap();
    // It is "our turn" again in round 1.
    assert!(v.clone().update(&status(1, true)).is_err());
    // Round 2 without the opponent's card.
    assert!(v.clone().update(&status(2, true)).is_err());
    // The opponent answered H09 (H10 wins) but the server says we lost.
    let mut s = status(2, true);
    s.opponent_previous_card = Some(c("H09"));
    s.you_won_previous_round = Some(false);
    let e = v.clone().update(&s).unwrap_err();
    assert!(e.to_string().contains("by the rules"), "{e}");
    // Skipping a round.
    let mut s = status(3, true);
    s.opponent_previous_card = Some(c("H09"));
    assert!(v.clone().update(&s).is_err());
    // A card that is not in hand.
    assert!(v.record_play(c("S13")).is_err());
}

/// Caught by the `bot_skullwhist` fuzz target's check: after 13 tricks a server
/// said it was the bot's turn in "round 14", and the bot asked its strategy
/// to choose among no cards (the random strategy panicked).
#[test]
fn the_view_refuses_a_turn_after_the_last_card() {
    let mut v = GameView::new(cards(HAND));
    v.record_bid(2);
    for round in 1..=14u8 {
        let mut s = status(round, true);
        if round > 1 {
            s.opponent_previous_card = Some(c("C02"));
        }
        let updated = v.update(&s);
        if round == 14 {
            let e = updated.unwrap_err();
            assert!(e.to_string().contains("played all its cards"), "{e}");
            return;
        }
        updated.unwrap();
        let (_, legal) = v.play_turn();
        let Some(SkullWhistAction::Play(card)) = legal.first().copied() else {
            panic!("no legal card in round {round}");
        };
        v.record_play(card).unwrap();
    }
    unreachable!("round 14 returns");
}

#[test]
fn results_are_tallied_from_old_game() {
    let mut v = GameView::new(cards(HAND));
    let record = obj(json!({
        "bot1": 1, "bot2": 3, "score1": -100, "score2": 35,
        "tricks1": 5, "tricks2": 8, "forfeited_by": null, "rounds": [],
    }));
    let r = v.finish(&record, 3).unwrap();
    assert_eq!(
        r,
        GameResult::Scored {
            mine: 35,
            theirs: -100,
            tricks: 8
        }
    );
    assert_eq!(r.to_string(), "took 8 tricks, 35 to -100: won");

    let forfeit = obj(json!({
        "bot1": 1, "bot2": 3, "score1": null, "score2": null,
        "forfeited_by": 3, "rounds": [],
    }));
    let f = GameView::new(cards(HAND)).finish(&forfeit, 3).unwrap();
    assert_eq!(f, GameResult::Forfeit { by_me: true });
    let f = GameView::new(cards(HAND)).finish(&forfeit, 1).unwrap();
    assert_eq!(f, GameResult::Forfeit { by_me: false });
    assert_eq!(f.to_string(), "forfeited by the opponent: won");
    assert!(GameView::new(cards(HAND)).finish(&record, 99).is_err());
}
