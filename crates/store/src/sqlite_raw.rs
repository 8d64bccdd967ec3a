//! The writer's own SQLite connection ([`RawWriter`]): a rusqlite
//! connection to the database file, beside sqlx's writer pool. The
//! group-commit writer's batches, the ratings backlog and imports run
//! their statements there as plain calls on the calling thread. Through
//! sqlx each statement was a round trip to sqlx's connection thread and
//! back; under load those hand-offs cost the server more than SQLite's own
//! work (issue 20). The connection lives as long as the store, so each
//! statement is prepared once, not once per batch.
//!
//! One writer at a time: [`RawWriter::run`] first takes sqlx's writer
//! pool's only connection and holds it while its statements run. So sqlx's
//! writes and these queue in one line, as they did when both used that
//! connection, and no transaction of one sees the other commit under it
//! (two writing connections would otherwise meet SQLite's busy waits, and
//! a deferred sqlx transaction that read before the other committed could
//! not write at all).

use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::OpenFlags;
use sqlx::SqlitePool;

use crate::StoreError;

/// Room for every statement the writer runs (each seat count of a
/// multi-row statement is its own text), so none is prepared twice.
const STATEMENTS: usize = 128;

/// The writer's own connection, and the pool whose connection is its turn.
#[derive(Clone)]
pub(crate) struct RawWriter {
    /// sqlx's writer pool (one connection): holding it is the turn to write.
    turn: SqlitePool,
    db: Arc<Mutex<rusqlite::Connection>>,
}

impl std::fmt::Debug for RawWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RawWriter")
    }
}

impl RawWriter {
    /// Opens the database file at `path` (created and migrated by sqlx
    /// already, in WAL mode) with the settings of sqlx's writer: NORMAL
    /// sync, foreign keys, the same busy timeout, and no automatic
    /// checkpoint (the store runs them beside the writer).
    pub(crate) fn open(path: &Path, busy: Duration, turn: SqlitePool) -> Result<Self, StoreError> {
        let db = rusqlite::Connection::open_with_flags(
            path,
            // As sqlx opens it (URI names allowed); never created here: a
            // file sqlx did not open is an error, not a new database.
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        db.busy_timeout(busy)?;
        db.execute_batch(
            "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0;",
        )?;
        db.set_prepared_statement_cache_capacity(STATEMENTS);
        Ok(RawWriter {
            turn,
            db: Arc::new(Mutex::new(db)),
        })
    }

    /// sqlx's writer pool, whose one connection is the writer's turn.
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.turn
    }

    /// Runs `f` on the writer's own connection, on this thread, once it is
    /// the writer's turn (sqlx's writer connection held meanwhile). `f`
    /// must leave the connection outside a transaction: one it leaves open
    /// (or a panic does) is rolled back, and an `Ok` that left one open
    /// becomes an error, since its writes were lost.
    pub(crate) async fn run<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let turn = crate::waits::timed("raw writer: turn", self.turn.acquire()).await?;
        let r = self.run_now(f);
        drop(turn);
        r
    }

    /// [`RawWriter::run`] for long work (an import): `f` runs on a thread
    /// for blocking work, so that no runtime thread waits for it.
    pub(crate) async fn run_blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let turn = crate::waits::timed("raw writer: turn", self.turn.acquire()).await?;
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let r = this.run_now(f);
            drop(turn);
            r
        })
        .await
        .map_err(|e| {
            StoreError::Db(sqlx::Error::Protocol(format!(
                "the SQLite writer's work failed: {e}"
            )))
        })?
    }

    /// `f` on the connection, outside any transaction before and after.
    fn run_now<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let db = self.db.lock().unwrap_or_else(PoisonError::into_inner);
        let guard = LeaveAsFound(&db);
        // The guard rolled back after the last `f`, even one that panicked;
        // a rollback that failed then is tried again here.
        guard.roll_back_if_open();
        let r = f(&db);
        let left_open = !db.is_autocommit();
        drop(guard);
        match r {
            Ok(_) if left_open => Err(StoreError::Db(sqlx::Error::Protocol(
                "the SQLite writer left a transaction open: rolled back".into(),
            ))),
            r => r,
        }
    }
}

/// Rolls back a transaction left open, so that the next user finds the
/// connection outside one (also when `f` panics).
struct LeaveAsFound<'a>(&'a rusqlite::Connection);

impl LeaveAsFound<'_> {
    fn roll_back_if_open(&self) {
        if !self.0.is_autocommit() {
            let _ = self.0.execute_batch("ROLLBACK");
        }
    }
}

impl Drop for LeaveAsFound<'_> {
    fn drop(&mut self) {
        self.roll_back_if_open();
    }
}

