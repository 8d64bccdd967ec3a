//! Tournaments on a real `croupier serve` (issue 15): created with `croupier
//! tournaments` by an organiser, a bot that is down withdrawn with the
//! reason, the pages and their twins; and a SIGKILL half-way through, after
//! which the restarted server finishes the tournament without losing or
//! repeating a game (`croupier bench tournament`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use crate::support;

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
    // Issue 52: the real entrants and rounds, not "0 bots, round 0 of 0"
    // (the reply is the tournament as stored, before its driver starts it).
    assert!(created.contains("3 bots entered, 3 rounds"), "{created}");
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
    // The driver kept the winner with the tournament at its end.
    assert_eq!(v["tournament"]["winner"], standings[0]["name"], "{v}");
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
    // One tournament fills one page: the list says nothing of pages, and
    // a second page is an error with the server's reason.
    assert!(!listed.contains("page 1"), "{listed}");
    let past = croupier(&["tournaments", "list", "--server", s, "--page", "2"]);
    assert!(!past.status.success());
    let why = String::from_utf8_lossy(&past.stderr);
    assert!(why.contains("There is no page 2"), "{why}");
    let zero = croupier(&["tournaments", "list", "--server", s, "--page", "0"]);
    assert!(!zero.status.success());
}

/// `croupier bots upload NAME FILE --wait` (a GOPS program in Python) as `who`.
fn upload(s: &str, who: &str, name: &str, file: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["bots", "upload", name])
        .arg(file)
        .args(["--runtime", "python3", "--dialect", "gops"])
        .args(["--game", "goofspiel", "--wait", "--server", s])
        .args(["--owner", who, "--password", "pw"])
        .env_remove("CROUPIER_SERVER")
        .output()
        .expect("run croupier");
    ok(&out)
}

fn show(s: &str, name: &str) -> Value {
    let out = ok(&croupier(&[
        "tournaments",
        "show",
        name,
        "--server",
        s,
        "--json",
    ]));
    serde_json::from_str(out.trim()).unwrap()
}

