//! Admin (issue 49 item 5) on both backends: bans, rating resets, seasons
//! and the audit log.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use crate::common;

use common::Db;
use croupier_store::admin::{Act, BanChange, Target};
use croupier_store::{BotKind, GameEnd, NewBot};

on_both_backends!(
    bans_stop_a_bot_or_every_bot_of_an_owner_and_are_logged,
    a_rating_reset_starts_a_bot_afresh_and_keeps_its_counts,
    a_new_season_archives_the_standings_and_the_next_starts_afresh,
    a_tournament_game_voided_by_a_withdrawal_is_not_dealt,
);

fn end(ranks: Vec<u8>, at: &str) -> GameEnd {
    GameEnd {
        finished: at.into(),
        scores: ranks.iter().map(|r| Some(10 - i64::from(*r))).collect(),
        ranks,
        forfeited_by: None,
        record: "{}".into(),
        facts: None,
    }
}

fn push(name: &str, owner: i64) -> NewBot {
    NewBot {
        name: name.into(),
        game: "goofspiel".into(),
        kind: BotKind::Push,
        owner,
        endpoint: Some("https://bot.example/play".into()),
        dialect: "croupier".into(),
        auth_user: None,
        auth_password: None,
        token_hash: None,
    }
}

fn act<'a>(reason: Option<&'a str>) -> Act<'a> {
    Act {
        actor: "root",
        at: "2026-12-01T10:00:00Z",
        reason,
    }
}

async fn bans_stop_a_bot_or_every_bot_of_an_owner_and_are_logged(db: Db) {
    let s = db.open().await;
    let olga = s.create_owner("olga", "h").await.unwrap();
    let pat = s.create_owner("pat", "h").await.unwrap();
    let a = s.create_remote_bot(&push("a", olga)).await.unwrap();
    let b = s.create_remote_bot(&push("b", olga)).await.unwrap();
    let c = s.create_remote_bot(&push("c", pat)).await.unwrap();
    let admin = s.admin();
    assert_eq!(
        admin
            .ban(Target::Bot("nobody"), &act(Some("x")))
            .await
            .unwrap(),
        BanChange::NotFound
    );
    assert_eq!(
        admin
            .ban(Target::Bot("c"), &act(Some("illegal moves on purpose")))
            .await
            .unwrap(),
        BanChange::Done
    );
    // Banned twice: nothing changes, the first reason stays.
    assert_eq!(
        admin
            .ban(Target::Bot("c"), &act(Some("again")))
            .await
            .unwrap(),
        BanChange::Unchanged(Some("illegal moves on purpose".into()))
    );
    let info = s.bot_info(c).await.unwrap().unwrap();
    assert_eq!(info.banned.as_deref(), Some("illegal moves on purpose"));
    let ban = admin.bot_ban(c).await.unwrap().unwrap();
    assert_eq!(
        (ban.banned_by.as_str(), ban.banned_at.as_str(), ban.owner),
        ("root", "2026-12-01T10:00:00Z", None)
    );
    // An owner's ban stops each of their bots, and names the owner.
    assert_eq!(
        admin
            .ban(Target::Owner("olga"), &act(Some("spam")))
            .await
            .unwrap(),
        BanChange::Done
    );
    let remote = s.remote_bots().await.unwrap();
    let banned: Vec<(i64, Option<String>)> =
        remote.iter().map(|b| (b.id, b.banned.clone())).collect();
    assert_eq!(
        banned,
        vec![
            (a, Some("its owner olga is banned: spam".into())),
            (b, Some("its owner olga is banned: spam".into())),
            (c, Some("illegal moves on purpose".into())),
        ]
    );
    assert_eq!(admin.banned_bots().await.unwrap(), vec![a, b, c]);
    assert_eq!(
        admin.bot_ban(a).await.unwrap().unwrap().owner.as_deref(),
        Some("olga")
    );
    assert_eq!(
        admin.owner_ban(olga).await.unwrap().as_deref(),
        Some("spam")
    );
    assert_eq!(admin.owner_ban(pat).await.unwrap(), None);
    let bans = admin.bans().await.unwrap();
    assert_eq!(
        bans.iter()
            .map(|b| (b.kind.as_str(), b.name.as_str()))
            .collect::<Vec<_>>(),
        [("bot", "c"), ("owner", "olga")]
    );
    // Lifting: the bot plays again; lifting twice changes nothing.
    assert_eq!(
        admin
            .unban(Target::Owner("olga"), &act(None))
            .await
            .unwrap(),
        BanChange::Done
    );
    assert_eq!(
        admin
            .unban(Target::Owner("olga"), &act(None))
            .await
            .unwrap(),
        BanChange::Unchanged(None)
    );
    assert_eq!(s.bot_info(a).await.unwrap().unwrap().banned, None);
    assert_eq!(admin.banned_bots().await.unwrap(), vec![c]);
    assert_eq!(admin.bot_ban(a).await.unwrap(), None);
    // The log: the three changes, newest first; refusals left no row.
    let log = admin.audit(None, 10).await.unwrap();
    let seen: Vec<(&str, &str, Option<&str>)> = log
        .iter()
        .map(|r| (r.action.as_str(), r.target.as_str(), r.reason.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [
            ("unban-owner", "olga", None),
            ("ban-owner", "olga", Some("spam")),
            ("ban-bot", "c", Some("illegal moves on purpose")),
        ]
    );
    assert_eq!(log[0].details.as_deref(), Some("it was banned for: spam"));
    assert!(log.iter().all(|r| r.actor == "root"));
    // Paging: ids below the given one.
    let older = admin.audit(Some(log[0].id), 1).await.unwrap();
    assert_eq!(older.len(), 1);
    assert_eq!(older[0].id, log[1].id);
}

async fn a_rating_reset_starts_a_bot_afresh_and_keeps_its_counts(db: Db) {
    let s = db.open().await;
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    for i in 0..3 {
        let g = s.start_game("goofspiel", &[a, b], i, "t0").await.unwrap();
        s.finish_game(g, &end(vec![1, 2], "2026-12-01T09:00:00Z"))
            .await
            .unwrap();
    }
    let before = s.leaderboard("goofspiel").await.unwrap();
    assert!(before[0].mu > 25.0 && before[0].name == "a");
    let admin = s.admin();
    assert_eq!(
        admin
            .reset_rating("nobody", None, &act(None))
            .await
            .unwrap(),
        None
    );
    // No rating in that game: nothing reset, nothing logged.
    assert_eq!(
        admin
            .reset_rating("a", Some("loveletter"), &act(None))
            .await
            .unwrap(),
        Some(vec![])
    );
    assert!(admin.audit(None, 10).await.unwrap().is_empty());
    assert_eq!(
        admin
            .reset_rating("a", Some("goofspiel"), &act(Some("account shared")))
            .await
            .unwrap(),
        Some(vec!["goofspiel".to_string()])
    );
    let after = s.bot_stats(a).await.unwrap();
    assert_eq!(after.len(), 1);
    let (mu, sigma) = croupier_store::ratings::START;
    assert!((after[0].mu - mu).abs() < 1e-9 && (after[0].sigma - sigma).abs() < 1e-9);
    assert!(after[0].conservative.abs() < 1e-9);
    assert_eq!((after[0].games, after[0].wins), (3, 3));
    // b is untouched.
    let b_now = s.bot_stats(b).await.unwrap();
    assert!(b_now[0].mu < 25.0);
    let log = admin.audit(None, 10).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].action.as_str(), log[0].target.as_str()),
        ("reset-rating", "a")
    );
    assert!(
        log[0]
            .details
            .as_deref()
            .unwrap()
            .starts_with("goofspiel: "),
        "{log:?}"
    );
    // The next game rates it from the start.
    let g = s.start_game("goofspiel", &[b, a], 9, "t0").await.unwrap();
    s.finish_game(g, &end(vec![1, 2], "2026-12-01T11:00:00Z"))
        .await
        .unwrap();
    assert!(s.bot_stats(a).await.unwrap()[0].mu < 25.0);
}

