//! The hub with several instances on one PostgreSQL database (issue 13
//! item 3). Sessions, the bots waiting for an opponent and the seats of the
//! games in progress are rows (see `croupier_store::postgres::cluster`); a
//! game runs in the instance that dealt it (its home), exactly as on one
//! instance, and its seats' views are copied to the database as they
//! change. Any instance answers any request:
//!
//! - `login`, sessions: rows, read by every request;
//! - `new-game`: takes a waiting bot with `FOR UPDATE SKIP LOCKED` and
//!   deals here, or waits in the table until another instance deals it a
//!   game (woken by `NOTIFY`, polling as well);
//! - `status`: the home's own view there, the row elsewhere;
//! - `bid`, `play`, a re-login's abandon: relayed to the home ([`Relay`]).
//!
//! On SQLite none of this exists: the hub keeps everything in memory.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use croupier_store::postgres::cluster::{Cluster, Pairing, SeatRow, SessionCheck};
use croupier_store::{BotId, GameId};
use futures::future::BoxFuture;
use rand::Rng;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use super::game::LiveGame;
use super::matchmaking::OwnGame;
use super::relay::{Crowd, Home, Relay, GONE, SESSION_RECHECK};
use super::{refuse, Hub, Inner, NewGame, Refusal};

/// A session's use is written at most this often (and read at most every
/// `SESSION_RECHECK` per instance).
const TOUCH_SECS: f64 = 5.0;
/// How long a waiting bot's poll sleeps between looks at the tables (a
/// `NOTIFY` wakes it as soon as it is dealt a game; this only makes good a
/// lost notification, and pairs the waiting bots of house-bot loops).
const POLL_STEP_MS: u64 = 1000;

/// The changes of a game's views and how far they are in the database.
#[derive(Debug)]
pub(super) struct ViewSync {
    /// Bumped by the seats on every change.
    pub(super) version: Arc<watch::Sender<u64>>,
    /// The last version written.
    written: watch::Sender<u64>,
    /// Wakes the writer: an answer waits for the views.
    poke: Notify,
    /// Whether other instances run (alone, the views are not written).
    crowd: Arc<Crowd>,
}

impl ViewSync {
    pub(super) fn new(crowd: Arc<Crowd>) -> ViewSync {
        ViewSync {
            version: Arc::new(watch::channel(0).0),
            written: watch::channel(0).0,
            poke: Notify::new(),
            crowd,
        }
    }
}

impl LiveGame {
    /// Waits until the views as they are now are in the database (at most
    /// two seconds: the writer retries what fails on the next change).
    /// Nothing to wait for while this instance is alone: no other instance
    /// reads them.
    pub(super) async fn flushed(&self) {
        if let Some(s) = &self.sync {
            if s.crowd.alone() {
                return;
            }
            let target = *s.version.borrow();
            let mut w = s.written.subscribe();
            if *w.borrow() >= target {
                return;
            }
            s.poke.notify_one();
            let _ =
                tokio::time::timeout(Duration::from_secs(2), w.wait_for(|v| *v >= target)).await;
        }
    }
}

/// Copies a game's seat views to the database as they change, until the
/// game is over and stored. While the instance is alone the copies are
/// skipped; they are made when another instance joins, or when an answer
/// waits for them.
pub(super) async fn write_views(game: Arc<LiveGame>, db: Cluster) {
    let Some(sync) = game.sync.clone() else {
        return;
    };
    let mut changes = sync.version.subscribe();
    let mut joined = sync.crowd.joined();
    let mut stored = game.stored.clone();
    loop {
        tokio::select! {
            r = changes.changed() => if r.is_err() { break },
            r = joined.changed() => if r.is_err() { break },
            _ = sync.poke.notified() => {}
            _ = stored.wait_for(Option::is_some) => break,
        }
        let version = *changes.borrow_and_update();
        joined.borrow_and_update();
        if version <= *sync.written.borrow() || sync.crowd.alone() {
            continue;
        }
        let views: Vec<(String, bool, bool)> = game
            .seats
            .iter()
            .map(|s| {
                let v = s.view();
                (v.status.to_string(), v.has_bid, v.over)
            })
            .collect();
        if let Err(e) = db.write_views(game.id, &views).await {
            tracing::warn!("game {}: cannot write its views: {e}", game.id);
            continue;
        }
        sync.written.send_replace(version);
    }
}

/// This instance's games, for requests relayed from the others.
struct HomeGames(Arc<Mutex<Inner>>);

impl Home for HomeGames {
    fn handle(&self, game: GameId, seat: usize, line: String) -> BoxFuture<'static, String> {
        let live = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .games
            .get(&game)
            .cloned();
        Box::pin(async move {
            match live {
                Some(g) => g.relayed(seat, line).await,
                None => GONE.into(),
            }
        })
    }
}

