//! The store suite: every test runs unchanged against SQLite and PostgreSQL
//! (`sqlite::name` and `postgres::name`). Without PostgreSQL installed the
//! PostgreSQL half says so and passes, except under CI=true, where it fails.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use crate::common;

use std::sync::Arc;

use common::Db;
use croupier_store::hosted::{NewVersion, ACTIVE, FAILED};
use croupier_store::leases::{LeasedGame, Reap};
use croupier_store::web::{GameFilter, ImportGame, PageAt};
use croupier_store::{BotKind, GameEnd, NewBot, SqliteStore, Store, StoreError, WebReads};

on_both_backends!(
    bot_names_are_unique,
    games_run_then_finish_or_abort,
    data_survives_reopening_and_running_games_are_aborted_after_a_crash,
    owners_remote_bots_tokens_and_health,
    house_bots_are_registered_once,
    finishing_games_rates_counts_and_pairs_the_bots,
    four_seat_games_count_every_pair_and_live_games_are_online,
    forfeits_without_scores_are_stored,
    concurrent_games_are_all_stored_and_rated,
    games_finished_together_are_rated_as_one_by_one,
    imported_games_are_stored_and_rated_as_finished_ones,
    a_bad_write_fails_alone,
    game_lists_are_newest_finished_first_and_filter,
    a_remote_bot_names_its_owner,
    tournaments_keep_entries_plans_results_and_are_not_rated,
    a_tournaments_many_planned_games_are_read_whole_in_order,
    the_tournament_list_pages_counts_and_names_the_open_ones,
    imported_tournament_games_are_listed_counted_and_not_rated,
    done_tournament_games_get_their_scores_from_the_migration_and_the_recount,
    hosted_bots_keep_versions_files_and_match_stderr,
    tournament_entries_keep_their_hosted_version_and_games_filter_by_tournament,
    games_people_play_are_stored_but_rate_no_bot,
    people_are_rated_against_bots_in_a_pool_of_their_own,
    owners_open_their_bots_to_challenges,
    ladder_leases_seat_a_bot_once_and_the_dead_are_reaped,
    games_a_registered_process_deals_are_closed_when_it_is_lost,
    facts_are_stored_with_the_record_and_read_for_a_list_of_games,
    pages_from_either_end_and_from_a_game_match_the_newest_first_order,
);

fn end(ranks: Vec<u8>, forfeited_by: Option<i64>, at: &str) -> GameEnd {
    GameEnd {
        finished: at.into(),
        scores: ranks.iter().map(|r| Some(10 - i64::from(*r))).collect(),
        ranks,
        forfeited_by,
        record: "{}".into(),
        facts: None,
    }
}

async fn bot_names_are_unique(db: Db) {
    let s = db.open().await;
    let id = s.create_bot("alice", "h", false).await.unwrap();
    assert!(matches!(
        s.create_bot("alice", "h2", false).await,
        Err(StoreError::NameTaken)
    ));
    let row = s.bot_by_name("alice").await.unwrap().unwrap();
    assert_eq!(
        (row.id, row.password_hash.as_str(), row.house),
        (id, "h", false)
    );
    assert!(s.bot_by_name("bob").await.unwrap().is_none());
    let o = s.create_owner("olga", "ph").await.unwrap();
    assert!(matches!(
        s.create_owner("olga", "x").await,
        Err(StoreError::NameTaken)
    ));
    let row = s.owner_by_name("olga").await.unwrap().unwrap();
    assert_eq!((row.id, row.password_hash.as_str()), (o, "ph"));
    assert!(s.owner_by_name("nobody").await.unwrap().is_none());
}

async fn games_run_then_finish_or_abort(db: Db) {
    let s = db.open().await;
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    let g1 = s.start_game("skullwhist", &[a, b], 7, "t0").await.unwrap();
    let g2 = s.start_game("skullwhist", &[b, a], 8, "t0").await.unwrap();
    let g3 = s.start_game("goofspiel", &[a, b], -9, "t0").await.unwrap();
    assert_eq!(s.game_bots(g2).await.unwrap(), vec![b, a]);
    let running = s.game(g1).await.unwrap().unwrap();
    assert_eq!(
        (running.status.as_str(), running.seed, running.record),
        ("running", 7, None)
    );
    let e = GameEnd {
        finished: "t1".into(),
        scores: vec![Some(20), Some(-10)],
        ranks: vec![1, 2],
        forfeited_by: None,
        record: "{\"moves\":[]}".into(),
        facts: None,
    };
    s.finish_game(g1, &e).await.unwrap();
    s.abort_game(g3, "bot vanished", "t2").await.unwrap();
    // Aborting a finished game changes nothing.
    s.abort_game(g1, "late", "t3").await.unwrap();
    assert_eq!(s.abort_running("restart", "t2").await.unwrap(), 1);
    let r1 = s.game(g1).await.unwrap().unwrap();
    assert_eq!(
        (
            r1.status.as_str(),
            r1.score1,
            r1.score2,
            r1.finished.as_deref(),
            r1.record.as_deref()
        ),
        (
            "finished",
            Some(20),
            Some(-10),
            Some("t1"),
            Some("{\"moves\":[]}")
        )
    );
    let r2 = s.game(g2).await.unwrap().unwrap();
    assert_eq!(
        (r2.status.as_str(), r2.reason.as_deref(), r2.bot1, r2.bot2),
        ("aborted", Some("restart"), b, a)
    );
    let r3 = s.game(g3).await.unwrap().unwrap();
    assert_eq!(
        (r3.status.as_str(), r3.reason.as_deref(), r3.seed),
        ("aborted", Some("bot vanished"), -9)
    );
    assert_eq!(s.count_games("finished").await.unwrap(), 1);
    assert_eq!(s.count_games("aborted").await.unwrap(), 2);
    assert_eq!(s.count_games("running").await.unwrap(), 0);
    assert!(s.game(g3 + 100).await.unwrap().is_none());
    assert!(s.game_bots(g3 + 100).await.unwrap().is_empty());
    // Only a running game finishes: finishing an aborted one, or a
    // finished one again, changes neither the game nor the ratings.
    let again = GameEnd {
        finished: "t9".into(),
        scores: vec![Some(-5), Some(30)],
        ranks: vec![2, 1],
        forfeited_by: Some(a),
        record: "{}".into(),
        facts: None,
    };
    s.finish_game(g3, &again).await.unwrap();
    s.finish_game(g1, &again).await.unwrap();
    let r3 = s.game(g3).await.unwrap().unwrap();
    assert_eq!(
        (r3.status.as_str(), r3.score1, r3.record),
        ("aborted", None, None)
    );
    assert_eq!(s.game(g1).await.unwrap().unwrap().score1, Some(20));
    let board = s.leaderboard("skullwhist").await.unwrap();
    let counts: Vec<_> = board
        .iter()
        .map(|r| (r.name.as_str(), r.games, r.wins, r.losses, r.forfeits))
        .collect();
    assert_eq!(counts, [("a", 1, 1, 0, 0), ("b", 1, 0, 1, 0)]);
    assert!(s.leaderboard("goofspiel").await.unwrap().is_empty());
    // Ranks that do not match the seats (one too many, or one short): the
    // game is stored finished, but rates nobody.
    for (seed, ranks) in [(20, vec![1, 2, 1]), (21, vec![1])] {
        let g = s
            .start_game("goofspiel", &[a, b], seed, "t0")
            .await
            .unwrap();
        let odd = GameEnd { ranks, ..e.clone() };
        s.finish_game(g, &odd).await.unwrap();
        let row = s.game(g).await.unwrap().unwrap();
        assert_eq!((row.status.as_str(), row.score1), ("finished", Some(20)));
    }
    assert!(s.leaderboard("goofspiel").await.unwrap().is_empty());
}

async fn data_survives_reopening_and_running_games_are_aborted_after_a_crash(db: Db) {
    let (a, done, live) = {
        let s = db.open().await;
        let a = s.create_bot("kept", "h", false).await.unwrap();
        let b = s.create_bot("other", "h", false).await.unwrap();
        let done = s.start_game("skullwhist", &[a, b], 1, "t0").await.unwrap();
        s.finish_game(done, &end(vec![1, 2], None, "t1"))
            .await
            .unwrap();
        let live = s.start_game("skullwhist", &[a, b], 2, "t1").await.unwrap();
        (a, done, live)
        // Dropped here with a game still running, as a crash leaves it.
    };
    let s = db.open().await;
    assert_eq!(s.bot_by_name("kept").await.unwrap().unwrap().id, a);
    assert_eq!(s.running_games(10).await.unwrap()[0].id, live);
    // What `serve` does on start.
    assert_eq!(s.abort_running("server restarted", "t2").await.unwrap(), 1);
    let g = s.game(live).await.unwrap().unwrap();
    assert_eq!(
        (g.status.as_str(), g.reason.as_deref()),
        ("aborted", Some("server restarted"))
    );
    let g = s.game(done).await.unwrap().unwrap();
    assert_eq!(
        (g.status.as_str(), g.record.as_deref()),
        ("finished", Some("{}"))
    );
    assert_eq!(s.leaderboard("skullwhist").await.unwrap()[0].bot, a);
    // Ids keep growing after a reopen.
    let b = s.bot_by_name("other").await.unwrap().unwrap().id;
    let next = s.start_game("skullwhist", &[a, b], 3, "t3").await.unwrap();
    assert!(next > live);
}

fn remote(name: &str, kind: BotKind, owner: i64, token: Option<&str>) -> NewBot {
    NewBot {
        name: name.into(),
        game: "goofspiel".into(),
        kind,
        owner,
        endpoint: (kind == BotKind::Push).then(|| "https://bot.example/play".into()),
        dialect: "croupier".into(),
        auth_user: (kind == BotKind::Push).then(|| "u".into()),
        auth_password: (kind == BotKind::Push).then(|| "p".into()),
        token_hash: token.map(str::to_string),
    }
}

async fn owners_remote_bots_tokens_and_health(db: Db) {
    let s = db.open().await;
    let o = s.create_owner("olga", "ph").await.unwrap();
    let push = s
        .create_remote_bot(&remote("pusher", BotKind::Push, o, None))
        .await
        .unwrap();
    let pull = s
        .create_remote_bot(&remote("puller", BotKind::Pull, o, Some("aa11")))
        .await
        .unwrap();
    s.create_bot("rest-bot", "h", false).await.unwrap();
    assert!(matches!(
        s.create_remote_bot(&remote("pusher", BotKind::Pull, o, Some("bb")))
            .await,
        Err(StoreError::NameTaken)
    ));
    // A token hash names one bot.
    assert!(s
        .create_remote_bot(&remote("thief", BotKind::Pull, o, Some("aa11")))
        .await
        .is_err());
    let all = s.remote_bots().await.unwrap();
    assert_eq!(
        all.iter().map(|b| b.id).collect::<Vec<_>>(),
        vec![push, pull]
    );
    let p = s.bot_info(push).await.unwrap().unwrap();
    assert_eq!(
        (
            p.name.as_str(),
            p.game.as_str(),
            p.kind,
            p.owner,
            p.endpoint.as_deref(),
            p.dialect.as_deref(),
            p.auth_user.as_deref(),
            p.auth_password.as_deref(),
            p.strikes,
            p.enabled
        ),
        (
            "pusher",
            "goofspiel",
            BotKind::Push,
            Some(o),
            Some("https://bot.example/play"),
            Some("croupier"),
            Some("u"),
            Some("p"),
            0,
            true
        )
    );
    assert_eq!(s.bot_by_token("aa11").await.unwrap().unwrap().id, pull);
    assert!(s.bot_by_token("zz").await.unwrap().is_none());
    s.set_bot_token(pull, "cc22").await.unwrap();
    assert!(s.bot_by_token("aa11").await.unwrap().is_none());
    assert_eq!(s.bot_by_token("cc22").await.unwrap().unwrap().id, pull);
    // Only pull bots have tokens.
    s.set_bot_token(push, "dd").await.unwrap();
    assert!(s.bot_by_token("dd").await.unwrap().is_none());

    s.set_bot_health(push, 3, Some(1_900_000_000), Some("timeouts"))
        .await
        .unwrap();
    let p = s.bot_info(push).await.unwrap().unwrap();
    assert_eq!(
        (p.strikes, p.paused_until, p.pause_reason.as_deref()),
        (3, Some(1_900_000_000), Some("timeouts"))
    );
    s.set_bot_enabled(push, false).await.unwrap();
    let p = s.bot_info(push).await.unwrap().unwrap();
    assert!(!p.enabled);
    assert_eq!(p.strikes, 3, "switching off keeps the health");
    s.set_bot_enabled(push, true).await.unwrap();
    let p = s.bot_info(push).await.unwrap().unwrap();
    assert_eq!(
        (p.enabled, p.strikes, p.paused_until, p.pause_reason),
        (true, 0, None, None)
    );
    assert!(s.bot_info(push + 100).await.unwrap().is_none());
}

