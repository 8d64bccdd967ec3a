//! What a live seat talks through: a connection that carries a dialect's
//! lines to a bot and brings its answers back. Programs (pipes), HTTP bot
//! servers (one POST per message) and the server's pull mailboxes are all
//! connections.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::time::Instant;

use crate::http::{HttpClient, HttpEndpoint};
use crate::process::{BotProcess, ProcessLimits, TransportError};

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
}

/// How a live seat reaches its bot.
#[derive(Clone)]
pub enum Link {
    /// A program, started for the match (or for each round).
    Process(Vec<String>),
    /// An HTTP bot server that Croupier POSTs to.
    Http(Arc<HttpClient>, HttpEndpoint),
    /// A connection made by another component.
    Custom(Arc<dyn Connector>),
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Link::Process(argv) => f.debug_tuple("Process").field(argv).finish(),
            Link::Http(_, e) => f.debug_tuple("Http").field(&e.url).finish(),
            Link::Custom(_) => f.write_str("Custom"),
        }
    }
}

impl Link {
    /// Opens a connection for one match.
    pub fn open(
        &self,
        limits: &ProcessLimits,
        match_tag: &str,
    ) -> Result<Box<dyn Conn>, TransportError> {
        match self {
            Link::Process(argv) => Ok(Box::new(BotProcess::spawn(argv, limits)?)),
            Link::Http(client, endpoint) => Ok(Box::new(client.conn(endpoint, match_tag))),
            Link::Custom(c) => c.connect(match_tag),
        }
    }

    /// Whether this is an HTTP bot.
    pub fn is_http(&self) -> bool {
        matches!(self, Link::Http(..))
    }
}

impl Conn for BotProcess {
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(BotProcess::send(self, lines, deadline))
    }

    fn recv(&mut self, deadline: Instant) -> BoxFuture<'_, Result<String, TransportError>> {
        Box::pin(BotProcess::recv(self, deadline))
    }

    fn diagnostics(&self) -> String {
        self.stderr_tail()
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(self.terminate())
    }
}
