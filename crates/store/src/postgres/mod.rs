//! The PostgreSQL store: a connection pool, migrations applied on open (the
//! migrator takes an advisory lock, so instances may start together), and
//! the hot-path writes through the same [`GroupCommit`] writer as SQLite.

mod batch;
pub mod cluster;
mod finish;
mod hosted;
mod notice;
pub mod pull;
mod ratings;
mod seat;
mod web;

use std::str::FromStr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{FromRow, PgConnection, PgPool, Row};

use crate::group::{BatchWrite, GroupCommit, GroupConfig, Write, Written};
use crate::waits;
use crate::{
    BotId, BotInfo, BotRow, GameEnd, GameId, GameRow, NewBot, OwnerId, OwnerRow, Store, StoreError,
};

/// PostgreSQL storage. Reads and the rare writes (registrations, settings)
/// use the pool; the writes of the hot paths (games started, finished and
/// aborted, bots' health) go through a [`GroupCommit`] task, which commits
/// those of many games in one transaction: one WAL flush for many games,
/// and the rating updates of a bot's games never contend for its row.
#[derive(Debug, Clone)]
pub struct PgStore {
    pub(crate) pool: PgPool,
    /// The live tables' own connections (see `cluster`): a pairing holds
    /// one across the deal's `start_game`, which needs one of `pool`.
    live: PgPool,
    /// The finished games: each batch's commit waits until PostgreSQL
    /// flushed it to disk (a bot is told its game ended only then).
    group: GroupCommit,
    /// Games dealt and aborted, bots' health: on `live`'s connections,
    /// whose commits do not wait for the disk (`synchronous_commit = off`).
    /// A killed server process loses none of them (PostgreSQL has them);
    /// a PostgreSQL crash may lose the last fraction of a second of them,
    /// never a finished game (its commit is flushed after theirs). See
    /// docs/deploy.md.
    quick: GroupCommit,
    /// This process's id in the registry of live processes, once it
    /// registered (0 before): every game it deals names it in
    /// `games.leased_by`, so that the games of a process that dies are
    /// closed by the others (issue 13).
    process: Arc<AtomicI64>,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://` or
    /// `postgresql://`, libpq-style; a Unix socket folder goes in `host=`)
    /// and migrates it.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = PgConnectOptions::from_str(url)?.application_name("croupier");
        let pool = PgPoolOptions::new()
            .max_connections(24)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.clone())
            .await?;
        // Commits on these connections do not wait for the disk (see
        // `quick`), and a lock is waited for at most 5 s.
        let quick_options = options.clone().options([
            ("synchronous_commit", "off"),
            ("lock_timeout", cluster::LIVE_LOCK_TIMEOUT),
        ]);
        let live = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect_lazy_with(quick_options.clone());
        sqlx::migrate!("./migrations/postgres").run(&pool).await?;
        waits::start();
        let process = Arc::new(AtomicI64::new(0));
        // Each writer runs on a thread of its own with connections of its
        // own (opened from that thread, so that their answers wake it at
        // once instead of waiting behind a busy runtime's requests; see
        // `GroupCommit::spawn_on_thread`). A writer sends one batch at a
        // time: one connection, and one spare.
        let own = |options: PgConnectOptions| {
            PgPoolOptions::new()
                .max_connections(2)
                .acquire_timeout(Duration::from_secs(10))
                .connect_lazy_with(options)
        };
        let group = GroupCommit::spawn_on_thread(
            Arc::new(PgBatch(own(options.clone()), Arc::clone(&process))),
            GroupConfig::default(),
        )
        .map_err(StoreError::Thread)?;
        let quick = GroupCommit::spawn_on_thread(
            Arc::new(PgBatch(own(quick_options), Arc::clone(&process))),
            GroupConfig::default(),
        )
        .map_err(StoreError::Thread)?;
        Ok(PgStore {
            pool,
            live,
            group,
            quick,
            process,
        })
    }

    /// The connection pool (for tests and tools that read the tables).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Marks every game dealt from now on as played by registered process
    /// `id` (see [`crate::leases::LeaseStore::lease_new_games`]).
    pub(crate) fn lease_games_to(&self, id: i64) {
        self.process.store(id, Ordering::SeqCst);
    }
}

