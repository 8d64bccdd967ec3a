//! The store's integration tests, in one test binary (one build, one
//! throw-away PostgreSQL cluster, all tests in parallel). Run one file's
//! tests with `cargo test -p croupier-store --test it suite::`.

#[macro_use]
mod common;

mod admin;
mod deep_ladder;
mod finish_hours;
mod hub_tables;
mod ladder;
mod lease_race;
mod live_tables;
mod marked_shards;
mod suite;
