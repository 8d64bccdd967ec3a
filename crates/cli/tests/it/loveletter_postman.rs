//! `croupier play loveletter` with AIs written for Postman (the manager's
//! later revision) and with AIs written from the classic README alone: real
//! Python processes over pipes.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use croupier_rules::loveletter::{LoveLetter, LoveLetterEvent};
use croupier_rules::{Game, Record};

fn croupier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .current_dir(support::root())
        .output()
        .expect("run croupier")
}

fn have_python() -> bool {
    support::have("python3")
}

/// Plays a series and returns its JSON summary and records.
fn play(bots: &[String], extra: &[&str]) -> (serde_json::Value, Vec<Record>) {
    // The logging bot writes to a file of this test: no sandbox.
    play_in("off", bots, extra)
}

/// [`play`] with the bot programs in `sandbox`.
fn play_in(sandbox: &str, bots: &[String], extra: &[&str]) -> (serde_json::Value, Vec<Record>) {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().to_str().unwrap().to_string();
    let mut args: Vec<&str> = vec!["play", "loveletter"];
    args.extend(bots.iter().map(String::as_str));
    args.extend(["--json", "--records", &records, "--sandbox", sandbox]);
    args.extend(extra);
    let o = croupier(&args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary = serde_json::from_slice(&o.stdout).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let records = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    (summary, records)
}

fn faults(summary: &serde_json::Value) -> Vec<u64> {
    summary["bots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["faults"].as_u64().unwrap())
        .collect()
}

fn events(record: &Record) -> Vec<LoveLetterEvent> {
    record.verify::<LoveLetter>().unwrap().events().to_vec()
}

const POSTMAN_BOT: &str = "python3 examples/bots/loveletter/postman_bot.py@loveletter-postman";

#[test]
fn postman_ais_play_under_postman_rules_without_faults() {
    if !have_python() {
        return;
    }
    let random = "python3 examples/bots/loveletter/random_bot.py@loveletter-postman";
    for seats in 2..=4 {
        let mut bots = vec![POSTMAN_BOT.to_string(), random.to_string()];
        bots.extend(
            ["builtin:heuristic@loveletter-postman", "builtin:random"]
                .iter()
                .take(seats - 2)
                .map(|s| s.to_string()),
        );
        let (summary, records) = play(&bots, &["--games", "2", "--seed", "5"]);
        assert_eq!(faults(&summary), vec![0; seats], "{summary}");
        for r in &records {
            // Every seat speaks postman (or none): Postman's rules.
            assert_eq!(r.variant, serde_json::json!({"rules": "postman"}));
            assert_eq!(r.rules_version, LoveLetter::RULES_VERSION);
            // The record replays through Postman's rules.
            assert!(!events(r).is_empty());
        }
    }
}

/// Sandboxed, every round's processes of a match start in sandboxes held
/// for that match (issue 53): the games play as they do unsandboxed, with
/// Python AIs and a built-in one behind the dialect.
#[test]
fn postman_ais_play_in_sandboxes_held_for_each_match() {
    if !have_python() {
        return;
    }
    let random = "python3 examples/bots/loveletter/random_bot.py@loveletter-postman";
    let bots = [
        POSTMAN_BOT.to_string(),
        random.to_string(),
        POSTMAN_BOT.to_string(),
        "builtin:random@loveletter-postman".to_string(),
    ];
    let extra = ["--games", "3", "--seed", "7"];
    let (summary, records) = play_in("strict", &bots, &extra);
    assert_eq!(faults(&summary), vec![0; 4], "{summary}");
    assert_eq!(records.len(), 3);
    for r in &records {
        // Each replays through the rules, over several rounds (each round
        // a new process per AI, in the match's sandboxes).
        let rounds = events(r)
            .iter()
            .filter(|e| matches!(e, LoveLetterEvent::RoundStart { .. }))
            .count();
        assert!(rounds > 1, "{rounds} rounds");
    }
}

/// The lines each process of the logging AI received, one list per process.
fn processes(log: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut out: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        if line == "start" {
            out.push(Vec::new());
        } else {
            out.last_mut().unwrap().push(line.to_string());
        }
    }
    out
}

#[test]
fn every_round_starts_fresh_postman_processes_with_the_whole_greeting() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("lines.log");
    let logger = format!(
        "python3 crates/cli/tests/loveletter_bots/postman_logger.py {}@loveletter-postman",
        log.display()
    );
    let (summary, records) = play(
        &[logger, POSTMAN_BOT.to_string(), POSTMAN_BOT.to_string()],
        &["--games", "1", "--seed", "11"],
    );
    assert_eq!(faults(&summary), vec![0, 0, 0], "{summary}");
    let events = events(&records[0]);
    let rounds: Vec<(u8, LoveLetterEvent)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            LoveLetterEvent::RoundStart { first, .. } => {
                // Seat 0's dealt card is the first draw it gets.
                let dealt = *events[i..]
                    .iter()
                    .find(|d| matches!(d, LoveLetterEvent::Draw { seat, .. } if seat.0 == 0))
                    .unwrap();
                Some((first.0, dealt))
            }
            _ => None,
        })
        .collect();
    let procs = processes(&log);
    assert!(rounds.len() >= 4, "{} rounds", rounds.len());
    assert_eq!(procs.len(), rounds.len(), "one process per round");
    for (lines, (first, dealt)) in procs.iter().zip(&rounds) {
        let LoveLetterEvent::Draw { card, .. } = dealt else {
            unreachable!()
        };
        let name = croupier_dialects::loveletter::capitalised(*card);
        // Byte for byte, as Python read them.
        assert_eq!(
            lines[..4],
            [
                "b'ident 0\\n'".to_string(),
                "b'players 3\\n'".to_string(),
                format!("b'start {first}\\n'"),
                format!("b'draw {name}\\n'"),
            ],
            "{lines:?}"
        );
    }
}

