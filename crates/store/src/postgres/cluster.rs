//! What several server instances share on PostgreSQL (issue 13 item 3):
//! SkullWhist REST sessions, the bots waiting for an opponent, the seats of
//! the games in progress with the process that runs each (its home), and
//! `LISTEN/NOTIFY` between instances (the messages in `notice`). The tables are in migration 0007
//! (unlogged: live state, never a record); the instances are the `serve`
//! processes of the one registry of live processes, `ladder_processes`
//! (migration 0008, `crate::leases`).
//!
//! The server decides; this module only holds the SQL.

use std::sync::{Arc, OnceLock};

use sqlx::postgres::{PgListener, PgPool};
use sqlx::{Postgres, Row, Transaction};

use super::batch::Batches;
pub use super::notice::{
    fits, instance_channel, Heard, Listener, Notice, MAX_PAYLOAD, SHARED_CHANNEL,
};
pub use super::seat::SeatRow;
use super::seat::{SeatColumns, INSERT_SEATS};
use crate::{BotId, GameId, StoreError};

/// How long a statement on the live tables' connections waits for a lock
/// (their `lock_timeout`), e.g. [`Cluster::stop_waiting`] for a pairing's
/// row lock (wk, issue 13): a deal holds it for milliseconds; one stuck
/// longer must not hang the bot's request. A connection option, so that
/// it costs no round trip (it was a `SET LOCAL` in a transaction of its
/// own).
pub const LIVE_LOCK_TIMEOUT: &str = "5s";

/// Shared live state of the instances on one PostgreSQL database.
#[derive(Debug, Clone)]
pub struct Cluster {
    pool: PgPool,
    /// The shared round trips of notifications and seat reads (started on
    /// first use; shared by the clones).
    batches: Arc<OnceLock<Arc<Batches>>>,
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

/// A waiting bot taken for a game: its row stays locked (no other instance
/// can take it, and its own poll cannot give up) until [`Pairing::commit`]
/// writes the game's seats, or the pairing is dropped (it waits again).
#[derive(Debug)]
pub struct Pairing {
    /// The transaction holding the rows (`None`: a partner waiting in the
    /// taker's own process, already taken with [`Cluster::stop_waiting`]).
    tx: Option<Transaction<'static, Postgres>>,
    pool: PgPool,
    /// The bot taken.
    pub partner: BotId,
    /// The taker's own waiting row, locked too (removed with the partner's).
    me: Option<BotId>,
}

impl Pairing {
    /// Whether the partner waited in the taker's own process (no
    /// transaction holds a row or a deal lock: the seats need not be
    /// written at once while that process is alone).
    pub fn is_local(&self) -> bool {
        self.tx.is_none()
    }

    /// Writes the seats of the game dealt, removes the partner (and the
    /// taker) from the waiting bots, and tells the instances (the
    /// partner's poll may be anywhere; every instance learns the game's
    /// seats and home): one statement and the commit. Fails if a bot is
    /// already seated (a house bot taken by two instances at once):
    /// nothing is written then.
    pub async fn commit(self, seats: &[SeatRow]) -> Result<(), StoreError> {
        crate::waits::timed("pg: commit", async move {
            let Some(mut tx) = self.tx else {
                return Cluster::new(self.pool).seat_game(seats).await;
            };
            let gone: Vec<BotId> = std::iter::once(self.partner).chain(self.me).collect();
            let cols = SeatColumns::of(seats);
            cols.bind(sqlx::query(&format!(
                "WITH ins AS ({INSERT_SEATS} RETURNING 1),
                      del AS (DELETE FROM hub_waiting WHERE bot = ANY($10) RETURNING 1)
                 SELECT pg_notify($11, $12), pg_notify($11, $13),
                        (SELECT count(*) FROM ins), (SELECT count(*) FROM del)"
            )))
            .bind(&gone)
            .bind(SHARED_CHANNEL)
            .bind(format!("m {}", self.partner))
            .bind(Notice::dealt(seats).payload())
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(())
        })
        .await
    }
}

/// A bot claimed for a deal ([`Cluster::claim`]): its deal lock is held
/// until the pairing made with [`Claim::with`] commits, or it is dropped.
#[derive(Debug)]
pub struct Claim {
    tx: Transaction<'static, Postgres>,
    pool: PgPool,
}

impl Claim {
    /// The pairing of the claimed bot with `partner`, a bot waiting in this
    /// process without a row (taken from its list, so nobody else has it).
    pub fn with(self, partner: BotId) -> Pairing {
        Pairing {
            tx: Some(self.tx),
            pool: self.pool,
            partner,
            me: None,
        }
    }
}

/// Takes `bot`'s deal lock in `tx` (held until it ends: one deal at a
/// time per bot across the processes) and then looks at the seats
/// committed before it was taken: whether `bot` may be dealt a game. Two
/// statements, so that the look's snapshot is taken after the lock: a
/// deal of `bot` that committed just before it is seen.
async fn deal_lock(
    tx: &mut Transaction<'static, Postgres>,
    bot: BotId,
) -> Result<bool, StoreError> {
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock(3013, $1::int)")
        .bind(bot as i32)
        .fetch_one(&mut **tx)
        .await?;
    if !locked {
        return Ok(false);
    }
    Ok(
        sqlx::query_scalar("SELECT NOT EXISTS (SELECT 1 FROM hub_seats WHERE bot = $1)")
            .bind(bot)
            .fetch_one(&mut **tx)
            .await?,
    )
}

/// The views of one game to write: what its home says of its seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameViews {
    /// The game.
    pub game: GameId,
    /// Grows with every change.
    pub version: u64,
    /// `(status, has_bid, over)` by seat index; empty: only `also` is sent.
    pub views: Vec<(String, bool, bool)>,
    /// Notifications `(channel, payload)` sent by the same transaction,
    /// after the views' (the answers to requests relayed to the game's
    /// home: an asker hears its answer only once the views are written).
    pub also: Vec<(String, String)>,
    /// The game's seats, when they are not in the table yet (a game dealt
    /// while its home was alone, see [`Cluster::write_views`]); empty when
    /// they are.
    pub seats: Vec<SeatRow>,
}

