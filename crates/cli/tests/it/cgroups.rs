//! Bot programs' cgroups through `croupier play` (issue 51): the records
//! carry each program decision's CPU time beside its wall time, the
//! fallback is said once with its reason where no cgroup can be made, and
//! a built-in asking for more threads than the quota is refused.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::process::{Command, Output};

use serde_json::Value;

/// `croupier play goofspiel` of a program seat (the built-in random bot as
/// a process) against a built-in, without bubblewrap (cgroups do not need
/// it), with `env` set; its output and its first record.
fn play(env: &[(&str, &str)]) -> (Output, Value) {
    let records = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["play", "goofspiel", "builtin:random@gops", "builtin:random"])
        .args(["--games", "2", "--sandbox", "off"])
        .arg("--records")
        .arg(records.path())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let first = std::fs::read_dir(records.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .min()
        .expect("a record");
    let record = serde_json::from_str(&std::fs::read_to_string(first).unwrap()).unwrap();
    (out, record)
}

#[test]
fn the_fallback_is_said_once_with_its_reason() {
    let empty = tempfile::tempdir().unwrap();
    let root = empty.path().to_str().unwrap();
    let (out, record) = play(&[("CROUPIER_CGROUP_ROOT", root)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("bot programs get no cgroup here").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains(root), "the reason names the root: {stderr}");
    // The match goes on, with wall times and no CPU times.
    let steps = record["steps"].as_array().unwrap();
    assert!(steps
        .iter()
        .all(|s| s["ms"].is_number() && s.get("cpu_ms").is_none()));
}

#[test]
fn records_carry_cpu_time_beside_wall_time() {
    let (out, record) = play(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    if stderr.contains("bot programs get no cgroup here") {
        eprintln!("SKIPPED: no cgroup can be made here: {stderr}");
        return;
    }
    let program_seat = record["seats"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s["name"] == "builtin:random@gops")
        .unwrap() as u64;
    let steps = record["steps"].as_array().unwrap();
    for s in steps {
        let cpu = s.get("cpu_ms").and_then(Value::as_f64);
        if s["seat"] == program_seat {
            let cpu = cpu.unwrap_or_else(|| panic!("no cpu_ms in a program's step {s}"));
            assert!((0.0..60_000.0).contains(&cpu), "{s}");
        } else {
            assert_eq!(cpu, None, "a built-in's step has no cgroup: {s}");
        }
    }
}

#[test]
fn a_strong_bot_above_the_quota_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args([
            "play",
            "goofspiel",
            "builtin:strong?threads=3",
            "builtin:random",
        ])
        .args(["--games", "1", "--bot-cpus", "2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("3 search threads") && stderr.contains("--bot-cpus 2"),
        "{stderr}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["play", "goofspiel", "builtin:random", "builtin:random"])
        .args(["--games", "1", "--bot-cpus", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A ladder whose `strong` house bot asks for more search threads than the
/// bot programs it plays may use is refused at start, naming the quota it
/// was held to; within the quota (the ladder's `bot_cpus` raised) the
/// settings pass that check.
#[test]
fn a_ladder_house_bot_above_the_quota_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    // A loopback port this test holds: a serve that gets past its checks
    // stops at once, unable to listen there.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = held.local_addr().unwrap().to_string();
    let serve = |settings: &str| {
        let ladder = dir.path().join("ladder.toml");
        std::fs::write(&ladder, settings).unwrap();
        Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["serve", "--listen", &listen, "--house-bots", ""])
            .arg("--ladder")
            .arg(&ladder)
            .arg("--database")
            .arg(format!(
                "sqlite://{}",
                dir.path().join("db.sqlite").display()
            ))
            .output()
            .unwrap()
    };
    let out = serve("[goofspiel]\nhouse = [\"strong?threads=2\"]\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("house bot 'strong?threads=2'")
            && stderr.contains("--bot-cpus 1")
            && stderr.contains("threads=1 or fewer"),
        "{stderr}"
    );
    // With the ladder's own quota at 2 cores the check passes; the serve
    // then stops on the held port, not on the house bot.
    let out = serve("bot_cpus = 2\n[goofspiel]\nhouse = [\"strong?threads=2\"]\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("search threads") && stderr.contains("cannot listen"),
        "{stderr}"
    );
    drop(held);
}

/// `croupier bench strength goofspiel` of a program (the built-in random
/// bot as a process) against the in-process random bot, with `args` added.
fn strength(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["bench", "strength", "goofspiel", "--variant", "gops"])
        .args([
            "--strong",
            "builtin:random@gops",
            "--against",
            "builtin:random",
        ])
        .args(["--no-builtins", "--deals", "2"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn bench_strength_shows_cpu_beside_wall_time() {
    let out = strength(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let mut lines = stdout.lines().skip(1);
    let header = lines.next().unwrap();
    let row = lines.next().unwrap();
    assert!(
        header.contains("think ms    cpu ms") && header.ends_with("opp ms   opp cpu"),
        "{stdout}"
    );
    // The in-process opponent has no cgroup: its CPU is not measured.
    assert!(row.ends_with('—'), "{stdout}");

    let out = strength(&["--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(line["think_ms_mean"].is_number(), "{line}");
    assert!(line["against_think_ms_mean"].is_number(), "{line}");
    assert_eq!(line["against_cpu_ms_mean"], Value::Null, "{line}");
    if stderr.contains("bot programs get no cgroup here") {
        eprintln!("SKIPPED (the program's CPU): no cgroup can be made here: {stderr}");
        assert_eq!(line["cpu_ms_mean"], Value::Null, "{line}");
        return;
    }
    // Every decision of the program seat has its CPU time.
    let cpu = line["cpu_ms_mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("{line}"));
    assert!((0.0..1000.0).contains(&cpu), "{line}");
    assert_eq!(line["cpu_decisions"], line["decisions"], "{line}");
}
