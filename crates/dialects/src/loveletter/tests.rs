use super::*;
use croupier_rules::loveletter::LoveLetterVariant;
use croupier_rules::Event as _;
use Card::*;

/// The lines each seat's AI receives for the events from `from` on, as a
/// runner delivers them: nothing more once the dialect says stop.
fn stream(d: &mut [LoveLetterDialect], g: &LoveLetter, from: usize) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); d.len()];
    let mut stopped = vec![false; d.len()];
    for e in &g.events()[from..] {
        for (i, dialect) in d.iter_mut().enumerate() {
            if e.visible_to(Seat(i as u8)) && !stopped[i] {
                let mut lines = Vec::new();
                let flow = dialect.event(g, Seat(i as u8), e, &mut lines);
                out[i].extend(lines);
                stopped[i] = flow == Flow::Stop;
            }
        }
    }
    out
}

fn act(g: &mut LoveLetter, d: &mut LoveLetterDialect, seat: u8, line: &str) {
    match d.decode(g, Seat(seat), line) {
        Ok(Reply::Action(a)) => g.apply(Seat(seat), a).unwrap(),
        other => panic!("{line}: {other:?}"),
    }
}

fn seed_example() -> LoveLetter {
    LoveLetter::with_top_cards(
        4,
        Seat(0),
        &[
            Soldier, Soldier, Wizard, Princess, Knight, Minister, Clown, Priestess,
        ],
        1,
    )
    .unwrap()
}

#[test]
fn seed_example_message_flow_is_reproduced() {
    let mut g = seed_example();
    let mut d = vec![LoveLetterDialect::new(Style::Classic); 4];
    let mut lines = stream(&mut d, &g, 0);
    let n = g.events().len();
    act(&mut g, &mut d[0].clone(), 0, "play soldier 2 princess");
    act(&mut g, &mut d[1].clone(), 1, "PLAY Wizard 3");
    act(&mut g, &mut d[3].clone(), 3, "play knight 1");
    let more = stream(&mut d, &g, n);
    for (i, m) in more.into_iter().enumerate() {
        lines[i].extend(m);
    }
    // Seat 0 (player 1) sees everything public plus its own cards.
    assert_eq!(
        lines[0],
        [
            "draw soldier",
            "player 1",
            "draw minister",
            "played 1 soldier 2 princess",
            "player 2",
            "played 2 wizard 3",
            "discard 3 princess",
            "out 3",
            "player 4",
            "played 4 knight 1",
            "reveal 4 priestess",
            "out 4 priestess",
            "player 1",
            "draw soldier",
        ]
    );
    assert_eq!(
        lines[3][..3],
        ["draw knight", "player 1", "played 1 soldier 2 princess"]
    );
    assert!(lines[3].contains(&"reveal 1 minister".to_string()));
    // Player 3 is told it is out, and nothing after that.
    assert_eq!(lines[2].last().map(String::as_str), Some("out 3"));
}

#[test]
fn round_start_restarts_and_being_out_stops_the_ai() {
    let mut g = seed_example();
    let mut d = LoveLetterDialect::new(Style::Classic);
    let mut out = Vec::new();
    let start = g.events()[0];
    assert_eq!(d.event(&g, Seat(2), &start, &mut out), Flow::Restart);
    let mut hello = Vec::new();
    d.hello(&g, Seat(2), &mut hello);
    assert_eq!(hello, ["3"]);
    act(&mut g, &mut d.clone(), 0, "play soldier 2 princess");
    act(&mut g, &mut d.clone(), 1, "play wizard 3");
    let out_event = *g
        .events()
        .iter()
        .rev()
        .find(|e| matches!(e, LoveLetterEvent::Out { .. }))
        .unwrap();
    assert_eq!(d.event(&g, Seat(2), &out_event, &mut out), Flow::Stop);
    assert_eq!(d.event(&g, Seat(1), &out_event, &mut out), Flow::Continue);
}

#[test]
fn playing_the_princess_is_out_with_no_cards_listed() {
    // Player 1 holds the princess and draws the clown; it plays the princess.
    let mut g =
        LoveLetter::with_top_cards(2, Seat(0), &[Soldier, Princess, Knight, Clown], 1).unwrap();
    let mut d = vec![LoveLetterDialect::new(Style::Classic); 2];
    let n = g.events().len();
    act(&mut g, &mut d[0].clone(), 0, "play princess");
    let lines = stream(&mut d, &g, n);
    assert!(lines[1].contains(&"out 1".to_string()), "{:?}", lines[1]);
}