async fn a_new_season_archives_the_standings_and_the_next_starts_afresh(db: Db) {
    let s = db.open().await;
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    let mut games = Vec::new();
    for i in 0..2 {
        let g = s.start_game("goofspiel", &[a, b], i, "t0").await.unwrap();
        s.finish_game(g, &end(vec![1, 2], "2026-12-01T09:00:00Z"))
            .await
            .unwrap();
        games.push(g);
    }
    let lg = s.start_game("loveletter", &[a, b], 5, "t0").await.unwrap();
    s.finish_game(lg, &end(vec![2, 1], "2026-12-01T09:00:00Z"))
        .await
        .unwrap();
    // A game running across the season's change.
    let running = s.start_game("goofspiel", &[b, a], 7, "t0").await.unwrap();
    let admin = s.admin();
    assert_eq!(admin.current_season("goofspiel").await.unwrap(), 1);
    let first = admin.seasons("goofspiel").await.unwrap();
    assert_eq!(
        (first.len(), first[0].season, first[0].ended_at.clone()),
        (1, 1, None)
    );
    let old_board = s.leaderboard("goofspiel").await.unwrap();
    let old_pairs = s.pairs("goofspiel").await.unwrap();
    assert_eq!(old_board.len(), 2);
    let started = admin
        .new_season(&["goofspiel"], &act(Some("spring")))
        .await
        .unwrap();
    assert_eq!(
        (started[0].game.as_str(), started[0].season),
        ("goofspiel", 2)
    );
    assert_eq!(admin.current_season("goofspiel").await.unwrap(), 2);
    // The new season starts empty; the old one reads as it was.
    assert!(s.leaderboard("goofspiel").await.unwrap().is_empty());
    assert!(s.pairs("goofspiel").await.unwrap().is_empty());
    assert_eq!(
        admin.season_leaderboard("goofspiel", 1).await.unwrap(),
        old_board
    );
    assert_eq!(admin.season_pairs("goofspiel", 1).await.unwrap(), old_pairs);
    assert!(admin
        .season_leaderboard("goofspiel", 2)
        .await
        .unwrap()
        .is_empty());
    // Other games keep their season.
    assert_eq!(s.leaderboard("loveletter").await.unwrap().len(), 2);
    assert_eq!(admin.current_season("loveletter").await.unwrap(), 1);
    let seasons = admin.seasons("goofspiel").await.unwrap();
    assert_eq!(seasons.len(), 2);
    assert_eq!(
        (seasons[0].season, seasons[0].started_at.clone()),
        (1, None)
    );
    assert_eq!(seasons[0].ended_at.as_deref(), Some("2026-12-01T10:00:00Z"));
    assert_eq!((seasons[1].season, seasons[1].ended_at.clone()), (2, None));
    // The game that ran across the change finishes, is kept, and is rated
    // in the new season from the start.
    s.finish_game(running, &end(vec![1, 2], "2026-12-01T10:01:00Z"))
        .await
        .unwrap();
    let board = s.leaderboard("goofspiel").await.unwrap();
    assert_eq!(board.len(), 2);
    assert!(board.iter().all(|r| r.games == 1), "{board:?}");
    assert_eq!(board[0].name, "b");
    // No game nor record was lost.
    for g in games.iter().chain([&lg, &running]) {
        let row = s.game(*g).await.unwrap().unwrap();
        assert_eq!(row.status, "finished");
        assert!(row.record.is_some());
    }
    // Every game at once: goofspiel's third season, loveletter's second.
    let all = admin
        .new_season(&["goofspiel", "loveletter"], &act(None))
        .await
        .unwrap();
    assert_eq!(all.iter().map(|s| s.season).collect::<Vec<_>>(), [3, 2]);
    assert_eq!(
        admin
            .season_leaderboard("goofspiel", 2)
            .await
            .unwrap()
            .len(),
        2
    );
    let log = admin.audit(None, 10).await.unwrap();
    assert_eq!(
        log.iter()
            .map(|r| (r.action.as_str(), r.target.as_str()))
            .collect::<Vec<_>>(),
        [
            ("new-season", "loveletter"),
            ("new-season", "goofspiel"),
            ("new-season", "goofspiel"),
        ]
    );
    assert_eq!(
        log[2].details.as_deref(),
        Some("season 1 ended with 2 rated bots; season 2 started")
    );
}

