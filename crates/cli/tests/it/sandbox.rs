//! The sandbox of bot programs (issue 12, items 1 and 2): hostile programs
//! (`tests/hostile_bots/hostile.sh`) play `croupier play goofspiel` with
//! `--sandbox strict` against `builtin:random@gops` (also a sandboxed
//! process). Each tries one breach; after each run the breach must be
//! recorded as the bot's fault (crash, timeout or malformed, with a reason),
//! the other seat must have no fault, no process of the bot may remain, and
//! the loopback listener must have seen no connection.
//!
//! The files the bots aim at are readable and writable by everyone, so that
//! only the sandbox stops them (croupier as root runs bots as `nobody`).

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use crate::support;

use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::marked;

fn marker(name: &str) -> String {
    support::marker("sandbox", name)
}

/// One run at a time: each watches the whole process table.
static SERIAL: Mutex<()> = Mutex::new(());

/// A scratch folder everyone may read and write.
fn open_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// What one hostile run left.
struct Run {
    out: Output,
    summary: Value,
    record: Value,
    left: Vec<(i32, String)>,
    connections: usize,
}

/// Plays one game of the hostile bot (`attempt`, `arg`) against a sandboxed
/// random bot, then waits up to 3 s for the bot's processes to go.
fn hostile(attempt: &str, arg: &str) -> Run {
    hostile_games(attempt, arg, 1)
}

/// [`hostile`] for a series of `games` (from 2 on, each bot's program
/// starts in its seat's kept sandbox, cleared between games).
fn hostile_games(attempt: &str, arg: &str, games: u32) -> Run {
    hostile_with(attempt, arg, games, "strict")
}

/// [`hostile_games`] under `--sandbox sandbox`. For the `descriptor`
/// attempt, croupier starts with descriptor `arg` open on a file, as a
/// shell or a supervisor may leave one.
fn hostile_with(attempt: &str, arg: &str, games: u32, sandbox: &str) -> Run {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let arg = if attempt == "connect" {
        port.as_str()
    } else {
        arg
    };
    let marker = marker(attempt);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile_bots/hostile.sh");
    let bot = format!("{} {marker} {attempt} {arg}", script.display());
    let records = tempfile::tempdir().unwrap();
    let mut croupier = if attempt == "descriptor" {
        let mut sh = Command::new("/bin/sh");
        sh.args(["-c", &format!("exec {arg}<\"$0\"; exec \"$@\"")])
            .arg(&script)
            .arg(env!("CARGO_BIN_EXE_croupier"));
        sh
    } else {
        Command::new(env!("CARGO_BIN_EXE_croupier"))
    };
    let out = croupier
        .args(["play", "goofspiel", &bot, "builtin:random@gops"])
        .args([
            "--games",
            &games.to_string(),
            "--move-time",
            "2",
            "--json",
            "--sandbox",
            sandbox,
        ])
        .arg("--records")
        .arg(records.path())
        .output()
        .unwrap();
    let start = Instant::now();
    let mut left = marked(&marker);
    while !left.is_empty() && start.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
        left = marked(&marker);
    }
    for (pid, _) in &left {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    let mut connections = 0;
    loop {
        match listener.accept() {
            Ok(_) => connections += 1,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "croupier failed: {stderr}");
    let summary: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("summary ({e}): {stdout}\n{stderr}"));
    let file = std::fs::read_dir(records.path())
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "json"))
        .unwrap()
        .path();
    let record = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    Run {
        out,
        summary,
        record,
        left,
        connections,
    }
}

