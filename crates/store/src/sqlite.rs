//! The SQLite store: one file, WAL journal, migrations applied on open.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{FromRow, Row, SqlitePool};

use crate::group::{GroupCommit, GroupConfig, Write, Written};
use crate::sqlite_batch::SqliteBatch;
use crate::sqlite_raw::RawWriter;
use crate::sqlite_wal::checkpoints;
use crate::{
    now, BotId, BotInfo, BotRow, GameEnd, GameId, GameRow, NewBot, OwnerId, OwnerRow, Store,
    StoreError,
};

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
    _checkpointer: Arc<AbortOnDrop>,
}

/// Aborts a task when dropped.
#[derive(Debug)]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
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
        let checkpointer = Arc::new(AbortOnDrop(tokio::spawn(checkpoints(pool.clone()))));
        // Each statement's answer wakes the writer's own thread at once,
        // instead of waiting its turn behind the requests of a busy runtime
        // (issue 20: the finished game's p99 8 ms instead of 22).
        let group = GroupCommit::spawn_on_thread(
            Arc::new(SqliteBatch::new(raw.clone())),
            GroupConfig {
                // A commit costs no fsync here (WAL, synchronous = NORMAL):
                // a batch takes what queued while the last one committed,
                // and waits for nothing more.
                window: Duration::ZERO,
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
        store.rate_backlog().await?;
        Ok(store)
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
impl Store for SqliteStore {
    async fn create_bot(
        &self,
        name: &str,
        password_hash: &str,
        house: bool,
    ) -> Result<BotId, StoreError> {
        let now = now();
        let r = sqlx::query(
            "INSERT INTO bots (name, password_hash, house, kind, created_at) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(name)
        .bind(password_hash)
        .bind(house)
        .bind(if house { "house" } else { "rest" })
        .bind(now)
        .execute(&self.writer)
        .await;
        inserted(r)
    }

    async fn bot_by_name(&self, name: &str) -> Result<Option<BotRow>, StoreError> {
        let row = sqlx::query("SELECT id, name, password_hash, house FROM bots WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            None => None,
            Some(r) => Some(BotRow {
                id: r.try_get("id")?,
                name: r.try_get("name")?,
                password_hash: r.try_get("password_hash")?,
                house: r.try_get("house")?,
            }),
        })
    }

    async fn start_game(
        &self,
        game: &str,
        bots: &[BotId],
        seed: i64,
        started: &str,
    ) -> Result<GameId, StoreError> {
        let write = Write::StartGame {
            game: game.to_string(),
            bots: bots.to_vec(),
            seed,
            started: started.to_string(),
        };
        match self.group.write(write).await? {
            Written::Game(id) => Ok(id),
            Written::Done => Err(StoreError::Closed),
        }
    }

    async fn finish_game(&self, id: GameId, end: &GameEnd) -> Result<(), StoreError> {
        let end = end.clone();
        self.group.write(Write::FinishGame { id, end }).await?;
        Ok(())
    }

    async fn abort_game(&self, id: GameId, reason: &str, at: &str) -> Result<(), StoreError> {
        let (reason, at) = (reason.to_string(), at.to_string());
        self.group
            .write(Write::AbortGame { id, reason, at })
            .await?;
        Ok(())
    }

    async fn abort_running(&self, reason: &str, at: &str) -> Result<u64, StoreError> {
        let r = sqlx::query("UPDATE games SET status = 'aborted', reason = ?, finished = ? WHERE status = 'running'")
            .bind(reason)
            .bind(at)
            .execute(&self.writer)
            .await?;
        Ok(r.rows_affected())
    }

    async fn game(&self, id: GameId) -> Result<Option<GameRow>, StoreError> {
        let row = sqlx::query("SELECT * FROM games WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| GameRow::from_row(&r))
            .transpose()
            .map_err(Into::into)
    }

    async fn count_games(&self, status: &str) -> Result<i64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM games WHERE status = ?")
            .bind(status)
            .fetch_one(&self.pool)
            .await?;
        Ok(n)
    }

    async fn game_bots(&self, id: GameId) -> Result<Vec<BotId>, StoreError> {
        let bots: Vec<i64> =
            sqlx::query_scalar("SELECT bot FROM game_seats WHERE game_id = ? ORDER BY seat")
                .bind(id)
                .fetch_all(&self.pool)
                .await?;
        Ok(bots)
    }

    async fn ensure_house_bot(&self, name: &str, game: &str) -> Result<BotId, StoreError> {
        // House bots cannot log in: their "hash" is no valid PHC string.
        sqlx::query(
            "INSERT INTO bots (name, password_hash, house, kind, game, created_at) VALUES (?, '!house', 1, 'house', ?, ?) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(game)
        .bind(now())
        .execute(&self.writer)
        .await?;
        let id: i64 = sqlx::query_scalar("SELECT id FROM bots WHERE name = ? AND kind = 'house'")
            .bind(name)
            .fetch_optional(&self.writer)
            .await?
            .ok_or(StoreError::NameTaken)?;
        Ok(id)
    }

    async fn create_owner(&self, name: &str, password_hash: &str) -> Result<OwnerId, StoreError> {
        let r =
            sqlx::query("INSERT INTO owners (name, password_hash, created_at) VALUES (?, ?, ?)")
                .bind(name)
                .bind(password_hash)
                .bind(now())
                .execute(&self.writer)
                .await;
        inserted(r)
    }

    async fn owner_by_name(&self, name: &str) -> Result<Option<OwnerRow>, StoreError> {
        let row = sqlx::query("SELECT id, name, password_hash FROM owners WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            None => None,
            Some(r) => Some(OwnerRow {
                id: r.try_get("id")?,
                name: r.try_get("name")?,
                password_hash: r.try_get("password_hash")?,
            }),
        })
    }

    async fn create_remote_bot(&self, bot: &NewBot) -> Result<BotId, StoreError> {
        let r = sqlx::query(
            "INSERT INTO bots (name, password_hash, house, kind, game, owner, endpoint, dialect, auth_user, auth_password, token_hash, created_at) VALUES (?, '!remote', 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&bot.name)
        .bind(bot.kind.name())
        .bind(&bot.game)
        .bind(bot.owner)
        .bind(&bot.endpoint)
        .bind(&bot.dialect)
        .bind(&bot.auth_user)
        .bind(&bot.auth_password)
        .bind(&bot.token_hash)
        .bind(now())
        .execute(&self.writer)
        .await;
        inserted(r)
    }

    async fn remote_bots(&self) -> Result<Vec<BotInfo>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {BOT_INFO} FROM bots WHERE kind IN ('push', 'pull', 'hosted') ORDER BY id"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(BotInfo::from_row)
            .collect::<Result<_, _>>()
            .map_err(Into::into)
    }

    async fn bot_info(&self, id: BotId) -> Result<Option<BotInfo>, StoreError> {
        let row = sqlx::query(&format!("SELECT {BOT_INFO} FROM bots WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref()
            .map(BotInfo::from_row)
            .transpose()
            .map_err(Into::into)
    }

    async fn bot_by_token(&self, token_hash: &str) -> Result<Option<BotInfo>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {BOT_INFO} FROM bots WHERE token_hash = ? AND kind = 'pull'"
        ))
        .bind(token_hash)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref()
            .map(BotInfo::from_row)
            .transpose()
            .map_err(Into::into)
    }

    async fn set_bot_health(
        &self,
        id: BotId,
        strikes: i64,
        paused_until: Option<i64>,
        pause_reason: Option<&str>,
    ) -> Result<(), StoreError> {
        let pause_reason = pause_reason.map(str::to_string);
        let write = Write::BotHealth {
            id,
            strikes,
            paused_until,
            pause_reason,
        };
        self.group.write(write).await?;
        Ok(())
    }

    async fn set_bot_enabled(&self, id: BotId, enabled: bool) -> Result<(), StoreError> {
        let sql = if enabled {
            "UPDATE bots SET enabled = 1, strikes = 0, paused_until = NULL, pause_reason = NULL WHERE id = ?"
        } else {
            "UPDATE bots SET enabled = 0 WHERE id = ?"
        };
        sqlx::query(sql).bind(id).execute(&self.writer).await?;
        Ok(())
    }

    async fn set_bot_token(&self, id: BotId, token_hash: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE bots SET token_hash = ? WHERE id = ? AND kind = 'pull'")
            .bind(token_hash)
            .bind(id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    async fn import_games(
        &self,
        games: Vec<crate::web::ImportGame>,
    ) -> Result<Vec<GameId>, StoreError> {
        SqliteStore::import_games(self, games).await
    }

    fn tournaments(&self) -> &dyn crate::TournamentStore {
        self
    }

    async fn add_bot_version(
        &self,
        v: &crate::hosted::NewVersion,
    ) -> Result<crate::hosted::BotVersion, StoreError> {
        crate::sqlite_hosted::add_version(&self.writer, v).await
    }

    async fn set_version_status(
        &self,
        id: i64,
        status: &str,
        reason: Option<&str>,
        stderr: Option<&str>,
    ) -> Result<(), StoreError> {
        crate::sqlite_hosted::set_status(&self.writer, id, status, reason, stderr).await
    }

    async fn bot_versions(&self, bot: BotId) -> Result<Vec<crate::hosted::BotVersion>, StoreError> {
        crate::sqlite_hosted::versions(&self.pool, bot).await
    }

    async fn active_version(
        &self,
        bot: BotId,
    ) -> Result<Option<crate::hosted::BotVersion>, StoreError> {
        crate::sqlite_hosted::active(&self.pool, bot).await
    }

    async fn add_hosted_match(
        &self,
        game: GameId,
        bot: BotId,
        version: i64,
        stderr: &str,
    ) -> Result<(), StoreError> {
        crate::sqlite_hosted::add_match(&self.writer, game, bot, version, stderr).await
    }

    async fn hosted_matches(
        &self,
        bot: BotId,
        limit: i64,
    ) -> Result<Vec<crate::hosted::MatchStderr>, StoreError> {
        crate::sqlite_hosted::matches(&self.pool, bot, limit).await
    }

    async fn game_versions(&self, game: GameId) -> Result<Vec<(BotId, i64)>, StoreError> {
        crate::sqlite_hosted::game_versions(&self.pool, game).await
    }

    async fn mark_person_game(
        &self,
        id: GameId,
        seat: usize,
        player: &str,
    ) -> Result<(), StoreError> {
        self.mark_person_game_impl(id, seat, player).await
    }

    async fn person_game(&self, id: GameId) -> Result<Option<crate::PersonSeat>, StoreError> {
        self.person_game_impl(id).await
    }

    async fn set_bot_challenges(&self, bot: BotId, allow: bool) -> Result<(), StoreError> {
        self.set_bot_challenges_impl(bot, allow).await
    }

    async fn challengeable_bots(&self) -> Result<Vec<BotId>, StoreError> {
        self.challengeable_bots_impl().await
    }

    fn leases(&self) -> &dyn crate::LeaseStore {
        self // issue 13 (wc)
    }
}

const BOT_INFO: &str = "id, name, game, kind, owner, endpoint, dialect, auth_user, auth_password, strikes, paused_until, pause_reason, enabled";

/// The id of an inserted row; a unique name clash is [`StoreError::NameTaken`].
fn inserted(r: Result<sqlx::sqlite::SqliteQueryResult, sqlx::Error>) -> Result<i64, StoreError> {
    match r {
        Ok(done) => Ok(done.last_insert_rowid()),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(StoreError::NameTaken),
        Err(e) => Err(e.into()),
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
