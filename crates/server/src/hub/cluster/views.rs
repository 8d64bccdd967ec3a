//! A game's seat views, copied to the database for the other instances as
//! they change (and sent to them in a notification, in the same statement:
//! see `cache`). One writer task per instance writes the views of all its
//! games that changed since its last write in one statement, so a busy
//! instance makes one round trip for many moves.

use std::sync::Arc;
use std::time::Duration;

use croupier_store::postgres::cluster::{Cluster, GameViews};
use tokio::sync::{mpsc, oneshot, watch, Notify};

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
}

impl ViewSync {
    pub(super) fn new(crowd: Arc<Crowd>, writer: ViewWriter) -> ViewSync {
        ViewSync {
            version: Arc::new(watch::channel(0).0),
            written: watch::channel(0).0,
            poke: Notify::new(),
            crowd,
            writer,
        }
    }
}

impl LiveGame {
    /// Waits until the views as they are now are in the database (at most
    /// two seconds: the writer retries what fails on the next change).
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
                tokio::time::timeout(Duration::from_secs(2), w.wait_for(|v| *v >= target)),
            )
            .await;
        }
    }
}

/// Copies a game's seat views to the database as they change, until the
/// game is over and stored. While the instance is alone the copies are
/// skipped; they are made when another instance joins, or when an answer
/// waits for them.
pub(in crate::hub) async fn write_views(game: Arc<LiveGame>) {
    let Some(sync) = game.sync.clone() else {
        return;
    };
    let mut changes = sync.version.subscribe();
    let mut joined = sync.crowd.joined();
    let mut stored = game.stored.clone();
    loop {
        tokio::select! {
            r = changes.changed() => if r.is_err() { break },
            r = joined.changed() => if r.is_err() { break },
            _ = sync.poke.notified() => {}
            _ = stored.wait_for(Option::is_some) => break,
        }
        let version = *changes.borrow_and_update();
        joined.borrow_and_update();
        if version <= *sync.written.borrow() || sync.crowd.alone() {
            continue;
        }
        let views: Vec<(String, bool, bool)> = game
            .seats
            .iter()
            .map(|s| {
                let v = s.view();
                (v.status.to_string(), v.has_bid, v.over)
            })
            .collect();
        let write = GameViews {
            game: game.id,
            version,
            views,
        };
        if sync.writer.write(write).await {
            sync.written.send_replace(version);
        }
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
            while let Some(first) = rx.recv().await {
                let mut batch = vec![first];
                while batch.len() < MAX_BATCH {
                    match rx.try_recv() {
                        Ok(job) => batch.push(job),
                        Err(_) => break,
                    }
                }
                let games: Vec<GameViews> = batch.iter().map(|(v, _)| v.clone()).collect();
                let ok = match db.write_views(&games).await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!("cannot write the views of {} games: {e}", games.len());
                        false
                    }
                };
                for (_, reply) in batch {
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
