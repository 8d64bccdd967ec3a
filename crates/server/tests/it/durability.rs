//! Durability: the real `croupier serve` binary is killed with SIGKILL while
//! house bots play, then restarted on the same SQLite file. A finished game
//! is never lost; a game that was in progress is closed as aborted; no game
//! is left "running".

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::*;
use serde_json::{json, Value};

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Newest modification time of the files under `dir`.
fn newest(dir: &Path) -> SystemTime {
    let mut t = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let m = if path.is_dir() {
            newest(&path)
        } else {
            entry.metadata().unwrap().modified().unwrap()
        };
        t = t.max(m);
    }
    t
}

/// The `croupier` binary next to this test's profile directory (the test
/// runs from `target/<profile>/deps/`), built first if it is missing or
/// older than the sources of the server, the store or the CLI.
fn croupier_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    let mut bin = profile_dir.join("croupier");
    if !bin.exists() {
        bin = workspace().join("target/debug/croupier");
    }
    let root = workspace();
    let sources = [
        "crates/server/src",
        "crates/store",
        "crates/cli/src",
        "crates/rules/src",
    ]
    .iter()
    .map(|d| newest(&root.join(d)))
    .max()
    .unwrap();
    let fresh = std::fs::metadata(&bin)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t >= sources);
    if !fresh {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "-p", "croupier-cli", "--bin", "croupier"])
            .current_dir(&root);
        if profile_dir.ends_with("release") {
            build.arg("--release");
        }
        let status = build.status().unwrap();
        assert!(status.success(), "cargo build -p croupier-cli failed");
        bin = profile_dir.join("croupier");
    }
    assert!(bin.exists(), "no croupier binary at {}", bin.display());
    bin
}

/// A `croupier serve` process, killed (SIGKILL) when dropped.
struct Served {
    child: Child,
    log: PathBuf,
    api: Api,
}

impl Served {
    fn start(bin: &Path, db: &Path, house: &str, log: PathBuf) -> Served {
        // The server picks its port (`:0`) and logs it: a port reserved
        // here and released before the server binds it could be given to
        // another test's listener meanwhile.
        let stderr = std::fs::File::create(&log).unwrap();
        let mut child = Command::new(bin)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(["--database", &format!("sqlite://{}", db.display())])
            .args([
                "--house-bots",
                house,
                "--house-pause-ms",
                "1",
                "--no-ladder",
            ])
            .env("RUST_LOG", "warn,croupier::serve=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let start = Instant::now();
        let port = loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(port) = croupier_server::announce::port_in_serving_line(&text) {
                break port;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("croupier serve exited ({status}): {text}");
            }
            if start.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("croupier serve did not say where it listens within 30 s: {text}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut served = Served {
            child,
            log,
            api: Api::new(format!("http://127.0.0.1:{port}")),
        };
        loop {
            if let Ok(Some(status)) = served.child.try_wait() {
                panic!("croupier serve exited ({status}): {}", served.log_text());
            }
            let up = served
                .api
                .client
                .get(format!("{}/api/", served.api.base))
                .send()
                .is_ok_and(|r| r.status().is_success());
            if up {
                return served;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "croupier serve not up after 30 s: {}",
                served.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `kill -9`.
    fn kill9(&mut self) {
        self.child.kill().unwrap(); // SIGKILL on Unix
        self.child.wait().unwrap();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn finished_games_survive_kill_9_and_running_games_are_aborted() {
    let bin = croupier_binary();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("croupier.db");

    // 1. a server with two house bots playing as fast as they can
    let mut server = Served::start(&bin, &db, "random,heuristic", dir.path().join("run1.log"));
    let api = server.api.clone();
    let bot = api.bot("durable");

    // a REST bot finishes a game against a house bot
    let r = api.new_game(&bot);
    let finished_id = r["game"].as_i64().unwrap();
    let cards = cards_of(&r);
    let played = api.play_out(&bot, &cards, 2);
    let before = api.old_game(&bot, finished_id);
    check_finished_record(&before);

    // two more REST bots start games (against each other or the house
    // bots), bid, and stall: their games are in progress at the kill, and
    // house bots not in them keep playing each other
    let stalled: Vec<i64> = std::thread::scope(|s| {
        let handles: Vec<_> = ["stall-a", "stall-b"]
            .into_iter()
            .map(|name| {
                let api = &api;
                s.spawn(move || {
                    let b = api.bot(name);
                    let r = api.new_game(&b);
                    api.bid(&b, json!(1));
                    r["game"].as_i64().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    std::thread::sleep(Duration::from_millis(300)); // house games go on
    for id in &stalled {
        assert_failure(&api.old_game(&bot, *id), "not over", "a stalled game");
    }
    let running_id = *stalled.iter().max().unwrap();

    // 2. kill -9 mid-load
    server.kill9();

    // 3. restart on the same database, without house bots (so that no new
    // game starts)
    let server = Served::start(&bin, &db, "", dir.path().join("run2.log"));
    let api = server.api.clone();
    let (session, id) = api.login(&bot.name, &bot.password);
    assert_eq!(id, bot.id, "the bot survived");
    let bot = Bot { session, ..bot };
    assert_all_null(&api.status(&bot));

    // the finished game is intact
    let after = api.old_game(&bot, finished_id);
    assert_eq!(after, before, "the finished game's record is unchanged");
    let k = if after["bot1"] == bot.id { 1 } else { 2 };
    assert_eq!(after[format!("hand{k}")], json!(cards));
    assert_eq!(after[format!("bid{k}")], 2);
    let mine: Vec<Value> = after["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            if r["leader"] == bot.id {
                r["leader-card"].clone()
            } else {
                r["follower-card"].clone()
            }
        })
        .collect();
    assert_eq!(json!(mine), json!(played));

    // the interrupted games are aborted
    for id in &stalled {
        let r = api.old_game(&bot, *id);
        assert_failure(&r, "aborted", "a game in progress at the kill");
    }

    // every game ever dealt is finished or aborted, none is still running
    let (mut finished, mut aborted) = (0, 0);
    let mut id = 1;
    loop {
        let r = api.old_game(&bot, id);
        if r["result"] == "success" {
            assert_eq!(r["game"], id);
            if r["forfeited_by"].is_null() {
                check_finished_record(&r);
            }
            finished += 1;
        } else {
            let reason = r["reason"].as_str().unwrap();
            if reason.contains("no game") {
                break;
            }
            assert!(
                reason.contains("aborted"),
                "game {id} is neither finished nor aborted: {r}"
            );
            aborted += 1;
        }
        id += 1;
    }
    assert!(
        id > running_id,
        "the games up to {running_id} exist (probed to {id})"
    );
    assert!(
        finished >= 2,
        "house games finished before the kill: {finished}"
    );
    assert!(aborted >= 1, "the stalled games were aborted");
    println!("after kill -9: {finished} finished and {aborted} aborted games");
}
