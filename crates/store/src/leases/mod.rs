//! Ladder leases (issue 13): several processes (`serve` instances and
//! `croupier worker`s) run ladder matches on one database, and the database
//! alone keeps them apart.
//!
//! - Every such process registers in `ladder_processes` and renews its
//!   registration with a heartbeat ([`LeaseStore::heartbeat`]); a process
//!   whose registration has expired is dead.
//! - A match's bots are claimed in the same transaction that deals its game
//!   ([`LeaseStore::start_leased_game`]): each bot has at most one row in
//!   `ladder_leases`, inserted by the claim, so two processes can never seat
//!   the same bot; a claim that finds any of its bots taken deals nothing.
//!   The game row names its process (`games.leased_by`).
//! - After the match the bots rest ([`LeaseStore::release_bots`]): their row
//!   stays until the rest is over, then any process may claim them.
//! - Any process reaps the dead ([`LeaseStore::reap_processes`]): their
//!   running games are closed as aborted with the reason, their bots freed,
//!   their registration removed. On PostgreSQL the dead registrations are
//!   locked `FOR UPDATE SKIP LOCKED`, so two reapers never close one
//!   process's games twice.
//!
//! Times are the database's clock (milliseconds since the epoch), so the
//! processes' own clocks may differ. The SQL is written once
//! ([`lease_queries`]) for both backends.

use async_trait::async_trait;
use serde::Serialize;

use crate::{BotId, GameId, StoreError};

#[macro_use]
mod queries;
mod postgres;
mod sqlite;

/// A registered process's id.
pub type ProcessId = i64;

/// A process to register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProcess {
    /// `serve` or `worker`.
    pub role: String,
    /// Its host name.
    pub host: String,
    /// Its process id on that host.
    pub pid: i64,
    /// How long its registration lasts without a heartbeat (milliseconds).
    pub ttl_ms: i64,
}

/// A registered process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct ProcessRow {
    /// Id.
    pub id: ProcessId,
    /// `serve` or `worker`.
    pub role: String,
    /// Host name.
    pub host: String,
    /// Process id on its host.
    pub pid: i64,
    /// Registered at (database clock, ms).
    pub started_ms: i64,
    /// Last heartbeat (database clock, ms).
    pub beat_ms: i64,
    /// Dead after this (database clock, ms) unless renewed.
    pub expires_ms: i64,
}

impl ProcessRow {
    /// How the process is named in reasons and logs.
    pub fn label(&self) -> String {
        format!(
            "{} {} pid {} (process {})",
            self.role, self.host, self.pid, self.id
        )
    }
}

/// Which registrations [`LeaseStore::reap_processes`] removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reap {
    /// Those whose registration has expired.
    Expired,
    /// This one (a process stopping in order).
    One(ProcessId),
    /// All but this one (on SQLite, where one process runs the ladder).
    AllBut(ProcessId),
}

/// A process reaped, and the running games of it that were closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reaped {
    /// The process.
    pub process: ProcessRow,
    /// Its games closed as aborted.
    pub games: Vec<GameId>,
    /// Its bots freed.
    pub bots: Vec<BotId>,
}

/// A ladder game to deal, with the bots to claim for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeasedGame<'a> {
    /// The process that plays it.
    pub process: ProcessId,
    /// Game name.
    pub game: &'a str,
    /// Bots by seat (at least two).
    pub bots: &'a [BotId],
    /// The bots to claim (those that may not sit at two tables at once).
    pub claim: &'a [BotId],
    /// The deal's seed.
    pub seed: i64,
    /// Start time (RFC 3339).
    pub started: &'a str,
}

/// The ladder's leases (see the module documentation).
#[async_trait]
pub trait LeaseStore: Send + Sync {
    /// Whether several processes may share this database (PostgreSQL);
    /// SQLite has one process running the ladder.
    fn shared(&self) -> bool;
    /// Marks every game this store deals from now on with `start_game`
    /// (REST games, people's games, tournament games) as played by process
    /// `id`, like the ladder's leased games: when the process is reaped,
    /// they are closed with the others (PostgreSQL; on SQLite one process
    /// runs everything and closes what is left on start).
    fn lease_new_games(&self, id: ProcessId);
    /// Registers a process again under its old id (it was reaped while
    /// frozen, and its id names it to the others: channels, seats).
    async fn register_again(&self, id: ProcessId, p: &NewProcess)
        -> Result<ProcessRow, StoreError>;
    /// Registers a process; returns its row.
    async fn register_process(&self, p: &NewProcess) -> Result<ProcessRow, StoreError>;
    /// Renews a registration for `ttl_ms`; `false` if it is gone (reaped).
    async fn heartbeat(&self, id: ProcessId, ttl_ms: i64) -> Result<bool, StoreError>;
    /// Removes registrations (see [`Reap`]): their running games are marked
    /// aborted with `why: <process>` as the reason and `at` as their end,
    /// their bots are freed.
    async fn reap_processes(
        &self,
        which: Reap,
        why: &str,
        at: &str,
    ) -> Result<Vec<Reaped>, StoreError>;
    /// Claims `g.claim` for `g.process` and deals the game, in one
    /// transaction; `None` (nothing written) if any of the bots is taken.
    async fn start_leased_game(&self, g: &LeasedGame<'_>) -> Result<Option<GameId>, StoreError>;
    /// Ends `process`'s claim on `bots`: they rest `rest_ms`, then are free.
    async fn release_bots(
        &self,
        process: ProcessId,
        bots: &[BotId],
        rest_ms: i64,
    ) -> Result<(), StoreError>;
    /// Bots claimed now, in a match or resting, by any process.
    async fn taken_bots(&self) -> Result<Vec<BotId>, StoreError>;
    /// The registered processes, oldest first.
    async fn processes(&self) -> Result<Vec<ProcessRow>, StoreError>;
}
