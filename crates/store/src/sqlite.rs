//! The SQLite store: one file, WAL journal, migrations applied on open.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{FromRow, Row, SqliteConnection, SqlitePool};

use crate::group::{BatchWrite, GroupCommit, GroupConfig, Write, Written};
use crate::{
    now, BotId, BotInfo, BotRow, GameEnd, GameId, GameRow, NewBot, OwnerId, OwnerRow, Store,
    StoreError,
};

/// SQLite storage. Writes go through one connection (SQLite has one writer
/// at a time; a pool of writers would only contend and back off), reads
/// through a small pool. The writes of the hot paths (games started,
/// finished and aborted, bots' health) go through a [`GroupCommit`] task,
/// which commits those of many games in one transaction.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    pub(crate) writer: SqlitePool,
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
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // In WAL mode, NORMAL makes every committed transaction survive a
            // crash of the process (kill -9); only a power cut can lose the
            // latest ones. FULL would add an fsync to every commit.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        // The writer never copies the WAL into the database itself (the
        // copy and its fsync made one commit in a hundred take ~10 ms);
        // `checkpoints` does it beside it.
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone().pragma("wal_autocheckpoint", "0"))
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&writer).await?;
        crate::waits::start();
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        let checkpointer = Arc::new(AbortOnDrop(tokio::spawn(checkpoints(pool.clone()))));
        // Each statement's answer wakes the writer's own thread at once,
        // instead of waiting its turn behind the requests of a busy runtime
        // (issue 20: the finished game's p99 8 ms instead of 22).
        let group = GroupCommit::spawn_on_thread(
            Arc::new(SqliteBatch {
                writer: writer.clone(),
                next_top_up: std::sync::Mutex::new(std::time::Instant::now() + TOP_UP_EVERY),
            }),
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
            group,
            _checkpointer: checkpointer,
        };
        // Games finished before ratings existed (issue 6) are rated once.
        store.rate_backlog().await?;
        Ok(store)
    }
}

/// How often the WAL is copied into the database.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// How often the writer itself finishes the copy, when idle.
const TOP_UP_EVERY: Duration = Duration::from_secs(1);

/// How soon the writer tries again when its copy was not whole.
const TOP_UP_RETRY: Duration = Duration::from_millis(50);

