//! Each dialect's client plays whole games against the manager side of its
//! dialect, plus the seeds' worked examples.

mod harness;
mod tracking;

use std::io::Cursor;
use std::sync::Arc;

use croupier_bots::{Builtins, RandomBot, Strategy};
use croupier_dialects::gops::GopsDialect;
use croupier_dialects::loveletter::{LoveLetterDialect, Style};
use croupier_dialects::{make, Dialect, DialectKind, Reply};
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{Card, LoveLetter, LoveLetterEvent, LoveLetterVariant};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
use croupier_rules::{Game, Seat};

use super::*;
use harness::{play, Spawn};

fn opts(seed: u64, players: Option<usize>) -> ClientOptions {
    ClientOptions {
        seed,
        players,
        ..ClientOptions::default()
    }
}

fn croupier_dialects<G: Game>(seats: usize) -> Vec<Box<dyn Dialect<G>>> {
    (0..seats)
        .map(|_| make::<G>(DialectKind::Croupier).expect("croupier carries every game"))
        .collect()
}

/// Clients that run the built-in `name` over `croupier/1`.
fn croupier_spawn<G: Builtins>(name: &'static str) -> Spawn {
    Arc::new(move |seat: Seat, input, output| {
        let strategy = G::make(name).expect("a built-in strategy");
        run_croupier::<G>(strategy, &opts(u64::from(seat.0) + 7, None), input, output)
    })
}

#[test]
fn goofspiel_gops_planner_plays_a_whole_game_through_the_runner_dialect() {
    for seed in 0..3 {
        let game = Goofspiel::new(&GoofspielVariant::gops(), 2, seed).unwrap();
        let dialects: Vec<Box<dyn Dialect<Goofspiel>>> =
            vec![Box::new(GopsDialect), Box::new(GopsDialect)];
        let spawn: Spawn = Arc::new(|seat: Seat, input, output| {
            let strategy = Goofspiel::make("planner").unwrap();
            run_gops(strategy, &opts(u64::from(seat.0), None), input, output)
        });
        let played = play(game, dialects, spawn);
        let history = played.game.observation(Seat(0)).history;
        assert_eq!(history[0].len(), 13);
        assert_eq!(played.runs, [1, 1]);
    }
}

#[test]
fn goofspiel_croupier_random_plays_a_whole_match() {
    let variant = GoofspielVariant::jujitsu(vec![5, 6]);
    let game = Goofspiel::new(&variant, 2, 11).unwrap();
    let played = play(
        game,
        croupier_dialects(2),
        croupier_spawn::<Goofspiel>("random"),
    );
    let obs = played.game.observation(Seat(0));
    assert_eq!(obs.history.iter().map(Vec::len).collect::<Vec<_>>(), [5, 6]);
}

#[test]
fn skullwhist_croupier_heuristic_plays_a_whole_game() {
    for seed in 0..2 {
        let game = SkullWhist::new(&SkullWhistVariant::default(), 2, seed).unwrap();
        let played = play(
            game,
            croupier_dialects(2),
            croupier_spawn::<SkullWhist>("heuristic"),
        );
        assert!(played.game.is_over());
    }
}

#[test]
fn loveletter_croupier_heuristic_plays_a_four_player_match() {
    let game = LoveLetter::new(&LoveLetterVariant::default(), 4, 3).unwrap();
    let played = play(
        game,
        croupier_dialects(4),
        croupier_spawn::<LoveLetter>("heuristic"),
    );
    assert_eq!(played.game.wins().iter().max(), Some(&4));
}

fn loveletter_spawn(style: Style, variant: &LoveLetterVariant, players: usize) -> Spawn {
    let variant = variant.clone();
    Arc::new(move |seat: Seat, input, output| {
        let strategy = LoveLetter::make("heuristic").unwrap();
        // Classic never says how many play; Postman does.
        let told = (style == Style::Classic).then_some(players);
        let o = opts(u64::from(seat.0), told);
        run_loveletter(strategy, style, &variant, &o, input, output)
    })
}

fn loveletter_match(
    style: Style,
    variant: &LoveLetterVariant,
    players: usize,
    seed: u64,
) -> harness::Played<LoveLetter> {
    let game = LoveLetter::new(variant, players, seed).unwrap();
    let dialects: Vec<Box<dyn Dialect<LoveLetter>>> = (0..players)
        .map(|_| Box::new(LoveLetterDialect::new(style)) as Box<dyn Dialect<LoveLetter>>)
        .collect();
    let played = play(game, dialects, loveletter_spawn(style, variant, players));
    assert!(!played
        .game
        .events()
        .iter()
        .any(|e| matches!(e, LoveLetterEvent::Forfeit { .. })));
    assert_eq!(played.game.wins().iter().max(), Some(&4));
    played
}

