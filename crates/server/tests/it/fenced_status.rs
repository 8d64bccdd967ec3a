//! PostgreSQL only (issue 13): a `status` for a game another instance runs
//! is answered from this instance's cache once a fence (a notification it
//! sent itself after the request arrived) has come back, so it is as fresh
//! as the rows, without reading them; and once the instance's listener
//! lost its connection (notifications may be lost), the cache is not
//! trusted: the rows are read; nor is a game whose views notice did not
//! parse. The same loss empties the session cache: a session ended without
//! a notice heard is checked in the database again. Without PostgreSQL's
//! binaries the tests say so and pass.
//!
//! The rows are overwritten with a marker after each move: a status read
//! from them shows the marker, one from the cache shows the home's view.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::HashMap;

use croupier_live::hub::Hub;
use croupier_store::{BotId, GameId};
use serde_json::Value;

/// What the rows say once the test has overwritten them.
const MARKER: &str = r#"{"result":"marker"}"#;

/// Longer than the cache answers a view that leaves the bot nothing to do
/// without a fence (`remote_games::PASSIVE_FRESH`, 300 ms): such a view
/// may be one move old by design (the bot asks again), so a test that wants
/// the current view waits this long first and gets it through a fence.
const PAST_PASSIVE: std::time::Duration = std::time::Duration::from_millis(400);

async fn status(hub: &Hub, bot: BotId) -> Value {
    serde_json::from_str(&hub.status(bot).await).unwrap()
}

/// Plays one legal card for whoever is to move in `game` on its home;
/// then the rows are overwritten with [`MARKER`]. The bot to move next
/// if it is not the one that moved (else `None`).
async fn move_and_mark(
    home: &Hub,
    pool: &sqlx::PgPool,
    game: GameId,
    hands: &mut HashMap<BotId, Vec<String>>,
) -> Option<BotId> {
    let bots: Vec<BotId> = hands.keys().copied().collect();
    let mut mover = None;
    for &b in &bots {
        let s = status(home, b).await;
        if s["your-turn"] == Value::Bool(true) {
            mover = Some((b, s));
        }
    }
    let (mover, s) = mover.expect("nobody's turn");
    let lead = s["opponent-current-card"].as_str().map(str::to_string);
    let hand = hands.get_mut(&mover).unwrap();
    let card = common::legal_cards(hand, lead.as_deref())[0].clone();
    hand.retain(|c| *c != card);
    home.play(mover, &card).await.expect("a legal card refused");
    sqlx::query("UPDATE hub_seats SET status = $1 WHERE game = $2")
        .bind(MARKER)
        .bind(game)
        .execute(pool)
        .await
        .unwrap();
    let other = bots.into_iter().find(|b| *b != mover).unwrap();
    (status(home, other).await["your-turn"] == Value::Bool(true)).then_some(other)
}

#[test]
fn a_status_elsewhere_is_answered_from_the_cache_after_a_fence_until_the_listener_is_lost() {
    common::on_postgres(|url| async move {
        // `t` keeps every instance until the test ends.
        let t = common::two_instances(&url, "fence", 4).await;
        let common::TwoInstances {
            one,
            two,
            pool,
            bots,
            ..
        } = &t;
        let [a, b, c, d] = bots[..] else {
            unreachable!()
        };
        let (game, [cards_a, cards_b]) = common::deal(two, a, b).await;
        let mut hands = HashMap::from([(a, cards_a), (b, cards_b)]);
        two.bid(a, 3).await.unwrap();
        two.bid(b, 3).await.unwrap();

        // Each move's view on the other instance, from the cache after a fence
        // (the rows say the marker).
        let mut checked = 0;
        for _ in 0..6 {
            if let Some(next) = move_and_mark(two, pool, game, &mut hands).await {
                tokio::time::sleep(PAST_PASSIVE).await;
                let there = one.status(next).await;
                assert_ne!(&*there, MARKER, "the status was read from the rows");
                assert_eq!(&*there, &*two.status(next).await, "a stale status");
                checked += 1;
            }
        }
        assert!(checked >= 3, "only {checked} moves left the other to play");

        // A views notice that does not parse (say, of a newer instance's
        // form) for a game kept here: the game is forgotten, so its
        // statuses are read from the rows.
        let (other_game, [cards_c, cards_d]) = common::deal(two, c, d).await;
        let mut other_hands = HashMap::from([(c, cards_c), (d, cards_d)]);
        two.bid(c, 3).await.unwrap();
        two.bid(d, 3).await.unwrap();
        let next = loop {
            if let Some(next) = move_and_mark(two, pool, other_game, &mut other_hands).await {
                break next;
            }
        };
        tokio::time::sleep(PAST_PASSIVE).await;
        assert_ne!(&*one.status(next).await, MARKER, "not from the cache");
        common::announce(pool, &format!("v {other_game} 999999 [not json")).await;
        tokio::time::sleep(PAST_PASSIVE).await;
        assert_eq!(
            &*one.status(next).await,
            MARKER,
            "a game whose notice was not understood was answered from the cache"
        );

        // The other instance's listener loses its connection: it listens
        // again, but what it heard before is not trusted any more.
        common::lose_listener(pool, one.relay().unwrap()).await;
        let mut read_rows = 0;
        for _ in 0..4 {
            if let Some(next) = move_and_mark(two, pool, game, &mut hands).await {
                assert_eq!(
                    &*one.status(next).await,
                    MARKER,
                    "a status answered from a cache that may have missed notifications"
                );
                read_rows += 1;
            }
        }
        assert!(read_rows >= 1, "no move left the other to play");
    });
}

#[test]
fn a_lost_listener_has_the_sessions_checked_again() {
    common::on_postgres(|url| async move {
        // `t` keeps every instance until the test ends.
        let t = common::two_instances(&url, "sessions", 1).await;
        let common::TwoInstances {
            one, pool, bots, ..
        } = &t;
        let [a] = bots[..] else { unreachable!() };
        let token: String = sqlx::query_scalar("SELECT token FROM hub_sessions WHERE bot = $1")
            .bind(a)
            .fetch_one(pool)
            .await
            .unwrap();
        assert_eq!(one.session(&token).await.unwrap(), a);
        // The session ends with no notice (as if its notice was lost):
        // `one` still trusts its cache (for up to 5 s)...
        sqlx::query("DELETE FROM hub_sessions WHERE bot = $1")
            .bind(a)
            .execute(pool)
            .await
            .unwrap();
        assert_eq!(
            one.session(&token).await.unwrap(),
            a,
            "the session was not cached"
        );
        // ...until its listener loses its connection.
        common::lose_listener(pool, one.relay().unwrap()).await;
        let refused = one
            .session(&token)
            .await
            .expect_err("a session ended while the listener was lost is still trusted");
        assert!(refused.0.contains("unknown session"), "{}", refused.0);
    });
}