impl Run {
    /// The breach was contained: a fault of one of `kinds` with a reason for
    /// the hostile seat (0), none for the other, nothing left running, no
    /// connection.
    fn assert_contained(&self, kinds: &[&str]) {
        let stderr = String::from_utf8_lossy(&self.out.stderr);
        assert!(self.left.is_empty(), "left running: {:?}", self.left);
        assert_eq!(self.connections, 0, "the listener saw a connection");
        let faults: Vec<u64> = self.summary["bots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["faults"].as_u64().unwrap())
            .collect();
        assert!(
            faults[0] >= 1,
            "no fault recorded: {}\n{stderr}",
            self.summary
        );
        assert_eq!(faults[1], 0, "the other seat was faulted: {}", self.summary);
        let steps = self.record["steps"].as_array().unwrap();
        let fault = steps
            .iter()
            .find_map(|s| s.get("fault"))
            .unwrap_or_else(|| panic!("no fault in the record: {}", self.record));
        let kind = fault["kind"].as_str().unwrap();
        assert!(kinds.contains(&kind), "fault {fault}");
        assert!(
            !fault["detail"].as_str().unwrap_or_default().is_empty(),
            "fault {fault}"
        );
        for s in steps {
            if s["seat"] != 0 {
                assert!(s.get("fault").is_none(), "another seat was faulted: {s}");
            }
        }
    }
}

impl Run {
    /// [`Run::assert_contained`] for a series: every game of the hostile
    /// bot (seated first, then second) has its fault, the other bot none.
    fn assert_contained_in_every_game(&self, games: u64, kinds: &[&str]) {
        assert!(self.left.is_empty(), "left running: {:?}", self.left);
        assert_eq!(self.connections, 0, "the listener saw a connection");
        let bots = self.summary["bots"].as_array().unwrap();
        assert_eq!(
            bots[1]["faults"], 0,
            "the other bot was faulted: {}",
            self.summary
        );
        assert!(
            bots[0]["faults"].as_u64().unwrap() >= games,
            "{}",
            self.summary
        );
        for (kind, _) in bots[0]["fault_kinds"].as_object().unwrap() {
            assert!(
                kinds.contains(&kind.as_str()),
                "fault {kind}: {}",
                self.summary
            );
        }
    }
}

/// The same breaches in a series, where each bot's program runs in its
/// kept sandbox (issue 53): contained in every game, nothing left after.
#[test]
fn breaches_in_a_series_are_contained_in_every_game() {
    for (attempt, kinds) in [
        ("fork", &["crash"][..]),
        ("memory", &["crash"][..]),
        ("daemon", &["crash"][..]),
        ("ignore-term", &["timeout"][..]),
        ("write", &["crash"][..]),
    ] {
        let arg = if attempt == "write" {
            "/written-by-a-bot"
        } else {
            ""
        };
        hostile_games(attempt, arg, 2).assert_contained_in_every_game(2, kinds);
    }
}

#[test]
fn a_descriptor_croupiers_parent_left_open_never_reaches_a_bot() {
    // In a sandbox of its own, in a kept one, and with no sandbox at all.
    hostile("descriptor", "9").assert_contained(&["crash"]);
    hostile_games("descriptor", "9", 2).assert_contained_in_every_game(2, &["crash"]);
    hostile_with("descriptor", "9", 1, "off").assert_contained(&["crash"]);
}

#[test]
fn a_network_connection_to_loopback_fails() {
    hostile("connect", "").assert_contained(&["crash"]);
}

#[test]
fn a_file_outside_the_bots_folder_cannot_be_read() {
    let dir = open_dir();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "the organiser's secret 8d1f\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = hostile("read", &format!("file:{}", secret.display()));
    run.assert_contained(&["crash"]);
    let all = format!(
        "{}{}{}",
        String::from_utf8_lossy(&run.out.stdout),
        String::from_utf8_lossy(&run.out.stderr),
        run.record
    );
    assert!(!all.contains("8d1f"));
}

#[test]
fn nothing_outside_the_temp_folder_can_be_written() {
    let dir = open_dir();
    let target = dir.path().join("written-by-a-bot");
    let run = hostile("write", target.to_str().unwrap());
    run.assert_contained(&["crash"]);
    assert!(!target.exists());
    // Nor its own folder (read-only).
    let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile_bots/written");
    hostile("write", own.to_str().unwrap()).assert_contained(&["crash"]);
    assert!(!own.exists());
    // Nor the sandbox's own root or `/dev` (only `/tmp`, `/dev/shm` and
    // `/dev/mqueue` are writable: what a sandbox held for a series clears
    // between matches).
    for inside in ["/written-by-a-bot", "/dev/written-by-a-bot"] {
        hostile("write", inside).assert_contained(&["crash"]);
    }
}

#[test]
fn a_fork_loop_is_capped_and_every_process_ends() {
    hostile("fork", "").assert_contained(&["crash"]);
}

#[test]
fn a_memory_hog_is_stopped() {
    hostile("memory", "").assert_contained(&["crash"]);
}

#[test]
fn a_daemon_does_not_outlive_its_bot() {
    hostile("daemon", "").assert_contained(&["crash"]);
}

#[test]
fn a_bot_that_ignores_sigterm_times_out_and_is_killed() {
    hostile("ignore-term", "").assert_contained(&["timeout"]);
}

#[test]
fn a_ten_megabyte_line_is_refused() {
    hostile("long-line", "").assert_contained(&["malformed"]);
}

#[test]
fn strict_without_bubblewrap_fails_with_one_line_and_off_warns_once() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let empty = tempfile::tempdir().unwrap();
    let bot = "/bin/sh -c true";
    // No bwrap on PATH: strict cannot work and says how to go on.
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["play", "goofspiel", bot, bot, "--sandbox", "strict"])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("bwrap") && stderr.contains("--sandbox off"),
        "{stderr}"
    );
    // Off: one warning, however many bots.
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args([
            "play",
            "goofspiel",
            bot,
            bot,
            "--games",
            "2",
            "--sandbox",
            "off",
        ])
        .args(["--move-time", "0.5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("--sandbox off").count(), 1, "{stderr}");
}

/// Issue 49: a program the sandbox's user cannot read is refused before the
/// first match, with one line naming the path, the user and the fix;
/// readable, the same program plays. As root only: an ordinary user's
/// sandbox reads what that user reads.
#[test]
fn a_program_the_sandbox_cannot_read_is_refused_before_the_first_match() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !as_root() {
        eprintln!("skipped: only root runs bot programs as another user");
        return;
    }
    // A private folder, as `mktemp -d` makes one.
    let private = tempfile::tempdir().unwrap();
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let script = private.path().join("bot.sh");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fault_bots/gops_slow.sh"),
        &script,
    )
    .unwrap();
    let bot = format!("sh {} {}", script.display(), marker("private"));
    let play = || {
        Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["play", "goofspiel", &bot, "builtin:random@gops"])
            .args(["--games", "1", "--move-time", "2", "--sandbox", "strict"])
            .output()
            .unwrap()
    };
    let out = play();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    for want in [
        script.to_str().unwrap(),
        "nobody",
        &format!("chmod o+rX {}", private.path().display()),
        "--sandbox off",
    ] {
        assert!(stderr.contains(want), "{want} in: {stderr}");
    }
    assert!(out.stdout.is_empty(), "no match was played");
    // Readable by others, it plays, without a fault.
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = play();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = stdout.lines().find(|l| l.starts_with("sh ")).unwrap();
    assert!(row.trim_end().ends_with(" 0"), "no fault: {stdout}");
}

