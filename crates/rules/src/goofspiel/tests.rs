use super::*;
use crate::core::Event as _;

fn game(v: GoofspielVariant, seed: u64) -> Goofspiel {
    Goofspiel::new(&v, 2, seed).unwrap()
}

fn current(g: &Goofspiel) -> u8 {
    g.observation(Seat(0)).current.unwrap()
}

fn bid(g: &mut Goofspiel, a: u8, b: u8) {
    g.apply(Seat(0), Bid(a)).unwrap();
    g.apply(Seat(1), Bid(b)).unwrap();
}

#[test]
fn higher_bid_takes_the_lot() {
    let mut g = game(GoofspielVariant::gops(), 1);
    let card = current(&g);
    bid(&mut g, 13, 1);
    assert_eq!(g.points(), [u32::from(card), 0]);
}

#[test]
fn tie_discards_the_card_under_gops() {
    let mut g = game(GoofspielVariant::gops(), 2);
    bid(&mut g, 5, 5);
    assert_eq!(g.points(), [0, 0]);
    assert_eq!(
        g.observation(Seat(0)).lot.len(),
        1,
        "only the new card is in the lot"
    );
}

#[test]
fn tie_carries_the_lot_under_jujitsu() {
    let mut g = game(GoofspielVariant::jujitsu(vec![13]), 3);
    let first = current(&g);
    bid(&mut g, 5, 5);
    let second = current(&g);
    assert_eq!(g.observation(Seat(1)).lot, vec![first, second]);
    bid(&mut g, 1, 9);
    assert_eq!(g.points(), [0, u32::from(first) + u32::from(second)]);
}

#[test]
fn preview_shows_the_next_card_only_when_enabled() {
    let j = game(GoofspielVariant::jujitsu(vec![13]), 4);
    let next = j.observation(Seat(0)).next.expect("jujitsu previews");
    let mut j2 = j.clone();
    bid(&mut j2, 1, 2);
    assert_eq!(current(&j2), next);
    let g = game(GoofspielVariant::gops(), 4);
    assert_eq!(g.observation(Seat(0)).next, None);
}

#[test]
fn unwon_lot_is_discarded_when_the_round_ends() {
    let v = GoofspielVariant::jujitsu(vec![3, 3]);
    let mut g = game(v, 5);
    for c in 1..=3 {
        bid(&mut g, c, c);
    }
    assert_eq!(g.points(), [0, 0]);
    let ev = g
        .events()
        .iter()
        .rev()
        .find(|e| matches!(e, GoofspielEvent::RoundEnd { .. }));
    assert_eq!(
        ev,
        Some(&GoofspielEvent::RoundEnd {
            points: [0, 0],
            discarded: 6
        })
    );
    let o = g.observation(Seat(0));
    assert_eq!(o.round, 1);
    assert_eq!(o.lot.len(), 1, "the new round starts with a fresh lot");
    assert_eq!(o.hand, vec![1, 2, 3], "hands are renewed each round");
}

#[test]
fn match_points_add_up_over_rounds() {
    let v = GoofspielVariant::jujitsu(vec![3, 4]);
    let mut g = game(v, 6);
    // round 1: seat 0 takes turn 1 (3>1), turn 2 ties (2=2) and carries,
    // seat 1 takes turns 2 and 3 together (1<3).
    for (a, b) in [(3, 1), (2, 2), (1, 3)] {
        bid(&mut g, a, b);
    }
    let r1 = g.observation(Seat(0)).history[0].clone();
    let first = u32::from(r1[0].drawn);
    assert_eq!(g.points(), [first, 6 - first]);
    // round 2: all ties; the carried lot is discarded at the end.
    for c in 1..=4 {
        bid(&mut g, c, c);
    }
    let o = g.outcome().unwrap();
    assert_eq!(o.scores, vec![i64::from(first), i64::from(6 - first)]);
}

#[test]
fn equal_points_are_a_draw() {
    let mut g = game(GoofspielVariant::gops(), 7);
    for c in 1..=13 {
        bid(&mut g, c, c);
    }
    let o = g.outcome().unwrap();
    assert_eq!(o.scores, vec![0, 0]);
    assert_eq!(o.ranks, vec![1, 1]);
}

