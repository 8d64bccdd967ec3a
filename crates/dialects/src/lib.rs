//! Dialects: how a game's messages are written for a bot and how its answers
//! are read back. Pure encode/decode, no I/O: a transport (pipes, HTTP) moves
//! the lines, a dialect decides what they say.
//!
//! | dialect | games | origin |
//! |---|---|---|
//! | `croupier` | every game | Croupier's own JSON lines (`croupier/1`) |
//! | `gops` | goofspiel | the GOPS quiz runner (seed 004) |
//! | `loveletter` | loveletter | the HackSoc Love Letter manager (seed 001) |
//! | `loveletter-postman` | loveletter | the later revision of that manager |
//! | `jujitsu` | goofspiel | Psychological Jujitsu's HTTP bots (seed 002) |
//!
//! The manager side implements [`Dialect`]; the bot side (for `croupier bot`)
//! is in [`bot`].

pub mod bot;
pub mod croupier;
pub mod gops;
pub mod jujitsu;
pub mod loveletter;
pub mod skullwhist_rest;

use std::fmt;
use std::str::FromStr;

use croupier_rules::{Game, GameKind, RuleError, Seat};

/// The dialects Croupier speaks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DialectKind {
    /// JSON lines, every game.
    Croupier,
    /// The GOPS quiz's text lines.
    Gops,
    /// The Love Letter manager's text lines.
    LoveLetter,
    /// The later "postman" revision of the Love Letter manager.
    LoveLetterPostman,
    /// Psychological Jujitsu's JSON documents (HTTP push bots).
    Jujitsu,
    /// The SkullWhist REST API of 2014, spoken by the server itself to the
    /// bots that call it (not offered for programs: not in [`DialectKind::ALL`]).
    SkullWhistRest,
}

impl DialectKind {
    /// Every dialect.
    pub const ALL: [DialectKind; 5] = [
        DialectKind::Croupier,
        DialectKind::Gops,
        DialectKind::LoveLetter,
        DialectKind::LoveLetterPostman,
        DialectKind::Jujitsu,
    ];

    /// The dialect's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DialectKind::Croupier => "croupier",
            DialectKind::Gops => "gops",
            DialectKind::LoveLetter => "loveletter",
            DialectKind::LoveLetterPostman => "loveletter-postman",
            DialectKind::Jujitsu => "jujitsu",
            DialectKind::SkullWhistRest => "skullwhist-rest",
        }
    }

    /// Whether this dialect can carry `game`.
    pub fn supports(self, game: GameKind) -> bool {
        match self {
            DialectKind::Croupier => true,
            DialectKind::Gops | DialectKind::Jujitsu => game == GameKind::Goofspiel,
            DialectKind::LoveLetter | DialectKind::LoveLetterPostman => {
                game == GameKind::LoveLetter
            }
            DialectKind::SkullWhistRest => game == GameKind::SkullWhist,
        }
    }

    /// Whether this dialect is spoken over HTTP only (one request per
    /// decision) rather than as lines over a byte stream.
    pub fn http_only(self) -> bool {
        matches!(self, DialectKind::Jujitsu | DialectKind::SkullWhistRest)
    }

    /// The dialect an HTTP bot of `game` speaks unless told otherwise:
    /// Psychological Jujitsu documents for Goofspiel, Croupier JSON otherwise.
    pub fn default_for_http(game: GameKind) -> DialectKind {
        match game {
            GameKind::Goofspiel => DialectKind::Jujitsu,
            GameKind::LoveLetter | GameKind::SkullWhist => DialectKind::Croupier,
        }
    }

    /// The dialect a bot of `game` speaks unless told otherwise: Love Letter
    /// bots speak the manager's protocol, GOPS-variant Goofspiel bots the
    /// quiz runner's, everything else Croupier JSON.
    pub fn default_for(game: GameKind, gops_variant: bool) -> DialectKind {
        match game {
            GameKind::LoveLetter => DialectKind::LoveLetter,
            GameKind::Goofspiel if gops_variant => DialectKind::Gops,
            GameKind::Goofspiel | GameKind::SkullWhist => DialectKind::Croupier,
        }
    }
}

impl fmt::Display for DialectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dialect name Croupier does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect '{0}' (known: croupier, gops, loveletter, loveletter-postman, jujitsu)")]
pub struct UnknownDialect(pub String);

impl FromStr for DialectKind {
    type Err = UnknownDialect;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DialectKind::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownDialect(s.to_string()))
    }
}

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
/// (how a game-specific dialect is offered through the generic [`make`]).
pub(crate) fn as_dialect_of<G: Game, H: Game>(
    dialect: Box<dyn Dialect<H>>,
) -> Option<Box<dyn Dialect<G>>> {
    let boxed: Box<dyn std::any::Any> = Box::new(dialect);
    boxed.downcast::<Box<dyn Dialect<G>>>().ok().map(|b| *b)
}

/// Makes the manager side of `kind` for game `G`, if it carries that game.
pub fn make<G: Game>(kind: DialectKind) -> Option<Box<dyn Dialect<G>>> {
    let game: GameKind = G::NAME.parse().ok()?;
    if !kind.supports(game) {
        return None;
    }
    match kind {
        DialectKind::Croupier => Some(Box::new(croupier::CroupierDialect::default())),
        DialectKind::Gops => gops::make::<G>(),
        DialectKind::LoveLetter => loveletter::make::<G>(loveletter::Style::Classic),
        DialectKind::LoveLetterPostman => loveletter::make::<G>(loveletter::Style::Postman),
        DialectKind::Jujitsu => jujitsu::make::<G>(),
        // Needs the game and the opponent: made by the server's hub.
        DialectKind::SkullWhistRest => None,
    }
}
