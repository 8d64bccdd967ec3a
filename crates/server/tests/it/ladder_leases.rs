//! Issue 13: a process's ladder matches end with its registration. A
//! process taken for lost (frozen past its lease, reaped by another) gives
//! up the matches of that term when it notices, storing nothing more for
//! them; a process that leaves stops its matches and its heartbeat, and
//! stays gone. Run on SQLite (the registry and the reaper are the same SQL
//! on both backends): a pull bot that never answers keeps the match going.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::sync::Arc;
use std::time::{Duration, Instant};

use croupier_arena::transport::http::{HttpClient, HttpLimits};
use croupier_competition::ladder::{GameLadder, Ladder, LadderConfig};
use croupier_live::lease::{LeaseConfig, LOST, STOPPED};
use croupier_live::mailbox::Mailboxes;
use croupier_rules::GameKind;
use croupier_store::leases::Reap;
use croupier_store::{BotKind, NewBot, Store};

struct Setup {
    store: Arc<dyn Store>,
    ladder: Arc<Ladder>,
    mailboxes: Arc<Mailboxes>,
    bot: i64,
    _dir: tempfile::TempDir,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let store = croupier_store::open(&url).await.unwrap();
    let owner = store.create_owner("ops", "!").await.unwrap();
    let bot = store
        .create_remote_bot(&NewBot {
            name: "silent".into(),
            game: "goofspiel".into(),
            kind: BotKind::Pull,
            owner,
            endpoint: None,
            dialect: "croupier".into(),
            auth_user: None,
            auth_password: None,
            token_hash: Some("00".repeat(32)),
        })
        .await
        .unwrap();
    let mut goofspiel = GameLadder::default_for(GameKind::Goofspiel);
    goofspiel.move_time = Duration::from_secs(60);
    goofspiel.house = vec!["random".into()];
    goofspiel.house_games = false;
    let config = LadderConfig {
        games: vec![goofspiel],
        // A match's bot rests long after it: one match per test.
        rest: Duration::from_secs(600),
        tick: Duration::from_millis(50),
        poll_grace: Duration::from_secs(600),
        lease: LeaseConfig {
            role: "worker".into(),
            ttl: Duration::from_millis(600),
            beat: Duration::from_millis(100),
        },
        ..LadderConfig::default()
    };
    let mailboxes = Arc::new(Mailboxes::default());
    let http = Arc::new(HttpClient::new(HttpLimits::default()).unwrap());
    let ladder = Arc::new(
        Ladder::new(Arc::clone(&store), Arc::clone(&mailboxes), http, config)
            .await
            .unwrap(),
    );
    Setup {
        store,
        ladder,
        mailboxes,
        bot,
        _dir: dir,
    }
}

/// Polls once (so the ladder seats the bot), then waits for its match.
async fn match_running(s: &Setup) -> i64 {
    let mb = s.mailboxes.get(s.bot);
    let _ = mb.fetch(0, Duration::from_millis(10)).await;
    let t0 = Instant::now();
    loop {
        let games = s.store.running_games(10).await.unwrap();
        if let Some(g) = games.first() {
            if s.ladder.status().running == 1 {
                return g.id;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no match started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !check() {
        assert!(t0.elapsed() < limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_reaped_while_frozen_abandons_the_matches_of_its_lost_term() {
    let s = setup().await;
    tokio::spawn(Arc::clone(&s.ladder).run());
    let game = match_running(&s).await;
    let member = Arc::clone(s.ladder.membership().expect("joined"));
    let id = member.id();
    // Another process reaps this one, as if it had been frozen past its
    // lease: the game is closed and the bot freed.
    let now = croupier_arena::record::now_rfc3339();
    let reaped = s
        .store
        .leases()
        .reap_processes(Reap::One(id), LOST, &now)
        .await
        .unwrap();
    assert_eq!(reaped[0].games, vec![game]);
    // This process notices at its next heartbeat, registers again, and
    // gives up the match (its bot may be another process's now).
    let ladder = Arc::clone(&s.ladder);
    until("the match to be abandoned", Duration::from_secs(10), || {
        ladder.status().running == 0
    })
    .await;
    let row = s.store.game(game).await.unwrap().unwrap();
    assert_eq!(row.status, "aborted");
    let reason = row.reason.unwrap_or_default();
    assert!(
        reason.starts_with(LOST) && reason.contains(&format!("process {id}")),
        "the reaper's reason stays: {reason}"
    );
    assert_eq!(row.finished.as_deref(), Some(now.as_str()));
    // Registered again under its id.
    let t0 = Instant::now();
    loop {
        let processes = s.store.leases().processes().await.unwrap();
        if processes.iter().map(|p| p.id).collect::<Vec<_>>() == vec![id] {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{processes:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let running = s.store.running_games(10).await.unwrap();
    assert!(running.iter().all(|g| g.id != game), "{running:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_leaves_stops_its_matches_and_its_heartbeat() {
    let s = setup().await;
    let run = tokio::spawn(Arc::clone(&s.ladder).run());
    let game = match_running(&s).await;
    let member = Arc::clone(s.ladder.membership().expect("joined"));
    s.ladder.leave().await;
    assert_eq!(s.ladder.status().running, 0, "the match was stopped");
    let row = s.store.game(game).await.unwrap().unwrap();
    assert_eq!(row.status, "aborted");
    let reason = row.reason.unwrap_or_default();
    assert!(reason.starts_with(STOPPED), "{reason}");
    assert!(member.stopped());
    // Several heartbeats later the process has not registered again, the
    // ladder loop has ended and dealt nothing more.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(s.store.leases().processes().await.unwrap().is_empty());
    assert!(run.is_finished(), "the ladder loop ended");
    assert!(s.store.running_games(10).await.unwrap().is_empty());
    assert_eq!(s.store.count_games("finished").await.unwrap(), 0);
}
