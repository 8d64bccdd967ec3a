//! A game's seats on their way to the shared table, for the other
//! instances (issue 13): whether they are there ([`ViewSync`]) and the
//! instance's one writer ([`ViewWriter`]), which writes the seats of many
//! games in one statement. The task that follows a game is `views`.
//!
//! Issue 50: the seats' views are no longer copied as they change. Another
//! instance asks the game's home for a `status` (`relay`), so every answer
//! comes from the one place that holds the game, and a move is answered
//! without waiting for the database.

use std::sync::Arc;

use croupier_store::postgres::cluster::{Cluster, GameViews};
use tokio::sync::{mpsc, oneshot, watch};

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

/// A game's seats in the shared table.
#[derive(Debug)]
pub(in crate::hub) struct ViewSync {
    /// Bumped by the seats on every change (the version of the views
    /// written with the seats).
    pub(in crate::hub) version: Arc<watch::Sender<u64>>,
    /// Whether other instances run (alone, the seats are not written).
    pub(super) crowd: Arc<Crowd>,
    /// The instance's writer.
    pub(super) writer: ViewWriter,
    /// This instance (the game's home).
    pub(super) home: i64,
    /// Whether the game's seats are in the table; held by the writer while
    /// it writes, and by the game's end.
    pub(super) rows: tokio::sync::Mutex<Rows>,
}

impl ViewSync {
    pub(super) fn new(crowd: Arc<Crowd>, writer: ViewWriter, home: i64) -> ViewSync {
        ViewSync {
            version: Arc::new(watch::channel(0).0),
            crowd,
            writer,
            home,
            rows: tokio::sync::Mutex::new(Rows::Unwritten),
        }
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
