//! A tournament's page as the website makes it from the rows it reads
//! ([`view::assemble`]: standings with their tie-breaks, the crosstable,
//! the byes and every game), for round-robins of 24, 64 and 256 entries,
//! half played (the first half of the rounds done, the round after it
//! being played): a running tournament's page is made afresh for each
//! request. 256 is the most entries a tournament may name.
//! `held_up` measures what a page's making does to the other tasks of its
//! runtime.
//! Compare two builds with criterion's baselines:
//! `cargo bench -p croupier-competition --bench tournament_view -- --save-baseline before`
//! on the old build, then `-- --baseline before` on the new.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use croupier_competition::tournaments::plan::{round_robin_pairs, round_robin_rounds, table_games};
use croupier_competition::tournaments::view;
use croupier_store::tournaments::{EntryRow, NewTournament, TournamentGameRow, TournamentRow};
use croupier_store::{BotKind, Store};

/// A round-robin of `n` entries (one deal a table, played both ways),
/// its first half of rounds done and the next one half done.
fn half_played(n: usize) -> (TournamentRow, Vec<EntryRow>, Vec<TournamentGameRow>) {
    let rounds = round_robin_rounds(n);
    let current = rounds / 2 + 1;
    let t = TournamentRow {
        id: 1,
        name: "cup".into(),
        game: "goofspiel".into(),
        variant: None,
        format: "round-robin".into(),
        rounds,
        deals: 1,
        duplicate: true,
        seats: 2,
        move_ms: 300,
        budget_ms: None,
        starts_at: 0,
        seed: 7,
        status: "running".into(),
        current_round: current,
        all_bots: false,
        created_by: None,
        created_at: "0".into(),
        started_at: None,
        finished_at: None,
        reason: None,
        winner: None,
    };
    let entries: Vec<EntryRow> = (0..n as i64)
        .map(|i| EntryRow {
            tournament_id: 1,
            frozen: true,
            ..EntryRow::new(100 + i, i, format!("bot-{i}"), BotKind::House)
        })
        .collect();
    let mut games = Vec::new();
    for round in 1..=current {
        for (table, (a, b)) in round_robin_pairs(n, round).into_iter().enumerate() {
            let members = [entries[a].bot, entries[b].bot];
            for g in table_games(&t, round, table as i64, &members) {
                let id = games.len() as i64 + 1;
                // The current round: every other table still to play.
                let done = round < current || table % 2 == 0;
                // Lower bot ids win, a game in seven is a draw; a fault
                // now and then.
                let ranks = match (id % 7 == 0, g.seats[0] < g.seats[1]) {
                    (true, _) => "1,1",
                    (false, true) => "1,2",
                    (false, false) => "2,1",
                };
                games.push(TournamentGameRow {
                    id,
                    tournament_id: 1,
                    round,
                    table_no: g.table_no,
                    game_no: g.game_no,
                    seats: format!("{},{}", g.seats[0], g.seats[1]),
                    seed: g.seed,
                    status: if done { "done" } else { "pending" }.into(),
                    game_id: done.then_some(id),
                    ranks: done.then(|| ranks.into()),
                    faults: done.then(|| if id % 13 == 0 { "1" } else { "" }.into()),
                    scores: done.then(|| "40,38".into()),
                });
            }
        }
    }
    (t, entries, games)
}

fn tournament_view(c: &mut Criterion) {
    let mut group = c.benchmark_group("tournament_view");
    group.sample_size(10);
    for n in [24, 64, 256] {
        let (t, entries, games) = half_played(n);
        let id = BenchmarkId::new(
            "half_played_round_robin",
            format!("{n}_bots_{}_games", games.len()),
        );
        group.bench_with_input(id, &n, |b, _| {
            b.iter(|| view::assemble(t.clone(), &entries, &games));
        });
        // The page's JSON twin (`/json/tournaments/NAME`): every game and
        // every pair of the crosstable.
        let page = view::assemble(t.clone(), &entries, &games);
        let id = BenchmarkId::new("json_twin", format!("{n}_bots_{}_games", games.len()));
        group.bench_with_input(id, &n, |b, _| {
            b.iter(|| serde_json::to_vec(&page).unwrap().len());
        });
    }
    group.finish();
}