#[test]
fn bid_of_a_card_not_held_is_refused_and_changes_nothing() {
    let mut g = game(GoofspielVariant::gops(), 8);
    bid(&mut g, 7, 8);
    let before = format!("{g:?}");
    assert!(matches!(
        g.apply(Seat(0), Bid(7)),
        Err(RuleError::Illegal(_))
    ));
    assert!(matches!(
        g.apply(Seat(0), Bid(14)),
        Err(RuleError::Illegal(_))
    ));
    assert!(matches!(
        g.apply(Seat(0), Bid(200)),
        Err(RuleError::Illegal(_))
    ));
    assert!(matches!(
        g.apply(Seat(2), Bid(1)),
        Err(RuleError::NoSuchSeat(_))
    ));
    assert_eq!(before, format!("{g:?}"));
}

#[test]
fn a_seat_cannot_bid_twice_in_one_turn() {
    let mut g = game(GoofspielVariant::gops(), 9);
    g.apply(Seat(0), Bid(3)).unwrap();
    assert_eq!(g.apply(Seat(0), Bid(4)), Err(RuleError::NotYourTurn));
    assert_eq!(g.to_act(), SeatSet::only(Seat(1)));
}

#[test]
fn sealed_bid_is_hidden_from_the_opponent() {
    let mut g = game(GoofspielVariant::gops(), 10);
    let before = g.observation(Seat(1));
    g.apply(Seat(0), Bid(12)).unwrap();
    let after = g.observation(Seat(1));
    assert!(after.opponent_has_bid);
    assert_eq!(
        after.opponent_hand, before.opponent_hand,
        "card stays in hand until reveal"
    );
    let sealed = g.events().last().unwrap();
    assert!(sealed.visible_to(Seat(0)) && !sealed.visible_to(Seat(1)));
}

#[test]
fn validate_parses_untrusted_text() {
    let g = game(GoofspielVariant::gops(), 11);
    assert_eq!(g.validate(Seat(0), " 5\n"), Ok(Bid(5)));
    assert_eq!(g.validate(Seat(0), "bid 6"), Ok(Bid(6)));
    assert!(matches!(
        g.validate(Seat(0), "five"),
        Err(RuleError::Malformed(_))
    ));
    assert!(matches!(
        g.validate(Seat(0), "-1"),
        Err(RuleError::Malformed(_))
    ));
    assert!(matches!(
        g.validate(Seat(0), "0"),
        Err(RuleError::Illegal(_))
    ));
}

#[test]
fn forfeit_ends_the_game_against_the_forfeiter() {
    let mut g = game(GoofspielVariant::gops(), 12);
    g.forfeit(Seat(1)).unwrap();
    assert!(g.to_act().is_empty());
    assert_eq!(g.outcome().unwrap().forfeited_by, Some(Seat(1)));
    assert_eq!(g.forfeit(Seat(0)), Err(RuleError::GameOver));
    assert_eq!(g.apply(Seat(0), Bid(1)), Err(RuleError::GameOver));
}

#[test]
fn only_two_players_are_accepted() {
    assert!(Goofspiel::new(&GoofspielVariant::gops(), 3, 0).is_err());
    let bad = GoofspielVariant {
        rounds: vec![],
        ..GoofspielVariant::gops()
    };
    assert!(Goofspiel::new(&bad, 2, 0).is_err());
}

#[test]
fn victory_cards_are_a_permutation_each_round() {
    let mut g = game(GoofspielVariant::jujitsu(vec![5, 13]), 13);
    let mut seen = Vec::new();
    for c in 1..=5 {
        seen.push(current(&g));
        bid(&mut g, c, 6 - c);
    }
    seen.sort_unstable();
    assert_eq!(seen, vec![1, 2, 3, 4, 5]);
}

#[test]
fn a_spectator_sees_no_sealed_bid() {
    let mut g = game(GoofspielVariant::gops(), 14);
    g.apply(Seat(0), Bid(4)).unwrap();
    assert_eq!(g.observation(Seat(0)).my_bid, Some(4));
    assert_eq!(g.observation(Seat(5)).my_bid, None);
}

#[test]
fn a_whole_game_fits_the_log_made_for_it() {
    for v in [GoofspielVariant::gops(), {
        let mut j = GoofspielVariant::gops();
        j.rounds = vec![5, 6, 7, 8];
        j
    }] {
        let mut g = Goofspiel::new(&v, 2, 3).unwrap();
        let room = g.events.capacity();
        let mut legal = Vec::new();
        while let Some(seat) = g.to_act().first() {
            legal.clear();
            g.legal_actions(seat, &mut legal);
            g.apply(seat, legal[legal.len() / 2]).unwrap();
        }
        assert!(g.outcome().is_some());
        assert_eq!(g.events.capacity(), room, "the log grew during the game");
    }
}
