//! A tournament page's JSON twin, written once per page.
//!
//! A kept page (a finished tournament's, or a big running one's for a
//! moment, [`super::super::kept`]) is shown to many requests; its JSON
//! twin lists every game and every pair of the crosstable, which for a
//! round-robin of 256 entries is about 9 ms of writing. Each page writes
//! it when first asked and keeps the bytes; a big tournament's is
//! written off the runtime's threads, as its page was put together.

use std::sync::Arc;

use bytes::Bytes;

use super::{off_runtime, TournamentView, OFF_RUNTIME};

impl TournamentView {
    /// The page as JSON, written when first asked for and kept with the
    /// page. `None` if it cannot be written (it always can: its values are
    /// plain numbers and strings).
    pub fn json(&self) -> Option<Bytes> {
        self.json
            .get_or_init(|| serde_json::to_vec(self).ok().map(Bytes::from))
            .clone()
    }

    /// Whether [`TournamentView::json`] has been written.
    fn json_written(&self) -> bool {
        self.json.get().is_some()
    }
}

/// `view`'s JSON ([`TournamentView::json`]), written on tokio's blocking
/// threads the first time for a tournament of [`OFF_RUNTIME`] planned
/// games or more. `None` if it cannot be written, or when the runtime shuts
/// down first.
pub async fn json_of(view: &Arc<TournamentView>) -> Option<Bytes> {
    if view.json_written() || view.games.len() < OFF_RUNTIME {
        return view.json();
    }
    let v = Arc::clone(view);
    off_runtime(move || v.json()).await.flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournaments::test_games::planned;
    use croupier_store::tournaments::EntryRow;

    fn page(games: usize) -> Arc<TournamentView> {
        let t = crate::tournaments::test_games::cup("round-robin", 1, 1, "running");
        let entries = [1, 2].map(|b| EntryRow {
            tournament_id: 1,
            frozen: true,
            ..EntryRow::new(b, b, format!("bot{b}"), croupier_store::BotKind::House)
        });
        let games: Vec<_> = (0..games)
            .map(|i| planned(1, ["1,2", "2,1"][i % 2], "pending"))
            .collect();
        Arc::new(super::super::assemble(t, &entries, &games))
    }

    #[tokio::test]
    async fn a_pages_json_is_written_once_and_is_its_serialisation() {
        for games in [3, OFF_RUNTIME] {
            let v = page(games);
            assert!(!v.json_written());
            let first = json_of(&v).await.unwrap();
            assert_eq!(first, serde_json::to_vec(&*v).unwrap(), "{games} games");
            let again = json_of(&v).await.unwrap();
            assert_eq!(first.as_ptr(), again.as_ptr(), "written once");
            // The kept bytes are not part of the JSON.
            let value: serde_json::Value = serde_json::from_slice(&first).unwrap();
            assert!(value.get("json").is_none());
            assert_eq!(value["games"].as_array().unwrap().len(), games);
        }
    }
}
