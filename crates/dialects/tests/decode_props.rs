//! Property tests of every dialect's manager-side decoder: for random game
//! positions, random bytes and mangled answers never panic, never decode to
//! an action that is not legal, and leave the dialect as it was (a twin that
//! never saw them decodes the next valid answer the same way); a valid
//! answer for any legal action decodes to that action.
//!
//! One kind of legal action has no line in one dialect: under the standard
//! rules, a targeting card may be played without a target when it can
//! affect nobody (every opponent protected), but Postman's protocol wants a
//! target on every targeting card (docs/protocol/loveletter.md, "A card
//! that takes a target must always name one"), and refuses the bare card as
//! illegal. Its bot loses nothing: naming a protected player is legal and
//! does the same (nothing). The test checks exactly that: the bare card is
//! refused, and a play of the same card naming a player is legal.

use croupier_dialects::loveletter::Style;
use croupier_dialects::{make, Dialect, DialectKind, Reply};
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant, Play};
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Game, Seat};
use proptest::prelude::*;

/// How a bot of a dialect writes `action`, given the lines of its prompt.
type Answer<G> = fn(&<G as Game>::Action, &[String]) -> String;

/// Whether a dialect has no line for a legal action (`action` of `legal`),
/// having checked that an equivalent legal action has one.
type Unwritable<G> = fn(&<G as Game>::Action, &[<G as Game>::Action]) -> bool;

/// A game after `steps` random legal moves (picked by `picks`), the seat to
/// act, and two identical dialects that have seen everything that seat saw.
struct Position<G: Game> {
    game: G,
    seat: Seat,
    legal: Vec<G::Action>,
    dialects: [Box<dyn Dialect<G>>; 2],
    prompt: Vec<String>,
}

fn position<G: Game>(
    kind: DialectKind,
    variant: &G::Variant,
    seats: usize,
    seed: u64,
    picks: &[u16],
) -> Option<Position<G>> {
    let mut game = G::new(variant, seats, seed).ok()?;
    for pick in picks {
        if game.is_over() {
            break;
        }
        let seat = game.to_act().first()?;
        let legal = game.legal_vec(seat);
        let action = legal[usize::from(*pick) % legal.len()];
        game.apply(seat, action).ok()?;
    }
    if game.is_over() {
        return None;
    }
    let seat = game.to_act().first()?;
    let legal = game.legal_vec(seat);
    let mut prompt = Vec::new();
    let dialects = [make::<G>(kind)?, make::<G>(kind)?].map(|mut d| {
        let mut out = Vec::new();
        d.hello(&game, seat, &mut out);
        for event in game.events() {
            if croupier_rules::Event::visible_to(event, seat) {
                d.event(&game, seat, event, &mut out);
            }
        }
        out.clear();
        d.prompt(&game, seat, &legal, 1000, &mut out);
        prompt = out;
        d
    });
    Some(Position {
        game,
        seat,
        legal,
        dialects,
        prompt,
    })
}

/// Feeds `junk` to one twin, then checks both twins read `valid` alike.
fn junk_changes_nothing<G: Game>(p: &mut Position<G>, junk: &str, answer: Answer<G>) {
    let [ref mut seen, ref mut fresh] = p.dialects;
    if let Ok(Reply::Action(a)) = seen.decode(&p.game, p.seat, junk) {
        assert!(p.legal.contains(&a), "{junk:?} decoded to {a}, not legal");
    }
    let valid = answer(&p.legal[0], &p.prompt);
    let after_junk = seen.decode(&p.game, p.seat, &valid);
    let clean = fresh.decode(&p.game, p.seat, &valid);
    assert_eq!(after_junk, clean, "{junk:?} changed how {valid:?} reads");
}

/// A valid answer for every legal action reads as that action, and
/// mangled forms of it never decode to an illegal action.
fn valid_answers_read<G: Game>(
    p: &mut Position<G>,
    cut: usize,
    answer: Answer<G>,
    unwritable: Unwritable<G>,
) {
    for action in p.legal.clone() {
        let text = answer(&action, &p.prompt);
        let d = &mut p.dialects[0];
        let read = d.decode(&p.game, p.seat, &text);
        if unwritable(&action, &p.legal) {
            assert!(read.is_err(), "{text:?} read as {read:?}");
            continue;
        }
        assert_eq!(read, Ok(Reply::Action(action)), "{text:?}");
        let mut mangled: Vec<String> = vec![
            text.chars()
                .take(cut % (text.chars().count() + 1))
                .collect(),
            format!("{text}{text}"),
            text.to_uppercase(),
            text.replace(['"', ':'], ""),
        ];
        mangled.push(format!(" {text}\r"));
        for m in mangled {
            if let Ok(Reply::Action(a)) = d.decode(&p.game, p.seat, &m) {
                assert!(p.legal.contains(&a), "{m:?} decoded to {a}, not legal");
            }
        }
    }
}

