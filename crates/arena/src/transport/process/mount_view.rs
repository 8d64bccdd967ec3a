//! The mounts bubblewrap starts from: the host's, without those of `/sys`
//! and the ones below `/proc` and `/dev`.
//!
//! bubblewrap's start costs more the more mounts its namespace holds: the
//! sandbox's new mount namespace is a copy of them all, every bind it
//! makes reads and parses the whole `/proc/self/mountinfo` (a cold start
//! makes about a dozen), and it detaches them all again when it lets go
//! of the old root. None of a sandbox's files comes from `/sys` (here a
//! dozen of the host's 20 mounts: sysfs and a cgroup hierarchy per
//! controller) or from a mount below `/proc` or `/dev` (bubblewrap makes
//! the sandbox's own `/proc`, `devpts`, `/dev/shm` and `/dev/mqueue`, and
//! binds its device nodes from `/dev` itself). So, where croupier is root,
//! it makes once a mount namespace ([`view`]) that is the host's (a
//! follower of it: what the host mounts later appears there too) without
//! those, and the spawner thread enters it for a sandbox's start alone
//! ([`View::enter`]) and goes back. A start whose folders lie under a
//! mount left out, or that must write to the cgroups under `/sys` (a v2
//! cgroup's `sh`), starts from the host's mounts, as every start did
//! before (docs/benchmarks.md, "Fewer mounts to start from").
//!
//! What a sandbox sees does not change: bubblewrap binds the same files,
//! and nothing it is not told to bind.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sched::{setns, unshare, CloneFlags};

/// Whether a mount at `point` is one no sandbox's file comes from.
fn left_out(point: &Path) -> bool {
    point.starts_with("/sys")
        || (point.starts_with("/proc") && point != Path::new("/proc"))
        || (point.starts_with("/dev") && point != Path::new("/dev"))
}

/// A mount point as `/proc/*/mountinfo` writes it: its fifth field, with
/// space, tab, newline and backslash written as octal escapes.
fn mount_point(line: &str) -> Option<PathBuf> {
    let field = line.split(' ').nth(4)?;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)))
            .and_then(|d| u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok());
        match escaped {
            Some(b) => {
                out.push(b);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// The mount points of this thread's mount namespace.
fn mount_points() -> std::io::Result<Vec<PathBuf>> {
    let text = std::fs::read_to_string("/proc/thread-self/mountinfo")?;
    Ok(text.lines().filter_map(mount_point).collect())
}

/// Of `points`, those [`left_out`] that no other one left out holds: what
/// a lazy unmount each takes away with all below it.
fn tops(points: &[PathBuf]) -> Vec<PathBuf> {
    let out: Vec<&PathBuf> = points.iter().filter(|p| left_out(p)).collect();
    let mut tops: Vec<PathBuf> = out
        .iter()
        .filter(|p| !out.iter().any(|q| q != *p && p.starts_with(q)))
        .map(|p| (*p).clone())
        .collect();
    tops.sort();
    tops.dedup();
    tops
}

/// The namespace made for sandboxes' starts, and the mount points left out
/// of it.
#[derive(Debug)]
pub(super) struct View {
    ns: OwnedFd,
    gone: Vec<PathBuf>,
}

/// The view, made on first use where croupier is root (`None` elsewhere,
/// or where it could not be made: starts then use the host's mounts).
pub(super) fn view() -> Option<&'static View> {
    static VIEW: OnceLock<Option<View>> = OnceLock::new();
    VIEW.get_or_init(|| {
        if !super::sandbox::is_root() {
            return None;
        }
        // On a thread of its own, which ends once it is made (the
        // namespace lives on through its descriptor).
        let made = std::thread::Builder::new()
            .name("croupier-mounts".into())
            .spawn(make)
            .map_err(|e| e.to_string())
            .and_then(|t| t.join().unwrap_or_else(|_| Err("it panicked".into())));
        match made {
            Ok(view) => Some(view),
            Err(why) => {
                tracing::debug!("sandboxes start from the host's mounts: {why}");
                None
            }
        }
    })
    .as_ref()
}

/// Moves this thread to a new mount namespace, a follower of the host's,
/// and unmounts there what sandboxes never use.
fn make() -> Result<View, String> {
    unshare(CloneFlags::CLONE_NEWNS).map_err(|e| format!("unshare: {e}"))?;
    // Nothing unmounted here reaches the host; what the host mounts later
    // reaches here.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_SLAVE,
        None::<&str>,
    )
    .map_err(|e| format!("cannot make the mounts followers: {e}"))?;
    let read = |e: std::io::Error| format!("its mounts: {e}");
    let before = mount_points().map_err(read)?;
    // Mounts stacked on one point go one per pass.
    for _ in 0..8 {
        let tops = tops(&mount_points().map_err(read)?);
        if tops.is_empty() {
            break;
        }
        let mut any = false;
        for t in &tops {
            any |= umount2(t.as_path(), MntFlags::MNT_DETACH).is_ok();
        }
        if !any {
            break;
        }
    }
    let after = mount_points().map_err(read)?;
    let mut gone: Vec<PathBuf> = before
        .into_iter()
        .filter(|p| left_out(p) && !after.contains(p))
        .collect();
    gone.sort();
    gone.dedup();
    let ns = File::open("/proc/thread-self/ns/mnt").map_err(|e| format!("its name: {e}"))?;
    Ok(View {
        ns: ns.into(),
        gone,
    })
}

