//! Tournaments on a real `croupier serve` (issue 15): created with `croupier
//! tournaments` by an organiser, a bot that is down withdrawn with the
//! reason, the pages and their twins; and a SIGKILL half-way through, after
//! which the restarted server finishes the tournament without losing or
//! repeating a game (`croupier bench tournament`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

mod support;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn croupier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .env_remove("CROUPIER_SERVER")
        .output()
        .expect("run croupier")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_swiss_survives_a_sigkill_without_losing_or_repeating_a_game() {
    let out = ok(&croupier(&[
        "bench",
        "tournament",
        "--tournament",
        "swiss:6:3",
        "--json",
    ]));
    let f: Value = serde_json::from_str(out.trim()).unwrap();
    let planned = f["planned_games"].as_i64().unwrap();
    // 3 tables of 2 bots, 1 deal under both seatings, 3 rounds.
    assert_eq!(planned, 18, "{f}");
    assert_eq!(f["status"], "finished", "{f}");
    let at_kill = f["done_at_kill"].as_i64().unwrap();
    assert!(at_kill > 0 && at_kill < planned, "killed mid-way: {f}");
    assert_eq!(f["games_finished"].as_i64(), Some(planned), "{f}");
    assert_eq!(
        (f["repeated"].as_i64(), f["lost"].as_i64()),
        (Some(0), Some(0)),
        "{f}"
    );
}

#[test]
fn organisers_run_tournaments_from_the_cli_and_a_dead_bot_is_withdrawn() {
    let dir = tempfile::tempdir().unwrap();
    let ladder = dir.path().join("ladder.toml");
    std::fs::write(
        &ladder,
        "[goofspiel]\nvariant = \"jujitsu rounds=5\"\nhouse = [\"random\", \"planner\"]\nhouse_games = false\n[loveletter]\nenabled = false\n[skullwhist]\nenabled = false\n",
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.path().join("db").display());
    let srv = support::serve(
        dir.path(),
        &[
            "--house-bots",
            "",
            "--sandbox",
            "off",
            "--allow-private-bot-urls",
            "--admin",
            "org",
            "--ladder",
            ladder.to_str().unwrap(),
        ],
    );
    let s = srv.url.as_str();
    for who in ["org", "bob"] {
        ok(&croupier(&[
            "owner",
            "register",
            "--server",
            s,
            "--owner",
            who,
            "--password",
            "pw",
        ]));
    }
    // A push bot nobody answers for: every call is refused.
    ok(&croupier(&[
        "bots",
        "register",
        "--server",
        s,
        "--owner",
        "bob",
        "--password",
        "pw",
        "--name",
        "dead",
        "--game",
        "goofspiel",
        "--url",
        "http://127.0.0.1:9/",
        "--dialect",
        "croupier",
    ]));
    let create = |who: &str, name: &str| {
        croupier(&[
            "tournaments",
            "create",
            "--server",
            s,
            "--owner",
            who,
            "--password",
            "pw",
            "--name",
            name,
            "--game",
            "goofspiel",
            "--variant",
            "jujitsu rounds=5",
            "--format",
            "round-robin",
            "--games-per-pairing",
            "2",
            "--move-time-ms",
            "300",
            "--entries",
            "house-random-goofspiel,house-planner-goofspiel,dead",
        ])
    };
    let refused = create("bob", "bobs-cup");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("organisers"));
    // The organiser flag set against the database lets bob in.
    let granted = ok(&croupier(&[
        "tournaments",
        "admin",
        "bob",
        "--database",
        &db,
    ]));
    assert!(granted.contains("bob may organise"), "{granted}");
    assert!(
        !croupier(&["tournaments", "admin", "nobody", "--database", &db])
            .status
            .success()
    );
    let created = ok(&create("org", "cup"));
    assert!(created.contains("created cup"), "{created}");
    let start = Instant::now();
    let v: Value = loop {
        let out = ok(&croupier(&[
            "tournaments",
            "show",
            "cup",
            "--server",
            s,
            "--json",
        ]));
        let v: Value = serde_json::from_str(out.trim()).unwrap();
        if v["tournament"]["status"] == "finished" {
            break v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "not finished: {v}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    // Three bots: three rounds, one pair each (one bot rests).
    assert_eq!(v["tournament"]["rounds"], 3, "{v}");
    let dead = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "dead")
        .unwrap();
    let why = dead["withdrawn"].as_str().unwrap_or_default();
    assert!(why.contains("faulted in every one of its 4 games"), "{v}");
    // Its later pairing was never played; the house bots' was.
    let games = v["games"].as_array().unwrap();
    let done: Vec<&Value> = games.iter().filter(|g| g["status"] == "done").collect();
    assert_eq!(done.len(), 8, "{v}");
    assert!(games.iter().all(|g| g["status"] == "done"), "{v}");
    let standings = v["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 3);
    let dead_row = standings.iter().find(|r| r["name"] == "dead").unwrap();
    // Goofspiel's ruling for a bot that does not answer is a random card.
    assert_eq!(dead_row["faulty"].as_i64(), Some(4), "{v}");
    let bots: Vec<&str> = v["crosstable"]["bots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    let at = |name: &str| bots.iter().position(|b| *b == name).unwrap();
    let cell = v["crosstable"]["cells"][at("house-planner-goofspiel")][at("dead")].clone();
    let back = v["crosstable"]["cells"][at("dead")][at("house-planner-goofspiel")].clone();
    assert_eq!(
        (cell["games"].as_i64(), back["games"].as_i64()),
        (Some(4), Some(4)),
        "{v}"
    );
    let num = |c: &Value, k: &str| c[k].as_f64().unwrap();
    let (score, low, high) = (num(&cell, "score"), num(&cell, "low"), num(&cell, "high"));
    assert!((score + num(&back, "score") - 1.0).abs() < 1e-9, "{v}");
    assert!(low <= score && score <= high, "{v}");
    let significant = cell["significant"].as_i64().unwrap();
    assert_eq!(significant == 1, low > 0.5, "{v}");
    assert_eq!(
        significant + back["significant"].as_i64().unwrap(),
        0,
        "{v}"
    );
    assert!(
        v["crosstable"]["cells"][at("dead")][at("house-random-goofspiel")].is_null(),
        "{v}"
    );
    // The pages and their twins.
    let client = reqwest::blocking::Client::new();
    let page = client
        .get(format!("{s}/tournaments/cup"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(
        page.contains("Crosstable") && page.contains("withdrawn after round 1"),
        "{page}"
    );
    let first = done[0]["id"].as_i64().unwrap();
    assert!(page.contains(&format!("href=\"/games/{first}\"")));
    let list: Value = client
        .get(format!("{s}/json/tournaments"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(list["tournaments"][0]["tournament"]["name"], "cup");
    let bot: Value = client
        .get(format!("{s}/json/bots/dead"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(bot["tournaments"][0]["tournament"]["name"], "cup", "{bot}");
    let listed = ok(&croupier(&["tournaments", "list", "--server", s]));
    assert!(
        listed.contains("cup (goofspiel round-robin, 3 bots): finished, 8 of 8 games"),
        "{listed}"
    );
}
