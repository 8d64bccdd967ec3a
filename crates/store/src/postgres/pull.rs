//! Pull bots' mailboxes shared by the processes on one PostgreSQL database
//! (issue 13; migration 0009, unlogged tables): the messages of a match
//! are rows, fetched by the bot's long poll on any instance; the process
//! playing the match (its home) is a row too, so an answer posted to any
//! instance is relayed there. A `NOTIFY` "p BOT" on the shared channel wakes
//! the polls of the bot when messages arrive.
//!
//! The server decides; this module only holds the SQL.

use sqlx::Row;

use super::cluster::{Cluster, SHARED_CHANNEL};
use crate::{BotId, StoreError};

/// A message as stored: sequence number, match tag, the message (JSON text).
pub type PullMessage = (i64, String, String);

/// Whether a pull bot polls: `(bot, polling now, seconds since its last
/// poll ended)`.
pub type Poller = (BotId, bool, Option<f64>);

impl Cluster {
    /// Appends `messages` of match `tag` to `bot`'s mailbox with the next
    /// sequence numbers (the bot's row lock orders them), records the match
    /// as played by process `home` when `open` (its first messages), and
    /// wakes the bot's polls. `false` (nothing written) if more than `cap`
    /// messages would then wait unacknowledged (migration 0010).
    pub async fn pull_post(
        &self,
        bot: BotId,
        tag: &str,
        messages: &[String],
        home: Option<i64>,
        cap: i64,
    ) -> Result<bool, StoreError> {
        let n = messages.len() as i64;
        if n > cap {
            return Ok(false);
        }
        // One statement, one round trip: the bot's row is locked by the
        // upsert (posts to one bot are ordered by it), and the messages, the
        // match's home and the wake-up follow only if it was written.
        let posted: Option<i64> = sqlx::query_scalar(
            "WITH b AS (
                 INSERT INTO pull_boxes (bot, next_seq) VALUES ($1, $2)
                 ON CONFLICT (bot) DO UPDATE SET next_seq = pull_boxes.next_seq + $2
                 WHERE pull_boxes.next_seq + $2 - pull_boxes.acked <= $3
                 RETURNING next_seq
             ), m AS (
                 INSERT INTO pull_messages (bot, seq, tag, message)
                 SELECT $1, b.next_seq - $2 + t.i, $4, t.m
                 FROM b, UNNEST($5::TEXT[]) WITH ORDINALITY AS t(m, i)
             ), h AS (
                 INSERT INTO pull_matches (bot, tag, home)
                 SELECT $1, $4, $6::BIGINT FROM b WHERE $6::BIGINT IS NOT NULL
                 ON CONFLICT (bot, tag) DO UPDATE SET home = excluded.home
             )
             SELECT b.next_seq, pg_notify($7, $8) FROM b",
        )
        .bind(bot)
        .bind(n)
        .bind(cap)
        .bind(tag)
        .bind(messages)
        .bind(home)
        .bind(SHARED_CHANNEL)
        .bind(format!("p {bot}"))
        .fetch_optional(self.pool())
        .await?;
        Ok(posted.is_some())
    }

    /// A match of `bot` is over: answers to it are refused everywhere.
    pub async fn pull_close(&self, bot: BotId, tag: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM pull_matches WHERE bot = $1 AND tag = $2")
            .bind(bot)
            .bind(tag)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The process playing `bot`'s match `tag`, if it is open.
    pub async fn pull_home(&self, bot: BotId, tag: &str) -> Result<Option<i64>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT home FROM pull_matches WHERE bot = $1 AND tag = $2")
                .bind(bot)
                .bind(tag)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    /// Marks `bot` polling for `secs`; its last sequence number given.
    pub async fn pull_poll_start(&self, bot: BotId, secs: f64) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "INSERT INTO pull_boxes (bot, poll_until) VALUES ($1, now() + make_interval(secs => $2))
             ON CONFLICT (bot) DO UPDATE SET poll_until = excluded.poll_until
             RETURNING next_seq",
        )
        .bind(bot)
        .bind(secs)
        .fetch_one(self.pool())
        .await?)
    }

    /// Marks the end of `bot`'s poll.
    pub async fn pull_poll_end(&self, bot: BotId) -> Result<(), StoreError> {
        sqlx::query("UPDATE pull_boxes SET poll_until = NULL, last_poll = now() WHERE bot = $1")
            .bind(bot)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Drops `bot`'s messages up to `after` (acknowledged) and returns up
    /// to `limit` of the next ones, in one statement.
    pub async fn pull_fetch(
        &self,
        bot: BotId,
        after: i64,
        limit: i64,
    ) -> Result<Vec<PullMessage>, StoreError> {
        let rows = sqlx::query(
            "WITH gone AS (
                 DELETE FROM pull_messages WHERE bot = $1 AND seq <= $2
             ), acked AS (
                 UPDATE pull_boxes SET acked = LEAST($2, next_seq)
                 WHERE bot = $1 AND acked < LEAST($2, next_seq)
             )
             SELECT seq, tag, message FROM pull_messages WHERE bot = $1 AND seq > $2
             ORDER BY seq LIMIT $3",
        )
        .bind(bot)
        .bind(after)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }

    /// The pull bots polling now or within the last `recent_secs`.
    pub async fn pull_pollers(&self, recent_secs: f64) -> Result<Vec<Poller>, StoreError> {
        let rows = sqlx::query(
            "SELECT bot, COALESCE(poll_until > now(), FALSE),
                    EXTRACT(EPOCH FROM now() - last_poll)::FLOAT8
             FROM pull_boxes
             WHERE poll_until > now() OR last_poll > now() - make_interval(secs => $1)",
        )
        .bind(recent_secs)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }

    /// Forgets the open matches of processes no longer registered.
    pub async fn pull_clear_orphans(&self) -> Result<u64, StoreError> {
        let r = sqlx::query(
            "DELETE FROM pull_matches WHERE home NOT IN (SELECT id FROM ladder_processes)",
        )
        .execute(self.pool())
        .await?;
        Ok(r.rows_affected())
    }
}