/// What a ban does to a running tournament: the bot's games not yet dealt
/// are void, and a table that read the round before cannot deal them.
async fn a_tournament_game_voided_by_a_withdrawal_is_not_dealt(db: Db) {
    use croupier_store::tournaments::{EntryRow, NewTournament, NewTournamentGame};
    use croupier_store::StoreError;
    let s = db.open().await;
    let a = s.ensure_house_bot("ha", "goofspiel").await.unwrap();
    let b = s.ensure_house_bot("hb", "goofspiel").await.unwrap();
    let c = s.ensure_house_bot("hc", "goofspiel").await.unwrap();
    let entry = |bot, seq, name: &str| EntryRow {
        strategy: Some("random".into()),
        frozen: true,
        ..common::entry(bot, seq, name)
    };
    let t = s.tournaments();
    let id = t
        .create_tournament(&NewTournament {
            rounds: 3,
            seed: 1,
            ..common::tournament("cup", Vec::new())
        })
        .await
        .unwrap();
    let entries = [entry(a, 0, "ha"), entry(b, 1, "hb"), entry(c, 2, "hc")];
    t.start_tournament(id, &entries, 3, "t0").await.unwrap();
    let game = |game_no, seats: Vec<i64>| NewTournamentGame {
        table_no: game_no,
        game_no: 0,
        seats,
        seed: game_no,
    };
    t.plan_round(id, 1, &[game(0, vec![a, b]), game(1, vec![b, c])])
        .await
        .unwrap();
    let plans = t.tournament_games(id).await.unwrap();
    // a vs b is being played when b is banned; b vs c is not dealt yet.
    let dealt = t
        .start_tournament_game(plans[0].id, "goofspiel", &[a, b], 0, "t1")
        .await
        .unwrap();
    t.withdraw_entry(id, b, 1, "banned: collusion")
        .await
        .unwrap();
    assert!(matches!(
        t.start_tournament_game(plans[1].id, "goofspiel", &[b, c], 1, "t1")
            .await,
        Err(StoreError::NotPending)
    ));
    let plans = t.tournament_games(id).await.unwrap();
    assert_eq!(
        plans.iter().map(|p| p.status.as_str()).collect::<Vec<_>>(),
        ["running", "void"]
    );
    // The game in progress finishes and counts.
    s.finish_game(dealt, &end(vec![1, 2], "t2")).await.unwrap();
    t.finish_tournament_game(plans[0].id, &[1, 2], &[])
        .await
        .unwrap();
    assert_eq!(t.tournament_games(id).await.unwrap()[0].status, "done");
    assert_eq!(s.game(dealt).await.unwrap().unwrap().status, "finished");
    let b_entry = t.tournament_entries(id).await.unwrap();
    assert_eq!(b_entry[1].withdrawn.as_deref(), Some("banned: collusion"));
}
