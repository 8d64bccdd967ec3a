//! Fault tests: bot programs that misbehave (crash, hang, answer late, print
//! garbage or a huge line, close their output, flood stderr, ignore SIGTERM,
//! fork a child) play `croupier play` series. Each test checks that the series
//! finishes (exit 0, well before a hang would end it), that the summary blames
//! the misbehaving bot and nobody else, that the records hold every fault with
//! its kind and its dialect's ruling (a random card with the fault, or a
//! forfeit), that `croupier replay` verifies every record, and that no
//! process of any bot is left behind.
//!
//! The bots live in `tests/fault_bots/` (POSIX sh). Each gets a marker unique
//! to its test as its first argument, and the croupier process gets the same
//! marker in its environment, which every process it starts (and their
//! children, such as a forked `sleep`) inherits; afterwards /proc must hold no
//! live process with the marker in its command line or environment.
//!
//! The tests run one at a time: they work with 1 s deadlines, which
//! parallel runs on a small machine could make flaky. (With 0.5 s, CI saw a
//! prompt shell bot's answer take 501 ms while the other tests ran.)

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// Environment variable that carries the marker to every process of a run.
const MARKER_ENV: &str = "CROUPIER_FAULT_TEST_MARKER";
/// Seconds a bot has for each decision.
const MOVE_TIME: &str = "1";
/// Games per series (seats rotate, so the bad bot plays both seats).
const GAMES: usize = 2;
/// A run still going after this long hangs: it is killed and the test fails.
const HANG: Duration = Duration::from_secs(90);
/// Generous bound on a run's wall time; a run takes a few seconds, and a
/// bot that hangs would take until the test harness gives up.
const BOUND: Duration = Duration::from_secs(30);
/// How long processes may take to disappear after croupier exits.
const REAP: Duration = Duration::from_secs(3);
/// Peak memory of croupier while a bot writes tens of MB to stderr or a 10
/// MB line (it needs about 5 MB; keeping the flood would need far more).
const MAX_RSS_KB: u64 = 32 * 1024;

static SERIAL: Mutex<()> = Mutex::new(());

// ---------------------------------------------------------------------------
// Running croupier and looking for survivors

/// One test's marker, scratch directory and turn at running croupier.
struct Fixture {
    marker: String,
    dir: tempfile::TempDir,
    _serial: MutexGuard<'static, ()>,
}