async fn house_bots_are_registered_once(db: Db) {
    let s = db.open().await;
    let id = s.ensure_house_bot("random", "loveletter").await.unwrap();
    assert_eq!(
        s.ensure_house_bot("random", "loveletter").await.unwrap(),
        id
    );
    let row = s.bot_by_name("random").await.unwrap().unwrap();
    assert!(row.house);
    let info = s.bot_info(id).await.unwrap().unwrap();
    assert_eq!(
        (info.kind, info.game.as_str()),
        (BotKind::House, "loveletter")
    );
    // A house bot is not a remote bot, and its name cannot be taken over.
    assert!(s.remote_bots().await.unwrap().is_empty());
    s.create_bot("taken", "h", false).await.unwrap();
    assert!(matches!(
        s.ensure_house_bot("taken", "goofspiel").await,
        Err(StoreError::NameTaken)
    ));
}

async fn finishing_games_rates_counts_and_pairs_the_bots(db: Db) {
    let s = db.open().await;
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
    assert_eq!(sa.last_played.as_deref(), Some("2026-01-01T00:01:30Z"));
    assert!(sa.mu > 25.0 && sb.mu < 25.0 && sa.conservative > sb.conservative);
    assert!((sa.conservative - (sa.mu - 3.0 * sa.sigma)).abs() < 1e-9);
    let pair = s.pair(b, a).await.unwrap();
    assert_eq!(
        (pair[0].games, pair[0].wins, pair[0].losses, pair[0].ties),
        (7, 0, 6, 1)
    );
    assert_eq!(
        (pair[0].bot_name.as_str(), pair[0].opponent_name.as_str()),
        ("b", "a")
    );
    let history = s.rating_history(a, "skullwhist", 3).await.unwrap();
    assert_eq!(history.len(), 3);
    assert!(history[0].game_id < history[2].game_id);
    assert!((history[2].mu - sa.mu).abs() < 1e-9);
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
    let none = GameFilter {
        game: Some("goofspiel".into()),
        bot: None,
    };
    assert_eq!(s.count_finished(&none).await.unwrap(), 0);
    let page = s.games_page(&f, 5, 50).await.unwrap();
    assert_eq!(page.len(), 2);
    assert_eq!(page[0].seats.len(), 2);
    let act = s.activity("2026-01-01T00:01:00Z").await.unwrap();
    assert_eq!(act.len(), 1);
    assert_eq!(
        (act[0].minute.as_str(), act[0].game.as_str(), act[0].games),
        ("2026-01-01T00:01", "skullwhist", 2)
    );
    let stats = s.bot_stats(b).await.unwrap();
    assert_eq!((stats.len(), stats[0].games), (1, 7));
    assert_eq!(s.all_stats().await.unwrap().len(), 2);
    let web = s.web_bot("a").await.unwrap().unwrap();
    assert_eq!((web.id, web.kind.as_str()), (a, "rest"));
    assert!(s.web_bot("zz").await.unwrap().is_none());
}

async fn four_seat_games_count_every_pair_and_live_games_are_online(db: Db) {
    let s = db.open().await;
    let mut bots = Vec::new();
    for n in ["w", "x", "y", "z"] {
        bots.push(s.create_bot(n, "h", false).await.unwrap());
    }
    let ids = s
        .import_games(vec![
            ImportGame {
                tournament: None,
                game: "loveletter".into(),
                bots: bots.clone(),
                seed: 1,
                started: "2026-01-01T00:00:00Z".into(),
                end: end(vec![2, 1, 4, 3], None, "2026-01-01T00:02:00Z"),
            },
            // Fewer than two bots: skipped.
            ImportGame {
                tournament: None,
                game: "loveletter".into(),
                bots: bots[..1].to_vec(),
                seed: 2,
                started: "2026-01-01T00:00:00Z".into(),
                end: end(vec![1], None, "2026-01-01T00:02:00Z"),
            },
        ])
        .await
        .unwrap();
    assert_eq!(ids.len(), 1);
    let summary = s.game_summary(ids[0]).await.unwrap().unwrap();
    let ranks: Vec<Option<i64>> = summary.seats.iter().map(|x| x.rank).collect();
    assert_eq!(ranks, [Some(2), Some(1), Some(4), Some(3)]);
    assert_eq!(s.game(ids[0]).await.unwrap().unwrap().status, "finished");
    let opp = s.opponents(bots[1], 10).await.unwrap();
    assert_eq!(opp.len(), 3);
    assert!(opp.iter().all(|p| p.wins == 1 && p.games == 1));
    assert_eq!(s.opponents(bots[1], 2).await.unwrap().len(), 2);
    let board = s.leaderboard("loveletter").await.unwrap();
    let names: Vec<&str> = board.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["x", "w", "z", "y"]);
    assert_eq!(s.pairs("loveletter").await.unwrap().len(), 12);
    // An import whose ranks stop short of its seats: every seat still gets
    // its score and forfeit flag, the same on both backends; not rated.
    let mut short = end(vec![1], Some(bots[2]), "2026-01-01T00:03:00Z");
    short.scores = vec![Some(5), Some(6), Some(7)];
    let ids = s
        .import_games(vec![ImportGame {
            tournament: None,
            game: "loveletter".into(),
            bots: bots[..3].to_vec(),
            seed: 4,
            started: "2026-01-01T00:00:00Z".into(),
            end: short,
        }])
        .await
        .unwrap();
    let seats = s.game_summary(ids[0]).await.unwrap().unwrap().seats;
    assert_eq!(
        seats
            .iter()
            .map(|x| (x.score, x.rank, x.forfeited))
            .collect::<Vec<_>>(),
        vec![
            (Some(5), Some(1), false),
            (Some(6), None, false),
            (Some(7), None, true)
        ]
    );
    assert_eq!(s.pairs("loveletter").await.unwrap().len(), 12);
    let live = s
        .start_game("loveletter", &bots[..2], 3, "t")
        .await
        .unwrap();
    let online = s.online_bots("2027-01-01").await.unwrap();
    assert_eq!(online.len(), 2);
    assert!(online.iter().all(|(_, playing)| *playing));
    let recent = s.online_bots("2026-01-01T00:01:00Z").await.unwrap();
    assert_eq!(recent.len(), 4);
    assert_eq!(recent.iter().filter(|(_, p)| *p).count(), 2);
    let running = s.running_games(5).await.unwrap();
    assert_eq!((running.len(), running[0].id), (1, live));
    assert_eq!(running[0].seats.len(), 2);
    let vs = s.versus_games(bots[0], bots[3], 10).await.unwrap();
    assert_eq!(vs.len(), 1);
    assert_eq!(vs[0].seats.len(), 4);
}

async fn forfeits_without_scores_are_stored(db: Db) {
    let s = db.open().await;
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    let g = s.start_game("skullwhist", &[a, b], 5, "t0").await.unwrap();
    let e = GameEnd {
        finished: "2026-02-02T10:00:00Z".into(),
        scores: vec![None, None],
        ranks: vec![1, 2],
        forfeited_by: Some(b),
        record: "{\"forfeit\":true}".into(),
        facts: None,
    };
    s.finish_game(g, &e).await.unwrap();
    let row = s.game(g).await.unwrap().unwrap();
    assert_eq!(
        (row.score1, row.score2, row.forfeited_by),
        (None, None, Some(b))
    );
    let seats = s.game_summary(g).await.unwrap().unwrap().seats;
    assert_eq!(
        seats
            .iter()
            .map(|x| (x.bot, x.score, x.rank, x.forfeited))
            .collect::<Vec<_>>(),
        vec![(a, None, Some(1), false), (b, None, Some(2), true)]
    );
    let board = s.leaderboard("skullwhist").await.unwrap();
    assert_eq!((board[1].bot, board[1].forfeits), (b, 1));
}

async fn concurrent_games_are_all_stored_and_rated(db: Db) {
    let s = db.open().await;
    let mut bots = Vec::new();
    for i in 0..8 {
        bots.push(s.create_bot(&format!("c{i}"), "h", false).await.unwrap());
    }
    let n = 200;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let s = s.clone();
        let (x, y) = (bots[i % 8], bots[(i + 1 + i / 8) % 8]);
        let (x, y) = if x == y {
            (x, bots[(i + 2) % 8])
        } else {
            (x, y)
        };
        tasks.spawn(async move {
            let g = s
                .start_game("goofspiel", &[x, y], i as i64, "t0")
                .await
                .unwrap();
            let at = format!("2026-03-03T00:{:02}:{:02}Z", i / 60, i % 60);
            s.finish_game(g, &end(vec![1, 2], None, &at)).await.unwrap();
            g
        });
    }
    let mut ids = Vec::new();
    while let Some(r) = tasks.join_next().await {
        ids.push(r.unwrap());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n);
    assert_eq!(s.count_games("finished").await.unwrap(), n as i64);
    assert_eq!(
        s.count_finished(&GameFilter::default()).await.unwrap(),
        n as i64
    );
    let board = s.leaderboard("goofspiel").await.unwrap();
    let games: i64 = board.iter().map(|b| b.games).sum();
    let wins: i64 = board.iter().map(|b| b.wins).sum();
    assert_eq!((games, wins), (2 * n as i64, n as i64));
    for b in &bots {
        let points = s.rating_history(*b, "goofspiel", 1000).await.unwrap();
        let played = board.iter().find(|x| x.bot == *b).map_or(0, |x| x.games);
        assert_eq!(points.len() as i64, played);
    }
}

/// Games finished together (one group commit, one batch) are rated as if
/// finished one by one in the order they were submitted: the same games
/// are played in two game kinds, finished one at a time in one and all at
/// once in the other, and every rating, count, pair and history point must
/// agree. A game aborted before its end arrives stays aborted and unrated.
async fn games_finished_together_are_rated_as_one_by_one(db: Db) {
    let s = db.open().await;
    let mut bots = Vec::new();
    for i in 0..4 {
        bots.push(s.create_bot(&format!("o{i}"), "h", false).await.unwrap());
    }
    let plan = meetings();
    for (kind, together) in [("goofspiel", false), ("skullwhist", true)] {
        let mut games = Vec::new();
        for (i, (seats, ranks, forfeit)) in plan.iter().enumerate() {
            let ids = [bots[seats[0]], bots[seats[1]]];
            let g = s.start_game(kind, &ids, i as i64, "t0").await.unwrap();
            let at = format!("2026-04-04T00:00:{i:02}Z");
            games.push((g, end(ranks.clone(), forfeit.map(|f| ids[f]), &at)));
            if i == 10 {
                // Aborted first (its process lost): its end changes nothing.
                s.abort_game(g, "lost", "t1").await.unwrap();
            }
        }
        if together {
            let all = games.iter().map(|(g, e)| s.finish_game(*g, e));
            for r in futures::future::join_all(all).await {
                r.unwrap();
            }
        } else {
            for (g, e) in &games {
                s.finish_game(*g, e).await.unwrap();
            }
        }
    }
    assert_eq!(s.count_games("aborted").await.unwrap(), 2);
    assert_eq!(s.count_games("finished").await.unwrap(), 46);
    assert_rated_alike(s.as_ref(), "goofspiel", "skullwhist", 4, 46).await;
}

