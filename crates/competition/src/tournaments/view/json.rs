//! A tournament page's JSON twin, written once per page.
//!
//! A kept page (a finished tournament's, or a big running one's for a
//! moment, [`super::super::kept`]) is shown to many requests; its JSON
//! twin lists every game and every pair of the crosstable, which for a
//! round-robin of 256 entries half played is 6.8 MB, about 9 ms of
//! writing. Each page writes it when first asked and keeps the bytes; a
//! big tournament's is written off the runtime's threads, as its page was
//! put together.

use std::sync::Arc;

use bytes::Bytes;

use super::{off_runtime, TournamentView, OFF_RUNTIME};

impl TournamentView {
    /// The page written as JSON, shrunk to its length (`Bytes` keeps a
    /// vector's whole room, up to twice its length, for as long as the
    /// page is kept). `None` if it cannot be written (logged; it always
    /// can: its values are plain numbers and strings).
    fn write_json(&self) -> Option<Bytes> {
        match serde_json::to_vec(self) {
            Ok(mut v) => {
                v.shrink_to_fit();
                Some(Bytes::from(v))
            }
            Err(e) => {
                tracing::error!(
                    tournament = %self.tournament.name,
                    "the tournament's page cannot be written as JSON: {e}"
                );
                None
            }
        }
    }
}

/// `view`'s JSON, written when first asked for and kept with the page (a
/// clone keeps it too: a page is not changed once made), once however
/// many requests ask meanwhile (they wait for it). A tournament of
/// [`OFF_RUNTIME`] planned games or more has it written on Tokio's
/// blocking threads. `None` if it cannot be written (logged; then tried
/// again when next asked), or when the runtime shuts down first.
pub async fn json_of(view: &Arc<TournamentView>) -> Option<Bytes> {
    let write = || async {
        if view.games.len() < OFF_RUNTIME {
            return view.write_json().ok_or(());
        }
        let v = Arc::clone(view);
        off_runtime(move || v.write_json())
            .await
            .flatten()
            .ok_or(())
    };
    view.json.get_or_try_init(write).await.ok().cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournaments::test_games::planned;

    fn page(games: usize) -> Arc<TournamentView> {
        let t = crate::tournaments::test_games::cup("round-robin", 1, 1, "running");
        let entries = crate::tournaments::test_games::named(&["a", "b"]);
        let games: Vec<_> = (0..games)
            .map(|i| planned(1, ["1,2", "2,1"][i % 2], "pending"))
            .collect();
        Arc::new(super::super::assemble(t, &entries, &games))
    }

    #[test]
    fn a_pages_json_is_written_once_and_is_its_serialisation() {
        use crate::tournaments::test_games::yields_to_the_runtime;
        for (games, elsewhere) in [(3, false), (OFF_RUNTIME, true)] {
            let v = page(games);
            assert!(v.json.get().is_none());
            let (first, elsewhere_seen) = yields_to_the_runtime(json_of(&v));
            assert_eq!(elsewhere_seen, elsewhere, "{games} games");
            let first = first.unwrap();
            assert_eq!(first, serde_json::to_vec(&*v).unwrap(), "{games} games");
            let (again, elsewhere_seen) = yields_to_the_runtime(json_of(&v));
            assert!(!elsewhere_seen, "written once, read at once");
            assert_eq!(first.as_ptr(), again.unwrap().as_ptr(), "written once");
            // The kept bytes are not part of the JSON.
            let value: serde_json::Value = serde_json::from_slice(&first).unwrap();
            assert!(value.get("json").is_none());
            assert_eq!(value["games"].as_array().unwrap().len(), games);
        }
    }

    #[tokio::test]
    async fn a_big_pages_json_is_written_once_for_many_requests_at_once() {
        let v = page(OFF_RUNTIME);
        let all = futures::future::join_all((0..8).map(|_| json_of(&v))).await;
        let first = all[0].as_ref().unwrap().as_ptr();
        assert!(all.iter().all(|j| j.as_ref().unwrap().as_ptr() == first));
    }
}
