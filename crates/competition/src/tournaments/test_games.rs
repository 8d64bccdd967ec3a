//! Games for the tournaments' tests.

use croupier_store::tournaments::TournamentId;
use croupier_store::web::ImportGame;
use croupier_store::GameEnd;

/// Goofspiel game `i` of `bots` (by seat) won by the first, in tournament
/// `t`, to import.
pub(crate) fn won(t: TournamentId, bots: Vec<i64>, i: i64) -> ImportGame {
    ImportGame {
        game: "goofspiel".into(),
        bots,
        seed: i,
        started: format!("2026-12-05T10:{i:02}:00Z"),
        end: GameEnd {
            finished: format!("2026-12-05T10:{i:02}:30Z"),
            scores: vec![Some(2), Some(1)],
            ranks: vec![1, 2],
            forfeited_by: None,
            record: "{}".into(),
            facts: None,
        },
        tournament: Some(t),
    }
}
