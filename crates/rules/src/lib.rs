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
//! [`AnyGame`] wraps the three games behind one type for callers that pick a
//! game at run time (the CLI, records, the server).

pub mod any;
pub mod core;
pub mod goofspiel;
pub mod loveletter;
pub mod record;
pub mod skullwhist;

pub use crate::core::{
    Event, Game, GameRng, Outcome, RuleError, Seat, SeatSet, SetupError, Variant,
};
