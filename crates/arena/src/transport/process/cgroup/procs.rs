//! The processes in a cgroup folder, and waiting for them to go.

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Waits until `until` for `cond`, polling every `step`.
pub(super) fn wait_for(mut cond: impl FnMut() -> bool, until: Duration, step: Duration) -> bool {
    let end = std::time::Instant::now() + until;
    loop {
        if cond() {
            return true;
        }
        if std::time::Instant::now() >= end {
            return false;
        }
        std::thread::sleep(step);
    }
}

/// The processes in the cgroup folder `dir`.
pub(super) fn pids_in(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// SIGKILL to every process in the cgroup folder `dir` (v2's
/// `cgroup.kill` where there is one).
pub(super) fn kill_in(dir: &Path) {
    let all = dir.join("cgroup.kill");
    if all.exists() && std::fs::write(&all, "1").is_ok() {
        return;
    }
    for pid in pids_in(dir) {
        if pid > 0 {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}
