//! What a home is to the relay (`relay`): the process that runs a game,
//! the requests relayed to it ([`Home`], [`PullHome`]) and where their
//! answers go ([`ReplyTo`]).

use croupier_store::postgres::cluster::instance_channel;
use croupier_store::{BotId, GameId};
use futures::future::BoxFuture;

/// Where the answer to a relayed request goes: the asker's channel and the
/// request's number there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyTo {
    channel: String,
    id: u64,
}

impl ReplyTo {
    /// Request `id` of instance `origin`.
    pub(super) fn new(origin: i64, id: u64) -> ReplyTo {
        ReplyTo {
            channel: instance_channel(origin),
            id,
        }
    }

    /// The notification `(channel, payload)` that answers the request with
    /// `reply`.
    pub fn notice(&self, reply: &str) -> (String, String) {
        (self.channel.clone(), format!("r {} {reply}", self.id))
    }
}

/// The games a process runs: what it does with a request relayed to it.
pub trait Home: Send + Sync + 'static {
    /// Handles `line` for seat `seat` of game `game`: the reply text. By
    /// default (a process that runs no REST games) `"gone"`.
    fn handle(&self, _game: GameId, _seat: usize, _line: String) -> BoxFuture<'static, String> {
        Box::pin(async { GONE.to_string() })
    }

    /// Seat `seat`'s `status` in game `game` (issue 50: every instance's
    /// answer is the home's): its text, [`OVER`] once the game is over and
    /// stored, or `"gone"` if the game does not run here (the default).
    fn status(&self, _game: GameId, _seat: usize) -> BoxFuture<'static, String> {
        Box::pin(async { GONE.to_string() })
    }

    /// Where seat `seat` of game `game` stands, for a `new-game` asked
    /// elsewhere (issue 50): [`SEAT_OPEN`] (not bid yet: the game is the
    /// answer), [`SEAT_BID`], [`OVER`] once over and stored, or `"gone"`
    /// (the default).
    fn seat(&self, _game: GameId, _seat: usize) -> BoxFuture<'static, String> {
        Box::pin(async { GONE.to_string() })
    }

    /// wm (issue 13): a notification of another kind (the REST games'
    /// deals, views and ends, see `hub::cluster`); whether it was taken.
    fn notified(&self, _kind: &str, _rest: &str) -> bool {
        false
    }

    /// The listener lost its connection: the notifications sent meanwhile
    /// are lost, so what was learnt from them may be stale.
    fn lost(&self) {}
}

/// A pull bot's answer relayed to the process playing its match.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PullAnswer {
    /// The bot.
    pub bot: BotId,
    /// The match's tag.
    pub tag: String,
    /// The decision answered.
    pub decision: u64,
    /// The action.
    pub action: String,
}

/// What a process does with the pull bots' answers relayed to it.
pub trait PullHome: Send + Sync + 'static {
    /// Delivers an answer to a match this process plays; the reply text.
    fn answer(&self, bot: BotId, tag: &str, decision: u64, action: &str) -> String;
}

/// The reply of a home that does not run the game.
pub const GONE: &str = "gone";

/// A home's reply to a relayed `status` whose game is over (and stored).
pub const OVER: &str = "over";

/// A read relayed to a game's home (issue 50), safe to ask again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HomeRead {
    /// A seat's `status` ([`Home::status`]; notification kind `t`).
    Status,
    /// Where a seat stands for `new-game` ([`Home::seat`]; kind `n`).
    Seat,
}

impl HomeRead {
    /// Its notification kind.
    pub(super) fn kind(self) -> &'static str {
        match self {
            HomeRead::Status => "t",
            HomeRead::Seat => "n",
        }
    }

    /// The read of notification kind `kind`, if it is one.
    pub(super) fn of_kind(kind: &str) -> Option<HomeRead> {
        [HomeRead::Status, HomeRead::Seat]
            .into_iter()
            .find(|r| r.kind() == kind)
    }
}

/// [`Home::seat`]: the seat has not bid.
pub const SEAT_OPEN: &str = "open";

/// [`Home::seat`]: the seat has bid.
pub const SEAT_BID: &str = "bid";

/// The home of a process that runs no REST games (a worker).
#[derive(Debug)]
pub struct NoGames;

impl Home for NoGames {}
