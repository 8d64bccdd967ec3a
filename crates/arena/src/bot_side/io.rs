//! What every dialect's bot side shares: its options, the manager's lines
//! as they are read, and the answer written back.

use std::io::{BufRead, Write};

use super::error::{At as _, BotSideError};

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
pub(super) struct Lines<R> {
    input: R,
    number: usize,
    buf: String,
}

impl<R: BufRead> Lines<R> {
    pub(super) fn new(input: R) -> Self {
        Lines {
            input,
            number: 0,
            buf: String::new(),
        }
    }

    /// The next line's number (from 1) and text without its line ending, or
    /// `None` at end of input.
    pub(super) fn next_line(&mut self) -> Result<Option<(usize, &str)>, BotSideError> {
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
pub(super) fn answer(output: &mut impl Write, line: &str) -> Result<(), BotSideError> {
    writeln!(output, "{line}")
        .and_then(|()| output.flush())
        .at(|| format!("writing '{line}' to the manager"))
}

/// A line shortened for an error message.
pub(super) fn shown(line: &str) -> String {
    let mut s: String = line.chars().take(80).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}
