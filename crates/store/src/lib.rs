//! Durable storage for the server: bots and game records.
//!
//! Handlers talk to the [`Store`] trait only; [`SqliteStore`] is the default
//! (an embedded file, WAL journal) and [`PgStore`] keeps the same data in
//! PostgreSQL. [`open`] picks one by the URL's scheme.
//!
//! Both implement [`Store`] and [`WebReads`] through one implementation
//! (`sql_store`, `sql_web`), generic over the database: a query whose SQL
//! and row mapping are the same on both is written once, and each backend
//! keeps only what it does its own way (`sqlite*`, `postgres/`).

pub mod group;
pub mod hosted;
mod people;
pub mod postgres;
pub mod ratings;
mod record;
pub mod scratch;
mod sql_store;
mod sql_web;
mod sqlite;
mod sqlite_batch;
mod sqlite_import;
mod sqlite_ratings;
mod sqlite_raw;
mod sqlite_wal;
mod sqlite_web;
pub mod tournaments;
pub mod waits;
pub mod web;
// Issue 13 (wc): ladder leases between processes.
pub mod leases;

use async_trait::async_trait;
use serde::Serialize;

pub use group::{BatchWrite, GroupCommit, GroupConfig, Write, Written};
pub use leases::LeaseStore;
pub use people::PersonSeat;
pub use postgres::PgStore;
pub use record::RecordError;
pub use sqlite::SqliteStore;
pub use tournaments::TournamentStore;
pub use web::WebReads;

/// A bot's id.
pub type BotId = i64;
/// An owner's id.
pub type OwnerId = i64;
/// A game's id.
pub type GameId = i64;

/// Why storage failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A bot of that name exists.
    #[error("the name is taken")]
    NameTaken,
    /// The database URL is not supported.
    #[error("unsupported database URL '{0}' (use sqlite://FILE or postgres://USER@HOST/DB)")]
    Url(String),
    /// The database failed.
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    /// The database failed (SQLite, in the writer's batches).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Migrations failed.
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The store's writer task has stopped (its runtime is shutting down).
    #[error("the store's writer has stopped")]
    Closed,
    /// The store's writer thread could not be started.
    #[error("cannot start the store's writer thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// A registered bot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct BotRow {
    /// Id.
    pub id: BotId,
    /// Unique name.
    pub name: String,
    /// PHC-format password hash (argon2id).
    #[serde(skip)]
    pub password_hash: String,
    /// Whether this is a house bot.
    pub house: bool,
}

/// A stored game.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct GameRow {
    /// Id.
    pub id: GameId,
    /// Game name.
    pub game: String,
    /// `running`, `finished` or `aborted`.
    pub status: String,
    /// Seat 0's bot.
    pub bot1: BotId,
    /// Seat 1's bot.
    pub bot2: BotId,
    /// The deal's seed.
    pub seed: i64,
    /// Start time (RFC 3339).
    pub started: String,
    /// End time (RFC 3339).
    pub finished: Option<String>,
    /// Seat 0's score.
    pub score1: Option<i64>,
    /// Seat 1's score.
    pub score2: Option<i64>,
    /// The bot that forfeited, if any.
    pub forfeited_by: Option<BotId>,
    /// Why the game was aborted.
    pub reason: Option<String>,
    /// The game record (JSON), once finished.
    pub record: Option<String>,
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq)]
pub struct GameEnd {
    /// End time (RFC 3339).
    pub finished: String,
    /// Scores by seat (`None` where the game scores nobody, e.g. a
    /// SkullWhist forfeit).
    pub scores: Vec<Option<i64>>,
    /// Ranks by seat (1 = best; equal ranks are a tie).
    pub ranks: Vec<u8>,
    /// The bot that forfeited, if any.
    pub forfeited_by: Option<BotId>,
    /// The complete record (JSON).
    pub record: String,
}

/// An owner of HTTP bots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct OwnerRow {
    /// Id.
    pub id: OwnerId,
    /// Unique name.
    pub name: String,
    /// PHC-format password hash (argon2id).
    #[serde(skip)]
    pub password_hash: String,
}

