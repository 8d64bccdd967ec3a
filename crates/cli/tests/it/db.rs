//! `croupier db recount`: every games list's counts per hour counted again
//! from the games, on a SQLite file whose counts a hand edit left wrong;
//! and the errors of a database it cannot take, which it leaves as they
//! were.
#![allow(clippy::unwrap_used)] // helpers of tests fail loudly by design

use std::process::Command;

use croupier_store::tournaments::{EntryRow, GamesFilter, Marked, NewTournament};
use croupier_store::web::ImportGame;
use croupier_store::{BotKind, GameEnd};

fn croupier(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .output()
        .unwrap()
}

/// `croupier db recount --database URL`, which must succeed: what it says.
fn recount(url: &str) -> String {
    let out = croupier(&["db", "recount", "--database", url]);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A Goofspiel game of `bots` (by seat) won by the first, dealt from
/// `seed` and finished at `finished`, in `tournament` if given.
fn won(bots: Vec<i64>, seed: i64, finished: String, tournament: Option<i64>) -> ImportGame {
    ImportGame {
        tournament,
        game: "goofspiel".into(),
        bots,
        seed,
        started: "2026-01-01T00:00:00.000Z".into(),
        end: GameEnd {
            finished,
            scores: vec![Some(2), Some(1)],
            ranks: vec![1, 2],
            forfeited_by: None,
            record: "{}".into(),
            facts: None,
        },
    }
}

/// 300 imported Goofspiel games over five hours, a third of them then
/// marked by hand as a tournament's (the counts do not see that), their
/// first seats too but not their second.
async fn seeded(url: &str) {
    let s = croupier_store::open(url).await.unwrap();
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    let games = (0..300)
        .map(|i| {
            let finished = format!("2026-01-01T{:02}:{:02}:00.000Z", i % 5, i % 60);
            won(vec![a, b], i, finished, None)
        })
        .collect();
    s.import_games(games).await.unwrap();
    let entry = |bot, seq| EntryRow::new(bot, seq, if seq == 0 { "a" } else { "b" }, BotKind::Rest);
    let cup = NewTournament::round_robin("cup", "goofspiel", vec![entry(a, 0), entry(b, 1)]);
    let cup = s.tournaments().create_tournament(&cup).await.unwrap();
    drop(s);
    let pool = sqlx::SqlitePool::connect(url).await.unwrap();
    for sql in [
        "UPDATE games SET tournament_id = $1 WHERE id % 3 = 0",
        "UPDATE game_seats SET tournament_id = $1 WHERE game_id % 3 = 0 AND seat = 0",
    ] {
        sqlx::query(sql).bind(cup).execute(&pool).await.unwrap();
    }
    pool.close().await;
}

/// How many games "ladder games only" lists.
async fn ladder_games(url: &str) -> i64 {
    let s = croupier_store::open(url).await.unwrap();
    let f = GamesFilter {
        marked: Marked::Hide,
        ..GamesFilter::default()
    };
    s.tournaments().count_filtered_games(&f).await.unwrap()
}

/// How many games "ladder games only" lists for bot `name`.
async fn bot_ladder_games(url: &str, name: &str) -> i64 {
    let s = croupier_store::open(url).await.unwrap();
    let bot = s.bot_by_name(name).await.unwrap().unwrap().id;
    let f = GamesFilter {
        bot: Some(bot),
        marked: Marked::Hide,
        ..GamesFilter::default()
    };
    let t = s.tournaments();
    let listed = t.filtered_games(&f, 0, 1_000).await.unwrap().len() as i64;
    assert_eq!(t.count_filtered_games(&f).await.unwrap(), listed);
    listed
}

#[tokio::test]
async fn recount_counts_the_games_marked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("c.db").display());
    seeded(&format!("{url}?mode=rwc")).await;
    // Before: the hand-marked games are counted as ladder games.
    assert_eq!(ladder_games(&url).await, 300);
    let stdout = recount(&url);
    let said = [
        "gave 100 seats the tournament of their game",
        "counted 300 finished games, 100 of them tournament games",
    ];
    assert!(said.iter().all(|s| stdout.contains(s)), "{stdout}");
    assert_eq!(ladder_games(&url).await, 200);
    // The seats mended: b's ladder games are b's games less the marked.
    assert_eq!(bot_ladder_games(&url, "b").await, 200);
    // Nothing left to mend the second time.
    assert!(!recount(&url).contains("gave"));
}

