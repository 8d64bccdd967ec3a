//! A CPU quota for a process under measurement (issue 50): its own cgroup
//! with the `cpu` controller's bandwidth limit, so that N capped instances
//! can be compared with one capped instance on a machine with few cores.
//! The v1 `cpu` hierarchy (`cpu.cfs_quota_us`) and the v2 unified one
//! (`cpu.max`) are both handled; creating a cgroup needs root (or a
//! delegated subtree).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};

/// The period of the bandwidth limit, in microseconds.
const PERIOD_US: u64 = 100_000;

/// Which hierarchy holds the `cpu` controller here.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hierarchy {
    /// cgroup v1: `/sys/fs/cgroup/cpu`.
    V1(PathBuf),
    /// cgroup v2: `/sys/fs/cgroup` with `cpu` among its controllers.
    V2(PathBuf),
}

fn hierarchy() -> anyhow::Result<Hierarchy> {
    let root = Path::new("/sys/fs/cgroup");
    let v1 = root.join("cpu");
    if v1.join("cpu.cfs_quota_us").exists() {
        return Ok(Hierarchy::V1(v1));
    }
    let controllers = std::fs::read_to_string(root.join("cgroup.subtree_control"))
        .or_else(|_| std::fs::read_to_string(root.join("cgroup.controllers")))
        .unwrap_or_default();
    if controllers.split_whitespace().any(|c| c == "cpu") {
        return Ok(Hierarchy::V2(root.to_path_buf()));
    }
    Err(anyhow!(
        "cgroups are not available here: no cpu controller under /sys/fs/cgroup \
         (neither v1's cpu/cpu.cfs_quota_us nor v2's cpu.max); leave out --cpu-quota"
    ))
}

/// A cgroup of its own with a CPU quota, removed when dropped (once its
/// processes have ended).
#[derive(Debug)]
pub struct CpuGroup {
    dir: PathBuf,
}

impl CpuGroup {
    /// A new cgroup `name` limited to `cores` CPU cores (0.4: 40 ms of CPU
    /// time per 100 ms).
    pub fn new(name: &str, cores: f64) -> anyhow::Result<CpuGroup> {
        if !(cores > 0.0 && cores <= 1024.0) {
            return Err(anyhow!("--cpu-quota must be a number of cores above 0"));
        }
        let quota = ((cores * PERIOD_US as f64).round() as u64).max(1000);
        let (dir, files) = match hierarchy()? {
            Hierarchy::V1(root) => (
                root.join(name),
                vec![
                    ("cpu.cfs_period_us", PERIOD_US.to_string()),
                    ("cpu.cfs_quota_us", quota.to_string()),
                ],
            ),
            Hierarchy::V2(root) => (
                root.join(name),
                vec![("cpu.max", format!("{quota} {PERIOD_US}"))],
            ),
        };
        std::fs::create_dir(&dir).with_context(|| {
            format!(
                "cgroups are not available here: cannot create {} (it needs root, or a \
                 delegated cgroup); leave out --cpu-quota",
                dir.display()
            )
        })?;
        let group = CpuGroup { dir };
        for (file, value) in files {
            std::fs::write(group.dir.join(file), &value).with_context(|| {
                format!("cannot set {} to {value}", group.dir.join(file).display())
            })?;
        }
        Ok(group)
    }

    /// A group named after this benchmark and `label`, limited to `cores`,
    /// if there is a quota.
    pub fn capped(cores: Option<f64>, label: &str) -> anyhow::Result<Option<CpuGroup>> {
        cores
            .map(|c| CpuGroup::new(&format!("croupier-bench-{}-{label}", std::process::id()), c))
            .transpose()
    }

    /// Moves process `pid` (and the threads it starts from now on) into
    /// the group.
    pub fn add(&self, pid: u32) -> anyhow::Result<()> {
        let procs = self.dir.join("cgroup.procs");
        std::fs::write(&procs, pid.to_string())
            .with_context(|| format!("cannot move process {pid} into {}", procs.display()))
    }
}

impl Drop for CpuGroup {
    fn drop(&mut self) {
        // Its processes have ended (they are dropped first): a few tries
        // while the kernel lets go of them.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        eprintln!("warning: cannot remove the cgroup {}", self.dir.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_must_be_some_cores() {
        for bad in [0.0, -1.0, f64::NAN, 2000.0] {
            assert!(CpuGroup::new("croupier-test-never", bad).is_err(), "{bad}");
        }
    }
}
