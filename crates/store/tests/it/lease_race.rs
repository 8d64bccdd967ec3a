//! PostgreSQL only (issue 13): many processes race for the same bots and
//! reap the same dead processes at once. Every claim and reap is one
//! transaction; claims insert-or-conflict on the bot's lease row, reapers
//! lock the dead registrations `FOR UPDATE SKIP LOCKED`. Without PostgreSQL
//! the test says so and passes, except under CI=true.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use crate::common;

use std::collections::HashSet;
use std::sync::Arc;

use croupier_store::leases::{LeasedGame, NewProcess, Reap};
use croupier_store::Store;

fn process(n: usize, ttl_ms: i64) -> NewProcess {
    NewProcess {
        role: "worker".into(),
        host: format!("host{n}"),
        pid: n as i64,
        ttl_ms,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_claims_seat_each_bot_once_and_racing_reapers_close_each_game_once() {
    let Some(db) = common::postgres().await else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    let s: Arc<dyn Store> = db.open().await;
    let mut bots = Vec::new();
    for i in 0..6 {
        bots.push(s.create_bot(&format!("r{i}"), "h", false).await.unwrap());
    }
    let mut procs = Vec::new();
    for n in 0..8 {
        procs.push(
            s.leases()
                .register_process(&process(n, 60_000))
                .await
                .unwrap()
                .id,
        );
    }
    for round in 0..20 {
        // 16 claimers, each wanting two neighbouring bots (overlapping).
        let mut tasks = tokio::task::JoinSet::new();
        for k in 0..16usize {
            let s = Arc::clone(&s);
            let pair = vec![bots[k % 6], bots[(k + 1 + round) % 6]];
            let pair = if pair[0] == pair[1] {
                vec![pair[0], bots[(k + 2) % 6]]
            } else {
                pair
            };
            let p = procs[k % procs.len()];
            tasks.spawn(async move {
                let g = LeasedGame {
                    process: p,
                    game: "goofspiel",
                    bots: &pair,
                    claim: &pair,
                    seed: round as i64,
                    started: "t",
                };
                let won = s.leases().start_leased_game(&g).await.unwrap();
                (p, pair.clone(), won)
            });
        }
        let mut seated = HashSet::new();
        let mut winners = Vec::new();
        while let Some(r) = tasks.join_next().await {
            let (p, pair, won) = r.unwrap();
            if let Some(id) = won {
                for b in &pair {
                    assert!(seated.insert(*b), "round {round}: bot {b} seated twice");
                }
                winners.push((p, pair, id));
            }
        }
        assert!(!winners.is_empty(), "round {round}: nobody won");
        // Exactly the winners' games were dealt.
        assert_eq!(
            s.count_games("running").await.unwrap(),
            winners.len() as i64
        );
        let mut taken = s.leases().taken_bots().await.unwrap();
        taken.sort_unstable();
        let mut expect: Vec<i64> = seated.into_iter().collect();
        expect.sort_unstable();
        assert_eq!(taken, expect, "round {round}");
        for (p, pair, id) in winners {
            s.abort_game(id, "round over", "t").await.unwrap();
            s.leases().release_bots(p, &pair, 0).await.unwrap();
        }
    }

    // Five processes die holding a game each; four reapers race.
    let mut dead = Vec::new();
    for n in 0..5 {
        let p = s
            .leases()
            .register_process(&process(100 + n, 60_000))
            .await
            .unwrap()
            .id;
        let pair = [bots[n], bots[(n + 1) % 6]];
        let g = LeasedGame {
            process: p,
            game: "goofspiel",
            bots: &pair,
            claim: &[],
            seed: 1,
            started: "t",
        };
        let id = s.leases().start_leased_game(&g).await.unwrap().unwrap();
        assert!(s.leases().heartbeat(p, -1).await.unwrap());
        dead.push((p, id));
    }
    let mut reapers = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let s = Arc::clone(&s);
        reapers.spawn(async move {
            s.leases()
                .reap_processes(Reap::Expired, "worker lost", "t9")
                .await
                .unwrap()
        });
    }
    let mut reaped = Vec::new();
    while let Some(r) = reapers.join_next().await {
        for x in r.unwrap() {
            reaped.push((x.process.id, x.games));
        }
    }
    reaped.sort_unstable();
    let expect: Vec<(i64, Vec<i64>)> = dead.iter().map(|(p, g)| (*p, vec![*g])).collect();
    assert_eq!(reaped, expect, "each dead process reaped exactly once");
    assert_eq!(s.count_games("running").await.unwrap(), 0);
    let live: Vec<i64> = s
        .leases()
        .processes()
        .await
        .unwrap()
        .iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(live, procs);
}
