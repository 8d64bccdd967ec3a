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
//! makes them once and keeps them.
//!
//! A running tournament's page is made again for each request, unless it
//! is big: once a page of it listed [`BIG`] planned games or more (rounds
//! are planned one at a time; a round-robin of 64 bots, with one deal a
//! table played both ways, passes 2,000 about half-way), its page is shown
//! for up to [`FRESH`] from when its making began, while the tournament's
//! row stays the same (its round, its status), and one request at a time
//! makes it again, the others for the same tournament waiting to show
//! what it made (even if its making took longer than [`FRESH`]; at most
//! [`RUNNING_PAGES`] big tournaments' pages are kept). Until a process
//! has made a page of a running tournament, its size is not known: its
//! first page is made by one request too, and the others wait for it (if
//! it is big, they show it; if it is small, each then makes its own). A half-played round-robin of 256 entries
//! (32,768 planned games) takes about 48 ms to put together (and more to
//! read): made for each request, a few spectators reloading it would keep
//! the server's threads busy. (It is put together off the runtime's
//! threads, [`view::OFF_RUNTIME`], so that it holds up no request
//! meanwhile.)
//!
//! Nothing of it moves on: even the rating that breaks the standings' last
//! ties is rated from the tournament's own games. Only the winner kept
//! with it may change, once, when `croupier db recount` decides it again
//! from its games ([`super::winners`]): a brief or page kept with another
//! winner than the tournament's row now names is made again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use croupier_store::tournaments::{TournamentId, TournamentRow};
use croupier_store::{Store, StoreError};

use super::view::{self, Brief, TournamentView};

/// Briefs kept at most (a brief is a few hundred bytes).
const BRIEFS: usize = 4096;
/// Tournament pages kept at most (a page lists every game: a cup of 1,000
/// games is about 300 KiB, and its JSON twin, kept with it once asked
/// for, about as much again; a finished round-robin of 256 entries, 65,280
/// games, has a JSON twin of about 14 MB).
const VIEWS: usize = 32;
/// Running (and scheduled) tournaments whose size is kept at most.
const RUNNING: usize = 64;
/// Big running tournaments whose last page is kept at most: when more
/// are, the one made longest ago forgets its page and its size.
const RUNNING_PAGES: usize = 8;
/// A running tournament with this many planned games or more is big: its
/// page is kept for [`FRESH`] (and put together off the runtime's threads).
pub const BIG: usize = 2_000;
const _: () = assert!(BIG >= view::OFF_RUNTIME);
/// How long a big running tournament's page is shown once made.
pub const FRESH: Duration = Duration::from_secs(1);

/// What is known of a running tournament's size, and what its next making
/// holds.
#[derive(Debug, Clone)]
struct Running {
    size: Size,
    /// Held while a page of a big tournament, or of one whose size is not
    /// known yet, is made.
    making: Arc<tokio::sync::Mutex<()>>,
}

/// A running tournament's size, from its last page.
#[derive(Debug, Clone)]
enum Size {
    /// No page of it made yet (since this process started, or since it
    /// was forgotten to make room).
    Unknown,
    /// Under [`BIG`] planned games: each request makes its own page.
    Small,
    /// The last page, when its making began and when it ended.
    Big {
        page: Arc<TournamentView>,
        began: Instant,
        ended: Instant,
    },
}

/// The kept briefs and pages of one server process.
#[derive(Debug)]
pub struct Kept {
    briefs: Mutex<Shelf<Brief>>,
    views: Mutex<Shelf<Arc<TournamentView>>>,
    /// What is known of running tournaments: their size, and big ones'
    /// last pages.
    running: Mutex<Shelf<Running>>,
    /// [`BIG`] and [`FRESH`] (other values in tests).
    big: usize,
    fresh: Duration,
}

