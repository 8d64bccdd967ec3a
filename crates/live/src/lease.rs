//! This process's membership among the processes that run the ladder on one
//! database (issue 13; the SQL is `croupier_store::leases`): it registers,
//! renews its registration with a heartbeat, reaps the processes that
//! stopped renewing theirs (their running games are closed with the reason
//! "worker lost", their bots freed), and deals each ladder game with its
//! bots claimed in the same transaction.
//!
//! The same code runs on SQLite, where one process runs the ladder: there it
//! reaps every other registration at once when it joins (they are left over
//! from a run that was killed).
//!
//! This registry is the only one: on PostgreSQL a `serve` instance
//! registers once (before its hub and its ladder), its hub's relay runs
//! after each heartbeat ([`AfterBeat`]), and every game the process deals
//! names it (`LeaseStore::lease_new_games`), so one reaper closes a lost
//! process's REST games, people's games and tournament games with its
//! ladder matches.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::watch;

use croupier_store::leases::{LeasedGame, NewProcess, ProcessId, Reap, Reaped};
use croupier_store::{BotId, GameId, Store, StoreError};

/// Why this process's registration could not be kept or used.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// The process could not register.
    #[error("cannot register this process: {0}")]
    Register(#[source] StoreError),
    /// The registrations left over from an earlier run could not be reaped.
    #[error("cannot reap old registrations: {0}")]
    ReapOld(#[source] StoreError),
    /// The process could not leave in order.
    #[error("cannot leave in order: {0}")]
    Leave(#[source] StoreError),
    /// The bots' leases could not be read.
    #[error("cannot read the bots' leases: {0}")]
    Taken(#[source] StoreError),
    /// The game could not be dealt with its bots claimed.
    #[error("cannot deal the game: {0}")]
    Deal(#[source] StoreError),
}

/// Where this process's registration stands: the term (bumped each time
/// the process finds it was reaped as lost and registers again) and
/// whether it is stopping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Standing {
    term: u64,
    stopped: bool,
}

/// How a term of the registration ended ([`Term::ended`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermEnd {
    /// The process was reaped as lost (frozen past its lease): the games
    /// and bots of the term are no longer its own.
    Lost,
    /// The process is stopping (it leaves in order).
    Stopped,
}

impl std::fmt::Display for TermEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TermEnd::Lost => "this process was taken for lost",
            TermEnd::Stopped => "the process stopped",
        })
    }
}

/// One term of the registration, watched by a match dealt in it.
#[derive(Debug)]
pub struct Term {
    rx: watch::Receiver<Standing>,
    term: u64,
}

impl Term {
    /// Whether the term has ended, and how.
    pub fn over(&self) -> Option<TermEnd> {
        let now = *self.rx.borrow();
        if now.stopped {
            Some(TermEnd::Stopped)
        } else if now.term != self.term {
            Some(TermEnd::Lost)
        } else {
            None
        }
    }

    /// Resolves when the term ends (never, while it lasts).
    pub async fn ended(&mut self) -> TermEnd {
        loop {
            if let Some(end) = self.over() {
                return end;
            }
            if self.rx.changed().await.is_err() {
                // The registration is gone with its process: nothing ends.
                std::future::pending::<()>().await;
            }
        }
    }
}

/// How a process keeps its registration.
#[derive(Clone, Debug, PartialEq)]
pub struct LeaseConfig {
    /// `serve` or `worker` (shown in reasons and logs).
    pub role: String,
    /// A registration lasts this long without a heartbeat; then the
    /// process counts as lost and its matches are closed.
    pub ttl: Duration,
    /// How often the registration is renewed and the lost are looked for.
    pub beat: Duration,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        LeaseConfig {
            role: "serve".into(),
            ttl: Duration::from_secs(10),
            beat: Duration::from_secs(2),
        }
    }
}

/// The reason prefix of games closed because their process was lost.
pub const LOST: &str = "worker lost";
/// The reason prefix of games closed because their process stopped.
pub const STOPPED: &str = "process stopped";

/// What else a process does after each heartbeat (the hub's relay).
pub trait AfterBeat: Send + Sync {
    /// Called after each heartbeat; `renewed` says whether the
    /// registration was renewed (false: it could not be, or it had expired).
    fn after_beat(&self, renewed: bool) -> BoxFuture<'_, ()>;
}

/// This process's registration.
pub struct Membership {
    store: Arc<dyn Store>,
    config: LeaseConfig,
    id: AtomicI64,
    renewed: AtomicBool,
    after: Mutex<Vec<Arc<dyn AfterBeat>>>,
    standing: watch::Sender<Standing>,
}

impl std::fmt::Debug for Membership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Membership")
            .field("config", &self.config)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

impl Membership {
    /// Registers this process (on SQLite, reaping every other registration).
    pub async fn join(
        store: Arc<dyn Store>,
        config: LeaseConfig,
    ) -> Result<Membership, LeaseError> {
        let m = Membership {
            store,
            config,
            id: AtomicI64::new(0),
            renewed: AtomicBool::new(true),
            after: Mutex::new(Vec::new()),
            standing: watch::channel(Standing::default()).0,
        };
        let id = m.register().await?;
        if !m.store.leases().shared() {
            let now = croupier_arena::record::now_rfc3339();
            let reaped = m
                .store
                .leases()
                .reap_processes(Reap::AllBut(id), LOST, &now)
                .await
                .map_err(LeaseError::ReapOld)?;
            log_reaped(&reaped);
        }
        Ok(m)
    }

