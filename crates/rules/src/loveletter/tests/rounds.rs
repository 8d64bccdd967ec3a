//! Rounds, the match, forfeits, observations and the log.

use super::*;

#[test]
fn two_three_and_four_players_supported() {
    let v = LoveLetterVariant::default();
    for seats in [2, 3, 4] {
        let g = LoveLetter::new(&v, seats, 1).expect("supported");
        assert_eq!(g.num_seats(), seats);
        assert_eq!(g.to_act().len(), 1);
    }
    for seats in [0, 1, 5, 8] {
        assert!(matches!(
            LoveLetter::new(&v, seats, 1),
            Err(SetupError::SeatCount { given, .. }) if given == seats
        ));
    }
    assert_eq!(LoveLetter::NAME, "loveletter");
    assert_eq!(LoveLetter::RULES_VERSION, 2);
    assert_eq!(LoveLetterVariant::parse("standard"), Ok(v));
}

#[test]
fn round_sets_one_card_aside_and_deals_one_each_in_turn_order() {
    let g = rigged(3, 1, &[Princess, Soldier, Clown, Knight, Wizard]);
    assert_eq!(
        g.events(),
        &[
            LoveLetterEvent::RoundStart {
                round: 0,
                first: Seat(1)
            },
            draw(1, Soldier),
            draw(2, Clown),
            draw(0, Knight),
            turn(1),
            draw(1, Wizard),
        ]
    );
    assert_eq!(g.set_aside, Some(Princess));
    assert_eq!(hand(&g, 1), vec![Soldier, Wizard]);
    assert_eq!(hand(&g, 0), vec![Knight]);
    let o = g.observation(Seat(0));
    assert_eq!(o.deck, 16 - 1 - 3 - 1);
    assert_eq!(o.to_act, Some(Seat(1)));
    assert_eq!(o.first, Seat(1));
}

#[test]
fn first_player_of_the_match_is_random() {
    let v = LoveLetterVariant::default();
    let mut firsts = [0; 4];
    for seed in 0..200 {
        let g = LoveLetter::new(&v, 4, seed).expect("4 seats");
        firsts[g.observation(Seat(0)).first.index()] += 1;
    }
    assert!(firsts.iter().all(|n| *n > 20), "{firsts:?}");
}

#[test]
fn seed_example_produces_the_seed_message_order() {
    // Seed 001's example, with players 1..4 as seats 0..3.
    let mut g = rigged(
        4,
        0,
        &[
            Soldier, Soldier, Wizard, Princess, Knight, Minister, Clown, Priestess,
        ],
    );
    let start = g.events().len() - 2;
    act(&mut g, 0, "play soldier 1 princess");
    act(&mut g, 1, "play wizard 2");
    act(&mut g, 3, "play knight 0");
    assert_eq!(
        since(&g, start),
        vec![
            turn(0),
            draw(0, Minister),
            played(0, Soldier, Some(1), Some(Princess)),
            turn(1),
            draw(1, Clown),
            played(1, Wizard, Some(2), None),
            LoveLetterEvent::Discard {
                seat: Seat(2),
                card: Princess
            },
            out(2, &[]),
            turn(3),
            draw(3, Priestess),
            played(3, Knight, Some(0), None),
            reveal(0, 3, Priestess),
            reveal(3, 0, Minister),
            out(3, &[Priestess]),
            turn(0),
            draw(0, Soldier),
        ]
    );
}

#[test]
fn round_ends_when_the_deck_runs_out_and_the_highest_card_wins() {
    let mut g = rigged(3, 0, &[Soldier, Priestess, General, Clown, Knight]);
    drain_deck_into(&mut g, 2);
    let n = g.events().len();
    act(&mut g, 0, "play knight 2");
    let ev = since(&g, n);
    assert_eq!(ev[3], out(2, &[Clown]));
    assert_eq!(
        ev[4],
        LoveLetterEvent::RoundEnd {
            winner: Seat(1),
            hands: RoundHands::of(&[(Seat(0), Priestess), (Seat(1), General)]).unwrap()
        }
    );
    assert_eq!(g.wins(), &[0, 1, 0]);
    assert_eq!(
        ev[5],
        LoveLetterEvent::RoundStart {
            round: 1,
            first: Seat(1)
        }
    );
}

