//! Group commit: the writes of the hot paths (a game dealt, a game finished
//! with its seats, ratings and statistics, a game aborted, a bot's health)
//! go to one writer task, which commits whatever arrived within a short
//! window (or up to a batch size; no window after a pause, see
//! [`GroupConfig::window`]) in one transaction and only then answers
//! each caller. A caller's write is durable when its future resolves, as it
//! was with one transaction per write, but many games share one commit and
//! nothing waits for the disk while holding a game's lock.
//!
//! A store implements [`BatchWrite`] (apply a batch in one transaction, all
//! or nothing) and keeps a [`GroupCommit`] handle in front of it: the SQLite
//! store does, and a PostgreSQL store implements the same method.
//!
//! A batch that fails is retried one write at a time, so a bad write fails
//! only its own caller. A write, once submitted, is committed even if its
//! caller stops waiting (an HTTP client that hangs up).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::{BotId, GameEnd, GameId, StoreError};

/// Writes per group-commit batch, in the metrics (issue 49).
pub const BATCH_WRITES: &str = "croupier_commit_batch_writes";
/// How long a group-commit batch took to commit, in seconds.
pub const COMMIT_SECONDS: &str = "croupier_commit_seconds";
/// Batches that failed whole (then retried one write at a time).
pub const FAILED_BATCHES: &str = "croupier_commit_failed_batches_total";

/// One write of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// A game just dealt, with its bots by seat (at least two).
    StartGame {
        /// Game name.
        game: String,
        /// Bots by seat.
        bots: Vec<BotId>,
        /// The deal's seed.
        seed: i64,
        /// Start time (RFC 3339).
        started: String,
    },
    /// A game finished: its row, its seats, ratings and statistics.
    FinishGame {
        /// The game.
        id: GameId,
        /// How it ended.
        end: GameEnd,
    },
    /// A running game aborted.
    AbortGame {
        /// The game.
        id: GameId,
        /// Why.
        reason: String,
        /// When (RFC 3339).
        at: String,
    },
    /// A bot's strikes and pause.
    BotHealth {
        /// The bot.
        id: BotId,
        /// Consecutive faulty matches.
        strikes: i64,
        /// Paused until (unix seconds).
        paused_until: Option<i64>,
        /// Why it is paused.
        pause_reason: Option<String>,
    },
}

/// What a write produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The id of a game started.
    Game(GameId),
    /// Done.
    Done,
}

/// A store that can apply several writes in one transaction.
#[async_trait]
pub trait BatchWrite: Send + Sync + 'static {
    /// Applies `batch` in order in one transaction: every write or none.
    /// Returns one [`Written`] per write.
    async fn write_batch(&self, batch: &[Write]) -> Result<Vec<Written>, StoreError>;

    /// Called after each batch, `waiting` saying whether writes wait for
    /// the next: upkeep that must run between transactions (SQLite
    /// finishes copying its WAL here, so that the next transaction starts
    /// the WAL afresh), best done when none waits. Nothing by default.
    async fn upkeep(&self, _waiting: bool) {}
}

/// How the writer groups writes.
#[derive(Debug, Clone, Copy)]
pub struct GroupConfig {
    /// A batch takes the writes submitted up to this long after its first
    /// one (writes that queued while the previous batch was committing go
    /// at once). It waits only while writes come close together: the first
    /// write after a pause of two windows or more is committed with what
    /// has queued, at once ([`waits_for_more`]).
    pub window: Duration,
    /// At most this many writes per batch.
    pub max_batch: usize,
}

impl Default for GroupConfig {
    fn default() -> Self {
        GroupConfig {
            window: Duration::from_millis(2),
            max_batch: 256,
        }
    }
}

struct Job {
    write: Write,
    submitted: Instant,
    reply: oneshot::Sender<Result<Written, StoreError>>,
}

/// The handle of a group-commit writer task (cheap to clone). The task ends
/// when the last handle is dropped, after committing what was submitted.
#[derive(Clone)]
pub struct GroupCommit {
    tx: mpsc::Sender<Job>,
}

impl std::fmt::Debug for GroupCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit").finish_non_exhaustive()
    }
}

impl GroupCommit {
    /// Starts the writer task over `target` (needs a tokio runtime).
    pub fn spawn(target: Arc<dyn BatchWrite>, config: GroupConfig) -> GroupCommit {
        let (group, rx, config) = GroupCommit::channel(config);
        tokio::spawn(run(target, rx, config));
        group
    }

    /// Starts the writer on a thread of its own (`croupier-commit`, with a
    /// one-thread runtime) rather than as a task of the caller's runtime:
    /// each statement's answer then wakes that thread at once instead of
    /// waiting its turn behind a busy runtime's tasks. The thread ends with
    /// the last handle.
    pub fn spawn_on_thread(
        target: Arc<dyn BatchWrite>,
        config: GroupConfig,
    ) -> std::io::Result<GroupCommit> {
        let (group, rx, config) = GroupCommit::channel(config);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::Builder::new()
            .name("croupier-commit".into())
            .spawn(move || runtime.block_on(run(target, rx, config)))?;
        Ok(group)
    }

