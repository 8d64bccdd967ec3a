//! PostgreSQL only (issue 13): the live tables several processes share.
//! A pull bot's mailbox is bounded and a post beyond the bound writes
//! nothing; a bot's request that stops waiting cannot hang on a stuck
//! pairing; a waiting bot that is seated, or being dealt a game by another
//! instance, is not taken as a partner; a process leaving in order waits
//! for its own deal in flight and closes that game too. Without PostgreSQL the tests say so
//! and pass, except under CI=true.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use crate::common;

use std::time::{Duration, Instant};

use croupier_store::leases::LeasedGame;
use croupier_store::postgres::cluster::Cluster;

use sqlx::PgPool;

async fn setup() -> Option<(Cluster, PgPool, Vec<i64>)> {
    let Some(db) = common::postgres().await else {
        eprintln!("skipped: no PostgreSQL");
        return None;
    };
    let s = db.open().await;
    let mut bots = Vec::new();
    for i in 0..3 {
        bots.push(s.create_bot(&format!("b{i}"), "h", false).await.unwrap());
    }
    let cluster = s.cluster().expect("a PostgreSQL store shares live tables");
    let pool = PgPool::connect(&db.url).await.unwrap();
    Some((cluster, pool, bots))
}

/// Waits until no other session of this database is inside a transaction
/// (a dropped pairing's rollback runs after the drop). Sessions idle in a
/// transaction are not enough: while its `ROLLBACK` runs, a session is
/// `active` and still holds its locks.
async fn settled(pool: &PgPool) {
    for _ in 0..100 {
        let open: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()
             AND backend_type = 'client backend' AND xact_start IS NOT NULL",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        if open == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("a transaction stayed open");
}

fn lines(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("{{\"type\":\"m\",\"i\":{i}}}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_pull_mailbox_refuses_more_until_the_bot_acknowledges() {
    let Some((c, pool, bots)) = setup().await else {
        return;
    };
    let bot = bots[0];
    // Eight fit under a bound of ten; three more would not.
    assert!(c
        .pull_post(bot, "m1", &lines(8), Some(7), 10)
        .await
        .unwrap());
    assert!(!c.pull_post(bot, "m1", &lines(3), None, 10).await.unwrap());
    // Nothing of the refused post was written.
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pull_messages WHERE bot = $1")
        .bind(bot)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(n, 8);
    assert!(c.pull_post(bot, "m1", &lines(2), None, 10).await.unwrap());
    assert!(!c.pull_post(bot, "m1", &lines(1), None, 10).await.unwrap());
    // A post larger than the bound never fits, even to an empty box.
    assert!(!c
        .pull_post(bots[1], "m2", &lines(11), Some(7), 10)
        .await
        .unwrap());
    // The match was recorded with its first messages (home 7).
    assert_eq!(c.pull_home(bot, "m1").await.unwrap(), Some(7));
    assert_eq!(c.pull_home(bots[1], "m2").await.unwrap(), None);
    // The bot fetches and acknowledges six: six more fit, not seven.
    let got = c.pull_fetch(bot, 0, 256).await.unwrap();
    assert_eq!(got.len(), 10);
    assert_eq!((got[0].0, got[9].0), (1, 10));
    let got = c.pull_fetch(bot, 6, 256).await.unwrap();
    assert_eq!(got.first().map(|m| m.0), Some(7));
    assert!(!c.pull_post(bot, "m1", &lines(7), None, 10).await.unwrap());
    assert!(c.pull_post(bot, "m1", &lines(6), None, 10).await.unwrap());
    let got = c.pull_fetch(bot, 10, 256).await.unwrap();
    assert_eq!(
        got.iter().map(|m| m.0).collect::<Vec<_>>(),
        (11..=16).collect::<Vec<_>>()
    );
    // An acknowledgement beyond the last message (a bot remembering an
    // earlier run) does not make room that is not there.
    let _ = c.pull_fetch(bot, 1_000, 256).await.unwrap();
    assert!(c.pull_post(bot, "m1", &lines(10), None, 10).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_to_wait_behind_a_stuck_pairing_fails_instead_of_hanging() {
    let Some((c, pool, bots)) = setup().await else {
        return;
    };
    let (a, b) = (bots[0], bots[1]);
    c.wait(b, 30.0).await.unwrap();
    // `a` takes `b` and the deal never commits: `b`'s row stays locked.
    let stuck = c.take_partner(a, false).await.unwrap().expect("b waits");
    assert_eq!(stuck.partner, b);
    let t0 = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(60), c.stop_waiting(b))
        .await
        .expect("stop_waiting hung behind the stuck pairing");
    assert!(r.is_err(), "{r:?}");
    assert!(r.unwrap_err().to_string().contains("lock"));
    eprintln!("stop_waiting gave up after {:?}", t0.elapsed());
    drop(stuck);
    settled(&pool).await;
    // Once the pairing is gone, `b` stops waiting as usual.
    assert!(c.stop_waiting(b).await.unwrap());
    assert!(!c.stop_waiting(b).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seated_or_claimed_bot_is_not_taken_as_a_partner() {
    let Some((c, pool, bots)) = setup().await else {
        return;
    };
    let (a, b, other) = (bots[0], bots[1], bots[2]);
    // `b` is seated in a game (another instance dealt it) and still has a
    // waiting row (an earlier poll's, not yet removed).
    sqlx::query(
        "INSERT INTO hub_seats (bot, game, seat, opponent, hand, status, home)
         VALUES ($1, 99, 0, $2, '', '{}', 1)",
    )
    .bind(b)
    .bind(other)
    .execute(&pool)
    .await
    .unwrap();
    c.wait(b, 30.0).await.unwrap();
    assert!(c.take_partner(a, false).await.unwrap().is_none());
    // (The refused take's transaction, and its lock on `a`, end after it.)
    settled(&pool).await;
    // Unseated, it is taken.
    sqlx::query("DELETE FROM hub_seats WHERE bot = $1")
        .bind(b)
        .execute(&pool)
        .await
        .unwrap();
    let p = c
        .take_partner(a, false)
        .await
        .unwrap()
        .expect("b waits, unseated");
    assert_eq!(p.partner, b);
    drop(p);
    settled(&pool).await;
    // Another instance is dealing `b` a game as the bot that asked (it
    // holds `b`'s deal lock until its seats are written): not taken.
    let mut dealing = pool.begin().await.unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock(3013, $1::int)")
        .bind(b as i32)
        .execute(&mut *dealing)
        .await
        .unwrap();
    assert!(c.take_partner(a, false).await.unwrap().is_none());
    dealing.rollback().await.unwrap();
    settled(&pool).await;
    let p = c
        .take_partner(a, false)
        .await
        .unwrap()
        .expect("b waits, free");
    assert_eq!(p.partner, b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_games_after_a_restart_spares_every_registered_process() {
    let Some(db) = common::postgres().await else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    let s = db.open().await;
    let pool = PgPool::connect(&db.url).await.unwrap();
    let mut bots = Vec::new();
    for i in 0..6 {
        bots.push(s.create_bot(&format!("r{i}"), "h", false).await.unwrap());
    }
    let process = |pid: i64, ttl_ms: i64| common::process("worker", pid, ttl_ms);
    let leases = s.leases();
    let live = leases
        .register_process(&process(1, 60_000))
        .await
        .unwrap()
        .id;
    // Registered, but its registration runs out (below): the reaper's.
    let expired = leases
        .register_process(&process(2, 60_000))
        .await
        .unwrap()
        .id;
    // Gone from the registry without a reaper (its games have no owner).
    let vanished = leases
        .register_process(&process(3, 60_000))
        .await
        .unwrap()
        .id;
    let mut games = Vec::new();
    for (i, p) in [live, expired, vanished].into_iter().enumerate() {
        let pair = [bots[2 * i], bots[2 * i + 1]];
        let g = LeasedGame {
            process: p,
            game: "goofspiel",
            bots: &pair,
            claim: &pair,
            seed: 1,
            started: "t0",
        };
        games.push(leases.start_leased_game(&g).await.unwrap().expect("dealt"));
    }
    sqlx::query("DELETE FROM ladder_processes WHERE id = $1")
        .bind(vanished)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE ladder_processes SET expires_ms = 0 WHERE id = $1")
        .bind(expired)
        .execute(&pool)
        .await
        .unwrap();
    // A game nobody leased (dealt before any registration).
    let unleased = s
        .start_game("goofspiel", &bots[..2], 2, "t0")
        .await
        .unwrap();
    assert_eq!(s.abort_running("restart", "t1").await.unwrap(), 2);
    let status = |id| {
        let s = std::sync::Arc::clone(&s);
        async move { s.game(id).await.unwrap().unwrap().status }
    };
    assert_eq!(status(games[0]).await, "running");
    assert_eq!(status(games[1]).await, "running");
    assert_eq!(status(games[2]).await, "aborted");
    assert_eq!(status(unleased).await, "aborted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_leaving_waits_for_its_claim_in_flight_and_closes_its_game() {
    let Some(db) = common::postgres().await else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    let s = db.open().await;
    let pool = PgPool::connect(&db.url).await.unwrap();
    let mut bots = Vec::new();
    for i in 0..2 {
        bots.push(s.create_bot(&format!("l{i}"), "h", false).await.unwrap());
    }
    let leases = s.leases();
    let me = leases
        .register_process(&common::process("serve", 1, 60_000))
        .await
        .unwrap()
        .id;
    // A claim of this process in flight: it holds its registration (as
    // `start_leased_game` does) and deals a game before it commits.
    let mut claim = pool.begin().await.unwrap();
    sqlx::query("SELECT id FROM ladder_processes WHERE id = $1 FOR SHARE")
        .bind(me)
        .execute(&mut *claim)
        .await
        .unwrap();
    let leave = {
        let s = std::sync::Arc::clone(&s);
        tokio::spawn(async move {
            s.leases()
                .reap_processes(
                    croupier_store::leases::Reap::One(me),
                    "process stopped",
                    "t1",
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!leave.is_finished(), "leaving did not wait for the claim");
    let game: i64 = sqlx::query_scalar(
        "INSERT INTO games (game, status, bot1, bot2, seats, seed, started, leased_by)
         VALUES ('goofspiel', 'running', $1, $2, 2, 9, 't0', $3) RETURNING id",
    )
    .bind(bots[0])
    .bind(bots[1])
    .bind(me)
    .fetch_one(&mut *claim)
    .await
    .unwrap();
    claim.commit().await.unwrap();
    let reaped = leave.await.unwrap().unwrap();
    assert_eq!(reaped.len(), 1, "its own registration was skipped");
    assert_eq!(reaped[0].games, vec![game]);
    let status: String = sqlx::query_scalar("SELECT status FROM games WHERE id = $1")
        .bind(game)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(status, "aborted");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM ladder_processes WHERE id = $1")
        .bind(me)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
}