impl Default for Kept {
    fn default() -> Self {
        Kept::with_running(BIG, FRESH)
    }
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

impl Shelf<Running> {
    /// Keeps what a page of running tournament `id` showed of its size,
    /// unless the tournament has been forgotten meanwhile (it finished, or
    /// made room) or a later page is kept; a small one's only if it was not known as small already, so
    /// that many requests to it do not keep it ahead of big ones. Past
    /// [`RUNNING_PAGES`] big ones, the one made longest ago forgets its
    /// page.
    fn learn(&mut self, id: TournamentId, size: Size) {
        let Some((_, known)) = self.items.get(&id) else {
            return;
        };
        let older = match (&known.size, &size) {
            // A tournament's planned games never go: a small page after a
            // big one, or a big one begun before it, was made earlier.
            (Size::Big { .. }, Size::Small) => true,
            (Size::Big { began: last, .. }, Size::Big { began, .. }) => began < last,
            (Size::Small, Size::Small) => true,
            _ => false,
        };
        if older {
            return;
        }
        // The lock stays the tournament's (a request may be waiting on it).
        let making = Arc::clone(&known.making);
        self.keep(RUNNING, id, Running { size, making });
        let mut big: Vec<(Instant, TournamentId)> = self
            .items
            .iter()
            .filter_map(|(id, (_, r))| match r.size {
                Size::Big { ended, .. } => Some((ended, *id)),
                _ => None,
            })
            .collect();
        if big.len() > RUNNING_PAGES {
            big.sort_unstable();
            for (_, id) in &big[..big.len() - RUNNING_PAGES] {
                if let Some((_, r)) = self.items.get_mut(id) {
                    r.size = Size::Unknown;
                }
            }
        }
    }
}

/// Whether nothing of tournament `t` changes any more.
fn is_over(t: &TournamentRow) -> bool {
    matches!(t.status.as_str(), "finished" | "cancelled")
}

impl Kept {
    /// Keeps pages of running tournaments of `big` planned games or more
    /// for `fresh`.
    fn with_running(big: usize, fresh: Duration) -> Kept {
        Kept {
            briefs: Mutex::default(),
            views: Mutex::default(),
            running: Mutex::default(),
            big,
            fresh,
        }
    }