/// Seats (of four bots), ranks and the forfeiting seat of 24 games: bots
/// meet again and again (so one batch rates a bot several times), with
/// ties and forfeits.
fn meetings() -> Vec<([usize; 2], Vec<u8>, Option<usize>)> {
    (0..24)
        .map(|i| {
            let x = i % 4;
            let y = (x + 1 + i / 4) % 4;
            let y = if y == x { (x + 1) % 4 } else { y };
            let ranks = match i % 5 {
                0 => vec![1, 1],
                1 | 3 => vec![2, 1],
                _ => vec![1, 2],
            };
            ([x, y], ranks, (i % 7 == 3).then_some(1))
        })
        .collect()
}

async fn imported_games_are_stored_and_rated_as_finished_ones(db: Db) {
    let s = db.open().await;
    let mut bots = Vec::new();
    for i in 0..4 {
        bots.push(s.create_bot(&format!("o{i}"), "h", false).await.unwrap());
    }
    let cup = common::tournament("cup", vec![common::entry(bots[0], 0, "o0")]);
    let cup = s.tournaments().create_tournament(&cup).await.unwrap();
    // Goofspiel's games started and finished one by one; SkullWhist's the
    // same games imported at once, with a tournament game and a game of
    // one bot among them.
    let mut finished = Vec::new();
    let mut imports = Vec::new();
    for (i, (seats, ranks, forfeit)) in meetings().into_iter().enumerate() {
        let ids = vec![bots[seats[0]], bots[seats[1]]];
        let at = format!("2026-04-04T00:00:{i:02}Z");
        let end = end(ranks, forfeit.map(|f| ids[f]), &at);
        let g = s
            .start_game("goofspiel", &ids, i as i64, "t0")
            .await
            .unwrap();
        s.finish_game(g, &end).await.unwrap();
        finished.push(g);
        let import = |bots: Vec<i64>, tournament| ImportGame {
            game: "skullwhist".into(),
            bots,
            seed: i as i64,
            started: "t0".into(),
            end: end.clone(),
            tournament,
        };
        imports.push(import(ids.clone(), None));
        if i == 5 {
            imports.push(import(ids.clone(), Some(cup)));
            imports.push(import(vec![ids[0]], None));
        }
    }
    let imported = s.import_games(imports).await.unwrap();
    assert_eq!(imported.len(), 25, "the game of one bot is left out");
    let mut ascending = imported.clone();
    ascending.sort_unstable();
    assert_eq!(imported, ascending, "ids in the order given");
    let (tournament_game, imported) = {
        let mut v = imported;
        let t = v.remove(6);
        (t, v)
    };
    assert_rated_alike(s.as_ref(), "goofspiel", "skullwhist", 4, 48).await;
    // Each imported game is its finished twin: status, seats, scores,
    // ranks, forfeits, seed, record.
    for (a, b) in finished.iter().zip(&imported) {
        let (x, y) = (
            s.game(*a).await.unwrap().unwrap(),
            s.game(*b).await.unwrap().unwrap(),
        );
        assert_eq!(
            (&x.status, x.seed, &x.finished, &x.record, x.forfeited_by),
            (&y.status, y.seed, &y.finished, &y.record, y.forfeited_by),
        );
        let seats = |g: croupier_store::GameId| {
            let s = Arc::clone(&s);
            async move {
                let v = s.game_summary(g).await.unwrap().unwrap().seats;
                v.iter()
                    .map(|x| (x.bot, x.score, x.rank, x.forfeited))
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(seats(*a).await, seats(*b).await);
    }
    // The tournament's game is stored and listed with it, and not rated.
    let t = s.game(tournament_game).await.unwrap().unwrap();
    assert_eq!(t.status, "finished");
    let listed = s
        .tournaments()
        .filtered_games(
            &croupier_store::tournaments::GamesFilter {
                tournament: Some(cup),
                ..Default::default()
            },
            0,
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        listed.iter().map(|g| g.id).collect::<Vec<_>>(),
        [tournament_game]
    );
    // Every list counts them: 24 of each kind and the tournament's.
    assert_eq!(s.count_games("finished").await.unwrap(), 49);
}

/// Game kinds `kind_a` and `kind_b` rate `bots` bots alike (ratings,
/// counts, histories, head-to-head), over `seats` ranked seats in all.
async fn assert_rated_alike(s: &dyn Store, kind_a: &str, kind_b: &str, bots: usize, seats: i64) {
    let one = s.leaderboard(kind_a).await.unwrap();
    let all = s.leaderboard(kind_b).await.unwrap();
    assert_eq!(one.len(), bots);
    assert_eq!(one.iter().map(|b| b.games).sum::<i64>(), seats);
    let close = |x: f64, y: f64| (x - y).abs() < 1e-9;
    for a in &one {
        let b = all.iter().find(|b| b.bot == a.bot).unwrap();
        assert!(close(a.mu, b.mu) && close(a.sigma, b.sigma), "{a:?} {b:?}");
        assert_eq!(
            (
                a.games,
                a.wins,
                a.losses,
                a.ties,
                a.forfeits,
                &a.last_played
            ),
            (
                b.games,
                b.wins,
                b.losses,
                b.ties,
                b.forfeits,
                &b.last_played
            ),
        );
        let h1 = s.rating_history(a.bot, kind_a, 100).await.unwrap();
        let h2 = s.rating_history(a.bot, kind_b, 100).await.unwrap();
        assert_eq!(h1.len() as i64, a.games);
        assert_eq!(h1.len(), h2.len());
        for (p, q) in h1.iter().zip(&h2) {
            assert!(close(p.mu, q.mu) && close(p.sigma, q.sigma), "{p:?} {q:?}");
        }
    }
    let pairs = |all: Vec<croupier_store::web::PairStats>| {
        let mut v: Vec<_> = all
            .iter()
            .map(|p| (p.bot, p.opponent, p.games, p.wins, p.losses, p.ties))
            .collect();
        v.sort();
        v
    };
    let p1 = pairs(s.pairs(kind_a).await.unwrap());
    let p2 = pairs(s.pairs(kind_b).await.unwrap());
    assert!(!p1.is_empty());
    assert_eq!(p1, p2);
}

async fn a_bad_write_fails_alone(db: Db) {
    let s = db.open().await;
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    assert!(s.start_game("goofspiel", &[a], 1, "t").await.is_err());
    let (ok1, missing, ok2) = ([a, b], [a, b + 1000], [b, a]);
    let (good1, bad, good2) = tokio::join!(
        s.start_game("goofspiel", &ok1, 1, "t"),
        // No such bot: the foreign key refuses it.
        s.start_game("goofspiel", &missing, 2, "t"),
        s.start_game("goofspiel", &ok2, 3, "t"),
    );
    assert!(bad.is_err());
    let (g1, g2) = (good1.unwrap(), good2.unwrap());
    assert_eq!(s.game_bots(g1).await.unwrap(), vec![a, b]);
    assert_eq!(s.game_bots(g2).await.unwrap(), vec![b, a]);
    assert_eq!(s.count_games("running").await.unwrap(), 2);
}

async fn game_lists_are_newest_finished_first_and_filter(db: Db) {
    let s = db.open().await;
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    let c = s.create_bot("c", "h", false).await.unwrap();
    // Started in id order, finished in another order.
    let plan = [
        ("goofspiel", [a, b], "2026-01-01T00:00:05Z"),
        ("skullwhist", [a, c], "2026-01-01T00:00:01Z"),
        ("goofspiel", [b, c], "2026-01-01T00:00:09Z"),
        ("skullwhist", [b, a], "2026-01-01T00:00:03Z"),
    ];
    let mut ids = Vec::new();
    for (i, (game, seats, _)) in plan.iter().enumerate() {
        ids.push(s.start_game(game, seats, i as i64, "t0").await.unwrap());
    }
    for (id, (_, _, at)) in ids.iter().zip(plan.iter()) {
        s.finish_game(*id, &end(vec![1, 2], None, at))
            .await
            .unwrap();
    }
    s.start_game("goofspiel", &[a, c], 9, "t0").await.unwrap();
    let page = |f: GameFilter, off, lim| {
        let s = s.clone();
        async move {
            s.games_page(&f, off, lim)
                .await
                .unwrap()
                .iter()
                .map(|g| g.id)
                .collect::<Vec<_>>()
        }
    };
    let all = GameFilter::default();
    assert_eq!(
        page(all.clone(), 0, 10).await,
        [ids[2], ids[0], ids[3], ids[1]]
    );
    assert_eq!(page(all, 1, 2).await, [ids[0], ids[3]]);
    let goof = GameFilter {
        game: Some("goofspiel".into()),
        bot: None,
    };
    assert_eq!(page(goof, 0, 10).await, [ids[2], ids[0]]);
    let of_a = GameFilter {
        game: None,
        bot: Some(a),
    };
    assert_eq!(page(of_a.clone(), 0, 10).await, [ids[0], ids[3], ids[1]]);
    assert_eq!(s.count_finished(&of_a).await.unwrap(), 3);
    let a_skull = GameFilter {
        game: Some("skullwhist".into()),
        bot: Some(a),
    };
    assert_eq!(page(a_skull.clone(), 0, 10).await, [ids[3], ids[1]]);
    assert_eq!(s.count_finished(&a_skull).await.unwrap(), 2);
    let vs: Vec<i64> = s
        .versus_games(a, b, 10)
        .await
        .unwrap()
        .iter()
        .map(|g| g.id)
        .collect();
    assert_eq!(vs, [ids[0], ids[3]]);
    let all_stats = s.all_stats().await.unwrap();
    let games: Vec<&str> = all_stats.iter().map(|x| x.game.as_str()).collect();
    assert_eq!(
        games,
        [
            "goofspiel",
            "goofspiel",
            "goofspiel",
            "skullwhist",
            "skullwhist",
            "skullwhist"
        ]
    );
}

/// A finished game is committed by the store's writer on a thread of its
/// own: while the caller's one-thread runtime is blocked without yielding,
/// another thread sees the game finished in the database (a writer that
/// were a task of the caller's runtime would wait for it; with PostgreSQL
/// it did, and every finishing move of a busy server waited its turn).
async fn finished_while_the_callers_runtime_is_busy(db: Db) {
    let s = db.open().await;
    let a = s.create_bot("busy-a", "h", false).await.unwrap();
    let b = s.create_bot("busy-b", "h", false).await.unwrap();
    let g = s.start_game("goofspiel", &[a, b], 1, "t0").await.unwrap();
    let finishing = {
        let s = Arc::clone(&s);
        tokio::spawn(async move { s.finish_game(g, &end(vec![1, 2], None, "t1")).await })
    };
    // The task submits its write and waits for the answer.
    tokio::task::yield_now().await;
    let url = db.url.clone();
    // This thread blocks here, never yielding to its runtime.
    let seen = std::thread::spawn(move || status_within(&url, g, "finished", 5))
        .join()
        .unwrap();
    finishing.await.unwrap().unwrap();
    assert_eq!(
        seen, "finished",
        "the write waited for the caller's runtime"
    );
}

/// Game `g`'s status as read by a connection of another thread, polled until
/// it is `want` or `secs` seconds passed.
fn status_within(url: &str, g: i64, want: &str, secs: u64) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let sql = format!("SELECT status FROM games WHERE id = {g}");
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(secs);
        let (sqlite, pg) = if url.starts_with("sqlite:") {
            (Some(sqlx::SqlitePool::connect(url).await.unwrap()), None)
        } else {
            (None, Some(sqlx::PgPool::connect(url).await.unwrap()))
        };
        loop {
            let status: String = match (&sqlite, &pg) {
                (Some(pool), _) => sqlx::query_scalar(&sql).fetch_one(pool).await.unwrap(),
                (_, Some(pool)) => sqlx::query_scalar(&sql).fetch_one(pool).await.unwrap(),
                (None, None) => unreachable!("one pool is open"),
            };
            if status == want || tokio::time::Instant::now() >= deadline {
                return status;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
}

#[tokio::test(flavor = "current_thread")]
async fn sqlite_finished_while_the_callers_runtime_is_busy() {
    finished_while_the_callers_runtime_is_busy(common::sqlite().await.unwrap()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn postgres_finished_while_the_callers_runtime_is_busy() {
    let Some(db) = common::postgres().await else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    finished_while_the_callers_runtime_is_busy(db).await;
}

/// SQLite only: databases made before ratings existed are rated on open.
#[tokio::test]
async fn sqlite_games_finished_before_ratings_are_rated_on_open() {
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
    // More than one transaction's worth (1,000): listed games that are no
    // longer there, which are dropped from the backlog unrated.
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500)
         INSERT INTO ratings_backlog (game_id) SELECT ? + i FROM n",
    )
    .bind(g)
    .execute(&raw)
    .await
    .unwrap();
    let s = SqliteStore::open(&url).await.unwrap();
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM ratings_backlog")
        .fetch_one(&raw)
        .await
        .unwrap();
    assert_eq!(left, 0, "the whole backlog is worked through");
    raw.close().await;
    let board = s.leaderboard("goofspiel").await.unwrap();
    let ids: Vec<i64> = board.iter().map(|r| r.bot).collect();
    assert_eq!(ids, [a, b]);
    assert_eq!((board[0].wins, board[1].losses), (1, 1));
    // Once only.
    drop(s);
    let s = SqliteStore::open(&url).await.unwrap();
    assert_eq!(s.leaderboard("goofspiel").await.unwrap()[0].games, 1);
}

/// SQLite only: the writer's commits never copy the WAL into the database
/// (`wal_autocheckpoint = 0`); a checkpointer beside it does, so finished
/// games reach the database file within a second or so, without a
/// checkpoint run by the test.
#[tokio::test]
async fn sqlite_games_reach_the_database_file_through_the_checkpointer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let s = SqliteStore::open(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let a = s.create_bot("ck-a", "h", false).await.unwrap();
    let b = s.create_bot("ck-b", "h", false).await.unwrap();
    let size = || std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let before = size();
    // 2.4 MB of records: fewer pages than SQLite's default automatic
    // checkpoint (1,000 pages), so only the checkpointer copies them.
    let record = format!("{{\"pad\":\"{}\"}}", "x".repeat(20_000));
    for i in 0..120 {
        let g = s.start_game("goofspiel", &[a, b], i, "t0").await.unwrap();
        let mut e = end(vec![1, 2], None, "t1");
        e.record = record.clone();
        s.finish_game(g, &e).await.unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while size() < before + 2_000_000 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        size() >= before + 2_000_000,
        "the database file stayed at {} bytes (from {before}): the WAL was not copied",
        size()
    );
    assert_eq!(s.leaderboard("goofspiel").await.unwrap()[0].games, 120);
}

/// SQLite only: under a steady stream of writes the WAL is started afresh
/// again and again, so that its file stops growing. SQLite starts the WAL
/// afresh only when a write begins with every frame copied, which the
/// checkpointer beside a busy writer never achieves; the writer finishes
/// the copy itself between batches (`BatchWrite::upkeep`): once a second
/// when no write waits, and, when writes never stop coming, once the last
/// whole copy is two seconds old. Without that the WAL holds every frame
/// written (it grew by 2.4 GB a minute under `bench server`).
///
/// Eight writers leave the writer's queue empty now and then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_wal_stays_bounded_under_a_steady_stream_of_writes() {
    wal_keeps_starting_afresh(8, 1).await;
}

/// SQLite only: as above, with more writers than a batch takes (256), so
/// that writes wait after nearly every batch: the writer copies the WAL
/// anyway once the last whole copy is two seconds old, so it is started
/// afresh at about 2 s and 4 s. (`sqlite_batch`'s unit test holds the rule
/// itself. Here, without it, the WAL was started afresh once or not at all
/// in 6 s and grew to 300–390 MB; with it, two or three times, and stood
/// at 124–137 MB, about two seconds of writes.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_wal_stays_bounded_when_writes_never_stop_coming() {
    wal_keeps_starting_afresh(300, 2).await;
}

/// `writers` tasks write finished games with 1 kB records for 6 s; the WAL
/// must have been started afresh at least `after_2s` times after the first
/// 2 s. Each start afresh
/// adds one to the checkpoint sequence number in the WAL's header (bytes
/// 12..16, big-endian): the test reads it, not the file's size, which is
/// the largest the WAL ever was and grows with any burst of a loaded
/// machine.
async fn wal_keeps_starting_afresh(writers: i64, after_2s: u32) {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let wal = dir.path().join("t.db-wal");
    let s = Arc::new(
        SqliteStore::open(&format!("sqlite://{}", path.display()))
            .await
            .unwrap(),
    );
    let a = s.create_bot("wal-a", "h", false).await.unwrap();
    let b = s.create_bot("wal-b", "h", false).await.unwrap();
    let record = format!("{{\"pad\":\"{}\"}}", "x".repeat(1_000));
    let start = Instant::now();
    let until = start + Duration::from_secs(6);
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..writers {
        let (s, record) = (Arc::clone(&s), record.clone());
        tasks.spawn(async move {
            let mut n = 0i64;
            while Instant::now() < until {
                let g = s
                    .start_game("goofspiel", &[a, b], w * 1_000_000 + n, "t0")
                    .await
                    .unwrap();
                let mut e = end(vec![1, 2], None, "t1");
                e.record = record.clone();
                s.finish_game(g, &e).await.unwrap();
                n += 1;
            }
            n
        });
    }
    // The WAL's size, and how many times it was started afresh.
    let wal_now = || {
        use std::io::Read as _;
        let size = std::fs::metadata(&wal).map_or(0, |m| m.len());
        let mut header = [0u8; 16];
        let read = std::fs::File::open(&wal).and_then(|mut f| f.read_exact(&mut header));
        let restarts = match read {
            Ok(()) => u32::from_be_bytes([header[12], header[13], header[14], header[15]]),
            Err(_) => 0,
        };
        (size, restarts)
    };
    let mut at_2s = (0, 0);
    while Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if start.elapsed() <= Duration::from_secs(2) {
            at_2s = wal_now();
        }
    }
    let mut games = 0;
    while let Some(n) = tasks.join_next().await {
        games += n.unwrap();
    }
    let (size, restarts) = wal_now();
    eprintln!(
        "{writers} writers, {games} games: the WAL started afresh {} times by 2 s ({} bytes), \
         {restarts} by 6 s ({size} bytes)",
        at_2s.1, at_2s.0
    );
    assert!(
        games >= (writers * 10).max(300),
        "only {games} games were written in 6 s by {writers} writers: no steady stream"
    );
    assert!(
        restarts >= at_2s.1 + after_2s,
        "the WAL was started afresh {} times after 2 s, not {after_2s} ({} times before; \
         {games} games in all; {} bytes at 2 s, {size} at the end)",
        restarts - at_2s.1,
        at_2s.1,
        at_2s.0
    );
}