fn internal(e: impl std::fmt::Display) -> Refusal {
    tracing::error!("the shared tables: {e}");
    Refusal("internal error: try again".into())
}

fn hand_text(hand: &[croupier_rules::skullwhist::Card]) -> String {
    hand.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

fn game_of_row(row: &SeatRow) -> NewGame {
    NewGame::Game {
        game: row.game,
        opponent: row.opponent,
        cards: row
            .hand
            .split_whitespace()
            .filter_map(|c| croupier_dialects::skullwhist_rest::parse_card(c).ok())
            .collect(),
    }
}

impl Hub {
    /// Joins the other instances on the store's PostgreSQL database as
    /// registered process `member` (nothing to do on SQLite). Call once,
    /// before serving.
    pub async fn join_cluster(
        &self,
        member: Arc<crate::ladder::Membership>,
    ) -> Result<bool, String> {
        let Some(db) = self.store.cluster() else {
            return Ok(false);
        };
        let home: Arc<dyn Home> = Arc::new(HomeGames(Arc::clone(&self.inner)));
        // wk (issue 11): the relay's error is an enum; this API keeps text.
        let relay = Relay::start(db, member, home)
            .await
            .map_err(|e| e.to_string())?;
        self.relay
            .set(relay)
            .map_err(|_| "the hub already joined".to_string())?;
        Ok(true)
    }

    /// This instance in the cluster, if it is in one.
    pub fn relay(&self) -> Option<&Arc<Relay>> {
        self.relay.get()
    }

    /// The bot of a live session (and marks the session used).
    pub async fn session(&self, token: &str) -> Result<BotId, Refusal> {
        let Some(relay) = self.relay.get() else {
            return self.session_bot(token);
        };
        // Checked in the database once per `SESSION_RECHECK` per instance,
        // not per request.
        let recheck = SESSION_RECHECK.min(self.config.session_idle / 4);
        if let Some(bot) = relay.cached_session(token, recheck) {
            return Ok(bot);
        }
        let idle = self.config.session_idle.as_secs_f64();
        let touch = TOUCH_SECS.min(recheck.as_secs_f64());
        match relay.db().session(token, idle, touch).await {
            Ok(SessionCheck::Live(bot)) => {
                relay.cache_session(token, bot);
                Ok(bot)
            }
            Ok(SessionCheck::Expired) => refuse("session expired: log in again"),
            Ok(SessionCheck::Unknown) => refuse("unknown session: log in first"),
            Err(e) => Err(internal(e)),
        }
    }

    /// `login` with several instances: the session row, then the bot's
    /// game in progress, wherever it runs, is forfeited.
    pub(super) async fn cluster_login(
        &self,
        relay: &Relay,
        bot: BotId,
        token: &str,
    ) -> Result<(), Refusal> {
        relay
            .db()
            .start_session(bot, token)
            .await
            .map_err(internal)?;
        relay.forget_session(bot);
        if let Some(row) = relay.db().seat_of(bot).await.map_err(internal)? {
            let wait = self.config.move_timeout + Duration::from_secs(10);
            relay
                .ask(row.home, row.game, row.seat as usize, "abandon", wait)
                .await;
        }
        Ok(())
    }

    /// Waits until a game that is over has left the tables (its record is
    /// stored, or its home is gone and the game closed).
    async fn wait_unseated(&self, relay: &Relay, bot: BotId, game: GameId) {
        let until = Instant::now() + relay.lease() + Duration::from_secs(10);
        while Instant::now() < until {
            match relay.db().seat_of(bot).await {
                Ok(Some(r)) if r.game == game => {}
                _ => return,
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// `bid`/`play` of a bot whose game runs elsewhere (or nowhere).
    pub(super) async fn remote_line(&self, bot: BotId, line: String) -> Result<(), Refusal> {
        let not_in_game = || Refusal("you are not in a game".into());
        let Some(relay) = self.relay.get() else {
            return Err(not_in_game());
        };
        let Some(row) = relay.db().seat_of(bot).await.map_err(internal)? else {
            return Err(not_in_game());
        };
        if row.over {
            self.wait_unseated(relay, bot, row.game).await;
            return Err(not_in_game());
        }
        // The home answers once the move is applied (and the game stored,
        // if the move ended it); a home that died is noticed by its lease.
        let wait = self.config.move_timeout + Duration::from_secs(10);
        let until = Instant::now() + wait;
        loop {
            let step = Duration::from_secs(3).min(until.saturating_duration_since(Instant::now()));
            match relay
                .ask(row.home, row.game, row.seat as usize, &line, step)
                .await
                .as_deref()
            {
                Some("ok") => return Ok(()),
                Some(r) if r.starts_with("refused ") => {
                    return Err(Refusal(r["refused ".len()..].to_string()))
                }
                Some(_) => {
                    self.wait_unseated(relay, bot, row.game).await;
                    return Err(not_in_game());
                }
                None => {
                    // No answer yet: is the game still there?
                    match relay.db().seat_of(bot).await {
                        Ok(Some(r)) if r.game == row.game && Instant::now() < until => {
                            // The request may have been applied: asking
                            // again is refused if so, which the bot reads
                            // as for any late duplicate.
                            continue;
                        }
                        Ok(Some(_)) => {
                            return Err(Refusal(
                                "the game's server did not answer: try again".into(),
                            ))
                        }
                        _ => return Err(not_in_game()),
                    }
                }
            }
        }
    }

    /// `status` of a bot whose game runs elsewhere: the row the home wrote;
    /// `None` if the bot is in no game.
    pub(super) async fn remote_status(&self, bot: BotId) -> Option<Arc<str>> {
        let relay = self.relay.get()?;
        let row = match relay.db().seat_of(bot).await {
            Ok(row) => row?,
            Err(e) => {
                tracing::warn!("status: {e}");
                return None;
            }
        };
        if row.over {
            self.wait_unseated(relay, bot, row.game).await;
            return None;
        }
        Some(Arc::from(row.status))
    }

    /// `new-game` with several instances.
    pub(super) async fn cluster_new_game(
        &self,
        relay: &Relay,
        bot: BotId,
    ) -> Result<NewGame, Refusal> {
        let house = self.lock().inside.contains(&bot);
        // A game of this instance: its own view (the row may lag behind
        // while the instance is alone).
        let row = match self.own_game(bot).await {
            OwnGame::Reply(reply) => return reply,
            OwnGame::Ended => None,
            OwnGame::NotHere => relay.db().seat_of(bot).await.map_err(internal)?,
        };
        if let Some(row) = row {
            if house && row.home != relay.instance() {
                // A house bot plays where its loop runs: another
                // instance's loop has it.
                tokio::time::sleep(Duration::from_millis(500)).await;
                return Ok(NewGame::Retry);
            }
            if row.over {
                self.wait_unseated(relay, bot, row.game).await;
            } else if row.has_bid {
                return refuse(format!(
                    "you are in game {} and have bid; finish it first",
                    row.game
                ));
            } else {
                return Ok(game_of_row(&row));
            }
        }
        let until = Instant::now() + self.config.poll_timeout;
        let waker = relay.waker(bot);
        let mut waiting = false;
        loop {
            if let Some(pairing) = relay.db().take_partner(bot).await.map_err(internal)? {
                let partner = pairing.partner;
                let id = self.deal(bot, partner, Some(pairing)).await?;
                return self.game_for(bot, id).await;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            // House bots never wait in the table: they take waiting bots
            // from the instance whose loop plays them.
            if !house && !waiting {
                relay
                    .db()
                    .wait(bot, left.as_secs_f64())
                    .await
                    .map_err(internal)?;
                waiting = true;
                // Two bots that looked at the same moment and found nobody
                // both wait now: look once more, so one takes the other.
                continue;
            }
            // The instance that deals this bot a game says so (`NOTIFY`);
            // the slow poll only makes good a lost notification.
            let step = Duration::from_millis(POLL_STEP_MS + rand::rng().random_range(0..250));
            let _ = tokio::time::timeout(step.min(left), waker.notify.notified()).await;
            if waiting {
                if let Some(row) = relay.db().seat_of(bot).await.map_err(internal)? {
                    return Ok(game_of_row(&row));
                }
            }
        }
        if waiting && !relay.db().stop_waiting(bot).await.map_err(internal)? {
            // Taken at the last moment: the deal's seats are written.
            if let Some(row) = relay.db().seat_of(bot).await.map_err(internal)? {
                return Ok(game_of_row(&row));
            }
        }
        Ok(NewGame::Retry)
    }

    /// Writes a game dealt here into the shared tables with the partner
    /// taken (home: this instance). On failure the game is closed.
    pub(super) async fn share_deal(
        &self,
        pairing: Pairing,
        live: &Arc<LiveGame>,
    ) -> Result<(), Refusal> {
        let Some(relay) = self.relay.get() else {
            return Ok(());
        };
        let rows: Vec<SeatRow> = (0..2)
            .map(|i| {
                let v = live.seats[i].view();
                SeatRow {
                    bot: live.bots[i],
                    game: live.id,
                    seat: i as i32,
                    opponent: live.bots[1 - i],
                    hand: hand_text(&live.hands[i]),
                    status: v.status.to_string(),
                    has_bid: v.has_bid,
                    over: v.over,
                    home: relay.instance(),
                }
            })
            .collect();
        if let Err(e) = pairing.commit(&rows).await {
            let now = croupier_arena::runner::now_rfc3339();
            let _ = self
                .store
                .abort_game(live.id, "the deal could not be shared", &now)
                .await;
            return Err(internal(e));
        }
        Ok(())
    }
}
