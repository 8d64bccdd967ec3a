//! What a held sandbox's holder ([`super::holder`]) is told and says:
//! the lines of a round's order, the holder's answers as they come
//! ([`Progress`], read by [`listen`]), and why an order that is no round
//! got no answer.

use std::collections::BTreeMap;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::sync::watch;

use crate::transport::error::TransportError;

/// How many rounds back an exit status is kept (a round older than that
/// counts as ended).
pub(super) const KEPT: u64 = 64;

/// The lines that tell the holder to start round `n` with `argv` (`last`:
/// the last round's); `None` if a word holds a line break (it cannot be
/// said in lines).
pub(super) fn order(n: u64, argv: &[String], last: Option<&[String]>) -> Option<String> {
    if last == Some(argv) {
        return Some(format!("{n} =\n"));
    }
    let mut said = format!("{n} {}\n", argv.len());
    for word in argv {
        if word.contains(['\n', '\r']) {
            return None;
        }
        said.push_str(word);
        said.push('\n');
    }
    Some(said)
}

/// What the holder has said so far.
#[derive(Clone, Debug, Default)]
pub(super) struct Progress {
    /// The last round started, with its program's pid inside the sandbox.
    pub(super) started: Option<(u64, i32)>,
    /// The rounds ended, with their exit status (128 + n: signal n), of
    /// the last [`KEPT`] rounds started.
    pub(super) exited: BTreeMap<u64, i32>,
    /// The last reset done, and whether the sandbox came out clear.
    pub(super) reset: Option<(u64, bool)>,
    /// The last change of working folder, and whether it was made.
    pub(super) entered: Option<(u64, bool)>,
    /// The holder is gone (the sandbox ended).
    pub(super) gone: bool,
}

impl Progress {
    /// How round `n` ended, once it has: its status, or `None` if that is
    /// no longer known.
    pub(super) fn ended(&self, n: u64) -> Option<Option<i32>> {
        let last = self.started.map_or(0, |(m, _)| m);
        match self.exited.get(&n) {
            Some(status) => Some(Some(*status)),
            None if n + KEPT <= last => Some(None),
            None => None,
        }
    }
}

/// Reads what the holder says, in order; anything else ends it.
/// Its lines are short; a longer one ends the listener, read no further
/// (no round's program gets the holder's stdout, nor may it open the
/// Perl holder's through `/proc`; a bound all the same).
pub(super) async fn listen(out: impl AsyncRead + Unpin, tx: watch::Sender<Progress>) {
    const LONGEST: u64 = 64;
    let mut out = BufReader::new(out);
    let mut line = String::new();
    loop {
        line.clear();
        match (&mut out).take(LONGEST).read_line(&mut line).await {
            Ok(n) if n > 0 && line.ends_with('\n') => line.pop(),
            _ => break,
        };
        let mut words = line.split(' ');
        let (Some(n), Some(what), Some(value), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            break;
        };
        let (Ok(n), Ok(value)) = (n.parse::<u64>(), value.parse::<i32>()) else {
            break;
        };
        match what {
            "started" => tx.send_modify(|p| p.started = Some((n, value))),
            "reset" => tx.send_modify(|p| p.reset = Some((n, value == 0))),
            "cd" => tx.send_modify(|p| p.entered = Some((n, value == 0))),
            "exit" => tx.send_modify(|p| {
                p.exited.insert(n, value);
                let last = p.started.map_or(0, |(m, _)| m);
                p.exited.retain(|m, _| m + KEPT > last);
            }),
            _ => break,
        }
    }
    tx.send_modify(|p| p.gone = true);
}

/// Why an order that is no round got no answer (`Held::ask`).
#[derive(Debug)]
pub(super) enum Asked {
    /// The holder did not read it in time.
    Deaf,
    /// The holder ended (with why, if known).
    Ended(String),
    /// What the holder says is no longer read.
    Unwatched,
    /// It did not answer in time.
    Late,
}

impl From<Asked> for TransportError {
    fn from(a: Asked) -> TransportError {
        TransportError::Io(match a {
            Asked::Deaf => "the held sandbox does not read".into(),
            Asked::Ended(why) => format!("the held sandbox ended{why}"),
            Asked::Unwatched => "the held sandbox is no longer watched".into(),
            Asked::Late => "the held sandbox did not answer in time".into(),
        })
    }
}

/// How long a holder may take to answer an order that is no round.
#[derive(Clone, Copy, Debug)]
pub(super) enum Patience {
    /// Its sandbox may still be being set up (`SETUP`).
    Setup,
    /// It is known to be ready (`ROUND`).
    Ready,
}
