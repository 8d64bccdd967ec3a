//! Issue 53: a page number deep in a long list starts from the hour its
//! games fall in (`finish_hours`, counted by the statements that finish
//! or import games), and holds exactly the games the newest-first order
//! has there, on both backends, whichever way the games were written
//! (imported, finished by a game, aborted, seats left unranked); and the
//! counts are what a recount of the games finds.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use crate::common;

use common::Db;
use croupier_store::web::{GameSummary, ImportGame, PageAt};
use croupier_store::GameEnd;

on_both_backends!(deep_page_numbers_hold_the_games_of_the_newest_first_order);

fn end(ranks: Vec<u8>, at: String) -> GameEnd {
    GameEnd {
        finished: at,
        scores: ranks.iter().map(|r| Some(10 - i64::from(*r))).collect(),
        ranks,
        forfeited_by: None,
        record: "{}".into(),
        facts: None,
    }
}

/// The finish time of the `i`th imported game: seven hours, about 310
/// games each, with ties, and games on both sides of each hour's edge.
fn finish_time(i: i64) -> String {
    let hour = i % 7;
    match i % 11 {
        0 => format!("2026-01-01T{hour:02}:00:00.000Z"),
        1 => format!("2026-01-01T{hour:02}:59:59.999Z"),
        k => format!("2026-01-01T{hour:02}:{:02}:{:02}.000Z", k * 5, i % 60),
    }
}

/// One list's games in one hour: bot (0 for every bot), kind, hour, games,
/// and tournament games among them.
pub(crate) type Hour = (i64, String, String, i64, i64);

/// What `finish_hours` holds, summed over writers.
const KEPT: &str = "SELECT bot, game, hour, CAST(SUM(games) AS BIGINT),
         CAST(SUM(marked) AS BIGINT) FROM finish_hours
     GROUP BY bot, game, hour HAVING SUM(games) <> 0 ORDER BY bot, game, hour";

/// The same counted afresh from the games and seats the lists show, and
/// those of them the tournament lists show (written here as the tests'
/// own reading of which those are: a game with a tournament, a seat with
/// one, as the tournament indexes hold them).
const RECOUNT: &str = "SELECT bot, game, hour, CAST(COUNT(*) AS BIGINT),
         CAST(SUM(CASE WHEN tournament_id IS NULL THEN 0 ELSE 1 END) AS BIGINT) FROM (
         SELECT 0 AS bot, game, substr(finished, 1, 13) AS hour, tournament_id FROM games
         WHERE status = 'finished' AND finished IS NOT NULL
         UNION ALL
         SELECT s.bot, g.game, substr(s.finished, 1, 13), s.tournament_id FROM game_seats s
         JOIN games g ON g.id = s.game_id
         WHERE s.finished IS NOT NULL AND s.rank IS NOT NULL) c
     GROUP BY bot, game, hour ORDER BY bot, game, hour";

/// What `finish_totals` holds, summed over writers (the hour left empty).
const TOTALS: &str = "SELECT bot, game, '' AS hour, CAST(SUM(games) AS BIGINT),
         CAST(SUM(marked) AS BIGINT)
     FROM finish_totals GROUP BY bot, game HAVING SUM(games) <> 0 ORDER BY bot, game";

async fn rows(url: &str, sql: &str) -> Vec<Hour> {
    if url.starts_with("sqlite") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::query_as(sql).fetch_all(&pool).await.unwrap()
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query_as(sql).fetch_all(&pool).await.unwrap()
    }
}

/// What `finish_hours` holds.
pub(crate) async fn kept(url: &str) -> Vec<Hour> {
    rows(url, KEPT).await
}

/// What it should hold.
pub(crate) async fn recounted(url: &str) -> Vec<Hour> {
    let all = rows(url, RECOUNT).await;
    assert!(all.len() > 20, "{} hours", all.len());
    all
}

/// Each list's length (the hour left empty), from `hours`.
fn lengths(hours: Vec<Hour>) -> Vec<Hour> {
    let mut lengths: Vec<Hour> = Vec::new();
    for (bot, game, _, n, m) in hours {
        match lengths.last_mut() {
            Some(l) if l.0 == bot && l.1 == game => {
                l.3 += n;
                l.4 += m;
            }
            _ => lengths.push((bot, game, String::new(), n, m)),
        }
    }
    lengths
}

/// Checks that `finish_hours` and `finish_totals` hold what they should.
pub(crate) async fn counts_hold(url: &str) {
    let hours = kept(url).await;
    assert_eq!(hours, recounted(url).await);
    assert_eq!(rows(url, TOTALS).await, lengths(hours));
}

