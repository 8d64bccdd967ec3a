//! Briefs and pages of tournaments that are over, kept in memory once
//! made (issue 53).
//!
//! A tournament's page reads every planned game of it and its games'
//! scores, and so did its brief (the lists) before winners were kept: a
//! cup of 1,000 games made a page of 25 briefs take 200 ms. Once
//! a tournament is finished, or cancelled with none of its games still
//! being played, none of that changes any more, so each server process
//! makes them once and keeps them. Any other tournament is made afresh
//! every time.
//!
//! One thing a kept page does not follow: the standings break their last
//! ties by the entrants' ladder ratings, which go on moving after the
//! tournament; a kept page keeps the order of its first making.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use croupier_store::tournaments::{TournamentId, TournamentRow};
use croupier_store::{Store, StoreError};

use super::view::{self, Brief, TournamentView};

/// Briefs kept at most (a brief is a few hundred bytes).
const BRIEFS: usize = 4096;
/// Tournament pages kept at most (a page lists every game: a cup of 1,000
/// games is about 300 KiB).
const VIEWS: usize = 32;

/// The kept briefs and pages of one server process.
#[derive(Debug, Default)]
pub struct Kept {
    briefs: Mutex<Shelf<Brief>>,
    views: Mutex<Shelf<Arc<TournamentView>>>,
}

/// Values by tournament, each with the order it was kept in: when full,
/// the first kept makes room (a crawler paging through old tournaments
/// does not push out the newest ones for good).
#[derive(Debug)]
struct Shelf<V> {
    items: HashMap<TournamentId, (u64, V)>,
    next: u64,
}

impl<V> Default for Shelf<V> {
    fn default() -> Self {
        Shelf {
            items: HashMap::new(),
            next: 0,
        }
    }
}

impl<V: Clone> Shelf<V> {
    fn get(&self, id: TournamentId) -> Option<V> {
        self.items.get(&id).map(|(_, v)| v.clone())
    }

    /// Keeps `value` under `id`, the first kept making room when the shelf
    /// holds `most`.
    fn keep(&mut self, most: usize, id: TournamentId, value: V) {
        if self.items.len() >= most && !self.items.contains_key(&id) {
            let first = self
                .items
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| *k);
            if let Some(first) = first {
                self.items.remove(&first);
            }
        }
        self.items.insert(id, (self.next, value));
        self.next += 1;
    }
}

/// Whether nothing of tournament `t` changes any more.
fn is_over(t: &TournamentRow) -> bool {
    matches!(t.status.as_str(), "finished" | "cancelled")
}

impl Kept {
    fn briefs(&self) -> MutexGuard<'_, Shelf<Brief>> {
        self.briefs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn views(&self) -> MutexGuard<'_, Shelf<Arc<TournamentView>>> {
        self.views.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The kept brief of `t`, if it is over and was made before.
    pub(super) fn brief(&self, t: &TournamentRow) -> Option<Brief> {
        is_over(t).then(|| self.briefs().get(t.id))?
    }

    /// Keeps brief `b` if its tournament is over and none of its games is
    /// still being played (a cancelled tournament's games in progress
    /// finish).
    pub(super) fn keep_brief(&self, b: &Brief) {
        if is_over(&b.tournament) && b.progress.running == 0 {
            self.briefs().keep(BRIEFS, b.tournament.id, b.clone());
        }
    }

    /// Tournament `t`'s page ([`view::view`]): kept once made if it is
    /// over and none of its games is still being played.
    pub async fn view(
        &self,
        store: &dyn Store,
        t: TournamentRow,
    ) -> Result<Arc<TournamentView>, StoreError> {
        if !is_over(&t) {
            return Ok(Arc::new(view::view(store, t).await?));
        }
        if let Some(v) = self.views().get(t.id) {
            return Ok(v);
        }
        let id = t.id;
        let v = Arc::new(view::view(store, t).await?);
        if v.progress.running == 0 {
            self.views().keep(VIEWS, id, Arc::clone(&v));
        }
        Ok(v)
    }

