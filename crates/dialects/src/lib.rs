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
mod dialect;
pub mod gops;
pub mod jujitsu;
mod kind;
pub mod loveletter;
pub mod skullwhist_rest;

use croupier_rules::{Game, GameKind};

pub(crate) use dialect::as_dialect_of;
pub use dialect::{Dialect, Flow, Reply};
pub use kind::{DialectKind, UnknownDialect};

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