#[test]
fn recount_refuses_what_is_not_a_database_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db");
    let url = format!("sqlite://{}", missing.display());
    for (url, says) in [
        (url.as_str(), "no such database file"),
        ("mysql://x/y", "not a database URL"),
    ] {
        let out = croupier(&["db", "recount", "--database", url]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url}: {stderr}");
        assert!(stderr.contains(says), "{url}: {stderr}");
    }
    assert!(!missing.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A database password (in the URL, or in `CROUPIER_DATABASE`) is written
/// nowhere: not in the commands' errors, nor in their help.
#[test]
fn a_database_password_is_never_written() {
    let url = "mysql://croupier:s3cret@db.example/croupier?password=s3cret";
    for args in [
        vec!["db", "recount", "--database", url],
        vec!["worker", "--database", url],
        vec!["serve", "--listen", "127.0.0.1:0", "--database", url],
        vec!["tournaments", "admin", "someone", "--database", url],
    ] {
        let out = croupier(&args);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(!said.contains("s3cret"), "{args:?}: {said}");
        assert!(
            said.contains("mysql://croupier:***@db.example/croupier?password=***"),
            "{args:?}: {said}"
        );
    }
    for command in [
        vec!["serve", "--help"],
        vec!["worker", "--help"],
        vec!["db", "recount", "--help"],
        vec!["tournaments", "admin", "--help"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(&command)
            .env(
                "CROUPIER_DATABASE",
                "postgres://croupier:s3cret@db.example/c",
            )
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{command:?}: {help}");
        assert!(help.contains("--database"), "{command:?}: {help}");
        assert!(!help.contains("s3cret"), "{command:?}: {help}");
    }
}

/// A password in a PostgreSQL URL that opens (the scratch cluster trusts
/// its local users, whatever the password) is not written either: not in
/// `tournaments admin`'s refusal of an owner it does not find, nor in what
/// `db recount` prints.
#[test]
fn a_password_is_not_written_once_the_database_opens() {
    let Some(cluster) = crate::support::postgres_or_skip() else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = rt.block_on(cluster.create_database()).unwrap();
    let with_password = url.replacen("@localhost", ":s3cret@localhost", 1);
    assert_ne!(url, with_password);
    let said = |out: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let out = croupier(&[
        "tournaments",
        "admin",
        "nobody",
        "--database",
        &with_password,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(
        said(&out).contains("no owner 'nobody' in postgres://croupier:***@localhost"),
        "{}",
        said(&out)
    );
    assert!(!said(&out).contains("s3cret"), "{}", said(&out));
    let out = croupier(&["db", "recount", "--database", &with_password]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(
        said(&out).contains("counted 0 finished games"),
        "{}",
        said(&out)
    );
    assert!(!said(&out).contains("s3cret"), "{}", said(&out));
}

#[tokio::test]
async fn recount_keeps_the_winner_a_finished_tournaments_games_give() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("w.db").display());
    let s = croupier_store::open(&format!("{url}?mode=rwc"))
        .await
        .unwrap();
    let a = s.create_bot("a", "h", false).await.unwrap();
    let b = s.create_bot("b", "h", false).await.unwrap();
    let entries = vec![
        EntryRow::new(a, 0, "a", BotKind::Rest),
        EntryRow::new(b, 1, "b", BotKind::Rest),
    ];
    // Won by b (its one game), but kept as won by a, as a tie-break of an
    // older version could have; and one that kept no winner.
    for (name, kept) in [("cup", Some("a")), ("old", None)] {
        let t = s.tournaments();
        let cup = NewTournament::round_robin(name, "goofspiel", entries.clone());
        let cup = t.create_tournament(&cup).await.unwrap();
        t.start_tournament(cup, &entries, 1, "t0").await.unwrap();
        let game = won(
            vec![b, a],
            cup,
            "2026-01-01T00:01:00.000Z".into(),
            Some(cup),
        );
        s.import_games(vec![game]).await.unwrap();
        assert!(t.finish_tournament(cup, "t1", kept).await.unwrap());
    }
    drop(s);
    let stdout = recount(&url);
    let said = [
        "tournament cup: won by b (as its games give), not a as kept",
        "tournament old: won by b (as its games give), kept now",
        "decided the winners of 2 finished tournaments from their games: 2 mended",
    ];
    assert!(said.iter().all(|s| stdout.contains(s)), "{stdout}");
    let s = croupier_store::open(&url).await.unwrap();
    for name in ["cup", "old"] {
        let row = s
            .tournaments()
            .tournament_by_name(name)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.winner.as_deref(), Some("b"), "{name}");
    }
    drop(s);
    let stdout = recount(&url);
    assert!(!stdout.contains("tournament cup"), "{stdout}");
    assert!(
        stdout.contains("2 finished tournaments from their games: 0 mended"),
        "{stdout}"
    );
}
