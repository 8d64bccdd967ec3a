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