/// `croupier/1`: `{"action": "<text>", "decision": n}` with the prompt's
/// decision number.
fn croupier_answer<G: Game>(action: &G::Action, prompt: &[String]) -> String {
    let decision = prompt
        .iter()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v.get("decision").and_then(serde_json::Value::as_u64));
    serde_json::json!({ "action": action.to_string(), "decision": decision }).to_string()
}

fn plain_answer<G: Game>(action: &G::Action, _prompt: &[String]) -> String {
    action.to_string()
}

fn classic_answer(play: &<LoveLetter as Game>::Action, _prompt: &[String]) -> String {
    Style::Classic.play_line(*play)
}

fn postman_answer(play: &<LoveLetter as Game>::Action, _prompt: &[String]) -> String {
    Style::Postman.play_line(*play)
}

fn all_writable<G: Game>(_: &G::Action, _: &[G::Action]) -> bool {
    false
}

/// Postman has no line for a targeting card without a target (see the top
/// of this file); the same card naming a player must then be legal.
fn postman_unwritable(play: &Play, legal: &[Play]) -> bool {
    let Play::Play {
        card, target: None, ..
    } = *play
    else {
        return false;
    };
    if !card.takes_target() {
        return false;
    }
    assert!(
        legal
            .iter()
            .any(|l| matches!(l, Play::Play { card: c, target: Some(_), .. } if *c == card)),
        "the {card} without target is legal, but naming a player is not: {legal:?}"
    );
    true
}

/// Every dialect with a game it carries, the table size, and how its bots
/// answer, as a function of one case's inputs.
fn check_all(seed: u64, picks: &[u16], junk: &str, cut: usize) {
    fn one<G: Game>(
        kind: DialectKind,
        variant: &G::Variant,
        seats: usize,
        answer: Answer<G>,
        unwritable: Unwritable<G>,
        (seed, picks, junk, cut): (u64, &[u16], &str, usize),
    ) {
        if let Some(mut p) = position::<G>(kind, variant, seats, seed, picks) {
            junk_changes_nothing(&mut p, junk, answer);
        }
        if let Some(mut p) = position::<G>(kind, variant, seats, seed, picks) {
            valid_answers_read(&mut p, cut, answer, unwritable);
        }
    }
    fn plain<G: Game>(
        kind: DialectKind,
        seats: usize,
        answer: Answer<G>,
        case: (u64, &[u16], &str, usize),
    ) {
        one::<G>(
            kind,
            &G::Variant::default(),
            seats,
            answer,
            all_writable::<G>,
            case,
        );
    }
    let case = (seed, picks, junk, cut);
    for kind in DialectKind::ALL {
        match kind {
            DialectKind::Croupier => {
                plain::<Goofspiel>(kind, 2, croupier_answer::<Goofspiel>, case);
                plain::<SkullWhist>(kind, 2, croupier_answer::<SkullWhist>, case);
                plain::<LoveLetter>(kind, 3, croupier_answer::<LoveLetter>, case);
            }
            DialectKind::Gops | DialectKind::Jujitsu => {
                plain::<Goofspiel>(kind, 2, plain_answer::<Goofspiel>, case);
            }
            DialectKind::LoveLetter => {
                plain::<LoveLetter>(kind, 2, classic_answer, case);
                plain::<LoveLetter>(kind, 4, classic_answer, case);
            }
            DialectKind::LoveLetterPostman => {
                let standard = LoveLetterVariant::standard();
                let postman = LoveLetterVariant::postman();
                for (variant, seats) in [(&standard, 3), (&postman, 3), (&postman, 2)] {
                    one::<LoveLetter>(
                        kind,
                        variant,
                        seats,
                        postman_answer,
                        postman_unwritable,
                        case,
                    );
                }
            }
            // Not in `ALL`: the server's own (its requests are fuzzed by
            // `fuzz/fuzz_targets/rest_*` and the API tests).
            DialectKind::SkullWhistRest => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_bytes_never_panic_or_change_the_dialect(
        seed in any::<u64>(),
        picks in proptest::collection::vec(any::<u16>(), 0..40),
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let junk = String::from_utf8_lossy(&bytes);
        check_all(seed, &picks, &junk, 0);
    }

    #[test]
    fn random_text_never_panics_or_changes_the_dialect(
        seed in any::<u64>(),
        picks in proptest::collection::vec(any::<u16>(), 0..40),
        junk in "[ -~]{0,60}|\\{\"action\":\"[A-Za-z0-9 ]{0,8}\",\"decision\":-?[0-9]{0,20}\\}|[0-9 ]{0,25}",
        cut in any::<usize>(),
    ) {
        check_all(seed, &picks, &junk, cut);
    }
}
