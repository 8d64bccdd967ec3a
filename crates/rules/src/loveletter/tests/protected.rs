//! A card aimed at a player protected by a Priestess (standard rules, rules
//! version 2): a legal play without effect. The refusals that remain.

use super::*;
use crate::record::Record;
use crate::testutil::{random_playout, record_of};

/// A game of `seats` where seat 0 has just played the Priestess (keeping
/// the Clown) and seat 1, holding the Princess, has drawn `card`.
fn seat_0_protected(seats: usize, card: Card) -> LoveLetter {
    let mut top = vec![Soldier, Clown, Princess];
    top.extend(std::iter::repeat_n(Soldier, seats - 2));
    top.extend([Priestess, card]);
    let mut g = rigged(seats, 0, &top);
    act(&mut g, 0, "play priestess");
    assert_eq!(to_act(&g), Some(Seat(1)));
    assert_eq!(hand(&g, 1), vec![Princess, card]);
    g
}

fn no_effect(seat: u8, target: u8) -> LoveLetterEvent {
    LoveLetterEvent::NoEffect {
        seat: Seat(seat),
        target: Seat(target),
        reason: NoEffectReason::Protected,
    }
}

#[test]
fn every_targeting_card_aimed_at_a_protected_player_is_played_without_effect() {
    // Each of these would hit seat 0 (holding the Clown) if it were not
    // protected: the Soldier names the Clown, the Clown would reveal it, the
    // Knight would put it out (Princess against Clown), the General would
    // swap, the Wizard would make it discard.
    for seats in [2, 3, 4] {
        for (card, text) in [
            (Soldier, "play soldier 1 clown"),
            (Clown, "play clown 1"),
            (Knight, "play knight 1"),
            (General, "play general 1"),
            (Wizard, "play wizard 1"),
        ] {
            let text = text.replace(" 1", " 0");
            let at = format!("{seats} players, '{text}'");
            let mut g = seat_0_protected(seats, card);
            let play = g.validate(Seat(1), &text).expect(&at);
            assert!(g.legal_vec(Seat(1)).contains(&play), "{at}: not listed");
            let hands_before: Vec<Vec<Card>> = (0..seats as u8).map(|s| hand(&g, s)).collect();
            let n = g.events().len();
            act(&mut g, 1, &text);
            let ev = since(&g, n);
            let guess = (card == Soldier).then_some(Clown);
            assert_eq!(
                ev[..3],
                [
                    played(1, card, Some(0), guess),
                    no_effect(1, 0),
                    turn(2 % seats as u8)
                ],
                "{at}"
            );
            for s in 0..seats as u8 {
                assert!(
                    g.observation(Seat(s)).players.iter().all(|p| p.in_round),
                    "{at}"
                );
                assert!(
                    g.observation(Seat(s)).known.is_empty(),
                    "{at}: something was revealed"
                );
            }
            // Seat 0 may have drawn since (its turn, with 2 players).
            assert_eq!(hand(&g, 0)[..1], hands_before[0][..], "{at}: seat 0's hand");
            for s in 2..seats as u8 {
                assert_eq!(hand(&g, s)[..1], hands_before[usize::from(s)][..], "{at}");
            }
            assert_eq!(
                hand(&g, 1),
                vec![Princess],
                "{at}: seat 1 kept the princess"
            );
            assert!(
                !ev.iter().any(|e| matches!(
                    e,
                    LoveLetterEvent::Reveal { .. }
                        | LoveLetterEvent::Swap { .. }
                        | LoveLetterEvent::Discard { .. }
                        | LoveLetterEvent::Out { .. }
                        | LoveLetterEvent::Forfeit { .. }
                )),
                "{at}: {ev:?}"
            );
            assert_eq!(
                ev[1].to_string(),
                "no effect: seat 0 is protected by a priestess"
            );
        }
    }
}