impl Cluster {
    pub(crate) fn new(pool: PgPool) -> Cluster {
        Cluster {
            pool,
            batches: Arc::new(OnceLock::new()),
        }
    }

    fn batches(&self) -> &Batches {
        self.batches
            .get_or_init(|| Batches::start(self.pool.clone()))
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
    /// already), closes such games still running as aborted with `reason`,
    /// and tells every instance that they ended ([`Notice::Ended`]).
    /// Returns the games cleared.
    pub async fn clear_orphans(&self, reason: &str, at: &str) -> Result<Vec<GameId>, StoreError> {
        crate::waits::timed("pg: clear_orphans", async move {
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
                // Every instance's cache forgets them at once: a bot of
                // such a game is not relayed to a home that is gone.
                let ends: Vec<String> = games
                    .iter()
                    .map(|&game| Notice::Ended { game }.payload())
                    .collect();
                sqlx::query("SELECT pg_notify($1, e) FROM unnest($2::text[]) AS e")
                    .bind(SHARED_CHANNEL)
                    .bind(&ends)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(games)
        })
        .await
    }

    /// Starts `bot`'s session `token`, replacing its old one, and stops its
    /// waiting; tells the instances (`NOTIFY` "s BOT" on the shared
    /// channel), which drop the old session from their caches.
    pub async fn start_session(&self, bot: BotId, token: &str) -> Result<(), StoreError> {
        crate::waits::timed("pg: start_session", async move {
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
        })
        .await
    }

    /// What `token` is, marking a live session used. The mark is written
    /// at most once every `touch_secs`, so most requests only read.
    pub async fn session(
        &self,
        token: &str,
        idle_secs: f64,
        touch_secs: f64,
    ) -> Result<SessionCheck, StoreError> {
        crate::waits::timed("pg: session", async move {
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
        })
        .await
    }

    /// Puts `bot` among the waiting bots for `secs`.
    pub async fn wait(&self, bot: BotId, secs: f64) -> Result<(), StoreError> {
        crate::waits::timed("pg: wait", async move {
            sqlx::query(
                "INSERT INTO hub_waiting (bot, until) VALUES ($1, now() + make_interval(secs => $2))
                 ON CONFLICT (bot) DO UPDATE SET until = excluded.until",
            )
            .bind(bot)
            .bind(secs)
            .execute(&self.pool)
            .await?;
            Ok(())
        })
        .await
    }

    /// Takes `bot` out of the waiting bots; false if it was not waiting
    /// (another instance took it for a game). Waits while another instance
    /// holds its row for a pairing.
    /// A pairing stuck longer than [`LIVE_LOCK_TIMEOUT`] makes this an
    /// error (lock_not_available) rather than a hung request (wk).
    pub async fn stop_waiting(&self, bot: BotId) -> Result<bool, StoreError> {
        crate::waits::timed("pg: stop_waiting", async move {
            let r = sqlx::query("DELETE FROM hub_waiting WHERE bot = $1")
                .bind(bot)
                .execute(&self.pool)
                .await?;
            Ok(r.rows_affected() == 1)
        })
        .await
    }

    /// Takes a waiting bot other than `bot` (at random, skipping those
    /// another instance is taking), to deal a game between them. `bot`'s own
    /// waiting row, if any, is locked and removed with it, so that nobody
    /// takes `bot` meanwhile; `None` if nobody waits, or if another
    /// instance is taking `bot` right now. One statement after `BEGIN`.
    ///
    /// `waiting`: `bot` wrote its waiting row; if the row is gone another
    /// instance or bot took it (its deal is on the way): `None`.
    pub async fn take_partner(
        &self,
        bot: BotId,
        waiting: bool,
    ) -> Result<Option<Pairing>, StoreError> {
        crate::waits::timed("pg: take_partner", async move {
            let mut tx = self.pool.begin().await?;
            // One deal at a time per bot across the instances (a house bot's
            // loop runs in each), and none for a bot already seated; a bot
            // whose own row another instance holds is being dealt a game.
            let row = sqlx::query(
                "WITH mine AS (SELECT bot FROM hub_waiting WHERE bot = $1 FOR UPDATE SKIP LOCKED),
                      free AS (SELECT pg_try_advisory_xact_lock(3013, $2)
                                      AND NOT EXISTS (SELECT 1 FROM hub_seats WHERE bot = $1) AS ok),
                      partner AS (SELECT w.bot FROM hub_waiting w
                                  WHERE w.bot <> $1 AND w.until > now() AND (SELECT ok FROM free)
                                    AND NOT EXISTS (SELECT 1 FROM hub_seats s WHERE s.bot = w.bot)
                                  ORDER BY random() LIMIT 1 FOR UPDATE OF w SKIP LOCKED)
                 SELECT (SELECT bot FROM mine) AS mine,
                        EXISTS (SELECT 1 FROM hub_waiting WHERE bot = $1) AS waits,
                        (SELECT ok FROM free) AS free,
                        (SELECT bot FROM partner) AS partner",
            )
            .bind(bot)
            .bind(bot as i32)
            .fetch_one(&mut *tx)
            .await?;
            let mine: Option<BotId> = row.try_get("mine")?;
            let waits: bool = row.try_get("waits")?;
            let free: bool = row.try_get("free")?;
            let partner: Option<BotId> = row.try_get("partner")?;
            if ((waits || waiting) && mine.is_none()) || !free {
                return Ok(None);
            }
            let Some(partner) = partner else {
                return Ok(None);
            };
            // wk (issue 13 item 4c): the partner is claimed like `bot` (its deal
            // lock, then a look at the seats committed before it), so two
            // deals never seat it.
            if !deal_lock(&mut tx, partner).await? {
                return Ok(None);
            }
            Ok(Some(Pairing {
                tx: Some(tx),
                pool: self.pool.clone(),
                partner,
                me: mine,
            }))
        })
        .await
    }

    /// Claims `bot` for a deal with a partner waiting only in this process
    /// (with no row here, so no other instance can take it): `bot`'s deal
    /// lock is held, as in [`Cluster::take_partner`], until the pairing
    /// made with [`Claim::with`] commits or is dropped; `None` if another
    /// deal of it is under way or it is seated (see [`deal_lock`]).
    pub async fn claim(&self, bot: BotId) -> Result<Option<Claim>, StoreError> {
        crate::waits::timed("pg: claim", async move {
            let mut tx = self.pool.begin().await?;
            let free = deal_lock(&mut tx, bot).await?;
            Ok(free.then(|| Claim {
                tx,
                pool: self.pool.clone(),
            }))
        })
        .await
    }

    /// A pairing with `partner`, a bot waiting in this process and already
    /// taken from the waiting bots with [`Cluster::stop_waiting`].
    pub fn local_pairing(&self, partner: BotId) -> Pairing {
        Pairing {
            tx: None,
            pool: self.pool.clone(),
            partner,
            me: None,
        }
    }

    /// Seats a game dealt between bots of this instance (the partner was
    /// taken with [`Cluster::stop_waiting`]) and tells the instances: one
    /// statement. Fails if a bot is already seated.
    pub async fn seat_game(&self, seats: &[SeatRow]) -> Result<(), StoreError> {
        crate::waits::timed("pg: seat_game", async move {
            let cols = SeatColumns::of(seats);
            cols.bind(sqlx::query(&format!(
                "WITH ins AS ({INSERT_SEATS} RETURNING 1)
                 SELECT pg_notify($10, $11), (SELECT count(*) FROM ins)"
            )))
            .bind(SHARED_CHANNEL)
            .bind(Notice::dealt(seats).payload())
            .execute(&self.pool)
            .await?;
            Ok(())
        })
        .await
    }

    /// The seat of `bot` in a game in progress, if any (read in one
    /// statement with the other reads queued meanwhile).
    pub async fn seat_of(&self, bot: BotId) -> Result<Option<SeatRow>, StoreError> {
        crate::waits::timed(
            "pg: seat_of",
            async move { self.batches().seat_of(bot).await },
        )
        .await
    }

    /// Writes what the homes say of their games' seats, many games in one
    /// statement, and tells the instances ([`Notice::Views`], in the same
    /// transaction: a view is in the rows when its notice arrives); then
    /// sends each game's `also` notifications, in the same transaction.
    ///
    /// A game given with its `seats` (dealt while its home was alone, so
    /// never written) has them inserted, with its views, and the instances
    /// are told of it first ([`Notice::Dealt`]); a seat whose bot is
    /// seated already (in another game) is left out.
    pub async fn write_views(&self, games: &[GameViews]) -> Result<(), StoreError> {
        crate::waits::timed("pg: write_views", async move {
            let mut game = Vec::new();
            let mut seat = Vec::new();
            let mut status = Vec::new();
            let mut has_bid = Vec::new();
            let mut over = Vec::new();
            let mut channels = Vec::with_capacity(games.len());
            let mut notices = Vec::with_capacity(games.len());
            // The rows to insert, with the views as they are now.
            let new: Vec<SeatRow> = games
                .iter()
                .flat_map(|g| {
                    g.seats.iter().map(|r| {
                        let mut r = r.clone();
                        if let Some(v) = g.views.get(r.seat as usize) {
                            (r.status, r.has_bid, r.over) = (v.0.clone(), v.1, v.2);
                        }
                        r
                    })
                })
                .collect();
            // A new game's notice first: the others learn where it runs
            // before they hear of its views.
            for g in games.iter().filter(|g| !g.seats.is_empty()) {
                channels.push(SHARED_CHANNEL);
                notices.push(Notice::dealt(&g.seats).payload());
            }
            for g in games.iter().filter(|g| !g.views.is_empty()) {
                // Also for new rows: a row written by an earlier try whose
                // answer was lost is updated (a row inserted by this
                // statement is not seen by its update, and carries its
                // views already).
                for (i, v) in g.views.iter().enumerate() {
                    game.push(g.game);
                    seat.push(i as i32);
                    status.push(v.0.as_str());
                    has_bid.push(v.1);
                    over.push(v.2);
                }
                channels.push(SHARED_CHANNEL);
                notices.push(
                    Notice::Views {
                        game: g.game,
                        version: g.version,
                        views: g.views.clone(),
                    }
                    .payload(),
                );
            }
            // The views' notices first: notifications of one transaction
            // arrive in the order they were sent.
            for (channel, payload) in games.iter().flat_map(|g| &g.also) {
                channels.push(channel.as_str());
                notices.push(payload.clone());
            }
            SeatColumns::of(&new)
                .bind(sqlx::query(&format!(
                    "WITH ins AS ({INSERT_SEATS} ON CONFLICT (bot) DO NOTHING RETURNING 1),
                          v AS (SELECT * FROM UNNEST($10::BIGINT[], $11::INT[], $12::TEXT[],
                                                     $13::BOOL[], $14::BOOL[])
                                AS v(game, seat, status, has_bid, over)),
                          u AS (UPDATE hub_seats s SET status = v.status, has_bid = v.has_bid,
                                       over = v.over
                                FROM v WHERE s.game = v.game AND s.seat = v.seat RETURNING 1)
                     SELECT pg_notify(n.c, n.p), (SELECT count(*) FROM u),
                            (SELECT count(*) FROM ins)
                     FROM UNNEST($15::TEXT[], $16::TEXT[]) AS n(c, p)"
                )))
                .bind(&game)
                .bind(&seat)
                .bind(&status)
                .bind(&has_bid)
                .bind(&over)
                .bind(&channels)
                .bind(&notices)
                .execute(&self.pool)
                .await?;
            Ok(())
        })
        .await
    }

    /// Removes a game's seats (it is stored, or closed) and tells the
    /// instances ([`Notice::Ended`]).
    pub async fn unseat(&self, game: GameId) -> Result<(), StoreError> {
        crate::waits::timed("pg: unseat", async move {
            sqlx::query(
                "WITH d AS (DELETE FROM hub_seats WHERE game = $1 RETURNING 1)
                 SELECT pg_notify($2, $3), (SELECT count(*) FROM d)",
            )
            .bind(game)
            .bind(SHARED_CHANNEL)
            .bind(Notice::Ended { game }.payload())
            .execute(&self.pool)
            .await?;
            Ok(())
        })
        .await
    }

    /// Sends `payload` on `channel` (in one statement with the other
    /// notifications queued meanwhile, in the order they were queued).
    pub async fn notify(&self, channel: &str, payload: &str) -> Result<(), StoreError> {
        crate::waits::timed("pg: notify", async move {
            self.batches().notify(channel, payload).await
        })
        .await
    }

    /// Listens on `channels` (on a connection of its own).
    pub async fn listen(&self, channels: &[&str]) -> Result<Listener, StoreError> {
        let mut l = PgListener::connect_with(&self.pool).await?;
        l.listen_all(channels.iter().copied()).await?;
        Ok(Listener(l))
    }
}