async fn a_remote_bot_names_its_owner(db: Db) {
    let s = db.open().await;
    let owner = s.create_owner("olga", "h").await.unwrap();
    let bot = s
        .create_remote_bot(&remote("pusher", BotKind::Push, owner, None))
        .await
        .unwrap();
    assert_eq!(s.owner_name(bot).await.unwrap().as_deref(), Some("olga"));
    let rest = s.create_bot("resty", "h", false).await.unwrap();
    assert_eq!(s.owner_name(rest).await.unwrap(), None);
}

async fn the_tournament_list_pages_counts_and_names_the_open_ones(db: Db) {
    let s = db.open().await;
    let t = s.tournaments();
    assert_eq!(t.tournament_count().await.unwrap(), 0);
    assert!(t.tournament_page(0, 25).await.unwrap().is_empty());
    assert!(t.open_tournaments().await.unwrap().is_empty());
    assert!(t.tournament_counts().await.unwrap().is_empty());
    let a = s.ensure_house_bot("ha", "goofspiel").await.unwrap();
    let mut ids = Vec::new();
    for k in 0..7 {
        let new = common::tournament(&format!("cup-{k}"), vec![common::entry(a, 0, "ha")]);
        ids.push(t.create_tournament(&new).await.unwrap());
    }
    // cup-0 and cup-1 finished, cup-2 cancelled, cup-3 running, the rest
    // scheduled.
    for (i, status) in [(0, "finished"), (1, "finished"), (2, "cancelled")] {
        assert!(t.end_tournament(ids[i], status, "t1", None).await.unwrap());
    }
    t.start_tournament(ids[3], &[], 1, "t1").await.unwrap();
    assert_eq!(t.tournament_count().await.unwrap(), 7);
    let names = |rows: Vec<croupier_store::tournaments::TournamentRow>| -> Vec<String> {
        rows.into_iter().map(|r| r.name).collect()
    };
    let all = names(t.tournament_list().await.unwrap());
    let mut paged = Vec::new();
    for offset in [0, 3, 6] {
        let page = names(t.tournament_page(offset, 3).await.unwrap());
        assert!(page.len() <= 3, "{page:?}");
        paged.extend(page);
    }
    assert_eq!(paged, all, "the pages are the list, in its order");
    assert_eq!(all.first().map(String::as_str), Some("cup-6"));
    assert!(t.tournament_page(7, 3).await.unwrap().is_empty());
    assert_eq!(
        names(t.open_tournaments().await.unwrap()),
        ["cup-6", "cup-5", "cup-4", "cup-3"]
    );
    assert_eq!(
        t.tournament_counts().await.unwrap(),
        [
            ("cancelled".to_string(), 1),
            ("finished".to_string(), 2),
            ("running".to_string(), 1),
            ("scheduled".to_string(), 3),
        ]
    );
    // A tournament's planned games counted, and its winner kept.
    use croupier_store::tournaments::{NewTournamentGame, PlanCounts};
    assert_eq!(t.plan_counts(ids[3]).await.unwrap(), PlanCounts::default());
    let b = s.ensure_house_bot("hb", "goofspiel").await.unwrap();
    let table = |table_no| NewTournamentGame {
        table_no,
        game_no: 0,
        seats: vec![a, b],
        seed: 1,
    };
    t.plan_round(ids[3], 1, &[table(0), table(1), table(2)])
        .await
        .unwrap();
    let planned = t.tournament_games(ids[3]).await.unwrap();
    let g = t
        .start_tournament_game(planned[0].id, "goofspiel", &[a, b], 1, "t2")
        .await
        .unwrap();
    s.finish_game(g, &end(vec![1, 2], None, "t3"))
        .await
        .unwrap();
    t.finish_tournament_game(planned[0].id, &[1, 2], &[])
        .await
        .unwrap();
    t.start_tournament_game(planned[1].id, "goofspiel", &[a, b], 1, "t4")
        .await
        .unwrap();
    t.withdraw_entry(ids[3], b, 1, "gone").await.unwrap();
    let counts = t.plan_counts(ids[3]).await.unwrap();
    assert_eq!(
        counts,
        PlanCounts::of(&t.tournament_games(ids[3]).await.unwrap())
    );
    assert_eq!(
        (
            counts.done,
            counts.running,
            counts.not_void,
            counts.planned_rounds
        ),
        (1, 1, 2, 1),
        "the pending game is void once its bot is withdrawn"
    );
    // Finished with its winner in one statement, and only if it is not
    // over (the cancel came first: nothing changes).
    assert_eq!(t.tournament(ids[0]).await.unwrap().unwrap().winner, None);
    assert!(!t.finish_tournament(ids[2], "t5", Some("ha")).await.unwrap());
    let cancelled = t.tournament(ids[2]).await.unwrap().unwrap();
    assert_eq!(
        (cancelled.status.as_str(), cancelled.winner),
        ("cancelled", None)
    );
    // Not while it runs.
    assert!(!t.keep_winner(ids[3], Some("ha")).await.unwrap());
    assert!(t.finish_tournament(ids[3], "t5", Some("ha")).await.unwrap());
    let row = t.tournament(ids[3]).await.unwrap().unwrap();
    assert_eq!(
        (
            row.status.as_str(),
            row.winner.as_deref(),
            row.finished_at.as_deref()
        ),
        ("finished", Some("ha"), Some("t5"))
    );
    // A finished tournament's winner may be kept again (the recount's
    // mend), and nobody; a cancelled one's, or a scheduled one's, not.
    assert!(t.keep_winner(ids[3], Some("hb")).await.unwrap());
    let winner = |id| async move { t.tournament(id).await.unwrap().unwrap().winner };
    assert_eq!(winner(ids[3]).await.as_deref(), Some("hb"));
    assert!(t.keep_winner(ids[3], None).await.unwrap());
    assert_eq!(winner(ids[3]).await, None);
    assert!(t.keep_winner(ids[3], Some("ha")).await.unwrap());
    assert!(!t.keep_winner(ids[2], Some("ha")).await.unwrap());
    assert_eq!(winner(ids[2]).await, None);
    assert!(!t.keep_winner(ids[4], Some("ha")).await.unwrap());
    assert_eq!(
        t.tournament(ids[4]).await.unwrap().unwrap().status,
        "scheduled"
    );
    assert_eq!(winner(ids[4]).await, None);
    let counts = t.plan_counts(ids[3]).await.unwrap();
    assert_eq!(
        (counts.done, counts.running, counts.not_void),
        (1, 1, 2),
        "the game being played goes on"
    );
    // Not started: no round is planned, nor started again once over.
    assert!(!t.plan_round(ids[4], 1, &[table(0)]).await.unwrap());
    assert_eq!(t.plan_counts(ids[4]).await.unwrap(), PlanCounts::default());
    assert!(!t.start_tournament(ids[2], &[], 1, "t6").await.unwrap());
    // Over: no round is planned and no entry withdrawn any more (a cancel
    // that came first wins), so nothing of a tournament that is over moves.
    assert!(!t.plan_round(ids[2], 1, &[table(0)]).await.unwrap());
    assert_eq!(t.plan_counts(ids[2]).await.unwrap(), PlanCounts::default());
    assert_eq!(
        t.tournament(ids[2]).await.unwrap().unwrap().current_round,
        0
    );
    t.withdraw_entry(ids[2], a, 1, "late").await.unwrap();
    let entries = t.tournament_entries(ids[2]).await.unwrap();
    assert!(entries.iter().all(|e| e.withdrawn.is_none()), "{entries:?}");
}

