//! Postman's rules, one test per way they differ from the standard rules.

use super::*;

fn postman(seats: usize, first: u8, top: &[Card]) -> LoveLetter {
    LoveLetter::with_top_cards_under(&LoveLetterVariant::postman(), seats, Seat(first), top, 7)
        .expect("valid rigged deck")
}

fn no_effect(seat: u8, target: u8, reason: NoEffectReason) -> LoveLetterEvent {
    LoveLetterEvent::NoEffect {
        seat: Seat(seat),
        target: Seat(target),
        reason,
    }
}

#[test]
fn holding_the_minister_and_drawing_a_big_card_is_not_checked() {
    let top = [Soldier, Minister, Soldier, General];
    let g = postman(2, 0, &top);
    assert_eq!(
        to_act(&g),
        Some(Seat(0)),
        "7 + 6, but the general was drawn"
    );
    assert_eq!(hand(&g, 0), vec![Minister, General]);
    let standard = rigged(2, 0, &top);
    assert!(standard.events().contains(&out(0, &[Minister, General])));
}

#[test]
fn drawing_the_minister_puts_out_only_above_12() {
    // Wizard 5 + Minister 7 = 12: Postman lets it play.
    let g = postman(2, 0, &[Soldier, Wizard, Soldier, Minister]);
    assert_eq!(to_act(&g), Some(Seat(0)));
    assert!(rigged(2, 0, &[Soldier, Wizard, Soldier, Minister])
        .events()
        .contains(&out(0, &[Wizard, Minister])));
    // General 6 + Minister 7 = 13: out at once.
    for held in [General, Princess] {
        let g = postman(3, 0, &[Soldier, held, Soldier, Clown, Minister, Knight]);
        assert_eq!(
            since(&g, 4),
            vec![
                turn(0),
                draw(0, Minister),
                out(0, &[held, Minister]),
                turn(1),
                draw(1, Knight)
            ]
        );
    }
}

#[test]
fn a_princess_discarded_by_a_wizard_does_not_put_her_holder_out() {
    let mut g = postman(3, 0, &[Soldier, Wizard, Princess, Knight, Clown, Priestess]);
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
            draw(1, Priestess),
        ]
    );
    assert!(g.observation(Seat(2)).players[1].in_round);
    assert_eq!(to_act(&g), Some(Seat(1)));
}

#[test]
fn a_wizard_target_is_out_when_the_deck_is_empty_and_the_set_aside_card_stays() {
    let mut g = postman(2, 0, &[Princess, Wizard, Knight, Clown]);
    drain_deck_into(&mut g, 1);
    let n = g.events().len();
    act(&mut g, 0, "play wizard 1");
    assert_eq!(
        since(&g, n)[..4],
        [
            played(0, Wizard, Some(1), None),
            LoveLetterEvent::Discard {
                seat: Seat(1),
                card: Knight
            },
            out(1, &[]),
            LoveLetterEvent::RoundEnd {
                winner: Seat(0),
                hands: RoundHands::of(&[(Seat(0), Clown)]).unwrap()
            },
        ]
    );
    assert!(!g
        .events()
        .iter()
        .any(|e| matches!(e, LoveLetterEvent::SetAsideTaken { .. })));
}

#[test]
fn a_card_aimed_at_oneself_an_out_or_a_protected_player_has_no_effect() {
    // At oneself, the Wizard included.
    for (text, card) in [("play knight 0", Knight), ("play wizard 0", Wizard)] {
        let mut g = postman(2, 0, &[Soldier, card, Clown, Princess]);
        let n = g.events().len();
        act(&mut g, 0, text);
        assert_eq!(
            since(&g, n)[..3],
            [
                played(0, card, Some(0), None),
                no_effect(0, 0, NoEffectReason::Itself),
                turn(1)
            ],
            "{text}"
        );
        assert_eq!(hand(&g, 0), vec![Princess], "{text}");
    }
    // At a player who is out.
    let mut g = postman(3, 0, &[Soldier, Soldier, Knight, Clown, Priestess, Soldier]);
    act(&mut g, 0, "play soldier 2 clown");
    assert!(!g.observation(Seat(1)).players[2].in_round);
    let n = g.events().len();
    act(&mut g, 1, "play soldier 2 clown");
    assert_eq!(
        since(&g, n)[..2],
        [
            played(1, Soldier, Some(2), Some(Clown)),
            no_effect(1, 2, NoEffectReason::Out)
        ]
    );
    // At a protected player.
    let mut g = postman(2, 0, &[Soldier, Clown, Princess, Priestess, General]);
    act(&mut g, 0, "play priestess");
    let n = g.events().len();
    act(&mut g, 1, "play general 0");
    assert_eq!(
        since(&g, n)[..2],
        [
            played(1, General, Some(0), None),
            no_effect(1, 0, NoEffectReason::Protected)
        ]
    );
    assert_eq!(hand(&g, 0)[0], Clown, "seat 0 kept its card");
    assert_eq!(hand(&g, 1), vec![Princess]);
}