/// This thread's own mount namespace (the host's), named before it first
/// enters the view; `None` if it could not be.
fn home() -> Option<&'static OwnedFd> {
    thread_local! {
        static HOME: OnceLock<Option<&'static OwnedFd>> = const { OnceLock::new() };
    }
    HOME.with(|h| {
        *h.get_or_init(|| {
            // A thread that shares its root and working folder with others
            // (as every thread does) cannot change its mount namespace.
            unshare(CloneFlags::CLONE_FS).ok()?;
            let fd: OwnedFd = File::open("/proc/thread-self/ns/mnt").ok()?.into();
            Some(&*Box::leak(Box::new(fd)))
        })
    })
}

/// The calling thread in the view, until dropped (on that thread).
#[derive(Debug)]
pub(super) struct Entered {
    home: &'static OwnedFd,
    /// The thread's working folder, which entering a namespace resets.
    cwd: OwnedFd,
    _here: std::marker::PhantomData<*const ()>,
}

impl View {
    /// Whether a start whose bubblewrap command is `argv` can start from
    /// the view: none of the files it binds lies under a mount left out.
    pub(super) fn serves(&self, argv: &[String]) -> bool {
        binds(argv).all(|src| {
            let real = std::fs::canonicalize(src).unwrap_or_else(|_| PathBuf::from(src));
            !self
                .gone
                .iter()
                .any(|g| real.starts_with(g) || Path::new(src).starts_with(g))
        })
    }

    /// Moves the calling thread into the view (its working folder kept)
    /// for a start; the guard moves it back. Needs root. On an error the
    /// thread is where it was.
    pub(super) fn enter(&self) -> std::io::Result<Entered> {
        let home = home().ok_or_else(|| std::io::Error::other("cannot name the host's mounts"))?;
        let cwd: OwnedFd = File::open(".")?.into();
        setns(self.ns.as_fd(), CloneFlags::CLONE_NEWNS)?;
        let entered = Entered {
            home,
            cwd,
            _here: std::marker::PhantomData,
        };
        nix::unistd::fchdir(&entered.cwd)?;
        Ok(entered)
    }

    /// Its name, as `/proc/PID/ns/mnt` gives it.
    #[cfg(test)]
    pub(super) fn name(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", self.ns.as_raw_fd())).unwrap_or_default()
    }

    /// The mount points left out.
    #[cfg(test)]
    pub(super) fn gone(&self) -> &[PathBuf] {
        &self.gone
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let back = setns(self.home.as_fd(), CloneFlags::CLONE_NEWNS)
            .and_then(|()| nix::unistd::fchdir(&self.cwd));
        if let Err(e) = back {
            // Cannot happen to root with the host's namespace named. Were
            // it to, the thread's next starts (programs without a sandbox
            // too) would see no `/sys`: stop here.
            eprintln!("croupier: the bot spawner thread cannot go back to the host's mounts: {e}");
            std::process::abort();
        }
    }
}

/// The sources of the binds of a bubblewrap command (its options end at
/// the first `--`; the program's words follow).
fn binds(argv: &[String]) -> impl Iterator<Item = &str> {
    let options = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    argv[..options].windows(2).filter_map(|w| {
        matches!(
            w[0].as_str(),
            "--bind"
                | "--bind-try"
                | "--ro-bind"
                | "--ro-bind-try"
                | "--dev-bind"
                | "--dev-bind-try"
        )
        .then_some(w[1].as_str())
    })
}

#[cfg(test)]
mod tests;
