//! Durable storage for the server: bots and game records.
//!
//! Handlers talk to the [`Store`] trait only; [`SqliteStore`] is the default
//! (an embedded file, WAL journal) and [`PgStore`] keeps the same data in
//! PostgreSQL. [`open`] picks one by the URL's scheme.
//!
//! Both implement [`Store`] and [`WebReads`] through one implementation
//! (`sql_store`, `sql_web`), generic over the database: a query whose SQL
//! and row mapping are the same on both is written once, and each backend
//! keeps only what it does its own way (`sqlite*`, `postgres/`).

// Issue 49 (item 5): bans, rating resets, seasons, the audit log.
pub mod admin;
mod by_url;
mod error;
pub mod facts;
pub mod group;
pub mod hosted;
// Issue 13 (wc): ladder leases between processes.
pub mod leases;
mod people;
pub mod postgres;
pub mod ratings;
mod record;
mod rows;
pub mod scratch;
mod sql_store;
mod sql_web;
mod sqlite;
mod sqlite_batch;
mod sqlite_config;
mod sqlite_import;
mod sqlite_ratings;
mod sqlite_raw;
mod sqlite_wal;
mod sqlite_web;
mod store;
pub mod times;
pub mod tournaments;
pub mod waits;
pub mod web;

pub use admin::AdminStore;
pub use by_url::{open, without_password, Backend};
pub use error::StoreError;
pub use group::{BatchWrite, GroupCommit, GroupConfig, Write, Written};
pub use leases::LeaseStore;
pub use people::{PeopleRating, PersonGame, PersonSeat};
pub use postgres::PgStore;
pub use record::RecordError;
pub use rows::{
    BotId, BotInfo, BotKind, BotRow, GameEnd, GameId, GameRow, NewBot, OwnerId, OwnerRow,
    UnknownBotKind,
};
pub use sqlite::SqliteStore;
pub use store::Store;
pub use tournaments::TournamentStore;
pub use web::WebReads;
