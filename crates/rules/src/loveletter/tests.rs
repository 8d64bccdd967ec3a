use super::card::Pile;
use super::*;
use crate::core::{Event as _, Variant as _};

use Card::*;

/// A game whose first round comes off the deck in `top` order: `top[0]` is
/// set aside, then one card to each player in turn order from `first`, then
/// the draws. The rest of the deck follows in canonical order (soldiers
/// first).
fn rigged(seats: usize, first: u8, top: &[Card]) -> LoveLetter {
    let mut g = LoveLetter::blank(&LoveLetterVariant::default(), seats, 7).expect("2 to 4 seats");
    let mut order = top.to_vec();
    let mut rest = DECK.to_vec();
    for c in top {
        let i = rest
            .iter()
            .position(|r| r == c)
            .expect("the deck holds that many copies");
        rest.remove(i);
    }
    order.extend(rest);
    order.reverse(); // the top of the deck is its last card
    g.deck = Pile::from_array(order.try_into().expect("16 cards"));
    g.deal(Seat(first));
    g.advance(Seat(first));
    g
}

fn act(g: &mut LoveLetter, seat: u8, action: &str) {
    let play = g
        .validate(Seat(seat), action)
        .unwrap_or_else(|e| panic!("seat {seat} '{action}': {e}"));
    g.apply(Seat(seat), play)
        .unwrap_or_else(|e| panic!("seat {seat} '{action}': {e}"));
}

fn refused(g: &LoveLetter, seat: u8, action: &str) -> RuleError {
    g.validate(Seat(seat), action)
        .expect_err("the action should be refused")
}

fn hand(g: &LoveLetter, seat: u8) -> Vec<Card> {
    g.observation(Seat(seat)).hand
}

fn to_act(g: &LoveLetter) -> Option<Seat> {
    g.to_act().first()
}

/// The events since the `from`-th.
fn since(g: &LoveLetter, from: usize) -> Vec<LoveLetterEvent> {
    g.events()[from..].to_vec()
}

fn out(seat: u8, cards: &[Card]) -> LoveLetterEvent {
    LoveLetterEvent::Out {
        seat: Seat(seat),
        cards: cards.to_vec(),
    }
}

fn played(seat: u8, card: Card, target: Option<u8>, guess: Option<Card>) -> LoveLetterEvent {
    LoveLetterEvent::Played {
        seat: Seat(seat),
        card,
        target: target.map(Seat),
        guess,
    }
}

fn turn(seat: u8) -> LoveLetterEvent {
    LoveLetterEvent::Turn { seat: Seat(seat) }
}

fn draw(seat: u8, card: Card) -> LoveLetterEvent {
    LoveLetterEvent::Draw {
        seat: Seat(seat),
        card,
    }
}

fn reveal(to: u8, of: u8, card: Card) -> LoveLetterEvent {
    LoveLetterEvent::Reveal {
        to: Seat(to),
        of: Seat(of),
        card,
    }
}

/// Moves the rest of the deck into `seat`'s face-up pile, so that the next
/// turn ends with the deck empty.
fn drain_deck_into(g: &mut LoveLetter, seat: u8) {
    while let Some(c) = g.deck.pop() {
        g.played[usize::from(seat)].push(c);
    }
}

