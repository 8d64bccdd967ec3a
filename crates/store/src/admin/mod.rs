//! Admin (issue 49 item 5): bans of bots and owners, a bot's rating reset,
//! seasons of the ladder's ratings, and the audit log of every admin
//! action. Each action and its audit row are written in one transaction,
//! so the log never misses an action nor records one that did not happen.
//!
//! Seasons are numbered per game, from 1. The current season's standings
//! are the live tables (`bot_stats`, `pair_stats`), so a finished game is
//! rated exactly as before; starting a season copies them into
//! `season_stats` / `season_pairs` under the old number and empties them
//! for that game. Games, records and rating histories are never deleted.
//!
//! The SQL is written once (`queries`) and instantiated per backend, as
//! the tournaments' is.

use async_trait::async_trait;
use serde::Serialize;

use crate::web::{BotStats, PairStats};
use crate::{BotId, StoreError};

#[macro_use]
mod queries;
pub(crate) mod postgres;
pub(crate) mod sqlite;

/// What an admin bans or unbans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A bot, by name.
    Bot(&'a str),
    /// An owner, by name (and so every bot of theirs).
    Owner(&'a str),
}

impl Target<'_> {
    /// `bot` or `owner`.
    pub fn kind(&self) -> &'static str {
        match self {
            Target::Bot(_) => "bot",
            Target::Owner(_) => "owner",
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        match self {
            Target::Bot(n) | Target::Owner(n) => n,
        }
    }
}

/// Who acts, when and why (written to the audit log with the action).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Act<'a> {
    /// The admin's owner name.
    pub actor: &'a str,
    /// When (RFC 3339).
    pub at: &'a str,
    /// Why (required for a ban, optional otherwise).
    pub reason: Option<&'a str>,
}

/// What a ban or an unban did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BanChange {
    /// Done (and logged).
    Done,
    /// There is no such bot or owner (nothing changed).
    NotFound,
    /// It was already banned (ban) or not banned (unban); nothing changed.
    /// For a ban, the reason it has.
    Unchanged(Option<String>),
}

/// A ban in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct BanRow {
    /// `bot` or `owner`.
    pub kind: String,
    /// The bot's or owner's name.
    pub name: String,
    /// Why.
    pub reason: String,
    /// The admin who banned it.
    pub banned_by: String,
    /// When (RFC 3339).
    pub banned_at: String,
}

/// Why a bot may not play: its own ban or its owner's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BotBan {
    /// Why.
    pub reason: String,
    /// The admin who banned it.
    pub banned_by: String,
    /// When (RFC 3339).
    pub banned_at: String,
    /// The owner's name when the ban is its owner's.
    pub owner: Option<String>,
}

/// A season of a game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct SeasonRow {
    /// Game name.
    pub game: String,
    /// Its number, from 1.
    pub season: i64,
    /// When an admin started it (`None`: the first season, from the start).
    pub started_at: Option<String>,
    /// When it ended (`None`: the current season).
    pub ended_at: Option<String>,
}

/// One admin action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct AuditRow {
    /// Id, increasing.
    pub id: i64,
    /// When (RFC 3339).
    pub at: String,
    /// The admin's owner name.
    pub actor: String,
    /// `ban-bot`, `unban-bot`, `ban-owner`, `unban-owner`, `reset-rating`
    /// or `new-season`.
    pub action: String,
    /// What it acted on (a bot, an owner, a game).
    pub target: String,
    /// Why, if given.
    pub reason: Option<String>,
    /// What it changed, in words.
    pub details: Option<String>,
}

/// Admin storage (reached through [`crate::Store::admin`]).
#[async_trait]
pub trait AdminStore: Send + Sync {
    /// Bans `target` (`act.reason` is the reason shown); logged.
    async fn ban(&self, target: Target<'_>, act: &Act<'_>) -> Result<BanChange, StoreError>;
    /// Lifts `target`'s ban; logged.
    async fn unban(&self, target: Target<'_>, act: &Act<'_>) -> Result<BanChange, StoreError>;
    /// The bans in force, bots then owners, by name.
    async fn bans(&self) -> Result<Vec<BanRow>, StoreError>;
    /// Every banned bot, and every bot of a banned owner.
    async fn banned_bots(&self) -> Result<Vec<BotId>, StoreError>;
    /// Why `bot` may not play, if it may not.
    async fn bot_ban(&self, bot: BotId) -> Result<Option<BotBan>, StoreError>;
    /// Whether an owner is banned (the reason).
    async fn owner_ban(&self, owner: i64) -> Result<Option<String>, StoreError>;
    /// Sets bot `name`'s rating back to the start in `game` (every game it
    /// is rated in when `None`), keeping its counts; logged. `None`: no such
    /// bot; otherwise the games reset (empty: it had no rating there, and
    /// nothing was logged).
    async fn reset_rating(
        &self,
        name: &str,
        game: Option<&str>,
        act: &Act<'_>,
    ) -> Result<Option<Vec<String>>, StoreError>;
    /// Ends the current season of each of `games` and starts the next
    /// (one transaction, one audit row per game); returns the new seasons.
    async fn new_season(&self, games: &[&str], act: &Act<'_>)
        -> Result<Vec<SeasonRow>, StoreError>;
    /// Every season of `game`, the current one included (season 1 appears
    /// even if no admin ever started a season), oldest first.
    async fn seasons(&self, game: &str) -> Result<Vec<SeasonRow>, StoreError>;
    /// The current season's number of `game`.
    async fn current_season(&self, game: &str) -> Result<i64, StoreError>;
    /// A past season's leaderboard, best μ − 3σ first.
    async fn season_leaderboard(
        &self,
        game: &str,
        season: i64,
    ) -> Result<Vec<BotStats>, StoreError>;
    /// A past season's head-to-head counts.
    async fn season_pairs(&self, game: &str, season: i64) -> Result<Vec<PairStats>, StoreError>;
    /// The audit log, newest first: at most `limit` rows with ids below
    /// `before` (all when `None`).
    async fn audit(&self, before: Option<i64>, limit: i64) -> Result<Vec<AuditRow>, StoreError>;
}
