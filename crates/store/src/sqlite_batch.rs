//! The SQLite writer's side of the group commit (`crate::group`): what one
//! batch's transaction runs for each hot write (games started, finished
//! and aborted, bots' health), and the WAL's top-up between batches.
//!
//! A batch runs on the group-commit thread itself, through rusqlite on the
//! writer's own connection (`sqlite_raw::RawWriter`): sqlx would hand every
//! statement to its connection thread and back, and under load those
//! hand-offs cost more than SQLite's own work (issue 20). A started game
//! is two statements (the game, then all its seats in one), and a finished
//! game seven: the game marked finished, saying whether it is rated; its
//! seats' scores and ranks; and, when rated, the seats' bots with their
//! ratings before, then each ratings table written once
//! (`sqlite_ratings`).

use std::time::{Duration, Instant};

use async_trait::async_trait;
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, OptionalExtension, TransactionBehavior};

use crate::group::{BatchWrite, Write, Written};
use crate::sqlite_raw::{rows, RawWriter};
use crate::sqlite_wal::checkpoint;
use crate::{BotId, GameEnd, GameId, StoreError};

/// How often the writer itself finishes the copy, when idle.
const TOP_UP_EVERY: Duration = Duration::from_secs(1);

/// How soon the writer tries again when its copy was not whole.
const TOP_UP_RETRY: Duration = Duration::from_millis(50);

/// The same, while writes wait (each try may end with an fsync they wait
/// for).
const TOP_UP_RETRY_WAITING: Duration = Duration::from_millis(250);

/// How old the last whole copy may grow before the writer makes one even
/// while writes wait: a stream that never leaves the queue empty would
/// otherwise never let the WAL start afresh.
const TOP_UP_OVERDUE: Duration = Duration::from_secs(2);

/// The writer connection, as the group-commit task sees it.
pub(crate) struct SqliteBatch {
    /// The batches' statements (and, through its pool, the WAL copies).
    raw: RawWriter,
    /// When the writer last finished the WAL's copy, and may next try.
    top_up: std::sync::Mutex<TopUp>,
}

/// When the writer copies the rest of the WAL itself.
#[derive(Debug, Clone, Copy)]
struct TopUp {
    /// No copy before this when no write waits.
    next: Instant,
    /// Nor before this when writes wait: [`TOP_UP_OVERDUE`] after the
    /// last whole copy (or the store's start), or later after a copy cut
    /// short.
    next_waiting: Instant,
}

impl TopUp {
    fn new(now: Instant) -> Self {
        TopUp {
            next: now + TOP_UP_EVERY,
            next_waiting: now + TOP_UP_OVERDUE,
        }
    }

    /// Whether to copy now: when no write waits, once `next` has come;
    /// when writes wait, only once the last whole copy is
    /// [`TOP_UP_OVERDUE`] old, and a copy cut short is tried again less
    /// often.
    fn due(&self, now: Instant, waiting: bool) -> bool {
        if waiting {
            now >= self.next_waiting
        } else {
            now >= self.next
        }
    }

    /// After a copy that ended at `now`, whole or not.
    fn copied(&mut self, now: Instant, whole: bool) {
        if whole {
            *self = TopUp::new(now);
        } else {
            self.next = now + TOP_UP_RETRY;
            self.next_waiting = self.next_waiting.max(now + TOP_UP_RETRY_WAITING);
        }
    }
}