#[async_trait]
impl Store for PgStore {
    async fn create_bot(
        &self,
        name: &str,
        password_hash: &str,
        house: bool,
    ) -> Result<BotId, StoreError> {
        let r = sqlx::query_scalar(
            "INSERT INTO bots (name, password_hash, house, kind, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(name)
        .bind(password_hash)
        .bind(house)
        .bind(if house { "house" } else { "rest" })
        .bind(crate::now())
        .fetch_one(&self.pool)
        .await;
        inserted(r)
    }

    fn cluster(&self) -> Option<cluster::Cluster> {
        Some(cluster::Cluster::new(self.live.clone()))
    }

    async fn bot_by_name(&self, name: &str) -> Result<Option<BotRow>, StoreError> {
        let row = sqlx::query("SELECT id, name, password_hash, house FROM bots WHERE name = $1")
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
        match waits::timed("group: start_game", self.quick.write(write)).await? {
            Written::Game(id) => Ok(id),
            Written::Done => Err(StoreError::Closed),
        }
    }

    async fn finish_game(&self, id: GameId, end: &GameEnd) -> Result<(), StoreError> {
        let end = end.clone();
        waits::timed(
            "group: finish_game",
            self.group.write(Write::FinishGame { id, end }),
        )
        .await?;
        Ok(())
    }

    async fn abort_game(&self, id: GameId, reason: &str, at: &str) -> Result<(), StoreError> {
        let (reason, at) = (reason.to_string(), at.to_string());
        self.quick
            .write(Write::AbortGame { id, reason, at })
            .await?;
        Ok(())
    }

    async fn abort_running(&self, reason: &str, at: &str) -> Result<u64, StoreError> {
        let r = sqlx::query(
            // Issue 13 (wc): not the games a registered process plays. wk:
            // nor those of a registration that expired: the reaper closes
            // them with the registration, which is how a frozen process
            // learns it lost them (closing them here left it playing on).
            "UPDATE games SET status = 'aborted', reason = $1, finished = $2 WHERE status = 'running'
             AND NOT EXISTS (SELECT 1 FROM ladder_processes p WHERE p.id = games.leased_by)",
        )
        .bind(reason)
        .bind(at)
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected())
    }

    async fn game(&self, id: GameId) -> Result<Option<GameRow>, StoreError> {
        let row = sqlx::query(
            "SELECT id, game, status, bot1, bot2, seed, started, finished, score1, score2, forfeited_by, reason, record
             FROM games WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| GameRow::from_row(&r))
            .transpose()
            .map_err(Into::into)
    }

