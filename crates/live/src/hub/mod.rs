//! The live side of the SkullWhist server over the 2014 REST API. Handlers
//! and house bots call the same methods of one [`Hub`]. Its rooms, from the
//! top down (each imports only rooms below it):
//!
//! - `cluster` (several instances on PostgreSQL: sessions, `new-game` and
//!   moves across instances), `sessions` (login, expiry), `matchmaking`
//!   (the `new-game` long poll, dealing), `moves` (`bid`, `play`,
//!   `status`);
//! - `state`: the hub itself, its maps, clocks and limits;
//! - `views`: the task that writes a game's seats for the other instances
//!   when one comes after the deal;
//! - `game`: games in progress, each played by the arena's match runner in
//!   its own task and stored; it tells the hub that a game closed through
//!   the `Registry` trait the hub hands down;
//! - `relay` (requests between instances through PostgreSQL), with
//!   `remote_games` (the other instances' games, from their notifications)
//!   and `view_sync` (whether a game's seats are written, the instance's
//!   writer);
//! - the leaves: `drive` (a game's runner, polled by the request that
//!   brings a move), `seat` (the hub as a `Connector`: a seat's requests
//!   in, its status out), `answered`, `crowd`, `home`,
//!   `session_cache`, `lock`.
//!
//! Locking: `inner` (a std mutex) guards the maps and is never held across
//! an await. A game's requests are serialised by its runner, which reads
//! them one at a time from each seat's inbox; a `status` poll reads the
//! seat's latest reply under the seat's own short lock.

mod answered;
mod cluster;
mod crowd;
mod drive;
mod game;
mod home;
mod lock;
mod matchmaking;
mod moves;
pub mod relay;
mod remote_games;
mod seat;
mod session_cache;
mod sessions;
mod state;
mod view_sync;
mod views;

pub use cluster::JoinError; // wm (issue 13)
pub use croupier_dialects::skullwhist_rest::Refusal;
pub use game::LiveGame;
pub use matchmaking::NewGame;
pub use relay::{Home, Relay};
pub use state::{Hub, HubConfig};
