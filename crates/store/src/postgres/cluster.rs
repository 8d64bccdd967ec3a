//! What several server instances share on PostgreSQL (issue 13 item 3):
//! SkullWhist REST sessions, the bots waiting for an opponent, the seats of
//! the games in progress with the process that runs each (its home), and
//! `LISTEN/NOTIFY` between instances. The tables are in migration 0007
//! (unlogged: live state, never a record); the instances are the `serve`
//! processes of the one registry of live processes, `ladder_processes`
//! (migration 0008, `crate::leases`).
//!
//! The server decides; this module only holds the SQL.

use sqlx::postgres::{PgListener, PgPool};
use sqlx::{Postgres, Row, Transaction};

use crate::{BotId, GameId, StoreError};

/// The channel every instance listens to (bots matched).
pub const SHARED_CHANNEL: &str = "croupier_hub";

/// The channel of one instance (requests relayed to it, replies to it).
pub fn instance_channel(instance: i64) -> String {
    format!("croupier_hub_{instance}")
}

/// How long [`Cluster::stop_waiting`] waits for a pairing's row lock (wk,
/// issue 13): a deal holds it for milliseconds; one stuck longer must not
/// hang the bot's request.
pub const STOP_WAITING_LOCK: &str = "SET LOCAL lock_timeout = '5s'";

/// Shared live state of the instances on one PostgreSQL database.
#[derive(Debug, Clone)]
pub struct Cluster {
    pool: PgPool,
}

/// What a session token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionCheck {
    /// Live, of this bot (and now marked used).
    Live(BotId),
    /// It was live but has been idle too long.
    Expired,
    /// Unknown (never issued, or replaced by a later login).
    Unknown,
}

/// One seat of a game in progress, as the tables hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatRow {
    /// The bot in the seat.
    pub bot: BotId,
    /// The game.
    pub game: GameId,
    /// The seat's index.
    pub seat: i32,
    /// The other bot.
    pub opponent: BotId,
    /// The cards dealt, as the server wrote them.
    pub hand: String,
    /// The `status` reply, as the home last wrote it.
    pub status: String,
    /// Whether the seat's bid stands.
    pub has_bid: bool,
    /// Whether the game is over (its record is being stored).
    pub over: bool,
    /// The instance that runs the game.
    pub home: i64,
}

/// A waiting bot taken for a game: its row stays locked (no other instance
/// can take it, and its own poll cannot give up) until [`Pairing::commit`]
/// writes the game's seats, or the pairing is dropped (it waits again).
#[derive(Debug)]
pub struct Pairing {
    tx: Transaction<'static, Postgres>,
    /// The bot taken.
    pub partner: BotId,
}

impl Pairing {
    /// Writes the seats of the game dealt, removes the partner from the
    /// waiting bots, and tells the instances (the partner's poll may be
    /// anywhere). Fails if a bot is already seated (a house bot taken by
    /// two instances at once): nothing is written then.
    pub async fn commit(mut self, seats: &[SeatRow]) -> Result<(), StoreError> {
        insert_seats(&mut self.tx, seats).await?;
        sqlx::query("DELETE FROM hub_waiting WHERE bot = $1")
            .bind(self.partner)
            .execute(&mut *self.tx)
            .await?;
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(SHARED_CHANNEL)
            .bind(format!("m {}", self.partner))
            .execute(&mut *self.tx)
            .await?;
        self.tx.commit().await?;
        Ok(())
    }
}

