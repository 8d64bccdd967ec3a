//! The SQLite writer's side of the group commit (`crate::group`): what one
//! batch's transaction runs for each hot write (games started, finished
//! and aborted, bots' health), and the WAL top-up when no write waits.
//!
//! Every statement is a round trip to sqlx's connection thread, which
//! under load cost more than SQLite's own work (issue 20: the writer's two
//! threads took a quarter of the server's CPU). So a started game is two
//! statements (the game, then all its seats in one), and a finished game
//! seven: the game marked finished, saying whether it is rated; its
//! seats' scores and ranks; and, when rated, the seats' bots with their
//! ratings before, then each ratings table written once
//! (`ratings::write_rated`).

use std::time::Duration;

use async_trait::async_trait;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection, SqlitePool};

use crate::group::{BatchWrite, Write, Written};
use crate::ratings::ratable;
use crate::sqlite::checkpoint;
use crate::{BotId, GameEnd, GameId, StoreError};

/// How often the writer itself finishes the copy, when idle.
const TOP_UP_EVERY: Duration = Duration::from_secs(1);

/// How soon the writer tries again when its copy was not whole.
const TOP_UP_RETRY: Duration = Duration::from_millis(50);

/// The writer connection, as the group-commit task sees it.
pub(crate) struct SqliteBatch {
    writer: SqlitePool,
    /// When the writer next finishes the WAL's copy itself.
    next_top_up: std::sync::Mutex<std::time::Instant>,
}

impl SqliteBatch {
    /// The group-commit writer's side of the writer connection.
    pub(crate) fn new(writer: SqlitePool) -> Self {
        SqliteBatch {
            writer,
            next_top_up: std::sync::Mutex::new(std::time::Instant::now() + TOP_UP_EVERY),
        }
    }
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

crate::group::plain_writes_fn!(SqliteConnection);

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

/// Inserts a running game and its seats; its id.
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
    let id = sqlx::query(
        "INSERT INTO games (game, status, bot1, bot2, seats, seed, started) VALUES (?, 'running', ?, ?, ?, ?, ?)",
    )
    .bind(game)
    .bind(bots[0])
    .bind(bots[1])
    .bind(bots.len() as i64)
    .bind(seed)
    .bind(started)
    .execute(&mut *tx)
    .await?
    .last_insert_rowid();
    QueryBuilder::<Sqlite>::new("INSERT INTO game_seats (game_id, seat, bot) ")
        .push_values(bots.iter().enumerate(), |mut row, (seat, bot)| {
            row.push_bind(id).push_bind(seat as i64).push_bind(*bot);
        })
        .build()
        .execute(&mut *tx)
        .await?;
    Ok(id)
}

/// Marks running game `id` finished with its scores and ranks, and rates
/// it when it counts for the ratings (see `crate::ratings`). A game closed
/// meanwhile (issue 13: its process was reaped as lost) stays as it was,
/// unrated.
async fn finish_game(
    tx: &mut SqliteConnection,
    id: GameId,
    end: &GameEnd,
) -> Result<(), StoreError> {
    // Rated unless it is a tournament's game (ratings stay the ladder's), a
    // game a person played, or rated before (a repeated finish: the
    // history row of seat 0's bot). The same rule as
    // `ratings::rated_game_fn`'s: change both.
    let marked: Option<(String, i64, bool)> = sqlx::query_as(
        "UPDATE games SET status = 'finished', finished = ?, score1 = ?, score2 = ?, forfeited_by = ?, record = ?
         WHERE id = ? AND status = 'running'
         RETURNING game, seats,
             tournament_id IS NULL
             AND NOT EXISTS (SELECT 1 FROM person_games WHERE game_id = games.id)
             AND NOT EXISTS (SELECT 1 FROM rating_history h JOIN game_seats s ON s.bot = h.bot
                             WHERE s.game_id = games.id AND s.seat = 0 AND h.game_id = games.id)",
    )
    .bind(&end.finished)
    .bind(end.scores.first().copied().flatten())
    .bind(end.scores.get(1).copied().flatten())
    .bind(end.forfeited_by)
    .bind(&end.record)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((game, seats, rateable)) = marked else {
        return Ok(());
    };
    // Every seat with a rank gets its score and rank, in one statement.
    // (Ranks past the last seat would match no row: left out, they cannot
    // push the statement past SQLite's limit of bound values.)
    let ranked = end.ranks.len().min(usize::try_from(seats).unwrap_or(0));
    if ranked > 0 {
        let mut q = QueryBuilder::<Sqlite>::new(
            "UPDATE game_seats SET score = v.column2, rank = v.column3, forfeited = (bot IS ",
        );
        q.push_bind(end.forfeited_by).push(") FROM (");
        q.push_values(
            end.ranks[..ranked].iter().enumerate(),
            |mut row, (seat, rank)| {
                row.push_bind(seat as i64)
                    .push_bind(end.scores.get(seat).copied().flatten())
                    .push_bind(i64::from(*rank));
            },
        );
        q.push(") AS v WHERE game_id = ")
            .push_bind(id)
            .push(" AND seat = v.column1");
        q.build().execute(&mut *tx).await?;
    }
    if !rateable {
        return Ok(());
    }
    let seated = crate::ratings::seats_before(tx, &game, id).await?;
    let bots: Vec<BotId> = seated.iter().map(|s| s.0).collect();
    let Some(ranks) = ratable(&bots, end) else {
        return Ok(());
    };
    let before: Vec<(f64, f64)> = seated.iter().map(|s| s.1).collect();
    crate::ratings::write_rated(tx, id, end, &game, &bots, &ranks, &before).await?;
    Ok(())
}
