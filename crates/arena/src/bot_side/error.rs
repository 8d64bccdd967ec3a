//! Why a bot-side loop stopped: one error type for every dialect's bot side.

use croupier_dialects::bot::jujitsu::DocumentError;
use croupier_dialects::bot::skullwhist::ReplyError;
use croupier_rules::SetupError;

/// Why the bot side of a dialect cannot go on. Printed with its causes
/// ([`BotSideError::report`], or `{:#}` through `anyhow`), it reads as
/// "where: what: why".
#[derive(Debug, thiserror::Error)]
pub enum BotSideError {
    /// What the manager (or the server) said cannot be followed, or the
    /// strategy's answer cannot be sent.
    #[error("{0}")]
    Protocol(String),
    /// The server cannot be reached.
    #[error("{0}")]
    Unreachable(String),
    /// Reading from or writing to the manager failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A number that does not read.
    #[error(transparent)]
    Number(#[from] std::num::ParseIntError),
    /// A message that is not JSON, or not the JSON the dialect expects.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A variant the dialect cannot play.
    #[error(transparent)]
    Variant(#[from] SetupError),
    /// A Psychological Jujitsu document a bot cannot decide on.
    #[error(transparent)]
    Document(#[from] DocumentError),
    /// A REST reply that does not read, or a server whose account of a game
    /// disagrees with the rules.
    #[error(transparent)]
    Reply(#[from] ReplyError),
    /// An HTTP request to a REST server failed.
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    /// Where a failure happened: a manager's line, a request, a game.
    #[error("{what}")]
    At {
        /// The place.
        what: String,
        /// The failure.
        #[source]
        source: Box<BotSideError>,
    },
}

impl BotSideError {
    /// A message the bot cannot follow.
    pub(crate) fn protocol(msg: impl Into<String>) -> Self {
        BotSideError::Protocol(msg.into())
    }

    /// The error and its causes, as "where: what: why" (what `anyhow`'s
    /// `{:#}` prints).
    pub fn report(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        text
    }

    /// Whether the manager closed the bot's input (a broken pipe): it
    /// stopped the bot.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            BotSideError::Io(e) => e.kind() == std::io::ErrorKind::BrokenPipe,
            BotSideError::At { source, .. } => source.is_broken_pipe(),
            _ => false,
        }
    }
}

/// Places a failure: `result.at(|| "line 3")`.
pub(crate) trait At<T> {
    /// The error, if any, wrapped with where it happened.
    fn at<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T, BotSideError>;
}

impl<T, E: Into<BotSideError>> At<T> for Result<T, E> {
    fn at<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T, BotSideError> {
        self.map_err(|e| BotSideError::At {
            what: what().into(),
            source: Box::new(e.into()),
        })
    }
}