async fn a_tournaments_many_planned_games_are_read_whole_in_order(db: Db) {
    use croupier_store::tournaments::NewTournamentGame;
    let s = db.open().await;
    let a = s.ensure_house_bot("ha", "goofspiel").await.unwrap();
    let b = s.ensure_house_bot("hb", "goofspiel").await.unwrap();
    let t = s.tournaments();
    let entries = vec![common::entry(a, 0, "ha"), common::entry(b, 1, "hb")];
    let id = common::started(t, "big", entries, 3).await;
    // Three rounds of 150 tables of two games (many more rows than are
    // read between two yields), each round's tables planned last first.
    for round in 1..=3 {
        let plan: Vec<_> = (0..300)
            .rev()
            .map(|i| NewTournamentGame {
                table_no: i / 2,
                game_no: i % 2,
                seats: vec![a, b],
                seed: round * 1000 + i,
            })
            .collect();
        assert!(t.plan_round(id, round, &plan).await.unwrap());
    }
    let games = t.tournament_games(id).await.unwrap();
    let read: Vec<_> = games
        .iter()
        .map(|g| (g.round, g.table_no, g.game_no, g.seed))
        .collect();
    let want: Vec<_> = (1..=3)
        .flat_map(|round| (0..300).map(move |i| (round, i / 2, i % 2, round * 1000 + i)))
        .collect();
    assert_eq!(read, want);
}

async fn tournaments_keep_entries_plans_results_and_are_not_rated(db: Db) {
    use croupier_store::tournaments::{EntryRow, NewTournament};
    let s = db.open().await;
    let owner = s.create_owner("org", "h").await.unwrap();
    let t = s.tournaments();
    assert!(!t.owner_is_admin(owner).await.unwrap());
    assert!(t.set_owner_admin("org", true).await.unwrap());
    assert!(!t.set_owner_admin("nobody", true).await.unwrap());
    assert!(t.owner_is_admin(owner).await.unwrap());
    let a = s.ensure_house_bot("ha", "goofspiel").await.unwrap();
    let b = s.ensure_house_bot("hb", "goofspiel").await.unwrap();
    let entry = common::entry;
    let new = NewTournament {
        variant: Some("jujitsu".into()),
        format: "swiss".into(),
        rounds: 3,
        duplicate: true,
        seed: -42,
        created_by: Some(owner),
        ..common::tournament("cup", vec![entry(a, 0, "ha"), entry(b, 1, "hb")])
    };
    let id = t.create_tournament(&new).await.unwrap();
    assert!(matches!(
        t.create_tournament(&new).await,
        Err(StoreError::NameTaken)
    ));
    let row = t.tournament(id).await.unwrap().unwrap();
    assert_eq!(
        (row.status.as_str(), row.seed, row.duplicate),
        ("scheduled", -42, true)
    );
    assert_eq!(t.tournament_by_name("cup").await.unwrap().unwrap().id, id);
    assert_eq!(t.tournament_list().await.unwrap().len(), 1);
    let frozen: Vec<EntryRow> = [entry(a, 0, "ha"), entry(b, 1, "hb")]
        .into_iter()
        .map(|mut e| {
            e.frozen = true;
            e.strategy = Some("random".into());
            e
        })
        .collect();
    t.start_tournament(id, &frozen, 3, "t0").await.unwrap();
    let entries = t.tournament_entries(id).await.unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries
        .iter()
        .all(|e| e.frozen && e.strategy.as_deref() == Some("random")));
    assert_eq!(t.tournament(id).await.unwrap().unwrap().status, "running");
    let plan = |game_no, seats| common::plan(game_no, seats, 77);
    t.plan_round(id, 1, &[plan(0, vec![a, b]), plan(1, vec![b, a])])
        .await
        .unwrap();
    let games = t.tournament_games(id).await.unwrap();
    assert_eq!(games.len(), 2);
    assert_eq!(games[1].bots(), vec![b, a]);
    assert_eq!(t.tournament(id).await.unwrap().unwrap().current_round, 1);
    // Dealt and finished: stored as a game, marked, not rated.
    let g = t
        .start_tournament_game(games[0].id, "goofspiel", &[a, b], 77, "t1")
        .await
        .unwrap();
    assert!(t.deal_pending(g).await.unwrap());
    // Scores that do not follow the ranks: kept in seat order.
    let mut first = end(vec![1, 2], None, "t2");
    first.scores = vec![Some(4), Some(6)];
    s.finish_game(g, &first).await.unwrap();
    t.finish_tournament_game(games[0].id, &[1, 2], &[1])
        .await
        .unwrap();
    // The other seating of the deal is still to play: the deal stays secret.
    assert!(t.deal_pending(g).await.unwrap());
    assert!(
        s.game_facts(&[g]).await.unwrap()[0].secret,
        "a page reading facts sees the same secret deal"
    );
    assert!(
        s.bot_stats(a).await.unwrap().is_empty(),
        "tournament games are not rated"
    );
    let done = &t.tournament_games(id).await.unwrap()[0];
    assert_eq!((done.status.as_str(), done.game_id), ("done", Some(g)));
    assert_eq!((done.rank_list(), done.fault_list()), (vec![1, 2], vec![1]));
    // The planned game keeps its game's scores as stored, seat by seat.
    assert_eq!(done.score_by_seat(), vec![Some(4), Some(6)]);
    // A game that never finished is planned again.
    let g2 = t
        .start_tournament_game(games[1].id, "goofspiel", &[b, a], 77, "t3")
        .await
        .unwrap();
    t.reset_tournament_game(games[1].id).await.unwrap();
    let again = &t.tournament_games(id).await.unwrap()[1];
    assert_eq!((again.status.as_str(), again.game_id), ("pending", None));
    assert!(again.score_by_seat().is_empty(), "not done: no scores");
    assert!(g2 > g);
    // Withdrawing voids the bot's pending games; the deal is then public.
    t.withdraw_entry(id, b, 1, "faulted in every game")
        .await
        .unwrap();
    let entries = t.tournament_entries(id).await.unwrap();
    assert_eq!(
        entries[1].withdrawn.as_deref(),
        Some("faulted in every game")
    );
    assert_eq!(t.tournament_games(id).await.unwrap()[1].status, "void");
    assert!(!t.deal_pending(g).await.unwrap());
    assert!(!s.game_facts(&[g]).await.unwrap()[0].secret);
    assert_eq!(t.bot_tournaments(a).await.unwrap().len(), 1);
    s.abort_game(g2, "restart", "t4").await.unwrap();
    assert_eq!(t.tournament_game_counts(id).await.unwrap(), (1, 1, 0));
    assert!(t.end_tournament(id, "finished", "t9", None).await.unwrap());
    // Over is over: a late cancel changes nothing.
    assert!(!t
        .end_tournament(id, "cancelled", "t10", Some("late"))
        .await
        .unwrap());
    let row = t.tournament(id).await.unwrap().unwrap();
    assert_eq!(
        (row.status.as_str(), row.finished_at.as_deref()),
        ("finished", Some("t9"))
    );
    // A ladder game is rated as before.
    let l = s.start_game("goofspiel", &[a, b], 5, "t10").await.unwrap();
    s.finish_game(l, &end(vec![1, 2], None, "t11"))
        .await
        .unwrap();
    assert_eq!(s.bot_stats(a).await.unwrap().len(), 1);
    assert!(!t.deal_pending(l).await.unwrap());
}

