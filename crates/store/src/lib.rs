//! Durable storage for the server: bots and game records.
//!
//! Handlers talk to the [`Store`] trait only; [`SqliteStore`] is the default
//! (an embedded file, WAL journal), and a PostgreSQL store can be added as
//! another implementation without touching them.

mod sqlite;

use async_trait::async_trait;
use serde::Serialize;

pub use sqlite::SqliteStore;

/// A bot's id.
pub type BotId = i64;
/// A game's id.
pub type GameId = i64;

/// Why storage failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A bot of that name exists.
    #[error("the name is taken")]
    NameTaken,
    /// The database URL is not supported.
    #[error("unsupported database URL '{0}' (use sqlite://FILE)")]
    Url(String),
    /// The database failed.
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    /// Migrations failed.
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// A registered bot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// Scores by seat.
    pub scores: [Option<i64>; 2],
    /// The bot that forfeited, if any.
    pub forfeited_by: Option<BotId>,
    /// The complete record (JSON).
    pub record: String,
}

/// Storage behind the server.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Registers a bot; fails with [`StoreError::NameTaken`] if the name exists.
    async fn create_bot(
        &self,
        name: &str,
        password_hash: &str,
        house: bool,
    ) -> Result<BotId, StoreError>;
    /// Finds a bot by name.
    async fn bot_by_name(&self, name: &str) -> Result<Option<BotRow>, StoreError>;
    /// Records a game that has just been dealt; returns its id.
    async fn start_game(
        &self,
        game: &str,
        bots: [BotId; 2],
        seed: i64,
        started: &str,
    ) -> Result<GameId, StoreError>;
    /// Stores a finished game and its record, durably, before returning.
    async fn finish_game(&self, id: GameId, end: &GameEnd) -> Result<(), StoreError>;
    /// Marks a running game aborted.
    async fn abort_game(&self, id: GameId, reason: &str, at: &str) -> Result<(), StoreError>;
    /// Marks every running game aborted (after a restart); returns how many.
    async fn abort_running(&self, reason: &str, at: &str) -> Result<u64, StoreError>;
    /// A game by id.
    async fn game(&self, id: GameId) -> Result<Option<GameRow>, StoreError>;
    /// Number of games by status.
    async fn count_games(&self, status: &str) -> Result<i64, StoreError>;
}

/// Opens the store a URL names: `sqlite://FILE` (created if missing).
pub async fn open(url: &str) -> Result<std::sync::Arc<dyn Store>, StoreError> {
    if url.starts_with("sqlite:") {
        Ok(std::sync::Arc::new(SqliteStore::open(url).await?))
    } else {
        Err(StoreError::Url(url.to_string()))
    }
}
