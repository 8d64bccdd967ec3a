//! A game's seat views, copied to the database for the other instances as
//! they change (and sent to them in a notification, in the same statement:
//! see `cache`). One writer task per instance writes the views of all its
//! games that changed since its last write in one statement, so a busy
//! instance makes one round trip for many moves. The answers to moves
//! relayed from other instances ride in the same statement, after the
//! views they follow ([`LiveGame::flushed_with`]).
//!
//! A game dealt between two bots of this instance while it was alone has
//! no seats in the table (`Hub::share_deal`): its writer inserts them
//! with the first views it writes once another instance comes, before the
//! newcomer serves (it waits a heartbeat and a half, see `Crowd`). The
//! game's end removes the rows only if they may be there, and after any
//! write under way, so that no write brings them back ([`Rows`]).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_store::postgres::cluster::{fits, Cluster, GameViews};
use tokio::sync::{mpsc, oneshot, watch, Notify};

/// Whether a game's seats are in the shared table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rows {
    /// Not written: the game was dealt while this instance was alone.
    Unwritten,
    /// A write of them failed: they may be there or not.
    Maybe,
    /// Written.
    Written,
    /// The game is over: they are removed, and never written again.
    Ended,
}

use super::super::game::LiveGame;
use super::super::relay::Crowd;

/// At most this many games' views per statement.
const MAX_BATCH: usize = 256;

/// The changes of a game's views and how far they are in the database.
#[derive(Debug)]
pub(in crate::hub) struct ViewSync {
    /// Bumped by the seats on every change.
    pub(in crate::hub) version: Arc<watch::Sender<u64>>,
    /// The last version written.
    written: watch::Sender<u64>,
    /// Wakes the game's writer: an answer waits for the views.
    poke: Notify,
    /// Whether other instances run (alone, the views are not written).
    crowd: Arc<Crowd>,
    /// The instance's writer.
    writer: ViewWriter,
    /// Notifications to send with the next write (answers to relayed
    /// moves), each told whether it went; `None` once the game's writer
    /// has stopped.
    carried: Mutex<Option<Vec<Carried>>>,
    /// This instance (the game's home).
    home: i64,
    /// Whether the game's seats are in the table; held by the writer while
    /// it writes, and by the game's end.
    rows: tokio::sync::Mutex<Rows>,
}

/// A notification `(channel, payload)` sent with a game's views, and who
/// learns whether it went.
type Carried = ((String, String), oneshot::Sender<bool>);

impl ViewSync {
    pub(super) fn new(crowd: Arc<Crowd>, writer: ViewWriter, home: i64) -> ViewSync {
        ViewSync {
            version: Arc::new(watch::channel(0).0),
            written: watch::channel(0).0,
            poke: Notify::new(),
            crowd,
            writer,
            carried: Mutex::new(Some(Vec::new())),
            home,
            rows: tokio::sync::Mutex::new(Rows::Unwritten),
        }
    }

    fn carried(&self) -> MutexGuard<'_, Option<Vec<Carried>>> {
        self.carried.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The deal wrote the game's seats.
    pub(in crate::hub) async fn rows_written(&self) {
        *self.rows.lock().await = Rows::Written;
    }

    /// The game is over (and stored, or closed): no write adds its seats
    /// from now on (one under way is waited for). Whether they may be in
    /// the table, to be removed.
    pub(in crate::hub) async fn rows_end(&self) -> bool {
        let was = std::mem::replace(&mut *self.rows.lock().await, Rows::Ended);
        matches!(was, Rows::Maybe | Rows::Written)
    }
}

/// How soon seats that failed to go in are written again.
const SEATS_RETRY: Duration = Duration::from_millis(250);

/// How long an answer waits for its views before it goes without them
/// (the writer retries what fails on the next change).
const FLUSH_WAIT: Duration = Duration::from_secs(2);

impl LiveGame {
    /// Waits until the views as they are now are in the database (at most
    /// [`FLUSH_WAIT`]).
    /// Nothing to wait for while this instance is alone: no other instance
    /// reads them.
    pub(in crate::hub) async fn flushed(&self) {
        if let Some(s) = &self.sync {
            if s.crowd.alone() {
                return;
            }
            let target = *s.version.borrow();
            let mut w = s.written.subscribe();
            if *w.borrow() >= target {
                return;
            }
            s.poke.notify_one();
            let _ = croupier_store::waits::timed(
                "views: an answer waits for its views",
                tokio::time::timeout(FLUSH_WAIT, w.wait_for(|v| *v >= target)),
            )
            .await;
        }
    }

