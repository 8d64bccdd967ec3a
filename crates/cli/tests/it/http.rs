//! HTTP bots through the `croupier` binary: `croupier bot --serve` as a
//! jujitsu or croupier bot server played by `croupier play http://...`, and
//! `croupier owner` / `croupier bots` against a real `croupier serve`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use crate::support::free_port;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn croupier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .env_remove("CROUPIER_SERVER")
        .env_remove("CROUPIER_OWNER")
        .env_remove("CROUPIER_PASSWORD")
        .output()
        .unwrap()
}

/// A child killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `croupier bot ... --serve` and waits for its "listening" line.
fn bot_server(args: &[&str]) -> (Running, String) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["bot"])
        .args(args)
        .args(["--serve", &addr])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("listening on"), "{line}");
    (Running(child), format!("http://{addr}/"))
}

fn summary(args: &[&str]) -> serde_json::Value {
    let o = croupier(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn faults(v: &serde_json::Value, bot: usize) -> u64 {
    v["bots"][bot]["faults"].as_u64().unwrap()
}

#[test]
fn builtin_bot_servers_play_through_http() {
    let (_j, url) = bot_server(&["planner", "--dialect", "jujitsu", "--auth", "me:pw"]);
    let spec = format!("{}@jujitsu", url.replace("http://", "http://me:pw@"));
    let v = summary(&[
        "play",
        "goofspiel",
        &spec,
        "builtin:random",
        "--variant",
        "jujitsu rounds=5,6",
        "--games",
        "6",
        "--json",
    ]);
    assert_eq!(v["games"], 6);
    assert_eq!((faults(&v, 0), faults(&v, 1)), (0, 0), "{v}");
    // Without the credentials every bid is refused and played at random.
    let v = summary(&[
        "play",
        "goofspiel",
        &format!("{url}@jujitsu"),
        "builtin:random",
        "--variant",
        "jujitsu rounds=5",
        "--json",
    ]);
    assert_eq!(faults(&v, 0), 5, "{v}");
    // croupier/1 over HTTP, any game.
    let (_c, url) = bot_server(&["heuristic", "--dialect", "croupier"]);
    for (game, extra) in [
        ("skullwhist", vec![]),
        ("loveletter", vec!["builtin:random"]),
    ] {
        let mut args = vec!["play", game, url.as_str(), "builtin:random"];
        args.extend(extra);
        args.extend(["--games", "4", "--json"]);
        let v = summary(&args);
        assert_eq!(v["games"], 4, "{game}");
        assert_eq!(faults(&v, 0), 0, "{game}: {v}");
    }
}

#[test]
fn a_spent_time_budget_makes_every_move_random() {
    let (_j, url) = bot_server(&["random", "--dialect", "jujitsu"]);
    let v = summary(&[
        "play",
        "goofspiel",
        &url,
        "builtin:random",
        "--variant",
        "jujitsu rounds=5",
        "--time-budget",
        "0",
        "--json",
    ]);
    assert_eq!(faults(&v, 0), 5, "{v}");
    // Built-in strategies answer in microseconds and are never cut off.
    assert_eq!(faults(&v, 1), 0, "{v}");
}

#[test]
fn bad_http_specs_and_serve_options_are_refused() {
    for (args, needle) in [
        (
            vec!["play", "goofspiel", "http://", "builtin:random"],
            "invalid bot URL",
        ),
        (
            vec!["play", "goofspiel", "ftp://x/", "builtin:random"],
            "not found",
        ),
        (
            vec![
                "play",
                "loveletter",
                "http://127.0.0.1:9/@jujitsu",
                "builtin:random",
            ],
            "cannot play",
        ),
        (
            vec!["play", "goofspiel", "./bot@jujitsu", "builtin:random"],
            "not found",
        ),
        (vec!["bot", "random", "--dialect", "jujitsu"], "--serve"),
        (
            vec!["bot", "random", "--dialect", "gops", "--serve", ":0"],
            "jujitsu or croupier",
        ),
        (
            vec!["bot", "genius", "--dialect", "jujitsu", "--serve", ":0"],
            "genius",
        ),
        (
            vec![
                "bot",
                "random",
                "--dialect",
                "croupier",
                "--serve",
                "nonsense",
            ],
            "cannot listen",
        ),
    ] {
        let o = croupier(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // A bot server nobody listens on: every decision is a fault, the match ends.
    let port = free_port();
    let v = summary(&[
        "play",
        "goofspiel",
        &format!("http://127.0.0.1:{port}/"),
        "builtin:random",
        "--variant",
        "jujitsu rounds=5",
        "--json",
    ]);
    assert_eq!(faults(&v, 0), 5, "{v}");
}

#[test]
fn owners_register_and_manage_bots_with_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let db = format!("sqlite://{}", dir.path().join("c.db").display());
    let _server = Running(
        Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--database",
                &db,
            ])
            // The bots registered below point at loopback.
            .args([
                "--house-bots",
                "",
                "--no-ladder",
                "--allow-private-bot-urls",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let who = ["--server", &base, "--owner", "erin", "--password", "pw"];
    let run = |args: &[&str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(who);
        croupier(&all)
    };
    let o = run(&["owner", "register"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("owner erin registered"));
    let o = run(&[
        "bots",
        "register",
        "--name",
        "jj",
        "--game",
        "goofspiel",
        "--url",
        "http://127.0.0.1:9/",
        "--auth",
        "u:p",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("jj (goofspiel push bot, dialect jujitsu)"),
        "{out}"
    );
    let o = run(&[
        "bots",
        "register",
        "--name",
        "pp",
        "--game",
        "loveletter",
        "--pull",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("token: crp_"), "{out}");
    let o = run(&["bots", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["bots"].as_array().unwrap().len(), 2, "{v}");
    let o = run(&["bots", "disable", "jj"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("disabled"));
    let o = run(&["bots", "token", "pp"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("new token"));
    // Failures are one line and exit 1 (server said no) or 2 (bad input).
    let o = croupier(&[
        "bots",
        "list",
        "--server",
        &base,
        "--owner",
        "erin",
        "--password",
        "bad",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("401"));
    let o = run(&[
        "bots",
        "register",
        "--name",
        "jj",
        "--game",
        "goofspiel",
        "--url",
        "http://h/",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("taken"));
    let o = run(&["bots", "show", "../x"]);
    assert_eq!(o.status.code(), Some(2));
    let o = croupier(&[
        "bots",
        "list",
        "--server",
        "http://127.0.0.1:9",
        "--owner",
        "a",
        "--password",
        "b",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot reach"));
}