/// What a `croupier play` run left.
#[derive(Debug)]
struct Played {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    /// Croupier's peak resident memory (VmHWM), in kB.
    peak_rss_kb: Option<u64>,
    /// Marked processes still alive `REAP` after croupier exited.
    survivors: Vec<String>,
    files: Vec<PathBuf>,
    records: Vec<Value>,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        Fixture {
            marker: format!(
                "croupier-fault-test-{name}-{}-{nanos:09}",
                std::process::id()
            ),
            dir: tempfile::tempdir().unwrap(),
            _serial: serial,
        }
    }

    /// A file in the scratch directory (for the bots' logs).
    fn file(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    /// The bot specification of a fault bot: its script, the marker, `args`.
    fn bot(&self, script: &str, args: &[&str]) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fault_bots")
            .join(script);
        let mut words = vec![path.to_string_lossy().into_owned(), self.marker.clone()];
        words.extend(args.iter().map(|a| a.to_string()));
        words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
    }

    /// Runs `croupier play GAME BOTS... --games 2 --move-time 1 --records
    /// DIR --json EXTRA...`, waits for it (killing it if it hangs), measures
    /// its peak memory, and looks for processes left behind.
    fn play(&self, game: &str, bots: &[String], extra: &[&str]) -> Played {
        let records = self.dir.path().join("records");
        let games = GAMES.to_string();
        let mut args: Vec<&str> = vec!["play", game];
        args.extend(bots.iter().map(String::as_str));
        args.extend([
            "--games",
            &games,
            "--move-time",
            MOVE_TIME,
            "--records",
            records.to_str().unwrap(),
            "--json",
            // These bots report to files of the test, outside any sandbox;
            // tests/sandbox.rs covers the sandbox.
            "--sandbox",
            "off",
        ]);
        args.extend(extra);
        let start = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(&args)
            .env(MARKER_ENV, &self.marker)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start croupier");
        let out = drain(child.stdout.take().unwrap());
        let err = drain(child.stderr.take().unwrap());
        let pid = child.id();
        let mut peak_rss_kb = None;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            // VmHWM only grows: the last reading is the peak.
            if let Some(kb) = vm_hwm_kb(pid) {
                peak_rss_kb = Some(kb);
            }
            if start.elapsed() > HANG {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let elapsed = start.elapsed();
        let survivors = self.survivors_after(REAP);
        let stdout = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
        let stderr = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
        assert!(
            status.is_some(),
            "croupier {args:?} hung ({HANG:?}); stderr: {stderr}"
        );
        let mut files: Vec<PathBuf> = std::fs::read_dir(&records)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        files.retain(|p| p.extension().is_some_and(|e| e == "json"));
        files.sort();
        let records = files
            .iter()
            .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
            .collect();
        Played {
            code: status.and_then(|s| s.code()),
            stdout,
            stderr,
            elapsed,
            peak_rss_kb,
            survivors,
            files,
            records,
        }
    }

    /// Waits up to `wait` for every marked process to go; kills (by pid) and
    /// returns those that did not.
    fn survivors_after(&self, wait: Duration) -> Vec<String> {
        let start = Instant::now();
        loop {
            let alive = marked_processes(&self.marker);
            if alive.is_empty() {
                return Vec::new();
            }
            if start.elapsed() > wait {
                kill_all(&alive);
                return alive
                    .into_iter()
                    .map(|(pid, cmd)| format!("{pid}: {cmd}"))
                    .collect();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // Whatever a failed test left running goes now.
        kill_all(&marked_processes(&self.marker));
    }
}

/// Quotes a word for the shell-like splitting of bot specifications.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The process state letter of `/proc/<pid>/stat` (`Z` for a zombie); None
/// when the process is gone.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.trim_start().chars().next()
}

/// Live (non-zombie) processes whose command line or environment holds
/// `marker`, with their command lines.
fn marked_processes(marker: &str) -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let dir = entry.path();
        let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
        if !contains(&cmdline, marker.as_bytes()) && !contains(&environ, marker.as_bytes()) {
            continue;
        }
        match process_state(pid) {
            None | Some('Z') => continue,
            Some(_) => {}
        }
        let cmd = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        found.push((pid, cmd.trim().to_string()));
    }
    found
}

/// SIGKILLs processes this test started, one pid at a time.
fn kill_all(procs: &[(u32, String)]) {
    for (pid, _) in procs {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .stderr(Stdio::null())
            .status();
    }
}

// ---------------------------------------------------------------------------
// Checks

