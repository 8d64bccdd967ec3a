//! No bot outlives its manager (issue 18, item 5).
//!
//! `croupier play` starts four program bots that each detach a daemon with
//! `setsid` and never answer. Once all four bots and their daemons run, the
//! manager is stopped by SIGINT, SIGTERM or SIGKILL, and every process whose
//! command line holds the test's marker must be gone within a few seconds.
//! Stopped by a signal it handles, croupier exits nonzero with one line
//! saying it was interrupted. Killed with SIGKILL, it can do nothing itself:
//! the bots die through the kernel (a parent-death signal), while their
//! `setsid` daemons are only contained by the sandbox's PID namespace.
//!
//! Stopped by SIGINT, croupier asks every bot program to stop with SIGTERM
//! first, in a sandbox too: bots that trap it show that they got it.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use crate::support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use support::{marked, marker};

/// The bots of one run.
const BOTS: usize = 4;
/// Time the bots and their daemons have to start.
const START: Duration = Duration::from_secs(30);
/// Time everything has to disappear after the signal.
const GONE: Duration = Duration::from_secs(5);

/// One run at a time: each watches the whole process table.
static SERIAL: Mutex<()> = Mutex::new(());

/// A started `croupier play` and the marker of its bots.
struct Run {
    child: Child,
    marker: String,
}

/// What [`Run::stop`] saw.
struct Stopped {
    /// croupier's exit code (none: killed by a signal) and stderr.
    status: Option<i32>,
    stderr: String,
    /// Marked processes still there a few seconds after croupier's exit.
    left: Vec<(i32, String)>,
    /// Marked processes running when croupier was sent its signal, and
    /// those seen while it was stopping, with their parents.
    at_signal: Vec<(i32, String, i32)>,
    seen: Vec<(i32, String, i32)>,
    /// The folders of held sandboxes croupier made and left.
    folders: Vec<String>,
}

/// What one run plays: `bots` copies of `script` at `game`.
struct Table {
    game: &'static str,
    bots: usize,
    script: &'static str,
    /// Each bot starts a daemon.
    daemons: bool,
}

/// Four daemonising bots at Love Letter.
const DAEMONS: Table = Table {
    game: "loveletter",
    bots: BOTS,
    script: "daemon_bot.sh",
    daemons: true,
};

impl Run {
    /// Starts four daemonising bots (with `extra` options) and waits until
    /// every bot and every daemon runs.
    fn start(name: &str, extra: &[&str]) -> Run {
        Run::start_at(&DAEMONS, name, extra)
    }

