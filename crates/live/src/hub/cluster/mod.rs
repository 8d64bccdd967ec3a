//! The hub with several instances on one PostgreSQL database (issue 13
//! item 3). Sessions, the bots waiting for an opponent and the seats of the
//! games in progress are rows (see `croupier_store::postgres::cluster`); a
//! game runs in the instance that dealt it (its home), exactly as on one
//! instance. Any instance answers any request:
//!
//! - `login`, sessions: rows, read by every request;
//! - `new-game`: takes a waiting bot with `FOR UPDATE SKIP LOCKED` and
//!   deals here, or waits in the table until another instance deals it a
//!   game (woken by `NOTIFY`, polling as well); while the instance is
//!   alone, a waiting bot is in its memory only;
//! - `status`, `bid`, `play`, a re-login's abandon: the home's own game
//!   there; elsewhere relayed to the home ([`Relay`]). A `status` is never
//!   answered from a copy (issue 50): the home holds the one current view,
//!   so a bot never reads an older state of its game than one it was
//!   shown, whichever instances its requests reach.
//!
//! On SQLite none of this exists: the hub keeps everything in memory.
//!
//! Rooms: [`matching`] (`new-game`: bots waiting here first, then the
//! table). Below the hub, apart from it: `views` (a game's seats written
//! for the others), `remote_games` (where the other instances' games run,
//! from their notifications), `view_sync` (whether a game's seats are
//! written, and the instance's one writer), `relay`.

mod matching;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use croupier_store::postgres::cluster::{Notice, Pairing, SeatRow, SessionCheck};
use croupier_store::{BotId, GameId};
use futures::future::BoxFuture;
use tokio::time::Instant;

use super::game::{LiveGame, SeatState};
use super::matchmaking::NewGame;
use super::relay::{Home, HomeRead, Relay, GONE, OVER, SEAT_BID, SEAT_OPEN, SESSION_RECHECK};
use super::remote_games::RemoteGames;
use super::sessions::forfeit;
use super::state::{refuse, Hub, Inner, Side};
use super::view_sync::{ViewSync, ViewWriter};
use super::views::seat_rows;
use croupier_dialects::skullwhist_rest::Refusal;

/// A session's use is written at most this often (and read at most every
/// `SESSION_RECHECK` per instance).
const TOUCH_SECS: f64 = 5.0;

/// Why this instance cannot join the others (issue 13).
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// The relay between the instances cannot start.
    #[error(transparent)]
    Relay(#[from] super::relay::RelayError),
    /// [`Hub::join_cluster`] was called twice.
    #[error("the hub already joined")]
    Twice,
}

/// This instance's games, for requests relayed from the others; and the
/// cache of the others' games, fed by their notifications.
struct HomeGames {
    inner: Arc<Mutex<Inner>>,
    games: Arc<RemoteGames>,
    instance: i64,
}

impl Home for HomeGames {
    fn notified(&self, kind: &str, rest: &str) -> bool {
        let game = || {
            rest.split(' ')
                .next()
                .and_then(|g| g.parse::<GameId>().ok())
        };
        // Views of a game not kept here (this instance's own, most often)
        // are not read further.
        if kind == "v" && game().is_some_and(|g| !self.games.knows(g)) {
            return true;
        }
        match Notice::parse(kind, rest) {
            Some(n) => {
                self.games.take(n, self.instance);
                true
            }
            None => match game().filter(|_| kind == "v" || kind == "e") {
                // Views or an end not understood (a newer instance's
                // form?): what is kept of the game is not current any
                // more, so it is read from the rows.
                Some(g) => {
                    tracing::warn!("a notice not understood: {kind} {rest}");
                    self.games.forget(g);
                    true
                }
                None => false,
            },
        }
    }

    fn lost(&self) {
        self.games.clear();
    }

    fn handle(&self, game: GameId, seat: usize, line: String) -> BoxFuture<'static, String> {
        let live = self.game(game);
        Box::pin(async move {
            match live {
                Some(g) => g.relayed(seat, line).await,
                None => GONE.into(),
            }
        })
    }

    fn seat(&self, game: GameId, seat: usize) -> BoxFuture<'static, String> {
        let live = self.game(game);
        Box::pin(async move {
            match live {
                Some(g) if seat < 2 => match g.seat_state(seat).await {
                    SeatState::Open => SEAT_OPEN.into(),
                    SeatState::Bid => SEAT_BID.into(),
                    SeatState::Over => OVER.into(),
                },
                _ => GONE.into(),
            }
        })
    }

    fn status(&self, game: GameId, seat: usize) -> BoxFuture<'static, String> {
        let live = self.game(game);
        Box::pin(async move {
            match live {
                Some(g) if seat < 2 => match g.status(seat).await {
                    Some(s) => s.to_string(),
                    None => OVER.into(),
                },
                _ => GONE.into(),
            }
        })
    }
}