    /// How many briefs and pages are kept (for tests and benchmarks).
    pub fn len(&self) -> (usize, usize) {
        (self.briefs().items.len(), self.views().items.len())
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == (0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_store::tournaments::{EntryRow, NewTournament};
    use croupier_store::web::ImportGame;
    use croupier_store::{BotKind, GameEnd};

    /// A game of `bots` won by the first, in tournament `t`.
    fn won(t: TournamentId, bots: Vec<i64>, i: i64) -> ImportGame {
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

    #[tokio::test]
    async fn a_tournament_that_is_over_is_made_once_and_a_running_one_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = croupier_store::open(&url).await.unwrap();
        let a = store.ensure_house_bot("ha", "goofspiel").await.unwrap();
        let b = store.ensure_house_bot("hb", "goofspiel").await.unwrap();
        let ts = store.tournaments();
        let entries = vec![
            EntryRow::new(a, 0, "ha", BotKind::House),
            EntryRow::new(b, 1, "hb", BotKind::House),
        ];
        let mut ids = Vec::new();
        for name in ["over", "on"] {
            let t = NewTournament::round_robin(name, "goofspiel", entries.clone());
            let id = ts.create_tournament(&t).await.unwrap();
            ts.start_tournament(id, &entries, 1, "t0").await.unwrap();
            store
                .import_games(vec![won(id, vec![a, b], 1)])
                .await
                .unwrap();
            ids.push(id);
        }
        assert!(ts
            .end_tournament(ids[0], "finished", "t1", None)
            .await
            .unwrap());
        let kept = Kept::default();
        let row = |id| {
            let ts = store.tournaments();
            async move { ts.tournament(id).await.unwrap().unwrap() }
        };
        let page = |id| {
            let (store, kept) = (&store, &kept);
            async move { kept.view(store.as_ref(), row(id).await).await.unwrap() }
        };
        let list = |kept| {
            let store = &store;
            async move {
                let rows = store.tournaments().tournament_list().await.unwrap();
                view::briefs(store.as_ref(), kept, rows).await.unwrap()
            }
        };
        let done = |v: &Arc<TournamentView>| v.progress.done;
        let (over, on) = (page(ids[0]).await, page(ids[1]).await);
        assert_eq!((done(&over), done(&on)), (1, 1));
        let briefs = list(&kept).await;
        assert_eq!(kept.len(), (1, 1), "the finished one's brief and page");
        // One more game in each (as no finished tournament gets, but it
        // shows what is made again): the kept page and brief do not see
        // it, the running tournament's do.
        for id in &ids {
            store
                .import_games(vec![won(*id, vec![b, a], 2)])
                .await
                .unwrap();
        }
        assert_eq!(done(&page(ids[0]).await), 1, "kept");
        assert_eq!(done(&page(ids[1]).await), 2, "made again");
        let again = list(&kept).await;
        let progress = |v: &[Brief]| v.iter().map(|b| b.progress.done).collect::<Vec<_>>();
        assert_eq!(progress(&briefs), [1, 1], "the running one is newest");
        assert_eq!(progress(&again), [2, 1]);
        assert_eq!(again[1].winner.as_deref(), Some("ha"));
        // Without the kept ones, everything is made again.
        let fresh = Kept::default();
        assert_eq!(progress(&list(&fresh).await), [2, 2]);
        // Cancelled with a game still being played: not kept, since that
        // game goes on to its end.
        let plan = croupier_store::tournaments::NewTournamentGame {
            table_no: 0,
            game_no: 0,
            seats: vec![a, b],
            seed: 3,
        };
        ts.plan_round(ids[1], 2, &[plan]).await.unwrap();
        let planned = ts.tournament_games(ids[1]).await.unwrap();
        let pending = planned.iter().find(|g| g.status == "pending").unwrap();
        ts.start_tournament_game(pending.id, "goofspiel", &[a, b], 3, "t2")
            .await
            .unwrap();
        assert!(ts
            .end_tournament(ids[1], "cancelled", "t3", Some("late"))
            .await
            .unwrap());
        assert_eq!(page(ids[1]).await.progress.running, 1);
        assert_eq!(list(&kept).await[0].progress.running, 1);
        assert_eq!(kept.len(), (1, 1), "still the finished one's alone");
    }

    #[test]
    fn a_full_shelf_makes_room_with_the_first_kept() {
        let mut shelf = Shelf::default();
        for id in 0..10 {
            shelf.keep(4, id, id * 10);
        }
        assert_eq!(shelf.items.len(), 4);
        let mut kept: Vec<i64> = shelf.items.keys().copied().collect();
        kept.sort_unstable();
        assert_eq!(kept, [6, 7, 8, 9], "the last four kept");
        // Keeping one already there makes no room.
        shelf.keep(4, 9, 91);
        assert_eq!((shelf.items.len(), shelf.get(9)), (4, Some(91)));
        shelf.keep(4, 10, 100);
        assert_eq!(shelf.get(6), None, "the first kept went");
    }
}