    async fn count_games(&self, status: &str) -> Result<i64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM games WHERE status = $1")
            .bind(status)
            .fetch_one(&self.pool)
            .await?;
        Ok(n)
    }

    async fn game_bots(&self, id: GameId) -> Result<Vec<BotId>, StoreError> {
        let bots: Vec<i64> =
            sqlx::query_scalar("SELECT bot FROM game_seats WHERE game_id = $1 ORDER BY seat")
                .bind(id)
                .fetch_all(&self.pool)
                .await?;
        Ok(bots)
    }

    async fn ensure_house_bot(&self, name: &str, game: &str) -> Result<BotId, StoreError> {
        // House bots cannot log in: their "hash" is no valid PHC string.
        sqlx::query(
            "INSERT INTO bots (name, password_hash, house, kind, game, created_at) VALUES ($1, '!house', TRUE, 'house', $2, $3) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(game)
        .bind(crate::now())
        .execute(&self.pool)
        .await?;
        let id: i64 = sqlx::query_scalar("SELECT id FROM bots WHERE name = $1 AND kind = 'house'")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::NameTaken)?;
        Ok(id)
    }

    async fn create_owner(&self, name: &str, password_hash: &str) -> Result<OwnerId, StoreError> {
        let r = sqlx::query_scalar(
            "INSERT INTO owners (name, password_hash, created_at) VALUES ($1, $2, $3) RETURNING id",
        )
        .bind(name)
        .bind(password_hash)
        .bind(crate::now())
        .fetch_one(&self.pool)
        .await;
        inserted(r)
    }

    async fn owner_by_name(&self, name: &str) -> Result<Option<OwnerRow>, StoreError> {
        let row = sqlx::query("SELECT id, name, password_hash FROM owners WHERE name = $1")
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
        let r = sqlx::query_scalar(
            "INSERT INTO bots (name, password_hash, house, kind, game, owner, endpoint, dialect, auth_user, auth_password, token_hash, created_at)
             VALUES ($1, '!remote', FALSE, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
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
        .bind(crate::now())
        .fetch_one(&self.pool)
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
        let row = sqlx::query(&format!("SELECT {BOT_INFO} FROM bots WHERE id = $1"))
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
            "SELECT {BOT_INFO} FROM bots WHERE token_hash = $1 AND kind = 'pull'"
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
        self.quick.write(write).await?;
        Ok(())
    }

    async fn set_bot_enabled(&self, id: BotId, enabled: bool) -> Result<(), StoreError> {
        let sql = if enabled {
            "UPDATE bots SET enabled = TRUE, strikes = 0, paused_until = NULL, pause_reason = NULL WHERE id = $1"
        } else {
            "UPDATE bots SET enabled = FALSE WHERE id = $1"
        };
        sqlx::query(sql).bind(id).execute(&self.pool).await?;
        Ok(())
    }

    async fn set_bot_token(&self, id: BotId, token_hash: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE bots SET token_hash = $1 WHERE id = $2 AND kind = 'pull'")
            .bind(token_hash)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn import_games(
        &self,
        games: Vec<crate::web::ImportGame>,
    ) -> Result<Vec<GameId>, StoreError> {
        PgStore::import_games(self, &games).await
    }

    fn tournaments(&self) -> &dyn crate::TournamentStore {
        self
    }

    async fn add_bot_version(
        &self,
        v: &crate::hosted::NewVersion,
    ) -> Result<crate::hosted::BotVersion, StoreError> {
        hosted::add_version(&self.pool, v).await
    }

    async fn set_version_status(
        &self,
        id: i64,
        status: &str,
        reason: Option<&str>,
        stderr: Option<&str>,
    ) -> Result<(), StoreError> {
        hosted::set_status(&self.pool, id, status, reason, stderr).await
    }

    async fn bot_versions(&self, bot: BotId) -> Result<Vec<crate::hosted::BotVersion>, StoreError> {
        hosted::versions(&self.pool, bot).await
    }

    async fn active_version(
        &self,
        bot: BotId,
    ) -> Result<Option<crate::hosted::BotVersion>, StoreError> {
        hosted::active(&self.pool, bot).await
    }

    async fn add_hosted_match(
        &self,
        game: GameId,
        bot: BotId,
        version: i64,
        stderr: &str,
    ) -> Result<(), StoreError> {
        hosted::add_match(&self.pool, game, bot, version, stderr).await
    }

    async fn hosted_matches(
        &self,
        bot: BotId,
        limit: i64,
    ) -> Result<Vec<crate::hosted::MatchStderr>, StoreError> {
        hosted::matches(&self.pool, bot, limit).await
    }

    async fn game_versions(&self, game: GameId) -> Result<Vec<(BotId, i64)>, StoreError> {
        hosted::game_versions(&self.pool, game).await
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

/// The pool, as the group-commit task sees it, and the registered process
/// its games are leased to.
struct PgBatch(PgPool, Arc<AtomicI64>);

#[async_trait]
impl BatchWrite for PgBatch {
    async fn write_batch(&self, batch: &[Write]) -> Result<Vec<Written>, StoreError> {
        let t = std::time::Instant::now();
        let mut tx = waits::timed("batch: acquire+begin", self.0.begin()).await?;
        let mut done = Vec::with_capacity(batch.len());
        let process = self.1.load(Ordering::SeqCst);
        let mut rest = batch;
        while let Some(w) = rest.first() {
            // A run of finished games (distinct ids) goes in three
            // statements; any other write on its own, in the batch's order.
            let run = finishing_run(rest);
            if run.is_empty() {
                done.push(apply(&mut tx, w, process).await?);
                rest = &rest[1..];
            } else {
                finish::finish_games(&mut tx, &run, process).await?;
                done.extend(run.iter().map(|_| Written::Done));
                rest = &rest[run.len()..];
            }
        }
        waits::record("batch: statements", t.elapsed());
        waits::timed("batch: commit", tx.commit()).await?;
        waits::record("batch: whole", t.elapsed());
        Ok(done)
    }
}

/// The finished games at the head of `writes`, up to the first other
/// write or the first game already in the run.
fn finishing_run(writes: &[Write]) -> Vec<(GameId, &GameEnd)> {
    let mut run: Vec<(GameId, &GameEnd)> = Vec::new();
    for w in writes {
        match w {
            Write::FinishGame { id, end } if !run.iter().any(|(g, _)| g == id) => {
                run.push((*id, end))
            }
            _ => break,
        }
    }
    run
}

/// Marks running game `id` aborted ([`crate::group::ABORT_GAME`]).
async fn abort_game(
    tx: &mut PgConnection,
    id: &GameId,
    reason: &str,
    at: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(crate::group::ABORT_GAME)
        .bind(reason)
        .bind(at)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Stores bot `id`'s strikes and pause ([`crate::group::BOT_HEALTH`]).
async fn bot_health(
    tx: &mut PgConnection,
    id: &BotId,
    strikes: &i64,
    paused_until: &Option<i64>,
    pause_reason: &Option<String>,
) -> Result<(), sqlx::Error> {
    sqlx::query(crate::group::BOT_HEALTH)
        .bind(strikes)
        .bind(paused_until)
        .bind(pause_reason)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// One write inside a batch's transaction.
async fn apply(tx: &mut PgConnection, w: &Write, process: i64) -> Result<Written, StoreError> {
    match w {
        Write::StartGame {
            game,
            bots,
            seed,
            started,
        } => start_game(tx, game, bots, *seed, started, process)
            .await
            .map(Written::Game),
        Write::FinishGame { id, end } => {
            finish::finish_games(tx, &[(*id, end)], process).await?;
            Ok(Written::Done)
        }
        Write::AbortGame { id, reason, at } => {
            abort_game(tx, id, reason, at).await?;
            Ok(Written::Done)
        }
        Write::BotHealth {
            id,
            strikes,
            paused_until,
            pause_reason,
        } => {
            bot_health(tx, id, strikes, paused_until, pause_reason).await?;
            Ok(Written::Done)
        }
    }
}

async fn start_game(
    tx: &mut PgConnection,
    game: &str,
    bots: &[BotId],
    seed: i64,
    started: &str,
    process: i64,
) -> Result<GameId, StoreError> {
    if bots.len() < 2 {
        return Err(StoreError::Db(sqlx::Error::Protocol(
            "a game needs at least two bots".into(),
        )));
    }
    // The game and its seats: one statement.
    let id: i64 = sqlx::query_scalar(
        "WITH g AS (INSERT INTO games (game, status, bot1, bot2, seats, seed, started, leased_by)
                    VALUES ($1, 'running', $2, $3, $4, $5, $6, NULLIF($7, 0)) RETURNING id),
              s AS (INSERT INTO game_seats (game_id, seat, bot)
                    SELECT g.id, t.seat - 1, t.bot
                    FROM g, UNNEST($8::BIGINT[]) WITH ORDINALITY AS t(bot, seat))
         SELECT id FROM g",
    )
    .bind(game)
    .bind(bots[0])
    .bind(bots[1])
    .bind(bots.len() as i64)
    .bind(seed)
    .bind(started)
    .bind(process)
    .bind(bots)
    .fetch_one(&mut *tx)
    .await?;
    Ok(id)
}

const BOT_INFO: &str = "id, name, game, kind, owner, endpoint, dialect, auth_user, auth_password, strikes, paused_until, pause_reason, enabled";

/// The id of an inserted row; a unique name clash is [`StoreError::NameTaken`].
fn inserted(r: Result<i64, sqlx::Error>) -> Result<i64, StoreError> {
    match r {
        Ok(id) => Ok(id),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(StoreError::NameTaken),
        Err(e) => Err(e.into()),
    }
}