/// A SQLite store with a round-robin of `n` house bots (one deal a table,
/// played both ways), its rounds planned up to the middle as in
/// [`half_played`], and the tournament's row.
async fn planned(n: usize, dir: &std::path::Path) -> (std::sync::Arc<dyn Store>, TournamentRow) {
    let url = format!("sqlite://{}?mode=rwc", dir.join("cup.db").display());
    let store = croupier_store::open(&url).await.unwrap();
    let mut entries = Vec::new();
    for i in 0..n {
        let name = format!("bot-{i}");
        let bot = store.ensure_house_bot(&name, "goofspiel").await.unwrap();
        entries.push(EntryRow::new(bot, i as i64, name, BotKind::House));
    }
    let ts = store.tournaments();
    // One deal a table played both ways, as `half_played`.
    let new = NewTournament {
        duplicate: true,
        ..NewTournament::round_robin("cup", "goofspiel", entries.clone())
    };
    let id = ts.create_tournament(&new).await.unwrap();
    let rounds = round_robin_rounds(n);
    assert!(ts
        .start_tournament(id, &entries, rounds, "t0")
        .await
        .unwrap());
    let t = ts.tournament(id).await.unwrap().unwrap();
    let entries = ts.tournament_entries(id).await.unwrap();
    for round in 1..=rounds / 2 + 1 {
        let mut games = Vec::new();
        for (table, (a, b)) in round_robin_pairs(n, round).into_iter().enumerate() {
            let members = [entries[a].bot, entries[b].bot];
            games.extend(table_games(&t, round, table as i64, &members));
        }
        assert!(ts.plan_round(id, round, &games).await.unwrap());
    }
    let t = ts.tournament(id).await.unwrap().unwrap();
    (store, t)
}

/// A runtime of `workers` threads, as `croupier serve --threads N`.
fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}

fn read_and_assemble(c: &mut Criterion) {
    let rt = runtime(2);
    let dir = tempfile::tempdir().unwrap();
    let (store, t) = rt.block_on(planned(256, dir.path()));
    let mut group = c.benchmark_group("tournament_view");
    group.sample_size(10);
    group.bench_function("read_and_assemble/256_bots_sqlite", |b| {
        b.iter(|| rt.block_on(view::view(store.as_ref(), t.clone())).unwrap());
    });
    group.bench_function("read_only/256_bots_sqlite", |b| {
        b.iter(|| {
            rt.block_on(store.tournaments().tournament_games(t.id))
                .unwrap()
        });
    });
    group.finish();
}

/// How long a request waits for a runtime thread while a page of the
/// 256-entry round-robin is made: a task on a runtime of one worker (as
/// `croupier serve --threads 1`) sleeps 1 ms again and again, and each
/// "time" criterion reports is the longest it woke late during one page's
/// making. `assembled_here` puts the page together on that worker, as
/// every page was before 7 Dec 2026 (its rows read as the store reads them
/// now, yielding every 128); `view` is the server's own path
/// ([`view::view`], off the runtime for a tournament this big);
/// `idle_10ms` is the timer alone, for 10 ms with nothing else to run.
fn held_up(c: &mut Criterion) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let rt = runtime(1);
    let dir = tempfile::tempdir().unwrap();
    let (store, t) = rt.block_on(planned(256, dir.path()));
    let latest = Arc::new(AtomicU64::new(0));
    let ticker = rt.spawn({
        let latest = Arc::clone(&latest);
        async move {
            loop {
                let due = Instant::now() + Duration::from_millis(1);
                tokio::time::sleep_until(due.into()).await;
                let late = due.elapsed().as_nanos() as u64;
                latest.fetch_max(late, Ordering::Relaxed);
            }
        }
    });
    let mut group = c.benchmark_group("tournament_view/held_up_1ms_timer");
    group.sample_size(10);
    // The timer alone: how late it wakes with nothing else to run.
    group.bench_function("idle_10ms", |b| {
        b.iter_custom(|iters| {
            let mut worst = Duration::ZERO;
            for _ in 0..iters {
                latest.store(0, Ordering::Relaxed);
                rt.block_on(async { tokio::time::sleep(Duration::from_millis(10)).await });
                worst += Duration::from_nanos(latest.load(Ordering::Relaxed));
            }
            worst
        });
    });
    for here in [true, false] {
        let name = if here { "assembled_here" } else { "view" };
        group.bench_function(format!("{name}/256_bots_sqlite"), |b| {
            b.iter_custom(|iters| {
                let mut worst = Duration::ZERO;
                for _ in 0..iters {
                    let (store, t) = (Arc::clone(&store), t.clone());
                    latest.store(0, Ordering::Relaxed);
                    let page = rt.spawn(async move {
                        if here {
                            let ts = store.tournaments();
                            let entries = ts.tournament_entries(t.id).await.unwrap();
                            let games = ts.tournament_games(t.id).await.unwrap();
                            view::assemble(t, &entries, &games).progress.done
                        } else {
                            view::view(store.as_ref(), t).await.unwrap().progress.done
                        }
                    });
                    rt.block_on(page).unwrap();
                    worst += Duration::from_nanos(latest.load(Ordering::Relaxed));
                }
                worst
            });
        });
    }
    group.finish();
    ticker.abort();
}

criterion_group!(benches, tournament_view, read_and_assemble, held_up);
criterion_main!(benches);