impl Played {
    fn summary(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "summary is not JSON ({e}): {}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }

    /// Faults per bot, in the order the bots were given.
    fn faults(&self) -> Vec<u64> {
        self.summary()["bots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["faults"].as_u64().unwrap())
            .collect()
    }

    /// The name the summary and records give bot `i`.
    fn name(&self, i: usize) -> String {
        self.summary()["bots"][i]["name"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// What holds for every fault, whatever the ruling: croupier exits 0 in
    /// well under a hang, writes one complete record per game that
    /// `croupier replay` verifies, and leaves no process behind.
    fn assert_finished_cleanly(&self) {
        assert_eq!(
            self.code,
            Some(0),
            "croupier play failed\nstdout: {}\nstderr: {}",
            self.stdout,
            self.stderr
        );
        assert!(
            self.elapsed < BOUND,
            "the series took {:?}, a hang?",
            self.elapsed
        );
        assert!(
            self.survivors.is_empty(),
            "processes survived the series: {:#?}",
            self.survivors
        );
        let summary = self.summary();
        assert_eq!(summary["games"], GAMES as u64);
        assert_eq!(self.files.len(), GAMES, "one record per game");
        for r in &self.records {
            assert!(r["outcome"]["ranks"]
                .as_array()
                .is_some_and(|a| !a.is_empty()));
            assert!(r["finished"].is_string());
        }
        let mut args = vec!["replay".to_string(), "--quiet".to_string()];
        args.extend(self.files.iter().map(|p| p.to_string_lossy().into_owned()));
        let o = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(&args)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "replay: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(out.matches(": ok").count(), GAMES, "{out}");
    }

    fn assert_memory_bounded(&self) {
        let peak = self.peak_rss_kb.expect("croupier's memory was measured");
        assert!(
            peak < MAX_RSS_KB,
            "croupier peaked at {peak} kB (bound {MAX_RSS_KB} kB)"
        );
    }
}

/// The seat `name` held in a record.
fn seat_of(record: &Value, name: &str) -> usize {
    let seats = record["seats"].as_array().unwrap();
    let found: Vec<usize> = (0..seats.len())
        .filter(|&i| seats[i]["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "{name} in {seats:?}");
    found[0]
}

fn steps_of(record: &Value, seat: usize) -> Vec<&Value> {
    record["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["seat"] == seat as u64)
        .collect()
}

fn fault_kind(step: &Value) -> Option<&str> {
    step.get("fault").map(|f| f["kind"].as_str().unwrap())
}

/// A step that a random move replaced: an action with a fault of `kind`.
fn assert_random_move(step: &Value, kind: &str) {
    assert_eq!(fault_kind(step), Some(kind), "{step}");
    assert!(
        step["action"].is_string(),
        "a random card was played: {step}"
    );
    assert!(step.get("forfeit").is_none(), "{step}");
}

/// A step taken as the bot gave it.
fn assert_clean(step: &Value, action: &str) {
    assert!(step.get("fault").is_none(), "{step}");
    assert_eq!(step["action"], action, "{step}");
}

/// Every step of every seat but `seat` is fault-free.
fn assert_others_clean(record: &Value, seat: usize) {
    for s in record["steps"].as_array().unwrap() {
        if s["seat"] != seat as u64 {
            assert!(s.get("fault").is_none(), "another seat was faulted: {s}");
        }
    }
}

/// Checks a GOPS series of bot 0 (misbehaving) against bot 1: in every game
/// bot 0's first bids are `clean`, and every later one is a random card with
/// a fault of `kind`; the summary counts exactly those faults for bot 0 and
/// none for bot 1.
fn assert_gops_random_moves(p: &Played, clean: &[&str], kind: &str) {
    let bad = p.name(0);
    for r in &p.records {
        let seat = seat_of(r, &bad);
        let steps = steps_of(r, seat);
        assert_eq!(steps.len(), 13, "a bid for every card: {steps:?}");
        for (step, want) in steps.iter().zip(clean) {
            assert_clean(step, want);
        }
        for step in &steps[clean.len()..] {
            assert_random_move(step, kind);
        }
        assert_others_clean(r, seat);
        assert!(r["outcome"]["forfeited_by"].is_null());
    }
    let per_game = (13 - clean.len()) as u64;
    assert_eq!(p.faults(), vec![GAMES as u64 * per_game, 0]);
}

/// The sections of a bot's log, one per start of the bot.
fn log_sections(path: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut sections: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        if line == "start" {
            sections.push(Vec::new());
        } else if let Some(s) = sections.last_mut() {
            s.push(line.to_string());
        }
    }
    sections
}

/// The opponent of most GOPS tests: the built-in random strategy, run as a
/// program of the gops dialect, so that a second bot process shares the match.
const RANDOM_GOPS: &str = "builtin:random@gops";

// ---------------------------------------------------------------------------
// GOPS dialect (Goofspiel, default variant): random cards for faults

#[test]
fn gops_bot_that_crashes_at_start_gets_random_cards_and_the_match_finishes() {
    let f = Fixture::new("crash-start");
    let p = f.play(
        "goofspiel",
        &[
            f.bot("gops_crash_at_start.sh", &[]),
            RANDOM_GOPS.to_string(),
        ],
        &["--seed", "1"],
    );
    p.assert_finished_cleanly();
    assert_gops_random_moves(&p, &[], "crash");
}

#[test]
fn gops_bot_that_crashes_mid_game_gets_random_cards_and_the_match_finishes() {
    let f = Fixture::new("crash-mid");
    let p = f.play(
        "goofspiel",
        &[
            f.bot("gops_crash_mid_game.sh", &[]),
            RANDOM_GOPS.to_string(),
        ],
        &["--seed", "2"],
    );
    p.assert_finished_cleanly();
    assert_gops_random_moves(&p, &["1", "2", "3"], "crash");
    // The detail tells what happened. (Whether the bot's exit status and
    // last words on stderr make it in depends on which of croupier's tasks
    // sees the end first, so only the cause is checked.)
    let first = p.records[0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s.get("fault").is_some())
        .unwrap();
    let detail = first["fault"]["detail"].as_str().unwrap();
    assert!(detail.contains("closed its output"), "{detail}");
}

#[test]
fn gops_bot_that_hangs_is_timed_out_gets_random_cards_and_the_match_finishes() {
    let f = Fixture::new("hang");
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_hang.sh", &[]), RANDOM_GOPS.to_string()],
        &["--seed", "3"],
    );
    p.assert_finished_cleanly();
    assert_gops_random_moves(&p, &[], "timeout");
}

#[test]
fn gops_bot_that_answers_late_is_timed_out_and_its_stale_answer_is_never_taken() {
    let f = Fixture::new("late");
    let log = f.file("late.log");
    // The slow (but punctual) opponent keeps the match going long after the
    // late answer has been written.
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_late.sh", &[&log]), f.bot("gops_slow.sh", &[])],
        &["--seed", "4"],
    );
    p.assert_finished_cleanly();
    // Bids 1 and 2 count; the late 3, and everything after it, is replaced:
    // the runner cannot tell a late answer from the next one.
    assert_gops_random_moves(&p, &["1", "2"], "timeout");
    let sections = log_sections(&log);
    assert_eq!(sections.len(), GAMES, "{sections:?}");
    for s in &sections {
        assert!(
            s.contains(&"late 3".to_string()),
            "the late answer was written while the match went on: {s:?}"
        );
    }
}

#[test]
fn gops_bot_that_misses_a_deadline_is_stopped_and_not_fed_the_rest_of_the_match() {
    let f = Fixture::new("late-stop");
    let log = f.file("late.log");
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_late.sh", &[&log]), f.bot("gops_slow.sh", &[])],
        &["--seed", "4"],
    );
    p.assert_finished_cleanly();
    assert_gops_random_moves(&p, &["1", "2"], "timeout");
    // The bot timed out on card 3 and is stopped then: it may have been sent
    // a card or two more before it was, but not the rest of the 13.
    for s in log_sections(&log) {
        let cards = s.iter().filter(|l| l.starts_with("card ")).count();
        assert!(cards <= 5, "the stopped bot was sent {cards} cards: {s:?}");
    }
}

#[test]
fn gops_bot_that_prints_garbage_gets_random_cards_for_malformed_bids() {
    let f = Fixture::new("garbage");
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_garbage.sh", &[]), RANDOM_GOPS.to_string()],
        &["--seed", "5"],
    );
    p.assert_finished_cleanly();
    assert_gops_random_moves(&p, &[], "malformed");
}

#[test]
fn gops_bot_that_bids_a_card_it_no_longer_holds_gets_random_cards_for_illegal_bids() {
    let f = Fixture::new("illegal");
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_illegal.sh", &[]), RANDOM_GOPS.to_string()],
        &["--seed", "6"],
    );
    p.assert_finished_cleanly();
    assert_gops_random_moves(&p, &["13"], "illegal");
}

#[test]
fn gops_bot_that_prints_a_10_mb_line_is_ruled_malformed_and_gets_random_cards() {
    let f = Fixture::new("huge-line");
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_huge_line.sh", &[]), RANDOM_GOPS.to_string()],
        &["--seed", "7"],
    );
    p.assert_finished_cleanly();
    // Bid 1 counts; the 10 MB answer to card 2 is malformed, and the bot is
    // not asked again in that game.
    assert_gops_random_moves(&p, &["1"], "malformed");
    for r in &p.records {
        let steps = steps_of(r, seat_of(r, &p.name(0)));
        let detail = steps[1]["fault"]["detail"].as_str().unwrap();
        assert!(detail.contains("longer than"), "{detail}");
        assert!(detail.len() < 1000, "the huge line is not copied: {detail}");
    }
    p.assert_memory_bounded();
}