/// `row` (such as `(?, ?, 1)`) `n` times, comma-separated: the rows of a
/// multi-row statement.
pub(crate) fn rows(row: &str, n: usize) -> String {
    vec![row; n].join(", ")
}

/// The rows finished games add to their lists (a game's row and its
/// ranked seats, as the lists' indexes hold them): bot (0 for the lists of
/// every bot), game kind, hour of the finish time, and whether it is a
/// tournament game there (1 or 0: in the tournament indexes too). Those of
/// game `?1` if `one`, else of every game.
fn listed(one: bool) -> String {
    let (game, seats) = if one {
        ("g.id = ?1 AND", "s.game_id = ?1 AND")
    } else {
        ("", "")
    };
    format!(
        "SELECT 0 AS bot, g.game, substr(g.finished, 1, 13) AS hour,
                g.tournament_id IS NOT NULL AS marked FROM games g
         WHERE {game} g.status = 'finished' AND g.finished IS NOT NULL
         UNION ALL
         SELECT s.bot, g.game, substr(s.finished, 1, 13), s.tournament_id IS NOT NULL
         FROM game_seats s JOIN games g ON g.id = s.game_id
         WHERE {seats} s.finished IS NOT NULL AND s.rank IS NOT NULL"
    )
}

/// Adds the games [`listed`] finds to their lists' hours (`finish_hours`,
/// migration 0014), their tournament games too (`marked`, migration 0018).
fn count_hours(one: bool) -> String {
    format!(
        "INSERT INTO finish_hours (bot, game, hour, games, marked)
         SELECT c.bot, c.game, c.hour, COUNT(*), SUM(c.marked) FROM ({}) c
         GROUP BY c.bot, c.game, c.hour
         ON CONFLICT (bot, game, hour)
         DO UPDATE SET games = games + excluded.games, marked = marked + excluded.marked",
        listed(one)
    )
}

/// Counts game `?1`, just finished or imported finished (its row and its
/// ranked seats written), in its lists' hours. It must not have been
/// counted before.
pub(crate) static COUNT_HOURS: LazyLock<String> = LazyLock::new(|| count_hours(true));

/// [`COUNT_HOURS`] for the lists' lengths (`finish_totals`).
pub(crate) static COUNT_TOTALS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO finish_totals (bot, game, games, marked)
         SELECT c.bot, c.game, COUNT(*), SUM(c.marked) FROM ({}) c
         GROUP BY c.bot, c.game
         ON CONFLICT (bot, game)
         DO UPDATE SET games = games + excluded.games, marked = marked + excluded.marked",
        listed(true)
    )
});

/// Gives the seats of a tournament game that do not carry its tournament
/// (as migration 0017 gave them) their game's.
pub(crate) const MEND_SEATS: &str = "UPDATE game_seats SET tournament_id = g.tournament_id
     FROM games g WHERE g.id = game_seats.game_id AND game_seats.tournament_id IS NOT g.tournament_id";

/// The statements that count every list's games per hour and in all again
/// from the games, in one transaction: `finish_hours` and `finish_totals`
/// emptied, every game counted in its hours, and the lengths summed from
/// the hours.
pub(crate) fn recount_statements() -> Vec<String> {
    vec![
        "DELETE FROM finish_hours".into(),
        "DELETE FROM finish_totals".into(),
        count_hours(false),
        "INSERT INTO finish_totals (bot, game, games, marked)
         SELECT bot, game, SUM(games), SUM(marked) FROM finish_hours GROUP BY bot, game"
            .into(),
    ]
}

