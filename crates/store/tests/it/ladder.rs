//! The games list's tournament filters (`tournaments=hide`, `only`, one
//! tournament) against the same filter applied to every stored game, at
//! every offset, on both backends: the ladder list is read from the whole
//! list less the tournament games (`tournaments::ladder`), which must give
//! exactly what filtering every game would.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use crate::common;

use common::Db;
use croupier_store::tournaments::{
    EntryRow, GamesFilter, Marked, NewTournament, NewTournamentGame, TournamentId, TournamentStore,
};
use croupier_store::{BotId, GameEnd, GameId};

on_both_backends!(ladder_and_tournament_lists_match_every_game_filtered);

/// A stored finished game as the test knows it.
struct Known {
    id: GameId,
    finished: String,
    game: &'static str,
    /// The bots with a rank (those listed under a bot filter).
    ranked: Vec<BotId>,
    tournament: Option<TournamentId>,
}

/// A game's end at `at` with the first `ranked` of its `seats` ranked.
fn end(seats: usize, ranked: usize, at: &str) -> GameEnd {
    GameEnd {
        finished: at.into(),
        scores: vec![Some(1); seats],
        ranks: (1..=ranked as u8).collect(),
        forfeited_by: None,
        record: "{}".into(),
        facts: None,
    }
}

/// A tournament of `game` with `bots` entered (frozen), of every bot.
fn tournament(name: &str, game: &str, bots: &[BotId]) -> NewTournament {
    let entries = bots
        .iter()
        .enumerate()
        .map(|(seq, &bot)| EntryRow {
            frozen: true,
            ..common::entry(bot, seq as i64, &format!("g{seq}"))
        })
        .collect();
    NewTournament {
        game: game.into(),
        all_bots: true,
        ..common::tournament(name, entries)
    }
}

async fn ladder_and_tournament_lists_match_every_game_filtered(db: Db) {
    let s = db.open().await;
    let t = s.tournaments();
    let mut g = Vec::new();
    for i in 0..3 {
        g.push(
            s.ensure_house_bot(&format!("g{i}"), "goofspiel")
                .await
                .unwrap(),
        );
    }
    let l = s.ensure_house_bot("l0", "loveletter").await.unwrap();
    let l1 = s.ensure_house_bot("l1", "loveletter").await.unwrap();
    // Two tournaments, each with planned games enough for the test: a
    // Goofspiel cup of g0 and g1, and a Love Letter bowl where g0 plays l0
    // (so that g0 has tournament games of both kinds).
    let mut cups = Vec::new();
    for (name, kind, bots) in [
        ("cup", "goofspiel", [g[0], g[1]]),
        ("bowl", "loveletter", [l, g[0]]),
    ] {
        let id = t
            .create_tournament(&tournament(name, kind, &bots))
            .await
            .unwrap();
        t.start_tournament(id, &tournament(name, kind, &bots).entries, 1, "t0")
            .await
            .unwrap();
        let plans: Vec<NewTournamentGame> = (0..20)
            .map(|n| NewTournamentGame {
                table_no: 0,
                game_no: n,
                seats: bots.to_vec(),
                seed: n,
            })
            .collect();
        t.plan_round(id, 1, &plans).await.unwrap();
        let plans: Vec<i64> = t
            .tournament_games(id)
            .await
            .unwrap()
            .iter()
            .map(|p| p.id)
            .collect();
        cups.push((id, plans.into_iter()));
    }
    // 48 games: ladder games of both kinds, tournament games alone and in
    // runs (the longest, 9, longer than the pages below), finish times
    // shared by neighbours (the list breaks ties by id), and now and then
    // a second seat without a rank (in no bot's list).
    let mut known = Vec::new();
    for n in 0..48u32 {
        let cup = match n {
            10..=18 => Some(0),
            30 | 31 | 40 => Some(1),
            _ if n % 7 == 3 => Some(n as usize % 2),
            _ => None,
        };
        let at = format!("2026-01-01T00:{:02}:00Z", n / 2 * 2 % 60 + n / 30);
        let (game, bots) = match (cup, n % 3) {
            (None, 0) => ("loveletter", vec![l, l1]),
            (None, 1) => ("goofspiel", vec![g[0], g[2]]),
            (None, _) => ("goofspiel", vec![g[1], g[2]]),
            (Some(0), _) => ("goofspiel", vec![g[n as usize % 2], g[1 - n as usize % 2]]),
            (Some(_), _) if n % 2 == 0 => ("loveletter", vec![l, g[0]]),
            (Some(_), _) => ("loveletter", vec![g[0], l]),
        };
        let ranked = if n % 11 == 4 { 1 } else { bots.len() };
        let id = match cup {
            Some(c) => {
                let plan = cups[c].1.next().unwrap();
                t.start_tournament_game(plan, game, &bots, 1, "t1")
                    .await
                    .unwrap()
            }
            None => s.start_game(game, &bots, 1, "t1").await.unwrap(),
        };
        s.finish_game(id, &end(bots.len(), ranked, &at))
            .await
            .unwrap();
        known.push(Known {
            id,
            finished: at,
            game,
            ranked: bots[..ranked].to_vec(),
            tournament: cup.map(|c| cups[c].0),
        });
    }
    // An unfinished tournament game is in no list.
    let plan = cups[0].1.next().unwrap();
    let running = t
        .start_tournament_game(plan, "goofspiel", &g[..2], 1, "t2")
        .await
        .unwrap();
    known.sort_by(|a, b| (&b.finished, b.id).cmp(&(&a.finished, a.id)));

    let filters = [
        (None, Marked::Hide, None, None),
        (None, Marked::Hide, Some("goofspiel"), None),
        (None, Marked::Hide, Some("loveletter"), None),
        (None, Marked::Hide, None, Some(g[0])),
        (None, Marked::Hide, Some("goofspiel"), Some(g[1])),
        (None, Marked::Hide, None, Some(l)),
        (None, Marked::Only, None, None),
        (None, Marked::Only, None, Some(g[1])),
        (Some(cups[0].0), Marked::All, None, None),
        (Some(cups[1].0), Marked::Only, Some("goofspiel"), Some(g[0])),
        (Some(cups[1].0), Marked::Hide, None, None),
        (None, Marked::All, None, Some(g[2])),
        (Some(cups[0].0), Marked::All, None, Some(g[1])),
        (None, Marked::Only, Some("goofspiel"), Some(g[0])),
        (None, Marked::Hide, Some("loveletter"), Some(l)),
        (None, Marked::Hide, Some("goofspiel"), Some(g[0])),
        (None, Marked::Hide, Some("loveletter"), Some(g[0])),
        (None, Marked::Only, Some("loveletter"), Some(g[0])),
        (None, Marked::Only, Some("goofspiel"), None),
        (Some(cups[0].0), Marked::All, Some("goofspiel"), None),
        (Some(cups[1].0), Marked::Only, Some("loveletter"), None),
        (Some(cups[1].0), Marked::All, None, Some(g[0])),
    ];
    check(t, &known, &filters).await;
    assert_eq!(seats_unlike_their_game(&db).await, 0);

    // A database from before the seats carried their tournament: the
    // migration marks them (the running game's too), and every list is as
    // before.
    drop(s);
    unmark_seats(&db).await;
    let s = db.open().await;
    let t = s.tournaments();
    assert_eq!(seats_unlike_their_game(&db).await, 0);
    let at = "2026-01-01T00:59:00Z";
    s.finish_game(running, &end(2, 2, at)).await.unwrap();
    known.insert(
        0,
        Known {
            id: running,
            finished: at.into(),
            game: "goofspiel",
            ranked: g[..2].to_vec(),
            tournament: Some(cups[0].0),
        },
    );
    check(t, &known, &filters).await;

    // The listed games carry their seats.
    let page = t
        .filtered_games(
            &GamesFilter {
                marked: Marked::Hide,
                ..GamesFilter::default()
            },
            0,
            3,
        )
        .await
        .unwrap();
    assert!(page.iter().all(|g| g.seats.len() == 2), "{page:?}");
}

