//! Hosted bots (issue 12): the versions of a bot program an owner uploaded,
//! the files behind them (by content hash; the bytes live outside the
//! database), and which version played each ladder game with the tail of
//! its stderr. The queries, the same on both backends, are in
//! `sql_store`.

use serde::Serialize;

use crate::{BotId, GameId};

/// A version waiting for its validation match.
pub const VALIDATING: &str = "validating";
/// A version that passed its validation match.
pub const ACTIVE: &str = "active";
/// A version that failed its validation match.
pub const FAILED: &str = "failed";

/// A new version of a hosted bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVersion {
    /// The bot.
    pub bot: BotId,
    /// SHA-256 (hex) of the uploaded bytes.
    pub file_hash: String,
    /// Size of the upload in bytes.
    pub file_size: i64,
    /// The upload's file name (`bot.py`, `bot.tar.gz`).
    pub file_name: String,
    /// The runtime that runs it (`native`, `python3`, `node`, `ruby`, `java`).
    pub runtime: String,
    /// The file it starts, relative to the bot's folder.
    pub entry: String,
    /// The dialect it speaks.
    pub dialect: String,
}

/// A version of a hosted bot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct BotVersion {
    /// Row id.
    #[serde(skip)]
    pub id: i64,
    /// The bot.
    #[serde(skip)]
    pub bot: BotId,
    /// Version number (1, 2, ...).
    pub version: i64,
    /// SHA-256 (hex) of the uploaded bytes.
    pub file_hash: String,
    /// The upload's file name.
    pub file_name: String,
    /// Its runtime.
    pub runtime: String,
    /// The file it starts.
    pub entry: String,
    /// Its dialect.
    pub dialect: String,
    /// `validating`, `active` or `failed`.
    pub status: String,
    /// Why validation failed.
    pub reason: Option<String>,
    /// The tail of its stderr in the validation match.
    #[serde(skip)]
    pub stderr: Option<String>,
    /// Upload time (unix seconds, as text).
    pub created_at: String,
}

/// What a hosted bot wrote to stderr in one ladder game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct MatchStderr {
    /// The game.
    pub game_id: GameId,
    /// The bot.
    #[serde(skip)]
    pub bot: BotId,
    /// The version that played.
    pub version: i64,
    /// The tail of its stderr (bounded by the server).
    pub stderr: String,
}
