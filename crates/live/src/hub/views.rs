//! A game's seats in the shared table, for the other instances: which
//! bot sits where and which instance is the game's home, so that a request
//! reaching another instance is relayed there (`relay`).
//!
//! A game dealt while another instance ran has its seats written by the
//! deal (`Hub::share_deal`). One dealt between two bots of this instance
//! while it was alone has none: [`write_seats`] inserts them once another
//! instance comes, before the newcomer serves (it waits a heartbeat and a
//! half, see `Crowd`). The game's end removes the rows only if they may be
//! there, and after any write under way, so that no write brings them
//! back ([`Rows`]).
//!
//! The seats' views are written with them, as they are then, and never
//! again (issue 50): a `status` is always the home's answer.

use std::sync::Arc;
use std::time::Duration;

use croupier_store::postgres::cluster::{GameViews, SeatRow};

use super::game::LiveGame;
use super::view_sync::Rows;

/// How soon seats that failed to go in are written again.
const SEATS_RETRY: Duration = Duration::from_millis(250);

/// Writes a game's seats once another instance runs, until they are in
/// or the game is over and stored.
pub(in crate::hub) async fn write_seats(game: Arc<LiveGame>) {
    let Some(sync) = game.sync.clone() else {
        return;
    };
    let mut joined = sync.crowd.joined();
    let mut stored = game.stored.clone();
    // A first look before any change: another instance may have come
    // since the deal found this one alone.
    loop {
        joined.borrow_and_update();
        if !sync.crowd.alone() {
            let mut rows = sync.rows.lock().await;
            if matches!(*rows, Rows::Written | Rows::Ended) {
                return;
            }
            let version = *sync.version.borrow();
            let views = game
                .seats
                .iter()
                .map(|s| {
                    let v = s.view();
                    (v.status.to_string(), v.has_bid, v.over)
                })
                .collect();
            let write = GameViews {
                game: game.id,
                version,
                views,
                also: Vec::new(),
                seats: seat_rows(&game, sync.home),
            };
            let ok = sync.writer.write(write).await;
            *rows = if ok { Rows::Written } else { Rows::Maybe };
            if ok {
                return;
            }
        }
        // Seats that failed to go in are tried again soon: another
        // instance serves meanwhile.
        let retry = !sync.crowd.alone();
        tokio::select! {
            r = joined.changed() => if r.is_err() { return },
            _ = stored.wait_for(Option::is_some) => return,
            () = tokio::time::sleep(SEATS_RETRY), if retry => {}
        }
    }
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