/// Whether this test runs as root (only root runs bot programs as another
/// user, who may then be unable to read them).
fn as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    })
}

/// Issue 49, the server: a hosted upload kept where the sandbox's user
/// cannot read it (a server run as root from a private folder) is refused
/// at its validation with one line naming the path, the user and the fix,
/// and nothing is played; once the folder is readable, the same upload
/// passes.
#[test]
fn a_hosted_upload_the_sandbox_cannot_read_is_refused_with_the_fix() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !as_root() {
        eprintln!("skipped: only root runs bot programs as another user");
        return;
    }
    assert!(support::have("python3"), "python3 is needed");
    let private = tempfile::tempdir().unwrap();
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let s = support::serve(private.path(), &["--sandbox", "strict", "--no-ladder"]);
    support::register_owner(&s.url, "alice");
    let bot = support::root().join("examples/bots/gops/random_bot.py");
    let upload = || {
        Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["bots", "upload", "randy"])
            .arg(&bot)
            .args(["--runtime", "python3", "--dialect", "gops"])
            .args(["--game", "goofspiel", "--wait", "--server", &s.url])
            .args(["--owner", "alice", "--password", "secret-pw"])
            .output()
            .unwrap()
    };
    let out = upload();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{said}");
    let line = said
        .lines()
        .find(|l| l.contains("failed validation"))
        .unwrap_or_else(|| panic!("{said}"));
    for want in [
        "version 1 failed validation",
        "the sandbox's user (nobody",
        "cannot read",
        &format!("{}/db-bot-files/", private.path().display()),
        &format!("chmod o+rX {},", private.path().display()),
        "--sandbox off",
    ] {
        assert!(line.contains(want), "{want} in: {line}");
    }
    // The check ran before any match: the bot has no stderr of a match.
    assert!(!said.contains("Traceback"), "{said}");
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = upload();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("version 2 passed validation"), "{said}");
}