/// How a bot reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BotKind {
    /// A SkullWhist bot of the 2014 REST API.
    Rest,
    /// A built-in strategy inside the server.
    House,
    /// An HTTP server that Croupier calls.
    Push,
    /// A client of the `/v1` pull API.
    Pull,
    /// A program uploaded by its owner, run by the server in the sandbox
    /// (its versions are in [`hosted`]).
    Hosted,
}

impl BotKind {
    /// The kind's name in the database and the API.
    pub fn name(self) -> &'static str {
        match self {
            BotKind::Rest => "rest",
            BotKind::House => "house",
            BotKind::Push => "push",
            BotKind::Pull => "pull",
            BotKind::Hosted => "hosted",
        }
    }

    /// Reads a kind's name.
    pub fn parse(s: &str) -> Option<BotKind> {
        [
            BotKind::Rest,
            BotKind::House,
            BotKind::Push,
            BotKind::Pull,
            BotKind::Hosted,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }
}

/// A kind name in the database that no [`BotKind`] has.
#[derive(Debug, thiserror::Error)]
#[error("unknown bot kind {0:?} in the database")]
pub struct UnknownBotKind(String);

impl TryFrom<String> for BotKind {
    type Error = UnknownBotKind;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        BotKind::parse(&s).ok_or(UnknownBotKind(s))
    }
}

/// A new bot registered by an owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBot {
    /// Unique name.
    pub name: String,
    /// The game it plays.
    pub game: String,
    /// Push or pull.
    pub kind: BotKind,
    /// Its owner.
    pub owner: OwnerId,
    /// A push bot's URL.
    pub endpoint: Option<String>,
    /// Its dialect.
    pub dialect: String,
    /// Basic-auth user name Croupier sends to a push bot.
    pub auth_user: Option<String>,
    /// Basic-auth password Croupier sends to a push bot.
    pub auth_password: Option<String>,
    /// SHA-256 (hex) of a pull bot's bearer token.
    pub token_hash: Option<String>,
}

/// A bot as the ladder and the owner API see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct BotInfo {
    /// Id.
    pub id: BotId,
    /// Unique name.
    pub name: String,
    /// The game it plays.
    pub game: String,
    /// How it connects.
    #[sqlx(try_from = "String")]
    pub kind: BotKind,
    /// Its owner, if registered by one.
    pub owner: Option<OwnerId>,
    /// A push bot's URL.
    pub endpoint: Option<String>,
    /// Its dialect (push and pull bots).
    pub dialect: Option<String>,
    /// Basic-auth user name Croupier sends.
    pub auth_user: Option<String>,
    /// Basic-auth password Croupier sends.
    #[serde(skip)]
    pub auth_password: Option<String>,
    /// Consecutive faulty matches.
    pub strikes: i64,
    /// Paused until this time (unix seconds).
    pub paused_until: Option<i64>,
    /// Why it was paused.
    pub pause_reason: Option<String>,
    /// Whether its owner has it switched on.
    pub enabled: bool,
}