#[test]
fn gops_bot_that_closes_its_stdout_but_keeps_running_is_ruled_crashed_and_gets_random_cards() {
    let f = Fixture::new("close-stdout");
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_close_stdout.sh", &[]), RANDOM_GOPS.to_string()],
        &["--seed", "8"],
    );
    p.assert_finished_cleanly();
    assert_gops_random_moves(&p, &["1"], "crash");
}

#[test]
fn gops_bot_that_floods_stderr_while_playing_well_is_not_faulted_and_memory_stays_bounded() {
    let f = Fixture::new("stderr-flood");
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_stderr_flood.sh", &[]), RANDOM_GOPS.to_string()],
        &["--seed", "9"],
    );
    p.assert_finished_cleanly();
    // 39 MB of stderr per game, and every bid taken as given, on time.
    let bids: Vec<String> = (1..=13).map(|n| n.to_string()).collect();
    let bids: Vec<&str> = bids.iter().map(String::as_str).collect();
    assert_gops_random_moves(&p, &bids, "no fault expected");
    assert_eq!(p.faults(), vec![0, 0]);
    p.assert_memory_bounded();
}

#[test]
fn gops_bot_that_ignores_sigterm_and_outlives_the_match_is_killed_and_not_faulted() {
    let f = Fixture::new("ignore-term");
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_ignore_term.sh", &[]), RANDOM_GOPS.to_string()],
        &["--seed", "10"],
    );
    // Survivors are checked here: SIGKILL must follow the ignored SIGTERM.
    p.assert_finished_cleanly();
    assert_eq!(p.faults(), vec![0, 0]);
}

