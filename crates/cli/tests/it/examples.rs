//! The example bots in `examples/bots/` play real matches through the
//! `croupier` binary: the GOPS quiz's Ruby Planner unchanged, and the random
//! bots of every dialect in Python, JavaScript and Ruby. Each must play with
//! no fault at all.
//!
//! An interpreter that is missing is reported and its bots skipped, except
//! under CI (`CI=true`), where `.ci/run` installs them and a missing one fails.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use crate::support;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use support::{have, root, serve};

fn croupier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

fn summary(args: &[&str]) -> serde_json::Value {
    let o = croupier(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&o.stdout)))
}

/// The Python and JavaScript versions of an example bot, each with its
/// interpreter, for those interpreters this machine has.
fn python_and_node<'a>(py: &'a str, js: &'a str) -> impl Iterator<Item = (&'static str, &'a str)> {
    [("python3", py), ("node", js)]
        .into_iter()
        .filter(|(interp, _)| have(interp))
}

fn assert_no_faults(v: &serde_json::Value, games: u64) {
    assert_eq!(v["games"], games, "{v}");
    for b in v["bots"].as_array().unwrap() {
        assert_eq!(b["faults"], 0, "{v}");
    }
}

#[test]
fn the_quiz_planner_in_ruby_plays_unchanged_and_beats_random() {
    if !have("ruby") {
        return;
    }
    let v = summary(&[
        "play",
        "goofspiel",
        "ruby examples/bots/gops/planner.rb",
        "builtin:random",
        "--games",
        "200",
        "--seed",
        "1",
        "--json",
    ]);
    assert_no_faults(&v, 200);
    let (w, l) = (
        v["bots"][0]["wins"].as_u64().unwrap(),
        v["bots"][0]["losses"].as_u64().unwrap(),
    );
    assert!(w > l + 20, "planner {w} wins, {l} losses: {v}");
}

#[test]
fn the_ruby_planner_and_our_builtin_planner_play_identically() {
    if !have("ruby") {
        return;
    }
    let ruby = summary(&[
        "play",
        "goofspiel",
        "ruby examples/bots/gops/planner.rb",
        "builtin:random",
        "--games",
        "50",
        "--seed",
        "9",
        "--json",
    ]);
    let ours = summary(&[
        "play",
        "goofspiel",
        "builtin:planner",
        "builtin:random",
        "--games",
        "50",
        "--seed",
        "9",
        "--json",
    ]);
    for key in ["wins", "draws", "losses", "mean_score"] {
        assert_eq!(
            ruby["bots"][0][key], ours["bots"][0][key],
            "{key}: {ruby} vs {ours}"
        );
    }
}

#[test]
fn gops_random_bots_in_python_and_javascript_play_without_faults() {
    for (interp, file) in python_and_node("random_bot.py", "random_bot.js") {
        let bot = format!("{interp} examples/bots/gops/{file}");
        assert_no_faults(
            &summary(&[
                "play",
                "goofspiel",
                &bot,
                "builtin:random",
                "--games",
                "20",
                "--json",
            ]),
            20,
        );
    }
}

#[test]
fn loveletter_random_bots_play_without_faults_at_every_table_size() {
    for (interp, file) in python_and_node("random_bot.py", "random_bot.js") {
        for others in [1usize, 2, 3] {
            // The classic protocol never says how many play. The bots do not
            // need to know (they name a protected player rather than guess),
            // and accept it as an argument (examples/bots/loveletter/README.md).
            let told = if others == 2 {
                String::new()
            } else {
                format!(" --players {}", others + 1)
            };
            let bot = format!("{interp} examples/bots/loveletter/{file}{told}");
            let mut args = vec!["play", "loveletter", bot.as_str()];
            args.extend(std::iter::repeat_n("builtin:random", others));
            args.extend(["--games", "3", "--json"]);
            assert_no_faults(&summary(&args), 3);
        }
    }
}

/// Under the standard rules (those of a table that mixes the classic and
/// Postman dialects) only the Wizard may name its own player: the random
/// bots in Postman's dialect must then name a protected player, not
/// themselves, when their card can affect nobody (they named themselves
/// before: 16 illegal plays in this test's first table).
#[test]
fn loveletter_random_bots_in_postmans_dialect_play_the_standard_rules_without_faults() {
    for (interp, file) in python_and_node("random_bot.py", "random_bot.js") {
        let postman = format!("{interp} examples/bots/loveletter/{file}@loveletter-postman");
        // Two players: naming oneself; three and four: naming a player out.
        for (others, games) in [(1usize, 60u64), (2, 20), (3, 20)] {
            let games_text = games.to_string();
            let mut args = vec!["play", "loveletter", postman.as_str()];
            args.extend(std::iter::repeat_n("builtin:random", others));
            args.extend([
                "--variant",
                "standard",
                "--games",
                &games_text,
                "--seed",
                "5",
                "--json",
            ]);
            assert_no_faults(&summary(&args), games);
        }
    }
}

