//! How a live match is run: its deadlines and limits ([`LiveConfig`]), and
//! where built-in strategies think ([`Think`]).

use std::time::Duration;

use crate::transport::process::ProcessLimits;

/// How a live match is run.
#[derive(Clone, Debug)]
pub struct LiveConfig {
    /// Time a bot has for each decision.
    pub move_time: Duration,
    /// Thinking time each remote bot has for the whole match (`None` =
    /// unlimited). Once it is spent, the bot is no longer asked: every
    /// decision left gets its game's fault ruling (a random card in
    /// Goofspiel). Built-in strategies are charged their (tiny) time, so that
    /// opponents see it, but never cut off.
    pub budget: Option<Duration>,
    /// Limits of bot processes.
    pub limits: ProcessLimits,
}

impl Default for LiveConfig {
    fn default() -> Self {
        LiveConfig {
            move_time: Duration::from_secs(10),
            budget: None,
            limits: ProcessLimits::default(),
        }
    }
}

/// Where built-in strategies think.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Think {
    /// On Tokio's blocking pool, so that a searching strategy holds up no
    /// async worker ([`crate::think::act_blocking`]).
    Blocking,
    /// On the calling thread: a match of built-in strategies only
    /// ([`crate::runner::play_match`]), which nothing else shares and in
    /// which nothing waits, so it needs no runtime.
    Inline,
}
