//! PostgreSQL only (issue 13): a move relayed to its game's home and asked
//! again with the same request number (its answer was lost with the
//! asker's listener connection, or came late) gets the first answer — the
//! move is applied once and reported as applied — while a new request is
//! handled anew. Without PostgreSQL's binaries the test says so and passes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use croupier_store::postgres::cluster::instance_channel;
use sqlx::postgres::PgListener;

/// No process has this id: the test itself plays the asking instance.
const ASKER: i64 = 876_543_210;

/// Sends request `id` with `line` for `seat` of `game` to `home`, as an
/// instance would relay it, and waits for its answer.
async fn ask(
    pool: &sqlx::PgPool,
    replies: &mut PgListener,
    home: i64,
    id: u64,
    game: i64,
    seat: i64,
    line: &str,
) -> String {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(instance_channel(home))
        .bind(format!("q {ASKER} {id} {game} {seat} {line}"))
        .execute(pool)
        .await
        .unwrap();
    let n = tokio::time::timeout(Duration::from_secs(10), replies.recv())
        .await
        .expect("the home did not answer within 10 s")
        .unwrap();
    n.payload().to_string()
}

#[test]
fn a_move_asked_again_gets_its_first_answer() {
    common::on_postgres(|url| async move {
        let (_one, store) = common::hub_on(&url).await;
        let (two, _) = common::hub_on(&url).await;
        let pool = sqlx::PgPool::connect(&url).await.unwrap();
        let [a, b] = common::logged_in(&*store, &two, "again", 2).await[..] else {
            unreachable!()
        };
        let (game, _) = common::deal(&two, a, b).await;
        // The game's home and `a`'s seat, as every instance reads them.
        let (home, seat): (i64, i32) = {
            let mut found = None;
            for _ in 0..200 {
                found = sqlx::query_as("SELECT home, seat FROM hub_seats WHERE bot = $1")
                    .bind(a)
                    .fetch_optional(&pool)
                    .await
                    .unwrap();
                if found.is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            found.expect("the game's seats were never written")
        };
        let mut replies = PgListener::connect(&url).await.unwrap();
        replies.listen(&instance_channel(ASKER)).await.unwrap();
        let bid = croupier_dialects::skullwhist_rest::bid_line(4);
        let seat = i64::from(seat);

        let first = ask(&pool, &mut replies, home, 1, game, seat, &bid).await;
        assert_eq!(first, "r 1 ok", "the first bid");
        // Asked again (the asker did not hear "ok"): the same answer, not
        // a refusal of a second bid.
        let again = ask(&pool, &mut replies, home, 1, game, seat, &bid).await;
        assert_eq!(again, "r 1 ok", "the bid asked again");
        // A new request with the same line is a second bid, and refused:
        // what the bid asked again would have been told without the
        // home's memory.
        let second = ask(&pool, &mut replies, home, 2, game, seat, &bid).await;
        assert!(
            second.starts_with("r 2 refused "),
            "a second bid was not refused: {second}"
        );
        // The bid counted once: `b` bids, and sees `a`'s bid.
        two.bid(b, 3).await.unwrap();
        let status: serde_json::Value = serde_json::from_str(&two.status(b).await).unwrap();
        assert_eq!(status["opponent-bid"], serde_json::json!(4), "{status}");
    });
}
