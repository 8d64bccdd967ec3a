//! Games for the tournaments' tests.

use std::path::Path;
use std::sync::Arc;

use croupier_store::tournaments::{EntryRow, TournamentGameRow, TournamentId, TournamentRow};

use super::kept::Kept;
use super::view::TournamentView;
use croupier_store::web::ImportGame;
use croupier_store::{BotId, BotKind, GameEnd, Store};

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

/// A SQLite store in `dir` with the house bots `ha` and `hb`, and their
/// entries.
pub(crate) async fn two_bots(dir: &Path) -> (Arc<dyn Store>, [BotId; 2], Vec<EntryRow>) {
    let url = format!("sqlite://{}", dir.join("t.db").display());
    let store = croupier_store::open(&url).await.unwrap();
    let a = store.ensure_house_bot("ha", "goofspiel").await.unwrap();
    let b = store.ensure_house_bot("hb", "goofspiel").await.unwrap();
    let entries = vec![
        EntryRow::new(a, 0, "ha", BotKind::House),
        EntryRow::new(b, 1, "hb", BotKind::House),
    ];
    (store, [a, b], entries)
}

/// A planned game of tournament 1 in `round`, at `seats`, with `status`
/// (no result).
pub(crate) fn planned(round: i64, seats: &str, status: &str) -> TournamentGameRow {
    TournamentGameRow {
        id: round,
        tournament_id: 1,
        round,
        table_no: 0,
        game_no: 0,
        seats: seats.into(),
        seed: 0,
        status: status.into(),
        game_id: None,
        ranks: None,
        faults: None,
        scores: None,
    }
}

/// Tournament `id`'s page through `kept`, from its row as it is now.
pub(crate) async fn page_of(
    store: &Arc<dyn Store>,
    kept: &Kept,
    id: TournamentId,
) -> Arc<TournamentView> {
    let row = store.tournaments().tournament(id).await.unwrap().unwrap();
    kept.view(store.as_ref(), row).await.unwrap()
}

/// Tournament 1, of two-seat Goofspiel games, two deals a table played
/// both ways.
pub(crate) fn cup(format: &str, rounds: i64, current_round: i64, status: &str) -> TournamentRow {
    TournamentRow {
        id: 1,
        name: "cup".into(),
        game: "goofspiel".into(),
        variant: None,
        format: format.into(),
        rounds,
        deals: 2,
        duplicate: true,
        seats: 2,
        move_ms: 300,
        budget_ms: None,
        starts_at: 0,
        seed: 7,
        status: status.into(),
        current_round,
        all_bots: false,
        created_by: None,
        created_at: "0".into(),
        started_at: None,
        finished_at: None,
        reason: None,
        winner: None,
    }
}

/// The entries of tournament 1, bots 1, 2, … by name.
pub(crate) fn named(names: &[&str]) -> Vec<EntryRow> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| EntryRow {
            tournament_id: 1,
            frozen: true,
            ..EntryRow::new(i as i64 + 1, i as i64, *name, BotKind::House)
        })
        .collect()
}

/// Runs `work` on a runtime of one thread and one blocking thread, and
/// says whether it let another task run meanwhile: for work that awaits
/// nothing else, whether it waited for work sent off the runtime
/// ([`croupier_arena::think::off_runtime`]). The blocking thread is kept
/// busy until that other task has run (Tokio runs blocking work in the
/// order it was sent), so that work sent there cannot be done before it,
/// however fast.
pub(crate) fn yields_to_the_runtime<T>(work: impl std::future::Future<Output = T>) -> (T, bool) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let rt = tokio::runtime::Builder::new_current_thread()
        .max_blocking_threads(1)
        .build()
        .unwrap();
    rt.block_on(async {
        let (open, gate) = std::sync::mpsc::channel::<()>();
        let gatekeeper = tokio::task::spawn_blocking(move || gate.recv());
        let ran = Arc::new(AtomicBool::new(false));
        let other = tokio::spawn({
            let ran = Arc::clone(&ran);
            async move {
                ran.store(true, Ordering::SeqCst);
                open.send(())
            }
        });
        let out = work.await;
        let ran = ran.load(Ordering::SeqCst);
        other.await.unwrap().unwrap();
        gatekeeper.await.unwrap().unwrap();
        (out, ran)
    })
}
