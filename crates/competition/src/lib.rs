//! What decides which games the Croupier server plays, below any HTTP
//! framework:
//!
//! - [`ladder`]: pairing the available bots of each game, their seats,
//!   health and strikes, and its settings ([`settings`]: the TOML file);
//! - [`tournaments`]: round-robins and Swiss tournaments beside the ladder,
//!   in a share of its [`capacity`];
//! - [`house`]: house bots on the 2014 REST API;
//! - [`hosted`]: uploaded bot programs, validated and run in the sandbox;
//! - [`human`]: people playing bots from the website;
//! - [`admin`]: bans, rating resets and seasons (issue 49).
//!
//! Games in progress are `croupier-live`'s; the website and the HTTP layer
//! above call in.

pub mod admin;
pub mod capacity;
pub mod hosted;
pub mod house;
pub mod human;
pub mod ladder;
pub mod services;
pub mod settings;
pub mod tournaments;
