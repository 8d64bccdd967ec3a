//! Why a tournament, or one of its games, cannot go on: logged by the
//! driver, and (for a game) stored as the reason of the aborted game.

use croupier_arena::record::MatchError;
use croupier_rules::{SetupError, UnknownGame};
use croupier_store::{GameId, RecordError, StoreError};

use super::plan::PlanError;
use crate::hosted::{HostedError, LinkError};
use crate::ladder::SeatError;
use croupier_bots::UnknownBot;

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

/// Why a frozen entry cannot be seated.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// Its URL or dialect does not read.
    #[error(transparent)]
    Seat(#[from] SeatError),
    /// A kind of bot that plays through no link (a 2014 REST bot).
    #[error("bot {0} is not reached over a link")]
    NoLink(String),
    /// A hosted entry the caller did not link for this game.
    #[error("hosted bot {0} was not linked for this game")]
    NotLinked(String),
    /// A house entry without one of this server's house strategies.
    #[error("house bot {0} is not one of this server's house bots for the game")]
    NoStrategy(String),
    /// A house entry whose strategy does not exist.
    #[error("house bot {name}: {source}")]
    House {
        /// The entry's name.
        name: String,
        /// Why.
        source: UnknownBot,
    },
}