fn ids(games: Vec<GameSummary>) -> Vec<i64> {
    games.iter().map(|g| g.id).collect()
}

/// Four bots and 2,205 imported games of three kinds in seven hours, then
/// games finished by the server's own path in hours of their own and in
/// the imported ones, and two aborted (in no list). Returns the bots
/// `[a, b, c, d]`: `d` plays SkullWhist and, unrated, five Love Letter
/// games.
pub(crate) async fn seed(s: &dyn croupier_store::Store) -> [croupier_store::BotId; 4] {
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    let c = s.create_bot("c", "h", false).await.unwrap();
    let d = s.create_bot("d", "h", false).await.unwrap();
    let games: Vec<ImportGame> = (0..2_205i64)
        .map(|i| {
            let (game, bots) = match i % 4 {
                // The last five: `d`'s only games of another kind than
                // SkullWhist, unrated (one seat ranked), so that its
                // SkullWhist list must keep its game filter.
                _ if i >= 2_200 => ("loveletter", vec![d, a, b]),
                0 => ("goofspiel", vec![b, a]),
                1 => ("skullwhist", vec![d, a]),
                2 => ("loveletter", vec![a, b, c]),
                _ => ("skullwhist", vec![a, d]),
            };
            // Every 13th game, and the last five, rank their first seat
            // only: the others are in no bot's list, and the game is not
            // rated.
            let ranked = if i % 13 == 0 || i >= 2_200 {
                1
            } else {
                bots.len() as u8
            };
            let ranks = (1..=ranked).collect();
            ImportGame {
                tournament: None,
                game: game.into(),
                bots,
                seed: i,
                started: "2026-01-01T00:00:00.000Z".into(),
                end: end(ranks, finish_time(i)),
            }
        })
        .collect();
    s.import_games(games).await.unwrap();
    // Games finished by the server's own path, in hours of their own and
    // in the imported ones, and one aborted (in no list).
    for (i, at) in ["2026-01-01T03:30:00.000Z", "2026-01-01T09:00:00.000Z"]
        .iter()
        .enumerate()
    {
        for k in 0..3 {
            let id = s
                .start_game("skullwhist", &[c, a], 5_000 + k, "t0")
                .await
                .unwrap();
            s.finish_game(id, &end(vec![1, 2], at.to_string()))
                .await
                .unwrap();
        }
        let id = s
            .start_game("goofspiel", &[a, b], i as i64, "t0")
            .await
            .unwrap();
        s.abort_game(id, "lost", "2026-01-01T05:00:00.000Z")
            .await
            .unwrap();
    }
    [a, b, c, d]
}

async fn deep_page_numbers_hold_the_games_of_the_newest_first_order(db: Db) {
    let s = db.open().await;
    let [a, b, _, d] = seed(s.as_ref()).await;
    let filters = [
        common::list(None, None),
        common::list(Some("skullwhist"), None),
        common::list(None, Some(a)),
        common::list(Some("skullwhist"), Some(a)),
        common::list(None, Some(b)),
        common::list(Some("skullwhist"), Some(d)),
    ];
    // The counts are a recount's, and each list's length is the sum of
    // its hours.
    counts_hold(&db.url).await;
    for f in &filters {
        let all = ids(s.games_page(f, 0, 10_000).await.unwrap());
        let n = all.len();
        // Unrated games (those that rank one seat only) count too.
        assert_eq!(n as i64, s.count_finished(f).await.unwrap(), "{f:?}");
        // Long enough for the hours to be read (from 1,000 games skipped).
        assert!(n > 1_050, "{f:?}: {n} games");
        // Skips on both sides of where the hours take over (1,000), every
        // seventh beyond, the last ones and past the end, at two sizes.
        let chosen = |k: &usize| {
            k.is_multiple_of(97)
                || (990..1_010).contains(k)
                || (*k >= 990 && k.is_multiple_of(7))
                || k + 60 > n
        };
        for skip in (0..n + 3).filter(chosen) {
            for limit in [1usize, 50] {
                let newest = ids(s
                    .games_at(f, PageAt::Newest(skip as i64), limit as i64)
                    .await
                    .unwrap());
                assert_eq!(
                    newest,
                    all[skip.min(n)..(skip + limit).min(n)],
                    "{f:?} newest {skip} {limit}"
                );
                let oldest = ids(s
                    .games_at(f, PageAt::Oldest(skip as i64), limit as i64)
                    .await
                    .unwrap());
                let to = n.saturating_sub(skip);
                assert_eq!(
                    oldest,
                    all[to.saturating_sub(limit)..to],
                    "{f:?} oldest {skip} {limit}"
                );
            }
        }
    }
}