#[test]
fn round_ends_when_only_one_player_is_left() {
    let mut g = rigged(2, 0, &[Soldier, Soldier, Wizard, Clown]);
    let n = g.events().len();
    act(&mut g, 0, "play soldier 1 wizard");
    let ev = since(&g, n);
    assert_eq!(ev[1], out(1, &[Wizard]));
    assert_eq!(
        ev[2],
        LoveLetterEvent::RoundEnd {
            winner: Seat(0),
            hands: RoundHands::of(&[(Seat(0), Clown)]).unwrap()
        }
    );
    assert_eq!(g.wins(), &[1, 0]);
}

#[test]
fn cards_a_wizard_discarded_do_not_count_as_played_in_the_tie_break() {
    let mut g = rigged(3, 0, &[]);
    for i in 0..3 {
        g.hands[i] = Hand::EMPTY;
        g.played[i] = Pile::EMPTY;
        g.played_value[i] = 0;
    }
    g.hands[0].push(Knight);
    g.hands[1].push(Knight);
    g.hands[2].push(Clown);
    // Seat 0 played a clown (2); seat 1 played a soldier (1) and was made to
    // discard a general (6) by a wizard: only the soldier counts.
    g.lay_played(0, Clown);
    g.lay_played(1, Soldier);
    g.played[1].push(General);
    g.end_round();
    let winner = g.events().iter().find_map(|e| match e {
        LoveLetterEvent::RoundEnd { winner, .. } => Some(*winner),
        _ => None,
    });
    assert_eq!(winner, Some(Seat(0)));
}

#[test]
fn round_tie_broken_by_played_total_then_turn_order() {
    fn winner(first: u8, hands: [Card; 3], played: [&[Card]; 3]) -> Seat {
        let mut g = rigged(3, first, &[]);
        for i in 0..3 {
            g.hands[i] = Hand::EMPTY;
            g.hands[i].push(hands[i]);
            g.played[i] = Pile::EMPTY;
            g.played_value[i] = 0;
            played[i].iter().for_each(|c| g.lay_played(i, *c));
        }
        g.end_round();
        let end = g
            .events()
            .iter()
            .find(|e| matches!(e, LoveLetterEvent::RoundEnd { .. }));
        match end {
            Some(LoveLetterEvent::RoundEnd { winner, .. }) => *winner,
            _ => panic!("no round end"),
        }
    }
    // The highest card wins, whatever was played.
    assert_eq!(
        winner(0, [Knight, Wizard, Clown], [&[General], &[], &[]]),
        Seat(1)
    );
    // Equal cards: the higher played total wins.
    assert_eq!(
        winner(0, [Knight, Knight, Clown], [&[Soldier], &[Clown], &[]]),
        Seat(1)
    );
    assert_eq!(
        winner(
            0,
            [Knight, Knight, Clown],
            [&[Priestess], &[Soldier, Clown], &[]]
        ),
        Seat(0)
    );
    // Equal totals too: the first in turn order from the round's first player.
    let same: [&[Card]; 3] = [&[Clown], &[Soldier, Soldier], &[]];
    assert_eq!(winner(0, [Knight, Knight, Clown], same), Seat(0));
    assert_eq!(winner(1, [Knight, Knight, Clown], same), Seat(1));
    assert_eq!(winner(2, [Knight, Knight, Clown], same), Seat(0));
    assert_eq!(
        winner(2, [Clown, Knight, Knight], [&[], &[Clown], &[Clown]]),
        Seat(2)
    );
}

#[test]
fn round_winner_leads_next_round() {
    let mut g = rigged(3, 0, &[Soldier, Soldier, Wizard, Knight, Clown]);
    act(&mut g, 0, "play soldier 2 knight");
    act(&mut g, 1, "play soldier 0 knight"); // wrong: seat 0 holds the clown
    drain_deck_into(&mut g, 1);
    act(&mut g, 0, "play clown 1");
    let o = g.observation(Seat(2));
    assert_eq!(o.round, 1);
    assert_eq!(o.wins, vec![0, 1, 0]);
    assert_eq!(o.first, Seat(1));
    assert_eq!(o.to_act, Some(Seat(1)));
    assert!(o.players.iter().all(|p| p.in_round && p.played.is_empty()));
    assert_eq!(o.hand.len(), 1);
}