#[test]
fn gops_bot_that_forks_a_child_leaves_no_process_behind_and_is_not_faulted() {
    let f = Fixture::new("fork");
    let pids = f.file("children.pids");
    let p = f.play(
        "goofspiel",
        &[f.bot("gops_fork.sh", &[&pids]), RANDOM_GOPS.to_string()],
        &["--seed", "11"],
    );
    p.assert_finished_cleanly();
    assert_eq!(p.faults(), vec![0, 0]);
    let children: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(children.len(), GAMES, "one child forked per game");
    for pid in children {
        let state = process_state(pid);
        assert!(
            matches!(state, None | Some('Z')),
            "the forked child {pid} is alive ({state:?})"
        );
    }
}

// ---------------------------------------------------------------------------
// Love Letter manager dialect: out of the round, started anew next round

#[test]
fn loveletter_ai_that_crashes_is_out_of_the_round_and_restarted_next_round() {
    let f = Fixture::new("ll-crash");
    let log = f.file("starts.log");
    let p = f.play(
        "loveletter",
        &[
            f.bot("loveletter_crash.sh", &[&log]),
            "builtin:random@loveletter".to_string(),
            "builtin:heuristic@loveletter".to_string(),
        ],
        &["--seed", "12"],
    );
    p.assert_finished_cleanly();
    let bad = p.name(0);
    let mut crashes = 0;
    for r in &p.records {
        let seat = seat_of(r, &bad);
        // It crashes on the first turn it gets in every round: each of its
        // steps is a forfeit of the round, with the crash recorded.
        for s in steps_of(r, seat) {
            assert_eq!(s["forfeit"], true, "{s}");
            assert!(s.get("action").is_none(), "{s}");
            assert_eq!(fault_kind(s), Some("crash"), "{s}");
            crashes += 1;
        }
        assert_others_clean(r, seat);
        // Out of a round is not out of the match.
        assert!(r["outcome"]["forfeited_by"].is_null(), "{}", r["outcome"]);
    }
    let faults = p.faults();
    assert_eq!(faults, vec![crashes, 0, 0]);
    assert!(crashes >= 3, "it crashed in several rounds: {crashes}");
    // A crashed AI cannot crash again: every crash was a fresh process,
    // started for its round.
    let starts = log_sections(&log).len() as u64;
    assert!(
        starts >= crashes && starts > GAMES as u64,
        "{starts} starts for {crashes} crashes in {GAMES} games"
    );
}

// ---------------------------------------------------------------------------
// Croupier dialect: SkullWhist forfeits, Goofspiel random moves

/// A croupier/1 SkullWhist bot that answers `answers` decisions, then hangs,
/// against the built-in random bot as a process: it forfeits every game.
fn assert_skullwhist_timeout_forfeits(name: &str, answers: usize, seed: &str) {
    let f = Fixture::new(name);
    let n = answers.to_string();
    let p = f.play(
        "skullwhist",
        &[
            f.bot("croupier_hang.sh", &[&n]),
            "builtin:random@croupier".to_string(),
        ],
        &["--seed", seed],
    );
    p.assert_finished_cleanly();
    let bad = p.name(0);
    for r in &p.records {
        let seat = seat_of(r, &bad);
        assert_eq!(
            r["outcome"]["forfeited_by"], seat as u64,
            "{}",
            r["outcome"]
        );
        let last = r["steps"].as_array().unwrap().last().unwrap();
        assert_eq!(last["seat"], seat as u64, "{last}");
        assert_eq!(last["forfeit"], true, "{last}");
        assert_eq!(fault_kind(last), Some("timeout"), "{last}");
        let steps = steps_of(r, seat);
        assert_eq!(steps.len(), answers + 1, "{steps:?}");
        for s in &steps[..answers] {
            assert!(s.get("fault").is_none() && s["action"].is_string(), "{s}");
        }
        assert_others_clean(r, seat);
    }
    let summary = p.summary();
    assert_eq!(p.faults(), vec![GAMES as u64, 0]);
    assert_eq!(summary["bots"][0]["losses"], GAMES as u64);
    assert_eq!(summary["bots"][1]["wins"], GAMES as u64);
}

