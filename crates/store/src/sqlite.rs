//! The SQLite store: one file, WAL journal, migrations applied on open.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::task::AbortOnDropHandle;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool};

use crate::group::{GroupCommit, GroupConfig, Write, Written};
use crate::sql_store::SqlStore;
use crate::sqlite_batch::SqliteBatch;
use crate::sqlite_raw::RawWriter;
use crate::sqlite_wal::checkpoints;
use crate::web::ImportGame;
use crate::{GameId, StoreError};

/// SQLite storage. One write at a time (SQLite has one writer at a time;
/// a pool of writers would only contend and back off): the rare writes go
/// through sqlx's one writer connection, and the writes of the hot paths
/// (games started, finished and aborted, bots' health) through a
/// [`GroupCommit`] task, which commits those of many games in one
/// transaction on the writer's own connection (`sqlite_raw::RawWriter`)
/// while it holds sqlx's. Reads go through a small pool.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    pub(crate) writer: SqlitePool,
    /// The writer's own connection: the batches, the backlog, imports.
    pub(crate) raw: RawWriter,
    group: GroupCommit,
    /// The checkpointer's task, stopped with the last handle of the store.
    _checkpointer: Arc<AbortOnDropHandle<()>>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `url` and migrates it.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let busy = Duration::from_secs(10);
        let options = SqliteConnectOptions::from_str(url)?;
        // The writer's own connection opens the same file.
        let path = one_file(url, &options)?;
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // In WAL mode, NORMAL makes every committed transaction survive a
            // crash of the process (kill -9); only a power cut can lose the
            // latest ones. FULL would add an fsync to every commit.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(busy)
            .foreign_keys(true);
        // The writer never copies the WAL into the database itself (the
        // copy and its fsync made one commit in a hundred take ~10 ms);
        // `checkpoints` does it beside it. A local file's connection cannot
        // break: no ping (a round trip to sqlx's connection thread) before
        // each use.
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect_with(options.clone().pragma("wal_autocheckpoint", "0"))
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&writer).await?;
        crate::waits::start();
        let raw = RawWriter::open(&path, busy, writer.clone())?;
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .test_before_acquire(false)
            .connect_with(options)
            .await?;
        let checkpointer = Arc::new(AbortOnDropHandle::new(tokio::spawn(checkpoints(
            pool.clone(),
        ))));
        // Each statement's answer wakes the writer's own thread at once,
        // instead of waiting its turn behind the requests of a busy runtime
        // (issue 20: the finished game's p99 8 ms instead of 22).
        let group = GroupCommit::spawn_on_thread(
            Arc::new(SqliteBatch::new(raw.clone())),
            // A commit costs no fsync here (WAL, synchronous = NORMAL), but
            // each writes every page it changed to the WAL: a batch waits
            // up to 4 ms for more writes, so that games finishing together
            // share their pages (the last leaves of each index, the
            // counts). Issue 53: a 2 ms window took 3% off the server's
            // CPU a request under `bench server`, against none; 4 ms takes
            // more. The window is waited only while writes come close
            // together (`group::waits_for_more`): a quiet server's game
            // starts and ends without it.
            GroupConfig {
                window: Duration::from_millis(4),
                ..GroupConfig::default()
            },
        )
        .map_err(StoreError::Thread)?;
        let store = SqliteStore {
            pool,
            writer,
            raw,
            group,
            _checkpointer: checkpointer,
        };
        // Games finished before ratings existed (issue 6) are rated once.
        crate::sqlite_import::rate_backlog(&store.raw).await?;
        Ok(store)
    }

    /// Stores finished games in one transaction, rating each in order, as
    /// `start_game` followed by `finish_game` would, except that every
    /// seat gets its score and forfeit flag (and its rank, if it has one),
    /// as on PostgreSQL. Returns their ids. The transaction runs on a
    /// thread for blocking work, which takes `games` with it.
    pub async fn import_games(&self, games: Vec<ImportGame>) -> Result<Vec<GameId>, StoreError> {
        crate::sqlite_import::import_games(&self.raw, games).await
    }
}

/// The database file of `url` (parsed as `options`), which the writer's
/// own connection opens beside sqlx's: refused unless it is one writable
/// file, as `sqlite://FILE` (or with `?mode=rwc` / `?mode=rw`) names. In
/// memory each connection would have a database of its own; read-only,
/// immutable, shared-cache or another VFS, the two connections would not
/// agree.
fn one_file(url: &str, options: &SqliteConnectOptions) -> Result<PathBuf, StoreError> {
    // The parameters as sqlx reads them (everything after the first `?`,
    // form-decoded).
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let plain = url::form_urlencoded::parse(query.as_bytes()).all(|(k, v)| match &*k {
        "mode" => v == "rwc" || v == "rw",
        "cache" => v == "private",
        _ => false,
    });
    let path = options.get_filename();
    // sqlx's own name for `:memory:`.
    let in_memory = path.to_string_lossy().starts_with("file:sqlx-in-memory-");
    if plain && !in_memory && !path.as_os_str().is_empty() {
        Ok(path.to_path_buf())
    } else {
        Err(StoreError::Url(url.to_string()))
    }
}

#[async_trait]
impl SqlStore for SqliteStore {
    type Db = Sqlite;

    fn reads(&self) -> &SqlitePool {
        &self.pool
    }

    fn writes(&self) -> &SqlitePool {
        &self.writer
    }

    async fn group_write(&self, write: Write) -> Result<Written, StoreError> {
        self.group.write(write).await
    }

    async fn abort_running_games(&self, reason: &str, at: &str) -> Result<u64, StoreError> {
        let r = sqlx::query("UPDATE games SET status = 'aborted', reason = $1, finished = $2 WHERE status = 'running'")
            .bind(reason)
            .bind(at)
            .execute(&self.writer)
            .await?;
        Ok(r.rows_affected())
    }

    async fn import_finished(&self, games: Vec<ImportGame>) -> Result<Vec<GameId>, StoreError> {
        SqliteStore::import_games(self, games).await
    }

    async fn mend_seats(&self) -> Result<u64, StoreError> {
        let r = sqlx::query(crate::sqlite_raw::MEND_SEATS)
            .execute(&self.writer)
            .await?;
        Ok(r.rows_affected())
    }

    fn recount_statements(&self) -> Vec<String> {
        crate::sqlite_raw::recount_statements()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn file_of(url: &str) -> Result<PathBuf, StoreError> {
        one_file(url, &SqliteConnectOptions::from_str(url).unwrap())
    }

    #[test]
    fn the_store_takes_one_writable_file_and_refuses_the_rest() {
        for (url, file) in [
            ("sqlite://games.db", "games.db"),
            ("sqlite:///srv/c/games.db?mode=rwc", "/srv/c/games.db"),
            ("sqlite:games.db?mode=rw", "games.db"),
            (
                "sqlite:///srv/mode=memory/games.db",
                "/srv/mode=memory/games.db",
            ),
        ] {
            assert_eq!(file_of(url).unwrap(), PathBuf::from(file), "{url}");
        }
        for url in [
            "sqlite::memory:",
            "sqlite://:memory:",
            "sqlite://games.db?mode=memory",
            "sqlite://games.db?mode=%6Demory",
            "sqlite://games.db?mode=ro",
            "sqlite://games.db?immutable=true",
            "sqlite://games.db?cache=shared",
            "sqlite://games.db?vfs=unix-none",
            "sqlite://",
        ] {
            assert!(matches!(file_of(url), Err(StoreError::Url(_))), "{url}");
        }
    }
}
