//! Issue 53: the ladder list (`/games?tournaments=hide`) deep in a long
//! list, where its reads start from the finish hours (from 1,000 games
//! skipped) and its probes count tournament games from the page's first
//! place on, holds the whole list's games less the tournament games, on
//! both backends: with tournament games sparse, in a long run and dense,
//! for every kind and bot filter. Its counts of tournament games per hour
//! (`finish_hours.marked`) are what the migration that adds them and a
//! recount (`Store::recount_lists`) find.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use std::collections::HashSet;

use crate::common;
use crate::finish_hours::{counts_hold, kept, recounted, seed};
use crate::ladder::listed;

use common::Db;
use croupier_store::tournaments::{GamesFilter, Marked};
use croupier_store::web::ListCounts;
use croupier_store::GameId;

on_both_backends!(deep_ladder_pages_leave_out_the_tournament_games);

/// Marks finished games as tournament `cup`'s by hand, seats too, as
/// docs/benchmarks.md marks a copy for `bench web`: every ninth game
/// (sparse), every game of a quarter of an hour (a run longer than a
/// page) and two games in three of another half hour (dense). Returns
/// the marked games.
async fn mark(db: &Db, cup: i64) -> HashSet<GameId> {
    const GAMES: &str = "UPDATE games SET tournament_id = $1 WHERE status = 'finished' AND (
            id % 9 = 2
            OR (finished >= '2026-01-01T02:10' AND finished < '2026-01-01T02:25')
            OR (finished >= '2026-01-01T05' AND finished < '2026-01-01T05:30' AND id % 3 <> 0))";
    const SEATS: &str = "UPDATE game_seats SET tournament_id = $1
         WHERE game_id IN (SELECT id FROM games WHERE tournament_id = $1)";
    const MARKED: &str = "SELECT id FROM games WHERE tournament_id = $1";
    let ids: Vec<GameId> = with_pool!(db, |pool| {
        sqlx::query(GAMES).bind(cup).execute(&pool).await.unwrap();
        sqlx::query(SEATS).bind(cup).execute(&pool).await.unwrap();
        sqlx::query_scalar(MARKED)
            .bind(cup)
            .fetch_all(&pool)
            .await
            .unwrap()
    });
    ids.into_iter().collect()
}

async fn deep_ladder_pages_leave_out_the_tournament_games(db: Db) {
    let s = db.open().await;
    let [a, b, _, d] = seed(s.as_ref()).await;
    let filters = [
        (None, None),
        (Some("skullwhist"), None),
        (None, Some(a)),
        (Some("skullwhist"), Some(a)),
        (None, Some(b)),
        (Some("skullwhist"), Some(d)),
    ];
    // Without tournament games the ladder list is the whole list.
    check(s.as_ref(), &filters[..2], &HashSet::new()).await;
    let cup = s
        .tournaments()
        .create_tournament(&common::tournament("cup", Vec::new()))
        .await
        .unwrap();
    let marked = mark(&db, cup).await;
    assert!(marked.len() > 300, "{} games marked", marked.len());
    // Marked by hand, the games are not in the counts.
    assert_ne!(kept(&db.url).await, recounted(&db.url).await);
    // The migration that adds the counts counts the games stored.
    drop(s);
    forget_the_counts(&db).await;
    let s = db.open().await;
    counts_hold(&db.url).await;
    let whole = s.count_finished(&common::list(None, None)).await.unwrap();
    // A recount mends counts gone wrong, and seats without their game's
    // tournament.
    let unmarked_seats = spoil_the_counts(&db).await;
    assert!(unmarked_seats > 50, "{unmarked_seats} seats");
    assert_ne!(kept(&db.url).await, recounted(&db.url).await);
    let counted = s.recount_lists().await.unwrap();
    counts_hold(&db.url).await;
    let want = ListCounts {
        games: whole,
        marked: marked.len() as i64,
        mended_seats: unmarked_seats,
        mended_scores: 0,
    };
    assert_eq!(counted, want);
    check(s.as_ref(), &filters, &marked).await;
}

/// Takes the tournament games' counts away and forgets the migration that
/// adds them (SQLite's 0018, PostgreSQL's 0020, both "marked hours"), as
/// in a database written before it: the next open runs it again.
async fn forget_the_counts(db: &Db) {
    const UNDO: [&str; 2] = [
        "ALTER TABLE finish_hours DROP COLUMN marked",
        "ALTER TABLE finish_totals DROP COLUMN marked",
    ];
    common::forget_migration(db, &UNDO, "marked hours").await;
}

/// Counts wrong in both directions, as a hand edit or an instance of an
/// older version would leave them, and tournament games' seats without
/// their tournament, as an instance older than the seats' tournament
/// would start them. Returns how many seats lost it.
async fn spoil_the_counts(db: &Db) -> u64 {
    const SPOIL: [&str; 4] = [
        "UPDATE finish_hours SET marked = 0 WHERE hour = '2026-01-01T05'",
        "UPDATE finish_hours SET games = games + 2, marked = marked + 1 WHERE hour = '2026-01-01T02'",
        "UPDATE finish_totals SET games = games + 7",
        "UPDATE game_seats SET tournament_id = NULL WHERE tournament_id IS NOT NULL AND game_id % 4 = 1",
    ];
    with_pool!(db, |pool| {
        let mut changed = 0;
        for sql in SPOIL {
            changed = sqlx::query(sql)
                .execute(&pool)
                .await
                .unwrap()
                .rows_affected();
            assert!(changed > 0, "{sql}");
        }
        changed
    })
}

/// The ladder list of each of `filters` (kind, bot), counted and read at
/// chosen offsets deep and shallow, against the whole list less `marked`.
async fn check(
    s: &dyn croupier_store::Store,
    filters: &[(Option<&str>, Option<croupier_store::BotId>)],
    marked: &HashSet<GameId>,
) {
    let t = s.tournaments();
    for &(game, bot) in filters {
        let whole: Vec<GameId> = s
            .games_page(&common::list(game, bot), 0, 10_000)
            .await
            .unwrap()
            .iter()
            .map(|g| g.id)
            .collect();
        let want: Vec<GameId> = whole
            .iter()
            .copied()
            .filter(|id| !marked.contains(id))
            .collect();
        let n = want.len();
        // The ladder's offset whose game is the whole list's 1,000th or
        // after it: there its reads start from the hours.
        let edge = whole[..1_000]
            .iter()
            .filter(|id| !marked.contains(id))
            .count();
        assert!(
            n > edge + 20 && (marked.is_empty() || n + 100 < whole.len()),
            "{game:?} {bot:?}: {n}"
        );
        let f = GamesFilter {
            game: game.map(str::to_string),
            bot,
            tournament: None,
            marked: Marked::Hide,
        };
        assert_eq!(t.count_filtered_games(&f).await.unwrap(), n as i64);
        // Every 97th offset, those on both sides of `edge`, every
        // thirteenth beyond, the last ones and past the end, at two sizes.
        let chosen = |k: &usize| {
            k.is_multiple_of(97)
                || (edge - 20..edge + 20).contains(k)
                || (*k >= edge && k.is_multiple_of(13))
                || k + 60 > n
        };
        for offset in (0..n + 3).filter(chosen) {
            for limit in [1usize, 50] {
                let got = listed(t, &f, offset, limit).await;
                assert_eq!(
                    got,
                    want[offset.min(n)..(offset + limit).min(n)],
                    "{f:?} offset {offset} limit {limit}"
                );
            }
        }
    }
}