#[test]
fn a_targeting_card_must_name_a_player_even_when_none_can_be_affected() {
    let mut g = postman(2, 0, &[Soldier, Priestess, Knight, Clown, Soldier]);
    act(&mut g, 0, "play priestess");
    assert!(matches!(
        refused(&g, 1, "play knight"),
        RuleError::Illegal(_)
    ));
    let legal = g.legal_vec(Seat(1));
    assert!(legal.contains(&Play::on(Knight, Seat(0))));
    assert!(legal.contains(&Play::on(Knight, Seat(1))));
    assert!(legal.iter().all(|p| matches!(
        p,
        Play::Play {
            target: Some(_),
            ..
        }
    )));
    assert_eq!(
        refused(&g, 1, "play knight 2"),
        RuleError::illegal("there is no seat 2")
    );
    assert_eq!(
        refused(&g, 1, "play knight 0 clown"),
        RuleError::illegal("only the soldier names a guess")
    );
}

#[test]
fn the_soldier_may_name_the_soldier() {
    let mut g = postman(2, 0, &[Clown, Knight, Soldier, Soldier]);
    let legal = g.legal_vec(Seat(0));
    assert!(legal.contains(&Play::soldier(Seat(1), Soldier)));
    assert_eq!(
        refused(&g, 0, "play soldier 1"),
        RuleError::illegal("the soldier must name a card")
    );
    let n = g.events().len();
    act(&mut g, 0, "play soldier 1 soldier");
    assert_eq!(
        since(&g, n)[..2],
        [
            played(0, Soldier, Some(1), Some(Soldier)),
            out(1, &[Soldier])
        ]
    );
}

#[test]
fn ties_go_to_the_lowest_seat_index() {
    // Seat 1 plays first and has played more, which wins the standard tie
    // break; Postman compares the cards alone.
    let top = [Soldier, Knight, Knight, Priestess];
    for (variant, winner) in [
        (LoveLetterVariant::standard(), Seat(1)),
        (LoveLetterVariant::postman(), Seat(0)),
    ] {
        let mut g =
            LoveLetter::with_top_cards_under(&variant, 2, Seat(1), &top, 7).expect("rigged");
        drain_deck_into(&mut g, 1);
        act(&mut g, 1, "play priestess");
        let end = g
            .events()
            .iter()
            .find_map(|e| match e {
                LoveLetterEvent::RoundEnd { winner, .. } => Some(*winner),
                _ => None,
            })
            .expect("the round ended");
        assert_eq!(end, winner, "{}", variant.rules);
    }
}

#[test]
fn every_round_has_a_random_first_player() {
    let v = LoveLetterVariant::postman();
    let (mut led_by_winner, mut led_by_other) = (0, 0);
    let mut firsts = [0u32; 4];
    for seed in 0..60 {
        let (g, _) = crate::testutil::random_playout::<LoveLetter>(&v, 4, seed, seed, usize::MAX);
        let mut last_winner = None;
        for e in g.events() {
            match e {
                LoveLetterEvent::RoundStart { first, .. } => {
                    firsts[first.index()] += 1;
                    match last_winner {
                        Some(w) if w == *first => led_by_winner += 1,
                        Some(_) => led_by_other += 1,
                        None => {}
                    }
                }
                LoveLetterEvent::RoundEnd { winner, .. } => last_winner = Some(*winner),
                _ => {}
            }
        }
    }
    // With 4 players a random first player is the last winner one time in 4.
    assert!(
        led_by_other > 2 * led_by_winner,
        "{led_by_winner} {led_by_other}"
    );
    assert!(firsts.iter().all(|n| *n > 20), "{firsts:?}");
}
