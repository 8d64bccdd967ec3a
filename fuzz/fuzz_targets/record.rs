//! The record loader of `croupier replay`: a JSON file read as a record and
//! re-played through the rules of its game, with the transcript.
#![no_main]
use croupier_rules::{Game, GameKind, GameVisitor, Record};
use libfuzzer_sys::fuzz_target;

struct Transcript<'a>(&'a Record);

impl GameVisitor for Transcript<'_> {
    type Output = ();
    fn visit<G: Game>(self) {
        let (_text, result) = self.0.transcript::<G>();
        // A record that replays must verify, and the other way round.
        assert_eq!(result.is_ok(), self.0.verify::<G>().is_ok());
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(record) = serde_json::from_slice::<Record>(data) else {
        return;
    };
    if let Ok(kind) = record.game.parse::<GameKind>() {
        kind.visit(Transcript(&record));
    }
});
