//! Why a tournament, or one of its games, cannot go on: logged by the
//! driver, and (for a game) stored as the reason of the aborted game.

use croupier_arena::record::MatchError;
use croupier_rules::{SetupError, UnknownGame};
use croupier_store::{GameId, RecordError, StoreError};

use super::plan::PlanError;
use super::play::EntryError;
use crate::hosted::{HostedError, LinkError};

/// Why a tournament, or one of its games, cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The tournament was deleted while it ran.
    #[error("the tournament is gone")]
    Gone,
    /// The tournament was cancelled while a game waited for its bots.
    #[error("the tournament was cancelled")]
    Cancelled,
    /// The stored game is none of Croupier's.
    #[error(transparent)]
    Game(#[from] UnknownGame),
    /// A round cannot be planned.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A hosted entry, and this server runs no hosted bots.
    #[error("this server runs no hosted bots (croupier serve --sandbox)")]
    NoHosted,
    /// A hosted entry frozen without a version.
    #[error("hosted bot {0} had no active version at the start")]
    NoFrozenVersion(String),
    /// A hosted entry whose frozen version was deleted.
    #[error("hosted bot {0}: its frozen version is gone")]
    VersionGone(String),
    /// A hosted entry's version cannot run here.
    #[error(transparent)]
    Hosted(#[from] HostedError),
    /// A hosted entry cannot be seated.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// An entry cannot be seated.
    #[error(transparent)]
    Entry(#[from] EntryError),
    /// A planned game names a bot that is not entered.
    #[error("a seat names a bot that is not entered")]
    NotEntered,
    /// The server is shutting down (the game slots are closed).
    #[error(transparent)]
    Closed(#[from] tokio::sync::AcquireError),
    /// The game could not be dealt in the store.
    #[error("cannot store a new game: {0}")]
    Deal(StoreError),
    /// The finished record does not fit the game's row.
    #[error("cannot store finished game {id}: {source}")]
    Record {
        /// The game.
        id: GameId,
        /// Why.
        source: RecordError,
    },
    /// The store failed to keep the finished game.
    #[error("cannot store finished game {id}: {source}")]
    Finish {
        /// The game.
        id: GameId,
        /// Why.
        source: StoreError,
    },
    /// The tournament's variant does not read.
    #[error(transparent)]
    Variant(#[from] SetupError),
    /// The runner could not play the game.
    #[error(transparent)]
    Match(#[from] MatchError),
}