#[test]
fn without_target_only_when_nobody_can_be_affected() {
    // Two players: seat 0 is protected, so the Knight may go without
    // target, or at seat 0 without effect.
    let g = seat_0_protected(2, Knight);
    let legal = g.legal_vec(Seat(1));
    assert!(legal.contains(&Play::card(Knight)));
    assert!(legal.contains(&Play::on(Knight, Seat(0))));
    // Three players: seat 2 can be affected, so a target is needed.
    let g = seat_0_protected(3, Knight);
    assert!(matches!(
        refused(&g, 1, "play knight"),
        RuleError::Illegal(_)
    ));
    let legal = g.legal_vec(Seat(1));
    assert!(legal.contains(&Play::on(Knight, Seat(0))));
    assert!(legal.contains(&Play::on(Knight, Seat(2))));
    // The Wizard always has a player it affects: its own.
    let g = seat_0_protected(2, Wizard);
    assert!(matches!(
        refused(&g, 1, "play wizard"),
        RuleError::Illegal(_)
    ));
}

#[test]
fn naming_oneself_an_out_player_or_nobody_at_the_table_stays_illegal() {
    let g = seat_0_protected(3, Knight);
    assert_eq!(
        refused(&g, 1, "play knight 1"),
        RuleError::illegal("only the wizard may target yourself")
    );
    assert_eq!(
        refused(&g, 1, "play knight 3"),
        RuleError::illegal("there is no seat 3")
    );
    assert_eq!(
        refused(&g, 1, "play soldier 0 soldier"),
        RuleError::illegal("you do not hold the soldier")
    );
    let g = seat_0_protected(3, Soldier);
    assert_eq!(
        refused(&g, 1, "play soldier 0 soldier"),
        RuleError::illegal("a soldier cannot guess soldier")
    );
    assert_eq!(
        refused(&g, 1, "play soldier 0"),
        RuleError::illegal("the soldier must name a card")
    );
    // Seat 2 goes out; naming it is refused.
    let mut g = rigged(3, 0, &[Soldier, Soldier, Knight, Clown, Priestess, Soldier]);
    act(&mut g, 0, "play soldier 2 clown");
    assert!(!g.observation(Seat(1)).players[2].in_round);
    assert_eq!(
        refused(&g, 1, "play soldier 2 wizard"),
        RuleError::illegal("seat 2 is out of the round")
    );
}

#[test]
fn rules_version_1_refused_the_protected_target() {
    let v1 = LoveLetter::replay_variant(LoveLetterVariant::standard(), 1).expect("v1 replays");
    let top = [Soldier, Clown, Princess, Priestess, Knight];
    let mut g = LoveLetter::with_top_cards_under(&v1, 2, Seat(0), &top, 7).expect("rigged");
    act(&mut g, 0, "play priestess");
    assert_eq!(
        refused(&g, 1, "play knight 0"),
        RuleError::illegal("the target is protected")
    );
    assert_eq!(
        g.legal_vec(Seat(1)),
        vec![Play::card(Princess), Play::card(Knight)]
    );
    assert!(LoveLetter::replay_variant(LoveLetterVariant::postman(), 1).is_none());
    assert!(LoveLetter::replay_variant(LoveLetterVariant::standard(), 3).is_none());
}

/// A random playout that plays at least one card at a protected player.
fn record_with_a_protected_play() -> Record {
    let v = LoveLetterVariant::standard();
    for seed in 0..200u64 {
        let (g, steps) = random_playout::<LoveLetter>(&v, 3, seed, seed, usize::MAX);
        let protected_plays = g
            .events()
            .iter()
            .filter(|e| matches!(e, LoveLetterEvent::NoEffect { .. }))
            .count();
        if protected_plays > 0 {
            return record_of(&v, 3, seed, &steps, &g);
        }
    }
    panic!("no random playout aimed a card at a protected player");
}

#[test]
fn records_replay_under_the_rules_version_they_were_made_with() {
    let mut record = record_with_a_protected_play();
    assert_eq!(record.rules_version, 2);
    assert!(record.verify::<LoveLetter>().is_ok());
    let (text, ok) = record.transcript::<LoveLetter>();
    assert!(ok.is_ok());
    assert!(text.contains("is protected by a priestess"), "{text}");
    // The same steps as a version 1 record: the protected play is refused.
    record.rules_version = 1;
    match record.verify::<LoveLetter>() {
        Err(crate::ReplayError::Step { error, .. }) => {
            assert_eq!(error, RuleError::illegal("the target is protected"))
        }
        other => panic!("a version 1 record replayed a protected play: {other:?}"),
    }
    record.rules_version = 3;
    assert!(matches!(
        record.verify::<LoveLetter>(),
        Err(crate::ReplayError::Format(_))
    ));
}