/// Counts game `id`, just finished or imported finished, in its lists
/// ([`COUNT_HOURS`], [`COUNT_TOTALS`]).
pub(crate) fn count_listed(db: &rusqlite::Connection, id: i64) -> rusqlite::Result<()> {
    db.prepare_cached(&COUNT_HOURS)?.execute([id])?;
    db.prepare_cached(&COUNT_TOTALS)?.execute([id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rusqlite::TransactionBehavior;
    use sqlx::sqlite::SqlitePoolOptions;

    async fn writer() -> (tempfile::TempDir, SqlitePool, RawWriter) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let url = format!("sqlite://{}?mode=rwc", path.display());
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect(&url)
            .await
            .unwrap();
        sqlx::query("PRAGMA journal_mode = WAL")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("CREATE TABLE t (x INTEGER NOT NULL)")
            .execute(&pool)
            .await
            .unwrap();
        let raw = RawWriter::open(&path, Duration::from_secs(5), pool.clone()).unwrap();
        (dir, pool, raw)
    }

    async fn rows_in_t(pool: &SqlitePool) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM t")
            .fetch_one(pool)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn the_writer_waits_for_a_sqlx_transaction_and_sqlx_sees_its_writes() {
        let (_dir, pool, raw) = writer().await;
        raw.run(|db| Ok(db.execute("INSERT INTO t VALUES (1)", [])?))
            .await
            .unwrap();
        assert_eq!(rows_in_t(&pool).await, 1);
        // While sqlx's transaction holds the writer connection, the raw
        // writer waits for it, then runs after its commit.
        let mut tx = pool.begin().await.unwrap();
        sqlx::query("INSERT INTO t VALUES (2)")
            .execute(&mut *tx)
            .await
            .unwrap();
        let waiting = {
            let raw = raw.clone();
            tokio::spawn(async move {
                raw.run(
                    |db| Ok(db.query_row("SELECT COUNT(*) FROM t", [], |r| r.get::<_, i64>(0))?),
                )
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            !waiting.is_finished(),
            "the raw writer did not wait its turn"
        );
        tx.commit().await.unwrap();
        assert_eq!(waiting.await.unwrap().unwrap(), 2);
    }

    #[tokio::test]
    async fn blocking_work_waits_its_turn_too_and_a_panic_in_it_is_an_error() {
        let (_dir, pool, raw) = writer().await;
        let tx = pool.begin().await.unwrap();
        let waiting = {
            let raw = raw.clone();
            tokio::spawn(async move {
                raw.run_blocking(|db| Ok(db.execute("INSERT INTO t VALUES (1)", [])?))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!waiting.is_finished(), "the blocking work did not wait");
        tx.rollback().await.unwrap();
        assert_eq!(waiting.await.unwrap().unwrap(), 1);
        let panicked = raw
            .run_blocking(|_| -> Result<(), StoreError> { panic!("a bug in an import") })
            .await;
        assert!(matches!(panicked, Err(StoreError::Db(_))), "{panicked:?}");
        assert_eq!(rows_in_t(&pool).await, 1);
    }

    #[tokio::test]
    async fn the_writer_has_the_settings_of_sqlx_s_writer() {
        let (_dir, _pool, raw) = writer().await;
        let settings = raw
            .run(|db| {
                let get = |p: &str| -> rusqlite::Result<String> {
                    db.query_row(&format!("PRAGMA {p}"), [], |r| {
                        Ok(r.get_ref(0)?.as_i64().map_or_else(
                            |_| r.get::<_, String>(0).unwrap_or_default(),
                            |n| n.to_string(),
                        ))
                    })
                };
                Ok([
                    "synchronous",
                    "foreign_keys",
                    "wal_autocheckpoint",
                    "busy_timeout",
                    "journal_mode",
                ]
                .map(|p| get(p).unwrap()))
            })
            .await
            .unwrap();
        // NORMAL, on, no automatic checkpoint, 5 s (as given), WAL.
        assert_eq!(settings, ["1", "1", "0", "5000", "wal"].map(String::from));
    }

    #[tokio::test]
    async fn a_failed_or_abandoned_transaction_leaves_the_connection_usable() {
        let (_dir, pool, raw) = writer().await;
        // A failing statement inside a rusqlite transaction: rolled back.
        let failed = raw
            .run(|db| {
                let tx = rusqlite::Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
                tx.execute("INSERT INTO t VALUES (1)", [])?;
                tx.execute("INSERT INTO t VALUES (NULL)", [])?;
                tx.commit()?;
                Ok(())
            })
            .await;
        assert!(matches!(failed, Err(StoreError::Sqlite(_))), "{failed:?}");
        assert_eq!(rows_in_t(&pool).await, 0);
        // A transaction left open: rolled back before anyone writes again
        // (else sqlx's write below would wait for the lock in vain), and
        // said so.
        let left_open = raw
            .run(|db| {
                db.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (3);")?;
                Ok(())
            })
            .await;
        assert!(matches!(left_open, Err(StoreError::Db(_))), "{left_open:?}");
        sqlx::query("INSERT INTO t VALUES (4)")
            .execute(&pool)
            .await
            .unwrap();
        assert_eq!(rows_in_t(&pool).await, 1);
        // And after a panic inside `f`.
        let panicked = {
            let raw = raw.clone();
            tokio::spawn(async move {
                raw.run(|db| -> Result<(), StoreError> {
                    db.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (5);")?;
                    panic!("a bug inside the writer");
                })
                .await
            })
            .await
        };
        assert!(panicked.is_err());
        raw.run(|db| Ok(db.execute("INSERT INTO t VALUES (6)", [])?))
            .await
            .unwrap();
        assert_eq!(rows_in_t(&pool).await, 2);
    }
}
