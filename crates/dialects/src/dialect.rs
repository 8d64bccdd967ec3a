//! The manager side of a dialect ([`Dialect`]): what it writes for a seat
//! and how it reads the seat's answers, and what the runner does next
//! ([`Flow`], [`Reply`]).

use croupier_rules::{Game, RuleError, Seat};

use crate::kind::DialectKind;

/// What the transport must do after the lines of an event are sent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep the bot running.
    Continue,
    /// Stop the bot (SIGTERM): it is out, or the round is over.
    Stop,
    /// Stop the bot if it runs, then start it anew (a new Love Letter round).
    Restart,
}

/// A decoded answer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reply<A> {
    /// A legal action.
    Action(A),
    /// The bot gave up (the dialect's `forfeit`).
    Forfeit,
    /// A line to skip (an answer to an earlier, already ruled decision).
    Ignore,
}

/// The manager side of a dialect for game `G`: one instance per seat.
pub trait Dialect<G: Game>: Send {
    /// Which dialect this is.
    fn kind(&self) -> DialectKind;

    /// Whether the bot is started anew for every round (Love Letter), in
    /// which case it is started on [`Flow::Restart`] rather than at the
    /// start of the match.
    fn starts_per_round(&self) -> bool {
        false
    }

    /// Lines sent when the bot starts.
    fn hello(&mut self, game: &G, seat: Seat, out: &mut Vec<String>);

    /// Whether the bot answers `hello` with one line (its name).
    fn expects_hello_reply(&self) -> bool {
        false
    }

    /// Lines for one event this seat may see, and what to do next.
    fn event(&mut self, game: &G, seat: Seat, event: &G::Event, out: &mut Vec<String>) -> Flow;

    /// Lines sent when the seat must decide.
    fn prompt(
        &mut self,
        game: &G,
        seat: Seat,
        legal: &[G::Action],
        deadline_ms: u64,
        out: &mut Vec<String>,
    );

    /// Reads the bot's answer: a legal action, a forfeit, a line to skip, or
    /// the reason it is malformed or illegal.
    fn decode(&mut self, game: &G, seat: Seat, line: &str) -> Result<Reply<G::Action>, RuleError>;

    /// Lines sent when the match is over.
    fn goodbye(&mut self, game: &G, seat: Seat, out: &mut Vec<String>);

    /// Whether an answer the rules reject (`error`) is refused with these
    /// lines, the decision staying open with its deadline unchanged so that
    /// the bot may try again (the 2014 REST API). `false`, the default:
    /// the answer is a fault and gets the game's ruling.
    fn refuse(
        &mut self,
        _game: &G,
        _seat: Seat,
        _error: &RuleError,
        _out: &mut Vec<String>,
    ) -> bool {
        false
    }

    /// Lines sent once this seat's answer is applied and the events it
    /// caused are delivered (the 2014 API's `success`, which must not come
    /// before the new status exists). Most dialects send none.
    fn accepted(&mut self, _game: &G, _seat: Seat, _out: &mut Vec<String>) {}

    /// Told, before the ruling is applied, that `faulty` (this seat or
    /// another) faulted on its current decision. Most dialects say nothing.
    fn fault_ruled(&mut self, _game: &G, _seat: Seat, _faulty: Seat) {}

    /// Told, before each prompt and the goodbye, every seat's thinking time
    /// left in the match (`None` = unlimited).
    fn clocks(&mut self, _remaining_ms: &[Option<u64>]) {}
}

/// `dialect`, a dialect of game `H`, as a dialect of `G` when `G` is `H`
/// (how a game-specific dialect is offered through the generic
/// [`make`](crate::make)).
pub(crate) fn as_dialect_of<G: Game, H: Game>(
    dialect: Box<dyn Dialect<H>>,
) -> Option<Box<dyn Dialect<G>>> {
    let boxed: Box<dyn std::any::Any> = Box::new(dialect);
    boxed.downcast::<Box<dyn Dialect<G>>>().ok().map(|b| *b)
}