/// Storage behind the server (the website's reads are in [`WebReads`]).
#[async_trait]
pub trait Store: WebReads + Send + Sync + 'static {
    /// Registers a bot; fails with [`StoreError::NameTaken`] if the name exists.
    async fn create_bot(
        &self,
        name: &str,
        password_hash: &str,
        house: bool,
    ) -> Result<BotId, StoreError>;
    /// Finds a bot by name.
    async fn bot_by_name(&self, name: &str) -> Result<Option<BotRow>, StoreError>;
    /// Records a game that has just been dealt, with its bots by seat (at
    /// least two); returns its id.
    async fn start_game(
        &self,
        game: &str,
        bots: &[BotId],
        seed: i64,
        started: &str,
    ) -> Result<GameId, StoreError>;
    /// Stores a finished game and its record, durably, before returning
    /// (with its seats, ratings and statistics, in one transaction shared
    /// with the other games that finish at the same time: see [`group`]).
    async fn finish_game(&self, id: GameId, end: &GameEnd) -> Result<(), StoreError>;
    /// Marks a running game aborted.
    async fn abort_game(&self, id: GameId, reason: &str, at: &str) -> Result<(), StoreError>;
    /// Marks every running game aborted (after a restart); returns how many.
    /// On PostgreSQL, only those no registered process plays (the games of
    /// a registration, expired or not, are its reaper's).
    async fn abort_running(&self, reason: &str, at: &str) -> Result<u64, StoreError>;
    /// A game by id.
    async fn game(&self, id: GameId) -> Result<Option<GameRow>, StoreError>;
    /// Number of games by status.
    async fn count_games(&self, status: &str) -> Result<i64, StoreError>;
    /// The bots of a game, by seat.
    async fn game_bots(&self, id: GameId) -> Result<Vec<BotId>, StoreError>;

    /// Registers (or finds) the house bot `name` of `game`.
    async fn ensure_house_bot(&self, name: &str, game: &str) -> Result<BotId, StoreError>;
    /// Creates an owner; fails with [`StoreError::NameTaken`] if the name exists.
    async fn create_owner(&self, name: &str, password_hash: &str) -> Result<OwnerId, StoreError>;
    /// Finds an owner by name.
    async fn owner_by_name(&self, name: &str) -> Result<Option<OwnerRow>, StoreError>;
    /// Registers a push or pull bot; fails with [`StoreError::NameTaken`] if
    /// a bot of that name exists.
    async fn create_remote_bot(&self, bot: &NewBot) -> Result<BotId, StoreError>;
    /// Every push, pull and hosted bot.
    async fn remote_bots(&self) -> Result<Vec<BotInfo>, StoreError>;
    /// A bot by id.
    async fn bot_info(&self, id: BotId) -> Result<Option<BotInfo>, StoreError>;
    /// The pull bot whose token hashes to `token_hash`.
    async fn bot_by_token(&self, token_hash: &str) -> Result<Option<BotInfo>, StoreError>;
    /// Records a bot's strikes and pause.
    async fn set_bot_health(
        &self,
        id: BotId,
        strikes: i64,
        paused_until: Option<i64>,
        pause_reason: Option<&str>,
    ) -> Result<(), StoreError>;
    /// Switches a bot on or off; switching it on also clears its strikes
    /// and pause (its owner says it is fixed).
    async fn set_bot_enabled(&self, id: BotId, enabled: bool) -> Result<(), StoreError>;
    /// Replaces a pull bot's token hash.
    async fn set_bot_token(&self, id: BotId, token_hash: &str) -> Result<(), StoreError>;

    /// Stores finished games in one transaction, rating each in order, as
    /// `start_game` followed by `finish_game` would (demo data, benchmarks);
    /// games with fewer than two bots are skipped. Returns the ids stored.
    /// Takes the games (SQLite moves them to a thread for blocking work).
    async fn import_games(&self, games: Vec<web::ImportGame>) -> Result<Vec<GameId>, StoreError>;

    /// Tournaments (issue 15): their entries, planned games and results.
    fn tournaments(&self) -> &dyn TournamentStore;
    // Hosted bots (issue 12).
    /// Records a new version of a hosted bot (numbered after its newest)
    /// and its file, in `validating` state.
    async fn add_bot_version(
        &self,
        v: &hosted::NewVersion,
    ) -> Result<hosted::BotVersion, StoreError>;
    /// Sets a version's state, with why it failed and its stderr tail.
    async fn set_version_status(
        &self,
        id: i64,
        status: &str,
        reason: Option<&str>,
        stderr: Option<&str>,
    ) -> Result<(), StoreError>;
    /// A bot's versions, newest first.
    async fn bot_versions(&self, bot: BotId) -> Result<Vec<hosted::BotVersion>, StoreError>;
    /// A bot's newest active version.
    async fn active_version(&self, bot: BotId) -> Result<Option<hosted::BotVersion>, StoreError>;
    /// Records which version of a hosted bot played a game, and its stderr.
    async fn add_hosted_match(
        &self,
        game: GameId,
        bot: BotId,
        version: i64,
        stderr: &str,
    ) -> Result<(), StoreError>;
    /// A hosted bot's most recent games with their stderr, newest first.
    async fn hosted_matches(
        &self,
        bot: BotId,
        limit: i64,
    ) -> Result<Vec<hosted::MatchStderr>, StoreError>;
    /// The hosted bots of a game and the versions that played it.
    async fn game_versions(&self, game: GameId) -> Result<Vec<(BotId, i64)>, StoreError>;
    // People in the loop (issue 16; `people.rs`).
    /// Marks running game `id` as played by a person (`player`) in `seat`,
    /// before it finishes: such a game is stored and listed but rates no bot.
    async fn mark_person_game(
        &self,
        id: GameId,
        seat: usize,
        player: &str,
    ) -> Result<(), StoreError>;
    /// The person's seat in game `id`, if a person played it.
    async fn person_game(&self, id: GameId) -> Result<Option<PersonSeat>, StoreError>;
    /// Lets others challenge `bot` from the website, or not (the default).
    async fn set_bot_challenges(&self, bot: BotId, allow: bool) -> Result<(), StoreError>;
    /// The bots whose owners let others challenge them.
    async fn challengeable_bots(&self) -> Result<Vec<BotId>, StoreError>;
    /// Issue 13 (wc): the ladder's leases between processes ([`leases`]).
    fn leases(&self) -> &dyn LeaseStore;

    /// What several server instances on this database share (issue 13):
    /// `Some` on PostgreSQL; `None` on SQLite, where one process keeps its
    /// live state in memory.
    fn cluster(&self) -> Option<postgres::cluster::Cluster> {
        None
    }
}

