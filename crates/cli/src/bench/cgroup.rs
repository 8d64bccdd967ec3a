//! A CPU quota for a process under measurement (issue 50): its own cgroup
//! with a CPU bandwidth limit, so that N capped instances can be compared
//! with one capped instance on a machine with few cores. The cgroup itself
//! is the one bot programs get (`croupier_arena::transport::process::
//! cgroup`, issue 51: v1 or a delegated v2 subtree; it needs root or
//! delegation).

use anyhow::anyhow;
use croupier_arena::transport::process::cgroup::{self, BotCgroup, BotCpus, CgroupLimits};

/// A cgroup of its own with a CPU quota, removed when dropped (once its
/// processes have ended; what is left in it is killed).
#[derive(Debug)]
pub struct CpuGroup {
    group: BotCgroup,
}

impl CpuGroup {
    /// A new cgroup for `label` limited to `cores` CPU cores (0.4: 40 ms of
    /// CPU time per 100 ms).
    pub fn new(label: &str, cores: f64) -> anyhow::Result<CpuGroup> {
        let cpus = BotCpus::new(cores)
            .map_err(|_| anyhow!("--cpu-quota must be a number of cores above 0"))?;
        let limits = CgroupLimits::new(cpus, None);
        let group = cgroup::make(&limits, label).map_err(|why| {
            anyhow!("cgroups are not available here: {why}; leave out --cpu-quota")
        })?;
        Ok(CpuGroup { group })
    }

    /// A group named after this benchmark and `label`, limited to `cores`,
    /// if there is a quota.
    pub fn capped(cores: Option<f64>, label: &str) -> anyhow::Result<Option<CpuGroup>> {
        cores
            .map(|c| CpuGroup::new(&format!("bench-{label}"), c))
            .transpose()
    }

    /// Moves process `pid` (and the threads it starts from now on) into
    /// the group.
    pub fn add(&self, pid: u32) -> anyhow::Result<()> {
        self.group
            .add(pid)
            .map_err(|e| anyhow!("cannot move process {pid} into {}: {e}", self.group))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_must_be_some_cores() {
        for bad in [0.0, -1.0, f64::NAN, 2000.0] {
            assert!(CpuGroup::new("test-never", bad).is_err(), "{bad}");
        }
    }
}
