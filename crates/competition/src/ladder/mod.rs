//! The ladder: the server keeps playing matches between the bots that are
//! available for each game: push bots (HTTP servers it calls), pull bots that
//! are polling `/v1/messages`, and house bots (built-in strategies, always
//! available). Love Letter tables take 2 to 4 bots.
//!
//! - [`config`]: the settings per game and overall;
//! - [`pairing`]: who plays whom (pure);
//! - [`seats`]: a match's seats from registered and house bots;
//! - [`health`]: strikes and pauses of faulty bots;
//! - [`lease`]: this process among the others that run the ladder on the
//!   same database: each game is dealt with its bots claimed in the
//!   database, and the matches of a lost process are closed;
//! - here: the loop that starts matches, plays and stores them.
//!
//! Every match is stored like a SkullWhist game of the REST API: dealt
//! (`running`) before the first move, its record committed when it ends. A
//! bot that faults in several matches in a row is paused for a while with
//! the reason, then retried.

mod config;
mod health;
mod pairing;
mod play;
mod seats;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_arena::record::MatchError;
use croupier_arena::transport::http::HttpClient;
use croupier_rules::{GameKind, SetupError};
use croupier_store::{BotId, BotInfo, BotKind, GameId, RecordError, Store, StoreError};
use tokio::time::Instant;

pub use config::{check_game, house_name, GameLadder, LadderConfig, LadderError};
use croupier_live::lease::{self, Membership, TermEnd};
pub use seats::SeatError;
pub(crate) use seats::{link, pull_link, push_link};

use croupier_live::mailbox::Mailboxes;
use pairing::{Clock, State};
use seats::Entrant;

