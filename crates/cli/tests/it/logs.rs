//! Logs (issue 49): plain text without colour codes when stderr is a file,
//! one JSON object per line with `--log-format json`, and `RUST_LOG`
//! filtering on every command (`serve` and `play` here).

#![allow(clippy::unwrap_used)] // a test fails loudly

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `croupier serve` until it listens, then stops it; returns stderr.
fn serve_log(extra: &[&str], env: &[(&str, &str)]) -> String {
    serve_log_with(extra, &[], env)
}

/// [`serve_log`] with `serve_args` after the command's own.
fn serve_log_with(extra: &[&str], serve_args: &[&str], env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let port = crate::support::free_port();
    let log = dir.path().join("serve.log");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_croupier"));
    cmd.args(extra)
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--database",
        ])
        .arg(format!("sqlite://{}", dir.path().join("s.db").display()))
        .args(["--house-bots", "", "--no-ladder"])
        .args(serve_args)
        .env_remove("RUST_LOG")
        .env_remove("CROUPIER_THREADS")
        .env_remove("TOKIO_WORKER_THREADS")
        .env_remove("NO_COLOR")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the start-up lines reach the file, then stop it.
    std::thread::sleep(Duration::from_millis(300));
    let _ = child.kill();
    let _ = child.wait();
    std::fs::read_to_string(&log).unwrap()
}

#[test]
fn serve_logs_plain_text_to_a_file_json_on_request_and_obeys_rust_log() {
    let text = serve_log(&[], &[]);
    assert!(text.contains(" INFO "), "info lines by default: {text}");
    assert!(
        !text.contains('\u{1b}'),
        "no colour codes in a file: {text:?}"
    );

    let json = serve_log(&["--log-format", "json"], &[]);
    let lines: Vec<&str> = json.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty(), "json lines: {json}");
    for l in &lines {
        let v: serde_json::Value =
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        assert!(v["level"].is_string() && v["timestamp"].is_string(), "{l}");
        assert!(v["fields"]["message"].is_string(), "{l}");
    }
    assert!(!json.contains('\u{1b}'));

    let quiet = serve_log(&[], &[("RUST_LOG", "warn")]);
    assert!(
        !quiet.contains(" INFO "),
        "RUST_LOG=warn keeps info out: {quiet}"
    );
}

#[test]
fn play_obeys_rust_log_too() {
    let run = |env: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_croupier"));
        cmd.args([
            "play",
            "goofspiel",
            "builtin:random",
            "builtin:random",
            "--games",
            "3",
            "--seed",
            "1",
        ])
        .args(["--log-format", "json"])
        .env_remove("RUST_LOG");
        if let Some(filter) = env {
            cmd.env("RUST_LOG", filter);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stderr).unwrap()
    };
    assert!(!run(None).contains("game finished"), "quiet by default");
    let debug = run(Some("croupier=debug"));
    let finished: Vec<serde_json::Value> = debug
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["fields"]["message"] == "game finished")
        .collect();
    assert_eq!(finished.len(), 3, "one line per game: {debug}");
    assert!(finished.iter().all(|v| v["level"] == "DEBUG"));
}

/// The number of runtime threads `serve` says it runs, from its log.
fn runtime_threads(log: &str) -> usize {
    let line = log
        .lines()
        .find(|l| l.contains(" runtime threads answer requests"))
        .unwrap_or_else(|| panic!("no threads line: {log}"));
    let before = line.split(" runtime threads").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn serve_runs_the_runtime_threads_asked_for() {
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(runtime_threads(&serve_log(&[], &[])), cores, "one per core");
    assert_eq!(
        runtime_threads(&serve_log_with(&[], &["--threads", "3"], &[])),
        3
    );
    assert_eq!(
        runtime_threads(&serve_log(&[], &[("CROUPIER_THREADS", "1")])),
        1
    );
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["serve", "--threads", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--threads") && err.contains("1..=1024"),
        "{err}"
    );
}
