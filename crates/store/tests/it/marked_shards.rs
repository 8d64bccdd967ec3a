//! Issue 53: the counts of tournament games per hour (`finish_hours.marked`)
//! written by two instances at once, each in its own shard on PostgreSQL
//! (the writing process's id; one writer on SQLite), then taken away and
//! counted again by their migration beside the instances' shards, then
//! recounted: each time what the test's own count of the games finds, and
//! the ladder list's length right.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use crate::common;
use crate::finish_hours::counts_hold;

use common::Db;
use croupier_store::tournaments::{GamesFilter, Marked, NewTournamentGame};
use croupier_store::{GameEnd, Store};

on_both_backends!(two_instances_count_their_tournament_games_in_their_shards);

fn end(at: String) -> GameEnd {
    GameEnd {
        finished: at,
        scores: vec![Some(2), Some(1)],
        ranks: vec![1, 2],
        forfeited_by: None,
        record: "{}".into(),
        facts: None,
    }
}

/// How many writers' shards `finish_hours` holds (1 on SQLite).
async fn shards(db: &Db) -> i64 {
    if db.url.starts_with("sqlite:") {
        return 1;
    }
    with_pool!(db, |pool| sqlx::query_scalar(
        "SELECT COUNT(DISTINCT shard) FROM finish_hours"
    )
    .fetch_one(&pool)
    .await
    .unwrap())
}

/// "Ladder games only": its length, and its games read.
async fn ladder(s: &dyn Store) -> (i64, usize) {
    let f = GamesFilter {
        marked: Marked::Hide,
        ..GamesFilter::default()
    };
    let t = s.tournaments();
    let n = t.count_filtered_games(&f).await.unwrap();
    (n, t.filtered_games(&f, 0, 1_000).await.unwrap().len())
}

async fn two_instances_count_their_tournament_games_in_their_shards(db: Db) {
    let one = db.open().await;
    let two = db.open().await;
    for (n, s) in [&one, &two].into_iter().enumerate() {
        let p = s
            .leases()
            .register_process(&common::process("serve", 100 + n as i64, 60_000))
            .await
            .unwrap();
        s.leases().lease_new_games(p.id);
    }
    let a = one.create_bot("a", "h", false).await.unwrap();
    let b = one.create_bot("b", "h", false).await.unwrap();
    let t = one.tournaments();
    let entries = vec![common::entry(a, 0, "a"), common::entry(b, 1, "b")];
    let cup = common::running_cup(t, "cup", entries).await;
    let plans: Vec<NewTournamentGame> = (0..20).map(|n| common::plan(n, vec![a, b], n)).collect();
    t.plan_round(cup, 1, &plans).await.unwrap();
    let mut plans = t.tournament_games(cup).await.unwrap().into_iter();
    // 60 games over eight hours, each played by one instance or the other:
    // every third a tournament's.
    for n in 0..60u32 {
        let s = if n % 2 == 0 { &one } else { &two };
        let id = if n % 3 == 0 {
            let plan = plans.next().unwrap().id;
            s.tournaments()
                .start_tournament_game(plan, "goofspiel", &[a, b], 1, "t1")
                .await
                .unwrap()
        } else {
            s.start_game("goofspiel", &[a, b], 1, "t1").await.unwrap()
        };
        let at = format!("2026-01-01T{:02}:{:02}:00.000Z", n % 8, n);
        s.finish_game(id, &end(at)).await.unwrap();
    }
    counts_hold(&db.url).await;
    let two_writers = if db.url.starts_with("sqlite:") { 1 } else { 2 };
    assert_eq!(shards(&db).await, two_writers);
    assert_eq!(ladder(one.as_ref()).await, (40, 40));
    // The migration run again counts the tournament games in shard 0,
    // beside the instances' shards.
    drop((one, two));
    common::forget_migration(
        &db,
        &[
            "ALTER TABLE finish_hours DROP COLUMN marked",
            "ALTER TABLE finish_totals DROP COLUMN marked",
        ],
        "marked hours",
    )
    .await;
    let s = db.open().await;
    counts_hold(&db.url).await;
    assert_eq!(ladder(s.as_ref()).await, (40, 40));
    // A recount counts everything in shard 0.
    let counted = s.recount_lists().await.unwrap();
    assert_eq!((counted.games, counted.marked), (60, 20));
    counts_hold(&db.url).await;
    assert_eq!(shards(&db).await, 1);
    assert_eq!(ladder(s.as_ref()).await, (40, 40));
}