    fn channel(config: GroupConfig) -> (GroupCommit, mpsc::Receiver<Job>, GroupConfig) {
        let max = config.max_batch.max(1);
        // Room for several batches: a burst waits here, not in the callers.
        let (tx, rx) = mpsc::channel(max * 16);
        let config = GroupConfig {
            max_batch: max,
            ..config
        };
        (GroupCommit { tx }, rx, config)
    }

    /// Submits `write` and waits until its batch is committed.
    pub async fn write(&self, write: Write) -> Result<Written, StoreError> {
        let (reply, rx) = oneshot::channel();
        let job = Job {
            write,
            submitted: Instant::now(),
            reply,
        };
        self.tx.send(job).await.map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }
}

/// Whether a batch whose first write came at `first` waits its window for
/// more: only while writes come close together, the last one before it
/// (`last`) less than two windows earlier. A write to an idle store (the
/// first in a while) is committed at once instead of waiting for writes
/// that are not coming; under load nearly every gap is shorter (at 600
/// writes a second and a 4 ms window, 99% of them).
fn waits_for_more(first: Instant, last: Option<Instant>, window: Duration) -> bool {
    last.is_some_and(|last| first.saturating_duration_since(last) < window * 2)
}

async fn run(target: Arc<dyn BatchWrite>, mut rx: mpsc::Receiver<Job>, config: GroupConfig) {
    let mut jobs: Vec<Job> = Vec::with_capacity(config.max_batch);
    let mut last: Option<Instant> = None;
    while let Some(first) = rx.recv().await {
        let deadline = if waits_for_more(first.submitted, last, config.window) {
            first.submitted + config.window
        } else {
            first.submitted
        };
        jobs.push(first);
        while jobs.len() < config.max_batch {
            match rx.try_recv() {
                Ok(job) => jobs.push(job),
                Err(mpsc::error::TryRecvError::Disconnected) => break,
                Err(mpsc::error::TryRecvError::Empty) => {
                    match tokio::time::timeout_at(deadline, rx.recv()).await {
                        Ok(Some(job)) => jobs.push(job),
                        _ => break,
                    }
                }
            }
        }
        if crate::waits::enabled() {
            for j in &jobs {
                crate::waits::record("group: queued before its batch", j.submitted.elapsed());
            }
        }
        last = jobs.iter().map(|j| j.submitted).max();
        commit(&*target, &mut jobs).await;
        target.upkeep(!rx.is_empty()).await;
    }
}

/// Commits `jobs` in one transaction and answers each; if that fails,
/// commits them one by one so that each caller gets its own answer.
async fn commit(target: &dyn BatchWrite, jobs: &mut Vec<Job>) {
    let (writes, replies): (Vec<Write>, Vec<_>) =
        jobs.drain(..).map(|j| (j.write, j.reply)).unzip();
    metrics::histogram!(BATCH_WRITES).record(writes.len() as f64);
    let since = Instant::now();
    let first = target.write_batch(&writes).await;
    metrics::histogram!(COMMIT_SECONDS).record(since.elapsed().as_secs_f64());
    if first.is_err() {
        metrics::counter!(FAILED_BATCHES).increment(1);
    }
    match first {
        Ok(done) if done.len() == writes.len() => {
            for (reply, d) in replies.into_iter().zip(done) {
                let _ = reply.send(Ok(d));
            }
        }
        first => {
            if writes.len() == 1 {
                let r = first.and_then(|d| d.into_iter().next().ok_or(StoreError::Closed));
                if let Some(reply) = replies.into_iter().next() {
                    let _ = reply.send(r);
                }
                return;
            }
            for (w, reply) in writes.iter().zip(replies) {
                let r = target
                    .write_batch(std::slice::from_ref(w))
                    .await
                    .and_then(|d| d.into_iter().next().ok_or(StoreError::Closed));
                let _ = reply.send(r);
            }
        }
    }
}

/// Refuses a [`Write::StartGame`] with fewer than two bots (either
/// backend, before it writes anything).
pub(crate) fn two_bots_at_least(bots: &[BotId]) -> Result<(), StoreError> {
    if bots.len() < 2 {
        return Err(StoreError::Db(sqlx::Error::Protocol(
            "a game needs at least two bots".into(),
        )));
    }
    Ok(())
}

