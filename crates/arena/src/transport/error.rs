//! What can go wrong on a connection to a bot, whatever carries it.

/// What went wrong talking to a bot (a program, an HTTP bot, a mailbox).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// No answer before the deadline.
    #[error("no answer within the time limit")]
    Timeout,
    /// The bot closed its output or exited.
    #[error("the bot closed its output{0}")]
    Closed(String),
    /// The bot wrote a line longer than the limit.
    #[error("the bot wrote a line longer than {0} bytes")]
    LineTooLong(usize),
    /// The bot could not be started or written to.
    #[error("{0}")]
    Io(String),
    /// An HTTP bot could not be reached, or dropped the connection.
    #[error("{0}")]
    Disconnected(String),
    /// An HTTP bot answered with an error status.
    #[error("the bot answered HTTP {0}")]
    Status(String),
    /// The answer is not text.
    #[error("{0}")]
    Garbled(String),
    /// An HTTP reply body over the limit.
    #[error("the bot's reply is larger than {0} bytes")]
    TooLarge(usize),
    /// The bot left the match for good, at a moment of its choosing (not
    /// only when asked): e.g. a 2014 REST bot that logged in again. The
    /// runner rules it at once with this fault `kind`.
    #[error("{detail}")]
    Abandoned {
        /// The fault kind recorded.
        kind: &'static str,
        /// What happened.
        detail: String,
    },
}

impl TransportError {
    /// The fault kind recorded for this error.
    pub fn fault_kind(&self) -> &'static str {
        match self {
            TransportError::Timeout => "timeout",
            TransportError::Closed(_) => "crash",
            TransportError::LineTooLong(_) => "malformed",
            TransportError::Io(_) => "crash",
            TransportError::Disconnected(_) => "disconnect",
            TransportError::Status(_) => "crash",
            TransportError::Garbled(_) | TransportError::TooLarge(_) => "malformed",
            TransportError::Abandoned { kind, .. } => kind,
        }
    }
}