#[test]
fn croupier_skullwhist_bot_that_times_out_mid_game_forfeits_the_game() {
    // Its bid and two cards, then silence while it must play.
    assert_skullwhist_timeout_forfeits("sw-timeout-play", 3, "13");
}

#[test]
fn croupier_skullwhist_bot_that_times_out_on_its_bid_forfeits_the_game() {
    assert_skullwhist_timeout_forfeits("sw-timeout-bid", 0, "14");
}

#[test]
fn croupier_jujitsu_bot_that_sends_garbage_gets_random_cards_and_stays_in_the_match() {
    let f = Fixture::new("cr-garbage");
    let p = f.play(
        "goofspiel",
        &[
            f.bot("croupier_garbage.sh", &[]),
            "builtin:random@croupier".to_string(),
        ],
        &["--variant", "jujitsu", "--seed", "15"],
    );
    p.assert_finished_cleanly();
    let bad = p.name(0);
    let mut faults = 0;
    for r in &p.records {
        let seat = seat_of(r, &bad);
        let steps = steps_of(r, seat);
        assert_eq!(steps.len(), 13);
        // Decision d (from 1) got: not JSON, a card nobody holds, a good
        // answer, in turn. Every bad answer costs one random card; the bot
        // is still asked, and its good answers count.
        for (i, s) in steps.iter().enumerate() {
            match (i + 1) % 3 {
                1 => assert_random_move(s, "malformed"),
                2 => assert_random_move(s, "illegal"),
                _ => assert!(s.get("fault").is_none() && s["action"].is_string(), "{s}"),
            }
            faults += u64::from(s.get("fault").is_some());
        }
        assert_others_clean(r, seat);
    }
    assert_eq!(faults, 18);
    assert_eq!(p.faults(), vec![faults, 0]);
}

#[test]
fn croupier_jujitsu_bot_that_answers_late_loses_one_decision_and_its_stale_answer_is_skipped() {
    let f = Fixture::new("cr-late");
    let log = f.file("answers.log");
    let p = f.play(
        "goofspiel",
        &[
            f.bot("croupier_late.sh", &[&log]),
            "builtin:random@croupier".to_string(),
        ],
        &["--variant", "jujitsu", "--seed", "16"],
    );
    p.assert_finished_cleanly();
    let sections = log_sections(&log);
    assert_eq!(sections.len(), GAMES, "one process per game: {sections:?}");
    let bad = p.name(0);
    for (r, answers) in p.records.iter().zip(&sections) {
        // "<decision> <action>" as the bot wrote them.
        let answer = |d: usize| -> String {
            answers
                .iter()
                .find_map(|l| {
                    let (n, a) = l.split_once(' ')?;
                    (n == d.to_string()).then(|| a.trim_matches('"').to_string())
                })
                .unwrap_or_else(|| panic!("no answer to decision {d}: {answers:?}"))
        };
        let seat = seat_of(r, &bad);
        let steps = steps_of(r, seat);
        assert_eq!(steps.len(), 13);
        for (i, s) in steps.iter().enumerate() {
            let d = i + 1;
            if d == 3 {
                assert_random_move(s, "timeout");
            } else {
                // The croupier dialect keeps a late bot: every other answer
                // is its own, on time.
                assert_clean(s, &answer(d));
            }
        }
        // The stale answer to decision 3 reached croupier during decision 4,
        // and was skipped.
        assert_ne!(answer(3), answer(4));
        assert_others_clean(r, seat);
    }
    assert_eq!(p.faults(), vec![GAMES as u64, 0]);
}