/// Why a ladder match was not played to a stored end (logged, and stored
/// as the reason of an aborted game).
#[derive(Debug, thiserror::Error)]
pub enum GameError {
    /// This process has not joined the database's ladder yet.
    #[error("cannot store a new game: the ladder has not joined the database")]
    NotJoined,
    /// No seed could be drawn.
    #[error("cannot store a new game: {0}")]
    Seed(#[from] croupier_live::visibility::NoEntropy),
    /// The game could not be dealt in the database.
    #[error("cannot store a new game: {0}")]
    Deal(#[source] lease::LeaseError),
    /// The ladder's variant does not read.
    #[error(transparent)]
    Variant(#[from] SetupError),
    /// A bot cannot be seated.
    #[error(transparent)]
    Seat(#[from] SeatError),
    /// The runner could not play the match.
    #[error(transparent)]
    Match(#[from] MatchError),
    /// The finished record does not fit the game's row.
    #[error("cannot store finished game {id}: {source}")]
    Record {
        /// The game.
        id: GameId,
        /// Why.
        source: RecordError,
    },
    /// The match was abandoned: this process's registration ended.
    #[error("abandoned: {0}")]
    Abandoned(TermEnd),
    /// The store failed to keep the finished game.
    #[error("cannot store finished game {id}: {source}")]
    Store {
        /// The game.
        id: GameId,
        /// Why.
        source: StoreError,
    },
}

/// How long a process leaving waits for its matches to be abandoned.
const LEAVE_WAIT: Duration = Duration::from_secs(5);

/// The ladder's view for status pages.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LadderStatus {
    /// Matches in progress.
    pub running: usize,
    /// Bots in a match now.
    pub busy: Vec<BotId>,
    /// Matches finished since the server started.
    pub played: u64,
}

/// The ladder.
pub struct Ladder {
    store: Arc<dyn Store>,
    mailboxes: Arc<Mailboxes>,
    http: Arc<HttpClient>,
    config: LadderConfig,
    /// Each game's house bots.
    house: Vec<(GameKind, Entrant)>,
    state: Mutex<State>,
    /// Issue 15 hook: capacity shared with the tournaments.
    capacity: std::sync::OnceLock<Arc<crate::capacity::Capacity>>,
    /// Hosted bots (issue 12 hook), set by `enable_hosted`.
    pub(crate) hosted: std::sync::OnceLock<Arc<crate::hosted::Hosted>>,
    /// wf (issue 16): where spectators watch the matches.
    live: std::sync::OnceLock<Arc<croupier_live::live_games::LiveGames>>,
    /// This process's registration among those sharing the database, set
    /// when [`Ladder::run`] has joined.
    member: std::sync::OnceLock<Arc<Membership>>,
}

impl std::fmt::Debug for Ladder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ladder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// `tick` scaled by a random factor in [0.5, 1.5).
fn jittered(tick: Duration, rng: &mut impl rand::Rng) -> Duration {
    tick.mul_f64(rng.random_range(0.5..1.5))
}

impl Ladder {
    /// Prepares the ladder: checks every game's settings and registers its
    /// house bots.
    pub async fn new(
        store: Arc<dyn Store>,
        mailboxes: Arc<Mailboxes>,
        http: Arc<HttpClient>,
        config: LadderConfig,
    ) -> Result<Ladder, LadderError> {
        let mut house = Vec::new();
        for g in &config.games {
            check_game(g)?;
            for strategy in &g.house {
                let name = house_name(g.game, strategy);
                let id = store
                    .ensure_house_bot(&name, g.game.name())
                    .await
                    .map_err(|cause| LadderError::Store {
                        name: name.clone(),
                        cause,
                    })?;
                house.push((
                    g.game,
                    Entrant::House {
                        id,
                        name,
                        strategy: strategy.clone(),
                    },
                ));
            }
        }
        Ok(Ladder {
            store,
            mailboxes,
            http,
            config,
            house,
            state: Mutex::new(State::default()),
            capacity: std::sync::OnceLock::new(),
            hosted: std::sync::OnceLock::new(),
            live: std::sync::OnceLock::new(),
            member: std::sync::OnceLock::new(),
        })
    }

    /// Plays hosted bots with `hosted` (a `croupier worker`; `serve` sets
    /// it through `enable_hosted`).
    pub fn play_hosted(&self, hosted: Arc<crate::hosted::Hosted>) {
        let _ = self.hosted.set(hosted);
    }

    /// wf (issue 16): lets spectators watch the ladder's matches.
    pub fn watch_with(&self, live: Arc<croupier_live::live_games::LiveGames>) {
        let _ = self.live.set(live);
    }

    /// Issue 15 hook: shares the capacity with the tournaments.
    pub fn attach_capacity(&self, capacity: Arc<crate::capacity::Capacity>) {
        let _ = self.capacity.set(capacity);
    }

    /// Issue 15 hook: matches the ladder may run now.
    fn max_matches(&self) -> usize {
        self.capacity
            .get()
            .map_or(self.config.max_matches, |c| c.ladder_limit())
    }

    /// Issue 15 hook: whether a bot is in a tournament game.
    fn in_tournament(&self, bot: BotId) -> bool {
        self.capacity.get().is_some_and(|c| c.in_tournament(bot))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the ladder is doing.
    pub fn status(&self) -> LadderStatus {
        let s = self.lock();
        let mut busy: Vec<BotId> = s.busy.iter().copied().collect();
        busy.sort_unstable();
        LadderStatus {
            running: s.running,
            busy,
            played: s.played,
        }
    }

    /// The CPU quota of bot programs in its matches, when its settings
    /// give one (`bot_cpus`, issue 51).
    pub fn bot_cpus(&self) -> Option<croupier_arena::transport::process::cgroup::BotCpus> {
        self.config.bot_cpus
    }

    /// The time a bot has for each decision in `game`'s ladder matches.
    pub fn move_time(&self, game: GameKind) -> Option<Duration> {
        self.config
            .games
            .iter()
            .find(|g| g.game == game)
            .map(|g| g.move_time)
    }

    /// Whether `bot` is in a ladder match now.
    pub fn is_busy(&self, bot: BotId) -> bool {
        self.lock().busy.contains(&bot)
    }

    /// This process's registration, once [`Ladder::run`] has joined.
    pub fn membership(&self) -> Option<&Arc<Membership>> {
        self.member.get()
    }

    /// Uses `m` as this process's registration: a `serve` instance on
    /// PostgreSQL registers once for its hub and its ladder and runs the
    /// heartbeat itself (issue 13, wg). Call before [`Ladder::run`].
    pub fn adopt(&self, m: Arc<Membership>) {
        let _ = self.member.set(m);
    }

    /// Joins the processes that run the ladder on this database (retrying
    /// while the database cannot be reached), and keeps the registration
    /// renewed. Called by [`Ladder::run`]; callable before it to fail early.
    pub async fn join(&self) -> Arc<Membership> {
        if let Some(m) = self.member.get() {
            return Arc::clone(m);
        }
        let m = loop {
            match Membership::join(Arc::clone(&self.store), self.config.lease.clone()).await {
                Ok(m) => break Arc::new(m),
                Err(e) => {
                    tracing::warn!("ladder: {e}; retrying");
                    tokio::time::sleep(self.config.lease.beat).await;
                }
            }
        };
        if self.member.set(Arc::clone(&m)).is_ok() {
            tokio::spawn(Arc::clone(&m).run());
        }
        self.member.get().map_or(m, Arc::clone)
    }

    /// Leaves in order (a process stopping): its running games are closed
    /// with the reason "process stopped" and its bots freed at once,
    /// rather than when its registration expires.
    pub async fn leave(&self) {
        if let Some(m) = self.member.get() {
            // No new match, the heartbeat stops, and the matches in
            // progress are abandoned (their games are closed below).
            m.stop();
            self.wait_idle(LEAVE_WAIT).await;
            match m.leave().await {
                Ok(r) => {
                    let games: usize = r.iter().map(|r| r.games.len()).sum();
                    tracing::info!("ladder: left; closed {games} games in progress");
                }
                Err(e) => tracing::warn!("ladder: cannot leave in order: {e}"),
            }
        }
    }

    /// Waits (up to `limit`) until no match runs.
    async fn wait_idle(&self, limit: Duration) {
        let until = Instant::now() + limit;
        while self.lock().running > 0 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Runs until the process stops, starting matches as bots become
    /// available.
    pub async fn run(self: Arc<Self>) {
        let member = self.join().await;
        loop {
            // Issue 13: a jittered tick. With a fixed one, the process whose
            // tick lands first after the bots' rest ends takes every table,
            // starts their next rest in its own phase and so wins again:
            // one process ends up playing the whole ladder.
            let pause = jittered(self.config.tick, &mut rand::rng());
            tokio::time::sleep(pause).await;
            if member.stopped() {
                return;
            }
            let remote = match self.store.remote_bots().await {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!("ladder: cannot list bots: {e}");
                    continue;
                }
            };
            // Issue 13: bots other processes hold are not seated here.
            match member.taken().await {
                Ok(taken) => self.lock().taken = taken.into_iter().collect(),
                Err(e) => {
                    tracing::warn!("ladder: cannot read the bots' leases: {e}");
                    continue;
                }
            }
            for g in &self.config.games {
                for table in self.tables(g, &remote) {
                    let me = Arc::clone(&self);
                    let g = g.clone();
                    tokio::spawn(async move { me.play(g, table).await });
                }
            }
        }
    }

    /// The tables to start now for `g`, marking their bots busy.
    fn tables(&self, g: &GameLadder, remote: &[BotInfo]) -> Vec<Vec<Entrant>> {
        let clock = Clock {
            now: Instant::now(),
            unix: health::unix_now(),
        };
        let house: Vec<Entrant> = self
            .house
            .iter()
            .filter(|(game, _)| *game == g.game)
            .map(|(_, e)| e.clone())
            .collect();
        // Issue 15 hook: a bot in a tournament game is not available.
        let reached = |b: &BotInfo| {
            !self.in_tournament(b.id)
                && match b.kind {
                    BotKind::Push => b.endpoint.is_some(),
                    BotKind::Pull => self
                        .mailboxes
                        .peek(b.id)
                        .is_some_and(|m| m.waiting(self.config.poll_grace)),
                    // Issue 12 hook: hosted bots with an active version.
                    BotKind::Hosted => self.hosted.get().is_some_and(|h| h.ready(b.id)),
                    BotKind::Rest | BotKind::House => false,
                }
        };
        let mut s = self.lock();
        let pool = pairing::available(g, &self.config, remote, &house, &s, clock, reached);
        let busy = pairing::busy_ids(g, &self.config, remote, &s, clock);
        // Issue 15 hook: tournaments may take a share of the matches.
        let limited;
        let config = match self.max_matches() {
            n if n == self.config.max_matches => &self.config,
            n => {
                limited = LadderConfig {
                    max_matches: n,
                    ..self.config.clone()
                };
                &limited
            }
        };
        let ready = pool.iter().filter(|e| !e.is_house()).count();
        let tables = pairing::tables(g, config, pool, &busy, &mut s, clock, &mut rand::rng());
        let seated: usize = tables
            .iter()
            .map(|t| t.iter().filter(|e| !e.is_house()).count())
            .sum();
        // Issue 49: the ladder's queue, as of this tick.
        let game = g.game.name();
        metrics::gauge!(LADDER_READY, "game" => game).set(ready as f64);
        metrics::gauge!(LADDER_WAITING, "game" => game).set(ready.saturating_sub(seated) as f64);
        tables
    }
}

/// Registered bots free to play a ladder match of a game at the last tick
/// (reachable, healthy, not resting, not busy), in the metrics (issue 49).
pub const LADDER_READY: &str = "croupier_ladder_ready_bots";
/// Of those, the bots no table took at that tick: the ladder's queue.
pub const LADDER_WAITING: &str = "croupier_ladder_waiting_bots";

/// The tournaments skip bots in a ladder match (issue 15).
impl crate::capacity::BusyBots for Ladder {
    fn is_busy(&self, bot: BotId) -> bool {
        Ladder::is_busy(self, bot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn the_tick_is_jittered_around_its_setting() {
        let mut rng = StdRng::seed_from_u64(7);
        let tick = Duration::from_millis(200);
        let ticks: Vec<Duration> = (0..200).map(|_| jittered(tick, &mut rng)).collect();
        assert!(ticks.iter().all(|t| *t >= tick / 2 && *t < tick * 3 / 2));
        let (lo, hi) = (ticks.iter().min().unwrap(), ticks.iter().max().unwrap());
        assert!(*hi - *lo > tick / 2, "not spread: {lo:?}..{hi:?}");
    }
}