#[test]
fn lines_that_are_not_answers_are_skipped_and_silence_is_a_timeout() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("lines.log");
    let bot = |flag: &str| {
        format!(
            "python3 crates/cli/tests/loveletter_bots/postman_logger.py {} {flag}@loveletter-postman",
            log.display()
        )
    };
    // Chatter before each play: Postman ignores it, so do we.
    let (summary, _) = play(
        &[bot("--chatter"), POSTMAN_BOT.to_string()],
        &["--games", "2", "--seed", "3"],
    );
    assert_eq!(faults(&summary), vec![0, 0], "{summary}");
    // Only chatter: Postman would wait for ever; we rule a timeout each
    // time, the AI is out of that round, and the match ends. The other seat
    // is the built-in random AI (a program restarted every round, seeded
    // by the run's seed), so that the match, and how many turns the mute
    // AI gets, are the same in every run (Postman's random AI is not
    // seeded: with it, some runs knocked the mute AI out before its turn
    // so often that it timed out only twice).
    // 3 s, not 1: on a loaded 2-core machine a program's start-up alone
    // can take a second.
    let (summary, records) = play(
        &[
            bot("--mute"),
            "builtin:random@loveletter-postman".to_string(),
        ],
        &["--games", "1", "--seed", "4", "--move-time", "3"],
    );
    // Seed 4: the mute AI gets four turns (a timeout each).
    assert_eq!(faults(&summary)[1], 0, "{summary}");
    let faulted: Vec<_> = records[0]
        .steps
        .iter()
        .filter_map(|s| s.fault.as_ref())
        .collect();
    for f in &faulted {
        assert_eq!(f.kind, "timeout", "{f:?}");
    }
    // (A timeout of the greeting, on a loaded machine, skips nothing.)
    let skipped = faulted
        .iter()
        .filter(|f| f.detail.contains("skipped: 'thinking hard'"))
        .count();
    assert!(skipped >= 3, "{faulted:?}");
}

#[test]
fn readme_only_ais_are_never_ruled_out_for_aiming_at_a_protected_player() {
    if !have_python() {
        return;
    }
    let readme = "python3 crates/cli/tests/loveletter_bots/readme_bot.py".to_string();
    let mut no_effect = 0;
    for seats in 2..=4 {
        let mut bots = vec![readme.clone(); seats - 1];
        bots.push("builtin:random".to_string());
        let (summary, records) = play(&bots, &["--games", "3", "--seed", "21"]);
        assert_eq!(faults(&summary), vec![0; seats], "{summary}");
        for r in &records {
            assert_eq!(r.variant, serde_json::json!({}), "standard rules");
            no_effect += events(r)
                .iter()
                .filter(|e| matches!(e, LoveLetterEvent::NoEffect { .. }))
                .count();
        }
    }
    assert!(no_effect > 0, "no card was aimed at a protected player");
}