/// A server with hosted bots in the sandbox, a fast GOPS ladder with its
/// random house bot, and the organiser `org` (password `pw`), in a folder
/// the sandbox's `nobody` can read (croupier as root starts bwrap so).
/// `None` where bubblewrap or Python is missing.
fn hosted_server() -> Option<(support::Server, tempfile::TempDir)> {
    use std::os::unix::fs::PermissionsExt;
    if !support::have("bwrap") || !support::have("python3") {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let ladder = dir.path().join("ladder.toml");
    std::fs::write(
        &ladder,
        "rest = \"100ms\"\n[goofspiel]\nvariant = \"gops\"\nmove_time = \"5s\"\nhouse = [\"random\"]\nhouse_games = false\n[loveletter]\nenabled = false\n[skullwhist]\nenabled = false\n",
    )
    .unwrap();
    let srv = support::serve(
        dir.path(),
        &[
            "--house-bots",
            "",
            "--sandbox",
            "strict",
            "--admin",
            "org",
            "--ladder",
            ladder.to_str().unwrap(),
        ],
    );
    ok(&croupier(&[
        "owner",
        "register",
        "--server",
        &srv.url,
        "--owner",
        "org",
        "--password",
        "pw",
    ]));
    Some((srv, dir))
}

/// `croupier tournaments create` by `org`: a round-robin of GOPS between
/// `entries`, `per_pairing` games a pairing.
fn create_gops_cup(s: &str, name: &str, per_pairing: &str, entries: &str) {
    let created = ok(&croupier(&[
        "tournaments",
        "create",
        "--server",
        s,
        "--owner",
        "org",
        "--password",
        "pw",
        "--name",
        name,
        "--game",
        "goofspiel",
        "--variant",
        "gops",
        "--format",
        "round-robin",
        "--games-per-pairing",
        per_pairing,
        "--move-time-ms",
        "3000",
        "--entries",
        entries,
    ]));
    assert!(created.contains(&format!("created {name}")), "{created}");
}

/// What hosted bot `bot`'s owner (`org`) reads of its recent games (its
/// version and stderr in each), by game id.
fn owners_games(s: &str, bot: &str) -> std::collections::HashMap<i64, Value> {
    let played: Value = reqwest::blocking::Client::new()
        .get(format!("{s}/v1/bots/{bot}/stderr?limit=100"))
        .basic_auth("org", Some("pw"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    played["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["game_id"].as_i64().unwrap(), g.clone()))
        .collect()
}

/// `tournaments show` until the tournament `name` has finished.
fn finished(s: &str, name: &str, within: Duration) -> Value {
    let start = Instant::now();
    loop {
        let v = show(s, name);
        if v["tournament"]["status"] == "finished" {
            return v;
        }
        assert!(start.elapsed() < within, "not finished: {v}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A hosted entry's tournament games start its program in the sandbox its
/// last game left, cleared (kept between its matches, as the ladder's
/// are, and shared with them): each game's program says its PID namespace
/// and pid on stderr, which its owner reads per game.
#[test]
fn a_hosted_entrys_tournament_games_start_in_its_kept_sandbox() {
    use std::os::unix::fs::PermissionsExt;
    let Some((srv, dir)) = hosted_server() else {
        return;
    };
    let s = srv.url.as_str();
    let bot = dir.path().join("marking.py");
    std::fs::write(&bot, support::marking_gops_bot()).unwrap();
    std::fs::set_permissions(&bot, std::fs::Permissions::from_mode(0o644)).unwrap();
    let v1 = upload(s, "org", "marky", &bot);
    assert!(v1.contains("version 1 passed validation"), "{v1}");
    create_gops_cup(s, "kept-cup", "3", "marky,house-random-goofspiel");
    let v = finished(s, "kept-cup", Duration::from_secs(120));
    let mut games: Vec<i64> = v["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_i64().unwrap())
        .collect();
    assert_eq!(games.len(), 6, "{v}");
    games.sort_unstable();
    let played = owners_games(s, "marky");
    let seen: Vec<support::SandboxMarks> = games
        .iter()
        .map(|id| {
            let text = played
                .get(id)
                .and_then(|g| g["stderr"].as_str())
                .unwrap_or_else(|| panic!("game {id}: {played:?}"));
            support::sandbox_marks(text).unwrap_or_else(|| panic!("game {id}: {text:?}"))
        })
        .collect();
    support::one_kept_sandbox(&seen);
}

#[test]
fn a_hosted_entry_plays_its_frozen_version_even_after_a_new_upload() {
    use std::os::unix::fs::PermissionsExt;
    let Some((srv, dir)) = hosted_server() else {
        return;
    };
    let s = srv.url.as_str();
    // Version 1 takes 20 ms a bid, so that the tournament (24 games of
    // 13 bids) is still under way once version 2 has passed its
    // validation: a hosted match itself takes a few milliseconds.
    let example = support::root().join("examples/bots/gops/random_bot.py");
    let slow = std::fs::read_to_string(&example)
        .unwrap()
        .replace("import random\n", "import random\nimport time\n")
        .replace(
            "            print(bid, flush=True)",
            "            time.sleep(0.02)\n            print(bid, flush=True)",
        );
    assert!(slow.contains("time.sleep"), "the example changed: {slow}");
    let bot = dir.path().join("bot_v1.py");
    std::fs::write(&bot, slow).unwrap();
    std::fs::set_permissions(&bot, std::fs::Permissions::from_mode(0o644)).unwrap();
    let v1 = upload(s, "org", "hosty", &bot);
    assert!(v1.contains("version 1 passed validation"), "{v1}");
    create_gops_cup(s, "hosted-cup", "12", "hosty,house-random-goofspiel");
    let done = |v: &Value| {
        v["games"]
            .as_array()
            .map_or(0, |g| g.iter().filter(|g| g["status"] == "done").count())
    };
    // Under way: the hosted entry is frozen to version 1.
    let start = Instant::now();
    let v = loop {
        let v = show(s, "hosted-cup");
        if done(&v) > 0 {
            break v;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "no game: {v}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let entry = |v: &Value| {
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "hosty")
            .cloned()
            .unwrap()
    };
    assert_eq!(entry(&v)["version"], 1, "{v}");
    assert!(entry(&v)["withdrawn"].is_null(), "{v}");
    // A new upload mid-tournament: it passes validation and becomes the
    // active version, but the tournament keeps playing version 1.
    let v2_file = dir.path().join("bot_v2.py");
    let mut text = std::fs::read_to_string(&bot).unwrap();
    text.push_str("\n# version 2\n");
    std::fs::write(&v2_file, text).unwrap();
    let v2 = upload(s, "org", "hosty", &v2_file);
    assert!(v2.contains("version 2 passed validation"), "{v2}");
    let done_at_upload = done(&show(s, "hosted-cup"));
    let v = finished(s, "hosted-cup", Duration::from_secs(300));
    let games = v["games"].as_array().unwrap();
    assert_eq!(games.len(), 24, "{v}");
    assert!(games.iter().all(|g| g["status"] == "done"), "{v}");
    assert!(
        done_at_upload < games.len(),
        "games were played after version 2 became active ({done_at_upload} done then)"
    );
    assert_eq!(entry(&v)["version"], 1, "{v}");
    // Each game's version, as the ladder records it (owner only): 1.
    let played = owners_games(s, "hosty");
    for g in games {
        let id = g["id"].as_i64().unwrap();
        let version = played.get(&id).map(|g| &g["version"]);
        assert_eq!(version, Some(&Value::from(1)), "game {id}: {played:?}");
    }
    // The bot is not faulted for waiting its turn: no faults at all.
    let row = v["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "hosty")
        .cloned()
        .unwrap();
    assert_eq!(row["faulty"].as_i64(), Some(0), "{v}");
}

#[test]
fn an_organiser_cancels_a_tournament_and_its_unplayed_games_never_start() {
    let dir = tempfile::tempdir().unwrap();
    let ladder = dir.path().join("ladder.toml");
    std::fs::write(
        &ladder,
        "[goofspiel]\nvariant = \"jujitsu rounds=5\"\nhouse = [\"random\", \"planner\"]\nhouse_games = false\n[loveletter]\nenabled = false\n[skullwhist]\nenabled = false\n",
    )
    .unwrap();
    let srv = support::serve(
        dir.path(),
        &[
            "--house-bots",
            "",
            "--sandbox",
            "off",
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
    let create = |name: &str, deals: &str, start: Option<&str>| {
        let mut args = vec![
            "tournaments",
            "create",
            "--server",
            s,
            "--owner",
            "org",
            "--password",
            "pw",
            "--name",
            name,
            "--game",
            "goofspiel",
            "--variant",
            "jujitsu rounds=5",
            "--games-per-pairing",
            deals,
            "--move-time-ms",
            "300",
            "--entries",
            "house-random-goofspiel,house-planner-goofspiel",
        ];
        if let Some(at) = start {
            args.extend(["--start", at]);
        }
        ok(&croupier(&args))
    };
    let cancel = |who: &str, name: &str| {
        croupier(&[
            "tournaments",
            "cancel",
            name,
            "--server",
            s,
            "--owner",
            who,
            "--password",
            "pw",
            "--reason",
            "the venue flooded",
        ])
    };
    // Announced for later, cancelled before it starts: no game at all.
    create("later", "1", Some("2099-01-01T00:00:00Z"));
    let refused = cancel("bob", "later");
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("organisers"),
        "{refused:?}"
    );
    let out = ok(&cancel("org", "later"));
    assert!(out.contains("cancelled later"), "{out}");
    let v = show(s, "later");
    assert_eq!(v["tournament"]["status"], "cancelled", "{v}");
    assert_eq!(
        v["tournament"]["reason"], "cancelled by org: the venue flooded",
        "{v}"
    );
    assert!(v["games"].as_array().unwrap().is_empty(), "{v}");
    // Over is over: a second cancel is refused with the reason.
    let again = cancel("org", "later");
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already cancelled"),
        "{again:?}"
    );
    assert!(!cancel("org", "no-such-cup").status.success());
    // Running: cancelled after some games; the rest are never started.
    create("long", "400", None);
    let start = Instant::now();
    loop {
        let v = show(s, "long");
        let done = v["progress"]["done"].as_i64().unwrap_or(0);
        if done >= 3 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "no games: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
    ok(&cancel("org", "long"));
    // Games in progress finish; then nothing moves.
    let settled = |v: &Value| {
        v["games"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["status"] == "done" || g["status"] == "void")
    };
    let start = Instant::now();
    let v = loop {
        let v = show(s, "long");
        if settled(&v) {
            break v;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{v}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let count = |v: &Value, status: &str| {
        v["games"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["status"] == status)
            .count()
    };
    let (done, void) = (count(&v, "done"), count(&v, "void"));
    assert_eq!(done + void, 800, "{v}");
    assert!(done >= 3 && void > 0, "done {done}, void {void}");
    std::thread::sleep(Duration::from_millis(1500));
    let later = show(s, "long");
    assert_eq!(later["tournament"]["status"], "cancelled", "{later}");
    assert_eq!(
        count(&later, "done"),
        done,
        "no game started after the cancel"
    );
    let page = reqwest::blocking::get(format!("{s}/tournaments/long"))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        page.contains("cancelled") && page.contains("the venue flooded"),
        "{page}"
    );
    // Its games in the games list, apart from the ladder's; every page's
    // header links to the tournaments.
    assert!(page.contains("href=\"/games?tournament=long\""), "{page}");
    let games = |query: &str| -> Value {
        reqwest::blocking::get(format!("{s}/json/games?{query}"))
            .unwrap()
            .json()
            .unwrap()
    };
    let mine = games("tournament=long");
    assert_eq!(mine["total"].as_u64(), Some(done as u64), "{mine}");
    assert_eq!(mine["tournament"], "long", "{mine}");
    let ids: Vec<i64> = v["games"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["id"].as_i64())
        .collect();
    assert!(mine["games"]
        .as_array()
        .unwrap()
        .iter()
        .all(|g| ids.contains(&g["id"].as_i64().unwrap())));
    assert_eq!(
        games("tournaments=only")["total"].as_u64(),
        Some(done as u64)
    );
    assert_eq!(games("tournaments=hide")["total"].as_u64(), Some(0));
    assert_eq!(games("tournament=later")["total"].as_u64(), Some(0));
    let bad = reqwest::blocking::get(format!("{s}/json/games?tournaments=maybe")).unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    let missing = reqwest::blocking::get(format!("{s}/json/games?tournament=nope")).unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let home = reqwest::blocking::get(format!("{s}/games?tournaments=hide"))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        home.contains("<a href=\"/tournaments\">Tournaments</a>"),
        "{home}"
    );
}
