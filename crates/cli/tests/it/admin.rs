//! `croupier admin` against a real `croupier serve --admin root` (issue 49
//! item 5): each command, its usage errors (exit 2) and refusals (exit 1),
//! and a ban withdrawing the bot from a scheduled tournament.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use crate::support;

use std::process::{Command, Output};

use serde_json::Value;

fn croupier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .env_remove("CROUPIER_SERVER")
        .env_remove("CROUPIER_OWNER")
        .env_remove("CROUPIER_PASSWORD")
        .output()
        .expect("run croupier")
}

fn text(o: &Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn admins_ban_reset_and_start_seasons_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let ladder = dir.path().join("ladder.toml");
    std::fs::write(
        &ladder,
        "[goofspiel]\nhouse = [\"random\", \"planner\"]\nhouse_games = false\n[loveletter]\nenabled = false\n[skullwhist]\nenabled = false\n",
    )
    .unwrap();
    let srv = support::serve(
        dir.path(),
        &[
            "--house-bots",
            "",
            "--sandbox",
            "off",
            "--allow-private-bot-urls",
            "--admin",
            "root",
            "--ladder",
            ladder.to_str().unwrap(),
        ],
    );
    let s = srv.url.as_str();
    for who in ["root", "bob"] {
        let (code, out, err) = text(&croupier(&[
            "owner",
            "register",
            "--server",
            s,
            "--owner",
            who,
            "--password",
            "pw",
        ]));
        assert_eq!(code, 0, "{out}{err}");
    }
    let (code, out, err) = text(&croupier(&[
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
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = text(&croupier(&[
        "tournaments",
        "create",
        "--server",
        s,
        "--owner",
        "root",
        "--password",
        "pw",
        "--name",
        "later",
        "--game",
        "goofspiel",
        "--entries",
        "house-random-goofspiel,house-planner-goofspiel,dead",
        "--start",
        "2099-01-01T00:00:00Z",
    ]));
    assert_eq!(code, 0, "{out}{err}");
    let admin = |as_who: &str, args: &[&str]| {
        let mut all = vec!["admin"];
        all.extend_from_slice(&args[..1]);
        all.extend_from_slice(&["--server", s, "--owner", as_who, "--password", "pw"]);
        all.extend_from_slice(&args[1..]);
        text(&croupier(&all))
    };

    // Usage errors: exit 2, nothing sent.
    for args in [
        &["ban-bot", "dead"][..],
        &["ban-bot", "dead", "--reason", "  "],
        &["ban-bot", "a/b", "--reason", "x"],
        &["reset-rating", "dead", "--game", "chess"],
        &["new-season", "--game", "chess"],
        &["audit", "--limit", "0"],
    ] {
        let (code, out, err) = admin("root", args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("error"), "{args:?}: {err}");
    }
    // Refusals from the server: exit 1 with its reason.
    let (code, _, err) = admin("bob", &["ban-bot", "dead", "--reason", "x"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("403") && err.contains("not an admin"), "{err}");
    let (code, _, err) = admin("root", &["ban-bot", "nobody", "--reason", "x"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no bot named 'nobody'"), "{err}");
    let (code, _, err) = admin("root", &["unban-bot", "dead"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not banned"), "{err}");
    let (code, out, _) = admin("root", &["audit"]);
    assert_eq!((code, out.trim()), (0, "the audit log is empty"));

    // A ban: the bot leaves the tournament still to be played.
    let (code, out, err) = admin("root", &["ban-bot", "dead", "--reason", "never answers"]);
    assert_eq!((code, out.trim()), (0, "bot dead is banned"), "{err}");
    let (code, _, err) = admin("root", &["ban-bot", "dead", "--reason", "again"]);
    assert_eq!(code, 1);
    assert!(err.contains("already banned: never answers"), "{err}");
    let (_, out, _) = text(&croupier(&[
        "tournaments",
        "show",
        "later",
        "--server",
        s,
        "--json",
    ]));
    let t: Value = serde_json::from_str(out.trim()).unwrap();
    let dead = t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "dead")
        .unwrap();
    assert_eq!(dead["withdrawn"], "banned: never answers", "{t}");
    let (code, out, _) = admin("root", &["bans"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("bot dead: never answers (by root, "),
        "{out}"
    );
    let (code, out, _) = admin("root", &["unban-bot", "dead", "--reason", "fixed"]);
    assert_eq!((code, out.trim()), (0, "bot dead is no longer banned"));
    let (_, out, _) = admin("root", &["bans"]);
    assert_eq!(out.trim(), "no bans");

    // An owner's ban shuts their credentials.
    let (code, out, _) = admin("root", &["ban-owner", "bob", "--reason", "spam"]);
    assert_eq!(
        (code, out.trim()),
        (0, "owner bob and their bots are banned")
    );
    let (code, _, err) = text(&croupier(&[
        "bots",
        "list",
        "--server",
        s,
        "--owner",
        "bob",
        "--password",
        "pw",
    ]));
    assert_eq!(code, 1);
    assert!(err.contains("owner 'bob' is banned: spam"), "{err}");
    let (code, _, _) = admin("root", &["unban-owner", "bob"]);
    assert_eq!(code, 0);

    // Ratings and seasons.
    let (code, _, err) = admin(
        "root",
        &[
            "reset-rating",
            "house-random-goofspiel",
            "--game",
            "loveletter",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("has no rating in loveletter"), "{err}");
    let (code, out, err) = admin(
        "root",
        &["new-season", "--game", "goofspiel", "--reason", "spring"],
    );
    assert_eq!(
        (code, out.trim()),
        (0, "goofspiel season 2 started"),
        "{err}"
    );
    let (code, out, _) = admin("root", &["seasons"]);
    assert_eq!(code, 0);
    assert!(out.contains("goofspiel season 1: ended "), "{out}");
    assert!(out.contains("goofspiel season 2: current, since "), "{out}");
    assert!(out.contains("skullwhist season 1: current"), "{out}");
    let page = reqwest::blocking::get(format!("{s}/json/leaderboard/goofspiel?season=1")).unwrap();
    assert_eq!(page.status().as_u16(), 200);

    // The audit log, as text and as JSON.
    let (code, out, _) = admin("root", &["audit"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert!(
        lines[0].contains(" root new-season goofspiel: spring (season 1 ended with "),
        "{out}"
    );
    assert!(
        lines[4].contains(" root ban-bot dead: never answers"),
        "{out}"
    );
    let (_, out, _) = admin("root", &["audit", "--json", "--limit", "2"]);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["entries"].as_array().unwrap().len(), 2);
    assert_eq!(v["entries"][1]["action"], "unban-owner");
}