#[test]
fn first_to_four_rounds_wins() {
    let mut g = rigged(2, 0, &[Soldier, Soldier, Wizard, Clown]);
    g.wins = [3, 2, 0, 0];
    act(&mut g, 0, "play soldier 1 wizard");
    assert_eq!(
        g.events().last(),
        Some(&LoveLetterEvent::MatchEnd { winner: Seat(0) })
    );
    assert!(g.is_over());
    assert!(g.to_act().is_empty());
    assert!(g.legal_vec(Seat(0)).is_empty());
    let o = g.outcome().expect("over");
    assert_eq!(o.scores, vec![4, 2]);
    assert_eq!(o.ranks, vec![1, 2]);
    assert_eq!(o.forfeited_by, None);
    assert_eq!(g.apply(Seat(0), Play::Forfeit), Err(RuleError::GameOver));
    assert_eq!(g.forfeit(Seat(1)), Err(RuleError::GameOver));
    assert_eq!(g.observation(Seat(1)).to_act, None);
}

#[test]
fn illegal_action_changes_nothing() {
    let mut g = rigged(3, 0, &[Soldier, Soldier, Wizard, Knight, Clown]);
    let before = format!("{g:?}");
    for (seat, action) in [
        (0, Play::card(Princess)),
        (0, Play::soldier(Seat(1), Soldier)),
        (0, Play::soldier(Seat(0), Knight)),
        (0, Play::soldier(Seat(5), Knight)),
        (0, Play::on(Clown, Seat(0))),
        (0, Play::card(Clown)),
        (1, Play::card(Wizard)),
        (1, Play::Forfeit),
        (9, Play::Forfeit),
    ] {
        assert!(g.apply(Seat(seat), action).is_err(), "{action} accepted");
        assert_eq!(before, format!("{g:?}"), "{action} changed the state");
    }
    assert!(matches!(
        g.apply(Seat(9), Play::Forfeit),
        Err(RuleError::NoSuchSeat(_))
    ));
    assert_eq!(
        refused(&g, 0, "play princess"),
        RuleError::illegal("you do not hold the princess")
    );
}

#[test]
fn forfeit_puts_player_out_of_round() {
    let mut g = rigged(3, 0, &[Soldier, Soldier, Wizard, Knight, Clown]);
    assert!(!g.legal_vec(Seat(0)).contains(&Play::Forfeit));
    let n = g.events().len();
    act(&mut g, 0, "forfeit");
    assert_eq!(
        since(&g, n)[..3],
        [
            LoveLetterEvent::Forfeit { seat: Seat(0) },
            out(0, &[Soldier, Clown]),
            turn(1)
        ]
    );
    assert_eq!(to_act(&g), Some(Seat(1)));
    assert_eq!(
        g.wins(),
        &[0, 0, 0],
        "a forfeit loses the round, not the match"
    );
}

#[test]
fn arena_forfeit_out_of_turn_leaves_the_turn_with_its_player() {
    let mut g = rigged(3, 0, &[Soldier, Soldier, Wizard, Knight, Clown]);
    g.forfeit(Seat(2)).expect("seat 2 is in");
    assert_eq!(to_act(&g), Some(Seat(0)));
    assert!(!g.observation(Seat(0)).players[2].in_round);
    assert!(matches!(g.forfeit(Seat(2)), Err(RuleError::Illegal(_))));
    assert!(matches!(g.forfeit(Seat(3)), Err(RuleError::NoSuchSeat(_))));
    // Only seat 0 is left besides seat 1: seat 1's fault ends the round.
    g.forfeit(Seat(1)).expect("seat 1 is in");
    let end = g
        .events()
        .iter()
        .find(|e| matches!(e, LoveLetterEvent::RoundEnd { .. }));
    assert_eq!(
        end,
        Some(&LoveLetterEvent::RoundEnd {
            winner: Seat(0),
            hands: RoundHands::of(&[(Seat(0), Soldier), (Seat(0), Clown)]).unwrap()
        })
    );
    assert_eq!(g.wins(), &[1, 0, 0]);
    assert_eq!(to_act(&g), Some(Seat(0)), "the winner leads the next round");
}