/// Copies what it can of the WAL into the database without waiting for
/// anyone (`PRAGMA wal_checkpoint(PASSIVE)`), timed as `wait`: whether it
/// copied every frame (not when another checkpoint was running, or a
/// reader stopped it short).
async fn checkpoint(pool: &SqlitePool, wait: &'static str) -> Result<bool, sqlx::Error> {
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
async fn checkpoints(pool: SqlitePool) {
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
        games: &[crate::web::ImportGame],
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

/// The writer connection, as the group-commit task sees it.
struct SqliteBatch {
    writer: SqlitePool,
    /// When the writer next finishes the WAL's copy itself.
    next_top_up: std::sync::Mutex<std::time::Instant>,
}

#[async_trait]
impl BatchWrite for SqliteBatch {
    /// The checkpointer copies the WAL beside the writer, but a busy writer
    /// always appends more meanwhile, and SQLite starts the WAL afresh only
    /// when a transaction begins with every frame copied: without this the
    /// WAL grew by gigabytes a minute under load. So, when no write waits,
    /// the writer copies what is left (little: what came since the last
    /// copy, but with its fsync) at most every [`TOP_UP_EVERY`]; the WAL
    /// then stays under about a second of writes.
    ///
    /// A copy that finds the checkpointer at work (SQLite runs one
    /// checkpoint at a time) copies nothing; one that a reader stops short
    /// copies only part. Either is tried again [`TOP_UP_RETRY`] later:
    /// counted as done, three collisions in a row left the WAL growing for
    /// three seconds.
    async fn idle(&self) {
        let now = std::time::Instant::now();
        if now < *self.next_top_up.lock().unwrap_or_else(|p| p.into_inner()) {
            return;
        }
        let whole = checkpoint(&self.writer, "sqlite: checkpoint (the writer, idle)").await;
        let next = if matches!(whole, Ok(true)) {
            TOP_UP_EVERY
        } else {
            TOP_UP_RETRY
        };
        *self.next_top_up.lock().unwrap_or_else(|p| p.into_inner()) =
            std::time::Instant::now() + next;
    }

    async fn write_batch(&self, batch: &[Write]) -> Result<Vec<Written>, StoreError> {
        let t = std::time::Instant::now();
        let mut tx = crate::waits::timed("batch: acquire+begin", self.writer.begin()).await?;
        let mut done = Vec::with_capacity(batch.len());
        for w in batch {
            done.push(apply(&mut tx, w).await?);
        }
        crate::waits::record("batch: statements", t.elapsed());
        crate::waits::timed("batch: commit", tx.commit()).await?;
        crate::waits::record("batch: whole", t.elapsed());
        Ok(done)
    }
}

/// One write inside a batch's transaction.
async fn apply(tx: &mut SqliteConnection, w: &Write) -> Result<Written, StoreError> {
    match w {
        Write::StartGame {
            game,
            bots,
            seed,
            started,
        } => start_game(tx, game, bots, *seed, started)
            .await
            .map(Written::Game),
        Write::FinishGame { id, end } => {
            finish_game(tx, *id, end).await?;
            Ok(Written::Done)
        }
        Write::AbortGame { id, reason, at } => {
            sqlx::query("UPDATE games SET status = 'aborted', reason = ?, finished = ? WHERE id = ? AND status = 'running'")
                .bind(reason)
                .bind(at)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            Ok(Written::Done)
        }
        Write::BotHealth {
            id,
            strikes,
            paused_until,
            pause_reason,
        } => {
            sqlx::query(
                "UPDATE bots SET strikes = ?, paused_until = ?, pause_reason = ? WHERE id = ?",
            )
            .bind(strikes)
            .bind(paused_until)
            .bind(pause_reason)
            .bind(id)
            .execute(&mut *tx)
            .await?;
            Ok(Written::Done)
        }
    }
}

async fn start_game(
    tx: &mut SqliteConnection,
    game: &str,
    bots: &[BotId],
    seed: i64,
    started: &str,
) -> Result<GameId, StoreError> {
    if bots.len() < 2 {
        return Err(StoreError::Db(sqlx::Error::Protocol(
            "a game needs at least two bots".into(),
        )));
    }
    let r = sqlx::query(
        "INSERT INTO games (game, status, bot1, bot2, seats, seed, started) VALUES (?, 'running', ?, ?, ?, ?, ?)",
    )
    .bind(game)
    .bind(bots[0])
    .bind(bots[1])
    .bind(bots.len() as i64)
    .bind(seed)
    .bind(started)
    .execute(&mut *tx)
    .await?;
    let id = r.last_insert_rowid();
    for (seat, bot) in bots.iter().enumerate() {
        sqlx::query("INSERT INTO game_seats (game_id, seat, bot) VALUES (?, ?, ?)")
            .bind(id)
            .bind(seat as i64)
            .bind(bot)
            .execute(&mut *tx)
            .await?;
    }
    Ok(id)
}

async fn finish_game(
    tx: &mut SqliteConnection,
    id: GameId,
    end: &GameEnd,
) -> Result<(), StoreError> {
    // Issue 13 (wc): only a running game finishes; one closed meanwhile
    // (its process was reaped as lost) stays as it was, unrated.
    let r = sqlx::query(
        "UPDATE games SET status = 'finished', finished = ?, score1 = ?, score2 = ?, forfeited_by = ?, record = ? WHERE id = ? AND status = 'running'",
    )
    .bind(&end.finished)
    .bind(end.scores.first().copied().flatten())
    .bind(end.scores.get(1).copied().flatten())
    .bind(end.forfeited_by)
    .bind(&end.record)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    if r.rows_affected() == 0 {
        return Ok(());
    }
    for (seat, rank) in end.ranks.iter().enumerate() {
        sqlx::query(
            "UPDATE game_seats SET score = ?, rank = ?, forfeited = (bot IS ?) WHERE game_id = ? AND seat = ?",
        )
        .bind(end.scores.get(seat).copied().flatten())
        .bind(i64::from(*rank))
        .bind(end.forfeited_by)
        .bind(id)
        .bind(seat as i64)
        .execute(&mut *tx)
        .await?;
    }
    // Ratings, counts and head-to-head of the website (issue 6).
    crate::ratings::record_result(tx, id, end).await?;
    Ok(())
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