async fn tournament_entries_keep_their_hosted_version_and_games_filter_by_tournament(db: Db) {
    use croupier_store::tournaments::{
        EntryRow, GamesFilter, Marked, NewTournament, NewTournamentGame,
    };
    let s = db.open().await;
    let owner = s.create_owner("org", "h").await.unwrap();
    let hosty = s
        .create_remote_bot(&remote("hosty", BotKind::Hosted, owner, None))
        .await
        .unwrap();
    let house = s.ensure_house_bot("ha", "goofspiel").await.unwrap();
    let v1 = s.add_bot_version(&version(hosty, "aa")).await.unwrap();
    s.set_version_status(v1.id, ACTIVE, None, None)
        .await
        .unwrap();
    let t = s.tournaments();
    let entry = |bot, seq, name: &str, kind| EntryRow {
        kind,
        ..common::entry(bot, seq, name)
    };
    let new = |name: &str| NewTournament {
        created_by: Some(owner),
        ..common::tournament(
            name,
            vec![
                entry(hosty, 0, "hosty", BotKind::Hosted),
                entry(house, 1, "ha", BotKind::House),
            ],
        )
    };
    let id = t.create_tournament(&new("cup")).await.unwrap();
    let mut frozen = new("cup").entries;
    frozen[0].frozen = true;
    frozen[0].version_id = Some(v1.id);
    frozen[0].version = Some(v1.version);
    t.start_tournament(id, &frozen, 1, "t0").await.unwrap();
    // A newer upload does not change the frozen version.
    let v2 = s.add_bot_version(&version(hosty, "bb")).await.unwrap();
    s.set_version_status(v2.id, ACTIVE, None, None)
        .await
        .unwrap();
    let entries = t.tournament_entries(id).await.unwrap();
    assert_eq!(
        (entries[0].version_id, entries[0].version),
        (Some(v1.id), Some(1))
    );
    assert_eq!((entries[1].version_id, entries[1].version), (None, None));
    // One tournament game and one ladder game, both finished.
    t.plan_round(
        id,
        1,
        &[NewTournamentGame {
            table_no: 0,
            game_no: 0,
            seats: vec![hosty, house],
            seed: 3,
        }],
    )
    .await
    .unwrap();
    let plan = t.tournament_games(id).await.unwrap()[0].id;
    let tg = t
        .start_tournament_game(plan, "goofspiel", &[hosty, house], 3, "t1")
        .await
        .unwrap();
    s.finish_game(tg, &end(vec![1, 2], None, "t2"))
        .await
        .unwrap();
    let lg = s
        .start_game("goofspiel", &[house, hosty], 4, "t3")
        .await
        .unwrap();
    s.finish_game(lg, &end(vec![1, 2], None, "t4"))
        .await
        .unwrap();
    let other = s
        .start_game("loveletter", &[house, hosty], 4, "t5")
        .await
        .unwrap();
    s.finish_game(other, &end(vec![1, 2], None, "t6"))
        .await
        .unwrap();
    let ids = |f: GamesFilter| async move {
        let games = t.filtered_games(&f, 0, 50).await.unwrap();
        let n = t.count_filtered_games(&f).await.unwrap();
        assert_eq!(n as usize, games.len(), "{f:?}");
        games.iter().map(|g| g.id).collect::<Vec<_>>()
    };
    let by = |tournament, marked| GamesFilter {
        tournament,
        marked,
        ..GamesFilter::default()
    };
    assert_eq!(ids(by(Some(id), Marked::All)).await, vec![tg]);
    assert_eq!(ids(by(None, Marked::Only)).await, vec![tg]);
    assert_eq!(ids(by(None, Marked::Hide)).await, vec![other, lg]);
    assert_eq!(ids(by(None, Marked::All)).await, vec![other, lg, tg]);
    assert_eq!(ids(by(Some(id + 1), Marked::All)).await, Vec::<i64>::new());
    let games = t
        .filtered_games(&by(Some(id), Marked::All), 0, 50)
        .await
        .unwrap();
    assert_eq!(games[0].seats.len(), 2);
    assert_eq!(
        ids(GamesFilter {
            game: Some("goofspiel".into()),
            bot: Some(hosty),
            marked: Marked::Hide,
            ..GamesFilter::default()
        })
        .await,
        vec![lg]
    );
    // Cancelled: its pending games are void, and it stays cancelled.
    let id2 = t.create_tournament(&new("cup2")).await.unwrap();
    assert!(t
        .end_tournament(id2, "cancelled", "t7", Some("cancelled by org"))
        .await
        .unwrap());
    let row = t.tournament(id2).await.unwrap().unwrap();
    assert_eq!(
        (row.status.as_str(), row.reason.as_deref()),
        ("cancelled", Some("cancelled by org"))
    );
    assert!(!t.end_tournament(id2, "finished", "t8", None).await.unwrap());
}

fn version(bot: i64, hash: &str) -> NewVersion {
    NewVersion {
        bot,
        file_hash: hash.into(),
        file_size: 120,
        file_name: "bot.py".into(),
        runtime: "python3".into(),
        entry: "bot.py".into(),
        dialect: "gops".into(),
    }
}

async fn hosted_bots_keep_versions_files_and_match_stderr(db: Db) {
    let s = db.open().await;
    let owner = s.create_owner("olga", "h").await.unwrap();
    let bot = s
        .create_remote_bot(&remote("hosty", BotKind::Hosted, owner, None))
        .await
        .unwrap();
    let other = s
        .create_remote_bot(&remote("other", BotKind::Hosted, owner, None))
        .await
        .unwrap();
    // Listed with the remote bots, of its own kind.
    let listed = s.remote_bots().await.unwrap();
    let hosty = listed.iter().find(|b| b.id == bot).unwrap();
    assert_eq!(hosty.kind, BotKind::Hosted);
    // Versions number from 1 per bot; the same file twice is one file row.
    let v1 = s.add_bot_version(&version(bot, "aa")).await.unwrap();
    let v2 = s.add_bot_version(&version(bot, "aa")).await.unwrap();
    let w1 = s.add_bot_version(&version(other, "bb")).await.unwrap();
    assert_eq!((v1.version, v2.version, w1.version), (1, 2, 1));
    assert_eq!(v1.status, "validating");
    assert_eq!(s.active_version(bot).await.unwrap(), None);
    // The newest active version plays; a failed one keeps its reason.
    s.set_version_status(v1.id, ACTIVE, None, Some("hello"))
        .await
        .unwrap();
    s.set_version_status(v2.id, FAILED, Some("crashed"), Some("Traceback"))
        .await
        .unwrap();
    let active = s.active_version(bot).await.unwrap().unwrap();
    assert_eq!(active.version, 1);
    let all = s.bot_versions(bot).await.unwrap();
    assert_eq!(
        all.iter()
            .map(|v| (v.version, v.status.as_str(), v.reason.as_deref()))
            .collect::<Vec<_>>(),
        vec![(2, "failed", Some("crashed")), (1, "active", None)]
    );
    assert_eq!(all[0].stderr.as_deref(), Some("Traceback"));
    // A third version activated replaces the first on the ladder.
    let v3 = s.add_bot_version(&version(bot, "cc")).await.unwrap();
    s.set_version_status(v3.id, ACTIVE, None, None)
        .await
        .unwrap();
    assert_eq!(s.active_version(bot).await.unwrap().unwrap().version, 3);
    // Games keep the version that played them, and its stderr.
    let house = s
        .ensure_house_bot("house-random-goofspiel", "goofspiel")
        .await
        .unwrap();
    let g1 = s
        .start_game("goofspiel", &[bot, house], 1, "t1")
        .await
        .unwrap();
    let g2 = s
        .start_game("goofspiel", &[house, bot], 2, "t2")
        .await
        .unwrap();
    s.add_hosted_match(g1, bot, 1, "first").await.unwrap();
    s.add_hosted_match(g2, bot, 3, "").await.unwrap();
    let m = s.hosted_matches(bot, 10).await.unwrap();
    assert_eq!(
        m.iter()
            .map(|m| (m.game_id, m.version, m.stderr.as_str()))
            .collect::<Vec<_>>(),
        vec![(g2, 3, ""), (g1, 1, "first")]
    );
    assert_eq!(s.hosted_matches(bot, 1).await.unwrap().len(), 1);
    assert!(s.hosted_matches(other, 10).await.unwrap().is_empty());
    assert_eq!(s.game_versions(g1).await.unwrap(), vec![(bot, 1)]);
    assert_eq!(s.game_versions(g2).await.unwrap(), vec![(bot, 3)]);
}

// Issue 16: people in the loop.

async fn games_people_play_are_stored_but_rate_no_bot(db: Db) {
    let s = db.open().await;
    let person = s
        .ensure_house_bot("person-goofspiel", "goofspiel")
        .await
        .unwrap();
    let house = s
        .ensure_house_bot("house-random-goofspiel", "goofspiel")
        .await
        .unwrap();
    let g = s
        .start_game("goofspiel", &[person, house], 1, "t0")
        .await
        .unwrap();
    s.mark_person_game(g, 0, "guest").await.unwrap();
    s.finish_game(g, &end(vec![1, 2], None, "2026-01-01T00:00:00Z"))
        .await
        .unwrap();
    let row = s.game(g).await.unwrap().unwrap();
    assert_eq!(row.status, "finished");
    let p = s.person_game(g).await.unwrap().unwrap();
    assert_eq!((p.seat, p.player.as_str()), (0, "guest"));
    assert!(s.leaderboard("goofspiel").await.unwrap().is_empty());
    // The same pair without a person is rated.
    let g2 = s
        .start_game("goofspiel", &[person, house], 2, "t0")
        .await
        .unwrap();
    s.finish_game(g2, &end(vec![1, 2], None, "2026-01-01T00:01:00Z"))
        .await
        .unwrap();
    assert_eq!(s.person_game(g2).await.unwrap(), None);
    assert_eq!(s.leaderboard("goofspiel").await.unwrap().len(), 2);
}

// Issue 48: people rated apart from the bots.

async fn people_are_rated_against_bots_in_a_pool_of_their_own(db: Db) {
    let s = db.open().await;
    let person = s
        .ensure_house_bot("person-goofspiel", "goofspiel")
        .await
        .unwrap();
    let house = s
        .ensure_house_bot("house-random-goofspiel", "goofspiel")
        .await
        .unwrap();
    // Ann wins her first game and loses her second; Bob loses his.
    let mut games = Vec::new();
    for (i, (player, seat, ranks)) in [
        ("guest-aaaaaa", 0, vec![1, 2]),
        ("guest-aaaaaa", 1, vec![1, 2]),
        ("bob", 1, vec![1, 2]),
    ]
    .into_iter()
    .enumerate()
    {
        let seats = if seat == 0 {
            [person, house]
        } else {
            [house, person]
        };
        let g = s
            .start_game("goofspiel", &seats, i as i64, "t0")
            .await
            .unwrap();
        s.mark_person_game(g, seat, player).await.unwrap();
        // Not rated while it runs.
        assert!(!s.rate_person_game(g).await.unwrap());
        s.finish_game(g, &end(ranks, None, &format!("2026-01-01T00:0{i}:00Z")))
            .await
            .unwrap();
        assert!(s.rate_person_game(g).await.unwrap(), "game {i} is rated");
        assert!(!s.rate_person_game(g).await.unwrap(), "once");
        games.push(g);
    }
    let board = s.people_leaderboard("goofspiel", 10).await.unwrap();
    let row = |kind: &str, name: &str| {
        board
            .iter()
            .find(|r| r.kind == kind && r.name == name)
            .unwrap_or_else(|| panic!("{kind} {name} in {board:?}"))
            .clone()
    };
    let ann = row("person", "guest-aaaaaa");
    assert_eq!((ann.games, ann.wins, ann.losses, ann.ties), (2, 1, 1, 0));
    let bob = row("person", "bob");
    assert_eq!((bob.games, bob.wins, bob.losses), (1, 0, 1));
    let bot = row("bot", "house-random-goofspiel");
    assert_eq!((bot.games, bot.wins, bot.losses), (3, 2, 1));
    assert!(bot.conservative > bob.conservative, "{board:?}");
    assert!(board
        .windows(2)
        .all(|w| w[0].conservative >= w[1].conservative));
    assert_eq!(ann.last_played.as_deref(), Some("2026-01-01T00:01:00Z"));
    // The bots' own ratings never see people's games.
    assert!(s.leaderboard("goofspiel").await.unwrap().is_empty());
    // A person's page: their ratings and games, newest first.
    let mine = s.person_ratings("guest-aaaaaa").await.unwrap();
    assert_eq!(mine.len(), 1);
    let played = s.person_games("guest-aaaaaa", 10).await.unwrap();
    assert_eq!(
        played
            .iter()
            .map(|g| (g.game_id, g.seat, g.rank))
            .collect::<Vec<_>>(),
        vec![(games[1], 1, Some(2)), (games[0], 0, Some(1))]
    );
    assert!(s.person_games("nobody", 10).await.unwrap().is_empty());
    // A game without a person is not in the people's pool.
    let g = s
        .start_game("goofspiel", &[person, house], 9, "t0")
        .await
        .unwrap();
    s.finish_game(g, &end(vec![1, 2], None, "2026-01-01T00:09:00Z"))
        .await
        .unwrap();
    assert!(!s.rate_person_game(g).await.unwrap());
}