#[test]
fn deck_has_sixteen_cards_of_the_right_kinds() {
    assert_eq!(DECK.len(), 16);
    for c in Card::ALL {
        let n = DECK.iter().filter(|d| **d == c).count();
        assert_eq!(n, usize::from(c.copies()), "{c}");
        assert_eq!(Card::from_value(c.value()), Some(c));
    }
    let values: Vec<u8> = Card::ALL.iter().map(|c| c.value()).collect();
    assert_eq!(values, vec![1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(Card::from_value(0), None);
    assert_eq!(Card::from_value(9), None);
}

#[test]
fn card_names_parse_case_insensitively_and_print_lower_case() {
    for c in Card::ALL {
        assert_eq!(c.to_string().parse::<Card>(), Ok(c));
        assert_eq!(c.to_string().to_uppercase().parse::<Card>(), Ok(c));
    }
    assert_eq!(Princess.to_string(), "princess");
    assert_eq!("  PrInCeSs ".parse::<Card>(), Ok(Princess));
    assert!(matches!("prince".parse::<Card>(), Err(RuleError::Malformed(_))));
    let json = serde_json::to_string(&Minister).expect("serialises");
    assert_eq!(json, "\"minister\"");
}

#[test]
fn actions_round_trip_through_text() {
    let cases = [
        ("play soldier 2 princess", Play::soldier(Seat(2), Princess)),
        ("play wizard 3", Play::on(Wizard, Seat(3))),
        ("play priestess", Play::card(Priestess)),
        ("play knight", Play::card(Knight)),
        ("forfeit", Play::Forfeit),
    ];
    for (text, play) in cases {
        assert_eq!(play.to_string(), text);
        assert_eq!(text.parse::<Play>(), Ok(play));
    }
    assert_eq!(
        "  PLAY   Soldier\t1  GENERAL \n".parse::<Play>(),
        Ok(Play::soldier(Seat(1), General))
    );
    assert_eq!("wizard 0".parse::<Play>(), Ok(Play::on(Wizard, Seat(0))));
    assert_eq!("Forfeit".parse::<Play>(), Ok(Play::Forfeit));
    for bad in [
        "",
        "play",
        "play prince",
        "play soldier 2 princess extra",
        "play soldier 999 princess",
        "play soldier -1 princess",
        "forfeit now",
        "draw soldier",
    ] {
        assert!(
            matches!(bad.parse::<Play>(), Err(RuleError::Malformed(_))),
            "'{bad}' parsed"
        );
    }
}

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
    assert_eq!(LoveLetter::RULES_VERSION, 1);
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
        &[Soldier, Soldier, Wizard, Princess, Knight, Minister, Clown, Priestess],
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
fn minister_with_wizard_puts_holder_out_before_playing() {
    let mut g = rigged(3, 0, &[Soldier, Minister, Clown, Knight, Wizard, Priestess]);
    assert_eq!(
        since(&g, 4),
        vec![
            turn(0),
            draw(0, Wizard),
            out(0, &[Minister, Wizard]),
            turn(1),
            draw(1, Priestess)
        ]
    );
    assert_eq!(to_act(&g), Some(Seat(1)));
    assert!(!g.observation(Seat(1)).players[0].in_round);
    assert_eq!(refused(&g, 0, "play minister"), RuleError::NotYourTurn);
    act(&mut g, 1, "play priestess");
    assert_eq!(to_act(&g), Some(Seat(2)), "seat 0 is skipped from now on");
}

#[test]
fn minister_with_a_low_card_stays_and_plays_without_effect() {
    let mut g = rigged(2, 0, &[Soldier, Minister, Clown, Priestess]);
    assert_eq!(to_act(&g), Some(Seat(0)));
    let n = g.events().len();
    act(&mut g, 0, "play minister");
    assert_eq!(since(&g, n)[0], played(0, Minister, None, None));
    assert_eq!(since(&g, n)[1], turn(1));
    assert!(g.observation(Seat(0)).players[0].in_round);
}

#[test]
fn princess_played_puts_her_player_out() {
    let mut g = rigged(3, 0, &[Soldier, Princess, Clown, Knight, Priestess]);
    let n = g.events().len();
    act(&mut g, 0, "play princess");
    assert_eq!(
        since(&g, n)[..2],
        [played(0, Princess, None, None), out(0, &[Priestess])]
    );
    assert_eq!(to_act(&g), Some(Seat(1)));
}

#[test]
fn princess_discarded_by_wizard_is_out() {
    let mut g = rigged(3, 0, &[Soldier, Wizard, Princess, Knight, Clown]);
    let n = g.events().len();
    act(&mut g, 0, "play wizard 1");
    assert_eq!(
        since(&g, n)[..3],
        [
            played(0, Wizard, Some(1), None),
            LoveLetterEvent::Discard {
                seat: Seat(1),
                card: Princess
            },
            out(1, &[]),
        ]
    );
    let o = g.observation(Seat(2));
    assert!(!o.players[1].in_round);
    assert_eq!(o.players[1].played, vec![Princess]);
    assert_eq!(to_act(&g), Some(Seat(2)));
}

#[test]
fn wizard_target_discards_and_draws_a_new_card() {
    let mut g = rigged(2, 0, &[Soldier, Wizard, Knight, Clown, General]);
    let n = g.events().len();
    act(&mut g, 0, "play wizard 1");
    assert_eq!(
        since(&g, n)[..3],
        [
            played(0, Wizard, Some(1), None),
            LoveLetterEvent::Discard {
                seat: Seat(1),
                card: Knight
            },
            draw(1, General),
        ]
    );
    let draw_event = &since(&g, n)[2];
    assert!(draw_event.visible_to(Seat(1)) && !draw_event.visible_to(Seat(0)));
    assert_eq!(g.observation(Seat(0)).players[1].played, vec![Knight]);
}

#[test]
fn wizard_may_target_its_own_player() {
    let mut g = rigged(2, 0, &[Soldier, Wizard, Knight, Clown, General]);
    assert!(g.legal_vec(Seat(0)).contains(&Play::on(Wizard, Seat(0))));
    act(&mut g, 0, "play wizard 0");
    assert_eq!(g.observation(Seat(0)).players[0].played, vec![Wizard, Clown]);
    assert_eq!(g.hands[0].as_slice(), &[General]);
}

#[test]
fn wizard_on_empty_deck_takes_set_aside_card() {
    let mut g = rigged(2, 0, &[Princess, Wizard, Knight, Clown]);
    drain_deck_into(&mut g, 1);
    let n = g.events().len();
    act(&mut g, 0, "play wizard 1");
    let ev = since(&g, n);
    assert_eq!(
        ev[..5],
        [
            played(0, Wizard, Some(1), None),
            LoveLetterEvent::Discard {
                seat: Seat(1),
                card: Knight
            },
            LoveLetterEvent::SetAsideTaken { seat: Seat(1) },
            draw(1, Princess),
            LoveLetterEvent::RoundEnd {
                winner: Seat(1),
                hands: vec![(Seat(0), Clown), (Seat(1), Princess)]
            },
        ]
    );
    assert!(ev[2].visible_to(Seat(0)) && !ev[3].visible_to(Seat(0)));
}

#[test]
fn general_swaps_hands_and_tells_each_side_its_new_card() {
    let mut g = rigged(3, 0, &[Soldier, General, Princess, Knight, Clown]);
    let n = g.events().len();
    act(&mut g, 0, "play general 1");
    let ev = since(&g, n);
    assert_eq!(
        ev[..3],
        [
            played(0, General, Some(1), None),
            LoveLetterEvent::Swap {
                seat: Seat(0),
                card: Princess
            },
            LoveLetterEvent::Swap {
                seat: Seat(1),
                card: Clown
            },
        ]
    );
    assert!(ev[1].visible_to(Seat(0)) && !ev[1].visible_to(Seat(1)) && !ev[1].visible_to(Seat(2)));
    assert_eq!(hand(&g, 0), vec![Princess]);
    assert_eq!(g.hands[1].as_slice(), &[Clown, Soldier], "seat 1 then drew");
    assert_eq!(g.observation(Seat(0)).known, vec![(Seat(1), Clown)]);
}

#[test]
fn priestess_protects_until_her_player_next_turn() {
    let mut g = rigged(2, 0, &[Soldier, Priestess, Knight, Clown, Wizard, Soldier]);
    act(&mut g, 0, "play priestess");
    assert!(g.observation(Seat(1)).players[0].protected);
    act(&mut g, 1, "play knight"); // no legal target: seat 0 is protected
    assert_eq!(to_act(&g), Some(Seat(0)));
    assert!(
        !g.observation(Seat(1)).players[0].protected,
        "protection ends as the turn starts"
    );
}

#[test]
fn protected_player_cannot_be_targeted() {
    let mut g = rigged(3, 0, &[Soldier, Priestess, Knight, Clown, Wizard, Soldier]);
    act(&mut g, 0, "play priestess");
    assert_eq!(to_act(&g), Some(Seat(1)));
    assert_eq!(
        refused(&g, 1, "play knight 0"),
        RuleError::illegal("the target is protected")
    );
    let legal = g.legal_vec(Seat(1));
    assert!(legal.contains(&Play::on(Knight, Seat(2))));
    assert!(!legal.iter().any(|p| matches!(p, Play::Play { target: Some(Seat(0)), .. })));
}

#[test]
fn no_legal_target_plays_without_effect() {
    let mut g = rigged(2, 0, &[Soldier, Priestess, Knight, Clown, Soldier]);
    act(&mut g, 0, "play priestess");
    assert_eq!(
        g.legal_vec(Seat(1)),
        vec![Play::card(Knight), Play::card(Soldier)]
    );
    assert_eq!(
        refused(&g, 1, "play soldier 0 clown"),
        RuleError::illegal("the target is protected")
    );
    assert!(matches!(refused(&g, 1, "play soldier clown"), RuleError::Illegal(_)));
    let n = g.events().len();
    act(&mut g, 1, "play knight");
    assert_eq!(since(&g, n), vec![played(1, Knight, None, None), turn(0), draw(0, Soldier)]);
    assert_eq!(hand(&g, 1), vec![Soldier]);
}

#[test]
fn targeting_card_needs_a_target_when_one_exists() {
    let g = rigged(2, 0, &[Soldier, Knight, Clown, Priestess]);
    assert!(matches!(refused(&g, 0, "play knight"), RuleError::Illegal(_)));
    assert!(matches!(refused(&g, 0, "play priestess 1"), RuleError::Illegal(_)));
    assert!(matches!(refused(&g, 0, "play knight 0"), RuleError::Illegal(_)));
    assert!(matches!(refused(&g, 0, "play knight 3"), RuleError::Illegal(_)));
    assert!(matches!(refused(&g, 0, "play knight 1 clown"), RuleError::Illegal(_)));
}

#[test]
fn knight_lower_hand_is_out_equal_nobody() {
    // Seat 0's clown (2) loses to seat 1's priestess (4).
    let mut g = rigged(3, 0, &[Soldier, Clown, Priestess, Knight, Knight]);
    let n = g.events().len();
    act(&mut g, 0, "play knight 1");
    let ev = since(&g, n);
    assert_eq!(
        ev[..4],
        [
            played(0, Knight, Some(1), None),
            reveal(1, 0, Clown),
            reveal(0, 1, Priestess),
            out(0, &[Clown]),
        ]
    );
    assert!(ev[1].visible_to(Seat(1)) && !ev[1].visible_to(Seat(0)) && !ev[1].visible_to(Seat(2)));
    // Equal hands: nobody is out.
    let mut g = rigged(3, 0, &[Soldier, Clown, Clown, Priestess, Knight]);
    act(&mut g, 0, "play knight 1");
    let o = g.observation(Seat(2));
    assert!(o.players[0].in_round && o.players[1].in_round);
    assert_eq!(g.observation(Seat(0)).known, vec![(Seat(1), Clown)]);
}

#[test]
fn clown_shows_the_target_hand_to_its_player_only() {
    let mut g = rigged(3, 0, &[Soldier, Clown, Wizard, Knight, Priestess]);
    let n = g.events().len();
    act(&mut g, 0, "play clown 2");
    let ev = since(&g, n);
    assert_eq!(ev[1], reveal(0, 2, Knight));
    assert!(ev[1].visible_to(Seat(0)) && !ev[1].visible_to(Seat(1)) && !ev[1].visible_to(Seat(2)));
    assert_eq!(g.observation(Seat(0)).known, vec![(Seat(2), Knight)]);
    assert!(g.observation(Seat(1)).known.is_empty());
}

#[test]
fn soldier_naming_the_held_card_puts_target_out() {
    let mut g = rigged(3, 0, &[Soldier, Soldier, Wizard, Knight, Priestess]);
    let n = g.events().len();
    act(&mut g, 0, "play soldier 2 knight");
    assert_eq!(
        since(&g, n)[..2],
        [played(0, Soldier, Some(2), Some(Knight)), out(2, &[Knight])]
    );
    // A wrong guess does nothing.
    let n = g.events().len();
    act(&mut g, 1, "play soldier 0 princess");
    assert_eq!(since(&g, n)[..2], [played(1, Soldier, Some(0), Some(Princess)), turn(0)]);
}

#[test]
fn soldier_cannot_guess_soldier() {
    let g = rigged(2, 0, &[Soldier, Soldier, Soldier, Clown]);
    assert_eq!(
        refused(&g, 0, "play soldier 1 soldier"),
        RuleError::illegal("a soldier cannot guess soldier")
    );
    assert!(matches!(refused(&g, 0, "play soldier 1"), RuleError::Illegal(_)));
    assert!(matches!(refused(&g, 0, "play clown 1 knight"), RuleError::Illegal(_)));
    let legal = g.legal_vec(Seat(0));
    assert_eq!(legal.len(), 7 + 1, "seven guesses on seat 1, and the clown");
    assert!(!legal.contains(&Play::soldier(Seat(1), Soldier)));
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
            hands: vec![(Seat(0), Priestess), (Seat(1), General)]
        }
    );
    assert_eq!(g.wins(), &[0, 1, 0]);
    assert_eq!(ev[5], LoveLetterEvent::RoundStart { round: 1, first: Seat(1) });
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
            hands: vec![(Seat(0), Clown)]
        }
    );
    assert_eq!(g.wins(), &[1, 0]);
}

