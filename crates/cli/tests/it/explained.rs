//! Faults explained (issue 49): after `play` and `tournament`, each bot
//! that faulted gets its count per kind, its first fault's reason and the
//! last lines of its stderr; `-v` prints faults as they happen; `--json`
//! carries the same. The bots are the fault bots of `tests/fault_bots/`.

#![allow(clippy::unwrap_used)] // a test fails loudly

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn fault_bot(script: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fault_bots")
        .join(script);
    // The first argument of a fault bot is a marker other tests use.
    format!("{} explained", path.display())
}

fn croupier(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .args(["--move-time", "0.5", "--sandbox", "off"])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn play_explains_a_crash_with_its_kind_count_reason_and_stderr() {
    let crash = fault_bot("gops_crash_mid_game.sh");
    let bots = [crash.as_str(), "builtin:random@gops"];
    let mut args = vec!["play", "goofspiel"];
    args.extend(bots);
    args.extend(["--games", "2", "--seed", "4"]);

    // The table, then a paragraph for the one bot that faulted.
    let out = croupier(&args);
    let stdout = text(&out.stdout);
    let (table, faults) = stdout.split_once("\nfaults:\n").expect(&stdout);
    let row = table.lines().find(|l| l.starts_with(&crash)).unwrap();
    let count: u64 = row.split_whitespace().last().unwrap().parse().unwrap();
    assert!(count > 0, "{row}");
    assert!(
        faults.contains(&format!("{crash}: {count} faults (crash {count})")),
        "{faults}"
    );
    assert!(
        faults.contains("first, in its game 1 (seat 0): crash: the bot closed its output"),
        "{faults}"
    );
    assert!(faults.contains("    | segfault, just kidding"), "{faults}");
    assert!(!faults.contains("builtin:random"), "{faults}");
    assert!(
        !text(&out.stderr).contains("fault:"),
        "nothing on stderr without -v"
    );

    // The same in JSON.
    args.push("--json");
    let out = croupier(&args);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let bad = &v["bots"][0];
    assert_eq!(bad["fault_kinds"]["crash"], bad["faults"]);
    assert_eq!(bad["faults"].as_u64(), Some(count), "the same games");
    let first = &bad["first_fault"];
    assert_eq!(
        (first["game"].as_u64(), first["seat"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(first["kind"], "crash");
    let stderr: Vec<&str> = first["stderr"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(stderr.last(), Some(&"segfault, just kidding"), "{first}");
    let good = &v["bots"][1];
    assert_eq!(good["faults"], 0);
    assert!(good["first_fault"].is_null(), "{good}");
    assert_eq!(good["fault_kinds"], serde_json::json!({}));

    // -v: each fault as it happens, in both games (the seats rotate);
    // a broken bot's repeats are printed once per game.
    args.pop();
    args.push("-v");
    let out = croupier(&args);
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("fault:")).collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with(&format!("fault: game 1, seat 0, {crash}: crash: ")));
    assert!(lines[1].starts_with(&format!("fault: game 2, seat 1, {crash}: crash: ")));
    assert!(
        stderr.contains("  stderr| segfault, just kidding"),
        "{stderr}"
    );
}

#[test]
fn a_tournament_explains_each_bot_that_faulted_and_only_those() {
    let crash = fault_bot("gops_crash_mid_game.sh");
    let hang = fault_bot("gops_hang.sh");
    let out = croupier(&[
        "tournament",
        "goofspiel",
        "--bot",
        &crash,
        "--bot",
        &hang,
        "--bot",
        "builtin:random@gops",
        "--games-per-pair",
        "1",
        "--seed",
        "9",
    ]);
    let stdout = text(&out.stdout);
    let (_, faults) = stdout.split_once("\nfaults:\n").expect(&stdout);
    let heads: Vec<&str> = faults.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(heads.len(), 2, "{faults}");
    assert!(heads[0].starts_with(&format!("{crash}: ")), "{faults}");
    assert!(heads[0].contains("crash"), "{faults}");
    assert!(heads[1].starts_with(&format!("{hang}: ")), "{faults}");
    assert!(heads[1].contains("(timeout "), "{faults}");
    assert!(faults.contains(": timeout: "), "{faults}");
}
