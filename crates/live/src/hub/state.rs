//! The hub itself: its maps (sessions, waiting bots, games in progress),
//! its clocks and limits, and what it holds with several instances. The
//! concerns that act on it are rooms of their own above this one:
//! `sessions`, `matchmaking`, `moves`, `cluster`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_dialects::skullwhist_rest::Refusal;
use croupier_store::{BotId, GameId, Store};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::game::{LiveGame, Registry};
use super::lock::lock;
use super::relay::Relay;
use super::remote_games::RemoteGames;
use super::view_sync::ViewWriter;
use crate::lease::LeaseConfig;
use crate::live_games::LiveGames;

/// Clocks and limits of the server.
#[derive(Clone, Debug)]
pub struct HubConfig {
    /// A session expires after this long without a request.
    pub session_idle: Duration,
    /// A bot that is due and silent this long forfeits.
    pub move_timeout: Duration,
    /// How long `new-game` waits for an opponent before `retry`.
    pub poll_timeout: Duration,
    /// With several processes on PostgreSQL: this process's registration
    /// (heartbeat, expiry; issue 13). Its ladder uses the same one.
    pub lease: LeaseConfig,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            session_idle: Duration::from_secs(300),
            move_timeout: Duration::from_secs(120),
            poll_timeout: Duration::from_secs(30),
            lease: LeaseConfig::default(),
        }
    }
}

/// Refuses with `msg`.
pub(super) fn refuse<T>(msg: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(msg.into()))
}

/// A live session of the 2014 API.
pub(super) struct Session {
    pub(super) bot: BotId,
    pub(super) last_seen: Instant,
}

/// A bot waiting for an opponent (`new-game`).
pub(super) struct Waiter {
    pub(super) bot: BotId,
    pub(super) ticket: u64,
    pub(super) tx: oneshot::Sender<GameId>,
    /// With several instances: whether the bot also waits in the shared
    /// table (written while other instances ran), so that taking it from
    /// the list must take its row too.
    pub(super) row: bool,
}

/// This instance's side of the cluster, beside the relay: its cache of the
/// other instances' games and its view writer.
#[derive(Debug)]
pub(super) struct Side {
    pub(super) games: Arc<RemoteGames>,
    pub(super) writer: ViewWriter,
}

/// The hub's maps, under one std mutex never held across an await.
#[derive(Default)]
pub(super) struct Inner {
    pub(super) sessions: HashMap<String, Session>,
    pub(super) session_of: HashMap<BotId, String>,
    pub(super) game_of: HashMap<BotId, GameId>,
    pub(super) waiting: Vec<Waiter>,
    /// Bots in a deal under way, with how many (see `DealMark`).
    pub(super) dealing: HashMap<BotId, usize>,
    pub(super) games: HashMap<GameId, Arc<LiveGame>>,
    pub(super) next_ticket: u64,
    /// Bots played inside the server (house bots).
    pub(super) inside: HashSet<BotId>,
    /// Bot names, for the spectators' start message (read once per bot,
    /// not twice per game: a game's first bid waited for those reads).
    pub(super) names: HashMap<BotId, Arc<str>>,
}

/// Sessions, matchmaking and games in progress.
pub struct Hub {
    pub(super) inner: Arc<Mutex<Inner>>,
    /// Told when a deal under way ends (see `DealMark`).
    pub(super) dealt: Arc<tokio::sync::Notify>,
    pub(super) store: Arc<dyn Store>,
    pub(super) config: HubConfig,
    /// The `status` reply of a bot in no game.
    pub(super) not_in_game: Arc<str>,
    /// Where spectators watch the games (issue 16), once set.
    pub(super) live: std::sync::OnceLock<Arc<LiveGames>>,
    /// With several instances on PostgreSQL: this instance's side of the
    /// relay (see `cluster`); unset on SQLite.
    pub(super) relay: std::sync::OnceLock<Arc<Relay>>,
    /// wm (issue 13): the cache of the other instances' games and the view
    /// writer (see `remote_games`, `view_sync`); unset on SQLite.
    pub(super) cluster: std::sync::OnceLock<Side>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Hub {
    /// A hub over `store`.
    pub fn new(store: Arc<dyn Store>, config: HubConfig) -> Hub {
        Hub {
            inner: Arc::new(Mutex::new(Inner::default())),
            dealt: Arc::new(tokio::sync::Notify::new()),
            store,
            config,
            not_in_game: Arc::from(
                croupier_dialects::skullwhist_rest::Status::default().reply_text(),
            ),
            live: std::sync::OnceLock::new(),
            relay: std::sync::OnceLock::new(),
            cluster: std::sync::OnceLock::new(),
        }
    }

    /// Lets spectators watch the REST games (issue 16).
    pub fn watch_with(&self, live: Arc<LiveGames>) {
        let _ = self.live.set(live);
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Clocks and limits.
    pub fn config(&self) -> &HubConfig {
        &self.config
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Marks `bot` as played inside the server (a house bot): its games
    /// also carry what it observes, for [`Hub::observation`].
    pub fn plays_inside(&self, bot: BotId) {
        self.lock().inside.insert(bot);
    }

    pub(super) fn current_game(&self, bot: BotId) -> Option<Arc<LiveGame>> {
        let inner = self.lock();
        inner
            .game_of
            .get(&bot)
            .and_then(|g| inner.games.get(g))
            .cloned()
    }

    /// The bot's game and its seat in it.
    pub(super) fn current_seat(&self, bot: BotId) -> Option<(Arc<LiveGame>, usize)> {
        let game = self.current_game(bot)?;
        let seat = game.seat_of(bot)?;
        Some((game, seat))
    }

    /// Sessions open now (bots logged in to the 2014 REST API), for
    /// monitoring.
    pub fn sessions(&self) -> usize {
        self.lock().sessions.len()
    }

    /// Games in progress and bots waiting, for monitoring.
    pub fn counts(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.games.len(), inner.waiting.len())
    }
}

impl Registry for Mutex<Inner> {
    fn name(&self, bot: BotId) -> Option<Arc<str>> {
        lock(self).names.get(&bot).cloned()
    }

    fn remember(&self, bot: BotId, name: Arc<str>) {
        lock(self).names.insert(bot, name);
    }

    fn closed(&self, id: GameId, bots: [BotId; 2]) {
        let mut inner = lock(self);
        inner.games.remove(&id);
        for b in bots {
            if inner.game_of.get(&b) == Some(&id) {
                inner.game_of.remove(&b);
            }
        }
    }
}
