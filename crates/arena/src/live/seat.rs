//! The seats of a live match: who plays each ([`Driver`]), and for a remote
//! bot its link, its dialect and its connection while the match runs.

use croupier_bots::Strategy;
use croupier_dialects::Dialect;
use croupier_rules::{Fault, Game, SeatInfo};

use crate::transport::process::{Held, ProcessLimits};
use crate::transport::{Conn, Link};

/// A seat of a live match.
pub struct LiveSeat<G: Game> {
    /// Name and version for the record.
    pub info: SeatInfo,
    /// Who plays it.
    pub driver: Driver<G>,
}

impl<G: Game> std::fmt::Debug for LiveSeat<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSeat")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Who plays a seat.
pub enum Driver<G: Game> {
    /// A strategy in this process.
    Builtin(Box<dyn Strategy<G>>),
    /// A remote bot (a program, an HTTP bot, a pull client) speaking a
    /// dialect.
    Program(Box<ProgramSeat<G>>),
}

/// A remote bot and its dialect.
pub struct ProgramSeat<G: Game> {
    pub(super) dialect: Box<dyn Dialect<G>>,
    pub(super) process: Option<Box<dyn Conn>>,
    /// Why the bot can no longer be asked (it crashed, or missed a deadline
    /// in a dialect that cannot tell a late answer from the next one).
    pub(super) broken: Option<Fault>,
    /// What the bot had written on stderr when its connection was closed
    /// for a fault (kept only while [`crate::explain`] watches the match).
    pub(super) last_stderr: Option<String>,
    /// The sandbox its program runs in, held for the match: for a dialect
    /// that starts the program anew each round, and for any program whose
    /// sandbox is kept from match to match ([`keep`](Self::keep)); killed
    /// at the match's end, unless kept (then with the seat).
    pub(super) held: Option<Held>,
    /// Whether `held` outlives the match, for the caller to clear and use
    /// again ([`LiveSeat::keep_held`]).
    pub(super) keep: bool,
    /// How the bot is reached. Last, so that it is dropped after the
    /// program (`process`): a connector that keeps its sandbox clears it
    /// when dropped, once the program is stopped.
    pub(super) link: Link,
}

impl<G: Game> ProgramSeat<G> {
    /// What the bot has written on stderr so far: from its running
    /// connection, or the one closed for its last fault.
    pub(super) fn stderr(&self) -> Option<String> {
        match &self.process {
            Some(c) => Some(c.diagnostics()),
            None => self.last_stderr.clone(),
        }
    }

    /// A program (`argv[0]` and its arguments) speaking `dialect`.
    pub fn new(argv: Vec<String>, dialect: Box<dyn Dialect<G>>) -> Self {
        Self::with_link(Link::Process(argv), dialect)
    }

    /// A bot reached through `link`, speaking `dialect`.
    pub fn with_link(link: Link, dialect: Box<dyn Dialect<G>>) -> Self {
        ProgramSeat {
            link,
            dialect,
            process: None,
            broken: None,
            last_stderr: None,
            held: None,
            keep: false,
        }
    }
}

impl<G: Game> LiveSeat<G> {
    /// A seat played by a built-in strategy.
    pub fn builtin(info: SeatInfo, strategy: Box<dyn Strategy<G>>) -> Self {
        LiveSeat {
            info,
            driver: Driver::Builtin(strategy),
        }
    }

    /// A seat played by a program.
    pub fn program(info: SeatInfo, argv: Vec<String>, dialect: Box<dyn Dialect<G>>) -> Self {
        Self::remote(info, Link::Process(argv), dialect)
    }

    /// A seat played by a bot reached through `link`.
    pub fn remote(info: SeatInfo, link: Link, dialect: Box<dyn Dialect<G>>) -> Self {
        LiveSeat {
            info,
            driver: Driver::Program(Box::new(ProgramSeat::with_link(link, dialect))),
        }
    }
}

impl<G: Game> LiveSeat<G> {
    /// Takes from `ready` a sandbox this very bot held in an earlier match
    /// (kept and cleared; see [`give_back_held`](Self::give_back_held)),
    /// if it suits its program under `limits`, to run its program in (each
    /// round's, or the match's; see [`play_live`]). A sandbox goes back only
    /// to the bot that held it: what a clearing cannot undo (its PID
    /// counter, the times of `/tmp`) stays that bot's.
    ///
    /// [`play_live`]: super::play_live
    pub fn take_held(&mut self, ready: &mut Vec<(SeatInfo, Held)>, limits: &ProcessLimits) {
        let Driver::Program(p) = &mut self.driver else {
            return;
        };
        let Link::Process(argv) = &p.link else {
            return;
        };
        if p.held.is_none() {
            if let Some(i) = ready
                .iter()
                .position(|(o, h)| *o == self.info && h.suits(argv, limits))
            {
                p.held = Some(ready.swap_remove(i).1);
            }
        }
    }

    /// Keeps the sandbox held for its match when the match ends, for
    /// [`give_back_held`](Self::give_back_held), instead of killing it
    /// then: for a caller that clears it ([`Held::reset`]) and runs the
    /// same program's next match in it (a series).
    pub fn keep_held(&mut self) {
        if let Driver::Program(p) = &mut self.driver {
            p.keep = true;
        }
    }

    /// The sandbox held for its last match, if it was kept
    /// ([`keep_held`](Self::keep_held)) and still runs, with the bot that
    /// held it (for [`take_held`](Self::take_held)).
    pub fn give_back_held(&mut self) -> Option<(SeatInfo, Held)> {
        match &mut self.driver {
            Driver::Program(p) => p.held.take().map(|h| (self.info.clone(), h)),
            Driver::Builtin(_) => None,
        }
    }
}

impl<G: Game> std::fmt::Debug for Driver<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Driver::Builtin(_) => f.write_str("Builtin"),
            Driver::Program(p) => p.fmt(f),
        }
    }
}

impl<G: Game> std::fmt::Debug for ProgramSeat<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgramSeat")
            .field("link", &self.link)
            .field("running", &self.process.is_some())
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::process::{BotProcess, Sandbox, SandboxLimits};
    use croupier_dialects::skullwhist_rest::SkullWhistRest;
    use croupier_rules::skullwhist::SkullWhist;

    fn seat(name: &str) -> LiveSeat<SkullWhist> {
        LiveSeat::remote(
            SeatInfo::named(name.to_string()),
            Link::Process(vec!["cat".to_string()]),
            Box::new(SkullWhistRest::new(7, 2)),
        )
    }

    /// Two bots whose programs would get the same sandbox (the same
    /// folders and limits): the one kept from a bot's match goes back to
    /// that bot only.
    #[tokio::test]
    async fn a_kept_sandbox_goes_back_only_to_the_bot_that_held_it() {
        let limits = ProcessLimits {
            sandbox: Sandbox::Strict(SandboxLimits::default()),
            ..ProcessLimits::default()
        };
        let held = BotProcess::hold(&["cat".to_string()], &limits).expect("a sandbox held");
        let (mut a, mut b) = (seat("a"), seat("b"));
        let mut ready = vec![(a.info.clone(), held)];
        b.take_held(&mut ready, &limits);
        assert_eq!(ready.len(), 1, "another bot took it");
        assert!(b.give_back_held().is_none());
        a.take_held(&mut ready, &limits);
        assert!(ready.is_empty(), "its bot did not take it");
        let (owner, _) = a.give_back_held().expect("its bot holds it");
        assert_eq!(owner, a.info);
    }
}
