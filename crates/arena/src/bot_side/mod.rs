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
mod jujitsu;
mod loveletter;
pub mod skullwhist_rest;

use std::io::{BufRead, Write};

use self::error::At as _;

pub use self::croupier::{run_croupier, CroupierBot, Handled};
pub use self::error::BotSideError;
pub use self::gops::run_gops;
pub use self::jujitsu::jujitsu_bid;
pub use self::loveletter::{default_rules, run_loveletter, POSTMAN_NAME};

/// Options for a stdio bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// Seed of the strategy's generator ([`croupier_bots::bot_rng`]).
    pub seed: u64,
    /// Number of players at the table, for dialects that do not announce it
    /// (classic Love Letter); `None` when unknown.
    pub players: Option<usize>,
    /// Cards per round for the `gops` dialect (the quiz plays 13).
    pub goofspiel_cards: u8,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            seed: 0,
            players: None,
            goofspiel_cards: 13,
        }
    }
}

/// Reads the manager's lines one at a time, counting them for error
/// messages.
struct Lines<R> {
    input: R,
    number: usize,
    buf: String,
}

impl<R: BufRead> Lines<R> {
    fn new(input: R) -> Self {
        Lines {
            input,
            number: 0,
            buf: String::new(),
        }
    }

    /// The next line's number (from 1) and text without its line ending, or
    /// `None` at end of input.
    fn next_line(&mut self) -> Result<Option<(usize, &str)>, BotSideError> {
        self.buf.clear();
        let n = self
            .input
            .read_line(&mut self.buf)
            .at(|| format!("reading line {} from the manager", self.number + 1))?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        Ok(Some((self.number, self.buf.trim_end_matches(['\n', '\r']))))
    }
}

/// Writes one answer line and flushes it, so the manager sees it at once.
fn answer(output: &mut impl Write, line: &str) -> Result<(), BotSideError> {
    writeln!(output, "{line}")
        .and_then(|()| output.flush())
        .at(|| format!("writing '{line}' to the manager"))
}

/// A line shortened for an error message.
fn shown(line: &str) -> String {
    let mut s: String = line.chars().take(80).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests;
