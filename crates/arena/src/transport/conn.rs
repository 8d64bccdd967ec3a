//! What a live seat talks through: a connection that carries a dialect's
//! lines to a bot and brings its answers back.

use futures::future::BoxFuture;
use tokio::time::Instant;

use super::error::TransportError;

/// An open connection to one bot for one match.
pub trait Conn: Send {
    /// Delivers lines to the bot, giving up at `deadline`.
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>>;
    /// The bot's next answer, waiting until `deadline`.
    fn recv(&mut self, deadline: Instant) -> BoxFuture<'_, Result<String, TransportError>>;
    /// Whether the connection survives a failed decision (a late or broken
    /// answer does not desynchronise later ones). Pipes do not: a late line
    /// would be read as the next answer.
    fn survives_faults(&self) -> bool {
        false
    }
    /// Whether the bot may send at any time, not only when asked for a
    /// decision. In a match whose answers apply on arrival
    /// ([`crate::live::play_on_arrival`]) the runner then
    /// listens to it throughout: a message out of turn is decoded against
    /// the game as it stands (and refused, in a dialect that refuses), and
    /// [`TransportError::Abandoned`] is ruled at once. Such a connection's
    /// `recv` must be cancel-safe (a message is never lost when the future
    /// is dropped unfinished).
    fn speaks_out_of_turn(&self) -> bool {
        false
    }
    /// Whether `send` returns only once the bot has answered (an HTTP
    /// bot's answer is the reply to the request that asked it): its thinking
    /// time is then the time `send` took, not the time until `recv` is
    /// called, which may be later when other seats are asked alongside.
    fn answers_in_reply(&self) -> bool {
        false
    }
    /// The CPU time the bot's processes used so far (a program in a
    /// cgroup of its own), to charge each decision its CPU beside its wall
    /// time; `None` where it cannot be known.
    fn cpu_time(&self) -> Option<std::time::Duration> {
        None
    }
    /// What the bot said on the side (a program's stderr), for fault details.
    fn diagnostics(&self) -> String {
        String::new()
    }
    /// Closes the connection (for a program: SIGTERM, then SIGKILL).
    fn close(self: Box<Self>) -> BoxFuture<'static, ()>;
}

/// Opens connections to a bot that someone else reaches (the server's pull
/// mailboxes); `match_tag` names the match and seat.
pub trait Connector: Send + Sync {
    /// Opens the connection for one match.
    fn connect(&self, match_tag: &str) -> Result<Box<dyn Conn>, TransportError>;

    /// Opens the connection for one round, for a dialect that starts its
    /// bot anew each round, or for a match when
    /// [`keeps_sandbox`](Self::keeps_sandbox) says so: a connector that
    /// starts programs may start them in a sandbox it holds
    /// ([`BotProcess::spawn_held`](super::process::BotProcess::spawn_held)).
    /// By default, [`connect`](Self::connect).
    fn connect_held<'a>(
        &'a self,
        match_tag: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conn>, TransportError>> {
        Box::pin(std::future::ready(self.connect(match_tag)))
    }

    /// Whether each match's connection is opened with
    /// [`connect_held`](Self::connect_held) too, not only each round's: a
    /// connector that keeps its bot's sandbox from one match to the next
    /// (hosted bots on the server). No by default.
    fn keeps_sandbox(&self) -> bool {
        false
    }
}