async fn owners_open_their_bots_to_challenges(db: Db) {
    let s = db.open().await;
    let owner = s.create_owner("oona", "h").await.unwrap();
    let a = s
        .create_remote_bot(&remote("open-a", BotKind::Push, owner, None))
        .await
        .unwrap();
    let b = s
        .create_remote_bot(&remote("open-b", BotKind::Pull, owner, Some("t")))
        .await
        .unwrap();
    assert!(s.challengeable_bots().await.unwrap().is_empty());
    s.set_bot_challenges(a, true).await.unwrap();
    s.set_bot_challenges(b, true).await.unwrap();
    assert_eq!(s.challengeable_bots().await.unwrap(), vec![a, b]);
    s.set_bot_challenges(a, false).await.unwrap();
    assert_eq!(s.challengeable_bots().await.unwrap(), vec![b]);
}

// Issue 13 (wc): ladder leases between processes.
// Issue 13 (wg): one registry. On PostgreSQL every game a registered
// process deals (REST, people's, tournament games) names it, so the reaper
// closes them with its ladder matches; a process reaped while frozen comes
// back under its id. SQLite (one process) leaves `start_game` unleased.
async fn games_a_registered_process_deals_are_closed_when_it_is_lost(db: Db) {
    let s = db.open().await;
    let l = s.leases();
    let [a, b] = [
        s.create_bot("ra", "h", false).await.unwrap(),
        s.create_bot("rb", "h", false).await.unwrap(),
    ];
    let before = s.start_game("skullwhist", &[a, b], 1, "t0").await.unwrap();
    let p = l
        .register_process(&common::process("serve", 42, 60_000))
        .await
        .unwrap();
    l.lease_new_games(p.id);
    let g = s.start_game("skullwhist", &[a, b], 2, "t0").await.unwrap();
    assert!(l.heartbeat(p.id, -1_000).await.unwrap());
    let reaped = l
        .reap_processes(Reap::Expired, "worker lost", "t1")
        .await
        .unwrap();
    assert_eq!(reaped.len(), 1);
    let row = s.game(g).await.unwrap().unwrap();
    if l.shared() {
        assert_eq!(reaped[0].games, vec![g]);
        assert_eq!(row.status, "aborted");
        let reason = row.reason.unwrap();
        assert!(
            reason.starts_with("worker lost: serve h pid 42"),
            "{reason}"
        );
    } else {
        assert!(reaped[0].games.is_empty());
        assert_eq!(row.status, "running");
    }
    // A game dealt before the registration is nobody's.
    assert_eq!(s.game(before).await.unwrap().unwrap().status, "running");
    // Reaped, the process registers again under its old id.
    let again = l
        .register_again(p.id, &common::process("serve", 42, 60_000))
        .await
        .unwrap();
    assert_eq!(again.id, p.id);
    assert!(l.heartbeat(p.id, 60_000).await.unwrap());
    // Its id cannot be taken twice.
    assert!(l
        .register_again(p.id, &common::process("serve", 42, 60_000))
        .await
        .is_err());
}

async fn ladder_leases_seat_a_bot_once_and_the_dead_are_reaped(db: Db) {
    let s = db.open().await;
    let l = s.leases();
    let [a, b, c, d] = [
        s.create_bot("la", "h", false).await.unwrap(),
        s.create_bot("lb", "h", false).await.unwrap(),
        s.create_bot("lc", "h", false).await.unwrap(),
        s.create_bot("ld", "h", false).await.unwrap(),
    ];
    let p1 = l
        .register_process(&common::process("serve", 42, 60_000))
        .await
        .unwrap();
    let p2 = l
        .register_process(&common::process("worker", 42, 60_000))
        .await
        .unwrap();
    assert!(p1.expires_ms >= p1.beat_ms + 59_000, "{p1:?}");
    let game = |p: i64, bots: &'static [i64], claim: &'static [i64]| LeasedGame {
        process: p,
        game: "goofspiel",
        bots,
        claim,
        seed: 5,
        started: "t0",
    };
    let bots_ab: &'static [i64] = Box::leak(vec![a, b].into_boxed_slice());
    let bots_bc: &'static [i64] = Box::leak(vec![b, c].into_boxed_slice());
    let bots_cd: &'static [i64] = Box::leak(vec![d, c].into_boxed_slice());
    let g1 = l
        .start_leased_game(&game(p1.id, bots_ab, bots_ab))
        .await
        .unwrap()
        .unwrap();
    // b is taken: nothing is dealt.
    assert_eq!(
        l.start_leased_game(&game(p2.id, bots_bc, bots_bc))
            .await
            .unwrap(),
        None
    );
    assert_eq!(s.count_games("running").await.unwrap(), 1);
    let g2 = l
        .start_leased_game(&game(p2.id, bots_cd, bots_cd))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(s.game_bots(g2).await.unwrap(), vec![d, c]);
    assert_eq!(l.taken_bots().await.unwrap(), vec![a, b, c, d]);
    // Released with a long rest, a bot stays taken; with none it is free.
    l.release_bots(p1.id, &[a], 60_000).await.unwrap();
    l.release_bots(p1.id, &[b], 0).await.unwrap();
    // Another process's release changes nothing.
    l.release_bots(p1.id, &[c], 0).await.unwrap();
    assert_eq!(l.taken_bots().await.unwrap(), vec![a, c, d]);
    let g3 = l
        .start_leased_game(&game(p2.id, bots_ab, &[]))
        .await
        .unwrap();
    assert!(g3.is_some(), "bots not claimed may sit at another table");
    s.abort_game(g3.unwrap(), "test", "t1").await.unwrap();
    // p2 stops renewing: it is reaped once, its game closed, bots freed.
    assert!(l.heartbeat(p2.id, -1_000).await.unwrap());
    assert!(l.heartbeat(p1.id, 60_000).await.unwrap());
    let reaped = l
        .reap_processes(Reap::Expired, "worker lost", "t2")
        .await
        .unwrap();
    assert_eq!(reaped.len(), 1, "{reaped:?}");
    assert_eq!(
        (reaped[0].process.id, &reaped[0].games, &reaped[0].bots),
        (p2.id, &vec![g2], &{
            let mut v = vec![c, d];
            v.sort_unstable();
            v
        })
    );
    let closed = s.game(g2).await.unwrap().unwrap();
    assert_eq!(closed.status, "aborted");
    let reason = closed.reason.unwrap();
    assert!(
        reason.starts_with("worker lost: worker h pid 42") && reason.contains(&p2.id.to_string()),
        "{reason}"
    );
    assert!(l
        .reap_processes(Reap::Expired, "worker lost", "t2")
        .await
        .unwrap()
        .is_empty());
    assert!(!l.heartbeat(p2.id, 60_000).await.unwrap());
    // A reaped process can claim nothing; its late finish changes nothing.
    assert_eq!(
        l.start_leased_game(&game(p2.id, bots_cd, bots_cd))
            .await
            .unwrap(),
        None
    );
    s.finish_game(g2, &end(vec![1, 2], None, "t3"))
        .await
        .unwrap();
    let still = s.game(g2).await.unwrap().unwrap();
    assert_eq!((still.status.as_str(), still.record), ("aborted", None));
    s.finish_game(g1, &end(vec![1, 2], None, "t3"))
        .await
        .unwrap();
    assert_eq!(s.count_games("finished").await.unwrap(), 1);
    assert_eq!(l.taken_bots().await.unwrap(), vec![a]);
    // A process stopping in order, and a process taking over alone.
    let p3 = l
        .register_process(&common::process("worker", 42, 60_000))
        .await
        .unwrap();
    let g4 = l
        .start_leased_game(&game(p3.id, bots_cd, bots_cd))
        .await
        .unwrap()
        .unwrap();
    let gone = l
        .reap_processes(Reap::One(p3.id), "process stopped", "t4")
        .await
        .unwrap();
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].games, vec![g4]);
    let p4 = l
        .register_process(&common::process("serve", 42, 60_000))
        .await
        .unwrap();
    let others = l
        .reap_processes(Reap::AllBut(p4.id), "worker lost", "t5")
        .await
        .unwrap();
    assert_eq!(
        others.iter().map(|r| r.process.id).collect::<Vec<_>>(),
        vec![p1.id]
    );
    let left: Vec<i64> = l.processes().await.unwrap().iter().map(|p| p.id).collect();
    assert_eq!(left, vec![p4.id]);
    assert!(l.taken_bots().await.unwrap().is_empty());
}

/// Issue 53: what the website reads of a record (its facts) is stored with
/// it by every way a game is stored, and read for a list of games at once.
async fn facts_are_stored_with_the_record_and_read_for_a_list_of_games(db: Db) {
    let s = db.open().await;
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    let with = |facts: &str| GameEnd {
        facts: Some(facts.into()),
        ..end(vec![1, 2], None, "t1")
    };
    let finished = s.start_game("goofspiel", &[a, b], 1, "t0").await.unwrap();
    s.finish_game(finished, &with("{\"seats\":[]}"))
        .await
        .unwrap();
    let older = s.start_game("goofspiel", &[a, b], 2, "t0").await.unwrap();
    s.finish_game(older, &end(vec![2, 1], None, "t1"))
        .await
        .unwrap();
    let running = s.start_game("goofspiel", &[b, a], 3, "t0").await.unwrap();
    let imported = s
        .import_games(vec![ImportGame {
            tournament: None,
            game: "goofspiel".into(),
            bots: vec![a, b],
            seed: 4,
            started: "t0".into(),
            end: with("{\"lead\":1,\"seats\":[]}"),
        }])
        .await
        .unwrap()[0];
    let mut rows = s
        .game_facts(&[imported, running, older, finished, imported + 100])
        .await
        .unwrap();
    rows.sort_by_key(|r| r.id);
    let got: Vec<(i64, &str, bool, Option<&str>)> = rows
        .iter()
        .map(|r| (r.id, r.status.as_str(), r.secret, r.facts.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            (finished, "finished", false, Some("{\"seats\":[]}")),
            (older, "finished", false, None),
            (running, "running", false, None),
            (
                imported,
                "finished",
                false,
                Some("{\"lead\":1,\"seats\":[]}")
            ),
        ]
    );
    assert!(s.game_facts(&[]).await.unwrap().is_empty());
}

