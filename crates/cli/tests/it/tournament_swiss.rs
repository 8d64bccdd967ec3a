//! `croupier tournament --format swiss` end to end, with built-in bots.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::collections::HashSet;
use std::process::{Command, Output};

use serde_json::Value;

fn croupier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .output()
        .expect("run croupier")
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn swiss(game: &str, bots: &[&str], extra: &[&str]) -> Output {
    let mut args = vec!["tournament", game, "--format", "swiss"];
    for b in bots {
        args.extend(["--bot", b]);
    }
    args.extend(extra);
    croupier(&args)
}

const FIVE: [&str; 5] = [
    "builtin:random",
    "builtin:planner",
    "builtin:random",
    "builtin:planner",
    "builtin:random",
];

#[test]
fn goofspiel_swiss_pairs_by_score_with_one_bye_each() {
    let args = [
        "--rounds",
        "4",
        "--games-per-pair",
        "3",
        "--seed",
        "11",
        "--json",
    ];
    let out = swiss("goofspiel", &FIVE, &args);
    let v = json(&out);
    assert_eq!(v["format"], "swiss");
    assert_eq!(v["rounds"], 4);
    assert_eq!(v["seed"], 11);
    // Two tables per round, 3 deals each played both ways.
    assert_eq!(v["games"], 4 * 2 * 3 * 2);
    let rounds = v["round_results"].as_array().unwrap();
    assert_eq!(rounds.len(), 4);
    let mut met = HashSet::new();
    let mut byes = HashSet::new();
    for (i, r) in rounds.iter().enumerate() {
        assert_eq!(r["round"], i + 1);
        let b = r["byes"].as_array().unwrap();
        assert_eq!(b.len(), 1, "one bye per round with five bots");
        assert!(byes.insert(b[0].as_u64().unwrap()), "a second bye: {r}");
        let tables = r["tables"].as_array().unwrap();
        assert_eq!(tables.len(), 2);
        let mut seated: Vec<u64> = vec![b[0].as_u64().unwrap()];
        for t in tables {
            let pair: Vec<u64> = t["bots"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            seated.extend(&pair);
            assert!(
                met.insert((pair[0].min(pair[1]), pair[0].max(pair[1]))),
                "{pair:?} met twice"
            );
            let points: f64 = t["points"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_f64().unwrap())
                .sum();
            assert_eq!(points, 1.0, "a match gives one point");
            // Game points of a 2-player match add up to 2 per game.
            let gp: u64 = t["game_points"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_u64().unwrap())
                .sum();
            assert_eq!(gp, 2 * 3 * 2);
        }
        seated.sort_unstable();
        assert_eq!(seated, vec![0, 1, 2, 3, 4], "everyone once per round");
    }
    let standings = v["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 5);
    let points: Vec<f64> = standings
        .iter()
        .map(|s| s["points"].as_f64().unwrap())
        .collect();
    assert!(points.windows(2).all(|w| w[0] >= w[1]), "{points:?}");
    assert_eq!(points.iter().sum::<f64>(), 4.0 * 3.0);
    for (i, s) in standings.iter().enumerate() {
        assert_eq!(s["rank"], i + 1);
        assert_eq!(s["rounds"].as_array().unwrap().len(), 4);
        assert!(s["buchholz"].as_f64().is_some());
        assert!(s["rating"].as_f64().is_some());
        // Ties on points are ordered by Buchholz.
        if i > 0 && points[i] == points[i - 1] {
            let before = standings[i - 1]["buchholz"].as_f64().unwrap();
            assert!(before >= s["buchholz"].as_f64().unwrap());
        }
    }
    // Per-bot game counts: 6 games a round, except in a bye.
    for s in standings {
        let bot = s["bot"].as_u64().unwrap() as usize;
        let byes = s["byes"].as_u64().unwrap();
        assert_eq!(v["bots"][bot]["games"].as_u64().unwrap(), 6 * (4 - byes));
    }
    assert_eq!(
        standings
            .iter()
            .map(|s| s["byes"].as_u64().unwrap())
            .sum::<u64>(),
        4
    );
    // The same seed gives the same tournament.
    assert_eq!(json(&swiss("goofspiel", &FIVE, &args)), v);
}

#[test]
fn love_letter_swiss_seats_tables_of_up_to_four() {
    let bots = [
        "builtin:heuristic",
        "builtin:random",
        "builtin:heuristic",
        "builtin:random",
        "builtin:random",
        "builtin:random",
        "builtin:random",
    ];
    let out = swiss(
        "loveletter",
        &bots,
        &[
            "--rounds",
            "2",
            "--games-per-pair",
            "1",
            "--seed",
            "4",
            "--json",
        ],
    );
    let v = json(&out);
    // Seven bots: a table of four and one of three, each deal under every
    // rotation of the seats.
    assert_eq!(v["games"], 2 * (4 + 3));
    for r in v["round_results"].as_array().unwrap() {
        let sizes: Vec<usize> = r["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["bots"].as_array().unwrap().len())
            .collect();
        assert_eq!(sizes, vec![4, 3]);
        assert!(r["byes"].as_array().unwrap().is_empty());
        for t in r["tables"].as_array().unwrap() {
            let sum: f64 = t["points"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_f64().unwrap())
                .sum();
            let k = t["bots"].as_array().unwrap().len() as f64;
            assert!(
                (sum - k / 2.0).abs() < 1e-9,
                "a table of k gives k/2 points"
            );
        }
    }
    let cells = v["standings"][0]["rounds"].as_array().unwrap();
    assert!(cells
        .iter()
        .all(|c| !c["opponents"].as_array().unwrap().is_empty()));
}

#[test]
fn the_table_shows_standings_and_crosstable() {
    let out = swiss(
        "skullwhist",
        &["builtin:heuristic", "builtin:random", "builtin:random"],
        &["--rounds", "2", "--games-per-pair", "1", "--seed", "2"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Swiss, 2 rounds"), "{text}");
    assert!(text.contains("Buchholz"), "{text}");
    assert!(text.contains("R1") && text.contains("R2"), "{text}");
    assert_eq!(text.matches("bye").count(), 2, "one bye a round: {text}");
}

#[test]
fn round_robin_stays_the_default() {
    let out = croupier(&[
        "tournament",
        "goofspiel",
        "--bot",
        "builtin:random",
        "--bot",
        "builtin:planner",
        "--bot",
        "builtin:random",
        "--games-per-pair",
        "2",
        "--seed",
        "1",
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(v["format"], "round-robin");
    assert_eq!(v["games"], 3 * 2 * 2);
    assert!(v.get("standings").is_none());
    assert_eq!(v["ratings"].as_array().unwrap().len(), 3);
}

#[test]
fn bad_swiss_flags_are_usage_errors() {
    let two = ["builtin:random", "builtin:planner"];
    for (args, needle) in [
        (vec!["--rounds", "0"], "at least 1"),
        (
            vec!["--format", "round-robin", "--rounds", "3"],
            "--rounds is for",
        ),
        (vec!["--format", "knockout"], "knockout"),
    ] {
        let mut all = vec!["tournament", "goofspiel", "--bot", two[0], "--bot", two[1]];
        if !args.contains(&"--format") {
            all.extend(["--format", "swiss"]);
        }
        all.extend(&args);
        let out = croupier(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