#[test]
fn arena_forfeit_of_the_player_to_act_passes_the_turn() {
    let mut g = rigged(3, 0, &[Soldier, Soldier, Wizard, Knight, Clown]);
    g.forfeit(Seat(0)).expect("seat 0 is in");
    assert_eq!(to_act(&g), Some(Seat(1)));
    assert_eq!(hand(&g, 1).len(), 2);
}

#[test]
fn observation_shows_nothing_hidden() {
    let g = rigged(3, 0, &[Princess, Soldier, Minister, Knight, Clown]);
    let o = g.observation(Seat(1));
    assert_eq!(o.hand, vec![Minister]);
    let text = serde_json::to_string(&o).expect("serialises");
    assert!(
        !text.contains("princess"),
        "the set-aside card leaks: {text}"
    );
    assert!(
        !text.contains("knight") && !text.contains("clown"),
        "{text}"
    );
    assert_eq!(o.deck, 11);
    assert_eq!(o.wins, vec![0, 0, 0]);
    let spectator = g.observation(Seat(7));
    assert!(spectator.hand.is_empty() && spectator.known.is_empty());
    assert_eq!(spectator.players, o.players);
}

#[test]
fn knowledge_fades_when_the_seen_card_may_have_been_played() {
    // Seat 0 sees seat 1's knight.
    let mut g = rigged(3, 0, &[Soldier, Clown, Knight, Priestess, Soldier, Wizard]);
    act(&mut g, 0, "play clown 1");
    assert_eq!(g.observation(Seat(0)).known, vec![(Seat(1), Knight)]);
    // Seat 1 drew the wizard and plays it: it still holds the knight.
    act(&mut g, 1, "play wizard 1");
    // ...but the Wizard made seat 1 discard it.
    assert!(g.observation(Seat(0)).known.is_empty());
    // Seat 1 plays another card than the one seen: it still holds it.
    let mut g = rigged(3, 0, &[Soldier, Clown, Knight, Priestess, Soldier, Soldier]);
    act(&mut g, 0, "play clown 1");
    act(&mut g, 1, "play soldier 2 wizard");
    assert_eq!(g.observation(Seat(0)).known, vec![(Seat(1), Knight)]);
    // Seat 1 plays a card like the one seen: which copy went is unknown.
    let mut g = rigged(
        3,
        0,
        &[Soldier, Clown, Priestess, Knight, Soldier, Priestess],
    );
    act(&mut g, 0, "play clown 1");
    assert_eq!(g.observation(Seat(0)).known, vec![(Seat(1), Priestess)]);
    act(&mut g, 1, "play priestess");
    assert!(g.observation(Seat(0)).known.is_empty());
}

#[test]
fn general_carries_what_others_knew_to_the_new_holder() {
    // Seat 1 clowns seat 2 (sees a wizard); seat 2 then swaps with seat 0.
    let mut g = rigged(3, 1, &[Soldier, Clown, Wizard, Knight, Soldier, General]);
    act(&mut g, 1, "play clown 2");
    act(&mut g, 2, "play general 0");
    assert_eq!(g.observation(Seat(1)).known, vec![(Seat(0), Wizard)]);
    assert_eq!(g.observation(Seat(2)).known, vec![(Seat(0), Wizard)]);
    assert_eq!(g.observation(Seat(0)).known, vec![(Seat(2), Knight)]);
}

#[test]
fn event_lines_read_well() {
    let lines: Vec<String> = [
        turn(2),
        played(0, Soldier, Some(1), Some(Princess)),
        played(1, Knight, None, None),
        out(3, &[Minister, Wizard]),
        LoveLetterEvent::SetAsideTaken { seat: Seat(1) },
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        lines,
        vec![
            "seat 2's turn",
            "seat 0 plays the soldier on seat 1, naming the princess",
            "seat 1 plays the knight with no target",
            "seat 3 is out, holding the minister and the wizard",
            "the deck is empty: seat 1 takes the set-aside card",
        ]
    );
    let json =
        serde_json::to_string(&played(0, Soldier, Some(1), Some(Princess))).expect("serialises");
    assert_eq!(
        json,
        r#"{"event":"played","seat":0,"card":"soldier","target":1,"guess":"princess"}"#
    );
}
