//! A cgroup of its own for every bot program (issue 51): a CPU quota, a
//! memory limit on its whole process tree, its CPU time for each decision,
//! and one place that holds every process it starts (children that left its
//! process group, detached or daemonised ones too), all killed before the
//! cgroup is removed.
//!
//! Croupier makes the cgroups itself, with plain file writes:
//!
//! * cgroup v1 (separate `cpu`, `cpuacct`, `memory` hierarchies, as root):
//!   one folder per bot under croupier's own cgroup in each hierarchy. The
//!   bot is started *inside* them: the spawner thread moves itself (`0` in
//!   `tasks`) into the bot's cgroups, forks, and moves back,
//!   so that not one instruction of the program runs outside ([`layout`]);
//! * cgroup v2 (a delegated subtree, or the root as root): one folder under
//!   the given root; the program is started through a `sh` line that writes
//!   its own pid into `cgroup.procs` and then `exec`s it.
//!
//! Where no cgroup can be made, [`check`] says why (once, at start) and bot
//! programs run with rlimits only, as before. [`configure`] sets what
//! [`ProcessLimits::default`](super::ProcessLimits) uses in this process.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::Duration;

mod group;
mod layout;

pub use group::{BotCgroup, ThreadEntry};
use layout::Layout;

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

/// The cgroup settings of this process's bot programs (see [`configure`]).
static CONFIGURED: RwLock<Option<CgroupLimits>> = RwLock::new(None);
/// The layout found under each root, probed once.
static LAYOUTS: Mutex<Vec<(PathBuf, Result<Layout, Unavailable>)>> = Mutex::new(Vec::new());
/// Whether the missing cgroups were reported already (once per process).
static REPORTED: AtomicBool = AtomicBool::new(false);
/// Bot cgroups made by this process, for their names.
static MADE: AtomicU64 = AtomicU64::new(0);

/// Sets the cgroup settings that bot programs of this process get by
/// default (`None`: no cgroup), as `croupier` does at start from
/// `--bot-cpus`.
pub fn configure(limits: Option<CgroupLimits>) {
    *CONFIGURED.write().unwrap_or_else(|e| e.into_inner()) = limits;
}

/// The settings given to [`configure`].
pub fn configured() -> Option<CgroupLimits> {
    CONFIGURED.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The layout under `root`, probed once (and stale cgroups of dead
/// croupier processes removed then).
fn layout(root: &Path) -> Result<Layout, Unavailable> {
    let mut cache = LAYOUTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, found)) = cache.iter().find(|(r, _)| r == root) {
        return found.clone();
    }
    let found = Layout::probe(root);
    if let Ok(l) = &found {
        l.sweep_stale();
    }
    cache.push((root.to_path_buf(), found.clone()));
    found
}

/// Checks that bot programs can get cgroups with `limits` here: the
/// controllers are there, and a trial cgroup can be made, entered and
/// removed. The error is the reason, to say once at start; the bot
/// programs then run without cgroups (no later warning).
pub fn check(limits: &CgroupLimits) -> Result<(), Unavailable> {
    let tried = layout(&limits.root).and_then(|l| {
        let g = BotCgroup::create(&l, &name("probe"), limits)
            .map_err(|e| Unavailable(format!("cannot make a cgroup under {}: {e}", l)))?;
        if let Some(entry) = g.thread_entry() {
            let entered = entry
                .enter()
                .map_err(|e| Unavailable(format!("cannot move a thread into {g}: {e}")))?;
            drop(entered);
        }
        g.remove_now();
        Ok(())
    });
    if tried.is_err() {
        REPORTED.store(true, Ordering::Relaxed);
    }
    tried
}

/// A cgroup for a new bot program with `limits`, or `None` where none can
/// be made (said once per process, unless [`check`] said it already).
pub fn for_bot(limits: &CgroupLimits) -> Option<BotCgroup> {
    let made = layout(&limits.root).and_then(|l| {
        BotCgroup::create(&l, &name("bot"), limits)
            .map_err(|e| Unavailable(format!("cannot make a cgroup under {l}: {e}")))
    });
    match made {
        Ok(g) => Some(g),
        Err(why) => {
            if !REPORTED.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "bot programs get no cgroup ({why}): no CPU quota, memory limits per \
                     process only (docs/sandbox.md)"
                );
            }
            None
        }
    }
}

/// A cgroup with `limits` for processes started some other way (the
/// benchmarks' instances), named after `what`: move them in with
/// [`BotCgroup::add`]. Dropping it kills what is left in it.
pub fn make(limits: &CgroupLimits, what: &str) -> Result<BotCgroup, Unavailable> {
    let l = layout(&limits.root)?;
    BotCgroup::create(&l, &name(what), limits)
        .map_err(|e| Unavailable(format!("cannot make a cgroup under {l}: {e}")))
}

/// A fresh cgroup name: `croupier-<what>-<pid>-<n>`.
fn name(what: &str) -> String {
    format!(
        "croupier-{what}-{}-{}",
        std::process::id(),
        MADE.fetch_add(1, Ordering::Relaxed)
    )
}

/// Waits until `until` for `cond`, polling every `step`.
fn wait_for(mut cond: impl FnMut() -> bool, until: Duration, step: Duration) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_is_some_cores() {
        assert_eq!("1".parse::<BotCpus>().map(BotCpus::cores), Ok(1.0));
        assert_eq!("0.5".parse::<BotCpus>().map(BotCpus::threads), Ok(1));
        assert_eq!("2.6".parse::<BotCpus>().map(BotCpus::threads), Ok(3));
        for bad in ["0", "-1", "NaN", "inf", "2000", "one", ""] {
            assert!(bad.parse::<BotCpus>().is_err(), "{bad}");
        }
    }

    #[test]
    fn an_empty_root_has_no_cgroups_and_says_why() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let limits = CgroupLimits {
            cpus: BotCpus::ONE,
            memory: None,
            root: dir.path().to_path_buf(),
        };
        let why = check(&limits).expect_err("no controllers in an empty folder");
        assert!(
            why.to_string().contains(&dir.path().display().to_string()),
            "{why}"
        );
        assert!(for_bot(&limits).is_none());
    }
}
