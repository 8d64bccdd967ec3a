//! A croupier moved into a capped cgroup after its bots' cgroups were
//! probed (as `bench server --cpu-quota` moves each instance): the thread
//! that starts a bot inside the bot's cgroups goes back to the cgroup it
//! came from, the capped one, not to croupier's first cgroup, so that the
//! process never leaves its cap. A test binary of its own: it moves the
//! whole process. Needs root and the v1 `cpu` controller; elsewhere it
//! says so and passes.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::path::{Path, PathBuf};
use std::time::Duration;

use croupier_arena::transport::process::cgroup::{self, BotCpus, CgroupLimits};
use croupier_arena::transport::process::{BotProcess, ProcessLimits, Sandbox};
use tokio::time::Instant;

/// The `cpu` path of a `/proc/…/cgroup` text.
fn cpu_path(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names
            .split(',')
            .any(|n| n == "cpu")
            .then(|| path.trim_start_matches('/').to_string())
    })
}

/// The `cpu` cgroup folders of every thread of this process.
fn threads_cpu_dirs(mount: &Path) -> Vec<PathBuf> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("cgroup")).ok())
        .filter_map(|text| cpu_path(&text))
        .map(|p| mount.join(p))
        .collect()
}

/// Moves this whole process into the cgroup folder `dir`.
fn move_process(dir: &Path) {
    std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string()).unwrap();
}

#[tokio::test]
async fn the_spawner_goes_back_to_the_capped_cgroup_it_came_from() {
    let limits = CgroupLimits::new(BotCpus::ONE, None);
    let mount = limits.root.join("cpu");
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| cpu_path(&t));
    let (Ok(()), Some(own)) = (cgroup::check(&limits), own) else {
        eprintln!("SKIPPED: no v1 cgroup can be made here; run as root with the cpu controller");
        return;
    };
    if !mount.join("cpu.cfs_quota_us").exists() {
        eprintln!("SKIPPED: no v1 cpu controller at {}", mount.display());
        return;
    }
    // The bots' cgroups are probed above, before the move (their parent
    // stays croupier's first cgroup); then the process is capped.
    let home = mount.join(&own);
    let capped = home.join(format!("croupier-captest-{}", std::process::id()));
    std::fs::create_dir(&capped).unwrap();
    std::fs::write(capped.join("cpu.cfs_quota_us"), "50000").unwrap();
    move_process(&capped);

    let l = ProcessLimits {
        grace: Duration::from_millis(200),
        sandbox: Sandbox::Off,
        cgroup: Some(limits),
        ..ProcessLimits::default()
    };
    let mut bot = BotProcess::spawn(
        &["/bin/sh".into(), "-c".into(), "echo up; sleep 60".into()],
        &l,
    )
    .unwrap();
    let up = bot.recv(Instant::now() + Duration::from_secs(10)).await;
    let in_cgroup = bot.cgroup().is_some();
    let dirs = threads_cpu_dirs(&mount);
    bot.terminate().await;
    // Out of the capped cgroup again, and it removed (its bot's cgroup is
    // elsewhere), before any assertion can fail.
    move_process(&home);
    let removed = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        std::fs::remove_dir(&capped).is_ok()
    });

    assert_eq!(up.unwrap(), "up");
    assert!(in_cgroup, "the bot got no cgroup");
    assert!(!dirs.is_empty(), "no thread's cgroup could be read");
    let escaped: Vec<_> = dirs.iter().filter(|d| **d != capped).collect();
    assert!(
        escaped.is_empty(),
        "threads left the capped cgroup {} for {escaped:?}",
        capped.display()
    );
    assert!(removed, "{} could not be removed", capped.display());
}
