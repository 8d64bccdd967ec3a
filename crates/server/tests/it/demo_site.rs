//! A demo site's tournaments, for the tests that look at tournament pages
//! (the golden pages and the browser test): a finished round-robin of the
//! Goofspiel demo bots, a scheduled one, and one under way.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use croupier_store::tournaments::{EntryRow, NewTournament, NewTournamentGame};
use croupier_store::{BotKind, SqliteStore, Store};
use croupier_web::seed;

/// A finished round-robin of the Goofspiel demo bots (its games played by
/// the demo series' runner), and a scheduled one.
pub async fn tournaments(store: &Arc<SqliteStore>, end: SystemTime) {
    let end_secs = end.duration_since(UNIX_EPOCH).unwrap().as_secs();
    let ids = seed::demo_bots(store.as_ref()).await.unwrap();
    let games: Vec<_> = seed::play_games(30..42, 42, Duration::from_secs(30), end, &ids)
        .await
        .unwrap()
        .into_iter()
        .filter(|g| g.game == "goofspiel")
        .collect();
    let mut bots: Vec<i64> = games.iter().flat_map(|g| g.bots.clone()).collect();
    bots.sort_unstable();
    bots.dedup();
    let names: Vec<(String, String)> = bots
        .iter()
        .map(|b| {
            let (name, _, strategy) = seed::BOTS[ids.iter().position(|i| i == b).unwrap()];
            (name.to_string(), strategy.to_string())
        })
        .collect();
    let entry = |t: i64, seq: usize, frozen: bool| EntryRow {
        tournament_id: t,
        strategy: frozen.then(|| names[seq].1.clone()),
        frozen,
        ..EntryRow::new(bots[seq], seq as i64, &names[seq].0, BotKind::House)
    };
    let new = |name: &str, starts_at: u64| NewTournament {
        starts_at: starts_at as i64,
        seed: 7,
        ..NewTournament::round_robin(
            name,
            "goofspiel",
            (0..bots.len()).map(|i| entry(0, i, false)).collect(),
        )
    };
    let ts = store.tournaments();
    let at = |secs: u64| croupier_arena::record::rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
    let cup = ts
        .create_tournament(&new("autumn-cup", end_secs - 3600))
        .await
        .unwrap();
    let frozen: Vec<EntryRow> = (0..bots.len()).map(|i| entry(cup, i, true)).collect();
    ts.start_tournament(cup, &frozen, 1, &at(end_secs - 3600))
        .await
        .unwrap();
    let plan: Vec<NewTournamentGame> = games
        .iter()
        .enumerate()
        .map(|(i, g)| NewTournamentGame {
            table_no: i as i64,
            game_no: 0,
            seats: g.bots.clone(),
            seed: g.seed,
        })
        .collect();
    ts.plan_round(cup, 1, &plan).await.unwrap();
    for (row, g) in ts.tournament_games(cup).await.unwrap().iter().zip(&games) {
        let id = ts
            .start_tournament_game(row.id, &g.game, &g.bots, g.seed, &g.started)
            .await
            .unwrap();
        store.finish_game(id, &g.end).await.unwrap();
        let ranks: Vec<i64> = g.end.ranks.iter().map(|r| i64::from(*r)).collect();
        ts.finish_tournament_game(row.id, &ranks, &[])
            .await
            .unwrap();
    }
    ts.end_tournament(cup, "finished", &at(end_secs - 600), None)
        .await
        .unwrap();
    ts.create_tournament(&new("winter-cup", end_secs + 90 * 86_400))
        .await
        .unwrap();
    // One under way: its first game dealt and not over.
    let spring = ts
        .create_tournament(&new("spring-cup", end_secs - 1800))
        .await
        .unwrap();
    let frozen: Vec<EntryRow> = (0..bots.len()).map(|i| entry(spring, i, true)).collect();
    ts.start_tournament(spring, &frozen, 1, &at(end_secs - 1800))
        .await
        .unwrap();
    ts.plan_round(spring, 1, &plan).await.unwrap();
    let first = &ts.tournament_games(spring).await.unwrap()[0];
    let g = &games[0];
    ts.start_tournament_game(first.id, &g.game, &g.bots, g.seed, &g.started)
        .await
        .unwrap();
}
