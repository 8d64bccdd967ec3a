//! A game's seat views, copied to the database for the other instances as
//! they change (and sent to them in a notification, in the same statement:
//! see `remote_games`). One writer task per instance writes the views of all its
//! games that changed since its last write in one statement, so a busy
//! instance makes one round trip for many moves. The answers to moves
//! relayed from other instances ride in the same statement, after the
//! views they follow (`ViewSync::flushed_with`, in `view_sync`).
//!
//! A game dealt between two bots of this instance while it was alone has
//! no seats in the table (`Hub::share_deal`): its writer inserts them
//! with the first views it writes once another instance comes, before the
//! newcomer serves (it waits a heartbeat and a half, see `Crowd`). The
//! game's end removes the rows only if they may be there, and after any
//! write under way, so that no write brings them back ([`Rows`]).

use std::sync::Arc;
use std::time::Duration;

use croupier_store::postgres::cluster::{GameViews, SeatRow};

use super::game::LiveGame;
use super::view_sync::Rows;

/// How soon seats that failed to go in are written again.
const SEATS_RETRY: Duration = Duration::from_millis(250);

/// Copies a game's seat views to the database as they change, until the
/// game is over and stored. While the instance is alone the copies are
/// skipped; they are made when another instance joins, or when an answer
/// waits for them. The first copy after the instance was alone at the
/// deal writes the seats themselves (see [`Rows`]).
pub(in crate::hub) async fn write_views(game: Arc<LiveGame>) {
    let Some(sync) = game.sync.clone() else {
        return;
    };
    let mut changes = sync.version.subscribe();
    let mut joined = sync.crowd.joined();
    let mut stored = game.stored.clone();
    // Whether the seats are in the table for good (written, or the game
    // ended): only a write that may insert them holds the game's `rows`
    // lock, which the end waits for.
    let mut settled = matches!(*sync.rows.lock().await, Rows::Written);
    // A first look before any change: another instance may have come
    // since the deal found this one alone.
    loop {
        // The answers first, then the version: an answer was queued after
        // its move changed the views (the runner delivers the views before
        // it answers), so the version read next includes that change, and
        // the answer never goes without the views it follows.
        let carried = std::mem::take(sync.carried().get_or_insert_with(Vec::new));
        let version = *changes.borrow_and_update();
        joined.borrow_and_update();
        // An answer to carry means another instance is there, whatever
        // the last heartbeat said.
        let shared = !carried.is_empty() || !sync.crowd.alone();
        let mut rows = None;
        if shared && !settled {
            let r = sync.rows.lock().await;
            settled = matches!(*r, Rows::Written | Rows::Ended);
            rows = (!settled).then_some(r);
        }
        let insert = rows.is_some();
        let stale = shared && (insert || version > *sync.written.borrow());
        if stale || !carried.is_empty() {
            // Views already written are not written again for an answer.
            let views: Vec<(String, bool, bool)> = if stale {
                game.seats
                    .iter()
                    .map(|s| {
                        let v = s.view();
                        (v.status.to_string(), v.has_bid, v.over)
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let (also, told): (Vec<_>, Vec<_>) = carried.into_iter().unzip();
            let write = GameViews {
                game: game.id,
                version,
                views,
                also,
                seats: if insert {
                    seat_rows(&game, sync.home)
                } else {
                    Vec::new()
                },
            };
            let ok = sync.writer.write(write).await;
            if let Some(mut r) = rows {
                *r = if ok { Rows::Written } else { Rows::Maybe };
                settled = ok;
            }
            if ok && stale {
                sync.written.send_replace(version);
            }
            for t in told {
                let _ = t.send(ok);
            }
        }
        // Seats that failed to go in are tried again soon, not only at
        // the game's next change: another instance serves meanwhile.
        let retry = shared && !settled;
        tokio::select! {
            r = changes.changed() => if r.is_err() { break },
            r = joined.changed() => if r.is_err() { break },
            _ = sync.poke.notified() => {}
            _ = stored.wait_for(Option::is_some) => break,
            () = tokio::time::sleep(SEATS_RETRY), if retry => {}
        }
    }
    // Whoever still waits to send with the views sends alone.
    sync.carried().take();
}

fn hand_text(hand: &[croupier_rules::skullwhist::Card]) -> String {
    hand.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A game's seats as the tables hold them, with their views as they are
/// now (home: `home`).
pub(super) fn seat_rows(live: &LiveGame, home: i64) -> Vec<SeatRow> {
    (0..2)
        .map(|i| {
            let v = live.seats[i].view();
            SeatRow {
                bot: live.bots[i],
                game: live.id,
                seat: i as i32,
                opponent: live.bots[1 - i],
                hand: hand_text(&live.hands[i]),
                status: v.status.to_string(),
                has_bid: v.has_bid,
                over: v.over,
                home,
            }
        })
        .collect()
}