    async fn register(&self) -> Result<ProcessId, LeaseError> {
        let p = NewProcess {
            role: self.config.role.clone(),
            host: host(),
            pid: i64::from(std::process::id()),
            ttl_ms: ms(self.config.ttl),
        };
        let leases = self.store.leases();
        // A process reaped while frozen comes back under its old id: the
        // others know it by that id (its channel, its seats).
        let again = match self.id() {
            0 => None,
            old => leases.register_again(old, &p).await.ok(),
        };
        let row = match again {
            Some(row) => row,
            None => leases
                .register_process(&p)
                .await
                .map_err(LeaseError::Register)?,
        };
        self.id.store(row.id, Ordering::SeqCst);
        leases.lease_new_games(row.id);
        tracing::info!("ladder: registered as {}", row.label());
        Ok(row.id)
    }

    /// Runs `hook` after each heartbeat of [`Membership::run`].
    pub fn after_beat(&self, hook: Arc<dyn AfterBeat>) {
        self.after
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(hook);
    }

    /// This process's id in the registry.
    pub fn id(&self) -> ProcessId {
        self.id.load(Ordering::SeqCst)
    }

    /// The settings.
    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    /// The current term of the registration: a match dealt now watches it
    /// and is abandoned when it ends ([`Term::ended`]).
    pub fn term(&self) -> Term {
        let rx = self.standing.subscribe();
        let term = rx.borrow().term;
        Term { rx, term }
    }

    /// Whether the process is stopping ([`Membership::stop`]).
    pub fn stopped(&self) -> bool {
        self.standing.borrow().stopped
    }

    /// Stops the heartbeat (no renewal, no registering again) and ends the
    /// current term: the matches dealt in it are abandoned. The
    /// registration stays until [`Membership::leave`] (or until it expires
    /// and another process reaps it).
    pub fn stop(&self) {
        self.standing.send_modify(|s| s.stopped = true);
    }

    /// Renews the registration (registering again if it was reaped), then
    /// reaps the lost. Returns what was reaped. Does nothing once stopped.
    pub async fn beat(&self) -> Vec<Reaped> {
        if self.stopped() {
            return Vec::new();
        }
        let leases = self.store.leases();
        let renewed = leases.heartbeat(self.id(), ms(self.config.ttl)).await;
        self.renewed
            .store(matches!(renewed, Ok(true)), Ordering::SeqCst);
        match renewed {
            Ok(true) => {}
            Ok(false) if self.stopped() => return Vec::new(),
            Ok(false) => {
                tracing::warn!(
                    "ladder: this process (process {}) missed its heartbeats and was reaped; its games were closed",
                    self.id()
                );
                // The matches of the lost term are abandoned before the
                // process registers again: their bots may be another
                // process's now.
                self.standing.send_modify(|s| s.term += 1);
                if let Err(e) = self.register().await {
                    tracing::warn!("ladder: {e}");
                }
            }
            Err(e) => tracing::warn!("ladder: cannot renew this process's registration: {e}"),
        }
        let now = croupier_arena::record::now_rfc3339();
        match leases.reap_processes(Reap::Expired, LOST, &now).await {
            Ok(r) => {
                log_reaped(&r);
                r
            }
            Err(e) => {
                tracing::warn!("ladder: cannot look for lost processes: {e}");
                Vec::new()
            }
        }
    }

    /// Renews and reaps every `beat`, then runs the hooks
    /// ([`Membership::after_beat`]), until [`Membership::stop`].
    pub async fn run(self: Arc<Self>) {
        let mut tick = tokio::time::interval(self.config.beat);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut standing = self.standing.subscribe();
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = standing.wait_for(|s| s.stopped) => return,
            }
            if self.stopped() {
                return;
            }
            self.beat().await;
            let renewed = self.renewed.load(Ordering::SeqCst);
            let hooks: Vec<Arc<dyn AfterBeat>> =
                self.after.lock().unwrap_or_else(|p| p.into_inner()).clone();
            for h in hooks {
                h.after_beat(renewed).await;
            }
        }
    }

    /// Leaves in order: the heartbeat stops and the matches in progress
    /// are abandoned ([`Membership::stop`]); this process's running games
    /// are closed (reason "process stopped"), its bots freed, its
    /// registration removed.
    pub async fn leave(&self) -> Result<Vec<Reaped>, LeaseError> {
        self.stop();
        let now = croupier_arena::record::now_rfc3339();
        self.store
            .leases()
            .reap_processes(Reap::One(self.id()), STOPPED, &now)
            .await
            .map_err(LeaseError::Leave)
    }

    /// Bots claimed by any process now (in a match or resting).
    pub async fn taken(&self) -> Result<Vec<BotId>, LeaseError> {
        self.store
            .leases()
            .taken_bots()
            .await
            .map_err(LeaseError::Taken)
    }

    /// Claims `claim` and deals the game; `Ok(None)` if a bot was taken.
    pub async fn start_game(
        &self,
        game: &str,
        bots: &[BotId],
        claim: &[BotId],
        seed: i64,
        started: &str,
    ) -> Result<Option<GameId>, LeaseError> {
        if self.stopped() {
            return Ok(None);
        }
        self.store
            .leases()
            .start_leased_game(&LeasedGame {
                process: self.id(),
                game,
                bots,
                claim,
                seed,
                started,
            })
            .await
            .map_err(LeaseError::Deal)
    }

    /// Frees `bots` after `rest`.
    pub async fn release(&self, bots: &[BotId], rest: Duration) {
        if bots.is_empty() {
            return;
        }
        if let Err(e) = self
            .store
            .leases()
            .release_bots(self.id(), bots, ms(rest))
            .await
        {
            tracing::warn!("ladder: cannot release bots {bots:?}: {e}");
        }
    }
}

fn log_reaped(reaped: &[Reaped]) {
    for r in reaped {
        tracing::warn!(
            "ladder: {} was lost; closed its games {:?} and freed its bots {:?}",
            r.process.label(),
            r.games,
            r.bots
        );
    }
}
