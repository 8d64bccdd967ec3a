//! A built-in SkullWhist strategy as a client of a SkullWhist REST server
//! (`croupier bot <strategy> --connect http://HOST:PORT`): it plays through
//! the 2014 SkullSpace API exactly as the event's example bots did.
//!
//! The flow is the example bots': `register` (a taken name is fine),
//! `login` (a failure ends the run), then for each game `new-game` until it
//! succeeds (`retry` means ask again), `bid`, and for each trick `status`
//! until it is this bot's turn, then `play`; the game is over when `status`
//! shows no game, and `old-game` tells the result.
//!
//! What the replies say and the game the bot rebuilds from them are the
//! dialect's bot side ([`croupier_dialects::bot::skullwhist`]); this module
//! holds the I/O: JSON POSTs through the workspace's `reqwest` (one
//! kept-alive connection, connect and reply timeouts, a cap on the reply
//! size) and the polling loop.

mod api;
mod play;

pub use api::{
    parse_url, Api, RestOptions, RestSummary, ServerUrl, CONNECT_TIMEOUT, MAX_BODY, POLL_INTERVAL,
    REPLY_TIMEOUT,
};
pub use play::{play_rest, RETRY_FOR, STALE_FOR};

#[cfg(test)]
mod tests;