#[test]
fn bad_answers_are_refused_with_a_reason() {
    let g = seed_example();
    let mut d = LoveLetterDialect::new(Style::Classic);
    assert_eq!(d.decode(&g, Seat(0), "forfeit"), Ok(Reply::Forfeit));
    for bad in [
        "",
        "hello",
        "play",
        "play joker",
        "play soldier two princess",
        "play soldier 2 princess extra",
    ] {
        assert!(
            matches!(d.decode(&g, Seat(0), bad), Err(RuleError::Malformed(_))),
            "{bad}"
        );
    }
    for illegal in [
        "play soldier 9 princess",
        "play soldier 0 princess",
        "play knight 2",
        "play soldier 2 soldier",
        "play soldier 1 princess",
    ] {
        assert!(
            matches!(d.decode(&g, Seat(0), illegal), Err(RuleError::Illegal(_))),
            "{illegal}"
        );
    }
}

#[test]
fn postman_numbers_from_zero_and_capitalises() {
    let mut g = seed_example();
    let mut d = vec![LoveLetterDialect::new(Style::Postman); 4];
    let mut hello = Vec::new();
    d[0].hello(&g, Seat(0), &mut hello);
    assert_eq!(hello, ["ident 0"]);
    let lines = stream(&mut d, &g, 0);
    assert_eq!(
        lines[0],
        ["players 4", "start 0", "draw Soldier", "player 0"]
    );
    let mut prompt = Vec::new();
    d[0].prompt(&g, Seat(0), &[], 1000, &mut prompt);
    assert_eq!(
        prompt,
        ["draw Minister"],
        "the turn's draw goes with the prompt"
    );
    let n = g.events().len();
    match d[0].decode(&g, Seat(0), "play Soldier 1 Princess") {
        Ok(Reply::Action(a)) => g.apply(Seat(0), a).unwrap(),
        other => panic!("{other:?}"),
    }
    let lines = stream(&mut d, &g, n);
    assert_eq!(lines[2][0], "played 0 Soldier 1 Princess");
}

