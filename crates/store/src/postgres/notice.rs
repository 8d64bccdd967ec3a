//! The messages between server instances on PostgreSQL (`LISTEN/NOTIFY`,
//! issue 13): the channels, what a notification on the shared channel says
//! about the REST games, and the listener that reads them.

use sqlx::postgres::PgListener;

use super::seat::SeatRow;
use crate::{BotId, GameId, StoreError};

/// The channel every instance listens to (bots matched).
pub const SHARED_CHANNEL: &str = "croupier_hub";

/// The channel of one instance (requests relayed to it, replies to it).
pub fn instance_channel(instance: i64) -> String {
    format!("croupier_hub_{instance}")
}

/// What a notification on [`SHARED_CHANNEL`] says about the REST games
/// (each instance keeps a cache of the other instances' games with them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A game dealt: where it runs and its bots by seat.
    Dealt {
        /// The game.
        game: GameId,
        /// Its home instance.
        home: i64,
        /// Its bots by seat.
        bots: Vec<BotId>,
    },
    /// The seats' views changed (`views` empty: too long to send; read
    /// the rows).
    Views {
        /// The game.
        game: GameId,
        /// Grows with every change (a later notice wins).
        version: u64,
        /// `(status, has_bid, over)` by seat.
        views: Vec<(String, bool, bool)>,
    },
    /// The game left the tables (stored, or closed).
    Ended {
        /// The game.
        game: GameId,
    },
}

/// A notification payload longer than this is not sent whole
/// (PostgreSQL's limit is 8000 bytes; a longer one fails its statement).
pub const MAX_PAYLOAD: usize = 7900;

/// Whether `payload` can be sent as one notification (a longer one would
/// fail the statement that sends it, and everything else that statement
/// writes).
pub fn fits(payload: &str) -> bool {
    payload.len() <= MAX_PAYLOAD
}

impl Notice {
    /// The notice of a game dealt with `seats`.
    pub fn dealt(seats: &[SeatRow]) -> Notice {
        let mut by_seat: Vec<&SeatRow> = seats.iter().collect();
        by_seat.sort_by_key(|s| s.seat);
        Notice::Dealt {
            game: seats.first().map_or(0, |s| s.game),
            home: seats.first().map_or(0, |s| s.home),
            bots: by_seat.iter().map(|s| s.bot).collect(),
        }
    }

    /// Reads a notification of kind `kind` (`d`, `v`, `e`) with the rest
    /// of its payload; `None` for other kinds or a payload that does not
    /// parse.
    pub fn parse(kind: &str, rest: &str) -> Option<Notice> {
        match kind {
            "d" => {
                let mut f = rest.split(' ');
                let game = f.next()?.parse().ok()?;
                let home = f.next()?.parse().ok()?;
                let bots = f.map(str::parse).collect::<Result<Vec<BotId>, _>>().ok()?;
                Some(Notice::Dealt { game, home, bots })
            }
            "v" => {
                let mut f = rest.splitn(3, ' ');
                let game = f.next()?.parse().ok()?;
                let version = f.next()?.parse().ok()?;
                let views = match f.next() {
                    Some(json) => serde_json::from_str(json).ok()?,
                    None => Vec::new(),
                };
                Some(Notice::Views {
                    game,
                    version,
                    views,
                })
            }
            "e" => Some(Notice::Ended {
                game: rest.parse().ok()?,
            }),
            _ => None,
        }
    }

    /// The payload: its kind, a space, the rest.
    pub fn payload(&self) -> String {
        match self {
            Notice::Dealt { game, home, bots } => {
                let mut out = format!("d {game} {home}");
                for b in bots {
                    out.push_str(&format!(" {b}"));
                }
                out
            }
            Notice::Views {
                game,
                version,
                views,
            } => {
                // Too long (or not written): the short form sends the
                // readers to the rows.
                let full = serde_json::to_string(views)
                    .ok()
                    .map(|json| format!("v {game} {version} {json}"))
                    .filter(|full| fits(full) && !views.is_empty());
                full.unwrap_or_else(|| format!("v {game} {version}"))
            }
            Notice::Ended { game } => format!("e {game}"),
        }
    }
}

/// Notifications from the other instances.
#[derive(Debug)]
pub struct Listener(pub(super) PgListener);

/// What a [`Listener`] heard next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heard {
    /// A notification: its channel and payload.
    Notice(String, String),
    /// The connection was lost (and made again): notifications sent
    /// meanwhile are lost, so what was learnt from them may be stale.
    Lost,
}

impl Listener {
    /// The next notification, or [`Heard::Lost`] after a lost connection
    /// that the listener made again (it listens again by then). An error
    /// (a connection reset, one that could not be made again: the next
    /// call tries again) may also have lost notifications, and is followed
    /// by no `Lost`: callers treat both alike.
    pub async fn recv(&mut self) -> Result<Heard, StoreError> {
        Ok(match self.0.try_recv().await? {
            Some(n) => Heard::Notice(n.channel().to_string(), n.payload().to_string()),
            None => Heard::Lost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_payload_within_the_limit_fits_a_notification() {
        assert!(fits("r 12 ok"));
        assert!(fits(&"x".repeat(MAX_PAYLOAD)));
        assert!(!fits(&"x".repeat(MAX_PAYLOAD + 1)));
    }
}