/// [`Write::AbortGame`] on either backend: running game `$3` marked
/// aborted with reason `$1` at `$2` (a game no longer running stays as it
/// is). sqlx binds `$n` by its number; SQLite (rusqlite) takes `$1` as a
/// name and numbers names by first appearance, so both constants must keep
/// their placeholders in order, `$1` first.
pub(crate) const ABORT_GAME: &str =
    "UPDATE games SET status = 'aborted', reason = $1, finished = $2 WHERE id = $3 AND status = 'running'";

/// [`Write::BotHealth`] on either backend: bot `$4`'s strikes, pause and
/// its reason.
pub(crate) const BOT_HEALTH: &str =
    "UPDATE bots SET strikes = $1, paused_until = $2, pause_reason = $3 WHERE id = $4";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::sync::Mutex;

    /// Records each batch, and each upkeep call with no write waiting and
    /// with writes waiting; fails a batch holding an abort with reason
    /// "bad".
    #[derive(Default)]
    struct Log(
        Mutex<Vec<usize>>,
        std::sync::atomic::AtomicUsize,
        std::sync::atomic::AtomicUsize,
    );

    #[async_trait]
    impl BatchWrite for Log {
        async fn write_batch(&self, batch: &[Write]) -> Result<Vec<Written>, StoreError> {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let bad = batch
                .iter()
                .any(|w| matches!(w, Write::AbortGame { reason, .. } if reason == "bad"));
            if bad {
                return Err(StoreError::Db(sqlx::Error::Protocol("bad".into())));
            }
            self.0.lock().unwrap().push(batch.len());
            Ok(batch
                .iter()
                .map(|w| match w {
                    Write::StartGame { seed, .. } => Written::Game(*seed),
                    _ => Written::Done,
                })
                .collect())
        }

        async fn upkeep(&self, waiting: bool) {
            let count = if waiting { &self.2 } else { &self.1 };
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Submits `n` good writes at once and waits for every answer.
    async fn write_at_once(group: &GroupCommit, n: usize) {
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..n {
            let g = group.clone();
            tasks.spawn(async move { g.write(abort("ok")).await });
        }
        while let Some(r) = tasks.join_next().await {
            assert_eq!(r.unwrap().unwrap(), Written::Done);
        }
    }

    fn abort(reason: &str) -> Write {
        Write::AbortGame {
            id: 1,
            reason: reason.into(),
            at: "t".into(),
        }
    }

    #[tokio::test]
    async fn concurrent_writes_share_batches_and_get_their_own_answers() {
        let log = Arc::new(Log::default());
        let group = GroupCommit::spawn(log.clone(), GroupConfig::default());
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..100 {
            let g = group.clone();
            tasks.spawn(async move {
                let w = Write::StartGame {
                    game: "g".into(),
                    bots: vec![1, 2],
                    seed: i,
                    started: "t".into(),
                };
                (i, g.write(w).await.unwrap())
            });
        }
        while let Some(r) = tasks.join_next().await {
            let (i, written) = r.unwrap();
            assert_eq!(written, Written::Game(i));
        }
        let batches = log.0.lock().unwrap().clone();
        assert_eq!(batches.iter().sum::<usize>(), 100);
        assert!(batches.len() < 100, "no batching: {batches:?}");
    }

    #[tokio::test]
    async fn a_bad_write_fails_alone() {
        let log = Arc::new(Log::default());
        let group = GroupCommit::spawn(log.clone(), GroupConfig::default());
        let (a, b, c) = tokio::join!(
            group.write(abort("ok")),
            group.write(abort("bad")),
            group.write(abort("ok"))
        );
        assert_eq!(a.unwrap(), Written::Done);
        assert!(b.is_err());
        assert_eq!(c.unwrap(), Written::Done);
        let batches = log.0.lock().unwrap().clone();
        assert_eq!(batches.iter().sum::<usize>(), 2, "{batches:?}");
    }

    #[tokio::test]
    async fn batches_respect_the_maximum_size() {
        let log = Arc::new(Log::default());
        let config = GroupConfig {
            window: Duration::from_millis(50),
            max_batch: 4,
        };
        let group = GroupCommit::spawn(log.clone(), config);
        write_at_once(&group, 10).await;
        let batches = log.0.lock().unwrap().clone();
        assert_eq!(batches.iter().sum::<usize>(), 10);
        assert!(batches.iter().all(|n| *n <= 4), "{batches:?}");
    }

    /// Submits one write from a task of the calling (one-thread) runtime,
    /// then blocks that thread for a while without yielding: whether the
    /// write was committed meanwhile.
    async fn committed_while_the_caller_is_busy(own_thread: bool) -> bool {
        let log = Arc::new(Log::default());
        let config = GroupConfig {
            window: Duration::ZERO,
            ..GroupConfig::default()
        };
        let group = if own_thread {
            GroupCommit::spawn_on_thread(log.clone(), config).unwrap()
        } else {
            GroupCommit::spawn(log.clone(), config)
        };
        let task = tokio::spawn(async move { group.write(abort("ok")).await });
        // The task runs until it waits for its answer.
        tokio::task::yield_now().await;
        std::thread::sleep(Duration::from_millis(300));
        let committed = !log.0.lock().unwrap().is_empty();
        assert_eq!(task.await.unwrap().unwrap(), Written::Done);
        assert_eq!(log.0.lock().unwrap().clone(), vec![1]);
        committed
    }

    #[tokio::test]
    async fn a_writer_on_its_own_thread_commits_while_the_callers_runtime_is_busy() {
        assert!(committed_while_the_caller_is_busy(true).await);
        // The control: a writer task waits for the busy runtime.
        assert!(!committed_while_the_caller_is_busy(false).await);
    }

    #[tokio::test]
    async fn a_writer_on_its_own_thread_ends_with_its_last_handle_after_committing() {
        let log = Arc::new(Log::default());
        let group = GroupCommit::spawn_on_thread(log.clone(), GroupConfig::default()).unwrap();
        let (a, b) = tokio::join!(group.write(abort("ok")), group.write(abort("bad")));
        assert_eq!(a.unwrap(), Written::Done);
        assert!(b.is_err());
        drop(group);
        // The thread let go of its store when it ended.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while Arc::strong_count(&log) > 1 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            Arc::strong_count(&log),
            1,
            "the writer thread is still running"
        );
    }

    #[test]
    fn a_batch_waits_only_while_writes_come_close_together() {
        let w = Duration::from_millis(4);
        let t = Instant::now() + Duration::from_secs(1);
        assert!(!waits_for_more(t, None, w), "the first write of all");
        assert!(waits_for_more(t, Some(t - Duration::from_millis(7)), w));
        assert!(!waits_for_more(t, Some(t - Duration::from_millis(8)), w));
        assert!(!waits_for_more(t, Some(t - Duration::from_secs(1)), w));
        // A clock read before the last write's (submitted out of order).
        assert!(waits_for_more(t, Some(t + Duration::from_millis(1)), w));
    }

    #[tokio::test]
    async fn a_write_after_a_pause_is_committed_without_waiting_its_window() {
        let log = Arc::new(Log::default());
        let config = GroupConfig {
            window: Duration::from_secs(30),
            max_batch: 2,
        };
        let group = GroupCommit::spawn(log.clone(), config);
        // Alone, and the first: committed at once, not 30 s later.
        let lone = tokio::time::timeout(Duration::from_secs(10), group.write(abort("ok"))).await;
        assert_eq!(lone.expect("held for the window").unwrap(), Written::Done);
        // Straight after it, writes come close together: the next batch
        // waits for a second write (here until it is full).
        let g = group.clone();
        let first = tokio::spawn(async move { g.write(abort("ok")).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            log.0.lock().unwrap().len() == 1,
            "the second write did not wait"
        );
        let second = tokio::time::timeout(Duration::from_secs(10), group.write(abort("ok"))).await;
        assert_eq!(second.expect("batch closed").unwrap(), Written::Done);
        assert_eq!(first.await.unwrap().unwrap(), Written::Done);
        assert_eq!(log.0.lock().unwrap().clone(), vec![1, 2]);
    }

    #[tokio::test]
    async fn the_writer_does_its_upkeep_when_no_write_waits() {
        let log = Arc::new(Log::default());
        let group = GroupCommit::spawn(log.clone(), GroupConfig::default());
        group.write(abort("ok")).await.unwrap();
        // The queue was empty after that batch.
        let idle = || log.1.load(std::sync::atomic::Ordering::SeqCst);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while idle() == 0 && std::time::Instant::now() < deadline {
            tokio::task::yield_now().await;
        }
        assert_eq!(idle(), 1);
        group.write(abort("ok")).await.unwrap();
        while idle() == 1 && std::time::Instant::now() < deadline {
            tokio::task::yield_now().await;
        }
        assert_eq!(idle(), 2);
    }

    #[tokio::test]
    async fn the_writer_does_its_upkeep_between_batches_while_writes_wait_too() {
        let log = Arc::new(Log::default());
        let config = GroupConfig {
            window: Duration::from_millis(1),
            max_batch: 1,
        };
        let group = GroupCommit::spawn(log.clone(), config);
        write_at_once(&group, 3).await;
        // Three batches of one: the first two left writes waiting.
        assert_eq!(log.0.lock().unwrap().clone(), vec![1, 1, 1]);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let calls = || {
            use std::sync::atomic::Ordering::SeqCst;
            (log.2.load(SeqCst), log.1.load(SeqCst))
        };
        while calls() != (2, 1) && std::time::Instant::now() < deadline {
            tokio::task::yield_now().await;
        }
        assert_eq!(calls(), (2, 1), "(with writes waiting, with none)");
    }
}
