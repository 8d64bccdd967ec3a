//! The live side of the SkullWhist server over the 2014 REST API. One room
//! per concern: [`sessions`] (login, expiry), [`matchmaking`] (the
//! `new-game` long poll, dealing), [`game`] (games in progress, each played
//! by the arena's match runner in its own task, and stored), [`drive`] (a
//! game's runner, polled by the request that brings a move), [`seat`] (the
//! hub as a `Connector`: a seat's requests in, its status out). Handlers
//! and house bots call the same methods.
//!
//! Locking: `inner` (a std mutex) guards the maps and is never held across
//! an await. A game's requests are serialised by its runner, which reads
//! them one at a time from each seat's inbox; a `status` poll reads the
//! seat's latest reply under the seat's own short lock.

mod answered;
mod cluster;
mod crowd;
mod drive;
mod fence;
mod game;
mod home;
mod matchmaking;
pub mod relay;
mod seat;
mod session_cache;
mod sessions;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_store::{BotId, GameId, Store};

pub use cluster::JoinError; // wm (issue 13)
pub use croupier_dialects::skullwhist_rest::Refusal;
pub use game::LiveGame;
pub use matchmaking::NewGame;
use matchmaking::Waiter;
pub use relay::{Home, Relay};
use sessions::Session;

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
    pub lease: crate::lease::LeaseConfig,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            session_idle: Duration::from_secs(300),
            move_timeout: Duration::from_secs(120),
            poll_timeout: Duration::from_secs(30),
            lease: crate::lease::LeaseConfig::default(),
        }
    }
}

/// Locks `m`, poisoned or not: a panic while holding one of the hub's
/// locks cannot leave its maps half-updated in a way that matters more
/// than stopping the server would.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn refuse<T>(msg: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(msg.into()))
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<String, Session>,
    session_of: HashMap<BotId, String>,
    game_of: HashMap<BotId, GameId>,
    waiting: Vec<Waiter>,
    /// Bots in a deal under way, with how many (see `DealMark`).
    dealing: HashMap<BotId, usize>,
    games: HashMap<GameId, Arc<LiveGame>>,
    next_ticket: u64,
    /// Bots played inside the server (house bots).
    inside: HashSet<BotId>,
    /// Bot names, for the spectators' start message (read once per bot,
    /// not twice per game: a game's first bid waited for those reads).
    names: HashMap<BotId, Arc<str>>,
}

/// Sessions, matchmaking and games in progress.
pub struct Hub {
    inner: Arc<Mutex<Inner>>,
    /// Told when a deal under way ends (see `DealMark`).
    dealt: Arc<tokio::sync::Notify>,
    store: Arc<dyn Store>,
    config: HubConfig,
    /// The `status` reply of a bot in no game.
    not_in_game: Arc<str>,
    /// Where spectators watch the games (issue 16), once set.
    live: std::sync::OnceLock<Arc<crate::live_games::LiveGames>>,
    /// With several instances on PostgreSQL: this instance's side of the
    /// relay (see `cluster`); unset on SQLite.
    relay: std::sync::OnceLock<Arc<Relay>>,
    /// wm (issue 13): the cache of the other instances' games and the view
    /// writer (see `cluster`); unset on SQLite.
    cluster: std::sync::OnceLock<cluster::Side>,
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
    pub fn watch_with(&self, live: Arc<crate::live_games::LiveGames>) {
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

    fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Marks `bot` as played inside the server (a house bot): its games
    /// also carry what it observes, for [`Hub::observation`].
    pub fn plays_inside(&self, bot: BotId) {
        self.lock().inside.insert(bot);
    }

    fn current_game(&self, bot: BotId) -> Option<Arc<LiveGame>> {
        let inner = self.lock();
        inner
            .game_of
            .get(&bot)
            .and_then(|g| inner.games.get(g))
            .cloned()
    }

    /// Games in progress and bots waiting, for monitoring.
    pub fn counts(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.games.len(), inner.waiting.len())
    }
}
