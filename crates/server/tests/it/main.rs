//! The server's integration tests, in one test binary: each file below was
//! a binary of its own, and one binary builds once (the crates it uses are
//! compiled into it once, not twenty times) and runs all its tests in
//! parallel. Run one file's tests with `cargo test -p croupier-server
//! --test it relayed_again::`.

mod browser_support;
mod common;
mod demo_site;

mod admin;
mod admin_play;
mod api;
mod browser;
mod browser_live;
mod browser_people;
mod clocks;
mod dropped_deal;
mod durability;
mod hidden;
mod hidden_ladder;
mod hidden_views;
mod home_status;
mod ladder;
mod ladder_leases;
mod layers;
mod limits;
mod live_rest;
mod load;
mod lone_seats;
mod people;
mod relayed_again;
mod shapes;
mod stale_placement;
mod status_views;
mod web;
mod web_cpu;
mod web_golden;
mod web_paging;
