//! Bot programs in cgroups of their own (issue 51), with real processes and
//! real cgroups: a CPU quota that busy children cannot break, CPU time per
//! decision that a hostile neighbour does not change, a memory limit on a
//! whole process tree, and nothing left behind. Where this machine cannot
//! make cgroups (not root, no controllers) each test says so and passes.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::time::Duration;

use croupier_arena::transport::process::cgroup::{self, BotCpus, CgroupLimits};
use croupier_arena::transport::process::{BotProcess, ProcessLimits, Sandbox, SandboxLimits};
use tokio::sync::{Mutex, MutexGuard};
use tokio::time::Instant;

/// The tests of this file measure CPU, and the test harness runs tests side
/// by side: each takes this first, so that one's spinners do not weigh on
/// another's measure.
static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

/// Waits for the other tests of this file to end.
async fn alone() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().await
}

/// The limits of a test bot, or `None` (and why, on stderr) where no
/// cgroup can be made here.
fn cgroup_limits(memory: Option<u64>) -> Option<CgroupLimits> {
    let limits = CgroupLimits::new(BotCpus::ONE, memory);
    match cgroup::check(&limits) {
        Ok(()) => Some(limits),
        Err(why) => {
            eprintln!("SKIPPED: no cgroup can be made here ({why}); run as root with cgroups");
            None
        }
    }
}

/// The default sandbox where bubblewrap works here, else none.
fn sandbox() -> Sandbox {
    let limits = SandboxLimits::default();
    match croupier_arena::transport::process::check_sandbox(&limits) {
        Ok(()) => Sandbox::Strict(limits),
        Err(why) => {
            eprintln!("note: no sandbox here ({why}); the bots run in their cgroups only");
            Sandbox::Off
        }
    }
}

fn sh(script: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), script.into()]
}

fn process_limits(cgroup: CgroupLimits, sandbox: Sandbox) -> ProcessLimits {
    ProcessLimits {
        grace: Duration::from_millis(200),
        sandbox,
        cgroup: Some(cgroup),
        ..ProcessLimits::default()
    }
}

/// Four children that spin forever (two of them in a new session, one
/// detached twice), then an echo loop: a hostile bot that still answers.
const HOSTILE: &str = "for i in 1 2; do (while :; do :; done) & done; \
     setsid sh -c 'while :; do :; done' & \
     (sh -c 'while :; do :; done' &) ; \
     while read l; do echo \"$l\"; done";

/// Spins a fixed amount of work per line, then answers: an honest bot.
/// It keeps to one CPU (`taskset`, where there is one), so that the
/// measure compares the same CPU beside either neighbour: the CPUs of a
/// shared virtual machine differ in speed by more than the 20% checked.
const HONEST: &str = "taskset -p -c 0 $$ >/dev/null 2>&1; while read l; do i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; \
     echo \"$l\"; done";

/// An idle bot that answers at once.
const QUIET: &str = "while read l; do echo \"$l\"; done";

/// The cores `p` used over `wall`, from its cgroup.
async fn cores_over(p: &BotProcess, wall: Duration) -> f64 {
    let cpu0 = p.cpu_time().expect("cpu time from the cgroup");
    let t0 = Instant::now();
    tokio::time::sleep(wall).await;
    let cpu = p.cpu_time().expect("cpu time from the cgroup") - cpu0;
    cpu.as_secs_f64() / t0.elapsed().as_secs_f64()
}

#[tokio::test]
async fn busy_children_stay_within_the_cpu_quota() {
    let _alone = alone().await;
    let Some(limits) = cgroup_limits(Some(512 << 20)) else {
        return;
    };
    let mut p = BotProcess::spawn(&sh(HOSTILE), &process_limits(limits, sandbox())).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    p.send(&["hi".into()], deadline).await.unwrap();
    assert_eq!(p.recv(deadline).await.unwrap(), "hi");
    let group = p.cgroup().expect("the bot has a cgroup").to_string();
    // Every spinner is in the cgroup, the detached ones too.
    assert!(p.cgroup().unwrap().processes().len() >= 5, "{group}");
    let cores = cores_over(&p, Duration::from_secs(2)).await;
    eprintln!("a bot with four busy children used {cores:.2} cores under a one-core quota");
    assert!(cores <= 1.25, "{cores:.2} cores under a one-core quota");
    assert!(cores >= 0.3, "the spinners did not spin ({cores:.2} cores)");
    p.terminate().await;
    assert!(
        !std::path::Path::new(&group).exists(),
        "{group} is removed once the bot ends"
    );
}

/// The CPU and wall seconds of each of `n` decisions of `honest` while
/// `neighbour` runs beside it (started here, and ended after).
async fn decisions_beside(
    honest: &mut BotProcess,
    neighbour: &str,
    l: &ProcessLimits,
    n: u32,
) -> Vec<(f64, f64)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut other = BotProcess::spawn(&sh(neighbour), l).unwrap();
    other.send(&["go".into()], deadline).await.unwrap();
    other.recv(deadline).await.unwrap();
    let mut each = Vec::new();
    for i in 0..n {
        let c0 = honest.cpu_time().unwrap();
        let t0 = Instant::now();
        honest.send(&[i.to_string()], deadline).await.unwrap();
        assert_eq!(honest.recv(deadline).await.unwrap(), i.to_string());
        let wall = t0.elapsed().as_secs_f64();
        each.push(((honest.cpu_time().unwrap() - c0).as_secs_f64(), wall));
    }
    other.terminate().await;
    each
}

/// The median of `v`.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Of up to `2 × MEASURES_IN_RANGE − 1` measures of the honest bot's CPU
/// per decision, how many must be within 20% of its CPU beside a quiet bot:
/// a majority.
const MEASURES_IN_RANGE: usize = 3;