impl HomeGames {
    fn game(&self, game: GameId) -> Option<Arc<LiveGame>> {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .games
            .get(&game)
            .cloned()
    }
}

/// How long a move whose game left the tables unanswered waits for its
/// home's remembered answer.
const LAST_ASK: Duration = Duration::from_secs(1);

/// What the home of a game said to a relayed line.
enum Relayed {
    /// Its answer to the bot.
    Reply(Result<(), Refusal>),
    /// It does not run the game (any more).
    Gone,
    /// It did not answer, and the bot sits in another game now.
    Moved,
}

impl Relayed {
    /// The home's answer: "ok", "refused REASON", or that it does not run
    /// the game.
    fn of(answer: &str) -> Relayed {
        match answer {
            "ok" => Relayed::Reply(Ok(())),
            r if r.starts_with("refused ") => {
                Relayed::Reply(Err(Refusal(r["refused ".len()..].to_string())))
            }
            _ => Relayed::Gone,
        }
    }
}

/// How long a `status` waits for the game's home to answer before it
/// reads the rows again (a home that died is closed by its lease).
const STATUS_WAIT: Duration = Duration::from_secs(3);

/// What a game's home said to a relayed `status`.
enum Asked {
    /// The seat's status.
    Status(Arc<str>),
    /// The game is over and stored.
    Over,
    /// The home does not run the game (any more).
    Gone,
    /// No answer in time.
    Silent,
}

/// A move that cannot be answered now (the bot should ask again).
const TRY_AGAIN: &str = "the game's server did not answer: try again";

