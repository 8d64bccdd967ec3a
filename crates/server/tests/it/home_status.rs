//! PostgreSQL only (issues 13, 50): a `status` for a game another instance
//! runs is its home's answer, relayed, never a copy: right after each move
//! the other instance shows exactly what the home shows (a read never goes
//! back in time, whichever instance it reaches), the rows (overwritten with
//! a marker after each move) are never what it shows, and a listener that
//! lost its connection changes none of this. The same loss empties the
//! session cache: a session ended without a notice heard is checked in the
//! database again. Without PostgreSQL's binaries the tests say so and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::HashMap;

use croupier_live::hub::Hub;
use croupier_store::{BotId, GameId};
use serde_json::Value;

/// What the rows say once the test has overwritten them.
const MARKER: &str = r#"{"result":"marker"}"#;

async fn status(hub: &Hub, bot: BotId) -> Value {
    serde_json::from_str(&hub.status(bot).await.unwrap()).unwrap()
}

/// Plays one legal card for whoever is to move in `game` on its home;
/// then the rows are overwritten with [`MARKER`]. Both bots.
async fn move_and_mark(
    home: &Hub,
    pool: &sqlx::PgPool,
    game: GameId,
    hands: &mut HashMap<BotId, Vec<String>>,
) -> Vec<BotId> {
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
    bots
}

/// After each of `moves` moves on `home`, both bots' statuses on `there`
/// (asked first, at once) are the home's, never the rows'.
async fn each_move_reads_the_home(
    home: &Hub,
    there: &Hub,
    pool: &sqlx::PgPool,
    game: GameId,
    hands: &mut HashMap<BotId, Vec<String>>,
    moves: usize,
) {
    for m in 0..moves {
        for b in move_and_mark(home, pool, game, hands).await {
            let elsewhere = there.status(b).await.unwrap();
            assert_ne!(
                &*elsewhere, MARKER,
                "move {m}: the status was read from the rows"
            );
            assert_eq!(
                &*elsewhere,
                &*home.status(b).await.unwrap(),
                "move {m}: the other instance showed another state than the home"
            );
        }
    }
}

#[test]
fn a_status_elsewhere_is_the_homes_answer_even_after_the_listener_is_lost() {
    common::on_postgres(|url| async move {
        // `t` keeps every instance until the test ends.
        let t = common::two_instances(&url, "home-status", 2).await;
        let common::TwoInstances {
            one,
            two,
            pool,
            bots,
            ..
        } = &t;
        let [a, b] = bots[..] else { unreachable!() };
        let (game, [cards_a, cards_b]) = common::deal(two, a, b).await;
        let mut hands = HashMap::from([(a, cards_a), (b, cards_b)]);
        // `new-game` elsewhere asks the home where the seat stands (the
        // rows keep the views of the deal only): the same game before the
        // bot bids, a refusal after.
        match one.new_game(a).await.unwrap() {
            croupier_live::hub::NewGame::Game { game: g, .. } => assert_eq!(g, game),
            other => panic!("new-game before the bid elsewhere: {other:?}"),
        }
        two.bid(a, 3).await.unwrap();
        let refused = one
            .new_game(a)
            .await
            .expect_err("new-game elsewhere after the bid dealt the game again");
        assert!(refused.0.contains("have bid"), "{}", refused.0);
        two.bid(b, 3).await.unwrap();
        // Straight after each move, with no pause for notices to arrive.
        each_move_reads_the_home(two, one, pool, game, &mut hands, 8).await;

        // The other instance's listener loses its connection: it listens
        // again, and the statuses are still the home's.
        common::lose_listener(pool, one.relay().unwrap()).await;
        each_move_reads_the_home(two, one, pool, game, &mut hands, 6).await;

        // The rest of the game; its end reads "not in a game" there too,
        // once the game is stored.
        while hands.values().any(|h| !h.is_empty()) {
            move_and_mark(two, pool, game, &mut hands).await;
        }
        for bot in [a, b] {
            let s = status(one, bot).await;
            assert!(
                s["game"].is_null(),
                "a finished game's status elsewhere: {s}"
            );
            let stored: String = sqlx::query_scalar("SELECT status FROM games WHERE id = $1")
                .bind(game)
                .fetch_one(pool)
                .await
                .unwrap();
            assert_eq!(
                stored, "finished",
                "told the game ended before it was stored"
            );
        }
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

/// A home that holds its lease but answers nothing (hung, or cut off from
/// its listener): another instance does not wait on it for ever. A
/// `status` re-reads the rows while the lease could still run out, then
/// refuses with "try again"; a `new-game` waits one relay's time for the
/// seat's state, then refuses the same way (our client asks again on
/// such refusals, docs/start-here.md).
#[test]
fn a_silent_home_is_refused_with_try_again_within_its_lease() {
    common::on_postgres(|url| async move {
        // `t` keeps every instance until the test ends.
        let t = common::two_instances(&url, "silent-home", 1).await;
        let common::TwoInstances {
            one, pool, bots, ..
        } = &t;
        let [a] = bots[..] else { unreachable!() };
        // A `serve` process whose lease runs an hour more and which never
        // answers (nothing listens on its channel), seating `a`.
        let home: i64 = sqlx::query_scalar(
            "INSERT INTO ladder_processes (role, host, pid, started_ms, beat_ms, expires_ms)
             SELECT 'serve', 'silent', 1, n, n, n + 3600000
             FROM (SELECT (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT AS n) t
             RETURNING id",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO hub_seats (bot, game, seat, opponent, hand, status, home)
             VALUES ($1, 987654321, 0, $1, '[]', '{}', $2)",
        )
        .bind(a)
        .bind(home)
        .execute(pool)
        .await
        .unwrap();
        let lease = one.relay().unwrap().lease();
        // The last relay may start just before the lease is out: two
        // relays' waits (3 s each) past it, and a margin for the test
        // machine.
        let bound = lease + std::time::Duration::from_secs(6 + 5);

        let t0 = std::time::Instant::now();
        let refused = tokio::time::timeout(bound * 2, one.status(a))
            .await
            .expect("a status with a silent home waited on")
            .expect_err("a status with a silent home was answered");
        let took = t0.elapsed();
        assert!(refused.0.contains("try again"), "{}", refused.0);
        assert!(
            took >= lease && took <= bound,
            "the status was refused after {took:?} (lease {lease:?})"
        );

        let t0 = std::time::Instant::now();
        let refused = tokio::time::timeout(bound, one.new_game(a))
            .await
            .expect("a new game with a silent home waited on")
            .expect_err("a new game with a silent home was answered");
        let took = t0.elapsed();
        assert!(refused.0.contains("try again"), "{}", refused.0);
        assert!(
            took <= std::time::Duration::from_secs(3 + 5),
            "the new game was refused after {took:?}"
        );
        // Nothing was changed for the silent home: its seat row stands.
        let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM hub_seats WHERE bot = $1")
            .bind(a)
            .fetch_one(pool)
            .await
            .unwrap();
        assert_eq!(left, 1, "the silent home's seat was removed");
    });
}
