//! Golden transcripts: every `testdata/<game>/<name>.json` record, worked out
//! by hand, must replay to its recorded outcome and print exactly
//! `<name>.txt`. A rules change that alters any of them fails here.
//!
//! After an intended change of transcript *wording*, regenerate the texts
//! with `CROUPIER_BLESS=1 cargo test -p croupier-rules --test golden` and
//! review the diff; outcomes in the JSON files are never regenerated.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::path::{Path, PathBuf};

use croupier_rules::{Game, GameKind, GameVisitor, Record, ReplayError};

struct Transcript<'a>(&'a Record);

impl GameVisitor for Transcript<'_> {
    type Output = (String, Result<(), ReplayError>);
    fn visit<G: Game>(self) -> Self::Output {
        self.0.transcript::<G>()
    }
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn check_game(game: &str) -> usize {
    let dir = testdata().join(game);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for path in &files {
        let record: Record = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let kind: GameKind = record.game.parse().unwrap();
        assert_eq!(
            kind.name(),
            game,
            "{} is in the wrong folder",
            path.display()
        );
        let (text, result) = kind.visit(Transcript(&record));
        if let Err(e) = result {
            panic!("{} does not replay: {e}\n{text}", path.display());
        }
        let golden = path.with_extension("txt");
        if std::env::var_os("CROUPIER_BLESS").is_some() {
            std::fs::write(&golden, &text).unwrap();
        }
        let expected = std::fs::read_to_string(&golden)
            .unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
        assert_eq!(text, expected, "transcript of {} changed", path.display());
    }
    files.len()
}

#[test]
fn goofspiel_golden_transcripts_replay_exactly() {
    assert!(check_game("goofspiel") >= 3);
}

#[test]
fn skullwhist_golden_transcripts_replay_exactly() {
    assert!(check_game("skullwhist") >= 3);
}

#[test]
fn loveletter_golden_transcripts_replay_exactly() {
    assert!(check_game("loveletter") >= 3);
}

#[test]
fn a_tampered_record_does_not_replay() {
    let path = testdata().join("goofspiel/gops-13-discard.json");
    let mut record: Record = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    record.outcome.scores.swap(0, 1);
    assert!(matches!(
        record.verify::<croupier_rules::goofspiel::Goofspiel>(),
        Err(ReplayError::OutcomeMismatch { .. })
    ));
    record.outcome.scores.swap(0, 1);
    record.steps.truncate(10);
    assert!(matches!(
        record.verify::<croupier_rules::goofspiel::Goofspiel>(),
        Err(ReplayError::Unfinished)
    ));
}

/// What each Love Letter golden of rules version 2 was hand-checked for:
/// the lines that show a rule at work.
#[test]
fn loveletter_goldens_show_the_rules_they_were_checked_for() {
    let text =
        |name: &str| std::fs::read_to_string(testdata().join("loveletter").join(name)).unwrap();
    let checks: [(&str, &[&str]); 4] = [
        (
            "standard-protected-target-3p.txt",
            &[
                // A Knight aimed at a protected player: played, no effect.
                "seat 0 plays the knight on seat 1\n  no effect: seat 1 is protected by a priestess\n  seat 1's turn",
                // Nobody to affect: no target.
                "seat 1 plays the clown with no target",
                // The standard Minister: holding it, drawing a big card.
                "seat 0 draws the general\n  seat 0 is out, holding the minister and the general",
            ],
        ),
        (
            "postman-2p.txt",
            &[
                // A Soldier may name the Soldier.
                "seat 1 plays the soldier on seat 0, naming the soldier\n  seat 0 is out, holding the soldier",
                // Aimed at oneself: no effect.
                "seat 0 plays the general on seat 0\n  no effect: the card was aimed at its player",
                // The winner of round 1 does not lead round 2.
                "seat 1 wins it (seat 1: knight)\n  round 2 begins; seat 0 plays first",
                // A Princess discarded by a Wizard: still in, draws.
                "seat 0 discards the princess\n  seat 0 draws the wizard",
                // The Minister drawn with the General: 13, out.
                "seat 1 draws the minister\n  seat 1 is out, holding the general and the minister",
            ],
        ),
        (
            "postman-4p-tie-goes-to-lowest-seat.txt",
            &[
                "seat 3 plays the general on seat 1\n  no effect: seat 1 is out of the round",
                // Seat 3 comes before seat 0 in turn order from seat 1.
                "round 4 begins; seat 1 plays first",
                "the round ends; seat 0 wins it (seat 3: soldier, seat 0: soldier)",
            ],
        ),
        (
            "postman-4p-wizard-on-empty-deck.txt",
            &["seat 3 discards the princess\n  seat 3 is out\n  the round ends"],
        ),
    ];
    for (name, lines) in checks {
        let t = text(name);
        for l in lines {
            assert!(t.contains(l), "{name} no longer shows:\n{l}");
        }
    }
}