    fn running(&self) -> MutexGuard<'_, Shelf<Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

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
    /// if `t` now keeps another winner than the kept page's); if it is
    /// running and big, kept for a moment ([`Kept::running_view`]).
    pub async fn view(
        &self,
        store: &dyn Store,
        t: TournamentRow,
    ) -> Result<Arc<TournamentView>, StoreError> {
        if !is_over(&t) {
            return self.running_view(store, t).await;
        }
        // Its last page while it ran is kept no more.
        self.running().items.remove(&t.id);
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

    /// A running tournament's page: made afresh, unless it is big (its
    /// last page listed [`BIG`] planned games or more) and that page's
    /// making began less than [`FRESH`] ago, from the same row of the
    /// tournament. A big tournament's page, and the first page of one whose
    /// size is not known yet, is made by one request while the others
    /// wait: they show the page made if it is big, and each makes its own
    /// if it is small, from another row of the tournament, or if that
    /// making failed.
    async fn running_view(
        &self,
        store: &dyn Store,
        t: TournamentRow,
    ) -> Result<Arc<TournamentView>, StoreError> {
        let id = t.id;
        let arrived = Instant::now();
        // The last page, if it may be shown: made from the same row, and
        // begun less than `fresh` ago or (to one that waited) made since
        // this request came.
        let shown = |r: &Running, waited: bool| match &r.size {
            Size::Big { page, began, ended } => (page.tournament == t
                && (began.elapsed() < self.fresh || waited && *ended >= arrived))
                .then(|| Arc::clone(page)),
            _ => None,
        };
        let known = {
            let mut running = self.running();
            match running.get(id) {
                Some(r) => r,
                None => {
                    let r = Running {
                        size: Size::Unknown,
                        making: Arc::default(),
                    };
                    running.keep(RUNNING, id, r.clone());
                    r
                }
            }
        };
        if let Some(page) = shown(&known, false) {
            return Ok(page);
        }
        let _making = match known.size {
            Size::Small => None,
            Size::Unknown | Size::Big { .. } => {
                let making = Arc::clone(&known.making).lock_owned().await;
                // Made by a request this one waited for?
                let now = self.running().get(id);
                if let Some(page) = now.as_ref().and_then(|r| shown(r, true)) {
                    return Ok(page);
                }
                match now.map(|r| r.size) {
                    // Small: each request makes its own.
                    Some(Size::Small) => None,
                    // Not made yet, from another row, or that making
                    // failed: this one makes it, the others waiting.
                    _ => Some(making),
                }
            }
        };
        let began = Instant::now();
        let page = Arc::new(view::view(store, t.clone()).await?);
        let size = if page.games.len() >= self.big {
            Size::Big {
                page: Arc::clone(&page),
                began,
                ended: Instant::now(),
            }
        } else {
            Size::Small
        };
        self.running().learn(id, size);
        Ok(page)
    }

    /// How many briefs and pages of tournaments that are over are kept
    /// (for tests and benchmarks).
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
    use crate::tournaments::test_games::{page_of, two_bots, won};
    use croupier_store::tournaments::{NewTournament, NewTournamentGame};

    #[tokio::test]
    async fn a_big_running_tournaments_page_is_kept_a_moment_and_made_once_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let (store, [a, b], entries) = two_bots(dir.path()).await;
        let ts = store.tournaments();
        let t = NewTournament::round_robin("on", "goofspiel", entries.clone());
        let id = ts.create_tournament(&t).await.unwrap();
        ts.start_tournament(id, &entries, 3, "t0").await.unwrap();
        let mut played = 0;
        let mut play = || {
            played += 1;
            let store = &store;
            let game = won(id, vec![a, b], played);
            async move { store.import_games(vec![game]).await.unwrap() }
        };
        play().await;
        let page = |kept| page_of(&store, kept, id);
        let done = |v: &Arc<TournamentView>| v.progress.done;

        // Small (under `big` games): made again for each request.
        let small = Kept::with_running(1_000, Duration::from_secs(600));
        assert_eq!(done(&page(&small).await), 1);
        play().await;
        assert_eq!(done(&page(&small).await), 2);

        // Big: shown again while fresh and the tournament's row is the same.
        let big = Kept::with_running(1, Duration::from_secs(600));
        let first = page(&big).await;
        play().await;
        let again = page(&big).await;
        assert!(Arc::ptr_eq(&first, &again) && done(&again) == 2);
        // A round planned changes the row: made again, once for many
        // requests at once.
        let plan = NewTournamentGame {
            table_no: 0,
            game_no: 0,
            seats: vec![a, b],
            seed: 3,
        };
        assert!(ts.plan_round(id, 2, &[plan]).await.unwrap());
        let many = futures::future::join_all((0..8).map(|_| page(&big))).await;
        assert_eq!(done(&many[0]), 3);
        assert!(!Arc::ptr_eq(&many[0], &first));
        assert!(many.iter().all(|v| Arc::ptr_eq(v, &many[0])), "made once");

        // Right after a start (nothing known of it): many requests at
        // once get one page if it is big, and each its own if it is small.
        let started = Kept::with_running(1, Duration::from_secs(600));
        let many = futures::future::join_all((0..8).map(|_| page(&started))).await;
        assert!(many.iter().all(|v| Arc::ptr_eq(v, &many[0])), "made once");
        let small = Kept::with_running(1_000, Duration::from_secs(600));
        let many = futures::future::join_all((0..8).map(|_| page(&small))).await;
        assert!(many.iter().all(|v| done(v) == 3));
        for (i, v) in many.iter().enumerate() {
            let same = many[..i].iter().any(|w| Arc::ptr_eq(v, w));
            assert!(!same, "each made its own");
        }
        assert!(matches!(small.running().get(id).unwrap().size, Size::Small));

        // Past `fresh`: made again; but the requests that waited for that
        // making show its page, however long it took.
        let stale = Kept::with_running(1, Duration::ZERO);
        let first = page(&stale).await;
        assert!(!Arc::ptr_eq(&first, &page(&stale).await));
        // (The making's lock is held until all eight have come: else the
        // first could end its making, its reads answered at once, before
        // the others came, and they would make it again.)
        let row = ts.tournament(id).await.unwrap().unwrap();
        let making = Arc::clone(&stale.running().get(id).unwrap().making);
        let held = making.lock_owned().await;
        let requests =
            futures::future::join_all((0..8).map(|_| stale.view(store.as_ref(), row.clone())));
        let release = async move {
            tokio::task::yield_now().await;
            drop(held);
        };
        let (many, ()) = futures::future::join(requests, release).await;
        let many: Vec<_> = many.into_iter().map(Result::unwrap).collect();
        assert!(many.iter().all(|v| Arc::ptr_eq(v, &many[0])), "made once");

        // Once it is over, its last page while it ran goes.
        assert!(big.running().items.contains_key(&id));
        assert!(ts.end_tournament(id, "finished", "t1", None).await.unwrap());
        assert_eq!(done(&page(&big).await), 3);
        assert!(!big.running().items.contains_key(&id));
    }