async fn insert_seats(
    tx: &mut Transaction<'static, Postgres>,
    seats: &[SeatRow],
) -> Result<(), StoreError> {
    for s in seats {
        sqlx::query(
            "INSERT INTO hub_seats (bot, game, seat, opponent, hand, status, has_bid, over, home)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(s.bot)
        .bind(s.game)
        .bind(s.seat)
        .bind(s.opponent)
        .bind(&s.hand)
        .bind(&s.status)
        .bind(s.has_bid)
        .bind(s.over)
        .bind(s.home)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Notifications from the other instances.
#[derive(Debug)]
pub struct Listener(PgListener);

impl Listener {
    /// The next notification: its channel and payload. After a lost
    /// connection the listener reconnects (notifications sent meanwhile are
    /// lost; callers poll the tables as well).
    pub async fn recv(&mut self) -> Result<(String, String), StoreError> {
        let n = self.0.recv().await?;
        Ok((n.channel().to_string(), n.payload().to_string()))
    }
}

fn seat_row(r: &sqlx::postgres::PgRow) -> Result<SeatRow, sqlx::Error> {
    Ok(SeatRow {
        bot: r.try_get("bot")?,
        game: r.try_get("game")?,
        seat: r.try_get("seat")?,
        opponent: r.try_get("opponent")?,
        hand: r.try_get("hand")?,
        status: r.try_get("status")?,
        has_bid: r.try_get("has_bid")?,
        over: r.try_get("over")?,
        home: r.try_get("home")?,
    })
}

const SEAT_COLUMNS: &str = "bot, game, seat, opponent, hand, status, has_bid, over, home";

impl Cluster {
    pub(crate) fn new(pool: PgPool) -> Cluster {
        Cluster { pool }
    }

    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// How many `serve` processes other than `me` have a registration that
    /// has not expired (the registry is `ladder_processes`, see
    /// `crate::leases`).
    pub async fn other_instances(&self, me: i64) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM ladder_processes WHERE role = 'serve' AND id <> $1
               AND expires_ms >= CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
        )
        .bind(me)
        .fetch_one(&self.pool)
        .await?)
    }

    /// Clears the seats of games whose home is no longer registered (the
    /// reaper closed its games; after a PostgreSQL crash the seats are gone
    /// already) and closes such games still running as aborted with
    /// `reason`. Returns the games cleared.
    pub async fn clear_orphans(&self, reason: &str, at: &str) -> Result<Vec<GameId>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let mut games: Vec<GameId> = sqlx::query_scalar(
            "DELETE FROM hub_seats WHERE home NOT IN (SELECT id FROM ladder_processes)
             RETURNING game",
        )
        .fetch_all(&mut *tx)
        .await?;
        games.sort_unstable();
        games.dedup();
        if !games.is_empty() {
            sqlx::query(
                "UPDATE games SET status = 'aborted', reason = $1, finished = $2
                 WHERE id = ANY($3) AND status = 'running'",
            )
            .bind(reason)
            .bind(at)
            .bind(&games)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(games)
    }

    /// Starts `bot`'s session `token`, replacing its old one, and stops its
    /// waiting; tells the instances (`NOTIFY` "s BOT" on the shared
    /// channel), which drop the old session from their caches.
    pub async fn start_session(&self, bot: BotId, token: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO hub_sessions (token, bot, last_seen) VALUES ($1, $2, now())
             ON CONFLICT (bot) DO UPDATE SET token = excluded.token, last_seen = excluded.last_seen",
        )
        .bind(token)
        .bind(bot)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM hub_waiting WHERE bot = $1")
            .bind(bot)
            .execute(&mut *tx)
            .await?;
        // Every instance drops the bot's cached session (with the commit).
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(SHARED_CHANNEL)
            .bind(format!("s {bot}"))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// What `token` is, marking a live session used. The mark is written
    /// at most once every `touch_secs`, so most requests only read.
    pub async fn session(
        &self,
        token: &str,
        idle_secs: f64,
        touch_secs: f64,
    ) -> Result<SessionCheck, StoreError> {
        let row = sqlx::query(
            "SELECT bot,
                    last_seen > now() - make_interval(secs => $2) AS live,
                    last_seen < now() - make_interval(secs => $3) AS stale
             FROM hub_sessions WHERE token = $1",
        )
        .bind(token)
        .bind(idle_secs)
        .bind(touch_secs)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(SessionCheck::Unknown);
        };
        let (bot, live, stale): (BotId, bool, bool) =
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        if !live {
            return Ok(SessionCheck::Expired);
        }
        if stale {
            sqlx::query("UPDATE hub_sessions SET last_seen = now() WHERE token = $1")
                .bind(token)
                .execute(&self.pool)
                .await?;
        }
        Ok(SessionCheck::Live(bot))
    }

    /// Puts `bot` among the waiting bots for `secs`.
    pub async fn wait(&self, bot: BotId, secs: f64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO hub_waiting (bot, until) VALUES ($1, now() + make_interval(secs => $2))
             ON CONFLICT (bot) DO UPDATE SET until = excluded.until",
        )
        .bind(bot)
        .bind(secs)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Takes `bot` out of the waiting bots; false if it was not waiting
    /// (another instance took it for a game). Waits while another instance
    /// holds its row for a pairing.
    /// A pairing stuck longer than [`STOP_WAITING_LOCK`] makes this an
    /// error (lock_not_available) rather than a hung request (wk).
    pub async fn stop_waiting(&self, bot: BotId) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(STOP_WAITING_LOCK).execute(&mut *tx).await?;
        let r = sqlx::query("DELETE FROM hub_waiting WHERE bot = $1")
            .bind(bot)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(r.rows_affected() == 1)
    }

    /// Takes a waiting bot other than `bot` (at random, skipping those
    /// another instance is taking), to deal a game between them. `bot`'s own
    /// waiting row, if any, is locked and removed with it, so that nobody
    /// takes `bot` meanwhile; `None` if nobody waits, or if another
    /// instance is taking `bot` right now.
    pub async fn take_partner(&self, bot: BotId) -> Result<Option<Pairing>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let mine: Option<BotId> =
            sqlx::query_scalar("SELECT bot FROM hub_waiting WHERE bot = $1 FOR UPDATE SKIP LOCKED")
                .bind(bot)
                .fetch_optional(&mut *tx)
                .await?;
        if mine.is_none() {
            let waits: Option<BotId> =
                sqlx::query_scalar("SELECT bot FROM hub_waiting WHERE bot = $1")
                    .bind(bot)
                    .fetch_optional(&mut *tx)
                    .await?;
            if waits.is_some() {
                // Locked: another instance is dealing `bot` a game.
                return Ok(None);
            }
        }
        // One deal at a time per bot across the instances (a house bot's
        // loop runs in each), and none for a bot already seated.
        let free: bool = sqlx::query_scalar(
            "SELECT pg_try_advisory_xact_lock(3013, $1::int)
                    AND NOT EXISTS (SELECT 1 FROM hub_seats WHERE bot = $2)",
        )
        .bind(bot as i32)
        .bind(bot)
        .fetch_one(&mut *tx)
        .await?;
        if !free {
            return Ok(None);
        }
        // wk (issue 13 item 4c): a partner that is seated is not taken, and
        // the partner is claimed like `bot` (its deal lock, then a look at
        // the seats committed before it), so two deals never seat it.
        let partner: Option<BotId> = sqlx::query_scalar(
            "SELECT w.bot FROM hub_waiting w WHERE w.bot <> $1 AND w.until > now()
               AND NOT EXISTS (SELECT 1 FROM hub_seats s WHERE s.bot = w.bot)
             ORDER BY random() LIMIT 1 FOR UPDATE OF w SKIP LOCKED",
        )
        .bind(bot)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(partner) = partner else {
            return Ok(None);
        };
        let claimed: bool = sqlx::query_scalar(
            "SELECT pg_try_advisory_xact_lock(3013, $1::int)
                    AND NOT EXISTS (SELECT 1 FROM hub_seats WHERE bot = $2)",
        )
        .bind(partner as i32)
        .bind(partner)
        .fetch_one(&mut *tx)
        .await?;
        if !claimed {
            return Ok(None);
        }
        if mine.is_some() {
            sqlx::query("DELETE FROM hub_waiting WHERE bot = $1")
                .bind(bot)
                .execute(&mut *tx)
                .await?;
        }
        Ok(Some(Pairing { tx, partner }))
    }

    /// The seat of `bot` in a game in progress, if any.
    pub async fn seat_of(&self, bot: BotId) -> Result<Option<SeatRow>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {SEAT_COLUMNS} FROM hub_seats WHERE bot = $1"
        ))
        .bind(bot)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| seat_row(&r)).transpose()?)
    }

    /// Writes what the home says of a game's seats: `(status, has_bid,
    /// over)` by seat index.
    pub async fn write_views(
        &self,
        game: GameId,
        views: &[(String, bool, bool)],
    ) -> Result<(), StoreError> {
        let statuses: Vec<&str> = views.iter().map(|v| v.0.as_str()).collect();
        let bids: Vec<bool> = views.iter().map(|v| v.1).collect();
        let overs: Vec<bool> = views.iter().map(|v| v.2).collect();
        sqlx::query(
            "UPDATE hub_seats SET status = ($2::text[])[seat + 1],
                                  has_bid = ($3::bool[])[seat + 1],
                                  over = ($4::bool[])[seat + 1]
             WHERE game = $1",
        )
        .bind(game)
        .bind(&statuses)
        .bind(&bids)
        .bind(&overs)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Removes a game's seats (it is stored, or closed).
    pub async fn unseat(&self, game: GameId) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM hub_seats WHERE game = $1")
            .bind(game)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Sends `payload` on `channel`.
    pub async fn notify(&self, channel: &str, payload: &str) -> Result<(), StoreError> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(payload)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Listens on `channels` (on a connection of its own).
    pub async fn listen(&self, channels: &[&str]) -> Result<Listener, StoreError> {
        let mut l = PgListener::connect_with(&self.pool).await?;
        l.listen_all(channels.iter().copied()).await?;
        Ok(Listener(l))
    }
}
