//! The website's reads and the ratings kept by `finish_game`.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use croupier_store::web::{GameFilter, ImportGame};
use croupier_store::{GameEnd, SqliteStore, Store, WebReads};

async fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    (dir, SqliteStore::open(&url).await.unwrap())
}

fn end(ranks: Vec<u8>, forfeited_by: Option<i64>, at: &str) -> GameEnd {
    GameEnd {
        finished: at.into(),
        scores: ranks.iter().map(|r| Some(10 - i64::from(*r))).collect(),
        ranks,
        forfeited_by,
        record: "{}".into(),
    }
}

#[tokio::test]
async fn finishing_games_rates_counts_and_pairs_the_bots() {
    let (_d, s) = store().await;
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    for i in 0..5 {
        let g = s.start_game("skullwhist", &[a, b], i, "t0").await.unwrap();
        s.finish_game(g, &end(vec![1, 2], None, "2026-01-01T00:00:00Z"))
            .await
            .unwrap();
    }
    let g = s.start_game("skullwhist", &[a, b], 9, "t0").await.unwrap();
    // b forfeits: a loss for b whatever ranks were reported.
    s.finish_game(g, &end(vec![1, 1], Some(b), "2026-01-01T00:01:00Z"))
        .await
        .unwrap();
    let g = s.start_game("skullwhist", &[a, b], 10, "t0").await.unwrap();
    s.finish_game(g, &end(vec![1, 1], None, "2026-01-01T00:01:30Z"))
        .await
        .unwrap();
    let board = s.leaderboard("skullwhist").await.unwrap();
    assert_eq!(board.len(), 2);
    assert_eq!(board[0].name, "a");
    let (sa, sb) = (&board[0], &board[1]);
    assert_eq!(
        (sa.games, sa.wins, sa.losses, sa.ties, sa.forfeits),
        (7, 6, 0, 1, 0)
    );
    assert_eq!(
        (sb.games, sb.wins, sb.losses, sb.ties, sb.forfeits),
        (7, 0, 6, 1, 1)
    );
    assert!(sa.mu > 25.0 && sb.mu < 25.0 && sa.conservative > sb.conservative);
    let pair = s.pair(b, a).await.unwrap();
    assert_eq!(
        (pair[0].games, pair[0].wins, pair[0].losses, pair[0].ties),
        (7, 0, 6, 1)
    );
    let history = s.rating_history(a, "skullwhist", 3).await.unwrap();
    assert_eq!(history.len(), 3);
    assert!(history[0].game_id < history[2].game_id);
    // The leaderboard's one query returns what the per-bot reads return.
    let all = s.rating_histories("skullwhist", 3).await.unwrap();
    assert_eq!(all.len(), 2);
    for (bot, points) in &all {
        assert_eq!(
            points,
            &s.rating_history(*bot, "skullwhist", 3).await.unwrap()
        );
    }
    assert!(s.rating_histories("goofspiel", 3).await.unwrap().is_empty());
    let f = GameFilter {
        game: Some("skullwhist".into()),
        bot: Some(b),
    };
    assert_eq!(s.count_finished(&f).await.unwrap(), 7);
    assert_eq!(s.count_finished(&GameFilter::default()).await.unwrap(), 7);
    let page = s.games_page(&f, 5, 50).await.unwrap();
    assert_eq!(page.len(), 2);
    assert_eq!(page[0].seats.len(), 2);
    let act = s.activity("2026-01-01T00:01:00Z").await.unwrap();
    assert_eq!(act.len(), 1);
    assert_eq!(
        (act[0].minute.as_str(), act[0].games),
        ("2026-01-01T00:01", 2)
    );
}

#[tokio::test]
async fn four_seat_games_count_every_pair_and_live_games_are_online() {
    let (_d, s) = store().await;
    let mut bots = Vec::new();
    for n in ["w", "x", "y", "z"] {
        bots.push(s.create_bot(n, "h", false).await.unwrap());
    }
    let ids = s
        .import_games(&[ImportGame {
            game: "loveletter".into(),
            bots: bots.clone(),
            seed: 1,
            started: "2026-01-01T00:00:00Z".into(),
            end: end(vec![2, 1, 4, 3], None, "2026-01-01T00:02:00Z"),
        }])
        .await
        .unwrap();
    assert_eq!(ids.len(), 1);
    let opp = s.opponents(bots[1], 10).await.unwrap();
    assert_eq!(opp.len(), 3);
    assert!(opp.iter().all(|p| p.wins == 1 && p.games == 1));
    let board = s.leaderboard("loveletter").await.unwrap();
    let names: Vec<&str> = board.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["x", "w", "z", "y"]);
    let live = s
        .start_game("loveletter", &bots[..2], 3, "t")
        .await
        .unwrap();
    let online = s.online_bots("2027-01-01").await.unwrap();
    assert_eq!(online.len(), 2);
    assert!(online.iter().all(|(_, playing)| *playing));
    assert_eq!(s.running_games(5).await.unwrap()[0].id, live);
    let vs = s.versus_games(bots[0], bots[3], 10).await.unwrap();
    assert_eq!(vs.len(), 1);
    assert_eq!(vs[0].seats.len(), 4);
}

#[tokio::test]
async fn games_finished_before_ratings_are_rated_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let (a, b, g) = {
        let s = SqliteStore::open(&url).await.unwrap();
        let a = s.create_bot("old-a", "h", false).await.unwrap();
        let b = s.create_bot("old-b", "h", false).await.unwrap();
        let g = s.start_game("goofspiel", &[a, b], 1, "t0").await.unwrap();
        (a, b, g)
    };
    // As an older version stored it: finished, ranked, never rated.
    let raw = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("UPDATE games SET status = 'finished', finished = 't1' WHERE id = ?")
        .bind(g)
        .execute(&raw)
        .await
        .unwrap();
    sqlx::query("UPDATE game_seats SET rank = seat + 1 WHERE game_id = ?")
        .bind(g)
        .execute(&raw)
        .await
        .unwrap();
    sqlx::query("INSERT INTO ratings_backlog (game_id) VALUES (?)")
        .bind(g)
        .execute(&raw)
        .await
        .unwrap();
    raw.close().await;
    let s = SqliteStore::open(&url).await.unwrap();
    let board = s.leaderboard("goofspiel").await.unwrap();
    let ids: Vec<i64> = board.iter().map(|r| r.bot).collect();
    assert_eq!(ids, [a, b]);
    assert_eq!((board[0].wins, board[1].losses), (1, 1));
    // Once only.
    drop(s);
    let s = SqliteStore::open(&url).await.unwrap();
    assert_eq!(s.leaderboard("goofspiel").await.unwrap()[0].games, 1);
}

#[tokio::test]
async fn a_remote_bot_names_its_owner() {
    let (_d, s) = store().await;
    let owner = s.create_owner("olga", "h").await.unwrap();
    let bot = s
        .create_remote_bot(&croupier_store::NewBot {
            name: "pusher".into(),
            game: "goofspiel".into(),
            kind: croupier_store::BotKind::Push,
            owner,
            endpoint: Some("http://127.0.0.1:9/".into()),
            dialect: "croupier".into(),
            auth_user: None,
            auth_password: None,
            token_hash: None,
        })
        .await
        .unwrap();
    assert_eq!(s.owner_name(bot).await.unwrap().as_deref(), Some("olga"));
    let rest = s.create_bot("resty", "h", false).await.unwrap();
    assert_eq!(s.owner_name(rest).await.unwrap(), None);
}
