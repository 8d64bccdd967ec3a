//! A game's seat views on their way to the database, for the other
//! instances (issue 13): what is written of each game ([`ViewSync`]: its
//! versions, the answers that ride with them, whether its seats are in the
//! table) and the instance's one writer ([`ViewWriter`]), which writes the
//! views of every game that changed since its last write in one statement.
//! The task that follows a game's changes is `views`.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_store::postgres::cluster::{fits, Cluster, GameViews};
use tokio::sync::{mpsc, oneshot, watch, Notify};

/// Whether a game's seats are in the shared table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rows {
    /// Not written: the game was dealt while this instance was alone.
    Unwritten,
    /// A write of them failed: they may be there or not.
    Maybe,
    /// Written.
    Written,
    /// The game is over: they are removed, and never written again.
    Ended,
}

use super::crowd::Crowd;

/// At most this many games' views per statement.
const MAX_BATCH: usize = 256;

/// The changes of a game's views and how far they are in the database.
#[derive(Debug)]
pub(in crate::hub) struct ViewSync {
    /// Bumped by the seats on every change.
    pub(in crate::hub) version: Arc<watch::Sender<u64>>,
    /// The last version written.
    pub(super) written: watch::Sender<u64>,
    /// Wakes the game's writer: an answer waits for the views.
    pub(super) poke: Notify,
    /// Whether other instances run (alone, the views are not written).
    pub(super) crowd: Arc<Crowd>,
    /// The instance's writer.
    pub(super) writer: ViewWriter,
    /// Notifications to send with the next write (answers to relayed
    /// moves), each told whether it went; `None` once the game's writer
    /// has stopped.
    pub(super) carried: Mutex<Option<Vec<Carried>>>,
    /// This instance (the game's home).
    pub(super) home: i64,
    /// Whether the game's seats are in the table; held by the writer while
    /// it writes, and by the game's end.
    pub(super) rows: tokio::sync::Mutex<Rows>,
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

    pub(super) fn carried(&self) -> MutexGuard<'_, Option<Vec<Carried>>> {
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

/// How long an answer waits for its views before it goes without them
/// (the writer retries what fails on the next change).
const FLUSH_WAIT: Duration = Duration::from_secs(2);

impl ViewSync {
    /// Waits until the views as they are now are in the database (at most
    /// [`FLUSH_WAIT`]).
    /// Nothing to wait for while this instance is alone: no other instance
    /// reads them.
    pub(in crate::hub) async fn flushed(&self) {
        let s = self;
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
        let s = self;
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
    pub(super) async fn write(&self, views: GameViews) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.tx.send((views, tx)).is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }
}