#[test]
fn loveletter_heuristic_plays_matches_of_two_three_and_four_restarting_each_round() {
    for (style, variant) in [
        (Style::Classic, LoveLetterVariant::standard()),
        (Style::Postman, LoveLetterVariant::postman()),
        (Style::Classic, LoveLetterVariant::postman()),
        (Style::Postman, LoveLetterVariant::standard()),
    ] {
        for players in 2..=4 {
            for seed in 0..2 {
                let played = loveletter_match(style, &variant, players, seed);
                let rounds = played
                    .game
                    .events()
                    .iter()
                    .filter(|e| matches!(e, LoveLetterEvent::RoundStart { .. }))
                    .count();
                assert_eq!(
                    played.runs,
                    vec![rounds; players],
                    "{style:?} under {}: one run per round",
                    variant.rules
                );
            }
        }
    }
}

/// Seed 001's worked example: player 1 set aside soldier, then the deal.
fn seed_example() -> LoveLetter {
    use Card::*;
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

/// Runs a classic client over `lines` and returns what it wrote.
fn classic_answers(lines: &[&str]) -> Vec<String> {
    let input = lines.join("\n") + "\n";
    let mut out = Vec::new();
    let strategy = LoveLetter::make("heuristic").unwrap();
    run_loveletter(
        strategy,
        Style::Classic,
        &LoveLetterVariant::standard(),
        &opts(1, Some(4)),
        Cursor::new(input),
        &mut out,
    )
    .unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn assert_legal(game: &LoveLetter, seat: Seat, line: &str) {
    let mut d = LoveLetterDialect::new(Style::Classic);
    match d.decode(game, seat, line) {
        Ok(Reply::Action(_)) => {}
        other => panic!("'{line}' refused: {other:?}"),
    }
}

#[test]
fn classic_client_answers_the_seed_001_example_with_legal_plays() {
    let mut game = seed_example();
    // Player 1's turn: it holds the soldier and draws the minister.
    let answers = classic_answers(&["1", "draw soldier", "player 1", "draw minister"]);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_legal(&game, Seat(0), &answers[0]);
    // Play on as in the example, then player 4 (knight, draws the priestess).
    let mut d = LoveLetterDialect::new(Style::Classic);
    for (seat, line) in [(0, "play soldier 2 princess"), (1, "play wizard 3")] {
        match d.decode(&game, Seat(seat), line) {
            Ok(Reply::Action(a)) => game.apply(Seat(seat), a).unwrap(),
            other => panic!("{other:?}"),
        }
    }
    let answers = classic_answers(&[
        "4",
        "draw knight",
        "player 1",
        "played 1 soldier 2 princess",
        "player 2",
        "played 2 wizard 3",
        "discard 3 princess",
        "out 3",
        "player 4",
        "draw priestess",
    ]);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_legal(&game, Seat(3), &answers[0]);
    // Player 3 of the example is only told it is out: it never answers.
    let silent = classic_answers(&[
        "3",
        "draw princess",
        "player 1",
        "played 1 soldier 2 princess",
        "player 2",
        "played 2 wizard 3",
        "discard 3 princess",
        "out 3",
    ]);
    assert!(silent.is_empty(), "{silent:?}");
}

#[test]
fn classic_client_needs_the_number_of_players() {
    let strategy = LoveLetter::make("heuristic").unwrap();
    let err = run_loveletter(
        strategy,
        Style::Classic,
        &LoveLetterVariant::standard(),
        &opts(0, None),
        Cursor::new("1\n"),
        Vec::new(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("number of players"), "{err}");
}

#[test]
fn postman_client_answers_ident_with_its_name_and_plays_capitalised() {
    let input = "ident 0\nplayers 2\nstart 0\ndraw Soldier\nplayer 0\ndraw Princess\n";
    let mut out = Vec::new();
    let strategy = LoveLetter::make("heuristic").unwrap();
    run_loveletter(
        strategy,
        Style::Postman,
        &LoveLetterVariant::postman(),
        &ClientOptions::default(),
        Cursor::new(input),
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], loveletter::POSTMAN_NAME);
    // Never the princess; the soldier on player 1 (0-based), naming a card.
    assert!(lines[1].starts_with("play Soldier 1 "), "{lines:?}");
    assert_eq!(lines.len(), 2);
}

/// Seed 004's Planner as its Ruby code reads, transcribed line by line:
/// the bids it makes for the given competition cards and opponent bids.
fn ruby_planner(cards: &[u8], opponent: &[u8]) -> Vec<u8> {
    let mut cards_left: Vec<u8> = (1..=13).collect();
    let mut opponent_left = cards_left.clone();
    let mut bids_left = cards_left.clone();
    // @sure_wins: an insertion-ordered hash from bid card (or nil) to card.
    let mut sure_wins: Vec<(Option<u8>, u8)> = Vec::new();
    let mut bids = Vec::new();
    for (&bidding_for, &theirs) in cards.iter().zip(opponent) {
        let opp_max = opponent_left.iter().copied().max().unwrap();
        for card in ((opp_max + 1)..=13).rev() {
            if !cards_left.contains(&card) || sure_wins.iter().any(|(_, v)| *v == card) {
                continue;
            }
            let key = bids_left
                .iter()
                .copied()
                .filter(|b| !sure_wins.iter().any(|(k, _)| *k == Some(*b)))
                .max();
            match sure_wins.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = card,
                None => sure_wins.push((key, card)),
            }
        }
        let play = sure_wins
            .iter()
            .find(|(k, _)| *k == Some(bidding_for))
            .map_or_else(|| *cards_left.iter().min().unwrap(), |(_, v)| *v);
        bids.push(play);
        bids_left.retain(|c| *c != bidding_for);
        cards_left.retain(|c| *c != play);
        opponent_left.retain(|c| *c != theirs);
    }
    bids
}

#[test]
fn gops_client_reproduces_the_seed_planner_choices() {
    let cards = [7, 3, 13, 1, 12, 5, 11, 2, 10, 4, 9, 6, 8];
    let opponent = [13, 12, 1, 2, 3, 11, 4, 10, 5, 6, 7, 8, 9];
    let mut input = String::new();
    for (c, o) in cards.iter().zip(&opponent) {
        // The runner's lines, two spaces after the colon.
        input += &format!("Competition card:  {c}\nOpponent's bid:  {o}\n");
    }
    let mut out = Vec::new();
    let strategy = Goofspiel::make("planner").unwrap();
    run_gops(
        strategy,
        &ClientOptions::default(),
        Cursor::new(input),
        &mut out,
    )
    .unwrap();
    let bids: Vec<u8> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(bids, ruby_planner(&cards, &opponent));
    // By hand: lowest card until the opponent's 13 and 12 are gone, then
    // 13 and 12 kept for the two best cards, 11 for the 11 once its 11 goes.
    assert_eq!(bids[..7], [1, 2, 13, 3, 12, 4, 11]);
}

#[test]
fn gops_client_reads_numbers_leniently_and_stops_at_end_of_input() {
    let input = "banner without digits\nCompetition card: 5!\nOpponent's bid was 13\n";
    let mut out = Vec::new();
    let strategy: Box<dyn Strategy<Goofspiel>> = Box::new(RandomBot);
    run_gops(
        strategy,
        &ClientOptions::default(),
        Cursor::new(input),
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let bid: u8 = text.trim().parse().unwrap();
    assert!((1..=13).contains(&bid));
    assert_eq!(text.lines().count(), 1);
}

#[test]
fn croupier_client_refuses_a_line_that_is_not_json_and_names_it() {
    let strategy: Box<dyn Strategy<Goofspiel>> = Box::new(RandomBot);
    let err = run_croupier(
        strategy,
        &ClientOptions::default(),
        Cursor::new("{\"type\":\"future\"}\nhello there\n"),
        Vec::new(),
    )
    .unwrap_err();
    let msg = err.report();
    assert!(
        msg.contains("line 2") && msg.contains("hello there"),
        "{msg}"
    );
}

#[test]
fn croupier_client_echoes_the_decision_and_ends_at_end_of_input() {
    let g = Goofspiel::new(&GoofspielVariant::gops(), 2, 1).unwrap();
    let mut d = make::<Goofspiel>(DialectKind::Croupier).unwrap();
    let mut lines = Vec::new();
    d.hello(&g, Seat(1), &mut lines);
    d.prompt(&g, Seat(1), &g.legal_vec(Seat(1)), 100, &mut lines);
    let mut out = Vec::new();
    let strategy: Box<dyn Strategy<Goofspiel>> = Box::new(RandomBot);
    run_croupier(
        strategy,
        &ClientOptions::default(),
        Cursor::new(lines.join("\n")),
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["decision"], 1);
    assert!(matches!(
        d.decode(&g, Seat(1), text.trim()),
        Ok(Reply::Action(_))
    ));
}
