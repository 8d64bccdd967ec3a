//! Pure rules engines for the games Croupier runs: SkullWhist, Love Letter and
//! Goofspiel (with its Psychological Jujitsu and GOPS variants).
//!
//! Every game is a deterministic state machine: a function of its rules
//! variant, a seed and the sequence of actions. No I/O, no clock, no OS
//! randomness. Each game implements [`Game`]:
//!
//! * [`Game::to_act`] names the seats that must act now (several at once for
//!   simultaneous decisions such as sealed bids);
//! * [`Game::legal_actions`] lists what a seat may do;
//! * [`Game::validate`] turns untrusted text from a bot into a legal action;
//! * [`Game::apply`] changes the state, or refuses and changes nothing;
//! * [`Game::observation`] is what one seat may see, and nothing more;
//! * [`Game::events`] is the log of what happened, each event tagged with who
//!   may see it;
//! * [`Game::outcome`] holds per-seat scores and ranks once the game is over.
//!
//! [`GameKind`] names a game at run time and [`GameVisitor`] runs generic code
//! for it (the CLI, records, the server). [`Record`] is the JSON game record
//! that replays exactly.

pub mod any;
pub mod core;
pub mod goofspiel;
pub mod kind;
pub mod loveletter;
pub mod playouts;
#[cfg(test)]
mod public_view_tests;
pub mod record;
mod shuffle;
pub mod skullwhist;
#[cfg(test)]
pub(crate) mod testutil;

pub use crate::any::GameVisitor;
pub use crate::core::{
    game_rng, Event, Game, GameRng, Outcome, RuleError, Seat, SeatSet, SetupError, Variant,
};
pub use crate::kind::{GameKind, UnknownGame};
pub use crate::record::{Fault, Record, RecordedStep, ReplayError, SeatInfo, StepKind};