impl SqliteBatch {
    fn top_up(&self) -> std::sync::MutexGuard<'_, TopUp> {
        self.top_up.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The group-commit writer's side of the writer connection.
    pub(crate) fn new(raw: RawWriter) -> Self {
        SqliteBatch {
            raw,
            top_up: std::sync::Mutex::new(TopUp::new(Instant::now())),
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
    /// then stays under about a second of writes. Writes that never stop
    /// coming (the queue never empty after a batch, as on a machine short
    /// of CPU) wait for one copy once the last whole one is
    /// [`TOP_UP_OVERDUE`] old.
    ///
    /// A copy that finds the checkpointer at work (SQLite runs one
    /// checkpoint at a time) copies nothing; one that a reader stops short
    /// copies only part. Either is tried again [`TOP_UP_RETRY`] later
    /// ([`TOP_UP_RETRY_WAITING`] while writes wait):
    /// counted as done, three collisions in a row left the WAL growing for
    /// three seconds.
    async fn upkeep(&self, waiting: bool) {
        let due = self.top_up().due(Instant::now(), waiting);
        if !due {
            return;
        }
        let whole = checkpoint(self.raw.pool(), "sqlite: checkpoint (the writer)").await;
        self.top_up()
            .copied(Instant::now(), matches!(whole, Ok(true)));
    }

    async fn write_batch(&self, batch: &[Write]) -> Result<Vec<Written>, StoreError> {
        let t = std::time::Instant::now();
        let done = self
            .raw
            .run(|db| {
                let tx = rusqlite::Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
                let mut done = Vec::with_capacity(batch.len());
                for w in batch {
                    done.push(apply(&tx, w)?);
                }
                crate::waits::record("batch: statements", t.elapsed());
                tx.commit()?;
                Ok(done)
            })
            .await;
        crate::waits::record("batch: whole", t.elapsed());
        done
    }
}

/// One write inside a batch's transaction.
fn apply(db: &rusqlite::Connection, w: &Write) -> Result<Written, StoreError> {
    match w {
        Write::StartGame {
            game,
            bots,
            seed,
            started,
        } => start_game(db, game, bots, *seed, started).map(Written::Game),
        Write::FinishGame { id, end } => {
            finish_game(db, *id, end)?;
            Ok(Written::Done)
        }
        Write::AbortGame { id, reason, at } => {
            db.prepare_cached(crate::group::ABORT_GAME)?
                .execute(params![reason, at, id])?;
            Ok(Written::Done)
        }
        Write::BotHealth {
            id,
            strikes,
            paused_until,
            pause_reason,
        } => {
            db.prepare_cached(crate::group::BOT_HEALTH)?
                .execute(params![strikes, paused_until, pause_reason, id])?;
            Ok(Written::Done)
        }
    }
}

/// Inserts a running game and its seats; its id.
fn start_game(
    db: &rusqlite::Connection,
    game: &str,
    bots: &[BotId],
    seed: i64,
    started: &str,
) -> Result<GameId, StoreError> {
    crate::group::two_bots_at_least(bots)?;
    db.prepare_cached(
        "INSERT INTO games (game, status, bot1, bot2, seats, seed, started) VALUES (?, 'running', ?, ?, ?, ?, ?)",
    )?
    .execute(params![game, bots[0], bots[1], bots.len() as i64, seed, started])?;
    let id = db.last_insert_rowid();
    let values: Vec<i64> = bots
        .iter()
        .enumerate()
        .flat_map(|(seat, bot)| [id, seat as i64, *bot])
        .collect();
    db.prepare_cached(&format!(
        "INSERT INTO game_seats (game_id, seat, bot) VALUES {}",
        rows("(?, ?, ?)", bots.len())
    ))?
    .execute(params_from_iter(values))?;
    Ok(id)
}

/// Marks running game `id` finished with its scores and ranks, and rates
/// it when it counts for the ratings (see `crate::ratings`). A game closed
/// meanwhile (issue 13: its process was reaped as lost) stays as it was,
/// unrated.
fn finish_game(db: &rusqlite::Connection, id: GameId, end: &GameEnd) -> Result<(), StoreError> {
    // Rated unless it is a tournament's game (ratings stay the ladder's), a
    // game a person played, or rated before (a repeated finish: the
    // history row of seat 0's bot). The same rule as
    // `sqlite_ratings::rate_finished`'s and `postgres::finish::mark`'s:
    // change all three.
    let marked: Option<(String, i64, bool)> = db
        .prepare_cached(
            "UPDATE games SET status = 'finished', finished = ?, score1 = ?, score2 = ?, forfeited_by = ?, record = ?,
                 facts = ?
             WHERE id = ? AND status = 'running'
             RETURNING game, seats,
                 tournament_id IS NULL
                 AND NOT EXISTS (SELECT 1 FROM person_games WHERE game_id = games.id)
                 AND NOT EXISTS (SELECT 1 FROM rating_history h JOIN game_seats s ON s.bot = h.bot
                                 WHERE s.game_id = games.id AND s.seat = 0 AND h.game_id = games.id)",
        )?
        .query_row(
            params![
                end.finished,
                end.scores.first().copied().flatten(),
                end.scores.get(1).copied().flatten(),
                end.forfeited_by,
                end.record,
                end.facts,
                id
            ],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((game, seats, rateable)) = marked else {
        return Ok(());
    };
    // Every seat with a rank gets its score and rank, in one statement.
    // (Ranks past the last seat would match no row: left out, they cannot
    // push the statement past SQLite's limit of bound values.)
    let ranked = end.ranks.len().min(usize::try_from(seats).unwrap_or(0));
    if ranked > 0 {
        let mut values: Vec<Value> = Vec::with_capacity(3 + 3 * ranked);
        values.push(end.forfeited_by.into());
        values.push(end.finished.clone().into());
        for (seat, rank) in end.ranks[..ranked].iter().enumerate() {
            values.push((seat as i64).into());
            values.push(end.scores.get(seat).copied().flatten().into());
            values.push(i64::from(*rank).into());
        }
        values.push(id.into());
        db.prepare_cached(&format!(
            "UPDATE game_seats SET score = v.column2, rank = v.column3, forfeited = (bot IS ?),
                 finished = ?
             FROM (VALUES {}) AS v WHERE game_id = ? AND seat = v.column1",
            rows("(?, ?, ?)", ranked)
        ))?
        .execute(params_from_iter(values))?;
    }
    crate::sqlite_raw::count_listed(db, id)?;
    if rateable {
        crate::sqlite_ratings::rate(db, id, end, &game)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_copies_when_idle_and_at_last_while_writes_wait() {
        let t0 = Instant::now();
        let mut top = TopUp::new(t0);
        let ms = Duration::from_millis;
        // Not before a second has passed, idle or not.
        assert!(!top.due(t0 + ms(999), false));
        assert!(top.due(t0 + TOP_UP_EVERY, false));
        // Writes waiting: not until the last whole copy is overdue.
        assert!(!top.due(t0 + TOP_UP_EVERY, true));
        assert!(!top.due(t0 + TOP_UP_OVERDUE - ms(1), true));
        assert!(top.due(t0 + TOP_UP_OVERDUE, true));
        // A copy cut short is tried again soon when idle, later while
        // writes wait.
        let t1 = t0 + TOP_UP_OVERDUE;
        top.copied(t1, false);
        assert!(!top.due(t1 + ms(49), false));
        assert!(top.due(t1 + TOP_UP_RETRY, false));
        assert!(!top.due(t1 + TOP_UP_RETRY, true));
        assert!(top.due(t1 + TOP_UP_RETRY_WAITING, true));
        // One cut short before the copy was overdue leaves it due then.
        let mut early = TopUp::new(t0);
        early.copied(t0 + TOP_UP_EVERY, false);
        assert!(!early.due(t0 + TOP_UP_OVERDUE - ms(1), true));
        assert!(early.due(t0 + TOP_UP_OVERDUE, true));
        // A whole one starts both clocks again.
        let t2 = t1 + TOP_UP_RETRY_WAITING;
        top.copied(t2, true);
        assert!(!top.due(t2 + ms(999), false));
        assert!(top.due(t2 + TOP_UP_EVERY, false));
        assert!(!top.due(t2 + TOP_UP_EVERY, true));
        assert!(top.due(t2 + TOP_UP_OVERDUE, true));
    }
}
