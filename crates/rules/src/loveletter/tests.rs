use super::*;
use crate::core::{Event as _, Variant as _};

use Card::*;

mod postman;
mod protected;
mod rounds;

/// A game whose first round comes off the deck in `top` order (see
/// [`LoveLetter::with_top_cards`]).
fn rigged(seats: usize, first: u8, top: &[Card]) -> LoveLetter {
    LoveLetter::with_top_cards(seats, Seat(first), top, 7).expect("valid rigged deck")
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
        cards: OutCards::of(cards).unwrap(),
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
        g.lay_played(usize::from(seat), c);
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
    assert!(matches!(
        "prince".parse::<Card>(),
        Err(RuleError::Malformed(_))
    ));
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
    assert_eq!(
        g.observation(Seat(0)).players[0].played,
        vec![Wizard, Clown]
    );
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
                hands: RoundHands::of(&[(Seat(0), Clown), (Seat(1), Princess)]).unwrap()
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
fn no_target_to_affect_plays_without_target_and_without_effect() {
    let mut g = rigged(2, 0, &[Soldier, Priestess, Knight, Clown, Soldier]);
    act(&mut g, 0, "play priestess");
    let mut expected = vec![Play::on(Knight, Seat(0)), Play::card(Knight)];
    expected.extend(Card::GUESSES.iter().map(|c| Play::soldier(Seat(0), *c)));
    expected.push(Play::card(Soldier));
    assert_eq!(g.legal_vec(Seat(1)), expected);
    assert!(matches!(
        refused(&g, 1, "play soldier clown"),
        RuleError::Illegal(_)
    ));
    let n = g.events().len();
    act(&mut g, 1, "play knight");
    assert_eq!(
        since(&g, n),
        vec![played(1, Knight, None, None), turn(0), draw(0, Soldier)]
    );
    assert_eq!(hand(&g, 1), vec![Soldier]);
}

#[test]
fn targeting_card_needs_a_target_when_one_exists() {
    let g = rigged(2, 0, &[Soldier, Knight, Clown, Priestess]);
    assert!(matches!(
        refused(&g, 0, "play knight"),
        RuleError::Illegal(_)
    ));
    assert!(matches!(
        refused(&g, 0, "play priestess 1"),
        RuleError::Illegal(_)
    ));
    assert!(matches!(
        refused(&g, 0, "play knight 0"),
        RuleError::Illegal(_)
    ));
    assert!(matches!(
        refused(&g, 0, "play knight 3"),
        RuleError::Illegal(_)
    ));
    assert!(matches!(
        refused(&g, 0, "play knight 1 clown"),
        RuleError::Illegal(_)
    ));
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
    assert_eq!(
        since(&g, n)[..2],
        [played(1, Soldier, Some(0), Some(Princess)), turn(0)]
    );
}

#[test]
fn soldier_cannot_guess_soldier() {
    let g = rigged(2, 0, &[Soldier, Soldier, Soldier, Clown]);
    assert_eq!(
        refused(&g, 0, "play soldier 1 soldier"),
        RuleError::illegal("a soldier cannot guess soldier")
    );
    assert!(matches!(
        refused(&g, 0, "play soldier 1"),
        RuleError::Illegal(_)
    ));
    assert!(matches!(
        refused(&g, 0, "play clown 1 knight"),
        RuleError::Illegal(_)
    ));
    let legal = g.legal_vec(Seat(0));
    assert_eq!(legal.len(), 7 + 1, "seven guesses on seat 1, and the clown");
    assert!(!legal.contains(&Play::soldier(Seat(1), Soldier)));
}