/// Opens the store a URL names: `sqlite://FILE` (created if missing), or
/// `postgres://…` / `postgresql://…` (the database must exist; its tables
/// are created or migrated).
pub async fn open(url: &str) -> Result<std::sync::Arc<dyn Store>, StoreError> {
    match Backend::of(url) {
        Some(Backend::Sqlite) => Ok(std::sync::Arc::new(SqliteStore::open(url).await?)),
        Some(Backend::Postgres) => Ok(std::sync::Arc::new(PgStore::open(url).await?)),
        None => Err(StoreError::Url(url.to_string())),
    }
}

/// The database a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite file (`sqlite:`).
    Sqlite,
    /// A PostgreSQL server (`postgres:` or `postgresql:`).
    Postgres,
}

impl Backend {
    /// The backend of `url`, by its scheme (case-insensitive), if supported.
    pub fn of(url: &str) -> Option<Backend> {
        let scheme = url.split_once(':')?.0.to_ascii_lowercase();
        match scheme.as_str() {
            "sqlite" => Some(Backend::Sqlite),
            "postgres" | "postgresql" => Some(Backend::Postgres),
            _ => None,
        }
    }
}

/// Seconds since the epoch, the creation stamp of bots and owners.
pub(crate) fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    secs.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_pick_their_backend() {
        assert_eq!(Backend::of("sqlite://x.db"), Some(Backend::Sqlite));
        assert_eq!(Backend::of("sqlite::memory:"), Some(Backend::Sqlite));
        assert_eq!(Backend::of("postgres://u@h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of("PostgreSQL://u@h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of("mysql://u@h/db"), None);
        assert_eq!(Backend::of("croupier.db"), None);
    }

    #[test]
    fn a_stored_kind_reads_back_and_an_unknown_one_is_an_error() {
        for kind in [
            BotKind::Rest,
            BotKind::House,
            BotKind::Push,
            BotKind::Pull,
            BotKind::Hosted,
        ] {
            assert_eq!(BotKind::try_from(kind.name().to_string()).ok(), Some(kind));
        }
        let err = BotKind::try_from("robot".to_string()).err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some("unknown bot kind \"robot\" in the database")
        );
    }
}
