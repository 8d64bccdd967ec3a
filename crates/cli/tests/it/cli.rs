//! End-to-end tests of the `croupier` binary.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::path::Path;
use std::process::{Command, Output};

fn croupier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .output()
        .expect("run croupier")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(stdout(o).trim()).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn planner_beats_random_clearly_at_goofspiel() {
    let o = croupier(&[
        "play",
        "goofspiel",
        "builtin:planner",
        "builtin:random",
        "--games",
        "2000",
        "--seed",
        "7",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["game"], "goofspiel");
    assert_eq!(v["games"], 2000);
    let bots = v["bots"].as_array().unwrap();
    assert_eq!(bots[0]["name"], "builtin:planner");
    let (pw, rw) = (
        bots[0]["wins"].as_u64().unwrap(),
        bots[1]["wins"].as_u64().unwrap(),
    );
    assert_eq!(
        pw + bots[0]["draws"].as_u64().unwrap() + bots[0]["losses"].as_u64().unwrap(),
        2000
    );
    assert_eq!(
        bots[0]["wins"], bots[1]["losses"],
        "two players: one's win is the other's loss"
    );
    assert!(pw > rw + 200, "planner {pw} vs random {rw}");
    assert!(bots[0]["mean_score"].as_f64().unwrap() > bots[1]["mean_score"].as_f64().unwrap());
}

/// `strong` reads a program that bids the prize's value, through the gops
/// dialect, and beats it: every game of a short series (with `iterations`
/// so that its choices do not depend on the machine's speed).
#[test]
fn strong_reads_and_beats_a_prize_bidding_program() {
    let bot = crate::support::root().join("examples/bots/gops/sparring/prize.py");
    let o = croupier(&[
        "play",
        "goofspiel",
        bot.to_str().unwrap(),
        "builtin:strong?iterations=200",
        "--games",
        "6",
        "--seed",
        "3",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let bots = v["bots"].as_array().unwrap();
    assert_eq!(bots[1]["name"], "builtin:strong?iterations=200");
    assert_eq!(bots[1]["wins"], 6, "{v}");
    assert_eq!(bots[0]["wins"], 0, "{v}");
}

#[test]
fn same_seed_gives_the_same_series() {
    let args = [
        "play",
        "skullwhist",
        "builtin:heuristic",
        "builtin:random",
        "--games",
        "50",
        "--seed",
        "99",
        "--json",
    ];
    assert_eq!(stdout(&croupier(&args)), stdout(&croupier(&args)));
    let other = [
        "play",
        "skullwhist",
        "builtin:heuristic",
        "builtin:random",
        "--games",
        "50",
        "--seed",
        "100",
        "--json",
    ];
    assert_ne!(stdout(&croupier(&args)), stdout(&croupier(&other)));
}

#[test]
fn bad_input_gets_one_error_line_and_exit_code_2() {
    let cases: &[&[&str]] = &[
        &["play", "chess", "builtin:random", "builtin:random"],
        &["play", "goofspiel", "builtin:nobody", "builtin:random"],
        &[
            "play",
            "goofspiel",
            "builtin:planner",
            "builtin:random",
            "--variant",
            "poker",
        ],
        &[
            "play",
            "goofspiel",
            "builtin:random",
            "builtin:random",
            "builtin:random",
        ],
        &["play", "skullwhist", "builtin:planner", "builtin:random"],
        &[
            "play",
            "goofspiel",
            "builtin:random",
            "builtin:random",
            "--games",
            "0",
        ],
        &["play", "goofspiel", "random", "builtin:random"],
        &["bench", "nothing"],
        &["bench", "server", "--versus", "/no/such/croupier"],
        &[
            "bench",
            "server",
            "--versus",
            env!("CARGO_BIN_EXE_croupier"),
            "--rounds",
            "0",
        ],
        &["bench", "server", "--rounds", "3"],
        &["bench", "server", "--alternations", "0"],
        &["bench", "bare-endpoint"],
        &["bench", "rules", "--listen", "127.0.0.1:1"],
        &["bench", "server", "--instances", "1", "--alternations", "2"],
        &["bench", "server", "--instances", "1,2", "--rounds", "0"],
        &["bench", "rules", "--rounds", "3"],
        &["bench", "workers", "--rounds", "51"],
        &["bench", "server", "--postgres"],
        &["bench", "web", "--postgres", "--db", "/tmp/web.db"],
        &[
            "bench",
            "web",
            "--postgres",
            "--database",
            "sqlite:///tmp/x.db",
        ],
        &["bench", "web", "--database", "postgres://u@localhost/x"],
    ];
    for args in cases {
        let o = croupier(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn every_record_written_replays_and_a_tampered_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = croupier(&[
        "play",
        "skullwhist",
        "builtin:heuristic",
        "builtin:random",
        "--games",
        "30",
        "--seed",
        "3",
        "--records",
        d,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 30);
    let mut args = vec!["replay".to_string(), "--quiet".to_string()];
    args.extend(files.iter().map(|p| p.to_string_lossy().into_owned()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = croupier(&refs);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o).matches(": ok").count(), 30);

    // Full transcript of one record.
    let one = files[0].to_str().unwrap();
    let o = croupier(&["replay", one]);
    assert!(stdout(&o).contains("is dealt") && stdout(&o).contains("outcome: scores"));

    // A changed outcome, or a changed action, no longer replays.
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let original: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut wrong_score = original.clone();
    wrong_score["outcome"]["scores"][0] = serde_json::json!(12345);
    let mut wrong_move = original.clone();
    wrong_move["steps"][5]["action"] = serde_json::json!("play X99");
    for (name, rec) in [("score", wrong_score), ("move", wrong_move)] {
        let bad = dir.path().join(format!("bad-{name}.json"));
        std::fs::write(&bad, rec.to_string()).unwrap();
        let o = croupier(&["replay", "-q", bad.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(stdout(&o).contains("DOES NOT REPLAY"), "{name}");
    }

    // Issue 52: output closed early (`croupier replay ... | head -1`) ends
    // the command quietly, without a panic. The reader closes before the
    // first write; 30 transcripts are far more than a pipe holds.
    let mut args = vec!["replay".to_string()];
    args.extend(files.iter().map(|p| p.to_string_lossy().into_owned()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked") && err.is_empty(), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}

#[test]
fn replay_refuses_files_that_are_not_records() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    for p in [junk.as_path(), Path::new("/nonexistent/record.json")] {
        let o = croupier(&["replay", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1);
    }
    // A bad file among good ones: the good ones are still checked.
    let good =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/goofspiel/gops-13-discard.json");
    let o = croupier(&[
        "replay",
        "-q",
        junk.to_str().unwrap(),
        good.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("gops-13-discard.json: ok"));
}

#[test]
fn golden_records_replay_through_the_cli() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/goofspiel/gops-13-discard.json");
    let o = croupier(&["replay", dir.to_str().unwrap()]);
    assert!(o.status.success());
    let golden = std::fs::read_to_string(dir.with_extension("txt")).unwrap();
    assert!(stdout(&o).starts_with(&golden));
}

#[test]
fn bench_server_versus_runs_both_builds_in_alternating_order() {
    let me = env!("CARGO_BIN_EXE_croupier");
    let o = croupier(&[
        "bench",
        "server",
        "--bots",
        "4",
        "--seconds",
        "0.3",
        "--versus",
        me,
        "--rounds",
        "2",
        "--alternations",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["bench"], "server-versus");
    let runs = v["runs"].as_array().unwrap();
    let order: Vec<(u64, &str)> = runs
        .iter()
        .map(|r| (r["round"].as_u64().unwrap(), r["build"].as_str().unwrap()))
        .collect();
    assert_eq!(order, [(1, "A"), (1, "B"), (2, "B"), (2, "A")]);
    for r in runs {
        assert!(r["games_per_sec"].as_f64().unwrap() > 0.0, "{r}");
        assert!(
            r["server_cpu_us_per_request"].as_f64().unwrap() > 0.0,
            "{r}"
        );
    }
    for build in ["A", "B"] {
        let m = &v["medians"][build];
        assert!(m["requests_per_sec"].as_f64().unwrap() > 0.0, "{m}");
    }
    assert!(v["b_over_a"]["games_per_sec"].as_f64().unwrap() > 0.0);
}

#[test]
fn bench_server_alternates_the_server_and_a_bare_endpoint_of_its_own() {
    let o = croupier(&[
        "bench",
        "server",
        "--bots",
        "4",
        "--seconds",
        "0.4",
        "--alternations",
        "2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let rounds = v["alternations"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{v}");
    for r in rounds {
        assert!(r["requests_per_sec"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["bare_requests_per_sec"].as_f64().unwrap() > 0.0, "{r}");
    }
    // The bots paused before each of the bare endpoint's slices.
    assert_eq!(v["rounds_the_bots_did_not_pause_in"], serde_json::json!([]));
    assert!(v["bare"]["latency"]["calls"].as_u64().unwrap() > 0, "{v}");
    assert!(v["cpu_us_per_request"]["ratio_ceiling"].is_number(), "{v}");
}

#[test]
fn bench_server_split_cores_pins_the_server_and_the_bare_endpoint_to_one_half() {
    let o = croupier(&[
        "bench",
        "server",
        "--bots",
        "4",
        "--seconds",
        "0.4",
        "--alternations",
        "1",
        "--split-cores",
        "--json",
    ]);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("at least 2 CPUs"), "{}", stderr(&o));
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let split = &v["split_cores"];
    let (server, load) = (
        split["server_cpus"].as_u64().unwrap(),
        split["load_cpus"].as_u64().unwrap(),
    );
    assert_eq!(server + load, cpus as u64, "{split}");
    // Both children run on the server's half only, as the kernel says.
    let half = &split["server_half"];
    assert_eq!(
        half.as_array().map(Vec::len),
        Some(server as usize),
        "{split}"
    );
    assert_eq!(&split["server_process_cpus"], half, "{split}");
    assert_eq!(&split["bare_process_cpus"], half, "{split}");
    assert!(v["bare"]["latency"]["calls"].as_u64().unwrap() > 0, "{v}");
    // The shared-CPU ceiling does not apply to split cores.
    assert!(v["cpu_us_per_request"]["ratio_ceiling"].is_null(), "{v}");
}

#[test]
fn bench_bare_endpoint_answers_until_its_input_ends() {
    use std::io::Write as _;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["bench", "bare-endpoint", "--listen", &listen])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let answer = (0..100).find_map(|_| {
        let sent = std::net::TcpStream::connect(&listen).and_then(|mut s| {
            s.write_all(
                b"POST /api/status/ HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
            )?;
            let mut reply = String::new();
            std::io::Read::read_to_string(&mut s, &mut reply)?;
            Ok(reply)
        });
        match sent {
            Ok(reply) => Some(reply),
            Err(_) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
                None
            }
        }
    });
    let answer = answer.expect("the bare endpoint never answered");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with(r#"{"result":"success"}"#), "{answer}");
    drop(child.stdin.take());
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(t.elapsed().as_secs() < 10, "it did not end with its input");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(child.wait().unwrap().success());
}

#[test]
fn bench_prints_one_json_line_per_game() {
    let o = croupier(&["bench", "--seconds", "0.05"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for v in &lines {
        assert_eq!(v["bench"], "rules");
        assert!(v["games_per_sec"].as_f64().unwrap() > 0.0);
    }
    let line = |game: &str| {
        lines
            .iter()
            .find(|v| v["game"] == game)
            .unwrap_or_else(|| panic!("no {game} line in {lines:?}"))
    };
    assert!(line("skullwhist").get("of_bare_loop").is_none());
    assert!(line("loveletter-4p")["actions_per_game"].as_f64().unwrap() > 10.0);
    // The engine's Goofspiel-13 beside the bare loop of the same game.
    let bare = line("goofspiel-13-bare-loop");
    assert_eq!(bare["actions_per_game"], 26.0);
    let gops = line("goofspiel-13");
    assert_eq!(gops["actions_per_game"], 26.0);
    let share = gops["of_bare_loop"].as_f64().unwrap();
    let expected =
        gops["games_per_sec"].as_f64().unwrap() / bare["games_per_sec"].as_f64().unwrap();
    assert!(
        (share - expected).abs() < 0.002,
        "{share} against {expected}"
    );
    // Measured in four rounds of turns with the bare loop, each's share given.
    let rounds = gops["of_bare_loop_by_round"].as_array().unwrap();
    assert_eq!(rounds.len(), 4, "{gops}");
    assert!(rounds.iter().all(|r| r.as_f64().unwrap() > 0.0), "{gops}");
}

#[test]
fn jujitsu_variant_with_rounds_is_played() {
    let o = croupier(&[
        "play",
        "goofspiel",
        "builtin:planner",
        "builtin:random",
        "--variant",
        "jujitsu rounds=5,6,7,8",
        "--games",
        "10",
        "--seed",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    // Points per match are at most the victory cards dealt: 15+21+28+36.
    for b in v["bots"].as_array().unwrap() {
        assert!(b["mean_score"].as_f64().unwrap() <= 100.0);
    }
}

#[test]
#[allow(clippy::needless_range_loop)] // the matrix is read as h[i][j] against h[j][i]
fn tournament_plays_duplicate_deals_and_reports_a_head_to_head_matrix() {
    let o = croupier(&[
        "tournament",
        "goofspiel",
        "--bot",
        "builtin:planner",
        "--bot",
        "builtin:random@gops",
        "--bot",
        "builtin:random",
        "--games-per-pair",
        "5",
        "--seed",
        "3",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["games"], 3 * 5 * 2, "3 pairs, 5 deals, both seatings");
    assert_eq!(v["duplicate"], true);
    assert_eq!(v["seed"], 3);
    let h = v["head_to_head"].as_array().unwrap();
    assert_eq!(h.len(), 3);
    for i in 0..3 {
        assert_eq!(v["bots"][i]["games"], 20);
        for j in 0..3 {
            if i != j {
                let (a, b) = (&h[i][j], &h[j][i]);
                assert_eq!(a["wins"], b["losses"]);
                assert_eq!(
                    a["wins"].as_u64().unwrap()
                        + a["draws"].as_u64().unwrap()
                        + a["losses"].as_u64().unwrap(),
                    10
                );
            }
        }
    }
    // Unknown bots and too few bots are usage errors.
    let o = croupier(&["tournament", "goofspiel", "--bot", "builtin:planner"]);
    assert_eq!(o.status.code(), Some(2));
    let o = croupier(&[
        "tournament",
        "goofspiel",
        "--bot",
        "builtin:planner",
        "--bot",
        "no-such-program",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not found"));
}

/// `bench web` seeds a small database, a tenth of it three tournaments'
/// games, and reads every page kind from it, on SQLite and (where
/// PostgreSQL is installed) on PostgreSQL: a page that fails on either
/// backend fails the bench. With `--no-tournaments` it seeds none.
#[test]
fn bench_web_reads_every_page_kind_on_both_backends() {
    let mut backends = vec![vec!["bench", "web", "--games", "300"]];
    if croupier_store::scratch::find_bin().is_some() {
        backends.push(vec!["bench", "web", "--games", "300", "--postgres"]);
    } else {
        eprintln!("SKIPPED on PostgreSQL: not installed here");
    }
    for args in backends {
        let o = croupier(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("seeded 300 games"), "{out}");
        // Runs of 100 games: in each, 10 of the first 30 (one game's).
        assert!(
            out.contains("of them 30 tournament games, in 3 tournaments\n"),
            "{out}"
        );
        for page in [
            "bot page",
            "versus",
            "games of a bot, last page",
            "game JSON",
            "ladder games of a bot, mid",
            "tournament games of a bot",
            "one tournament's games",
            "one tournament's games of a bot",
        ] {
            assert!(
                out.lines().any(|l| l.starts_with(page)),
                "{args:?}: no {page} row in {out}"
            );
        }
        assert!(out.contains("slowest data page p95"), "{out}");
    }
    let o = croupier(&["bench", "web", "--games", "300", "--no-tournaments"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("of them 0 tournament games, in 0 tournaments"),
        "{out}"
    );
    assert!(!out.contains("one tournament's games"), "{out}");
}

/// `bench flood` (a few slow connections) runs every phase, and its
/// figures show the throttle at work: a bot far over its rate is answered
/// `retry` for nearly every request (its burst of 1,000 and 500 a second
/// are all it gets), and password guesses from one address are checked a
/// handful of times in 5 s.
#[test]
fn bench_flood_shows_a_bot_over_its_rate_and_a_password_guesser_throttled() {
    let o = croupier(&["bench", "flood", "--connections", "20", "--addresses", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let phase = |name: &str| -> serde_json::Value {
        out.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| v["phase"] == name)
            .unwrap_or_else(|| panic!("no {name} line in {out}"))
    };
    for name in ["before", "during", "after"] {
        assert_eq!(phase(name)["normal_failed"], 0, "{out}");
    }
    let over = phase("over_rate");
    let (requests, throttled, answered) = (
        over["requests"].as_u64().unwrap(),
        over["throttled_retry"].as_u64().unwrap(),
        over["answered"].as_u64().unwrap(),
    );
    assert_eq!(requests, throttled + answered, "{over}");
    assert!(answered >= 1000, "the burst is answered: {over}");
    assert!(
        answered <= 1000 + 500 * 4,
        "at most the burst and the rate: {over}"
    );
    assert!(throttled > 0, "{over}");
    assert!(
        over["server_cpu_us_per_request"].as_f64().unwrap() > 0.0,
        "{over}"
    );
    let guesses = phase("login_guesses");
    assert!(
        guesses["guesses_checked"].as_u64().unwrap() <= 10,
        "{guesses}"
    );
    assert!(
        guesses["throttled_retry"].as_u64().unwrap() > 0,
        "{guesses}"
    );
}

#[test]
fn bench_subprocess_measures_both_kinds_of_series_with_and_without_the_sandbox() {
    if !crate::support::have("bwrap") {
        eprintln!("SKIPPED: no bubblewrap");
        return;
    }
    let o = croupier(&[
        "bench",
        "subprocess",
        "--sandbox",
        "strict",
        "--seconds",
        "0.3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let figure = |sandbox: &str, what: &str| {
        lines
            .iter()
            .find(|v| v["sandbox"] == sandbox && v["what"] == what)
            .and_then(|v| v["value"].as_f64())
    };
    for sandbox in ["off", "strict"] {
        for what in [
            "process_start_ms",
            "loveletter_4p_matches_per_sec_reexec_per_round",
            "goofspiel_matches_per_sec_start_per_match",
        ] {
            let value = figure(sandbox, what);
            assert!(
                value.is_some_and(|v| v > 0.0),
                "{sandbox} {what}: {lines:?}"
            );
        }
    }
    assert!(figure("strict", "process_start_held_ms").is_some_and(|v| v > 0.0));
    let overhead = lines
        .iter()
        .find(|v| v["what"] == "sandbox_overhead")
        .unwrap();
    for ratio in [
        "loveletter_matches_per_sec_ratio",
        "goofspiel_matches_per_sec_ratio",
    ] {
        assert!(
            overhead[ratio].as_f64().is_some_and(|r| r > 0.0),
            "{overhead}"
        );
    }
}
