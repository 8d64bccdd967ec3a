//! The bot side of the dialects: what a bot reads from a manager (or a
//! server) and what it answers, as pure translations. The loops that read
//! and write (stdin/stdout, HTTP) and ask a strategy live in
//! `croupier_arena::bot_side` and `croupier_arena::bot_side::skullwhist_rest`.
//!
//! | dialect | module |
//! |---|---|
//! | `gops` | [`gops`] |
//! | `jujitsu` | [`jujitsu`] |
//! | SkullWhist REST API (2014) | [`skullwhist`] |

pub mod gops;
pub mod jujitsu;
pub mod skullwhist;