    /// Starts `table`'s bots (with `extra` options) and waits until every
    /// bot (and daemon) runs.
    fn start_at(table: &Table, name: &str, extra: &[&str]) -> Run {
        let marker = marker("lifetime", name);
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/lifetime_bots")
            .join(table.script);
        let bot = format!("{} {marker}", script.display());
        let mut args = vec!["play", table.game];
        for _ in 0..table.bots {
            args.push(&bot);
        }
        // A fixed deal: with a random one, the first player is sometimes
        // dealt the Minister with cards worth 12 or more, is out before
        // anyone answers, and the Classic dialect stops its program (CI saw
        // 3 of 4 bots for 30 s). Under seed 1 all four stay in.
        args.extend(["--move-time", "120", "--seed", "1"]);
        args.extend(extra);
        let child = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(&args)
            // Nobody reads its output before it exits: a log could fill
            // the pipe.
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start croupier");
        let mut run = Run { child, marker };
        let start = Instant::now();
        let daemons_wanted = if table.daemons { table.bots } else { 0 };
        loop {
            let procs = run.others();
            let daemons = procs.iter().filter(|(_, c)| c.contains("-daemon")).count();
            let procs = with_parents(procs);
            let bots = programs(&procs, table.script).len();
            if bots >= table.bots && daemons >= daemons_wanted {
                break;
            }
            if start.elapsed() > START || run.child.try_wait().unwrap().is_some() {
                // SIGTERM first: croupier then says how many bots it had.
                let _ = kill(Pid::from_raw(run.child.id() as i32), Signal::SIGTERM);
                std::thread::sleep(Duration::from_secs(3));
                let _ = run.child.kill();
                let out = run.child.wait_with_output().unwrap();
                panic!(
                    "the bots did not start after {:?}: {procs:?}\nexit: {}\nstdout: {}\nstderr: {}",
                    start.elapsed(),
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        run
    }

    /// Marked processes other than croupier itself (its arguments hold the
    /// marker too).
    fn others(&self) -> Vec<(i32, String)> {
        let me = self.child.id() as i32;
        marked(&self.marker)
            .into_iter()
            .filter(|(pid, _)| *pid != me)
            .collect()
    }

    /// Sends `sig` to croupier and waits for it, watching the marked
    /// processes meanwhile and after.
    fn stop(mut self, sig: Signal) -> Stopped {
        let at_signal = with_parents(self.others());
        let mut seen: Vec<(i32, String, i32)> = Vec::new();
        kill(Pid::from_raw(self.child.id() as i32), sig).unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < until, "croupier did not stop on {sig}");
            // A process that `exec`s is seen again with its new command.
            for p in with_parents(self.others()) {
                if !seen.iter().any(|(pid, c, _)| *pid == p.0 && *c == p.1) {
                    seen.push(p);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let marker = self.marker.clone();
        let made_by = format!("croupier-held-{}-", self.child.id());
        let out = self.child.wait_with_output().unwrap();
        let folders = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&made_by))
            .collect();
        let start = Instant::now();
        let mut left = marked(&marker);
        while !left.is_empty() && start.elapsed() < GONE {
            std::thread::sleep(Duration::from_millis(50));
            left = marked(&marker);
        }
        // Clean up after a failure, so that other runs are not disturbed.
        for (pid, _) in &left {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
        Stopped {
            status: out.status.code(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            left,
            at_signal,
            seen,
            folders,
        }
    }
}

fn stopped_by_a_handled_signal(sig: Signal, code: i32, name: &str, extra: &[&str]) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = Run::start(name, extra);
    let Stopped {
        status,
        stderr,
        left,
        folders,
        ..
    } = run.stop(sig);
    assert!(left.is_empty(), "left running after {sig}: {left:?}");
    assert!(folders.is_empty(), "held folders left: {folders:?}");
    assert_eq!(status, Some(code), "stderr: {stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("interrupted"))
        .collect();
    assert_eq!(lines.len(), 1, "stderr: {stderr}");
    assert!(
        lines[0].contains(&sig.to_string()) && lines[0].contains(&format!("{BOTS} bot")),
        "{stderr}"
    );
}

// Without the sandbox the daemons are only reached through the subreaper.
const OFF: &[&str] = &["--sandbox", "off"];
const STRICT: &[&str] = &["--sandbox", "strict"];

#[test]
fn sigint_stops_every_bot_and_its_daemon() {
    stopped_by_a_handled_signal(Signal::SIGINT, 130, "int", OFF);
}

#[test]
fn sigterm_stops_every_bot_and_its_daemon() {
    stopped_by_a_handled_signal(Signal::SIGTERM, 143, "term", OFF);
}

#[test]
fn sigkill_of_the_manager_kills_every_bot() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = Run::start("kill", OFF);
    let bots: Vec<i32> = run
        .others()
        .into_iter()
        .filter(|(_, c)| !c.contains("-daemon"))
        .map(|(pid, _)| pid)
        .collect();
    let Stopped { status, left, .. } = run.stop(Signal::SIGKILL);
    assert_eq!(status, None);
    let bots_left: Vec<_> = left.iter().filter(|(pid, _)| bots.contains(pid)).collect();
    assert!(
        bots_left.is_empty(),
        "bots left after SIGKILL: {bots_left:?}"
    );
}

/// Each process with its parent (0 once it has gone).
fn with_parents(procs: Vec<(i32, String)>) -> Vec<(i32, String, i32)> {
    procs
        .into_iter()
        .map(|(pid, c)| {
            let parent = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')?
                        .1
                        .split_whitespace()
                        .nth(1)?
                        .parse()
                        .ok()
                })
                .unwrap_or(0);
            (pid, c, parent)
        })
        .collect()
}

/// The bot programs among `procs`: the shell running `script` (not the
/// `setpriv`, bubblewrap or `prlimit` before it, which hold its name too),
/// and not a copy of it in a child it forked and has not `exec`'d yet.
fn programs(procs: &[(i32, String, i32)], script: &str) -> Vec<(i32, String)> {
    let taken: Vec<&(i32, String, i32)> = procs
        .iter()
        .filter(|(_, c, _)| c.starts_with("/bin/sh ") && c.contains(script))
        .collect();
    taken
        .iter()
        .filter(|(_, _, parent)| !taken.iter().any(|(pid, _, _)| pid == parent))
        .map(|(pid, c, _)| (*pid, c.clone()))
        .collect()
}

/// Bots that trap SIGTERM: each one that gets it becomes a "-term" process
/// for 0.3 s before it exits (within the 0.5 s grace period).
fn trapping(game: &'static str, bots: usize) -> Table {
    Table {
        game,
        bots,
        script: "term_bot.sh",
        daemons: false,
    }
}

/// Stops `table`'s run with SIGINT and checks that every bot program
/// running then got its SIGTERM (its trap ran) and that nothing was left.
/// (A bot may get a second SIGTERM, from its match's own end, and a Love
/// Letter round may start anew during the grace period: neither counts.)
fn sigint_reaches_every_program(table: &Table, name: &str, extra: &[&str]) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = Run::start_at(table, name, extra);
    let marker = run.marker.clone();
    let Stopped {
        status,
        stderr,
        left,
        at_signal,
        seen,
        folders,
    } = run.stop(Signal::SIGINT);
    assert!(left.is_empty(), "left running: {left:?}");
    // A held sandbox's folder goes too (the process exits without
    // dropping its matches).
    assert!(folders.is_empty(), "held folders left: {folders:?}");
    assert_eq!(status, Some(130), "stderr: {stderr}");
    let bots = programs(&at_signal, table.script);
    assert!(
        bots.len() >= table.bots,
        "bots at the signal: {bots:?}\nall marked then: {at_signal:?}"
    );
    // Its trap `exec`s: the same pid with the trap's command line.
    let trap = format!("{marker}-term");
    let asked: Vec<i32> = seen
        .iter()
        .filter(|(_, c, _)| c.contains(&trap))
        .map(|&(pid, _, _)| pid)
        .collect();
    let missed: Vec<_> = bots
        .iter()
        .filter(|(pid, _)| !asked.contains(pid))
        .collect();
    assert!(
        missed.is_empty(),
        "bots without a SIGTERM: {missed:?}\nall seen: {seen:?}\nstderr: {stderr}"
    );
}

#[test]
fn sigint_gives_unsandboxed_programs_their_sigterm() {
    sigint_reaches_every_program(&trapping("goofspiel", 2), "term-off", OFF);
}

// A program started for its match runs in a sandbox of its own.
#[test]
fn sigint_gives_programs_in_sandboxes_of_their_own_their_sigterm() {
    sigint_reaches_every_program(&trapping("goofspiel", 2), "term-own", STRICT);
}

// Love Letter's classic AIs start anew each round, in a sandbox held for
// the match.
#[test]
fn sigint_gives_programs_in_held_sandboxes_their_sigterm() {
    sigint_reaches_every_program(&trapping("loveletter", BOTS), "term-held", STRICT);
}
