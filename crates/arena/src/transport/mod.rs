//! What a live seat talks through: a connection that carries a dialect's
//! lines to a bot and brings its answers back. Programs (pipes, [`process`]),
//! HTTP bot servers (one POST per message, [`http`]) and the server's pull
//! mailboxes (a [`Connector`]) are all connections.
//!
//! Imports point one way: `conn` and `error` know nothing of the carriers,
//! `process` and `http` implement [`Conn`], and `link` chooses between them.

mod conn;
mod error;
pub mod http;
mod link;
pub mod process;

pub use conn::{Conn, Connector};
pub use error::TransportError;
pub use link::Link;
