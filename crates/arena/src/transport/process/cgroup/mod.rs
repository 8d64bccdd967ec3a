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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

mod group;
mod layout;
mod limits;
mod procs;

pub use group::{BotCgroup, ThreadEntry};
use layout::Layout;
pub use limits::{BadCpus, BotCpus, CgroupLimits, Unavailable, DEFAULT_ROOT, ROOT_ENV};

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
