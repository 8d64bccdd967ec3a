//! The Love Letter client's picture of the table against the engine's own
//! observation, turn by turn, over many games played through the manager
//! side of both protocol styles.

use croupier_bots::bot_rng;
use croupier_dialects::loveletter::{LoveLetterDialect, Style};
use croupier_dialects::{Dialect, Flow};
use croupier_rules::loveletter::{Card, LoveLetter, LoveLetterVariant, Play};
use croupier_rules::{Event as _, Game, Seat};
use rand::seq::IndexedRandom;

use super::super::loveletter::Table;

fn sorted(mut plays: Vec<Play>) -> Vec<String> {
    let mut v: Vec<String> = plays.drain(..).map(|p| p.to_string()).collect();
    v.sort();
    v
}

fn greet(d: &mut LoveLetterDialect, game: &LoveLetter, seat: Seat, t: &mut Table) {
    let mut hello = Vec::new();
    d.hello(game, seat, &mut hello);
    for l in hello {
        let step = t.handle(&l).unwrap();
        assert!(!step.act);
    }
}

/// Checks what seat `seat`'s table shows against the engine.
fn compare(game: &LoveLetter, seat: Seat, t: &Table, style: Style) {
    let mine = t.observation().unwrap();
    let truth = game.observation(seat);
    let at = format!("{style:?} seat {seat}, event {}", game.events().len());
    assert_eq!(mine.seat, truth.seat, "{at}");
    assert_eq!(mine.hand, truth.hand, "{at}");
    assert_eq!(mine.deck, truth.deck, "{at}");
    assert_eq!(mine.to_act, truth.to_act, "{at}");
    assert_eq!(mine.first, truth.first, "{at}");
    assert_eq!(mine.known, truth.known, "{at}");
    for (i, (a, b)) in mine.players.iter().zip(&truth.players).enumerate() {
        assert_eq!(a.in_round, b.in_round, "{at}: seat {i} in round");
        assert_eq!(a.protected, b.protected, "{at}: seat {i} protected");
        assert_eq!(a.played, b.played, "{at}: seat {i} played");
        // The manager lists no cards for a player out by its own Princess.
        if b.played.last() != Some(&Card::Princess) {
            assert_eq!(a.out_hand, b.out_hand, "{at}: seat {i} out hand");
        }
    }
    assert_eq!(
        sorted(t.legal().unwrap()),
        sorted(game.legal_vec(seat)),
        "{at}: legal plays"
    );
}

fn check_match(style: Style, variant: &LoveLetterVariant, players: usize, seed: u64) {
    let mut game = LoveLetter::new(variant, players, seed).unwrap();
    let mut dialects = vec![LoveLetterDialect::new(style); players];
    let mut tables: Vec<Option<Table>> = (0..players).map(|_| None).collect();
    let mut pending = vec![false; players];
    let mut rng = bot_rng(seed);
    // Classic never says how many play; Postman does.
    let told = (style == Style::Classic).then_some(players);
    let mut seen = 0;
    loop {
        while seen < game.events().len() {
            let e = game.events()[seen];
            seen += 1;
            for s in 0..players {
                let seat = Seat(s as u8);
                if !e.visible_to(seat) {
                    continue;
                }
                let mut out = Vec::new();
                let flow = dialects[s].event(&game, seat, &e, &mut out);
                if flow == Flow::Restart {
                    let mut t = Table::new(style, variant, told);
                    greet(&mut dialects[s], &game, seat, &mut t);
                    tables[s] = Some(t);
                }
                if let Some(t) = &mut tables[s] {
                    for l in &out {
                        if t.handle(l).unwrap().act {
                            assert!(!pending[s], "seat {s} asked to act twice");
                            pending[s] = true;
                        }
                    }
                }
                if flow == Flow::Stop {
                    // A stopped AI's answer, if it gave one, is never read.
                    tables[s] = None;
                    pending[s] = false;
                }
            }
        }
        let Some(seat) = game.to_act().first() else {
            break;
        };
        let s = seat.index();
        let mut prompt = Vec::new();
        dialects[s].prompt(&game, seat, &game.legal_vec(seat), 1000, &mut prompt);
        if let Some(t) = &mut tables[s] {
            for l in &prompt {
                if t.handle(l).unwrap().act {
                    assert!(!pending[s], "seat {s} asked to act twice");
                    pending[s] = true;
                }
            }
        }
        assert!(
            pending[s],
            "seat {seat} must act but its client was not asked"
        );
        pending[s] = false;
        assert!(!pending.contains(&true), "a client acts out of turn");
        compare(&game, seat, tables[s].as_ref().unwrap(), style);
        let legal = game.legal_vec(seat);
        let play = *legal.choose(&mut rng).unwrap();
        game.apply(seat, play).unwrap();
    }
}

#[test]
fn loveletter_client_tracks_the_engines_observation_and_legal_plays() {
    for style in [Style::Classic, Style::Postman] {
        for variant in [LoveLetterVariant::standard(), LoveLetterVariant::postman()] {
            for players in 2..=4 {
                for seed in 0..8 {
                    check_match(style, &variant, players, seed);
                }
            }
        }
    }
}

#[test]
fn an_out_line_with_more_cards_than_a_hand_is_a_protocol_error() {
    let variant = super::super::loveletter::default_rules(Style::Classic);
    let game = LoveLetter::new(&variant, 4, 7).unwrap();
    let mut dialect = LoveLetterDialect::new(Style::Classic);
    let mut table = Table::new(Style::Classic, &variant, Some(4));
    greet(&mut dialect, &game, Seat(0), &mut table);
    let err = match table.handle("out 2 soldier clown knight") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("three cards shown going out were taken"),
    };
    assert!(
        err.contains("3 cards") && err.contains("at most 2"),
        "{err}"
    );
    // Two cards are a hand: taken.
    table.handle("out 3 soldier clown").unwrap();
}
