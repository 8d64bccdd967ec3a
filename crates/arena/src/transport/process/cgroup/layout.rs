//! Where bot cgroups go: which hierarchy holds the controllers, and the
//! folder each bot's cgroup is made in.

use std::path::{Path, PathBuf};

use super::limits::Unavailable;

/// The folders bot cgroups are made in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// cgroup v1: croupier's own cgroup in each hierarchy (`cpuacct` may be
    /// the same folder as `cpu`, when they are mounted together).
    V1 {
        cpu: PathBuf,
        cpuacct: PathBuf,
        memory: PathBuf,
    },
    /// cgroup v2: the (delegated) folder with `cpu` and `memory` enabled
    /// for its children.
    V2 { parent: PathBuf },
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Layout::V1 { cpu, memory, .. } => {
                write!(f, "{} and {} (cgroup v1)", cpu.display(), memory.display())
            }
            Layout::V2 { parent } => write!(f, "{} (cgroup v2)", parent.display()),
        }
    }
}

/// Croupier's own cgroup in the v1 hierarchy of `controller`, from
/// `/proc/self/cgroup` (`4:memory:/some/path`).
fn own_v1_path(controller: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    v1_path_in(&text, controller)
}

/// The calling thread's cgroups (`/proc/thread-self/cgroup`), read once
/// for [`thread_v1_dir`]: a thread may sit elsewhere than its process's
/// first cgroup says (a process moved into a benchmark's capped cgroup
/// after it started).
pub(crate) fn thread_cgroups() -> Option<String> {
    std::fs::read_to_string("/proc/thread-self/cgroup").ok()
}

/// The folder, in the v1 hierarchy of `controller` mounted at `mount`, of
/// the thread whose [`thread_cgroups`] are `text`, if it is there: where
/// a thread that moved into a bot's cgroup goes back to.
pub(crate) fn thread_v1_dir(text: &str, mount: &Path, controller: &str) -> Option<PathBuf> {
    let dir = mount.join(v1_path_in(text, controller)?);
    dir.is_dir().then_some(dir)
}

/// The path of `controller`'s line in a `/proc/…/cgroup` text.
fn v1_path_in(text: &str, controller: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names
            .split(',')
            .any(|n| n == controller)
            .then(|| path.trim_start_matches('/').to_string())
    })
}

/// The folder for bots in the v1 hierarchy mounted at `mount`: croupier's
/// own cgroup there when it is visible, else the hierarchy's root.
fn v1_parent(mount: &Path, controller: &str) -> PathBuf {
    match own_v1_path(controller) {
        Some(p) if !p.is_empty() && mount.join(&p).is_dir() => mount.join(p),
        _ => mount.to_path_buf(),
    }
}

impl Layout {
    /// What `root` offers: v2 when it is a cgroup v2 folder with `cpu` and
    /// `memory`, v1 when it holds the `cpu`, `cpuacct` and `memory`
    /// hierarchies; otherwise why not.
    pub(crate) fn probe(root: &Path) -> Result<Layout, Unavailable> {
        let shown = root.display();
        if root.join("cgroup.controllers").is_file() {
            return Layout::probe_v2(root);
        }
        let cpu = root.join("cpu");
        if !cpu.join("cpu.cfs_quota_us").is_file() {
            return Err(Unavailable(format!(
                "no cpu controller under {shown} (neither v1's cpu/cpu.cfs_quota_us nor a v2 \
                 cgroup.controllers)"
            )));
        }
        let cpuacct = [root.join("cpuacct"), cpu.clone()]
            .into_iter()
            .find(|d| d.join("cpuacct.usage").is_file())
            .ok_or_else(|| Unavailable(format!("no cpuacct controller under {shown}")))?;
        let memory = root.join("memory");
        if !memory.join("memory.limit_in_bytes").is_file() {
            return Err(Unavailable(format!("no memory controller under {shown}")));
        }
        let cpu_parent = v1_parent(&cpu, "cpu");
        let mut cpuacct_parent = v1_parent(&cpuacct, "cpuacct");
        // cpu and cpuacct mounted together: one folder for both.
        if same_dir(&cpu_parent, &cpuacct_parent) {
            cpuacct_parent = cpu_parent.clone();
        }
        Ok(Layout::V1 {
            cpu: cpu_parent,
            cpuacct: cpuacct_parent,
            memory: v1_parent(&memory, "memory"),
        })
    }