/// Every line each seat's Postman AI is sent over a whole game played by
/// `plays` (one answer per turn, in order), as a runner sends them:
/// restarts marked `[start]`, the prompt's held draw included.
fn postman_stream(g: &mut LoveLetter, plays: &[&str]) -> Vec<Vec<String>> {
    let n = g.num_seats();
    let mut d = vec![LoveLetterDialect::new(Style::Postman); n];
    let mut out = vec![Vec::new(); n];
    let mut running = vec![false; n];
    let mut seen = 0;
    let mut plays = plays.iter();
    loop {
        for e in &g.events()[seen..] {
            for (i, dialect) in d.iter_mut().enumerate() {
                let seat = Seat(i as u8);
                if !e.visible_to(seat) {
                    continue;
                }
                let mut lines = Vec::new();
                let flow = dialect.event(g, seat, e, &mut lines);
                if flow == Flow::Restart {
                    running[i] = true;
                    out[i].push("[start]".into());
                    dialect.hello(g, seat, &mut out[i]);
                }
                if running[i] {
                    out[i].extend(lines);
                }
                if flow == Flow::Stop {
                    running[i] = false;
                }
            }
        }
        seen = g.events().len();
        let Some(seat) = g.to_act().first() else {
            return out;
        };
        let Some(line) = plays.next() else {
            return out;
        };
        let i = seat.index();
        d[i].prompt(g, seat, &[], 1000, &mut out[i]);
        out[i].push(format!("> {line}"));
        match d[i].decode(g, seat, line) {
            Ok(Reply::Action(a)) => g.apply(seat, a).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }
}

fn postman_game(seats: usize, first: u8, top: &[Card]) -> LoveLetter {
    LoveLetter::with_top_cards_under(&LoveLetterVariant::postman(), seats, Seat(first), top, 3)
        .unwrap()
}

#[test]
fn postman_sends_out_and_no_draw_when_the_drawn_minister_strikes() {
    // Seat 0 holds the General and draws the Minister: 13.
    let mut g = postman_game(2, 1, &[Soldier, Clown, General, Soldier, Minister]);
    let lines = postman_stream(&mut g, &["play Soldier 0 Knight"]);
    assert_eq!(
        lines[0][..8],
        [
            "[start]",
            "ident 0",
            "players 2",
            "start 1",
            "draw General",
            "player 1",
            "played 1 Soldier 0 Knight",
            "player 0",
        ]
    );
    assert_eq!(lines[0][8], "out 0 General Minister");
    assert_eq!(lines[0][9], "[start]", "nothing more until the next round");
    assert!(lines[1].contains(&"out 0 General Minister".to_string()));
    assert!(lines[1].contains(&"won_round 1".to_string()));
}

#[test]
fn postman_restarts_every_ai_each_round_with_the_whole_greeting() {
    let mut g = postman_game(2, 0, &[Soldier, Clown, Princess, Knight]);
    // Seat 0 plays the Knight: clown against princess, seat 0 is out.
    let lines = postman_stream(&mut g, &["play Knight 1"]);
    let first = g.observation(Seat(0)).first;
    assert_eq!(
        lines[1],
        [
            "[start]",
            "ident 1",
            "players 2",
            "start 0",
            "draw Princess",
            "player 0",
            "played 0 Knight 1",
            "reveal 0 Clown",
            "out 0 Clown",
            "won_round 1",
            "[start]",
            "ident 1",
            "players 2",
            &format!("start {}", first.0),
        ]
        .iter()
        .map(|s| s.to_string())
        .chain(lines[1][14..].iter().cloned())
        .collect::<Vec<_>>()
    );
    assert_eq!(
        lines[0][..4],
        ["[start]", "ident 0", "players 2", "start 0"]
    );
    assert_eq!(lines[0].iter().filter(|l| *l == "[start]").count(), 2);
}

#[test]
fn postman_says_protected_after_a_card_without_effect_and_classic_says_nothing() {
    let top = [Soldier, Clown, Princess, Priestess, Knight];
    let plays = ["play Priestess", "play Knight 0"];
    let mut g = postman_game(2, 0, &top);
    let lines = postman_stream(&mut g, &plays);
    let at = lines[0]
        .iter()
        .position(|l| l == "played 1 Knight 0")
        .expect("played");
    assert_eq!(lines[0][at + 1], "protected 0");
    assert!(!lines[0]
        .iter()
        .any(|l| l.starts_with("protected") && l != "protected 0"));
    let p = lines[1]
        .iter()
        .position(|l| l == "played 0 Priestess")
        .expect("played");
    assert_eq!(
        lines[1][p + 1],
        "player 1",
        "the priestess itself sends no protected line"
    );
    // Classic: the play and nothing else.
    let mut g = LoveLetter::with_top_cards(2, Seat(0), &top, 3).unwrap();
    let mut d = vec![LoveLetterDialect::new(Style::Classic); 2];
    act(&mut g, &mut d[0].clone(), 0, "play priestess");
    let n = g.events().len();
    act(&mut g, &mut d[1].clone(), 1, "play knight 1");
    let lines = stream(&mut d, &g, n);
    assert_eq!(lines[0][..2], ["played 2 knight 1", "player 1"]);
}

#[test]
fn postman_reads_lines_that_are_not_answers_as_nothing() {
    let g = postman_game(2, 0, &[Soldier, Clown, Princess, Knight]);
    let mut d = LoveLetterDialect::new(Style::Postman);
    assert_eq!(d.decode(&g, Seat(0), "thinking..."), Ok(Reply::Ignore));
    assert_eq!(d.decode(&g, Seat(0), "forfeit"), Ok(Reply::Forfeit));
    assert!(matches!(
        d.decode(&g, Seat(0), "play Knight"),
        Err(RuleError::Illegal(_))
    ));
    assert!(matches!(
        d.decode(&g, Seat(0), "play knight 1"),
        Err(RuleError::Malformed(_))
    ));
    assert_eq!(
        d.decode(&g, Seat(0), "play Knight 0"),
        Ok(Reply::Action(Play::on(Knight, Seat(0))))
    );
    assert!(
        matches!(
            d.decode(&g, Seat(0), "play Princess 1"),
            Err(RuleError::Illegal(_))
        ),
        "a card not held"
    );
}
