//! What a bot program's cgroup limits, as given (`--bot-cpus`, the
//! ladder's `bot_cpus`), and why none can be made.

use std::path::PathBuf;
use std::str::FromStr;

/// The environment variable that names the cgroup filesystem (default
/// `/sys/fs/cgroup`): a delegated v2 subtree, or an empty folder to see
/// the fallback (tests, organisers).
pub const ROOT_ENV: &str = "CROUPIER_CGROUP_ROOT";

/// The default cgroup filesystem.
pub const DEFAULT_ROOT: &str = "/sys/fs/cgroup";

/// A CPU quota in cores, as given on the command line (`--bot-cpus 1.5`):
/// a number above 0 and at most 1024.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BotCpus(f64);

/// Why a `--bot-cpus` value is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a number of CPU cores (above 0, at most 1024, such as 1 or 0.5)")]
pub struct BadCpus(String);

impl BotCpus {
    /// One core: the default quota of a bot program.
    pub const ONE: BotCpus = BotCpus(1.0);

    /// `cores`, if it is a quota (above 0, at most 1024).
    pub fn new(cores: f64) -> Result<BotCpus, BadCpus> {
        if cores.is_finite() && cores > 0.0 && cores <= 1024.0 {
            Ok(BotCpus(cores))
        } else {
            Err(BadCpus(cores.to_string()))
        }
    }

    /// The quota in cores.
    pub fn cores(self) -> f64 {
        self.0
    }

    /// The threads a search may use within this quota: the cores rounded,
    /// at least one.
    pub fn threads(self) -> u32 {
        (self.0.round() as u32).max(1)
    }
}

impl FromStr for BotCpus {
    type Err = BadCpus;
    fn from_str(s: &str) -> Result<Self, BadCpus> {
        let cores: f64 = s.trim().parse().map_err(|_| BadCpus(s.to_string()))?;
        BotCpus::new(cores).map_err(|_| BadCpus(s.to_string()))
    }
}

impl std::fmt::Display for BotCpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Default for BotCpus {
    fn default() -> Self {
        BotCpus::ONE
    }
}

/// What a bot program's cgroup limits.
#[derive(Clone, Debug, PartialEq)]
pub struct CgroupLimits {
    /// Its CPU quota.
    pub cpus: BotCpus,
    /// The memory of its whole process tree, bytes (`None`: no limit).
    pub memory: Option<u64>,
    /// The cgroup filesystem, or a delegated v2 subtree.
    pub root: PathBuf,
}

impl CgroupLimits {
    /// `cpus` and `memory` under the root named by [`ROOT_ENV`], or
    /// [`DEFAULT_ROOT`].
    pub fn new(cpus: BotCpus, memory: Option<u64>) -> CgroupLimits {
        let root = std::env::var_os(ROOT_ENV)
            .filter(|r| !r.is_empty())
            .map_or_else(|| PathBuf::from(DEFAULT_ROOT), PathBuf::from);
        CgroupLimits { cpus, memory, root }
    }
}

/// Why bot programs get no cgroup here, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub(crate) String);