    #[test]
    fn what_is_learnt_keeps_eight_big_pages_and_brings_back_no_tournament() {
        use crate::tournaments::test_games::{cup, named};
        let page = Arc::new(view::assemble(
            cup("round-robin", 1, 1, "running"),
            &named(&["a", "b"]),
            &[],
        ));
        let big = || Size::Big {
            page: Arc::clone(&page),
            began: Instant::now(),
            ended: Instant::now(),
        };
        let unknown = || Running {
            size: Size::Unknown,
            making: Arc::default(),
        };
        let mut shelf = Shelf::default();
        // Not known (finished, or forgotten to make room): not brought back.
        shelf.learn(1, big());
        assert!(shelf.items.is_empty());
        let count = |shelf: &Shelf<Running>, f: fn(&Size) -> bool| {
            shelf.items.values().filter(|(_, r)| f(&r.size)).count()
        };
        for id in 0..12 {
            shelf.keep(RUNNING, id, unknown());
            shelf.learn(id, big());
        }
        assert_eq!(
            count(&shelf, |s| matches!(s, Size::Big { .. })),
            RUNNING_PAGES
        );
        assert_eq!(
            count(&shelf, |s| matches!(s, Size::Unknown)),
            12 - RUNNING_PAGES
        );
        // The pages made longest ago were forgotten.
        for id in 0..12 {
            let kept = matches!(shelf.get(id).unwrap().size, Size::Big { .. });
            assert_eq!(kept, id >= (12 - RUNNING_PAGES) as i64, "{id}");
        }
        // A small one known as small is not kept again (ahead of the others).
        shelf.keep(RUNNING, 20, unknown());
        shelf.learn(20, Size::Small);
        let at = shelf.items[&20].0;
        shelf.learn(20, Size::Small);
        assert_eq!(shelf.items[&20].0, at);
        // Its lock stays the same through what is learnt.
        let lock = Arc::clone(&shelf.get(20).unwrap().making);
        let earlier = big();
        std::thread::sleep(Duration::from_millis(2));
        let later = big();
        let began = |s: &Size| match s {
            Size::Big { began, .. } => Some(*began),
            _ => None,
        };
        shelf.learn(20, later.clone());
        assert!(Arc::ptr_eq(&lock, &shelf.get(20).unwrap().making));
        // A page begun earlier, small or big, does not replace it.
        shelf.learn(20, Size::Small);
        shelf.learn(20, earlier);
        assert_eq!(began(&shelf.get(20).unwrap().size), began(&later));
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