#[test]
fn round_tie_broken_by_played_total_then_turn_order() {
    fn winner(first: u8, hands: [Card; 3], played: [&[Card]; 3]) -> Seat {
        let mut g = rigged(3, first, &[]);
        for i in 0..3 {
            g.hands[i] = Hand::EMPTY;
            g.hands[i].push(hands[i]);
            g.played[i] = Pile::EMPTY;
            played[i].iter().for_each(|c| g.played[i].push(*c));
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
    assert_eq!(winner(0, [Knight, Wizard, Clown], [&[General], &[], &[]]), Seat(1));
    // Equal cards: the higher played total wins.
    assert_eq!(winner(0, [Knight, Knight, Clown], [&[Soldier], &[Clown], &[]]), Seat(1));
    assert_eq!(winner(0, [Knight, Knight, Clown], [&[Priestess], &[Soldier, Clown], &[]]), Seat(0));
    // Equal totals too: the first in turn order from the round's first player.
    let same: [&[Card]; 3] = [&[Clown], &[Soldier, Soldier], &[]];
    assert_eq!(winner(0, [Knight, Knight, Clown], same), Seat(0));
    assert_eq!(winner(1, [Knight, Knight, Clown], same), Seat(1));
    assert_eq!(winner(2, [Knight, Knight, Clown], same), Seat(0));
    assert_eq!(winner(2, [Clown, Knight, Knight], [&[], &[Clown], &[Clown]]), Seat(2));
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
    assert_eq!(g.wins(), &[0, 0, 0], "a forfeit loses the round, not the match");
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
            hands: vec![(Seat(0), Soldier), (Seat(0), Clown)]
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
    assert!(!text.contains("princess"), "the set-aside card leaks: {text}");
    assert!(!text.contains("knight") && !text.contains("clown"), "{text}");
    assert_eq!(o.deck, 11);
    assert_eq!(o.wins, vec![0, 0, 0]);
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
    let mut g = rigged(3, 0, &[Soldier, Clown, Priestess, Knight, Soldier, Priestess]);
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
    let json = serde_json::to_string(&played(0, Soldier, Some(1), Some(Princess)))
        .expect("serialises");
    assert_eq!(
        json,
        r#"{"event":"played","seat":0,"card":"soldier","target":1,"guess":"princess"}"#
    );
}