fn internal(e: impl std::fmt::Display) -> Refusal {
    tracing::error!("the shared tables: {e}");
    Refusal("internal error: try again".into())
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
        member: Arc<crate::lease::Membership>,
    ) -> Result<bool, JoinError> {
        let Some(db) = self.store.cluster() else {
            return Ok(false);
        };
        let games = Arc::new(RemoteGames::default());
        let home: Arc<dyn Home> = Arc::new(HomeGames {
            inner: Arc::clone(&self.inner),
            games: Arc::clone(&games),
            instance: member.id(),
        });
        let side = Side {
            games,
            writer: ViewWriter::start(db.clone()),
        };
        self.cluster.set(side).map_err(|_| JoinError::Twice)?;
        let relay = Relay::start(db, member, home)
            .await
            .map_err(JoinError::Relay)?;
        self.relay.set(relay).map_err(|_| JoinError::Twice)?;
        Ok(true)
    }

    /// The view changes of a game dealt now (with several instances).
    pub(super) fn view_sync(&self) -> Option<Arc<ViewSync>> {
        let relay = self.relay.get()?;
        let side = self.cluster.get()?;
        Some(Arc::new(ViewSync::new(
            Arc::clone(relay.crowd()),
            side.writer.clone(),
            relay.instance(),
        )))
    }

    fn remote_games(&self) -> Option<&RemoteGames> {
        self.cluster.get().map(|s| &*s.games)
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
        if let Some(bot) = relay.sessions().get(token, recheck) {
            return Ok(bot);
        }
        let idle = self.config.session_idle.as_secs_f64();
        let touch = TOUCH_SECS.min(recheck.as_secs_f64());
        match relay.db().session(token, idle, touch).await {
            Ok(SessionCheck::Live(bot)) => {
                relay.sessions().put(token, bot);
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
        relay.sessions().forget(bot);
        // A game of this instance is forfeited here: one dealt while the
        // instance was alone has no seats in the tables.
        if let Some(game) = self.current_game(bot) {
            forfeit(&game, bot).await;
            return Ok(());
        }
        if let Some(row) = relay.db().seat_of(bot).await.map_err(internal)? {
            let id = relay.request_id();
            relay
                .ask(
                    &id,
                    row.home,
                    row.game,
                    row.seat as usize,
                    "abandon",
                    self.relay_wait(),
                )
                .await;
        }
        Ok(())
    }

    /// Waits until a game that is over has left the tables (its record is
    /// stored, or its home is gone and the game closed).
    async fn wait_unseated(&self, relay: &Relay, bot: BotId, game: GameId) {
        let until = Instant::now() + relay.lease() + Duration::from_secs(10);
        let step = Duration::from_millis(20);
        while Instant::now() < until {
            // The game's end is heard (`NOTIFY`), or looked for again.
            let ended = self.remote_games().map(|c| c.ended().notified());
            let ended = async move {
                match ended {
                    Some(n) => {
                        let _ = tokio::time::timeout(step, n).await;
                    }
                    None => tokio::time::sleep(step).await,
                }
            };
            tokio::pin!(ended);
            match relay.db().seat_of(bot).await {
                Ok(Some(r)) if r.game == game => {}
                _ => return,
            }
            ended.await;
        }
    }

    /// `bid`/`play` of a bot whose game runs elsewhere (or nowhere). Its
    /// seat and the game's home come from the cache when it knows them (a
    /// stale entry is answered "gone" by the home; the rows are read
    /// then), else from the rows.
    pub(super) async fn remote_line(&self, bot: BotId, line: String) -> Result<(), Refusal> {
        let not_in_game = || Refusal("you are not in a game".into());
        let Some(relay) = self.relay.get() else {
            return Err(not_in_game());
        };
        if let Some(p) = self.remote_games().and_then(|c| c.placed(bot)) {
            match self
                .relay_line(relay, bot, p.game, p.seat, p.home, &line)
                .await
            {
                Relayed::Gone | Relayed::Moved => {
                    // The cache had not heard that the game ended.
                    if let Some(c) = self.remote_games() {
                        c.forget(p.game);
                    }
                }
                Relayed::Reply(r) => return r,
            }
        }
        // The rows, read again if the bot sits in another game by the time
        // the one read has answered (at most once more).
        for _ in 0..2 {
            let Some(row) = relay.db().seat_of(bot).await.map_err(internal)? else {
                return Err(not_in_game());
            };
            if row.over {
                self.wait_unseated(relay, bot, row.game).await;
                return Err(not_in_game());
            }
            match self
                .relay_line(relay, bot, row.game, row.seat as usize, row.home, &line)
                .await
            {
                Relayed::Gone => {
                    self.wait_unseated(relay, bot, row.game).await;
                    return Err(not_in_game());
                }
                Relayed::Moved => continue,
                Relayed::Reply(r) => return r,
            }
        }
        Err(Refusal(TRY_AGAIN.into()))
    }

    /// Sends a `bid`/`play` line to the game's home and waits for its
    /// answer: once the move is applied (and the game stored, if the move
    /// ended it); a home that died is noticed by its lease.
    async fn relay_line(
        &self,
        relay: &Relay,
        bot: BotId,
        game: GameId,
        seat: usize,
        home: i64,
        line: &str,
    ) -> Relayed {
        let until = Instant::now() + self.relay_wait();
        // One number for every asking: the home answers a request asked
        // again as it did the first time (`hub::answered`).
        let id = relay.request_id();
        loop {
            let step = Duration::from_secs(3).min(until.saturating_duration_since(Instant::now()));
            match relay
                .ask(&id, home, game, seat, line, step)
                .await
                .as_deref()
            {
                Some(r) => return Relayed::of(r),
                None => {
                    // No answer yet: is the game still there?
                    match relay.db().seat_of(bot).await {
                        Ok(Some(r)) if r.game == game && Instant::now() < until => continue,
                        // The bot sits in another game: the one asked was
                        // a stale placement (its home may be gone, so it
                        // never said "gone").
                        Ok(Some(r)) if r.game != game => return Relayed::Moved,
                        Ok(Some(_)) => return Relayed::Reply(Err(Refusal(TRY_AGAIN.into()))),
                        Ok(None) => {
                            // The game left the tables: its home, if it
                            // still runs, remembers the answer (the move
                            // may be the one that ended the game).
                            let last = relay.ask(&id, home, game, seat, line, LAST_ASK).await;
                            return match last.as_deref() {
                                Some(r) if r != GONE => Relayed::of(r),
                                _ => Relayed::Reply(Err(self.left_unanswered(game).await)),
                            };
                        }
                        Err(e) => return Relayed::Reply(Err(internal(e))),
                    }
                }
            }
        }
    }

    /// How long a request relayed to a game's home may take: the move
    /// timeout (a move waits for the runner, which waits for nobody
    /// longer), and 10 s for the database.
    fn relay_wait(&self) -> Duration {
        self.config.move_timeout + Duration::from_secs(10)
    }

    /// The refusal of a move whose game left the tables while its home
    /// did not answer: if the game ended, the move may have been the one
    /// that ended it (its home stored the game and stopped before it
    /// answered), so the bot is sent to its result.
    async fn left_unanswered(&self, game: GameId) -> Refusal {
        match self.store.game(game).await {
            Ok(Some(row)) if row.status != "running" => Refusal(format!(
                "game {game} ended before its server answered this move (the move may be the one that ended it): see old-game"
            )),
            Ok(_) => Refusal("you are not in a game".into()),
            Err(e) => internal(e),
        }
    }

    /// `status` of a bot whose game runs elsewhere: its home's answer, the
    /// home found in the cache or else in the rows; `None` if the bot is in
    /// no game (once the game it was in has left the tables).
    pub(super) async fn remote_status(&self, bot: BotId) -> Result<Option<Arc<str>>, Refusal> {
        let Some(relay) = self.relay.get() else {
            return Ok(None);
        };
        if relay.crowd().alone() {
            // No other instance runs games: the bot is in none.
            return Ok(None);
        }
        if let Some(p) = self.remote_games().and_then(|c| c.placed(bot)) {
            match self.ask_status(relay, p.game, p.seat, p.home).await {
                Asked::Status(s) => return Ok(Some(s)),
                // The game ended (the bot may be in a newer one the cache
                // has not heard of yet), the cache had not heard that it
                // ended, or the home is silent: the rows say where the
                // bot is.
                Asked::Over | Asked::Gone | Asked::Silent => {
                    if let Some(c) = self.remote_games() {
                        c.forget(p.game);
                    }
                }
            }
        }
        // The rows, read again while the home is silent and the bot still
        // sits in the game (a home that died: its lease runs out, and the
        // game is closed), or once more if the bot sits in another game by
        // the time the one read has answered.
        // A home that died is found lost and its games closed within its
        // lease; one alive but silent is not waited for longer.
        let until = Instant::now() + relay.lease() + STATUS_WAIT;
        let mut moved = 0;
        while let Some(row) = relay.db().seat_of(bot).await.map_err(internal)? {
            if row.over {
                self.wait_unseated(relay, bot, row.game).await;
                return Ok(None);
            }
            match self
                .ask_status(relay, row.game, row.seat as usize, row.home)
                .await
            {
                Asked::Status(s) => return Ok(Some(s)),
                Asked::Over => {
                    self.wait_unseated(relay, bot, row.game).await;
                    return Ok(None);
                }
                // The home runs no such game any more: its end removed
                // the seats before it left the home's maps.
                Asked::Gone => return Ok(None),
                Asked::Silent => match relay.db().seat_of(bot).await.map_err(internal)? {
                    Some(r) if r.game == row.game && Instant::now() < until => {}
                    Some(r) if r.game != row.game && moved < 1 => moved += 1,
                    Some(_) => return Err(Refusal(TRY_AGAIN.into())),
                    None => return Ok(None),
                },
            }
        }
        Ok(None)
    }

    /// Asks a game's home for seat `seat`'s status.
    async fn ask_status(&self, relay: &Relay, game: GameId, seat: usize, home: i64) -> Asked {
        let t = Instant::now();
        let asked = match relay
            .ask_home(HomeRead::Status, home, game, seat, STATUS_WAIT)
            .await
        {
            Some(r) if r == OVER => Asked::Over,
            Some(r) if r == GONE => Asked::Gone,
            Some(r) => Asked::Status(Arc::from(r)),
            None => Asked::Silent,
        };
        croupier_store::waits::record("status: asked the home", t.elapsed());
        asked
    }

    /// Writes a game dealt here into the shared tables with the partner
    /// taken (home: this instance). On failure the game is closed. While
    /// this instance is alone, a game between two of its own bots is not
    /// written: nobody else reads its seats, and its view writer writes
    /// them if another instance comes (see `views`).
    pub(super) async fn share_deal(
        &self,
        pairing: Pairing,
        live: &Arc<LiveGame>,
    ) -> Result<(), Refusal> {
        let Some(relay) = self.relay.get() else {
            return Ok(());
        };
        if pairing.is_local() && relay.crowd().alone() {
            return Ok(());
        }
        let rows = seat_rows(live, relay.instance());
        if let Err(e) = pairing.commit(&rows).await {
            let now = croupier_arena::record::now_rfc3339();
            let _ = self
                .store
                .abort_game(live.id, "the deal could not be shared", &now)
                .await;
            crate::metrics::game_aborted("skullwhist", crate::metrics::GameSource::Rest);
            return Err(internal(e));
        }
        if let Some(sync) = &live.sync {
            sync.rows_written().await;
        }
        Ok(())
    }
}
