//! The SQLite WAL's copy into the database file: one passive checkpoint
//! ([`checkpoint`]), run every [`CHECKPOINT_EVERY`] by a task beside the
//! writer ([`checkpoints`], started by the store) and, between batches
//! (when idle, or when the last whole copy is overdue), by the
//! group-commit writer itself (`sqlite_batch`).

use std::time::Duration;

use sqlx::SqlitePool;

/// How often the WAL is copied into the database. A copy writes each page
/// changed since the last once, whatever the number of commits that
/// changed it, and ends with an fsync: the leaves where each bot's games,
/// ratings and counts go change with every game. Under `bench server`
/// (issue 53) copying every 100 ms cost about 2% of the server's CPU; a
/// second's writes keep the WAL to a few tens of megabytes under that load.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// Copies what it can of the WAL into the database without waiting for
/// anyone (`PRAGMA wal_checkpoint(PASSIVE)`), timed as `wait`: whether it
/// copied every frame (not when another checkpoint was running, or a
/// reader stopped it short).
pub(crate) async fn checkpoint(pool: &SqlitePool, wait: &'static str) -> Result<bool, sqlx::Error> {
    // (busy, frames in the WAL, frames copied)
    let (busy, log, copied): (i64, i64, i64) = crate::waits::timed(
        wait,
        sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(pool),
    )
    .await?;
    Ok(busy == 0 && copied == log)
}

/// Copies the WAL into the database now and then on a reading connection
/// (`PRAGMA wal_checkpoint(PASSIVE)`: it never blocks the writer or a
/// reader, and does what it can), so that the writer's commits never do
/// it. Aborted with the last handle of the store.
pub(crate) async fn checkpoints(pool: SqlitePool) {
    let mut every = tokio::time::interval(CHECKPOINT_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut warned = false;
    loop {
        every.tick().await;
        let done = checkpoint(&pool, "sqlite: checkpoint (beside the writer)").await;
        match done {
            Ok(_) => warned = false,
            Err(e) if !warned && !pool.is_closed() => {
                tracing::warn!("SQLite checkpoint failed (the WAL grows until one succeeds): {e}");
                warned = true;
            }
            Err(_) => {}
        }
    }
}