    /// A v2 folder: `cpu` and `memory` must be available, and are enabled
    /// for its children when they are not yet.
    fn probe_v2(root: &Path) -> Result<Layout, Unavailable> {
        let shown = root.display();
        let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap_or_default();
        let available = read("cgroup.controllers");
        let missing: Vec<&str> = ["cpu", "memory"]
            .into_iter()
            .filter(|c| !available.split_whitespace().any(|a| a == *c))
            .collect();
        if !missing.is_empty() {
            return Err(Unavailable(format!(
                "cgroup v2 at {shown} has no {} controller (bound to a v1 hierarchy, or not \
                 delegated: see docs/sandbox.md)",
                missing.join(" and ")
            )));
        }
        let enabled = read("cgroup.subtree_control");
        let wanted = ["cpu", "memory"]
            .into_iter()
            .filter(|c| !enabled.split_whitespace().any(|e| e == *c))
            .map(|c| format!("+{c}"))
            .collect::<Vec<_>>()
            .join(" ");
        if !wanted.is_empty() {
            std::fs::write(root.join("cgroup.subtree_control"), &wanted).map_err(|e| {
                Unavailable(format!(
                    "cannot enable {wanted} in {shown}/cgroup.subtree_control ({e}): a v2 \
                     subtree must be delegated to croupier, with no process of its own"
                ))
            })?;
        }
        Ok(Layout::V2 {
            parent: root.to_path_buf(),
        })
    }

    /// The folders bot cgroups are made in, without repeats.
    pub(crate) fn parents(&self) -> Vec<&Path> {
        match self {
            Layout::V1 {
                cpu,
                cpuacct,
                memory,
            } => {
                let mut v = vec![cpu.as_path(), memory.as_path()];
                if cpuacct != cpu {
                    v.push(cpuacct.as_path());
                }
                v
            }
            Layout::V2 { parent } => vec![parent.as_path()],
        }
    }

    /// Removes the bot cgroups that croupier processes no longer running
    /// left behind (killed outright), with what still runs in them.
    pub(crate) fn sweep_stale(&self) {
        for parent in self.parents() {
            let Ok(entries) = std::fs::read_dir(parent) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(owner) = stale_owner(&name) else {
                    continue;
                };
                if !Path::new(&format!("/proc/{owner}")).exists() {
                    let dir = e.path();
                    super::procs::kill_in(&dir);
                    let _ = super::procs::wait_for(
                        || std::fs::remove_dir(&dir).is_ok(),
                        std::time::Duration::from_millis(200),
                        std::time::Duration::from_millis(10),
                    );
                }
            }
        }
    }
}

/// The croupier process that made the cgroup `name`
/// (`croupier-bot-<pid>-<n>`).
fn stale_owner(name: &str) -> Option<u32> {
    let rest = name
        .strip_prefix("croupier-bot-")
        .or_else(|| name.strip_prefix("croupier-probe-"))?;
    rest.split('-').next()?.parse().ok()
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_cgroups_are_known_by_their_owner() {
        assert_eq!(stale_owner("croupier-bot-123-4"), Some(123));
        assert_eq!(stale_owner("croupier-probe-9-0"), Some(9));
        assert_eq!(stale_owner("croupier-bench-9-x"), None);
        assert_eq!(stale_owner("user.slice"), None);
    }

    #[test]
    fn a_v2_folder_without_controllers_says_which_are_missing() {
        let dir = tempfile::tempdir().expect("a temp folder");
        std::fs::write(dir.path().join("cgroup.controllers"), "cpu io\n").expect("written");
        let why = Layout::probe(dir.path()).expect_err("no memory controller");
        assert!(why.0.contains("no memory controller"), "{why}");
    }
}
