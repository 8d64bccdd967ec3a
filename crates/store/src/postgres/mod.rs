//! The PostgreSQL store: a connection pool, migrations applied on open (the
//! migrator takes an advisory lock, so instances may start together), and
//! the hot-path writes through the same [`GroupCommit`] writer as SQLite.

mod batch;
pub mod cluster;
mod finish;
mod import;
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
use sqlx::{Connection as _, PgConnection, PgPool, Postgres};

use crate::group::{BatchWrite, GroupCommit, GroupConfig, Write, Written};
use crate::sql_store::SqlStore;
use crate::waits;
use crate::web::ImportGame;
use crate::{BotId, GameEnd, GameId, StoreError};

/// How long a starting store tries to connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the one try that says why it could not waits.
const LAST_TRY: Duration = Duration::from_secs(5);

/// The store's pool on `options`. The pool tries for [`CONNECT_TIMEOUT`]
/// and then says only that it timed out: one try of its own (at most
/// [`LAST_TRY`], so that a host that drops packets does not hold the start
/// for the system's TCP timeout) says why, or finds the database up by
/// now and tries the pool again.
async fn connect(options: &PgConnectOptions) -> Result<PgPool, StoreError> {
    let pool = || {
        PgPoolOptions::new()
            .max_connections(24)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options.clone())
    };
    match pool().await {
        Err(sqlx::Error::PoolTimedOut) => {}
        other => return Ok(other?),
    }
    let unreachable = |last: String| StoreError::Unreachable {
        seconds: CONNECT_TIMEOUT.as_secs(),
        last,
    };
    match tokio::time::timeout(LAST_TRY, PgConnection::connect_with(options)).await {
        Ok(Ok(_)) => Ok(pool().await?),
        Ok(Err(e)) => Err(unreachable(e.to_string())),
        Err(_) => Err(unreachable(format!(
            "no answer in {} s",
            LAST_TRY.as_secs()
        ))),
    }
}

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
        let pool = connect(&options).await?;
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

    /// Stores finished games in one transaction, rating each in order, as
    /// `start_game` followed by `finish_game` would. Returns their ids.
    pub async fn import_games(&self, games: &[ImportGame]) -> Result<Vec<GameId>, StoreError> {
        import::import_games(&self.pool, games).await
    }

    /// Marks every game dealt from now on as played by registered process
    /// `id` (see [`crate::leases::LeaseStore::lease_new_games`]).
    pub(crate) fn lease_games_to(&self, id: i64) {
        self.process.store(id, Ordering::SeqCst);
    }
}

#[async_trait]
impl SqlStore for PgStore {
    type Db = Postgres;

    fn reads(&self) -> &PgPool {
        &self.pool
    }

    fn writes(&self) -> &PgPool {
        &self.pool
    }

    /// Games dealt and aborted, bots' health: through `quick`; finished
    /// games through `group` (see [`PgStore`]).
    async fn group_write(&self, write: Write) -> Result<Written, StoreError> {
        match write {
            Write::StartGame { .. } => {
                waits::timed("group: start_game", self.quick.write(write)).await
            }
            Write::FinishGame { .. } => {
                waits::timed("group: finish_game", self.group.write(write)).await
            }
            Write::AbortGame { .. } | Write::BotHealth { .. } => self.quick.write(write).await,
        }
    }

    async fn abort_running_games(&self, reason: &str, at: &str) -> Result<u64, StoreError> {
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

    async fn import_finished(&self, games: Vec<ImportGame>) -> Result<Vec<GameId>, StoreError> {
        PgStore::import_games(self, &games).await
    }

    async fn mend_seats(&self) -> Result<u64, StoreError> {
        let r = sqlx::query(finish::MEND_SEATS).execute(&self.pool).await?;
        Ok(r.rows_affected())
    }

    fn recount_statements(&self) -> Vec<String> {
        finish::recount_statements()
    }

    fn instances(&self) -> Option<cluster::Cluster> {
        Some(cluster::Cluster::new(self.live.clone()))
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
    crate::group::two_bots_at_least(bots)?;
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
