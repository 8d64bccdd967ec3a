//! The writer connection's own SQLite handle, through rusqlite
//! ([`with_raw`]): the group-commit writer's batches, the ratings backlog
//! and imports run their statements there as plain calls on the calling
//! thread. Through sqlx each statement is a round trip to sqlx's
//! connection thread and back; under load those hand-offs cost the server
//! more than SQLite's own work (issue 20).
//!
//! This is the project's one `unsafe` block: wrapping the handle sqlx
//! lends. Every other crate forbids `unsafe_code` (the workspace's lints);
//! this crate denies it (`crates/store/Cargo.toml`) and this function
//! alone allows it.

use sqlx::SqliteConnection;

use crate::StoreError;

/// Runs `f` on the writer's own SQLite connection, on this thread: one
/// hand-off to sqlx's connection thread to lock the connection, then every
/// statement is a plain call (with sqlx, each statement was a round trip
/// between two threads, which under load cost more than SQLite's work).
/// `f` may run inside a transaction that `conn` began; it must leave the
/// connection as it found it (a `rusqlite::Transaction` that `f` began
/// commits or rolls back before `f` returns).
#[allow(unsafe_code)] // The project's one unsafe block: see the Safety note.
pub(crate) async fn with_raw<T>(
    conn: &mut SqliteConnection,
    f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut handle = conn.lock_handle().await?;
    // Safety: the handle is sqlx's open connection, locked for us until
    // `handle` drops, so no other thread uses it meanwhile (sqlx opens it
    // in SQLite's multi-thread mode: one thread at a time, any thread).
    // `from_handle` does not own it: dropping `db` finalizes the
    // statements it prepared and leaves the connection open, and it drops
    // before `handle`.
    let db = unsafe { rusqlite::Connection::from_handle(handle.as_raw_handle().as_ptr()) }?;
    // Room for every statement of a batch mixing games of 2, 3 and 4 seats
    // (each seat count is its own SQL text), so none is prepared twice.
    db.set_prepared_statement_cache_capacity(64);
    let guard = LeaveAsFound {
        db: &db,
        outside: db.is_autocommit(),
    };
    let r = f(&db);
    // In this order (and in reverse declaration order if `f` panics): the
    // guard, then `db`, then the lock.
    drop(guard);
    drop(db);
    drop(handle);
    r
}

/// Rolls back a transaction that `f` began and left open (its commit and
/// its rollback both failed, or it panicked): sqlx must not get its
/// connection back inside it.
struct LeaveAsFound<'a> {
    db: &'a rusqlite::Connection,
    /// Whether the connection was outside a transaction before `f`.
    outside: bool,
}

impl Drop for LeaveAsFound<'_> {
    fn drop(&mut self) {
        if self.outside && !self.db.is_autocommit() {
            let _ = self.db.execute_batch("ROLLBACK");
        }
    }
}

/// `row` (such as `(?, ?, 1)`) `n` times, comma-separated: the rows of a
/// multi-row statement.
pub(crate) fn rows(row: &str, n: usize) -> String {
    vec![row; n].join(", ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rusqlite::TransactionBehavior;
    use sqlx::Connection;

    async fn connection() -> (tempfile::TempDir, SqliteConnection) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
        let mut c = SqliteConnection::connect(&url).await.unwrap();
        sqlx::query("CREATE TABLE t (x INTEGER NOT NULL)")
            .execute(&mut c)
            .await
            .unwrap();
        (dir, c)
    }

    async fn rows_in_t(c: &mut SqliteConnection) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM t")
            .fetch_one(c)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn statements_run_on_the_sqlx_connection_and_in_its_transaction() {
        let (_dir, mut c) = connection().await;
        with_raw(&mut c, |db| Ok(db.execute("INSERT INTO t VALUES (1)", [])?))
            .await
            .unwrap();
        assert_eq!(rows_in_t(&mut c).await, 1);
        // Inside a transaction sqlx began: rolled back with it.
        let mut tx = c.begin().await.unwrap();
        with_raw(
            &mut tx,
            |db| Ok(db.execute("INSERT INTO t VALUES (2)", [])?),
        )
        .await
        .unwrap();
        tx.rollback().await.unwrap();
        assert_eq!(rows_in_t(&mut c).await, 1);
    }

    #[tokio::test]
    async fn a_failed_or_abandoned_transaction_leaves_the_connection_usable() {
        let (_dir, mut c) = connection().await;
        // A failing statement inside a rusqlite transaction: rolled back.
        let failed = with_raw(&mut c, |db| {
            let tx = rusqlite::Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
            tx.execute("INSERT INTO t VALUES (1)", [])?;
            tx.execute("INSERT INTO t VALUES (NULL)", [])?;
            tx.commit()?;
            Ok(())
        })
        .await;
        assert!(matches!(failed, Err(StoreError::Sqlite(_))), "{failed:?}");
        assert_eq!(rows_in_t(&mut c).await, 0);
        // A transaction left open: rolled back before sqlx gets it back.
        with_raw(&mut c, |db| {
            db.execute_batch("BEGIN; INSERT INTO t VALUES (3);")?;
            Ok(())
        })
        .await
        .unwrap();
        let mut tx = c.begin().await.unwrap();
        sqlx::query("INSERT INTO t VALUES (4)")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        assert_eq!(rows_in_t(&mut c).await, 1);
    }
}
