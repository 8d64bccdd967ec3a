//! What a bot program may do: its line and log sizes, its grace period,
//! its sandbox and its cgroup.

use std::time::Duration;

use super::cgroup;
use super::sandbox::Sandbox;

/// Limits for a bot process.
#[derive(Clone, Debug)]
pub struct ProcessLimits {
    /// Longest line a bot may write (bytes, newline excluded).
    pub max_line: usize,
    /// Bytes of stderr kept (the most recent ones).
    pub stderr_keep: usize,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// How the program is confined.
    pub sandbox: Sandbox,
    /// Its cgroup's limits (`None`: no cgroup). By default what
    /// [`cgroup::configure`] set for this process.
    pub cgroup: Option<cgroup::CgroupLimits>,
    /// Whether a sandboxed program's first start may take a sandbox set up
    /// ahead of it ([`super::spare`]), and leave another set up for the
    /// next. For a process that starts programs again and again (a
    /// server); off by default, since a spare left unused is a sandbox's
    /// setup for nothing.
    pub spare_sandboxes: bool,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        ProcessLimits {
            max_line: 64 * 1024,
            stderr_keep: 64 * 1024,
            grace: Duration::from_millis(500),
            sandbox: Sandbox::Off,
            cgroup: cgroup::configured(),
            spare_sandboxes: false,
        }
    }
}
