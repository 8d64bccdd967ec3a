//! The live side of the SkullWhist server over the 2014 REST API. One room
//! per concern: [`sessions`] (login, expiry), [`matchmaking`] (the
//! `new-game` long poll, dealing), [`game`] (games in progress, each played
//! by the arena's match runner in its own task, and stored), [`drive`] (a
//! game's runner, polled by the request that brings a move), [`seat`] (the
//! hub as a `Connector`: a seat's requests in, its status out). Handlers
//! and house bots call the same methods.
//!
//! Locking: `inner` (a std mutex) guards the maps and is never held across
//! an await. A game's requests are serialised by its runner, which reads
//! them one at a time from each seat's inbox; a `status` poll reads the
//! seat's latest reply under the seat's own short lock.

mod answered;
mod cluster;
mod crowd;
mod drive;
mod fence;
mod game;
mod home;
mod lock;
mod matchmaking;
mod moves;
pub mod relay;
mod seat;
mod session_cache;
mod sessions;
mod state;

pub use cluster::JoinError; // wm (issue 13)
pub use croupier_dialects::skullwhist_rest::Refusal;
pub use game::LiveGame;
pub use matchmaking::NewGame;
pub use relay::{Home, Relay};
pub use state::{Hub, HubConfig};
