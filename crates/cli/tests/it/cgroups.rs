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