#[tokio::test]
async fn an_honest_bot_thinks_as_much_beside_a_hostile_one() {
    let _alone = alone().await;
    let Some(limits) = cgroup_limits(None) else {
        return;
    };
    let l = process_limits(limits.clone(), Sandbox::Off);
    let mut honest = BotProcess::spawn(&sh(HONEST), &l).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    honest.send(&["warm".into()], deadline).await.unwrap();
    honest.recv(deadline).await.unwrap();
    // A shared virtual machine's CPUs have slow spells that can fall on
    // one neighbour's turns more than the other's (CI saw 1.30 on 3 Dec,
    // and 1.18, 1.51, 0.77 on 7 Dec, where one quiet baseline took 43.5 ms
    // against 27–28 in the others): the measure is taken up to five times,
    // and three of them must be in range. A neighbour that truly weighs on
    // the honest bot fails most of them.
    let in_range = |r: &f64| (0.8..=1.2).contains(r);
    let mut ratios = Vec::new();
    while ratios.iter().filter(|r| in_range(r)).count() < MEASURES_IN_RANGE
        && ratios.iter().filter(|r| !in_range(r)).count() < MEASURES_IN_RANGE
    {
        ratios.push(hostile_over_quiet(&mut honest, &l).await);
    }
    honest.terminate().await;
    assert!(
        ratios.iter().filter(|r| in_range(r)).count() >= MEASURES_IN_RANGE,
        "CPU per decision beside a hostile bot is {ratios:.2?} times that beside a quiet one"
    );
}

/// The honest bot's CPU per decision beside a hostile bot over that
/// beside a quiet one: neighbours in turns, so that the machine's own
/// drift (a shared host's load, its clock speed) falls on both alike;
/// medians, so that one slow decision does not decide.
async fn hostile_over_quiet(honest: &mut BotProcess, l: &ProcessLimits) -> f64 {
    let (mut quiet, mut hostile) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        quiet.extend(decisions_beside(honest, QUIET, l, 5).await);
        hostile.extend(decisions_beside(honest, HOSTILE, l, 5).await);
    }
    let cpu = |v: &[(f64, f64)]| median(v.iter().map(|d| d.0).collect());
    let wall = |v: &[(f64, f64)]| median(v.iter().map(|d| d.1).collect());
    let (quiet_cpu, hostile_cpu) = (cpu(&quiet), cpu(&hostile));
    eprintln!(
        "honest bot per decision (medians of {} each): beside a quiet bot {:.1} ms CPU / \
         {:.1} ms wall, beside a hostile one {:.1} ms CPU / {:.1} ms wall",
        quiet.len(),
        quiet_cpu * 1e3,
        wall(&quiet) * 1e3,
        hostile_cpu * 1e3,
        wall(&hostile) * 1e3
    );
    assert!(quiet_cpu > 0.0, "the honest bot's CPU is measured");
    hostile_cpu / quiet_cpu
}

#[tokio::test]
async fn the_memory_limit_holds_for_a_tree_of_processes() {
    let _alone = alone().await;
    let limit: u64 = 96 << 20;
    let Some(limits) = cgroup_limits(Some(limit)) else {
        return;
    };
    // Three processes of 48 MiB each: each below the limit, together above.
    let hog =
        "import sys, time\nb = bytearray(48 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\n\
               print('held', flush=True)\ntime.sleep(30)";
    let script = format!(
        "for i in 1 2 3; do python3 -c \"{hog}\" & done; sleep 3; echo done; \
         while read l; do echo \"$l\"; done"
    );
    let l = process_limits(limits, Sandbox::Off);
    let mut p = BotProcess::spawn(&sh(&script), &l).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut held = 0;
    loop {
        match p.recv(deadline).await.unwrap().as_str() {
            "held" => held += 1,
            "done" => break,
            other => panic!("unexpected line {other}"),
        }
    }
    let g = p.cgroup().expect("a cgroup");
    let peak = g.memory_peak().expect("the peak memory");
    let kills = g.oom_kills().expect("the OOM kills");
    let hogs = g
        .processes()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("bytearray"))
        })
        .count();
    eprintln!("a tree of 3 × 48 MiB under a 96 MiB limit: {held} held (the first ones may be killed after), {hogs} left, peak {peak} bytes, {kills} killed for memory");
    assert!(hogs < 3, "all three processes hold their memory together");
    assert!(peak <= limit, "peak {peak} above the limit {limit}");
    assert!(kills > 0, "no process was killed for memory");
    p.terminate().await;
}

#[tokio::test]
async fn a_detached_child_goes_with_its_cgroup() {
    let _alone = alone().await;
    let Some(limits) = cgroup_limits(None) else {
        return;
    };
    let l = process_limits(limits, Sandbox::Off);
    let script = "setsid sh -c 'sleep 60' & (setsid sleep 61 &); sleep 0.2; echo up; sleep 60";
    let mut p = BotProcess::spawn(&sh(script), &l).unwrap();
    assert_eq!(
        p.recv(Instant::now() + Duration::from_secs(5))
            .await
            .unwrap(),
        "up"
    );
    let g = p.cgroup().expect("a cgroup");
    let pids = g.processes();
    let dir = g.to_string();
    assert!(pids.len() >= 3, "{pids:?}");
    p.terminate().await;
    for pid in pids {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let running = state
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next())
            .is_some_and(|s| s != "Z");
        assert!(!running, "process {pid} outlived its bot");
    }
    assert!(!std::path::Path::new(&dir).exists(), "{dir} is removed");
}
