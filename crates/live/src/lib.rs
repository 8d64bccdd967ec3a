//! Games in progress on the Croupier server, below any HTTP framework.
//!
//! - [`hub`]: the 2014 SkullWhist REST API's live side: sessions,
//!   matchmaking, games in progress (each a `Connector` seat pair played by
//!   the arena's runner), and, with several instances on PostgreSQL, the
//!   relay between them;
//! - [`mailbox`]: pull bots' mailboxes, a `Connector` like the hub;
//! - [`live_games`]: the public events of games in progress, for spectators;
//! - [`visibility`]: seeds, and when a deal may be shown;
//! - [`auth`]: passwords and session tokens;
//! - [`lease`]: this process's registration among the processes on one
//!   database (the one registry whose reaper closes a lost process's games).
//!
//! The layers above (`croupier-competition`, `croupier-web`,
//! `croupier-server`) call in; nothing here names them.

pub mod auth;
pub mod hub;
pub mod lease;
pub mod live_games;
pub mod mailbox;
pub mod metrics;
pub mod visibility;
