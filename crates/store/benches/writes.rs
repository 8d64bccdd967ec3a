//! The SQLite store's hot writes as the server makes them: a game started
//! and then finished (rated, with its record), through the group-commit
//! writer, one game at a time (each write its own batch) and sixteen at
//! once (the writer batches them). Each iteration is one game, measured
//! twice: as wall time, and as the CPU time of the whole process (every
//! thread: the callers' runtime, the group-commit writer's thread and
//! sqlx's connection thread), which is what a busy server pays per game.
//! Compare two builds with criterion's baselines:
//! `cargo bench -p croupier-store --bench writes -- --save-baseline before`
//! on the old build, then `-- --baseline before` on the new.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use croupier_store::{BotId, GameEnd, SqliteStore, Store};
use nix::sys::resource::{getrusage, UsageWho};

/// A finished two-seat game with a record of a typical size.
fn end(i: u64) -> GameEnd {
    GameEnd {
        finished: "2026-11-27T16:00:00Z".into(),
        scores: vec![Some(40), Some(25)],
        ranks: if i.is_multiple_of(3) {
            vec![1, 1]
        } else {
            vec![1, 2]
        },
        forfeited_by: None,
        record: format!(
            "{{\"game\":\"skullwhist\",\"moves\":\"{}\"}}",
            "x".repeat(3000)
        ),
        facts: None,
    }
}

/// Plays `n` games between bot pairs `pairs`, `at_once` concurrently.
async fn games(store: &Arc<SqliteStore>, pairs: &[[BotId; 2]], n: u64, at_once: usize) {
    let mut left = n;
    let mut i = 0usize;
    while left > 0 {
        let k = left.min(at_once as u64);
        let mut tasks = Vec::with_capacity(k as usize);
        for _ in 0..k {
            let store = Arc::clone(store);
            let bots = pairs[i % pairs.len()];
            let e = end(i as u64);
            i += 1;
            tasks.push(tokio::spawn(async move {
                let id = store
                    .start_game("skullwhist", &bots, 7, "2026-11-27T16:00:00Z")
                    .await
                    .unwrap();
                store.finish_game(id, &e).await.unwrap();
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        left -= k;
    }
}

/// The CPU time this process has used, all threads.
fn cpu_time() -> Duration {
    let u = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage");
    let d = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec().unsigned_abs())
            + Duration::from_micros(t.tv_usec().unsigned_abs())
    };
    d(u.user_time()) + d(u.system_time())
}

fn writes(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let (store, pairs) = rt.block_on(async {
        let store = Arc::new(SqliteStore::open(&url).await.unwrap());
        let mut pairs = Vec::new();
        for p in 0..16 {
            let a = store
                .create_bot(&format!("a{p}"), "h", false)
                .await
                .unwrap();
            let b = store
                .create_bot(&format!("b{p}"), "h", false)
                .await
                .unwrap();
            pairs.push([a, b]);
        }
        (store, pairs)
    });
    let mut g = c.benchmark_group("sqlite: a game started and finished");
    g.measurement_time(Duration::from_secs(8));
    for at_once in [1usize, 16] {
        g.bench_function(format!("{at_once} at once, wall time"), |b| {
            b.iter_custom(|n| {
                let t = Instant::now();
                rt.block_on(games(&store, &pairs, n, at_once));
                t.elapsed()
            })
        });
        g.bench_function(format!("{at_once} at once, CPU time"), |b| {
            b.iter_custom(|n| {
                let t = cpu_time();
                rt.block_on(games(&store, &pairs, n, at_once));
                cpu_time().saturating_sub(t)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, writes);
criterion_main!(benches);