/// Issue 53: a page read from the oldest end, or from a game (`before`,
/// `after`: the older and newer links), holds the games the newest-first
/// order has there, for every filter, with finish times that tie; and a
/// versus page's rating points are the bots' history rows of those games.
async fn pages_from_either_end_and_from_a_game_match_the_newest_first_order(db: Db) {
    let s = db.open().await;
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    let c = s.create_bot("c", "h", false).await.unwrap();
    let mut ids = Vec::new();
    for i in 0..23i64 {
        let (game, seats) = match i % 3 {
            0 => ("goofspiel", [a, b]),
            1 => ("skullwhist", [b, a]),
            _ => ("skullwhist", [a, c]),
        };
        let id = s.start_game(game, &seats, i, "t0").await.unwrap();
        // Finish times out of id order, four games to a second.
        let at = format!("2026-01-01T00:00:{:02}Z", (i * 7) % 23 / 4);
        s.finish_game(id, &end(vec![1, 2], None, &at))
            .await
            .unwrap();
        ids.push(id);
    }
    let running = s.start_game("goofspiel", &[a, c], 99, "t0").await.unwrap();
    let listed = |games: Vec<croupier_store::web::GameSummary>| -> Vec<i64> {
        games.iter().map(|g| g.id).collect()
    };
    let filters = [
        common::list(None, None),
        common::list(Some("skullwhist"), None),
        common::list(None, Some(a)),
        common::list(Some("skullwhist"), Some(a)),
    ];
    for f in &filters {
        let all = listed(s.games_page(f, 0, 100).await.unwrap());
        assert_eq!(
            all.len() as i64,
            s.count_finished(f).await.unwrap(),
            "{f:?}"
        );
        let n = all.len();
        for skip in 0..n {
            for limit in [1, 4] {
                let from = n.saturating_sub(skip + limit);
                let got = listed(
                    s.games_at(f, PageAt::Oldest(skip as i64), limit as i64)
                        .await
                        .unwrap(),
                );
                assert_eq!(got, all[from..n - skip], "{f:?} oldest {skip} {limit}");
            }
        }
        for (i, id) in all.iter().enumerate() {
            let older = listed(s.games_at(f, PageAt::Before(*id), 4).await.unwrap());
            assert_eq!(older, all[i + 1..(i + 5).min(n)], "{f:?} before {id}");
            let newer = listed(s.games_at(f, PageAt::After(*id), 4).await.unwrap());
            assert_eq!(newer, all[i.saturating_sub(4)..i], "{f:?} after {id}");
        }
        for missing in [running, ids[22] + 1000] {
            assert!(s
                .games_at(f, PageAt::Before(missing), 4)
                .await
                .unwrap()
                .is_empty());
            assert!(s
                .games_at(f, PageAt::After(missing), 4)
                .await
                .unwrap()
                .is_empty());
        }
    }
    // A game of another kind names a place in the order all the same.
    let skull = &filters[1];
    let all = listed(s.games_page(skull, 0, 100).await.unwrap());
    let goof_game = ids[12];
    let mut whole = listed(s.games_page(&filters[0], 0, 100).await.unwrap());
    let at = whole.iter().position(|id| *id == goof_game).unwrap();
    whole.truncate(at);
    let expected: Vec<i64> = all
        .iter()
        .filter(|id| !whole.contains(id))
        .copied()
        .take(4)
        .collect();
    assert_eq!(
        listed(
            s.games_at(skull, PageAt::Before(goof_game), 4)
                .await
                .unwrap()
        ),
        expected
    );
    // Rating points of chosen games: the history rows, oldest first.
    let history = s.rating_history(a, "skullwhist", 100).await.unwrap();
    let chosen = [ids[22], ids[1], ids[4], ids[2], running];
    let points = s.rating_points(a, &chosen).await.unwrap();
    let expected: Vec<_> = history
        .iter()
        .filter(|p| chosen.contains(&p.game_id))
        .copied()
        .collect();
    assert_eq!(points.len(), 4, "{points:?}");
    assert_eq!(points, expected);
    let goof = s.rating_points(a, &[ids[0], ids[3]]).await.unwrap();
    assert_eq!(
        goof.iter().map(|p| p.game_id).collect::<Vec<_>>(),
        [ids[0], ids[3]]
    );
    assert!(s.rating_points(a, &[]).await.unwrap().is_empty());
    assert!(s.rating_points(c, &[ids[0]]).await.unwrap().is_empty());
}

/// A PostgreSQL server that cannot be reached: opening the store says
/// why (the connection refused), not only that its pool timed out, and
/// does not write the URL's password.
#[tokio::test]
async fn an_unreachable_postgres_says_why() {
    // A loopback port nothing listens on (bound, then let go).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://croupier:s3cret@127.0.0.1:{port}/croupier");
    let Err(e) = croupier_store::open(&url).await else {
        panic!("opened a database where nothing listens");
    };
    let said = e.to_string();
    assert!(
        matches!(e, StoreError::Unreachable { .. }),
        "{said} ({e:?})"
    );
    assert!(said.to_lowercase().contains("refused"), "{said}");
    assert!(!said.contains("s3cret"), "{said}");
}

/// Games imported with a tournament (the benchmark's seeded cups) are that
/// tournament's as a played one's are: in its list and a bot's, counted
/// among the tournament games of every list, and not rated.
async fn imported_tournament_games_are_listed_counted_and_not_rated(db: Db) {
    use croupier_store::tournaments::{GamesFilter, Marked};
    let s = db.open().await;
    let a = s.ensure_house_bot("ha", "goofspiel").await.unwrap();
    let b = s.ensure_house_bot("hb", "goofspiel").await.unwrap();
    let c = s.ensure_house_bot("hc", "goofspiel").await.unwrap();
    let entry = common::entry;
    let t = s.tournaments();
    let cup = t
        .create_tournament(&common::tournament(
            "cup",
            vec![entry(a, 0, "ha"), entry(b, 1, "hb")],
        ))
        .await
        .unwrap();
    let game = |i: i64, bots: Vec<i64>, tournament| ImportGame {
        game: "goofspiel".into(),
        bots,
        seed: i,
        started: format!("2026-12-05T10:{i:02}:00Z"),
        end: end(vec![1, 2], None, &format!("2026-12-05T10:{i:02}:30Z")),
        tournament,
    };
    let ids = s
        .import_games(vec![
            game(1, vec![a, b], None),
            game(2, vec![a, b], Some(cup)),
            game(3, vec![b, a], Some(cup)),
            game(4, vec![a, c], None),
            game(5, vec![b, a], Some(cup)),
        ])
        .await
        .unwrap();
    assert_eq!(ids.len(), 5);
    let listed = |tournament, bot, marked| GamesFilter {
        game: None,
        bot,
        tournament,
        marked,
    };
    let ids_of = |filter: GamesFilter| {
        let t = s.tournaments();
        async move {
            let games = t.filtered_games(&filter, 0, 50).await.unwrap();
            let counted = t.count_filtered_games(&filter).await.unwrap();
            assert_eq!(counted, games.len() as i64, "{filter:?}");
            games.iter().map(|g| g.id).collect::<Vec<_>>()
        }
    };
    let cup_games = vec![ids[4], ids[2], ids[1]];
    assert_eq!(
        ids_of(listed(Some(cup), None, Marked::All)).await,
        cup_games
    );
    assert_eq!(
        ids_of(listed(Some(cup), Some(a), Marked::All)).await,
        cup_games
    );
    assert_eq!(ids_of(listed(None, None, Marked::Only)).await, cup_games);
    assert_eq!(ids_of(listed(None, Some(b), Marked::Only)).await, cup_games);
    assert_eq!(
        ids_of(listed(None, None, Marked::Hide)).await,
        vec![ids[3], ids[0]]
    );
    assert_eq!(
        ids_of(listed(None, Some(a), Marked::Hide)).await,
        vec![ids[3], ids[0]]
    );
    assert_eq!(
        t.tournament_game_counts(cup).await.unwrap(),
        (3, 0, 0),
        "finished, aborted, running"
    );
    // Each is the cup's planned game too, done, at the next table of round
    // 1, in the order imported; a later import goes on at the next table,
    // its forfeiting seat as the seat that faulted.
    let mut forfeit = game(6, vec![a, b], Some(cup));
    forfeit.end = end(vec![1, 2], Some(b), "2026-12-05T10:06:30Z");
    forfeit.end.scores = vec![None, Some(3)];
    let later = s.import_games(vec![forfeit]).await.unwrap();
    // Its round 1 is under way.
    assert_eq!(t.tournament(cup).await.unwrap().unwrap().current_round, 1);
    let plans: Vec<_> = t
        .tournament_games(cup)
        .await
        .unwrap()
        .into_iter()
        .map(|g| {
            let (round, table, no) = (g.round, g.table_no, g.game_no);
            let texts = (g.seats.clone(), g.ranks.clone(), g.faults.clone());
            (
                round,
                table,
                no,
                g.status.clone(),
                g.game_id,
                texts,
                g.score_by_seat(),
            )
        })
        .collect();
    let text = |s: String| Some(s);
    let plan = |table, id, seats: [i64; 2], faults: &str, scores: Vec<Option<i64>>| {
        let seats = format!("{},{}", seats[0], seats[1]);
        let texts = (seats, text("1,2".into()), text(faults.into()));
        (1, table, 0, "done".to_string(), Some(id), texts, scores)
    };
    assert_eq!(
        plans,
        vec![
            plan(0, ids[1], [a, b], "", vec![Some(9), Some(8)]),
            plan(1, ids[2], [b, a], "", vec![Some(9), Some(8)]),
            plan(2, ids[4], [b, a], "", vec![Some(9), Some(8)]),
            plan(3, later[0], [a, b], "1", vec![None, Some(3)]),
        ]
    );
    // Rated: the two ladder games only (a played both, b and c one each).
    let board = s.leaderboard("goofspiel").await.unwrap();
    let games_of = |bot| board.iter().find(|r| r.bot == bot).map_or(0, |r| r.games);
    assert_eq!((games_of(a), games_of(b), games_of(c)), (2, 1, 1));
    let history = s.rating_history(a, "goofspiel", 100).await.unwrap();
    assert_eq!(history.len(), 2, "{history:?}");
}

/// A database from before planned games kept their scores (SQLite's
/// migration 0021, PostgreSQL's 0023, "tournament game scores"): the
/// migration fills them for the games already done, by seat; `db recount`
/// fills those a done game still lacks (finished meanwhile by an older
/// instance).
async fn done_tournament_games_get_their_scores_from_the_migration_and_the_recount(db: Db) {
    let s = db.open().await;
    let a = s.ensure_house_bot("ha", "goofspiel").await.unwrap();
    let b = s.ensure_house_bot("hb", "goofspiel").await.unwrap();
    let t = s.tournaments();
    let entries = vec![common::entry(a, 0, "ha"), common::entry(b, 1, "hb")];
    let cup = common::running_cup(t, "cup", entries).await;
    let plan = |game_no, seats| common::plan(game_no, seats, 5);
    t.plan_round(cup, 1, &[plan(0, vec![a, b]), plan(1, vec![b, a])])
        .await
        .unwrap();
    let planned = t.tournament_games(cup).await.unwrap();
    let g = t
        .start_tournament_game(planned[0].id, "goofspiel", &[a, b], 5, "t1")
        .await
        .unwrap();
    let mut first = end(vec![2, 1], None, "t2");
    first.scores = vec![Some(4), Some(6)];
    s.finish_game(g, &first).await.unwrap();
    t.finish_tournament_game(planned[0].id, &[2, 1], &[])
        .await
        .unwrap();
    // An imported one whose first seat has no score.
    let mut imported = ImportGame {
        game: "goofspiel".into(),
        bots: vec![b, a],
        seed: 6,
        started: "2026-12-05T10:00:00Z".into(),
        end: end(vec![1, 2], Some(b), "2026-12-05T10:00:30Z"),
        tournament: Some(cup),
    };
    imported.end.scores = vec![None, Some(3)];
    s.import_games(vec![imported]).await.unwrap();
    let kept = |rows: Vec<croupier_store::tournaments::TournamentGameRow>| {
        rows.into_iter()
            .map(|g| (g.status, g.scores))
            .collect::<Vec<_>>()
    };
    let want = vec![
        ("done".to_string(), Some("4,6".to_string())),
        ("pending".to_string(), None),
        ("done".to_string(), Some(",3".to_string())),
    ];
    assert_eq!(kept(t.tournament_games(cup).await.unwrap()), want);
    drop(s);
    common::forget_migration(
        &db,
        &["ALTER TABLE tournament_games DROP COLUMN scores"],
        "tournament game scores",
    )
    .await;
    let s = db.open().await;
    let t = s.tournaments();
    assert_eq!(kept(t.tournament_games(cup).await.unwrap()), want);
    let rows = t.tournament_games(cup).await.unwrap();
    assert_eq!(
        (rows[0].score_by_seat(), rows[2].score_by_seat()),
        (vec![Some(4), Some(6)], vec![None, Some(3)])
    );
    // One finished by an instance that does not keep them.
    const FORGET: &str = "UPDATE tournament_games SET scores = NULL WHERE game_id = $1";
    with_pool!(db, |pool| {
        let forgot = sqlx::query(FORGET).bind(g).execute(&pool).await.unwrap();
        assert_eq!(forgot.rows_affected(), 1);
    });
    assert_eq!(s.recount_lists().await.unwrap().mended_scores, 1);
    assert_eq!(kept(t.tournament_games(cup).await.unwrap()), want);
    assert_eq!(s.recount_lists().await.unwrap().mended_scores, 0);
}
