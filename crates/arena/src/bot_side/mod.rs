//! The bot side of each dialect: runs a built-in strategy as a bot that
//! speaks a dialect over stdin/stdout (`croupier bot`).
//!
//! Each `run_*` function reads the manager's lines from `input`, keeps what
//! the strategy may see up to date, asks the strategy when the bot must act,
//! and writes (and flushes) one answer line to `output`. They are synchronous
//! and generic over the reader and writer, so a test can drive them with
//! in-memory buffers and a command-line front end with locked stdin/stdout.
//!
//! | dialect | function | ends |
//! |---|---|---|
//! | `croupier` | [`run_croupier`] | at `end` or end of input |
//! | `gops` | [`run_gops`] | after the last turn or at end of input |
//! | `loveletter`, `loveletter-postman` | [`run_loveletter`] | at end of input (the manager stops the bot) |

mod croupier;
mod error;
mod gops;
mod io;
mod jujitsu;
mod loveletter;
pub mod skullwhist_rest;

pub use self::croupier::{run_croupier, CroupierBot, Handled};
pub use self::error::BotSideError;
pub use self::gops::run_gops;
pub use self::io::ClientOptions;
pub use self::jujitsu::jujitsu_bid;
pub use self::loveletter::{default_rules, run_loveletter, POSTMAN_NAME};

#[cfg(test)]
mod tests;