#[test]
fn croupier_protocol_random_bots_play_every_game_without_faults() {
    for (interp, file) in python_and_node("random_bot.py", "random_bot.js") {
        let bot = format!("{interp} examples/bots/croupier/{file}@croupier");
        for (game, opponents) in [
            ("skullwhist", vec!["builtin:heuristic"]),
            ("goofspiel", vec!["builtin:planner"]),
            ("loveletter", vec!["builtin:random", "builtin:heuristic"]),
        ] {
            let mut args = vec!["play", game, bot.as_str()];
            args.extend(opponents);
            args.extend(["--games", "4", "--json"]);
            assert_no_faults(&summary(&args), 4);
        }
    }
}

#[test]
fn skullwhist_rest_bots_in_three_languages_play_against_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let srv = serve(dir.path(), &[]);
    for (interp, file) in [
        ("python3", "random_bot.py"),
        ("node", "random_bot.js"),
        ("ruby", "random_bot.rb"),
    ] {
        if !have(interp) {
            continue;
        }
        let o = Command::new(interp)
            .current_dir(root())
            .arg(format!("examples/bots/skullwhist/{file}"))
            .args([
                srv.url.as_str(),
                &format!("example-{interp}"),
                "pw",
                "--games",
                "2",
            ])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{file}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = croupier(&["bot", "heuristic", "--connect", &srv.url, "--games", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 games"));
}

/// An example HTTP bot server on a free port, killed on drop.
struct BotServer {
    child: std::process::Child,
    port: u16,
}

impl Drop for BotServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `interpreter file --port 0 args…` and waits for its
/// `listening on PORT` line.
fn bot_server(interpreter: &str, file: &str, args: &[&str]) -> BotServer {
    use std::io::BufRead as _;
    let mut child = Command::new(interpreter)
        .current_dir(root())
        .arg(file)
        .args(["--port", "0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    // Killed on drop, also when the ready line never comes.
    let mut server = BotServer { child, port: 0 };
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{interpreter} {file}: no ready line in 20 s"));
    server.port = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{interpreter} {file}: ready line {line:?}"));
    server
}

#[test]
fn jujitsu_bot_servers_play_with_basic_auth_without_faults() {
    for (interp, file) in python_and_node("bot.py", "bot.js") {
        let bot = bot_server(
            interp,
            &format!("examples/bots/jujitsu/{file}"),
            &["--user", "me", "--password", "s3cret"],
        );
        let url = format!("http://me:s3cret@127.0.0.1:{}/@jujitsu", bot.port);
        let args = [
            "play",
            "goofspiel",
            url.as_str(),
            "builtin:planner",
            "--variant",
            "jujitsu rounds=5,6",
            "--games",
            "3",
            "--json",
        ];
        assert_no_faults(&summary(&args), 3);
        // A wrong password is refused (401): every bid is a fault.
        let wrong = format!("http://me:wrong@127.0.0.1:{}/@jujitsu", bot.port);
        let mut args = args;
        args[2] = wrong.as_str();
        let v = summary(&args);
        assert_eq!(v["bots"][0]["faults"], 3 * 11, "{file}: {v}");
    }
}

#[test]
fn croupier_push_bot_servers_play_every_game_without_faults() {
    for (interp, file) in python_and_node("push_bot.py", "push_bot.js") {
        let bot = bot_server(interp, &format!("examples/bots/croupier-http/{file}"), &[]);
        let url = format!("http://127.0.0.1:{}/@croupier", bot.port);
        for (game, opponents) in [
            ("skullwhist", vec!["builtin:heuristic"]),
            ("goofspiel", vec!["builtin:planner"]),
            ("loveletter", vec!["builtin:random", "builtin:heuristic"]),
        ] {
            let mut args = vec!["play", game, url.as_str()];
            args.extend(opponents);
            args.extend(["--games", "3", "--json"]);
            assert_no_faults(&summary(&args), 3);
        }
    }
}
