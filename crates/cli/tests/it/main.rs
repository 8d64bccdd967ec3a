//! The CLI's integration tests, in one test binary (one build, all tests in
//! parallel); most run the `croupier` binary as a process. The bots they
//! play stay beside this folder (`tests/fault_bots/`, `tests/hostile_bots/`,
//! `tests/lifetime_bots/`, `tests/loveletter_bots/`). Run one file's tests
//! with `cargo test -p croupier-cli --test it cluster::`.

mod support;

mod admin;
mod cgroups;
mod cli;
mod cluster;
mod db;
mod example_retry;
mod examples;
mod explained;
mod faults;
mod hosted;
mod http;
mod jsonp_sdk;
mod lifetime;
mod logs;
mod loveletter_bot;
mod loveletter_postman;
mod metrics;
mod sandbox;
mod scripts;
mod tournament_server;
mod tournament_swiss;
mod workers;
