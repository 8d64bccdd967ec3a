//! Briefs and pages of tournaments that are over, kept in memory once
//! made (issue 53).
//!
//! A tournament's page reads every planned game of it (with its game's
//! scores, kept on the planned game since 6 Dec 2026: 9–11 ms for a cup
//! of 1,000 games on SQLite at a million games, 4.5–5 on PostgreSQL), and
//! so did its brief (the lists) before winners were kept: a cup of 1,000
//! games made a page of 25 briefs take 200 ms. Once
//! a tournament is finished, or cancelled with none of its games still
//! being played, none of that changes any more, so each server process
//! makes them once and keeps them. Any other tournament is made afresh
//! every time.
//!
//! Nothing of it moves on: even the rating that breaks the standings' last
//! ties is rated from the tournament's own games. Only the winner kept
//! with it may change, once, when `croupier db recount` decides it again
//! from its games ([`super::winners`]): a brief or page kept with another
//! winner than the tournament's row now names is made again.

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

    /// The kept brief of `t`, if it is over and was made before with the
    /// winner `t` keeps now (`croupier db recount` may keep another).
    pub(super) fn brief(&self, t: &TournamentRow) -> Option<Brief> {
        let kept = is_over(t).then(|| self.briefs().get(t.id))??;
        (kept.tournament.winner == t.winner).then_some(kept)
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
    /// over and none of its games is still being played (and made again
    /// if `t` now keeps another winner than the kept page's).
    pub async fn view(
        &self,
        store: &dyn Store,
        t: TournamentRow,
    ) -> Result<Arc<TournamentView>, StoreError> {
        if !is_over(&t) {
            return Ok(Arc::new(view::view(store, t).await?));
        }
        let kept = self.views().get(t.id);
        if let Some(v) = kept.filter(|v| v.tournament.winner == t.winner) {
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