/// A list's filter: tournament, marked, kind, bot.
type Filter = (
    Option<TournamentId>,
    Marked,
    Option<&'static str>,
    Option<BotId>,
);

/// The ids of `f`'s list, `limit` games from `offset`.
pub(crate) async fn listed(
    t: &dyn TournamentStore,
    f: &GamesFilter,
    offset: usize,
    limit: usize,
) -> Vec<GameId> {
    t.filtered_games(f, offset as i64, limit as i64)
        .await
        .unwrap()
        .iter()
        .map(|g| g.id)
        .collect()
}

/// Every list of `filters` (tournament, marked, kind, bot), counted and
/// read at every offset with limits 1, 4 and 50, against `known` (newest
/// first) filtered.
async fn check(t: &dyn TournamentStore, known: &[Known], filters: &[Filter]) {
    for &(tournament, marked, game, bot) in filters {
        let f = GamesFilter {
            game: game.map(str::to_string),
            bot,
            tournament,
            marked,
        };
        let want: Vec<GameId> = known
            .iter()
            .filter(|k| game.is_none_or(|g| k.game == g))
            .filter(|k| bot.is_none_or(|b| k.ranked.contains(&b)))
            .filter(|k| tournament.is_none_or(|c| k.tournament == Some(c)))
            .filter(|k| match (marked, tournament) {
                (Marked::Hide, Some(_)) => false,
                (Marked::Hide, None) => k.tournament.is_none(),
                (Marked::Only, _) => k.tournament.is_some(),
                (Marked::All, _) => true,
            })
            .map(|k| k.id)
            .collect();
        assert_eq!(
            t.count_filtered_games(&f).await.unwrap(),
            want.len() as i64,
            "{f:?}"
        );
        for limit in [1usize, 4, 50] {
            for offset in 0..=want.len() + 1 {
                let got = listed(t, &f, offset, limit).await;
                let end = (offset + limit).min(want.len());
                let expected = want.get(offset..end).unwrap_or(&[]);
                assert_eq!(got, expected, "{f:?} offset {offset} limit {limit}");
            }
        }
    }
}

/// How many seats carry another tournament than their game's.
async fn seats_unlike_their_game(db: &Db) -> i64 {
    const SQL: &str = "SELECT COUNT(*) FROM game_seats s JOIN games g ON g.id = s.game_id
                       WHERE s.tournament_id IS DISTINCT FROM g.tournament_id";
    with_pool!(db, |pool| sqlx::query_scalar(SQL)
        .fetch_one(&pool)
        .await
        .unwrap())
}

/// Takes the seats' tournament column and the migration's indexes away and
/// forgets the migration (SQLite's 0017, PostgreSQL's 0019, both named
/// "tournament lists"), as in a database written before it: the next open
/// runs it again, on the games already stored.
async fn unmark_seats(db: &Db) {
    const UNDO: [&str; 3] = [
        "DROP INDEX game_seats_tournament_finish_order_by_bot",
        "DROP INDEX games_tournament_finish_order_by_tournament",
        "ALTER TABLE game_seats DROP COLUMN tournament_id",
    ];
    common::forget_migration(db, &UNDO, "tournament lists").await;
}
