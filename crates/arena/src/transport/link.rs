//! How a live seat reaches its bot: a program, an HTTP bot server, or a
//! connection another component makes; [`Link::open`] opens one per match.

use std::sync::Arc;

use super::conn::{Conn, Connector};
use super::error::TransportError;
use super::http::{HttpClient, HttpEndpoint};
use super::process::{BotProcess, Held, ProcessLimits};

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

    /// [`Link::open`], for a program through
    /// [`BotProcess::spawn_ready`]: in a spare sandbox set up ahead of it,
    /// where its limits ask for one and one is ready.
    pub async fn open_ready(
        &self,
        limits: &ProcessLimits,
        match_tag: &str,
    ) -> Result<Box<dyn Conn>, TransportError> {
        match self {
            Link::Process(argv) => Ok(Box::new(BotProcess::spawn_ready(argv, limits).await?)),
            _ => self.open(limits, match_tag),
        }
    }

    /// Sets up, in the background, the sandbox a program is held in for a
    /// match (started anew each round, or once but kept for the series'
    /// next match; [`BotProcess::hold`]). `None` for other links and
    /// unsandboxed programs.
    pub fn hold(&self, limits: &ProcessLimits) -> Option<Held> {
        match self {
            Link::Process(argv) => BotProcess::hold(argv, limits),
            _ => None,
        }
    }

    /// [`Link::open`] in the sandbox `held` keeps for a sandboxed program
    /// ([`BotProcess::spawn_held`]): each round's start, for a dialect that
    /// starts its program anew each round, or the match's, for a program
    /// whose sandbox is kept from match to match (a series). A connection
    /// another component makes is opened for the round
    /// ([`Connector::connect_held`]: hosted bots hold a sandbox there).
    pub async fn open_held(
        &self,
        held: &mut Option<Held>,
        limits: &ProcessLimits,
        match_tag: &str,
    ) -> Result<Box<dyn Conn>, TransportError> {
        match self {
            Link::Process(argv) => Ok(Box::new(BotProcess::spawn_held(held, argv, limits).await?)),
            Link::Custom(c) => c.connect_held(match_tag).await,
            Link::Http(..) => self.open(limits, match_tag),
        }
    }

    /// Whether each match's connection goes through
    /// [`open_held`](Self::open_held) too: a connection another component
    /// makes in a sandbox it keeps from match to match
    /// ([`Connector::keeps_sandbox`]).
    pub fn keeps_sandbox(&self) -> bool {
        matches!(self, Link::Custom(c) if c.keeps_sandbox())
    }

    /// Whether this is an HTTP bot.
    pub fn is_http(&self) -> bool {
        matches!(self, Link::Http(..))
    }
}
