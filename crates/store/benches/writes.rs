//! The store's hot writes as the server makes them: a game started and
//! then finished (rated, with its record), one game at a time and sixteen
//! at once. On SQLite they go through the group-commit writer (one game at
//! a time, each write is its own batch; sixteen at once, the writer
//! batches them); on PostgreSQL, in a throw-away cluster (`scratch`,
//! without fsync) when PostgreSQL is installed, through the finish
//! batches. Each iteration is one game, measured twice: as wall time, and
//! as CPU time, which is what a busy server pays per game: the whole
//! process (every thread: the callers' runtime, SQLite's writer thread
//! and sqlx's connection threads), plus on PostgreSQL the cluster's
//! processes (its backends, and its writers and autovacuum).
//! Compare two builds with criterion's baselines:
//! `cargo bench -p croupier-store --bench writes -- --save-baseline before`
//! on the old build, then `-- --baseline before` on the new.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use croupier_store::scratch::ScratchCluster;
use croupier_store::{BotId, GameEnd, PgStore, SqliteStore, Store};
use nix::time::ClockId;

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
async fn games(store: &Arc<dyn Store>, pairs: &[[BotId; 2]], n: u64, at_once: usize) {
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
    Duration::from(
        ClockId::CLOCK_PROCESS_CPUTIME_ID
            .now()
            .expect("the process's CPU clock"),
    )
}

/// The CPU time of PostgreSQL's server process `pid` and of its children,
/// the live ones' own and the ended ones' (reaped into the server's).
fn pg_cpu_time(pid: u32) -> Duration {
    let ticks = |stat: &str, fields: std::ops::Range<usize>| -> u64 {
        // After the command's closing parenthesis: state is field 0,
        // ppid 1, utime 11, stime 12, cutime 13, cstime 14.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<&str> = rest.split_whitespace().collect();
        fields
            .map(|i| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
            .sum()
    };
    let mut total = 0;
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let name = entry.file_name();
        let Some(p) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        if p == pid {
            total += ticks(&stat, 11..15);
        } else if ticks(&stat, 1..2) == u64::from(pid) {
            total += ticks(&stat, 11..13);
        }
    }
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as u64;
    Duration::from_micros(total * 1_000_000 / hz)
}

/// Creates sixteen pairs of bots.
async fn pairs(store: &Arc<dyn Store>) -> Vec<[BotId; 2]> {
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
    pairs
}

/// One backend's group: wall and CPU time per game, one and sixteen at
/// once. `server` adds a database server's CPU time to the process's.
fn group(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    name: &str,
    store: &Arc<dyn Store>,
    server: Option<u32>,
) {
    let pairs = rt.block_on(pairs(store));
    let cpu = || cpu_time() + server.map_or(Duration::ZERO, pg_cpu_time);
    let mut g = c.benchmark_group(format!("{name}: a game started and finished"));
    g.measurement_time(Duration::from_secs(8));
    for at_once in [1usize, 16] {
        g.bench_function(format!("{at_once} at once, wall time"), |b| {
            b.iter_custom(|n| {
                let t = Instant::now();
                rt.block_on(games(store, &pairs, n, at_once));
                t.elapsed()
            })
        });
        g.bench_function(format!("{at_once} at once, CPU time"), |b| {
            b.iter_custom(|n| {
                let t = cpu();
                rt.block_on(games(store, &pairs, n, at_once));
                cpu().saturating_sub(t)
            })
        });
    }
    g.finish();
}

fn writes(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let sqlite: Arc<dyn Store> = Arc::new(rt.block_on(SqliteStore::open(&url)).unwrap());
    group(c, &rt, "sqlite", &sqlite, None);
    drop(sqlite);
    match ScratchCluster::start(false) {
        Ok(cluster) => {
            let pg: Arc<dyn Store> = rt.block_on(async {
                let url = cluster.create_database().await.unwrap();
                Arc::new(PgStore::open(&url).await.unwrap())
            });
            group(c, &rt, "postgres", &pg, cluster.server_pid());
        }
        Err(e) => eprintln!("postgres: skipped ({e})"),
    }
}

criterion_group!(benches, writes);
criterion_main!(benches);