    /// Sends `notice` (the answer to a relayed move) in the statement that
    /// writes the views as they are now, after them; whether it went. Not
    /// sent (`false`: the caller sends it itself) while this instance is
    /// alone, when the views are written already (a refused move changes
    /// none: the answer need not queue behind the view writer), once the
    /// game's writer has stopped, or if the write failed or took longer
    /// than [`FLUSH_WAIT`]. Nor is a payload too long for a notification:
    /// it would fail the whole statement, and with it the views of the
    /// other games written in it.
    pub(in crate::hub) async fn flushed_with(&self, notice: (String, String)) -> bool {
        let Some(s) = &self.sync else {
            return false;
        };
        if !fits(&notice.1) {
            return false;
        }
        if s.crowd.alone() || *s.version.borrow() <= *s.written.borrow() {
            return false;
        }
        let (tx, rx) = oneshot::channel();
        match s.carried().as_mut() {
            Some(pending) => pending.push((notice, tx)),
            None => return false,
        }
        s.poke.notify_one();
        matches!(
            croupier_store::waits::timed(
                "views: a relayed answer waits for its views",
                tokio::time::timeout(FLUSH_WAIT, rx),
            )
            .await,
            Ok(Ok(true))
        )
    }
}

/// Copies a game's seat views to the database as they change, until the
/// game is over and stored. While the instance is alone the copies are
/// skipped; they are made when another instance joins, or when an answer
/// waits for them. The first copy after the instance was alone at the
/// deal writes the seats themselves (see [`Rows`]).
pub(in crate::hub) async fn write_views(game: Arc<LiveGame>) {
    let Some(sync) = game.sync.clone() else {
        return;
    };
    let mut changes = sync.version.subscribe();
    let mut joined = sync.crowd.joined();
    let mut stored = game.stored.clone();
    // Whether the seats are in the table for good (written, or the game
    // ended): only a write that may insert them holds the game's `rows`
    // lock, which the end waits for.
    let mut settled = matches!(*sync.rows.lock().await, Rows::Written);
    // A first look before any change: another instance may have come
    // since the deal found this one alone.
    loop {
        // The answers first, then the version: an answer was queued after
        // its move changed the views (the runner delivers the views before
        // it answers), so the version read next includes that change, and
        // the answer never goes without the views it follows.
        let carried = std::mem::take(sync.carried().get_or_insert_with(Vec::new));
        let version = *changes.borrow_and_update();
        joined.borrow_and_update();
        // An answer to carry means another instance is there, whatever
        // the last heartbeat said.
        let shared = !carried.is_empty() || !sync.crowd.alone();
        let mut rows = None;
        if shared && !settled {
            let r = sync.rows.lock().await;
            settled = matches!(*r, Rows::Written | Rows::Ended);
            rows = (!settled).then_some(r);
        }
        let insert = rows.is_some();
        let stale = shared && (insert || version > *sync.written.borrow());
        if stale || !carried.is_empty() {
            // Views already written are not written again for an answer.
            let views: Vec<(String, bool, bool)> = if stale {
                game.seats
                    .iter()
                    .map(|s| {
                        let v = s.view();
                        (v.status.to_string(), v.has_bid, v.over)
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let (also, told): (Vec<_>, Vec<_>) = carried.into_iter().unzip();
            let write = GameViews {
                game: game.id,
                version,
                views,
                also,
                seats: if insert {
                    super::seat_rows(&game, sync.home)
                } else {
                    Vec::new()
                },
            };
            let ok = sync.writer.write(write).await;
            if let Some(mut r) = rows {
                *r = if ok { Rows::Written } else { Rows::Maybe };
                settled = ok;
            }
            if ok && stale {
                sync.written.send_replace(version);
            }
            for t in told {
                let _ = t.send(ok);
            }
        }
        // Seats that failed to go in are tried again soon, not only at
        // the game's next change: another instance serves meanwhile.
        let retry = shared && !settled;
        tokio::select! {
            r = changes.changed() => if r.is_err() { break },
            r = joined.changed() => if r.is_err() { break },
            _ = sync.poke.notified() => {}
            _ = stored.wait_for(Option::is_some) => break,
            () = tokio::time::sleep(SEATS_RETRY), if retry => {}
        }
    }
    // Whoever still waits to send with the views sends alone.
    sync.carried().take();
}

type Job = (GameViews, oneshot::Sender<bool>);

/// The instance's view writer: the views of every game that changed, in
/// one statement per round trip (cheap to clone).
#[derive(Debug, Clone)]
pub(in crate::hub) struct ViewWriter {
    tx: mpsc::UnboundedSender<Job>,
}

impl ViewWriter {
    /// Starts the writer task (it ends when the last handle is dropped).
    pub(super) fn start(db: Cluster) -> ViewWriter {
        let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
        tokio::spawn(async move {
            // One statement at a time, with whatever queued meanwhile: two
            // at once made more, smaller statements and no faster answers
            // on a busy machine (bench server --instances 2).
            while let Some(first) = rx.recv().await {
                let (mut games, mut told) = (Vec::new(), Vec::new());
                for (views, reply) in std::iter::once(first)
                    .chain(std::iter::from_fn(|| rx.try_recv().ok()).take(MAX_BATCH - 1))
                {
                    games.push(views);
                    told.push(reply);
                }
                let ok = match db.write_views(&games).await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!("cannot write the views of {} games: {e}", games.len());
                        false
                    }
                };
                for reply in told {
                    let _ = reply.send(ok);
                }
            }
        });
        ViewWriter { tx }
    }

    /// Writes one game's views (with the others' waiting); whether they
    /// are written.
    async fn write(&self, views: GameViews) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.tx.send((views, tx)).is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }
}
