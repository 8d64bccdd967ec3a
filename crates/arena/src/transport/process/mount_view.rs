//! The mounts bubblewrap starts from: the host's, without `/sys` and the
//! folders mounted below `/dev`.
//!
//! bubblewrap's start costs more the more mounts its namespace holds: the
//! sandbox's new mount namespace is a copy of them all, and every bind it
//! makes reads and parses the whole `/proc/self/mountinfo` (a cold start
//! makes about a dozen). No sandbox's file comes from `/sys` (here a dozen
//! of the host's 20 mounts: sysfs and a cgroup hierarchy per controller)
//! or from a folder mounted below `/dev` (`/dev/pts`, `/dev/shm`,
//! `/dev/mqueue`, `/dev/hugepages`: bubblewrap makes the sandbox's own and
//! binds only device nodes from `/dev`). So, where croupier is root, it
//! makes a mount namespace ([`view`]) that is a copy of the host's without
//! those, and the spawner thread enters it for a sandbox's start alone
//! ([`View::enter`]) and goes back. What a sandbox sees does not change
//! (docs/sandbox.md, "Fewer mounts to start from"; docs/benchmarks.md).
//!
//! Kept as they are:
//! - what is mounted on a file below `/dev` (a device node bound there, as
//!   container runtimes do): bubblewrap binds the nodes from there;
//! - what is below `/proc`: a runtime's masks over `/proc` decide whether
//!   a sandbox may mount a `/proc` of its own at all (the kernel asks that
//!   the one it sees be "fully visible"), and so must stay.
//!
//! The view is the host's as it was made: its mounts follow the host's
//! where those propagate (it is their follower, `MS_SLAVE`), and it is
//! made again at the next start after any change to the host's mount
//! table (`poll` on the host's `mountinfo`), so that a folder mounted
//! since is there. A start whose bound files lie under a mount left out,
//! or that must write to the cgroups under `/sys` (a v2 cgroup's `sh`),
//! starts from the host's mounts, as does every start where croupier is
//! not root, runs in a `chroot`, or cannot make or enter the view.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use nix::fcntl::{open, OFlag};
use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sched::{setns, unshare, CloneFlags};
use nix::sys::stat::Mode;

/// Whether a mount at `point` (a folder if `folder`) is one no sandbox's
/// file comes from.
fn left_out(point: &Path, folder: bool) -> bool {
    point.starts_with("/sys") || (folder && point.starts_with("/dev") && point != Path::new("/dev"))
}

/// A mount point as `/proc/*/mountinfo` writes it: its fifth field, with
/// space, tab, newline and backslash written as octal escapes.
pub(super) fn mount_point(line: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
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
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// The mount points of this thread's mount namespace, each with whether
/// it is a folder: asked only below `/dev` (the only place it decides),
/// without following a link or triggering an automount (a `stat` of every
/// mount point would wait on a stale network mount, or mount every
/// automount point).
fn mount_points() -> std::io::Result<Vec<(PathBuf, bool)>> {
    use nix::fcntl::{AtFlags, AT_FDCWD};
    use nix::sys::stat::{fstatat, SFlag};
    let text = std::fs::read_to_string("/proc/thread-self/mountinfo")?;
    let folder = |p: &Path| {
        let flags = AtFlags::AT_SYMLINK_NOFOLLOW | AtFlags::AT_NO_AUTOMOUNT;
        fstatat(AT_FDCWD, p, flags)
            .is_ok_and(|st| SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR)
    };
    Ok(text
        .lines()
        .filter_map(mount_point)
        .map(|p| {
            let folder = !p.starts_with("/dev") || folder(&p);
            (p, folder)
        })
        .collect())
}

/// Of `points`, those [`left_out`] that no other one left out holds: what
/// a lazy unmount each takes away with all below it.
fn tops(points: &[(PathBuf, bool)]) -> Vec<PathBuf> {
    let out: Vec<&PathBuf> = points
        .iter()
        .filter(|(p, folder)| left_out(p, *folder))
        .map(|(p, _)| p)
        .collect();
    let mut tops: Vec<PathBuf> = out
        .iter()
        .filter(|p| !out.iter().any(|q| q != *p && p.starts_with(q)))
        .map(|p| (*p).clone())
        .collect();
    tops.sort();
    tops.dedup();
    tops
}

/// A namespace made for sandboxes' starts, and the mount points left out
/// of it.
#[derive(Debug)]
pub(super) struct View {
    ns: OwnedFd,
    gone: Vec<PathBuf>,
}

/// The view of now, and what tells when the host's mounts change.
struct Slot {
    view: Option<Arc<View>>,
    /// The host's `mountinfo`, which `poll` marks when its mounts change.
    watch: Option<File>,
    /// Set when the view could not be made or entered: starts use the
    /// host's mounts from then on.
    failed: bool,
}

fn slot() -> MutexGuard<'static, Slot> {
    static SLOT: Mutex<Slot> = Mutex::new(Slot {
        view: None,
        watch: None,
        failed: false,
    });
    // Poisoned only by a panic in `view`, which leaves the slot usable.
    SLOT.lock().unwrap_or_else(|e| e.into_inner())
}

/// The view, made on first use where croupier is root and made again
/// when the host's mounts changed since; `None` where it cannot be (starts
/// then use the host's mounts).
pub(super) fn view() -> Option<Arc<View>> {
    if !super::as_user::is_root() {
        return None;
    }
    let mut slot = slot();
    if slot.failed {
        return None;
    }
    let changed = slot.watch.as_ref().is_none_or(|w| {
        // `mountinfo` is always readable; a change marks it `POLLPRI` and
        // `POLLERR` once.
        let mut fds = [PollFd::new(w.as_fd(), PollFlags::POLLPRI)];
        let marked = PollFlags::POLLPRI | PollFlags::POLLERR;
        poll(&mut fds, PollTimeout::ZERO).map_or(true, |_| {
            fds[0].revents().is_none_or(|r| r.intersects(marked))
        })
    });
    if changed || slot.view.is_none() {
        // On a thread of its own, which ends once it is made (the
        // namespace lives on through its descriptor).
        let made = std::thread::Builder::new()
            .name("croupier-mounts".into())
            .spawn(make)
            .map_err(|e| e.to_string())
            .and_then(|t| t.join().unwrap_or_else(|_| Err("it panicked".into())));
        match made {
            Ok((view, watch)) => {
                slot.view = Some(Arc::new(view));
                slot.watch = Some(watch);
            }
            Err(why) => {
                tracing::warn!("sandboxes start from the host's mounts: {why}");
                slot.failed = true;
                slot.view = None;
                return None;
            }
        }
    }
    slot.view.clone()
}

/// Gives up the view for good, saying why.
fn give_up(why: &str) {
    tracing::warn!("sandboxes start from the host's mounts: {why}");
    let mut slot = slot();
    slot.failed = true;
    slot.view = None;
}

/// Runs `probe` (a sandbox's start, saying why it failed) once more, from
/// the view, on a thread of its own: a view bubblewrap cannot start from
/// is given up, and starts use the host's mounts. For the sandbox check,
/// after the same probe passed from the host's mounts.
pub(super) fn vet(probe: impl FnOnce() -> Result<(), String> + Send) {
    let Some(view) = view() else {
        return;
    };
    let ran = std::thread::scope(|s| {
        s.spawn(|| {
            // (One that cannot be entered is given up there.)
            let entered = view.enter().ok()?;
            let ran = probe();
            drop(entered);
            Some(ran)
        })
        .join()
    });
    if let Ok(Some(Err(why))) = ran {
        give_up(&format!("bubblewrap cannot start from fewer: {why}"));
    }
}

/// Names the host's mount table (to watch it), then moves this thread to
/// a new mount namespace, a follower of the host's, and unmounts there
/// what sandboxes never use.
fn make() -> Result<(View, File), String> {
    // A croupier in a `chroot` would start sandboxes from the namespace's
    // root, outside it, and its spawner thread would come back there.
    let host: OwnedFd = File::open("/proc/thread-self/ns/mnt")
        .map_err(|e| format!("the host's mounts: {e}"))?
        .into();
    unshare(CloneFlags::CLONE_FS).map_err(|e| format!("unshare: {e}"))?;
    match at_namespace_root(&host) {
        Ok(true) => {}
        Ok(false) => return Err("croupier runs in a chroot".into()),
        Err(e) => return Err(format!("where its root is: {e}")),
    }
    let watch =
        File::open("/proc/thread-self/mountinfo").map_err(|e| format!("its mounts: {e}"))?;
    unshare(CloneFlags::CLONE_NEWNS).map_err(|e| format!("unshare: {e}"))?;
    // Nothing unmounted here reaches the host; what the host mounts later
    // reaches here where its mounts propagate.
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
    let after: Vec<PathBuf> = mount_points()
        .map_err(read)?
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let mut gone: Vec<PathBuf> = before
        .into_iter()
        .filter(|(p, folder)| left_out(p, *folder) && !after.contains(p))
        .map(|(p, _)| p)
        .collect();
    gone.sort();
    gone.dedup();
    let ns = File::open("/proc/thread-self/ns/mnt").map_err(|e| format!("its name: {e}"))?;
    Ok((
        View {
            ns: ns.into(),
            gone,
        },
        watch,
    ))
}

/// Which file is this thread's root.
fn root_id() -> std::io::Result<(u64, u64)> {
    let st = nix::sys::stat::stat("/")?;
    Ok((st.st_dev, st.st_ino))
}

/// Whether this thread's root is that of `ns`, its mount namespace: not
/// a `chroot` (which `/proc` cannot tell: a chrooted process's root reads
/// `/` there). Entering a namespace takes a thread to its root, so the
/// thread is asked, and left there (it must have a root and working
/// folder of its own).
fn at_namespace_root(ns: &OwnedFd) -> std::io::Result<bool> {
    let root = root_id()?;
    setns(ns.as_fd(), CloneFlags::CLONE_NEWNS)?;
    Ok(root_id()? == root)
}

/// Runs `f` with this thread's own mount namespace (the host's), named
/// before the thread first enters a view and closed when it ends; an
/// error if it could not be named.
///
/// A thread that shares its root and working folder with others (as every
/// thread does) cannot change its mount namespace, so this thread (the
/// spawner) gets its own copy of them, for good: they stop following the
/// process's (croupier never changes its working folder, root or umask).
fn with_home<T>(f: impl FnOnce(&OwnedFd) -> std::io::Result<T>) -> std::io::Result<T> {
    thread_local! {
        static HOME: std::cell::OnceCell<Option<OwnedFd>> = const { std::cell::OnceCell::new() };
    }
    HOME.with(|h| {
        let home = h.get_or_init(|| {
            unshare(CloneFlags::CLONE_FS).ok()?;
            Some(File::open("/proc/thread-self/ns/mnt").ok()?.into())
        });
        f(home
            .as_ref()
            .ok_or_else(|| std::io::Error::other("cannot name the host's mounts"))?)
    })
}

/// The calling thread in a view, until dropped (on that thread).
#[derive(Debug)]
pub(super) struct Entered {
    /// The thread's working folder in the host's namespace, which
    /// entering a namespace resets.
    cwd: OwnedFd,
    _here: std::marker::PhantomData<*const ()>,
}

impl View {
    /// Whether a start whose bubblewrap command is `argv` can start from
    /// the view: none of the files it binds lies under a mount left out
    /// (nor holds one).
    pub(super) fn serves(&self, argv: &[String]) -> bool {
        binds(argv).all(|src| {
            let raw = Path::new(src);
            // The system's folders are bound as they are named.
            let real = match raw.starts_with("/usr") || raw.starts_with("/etc") {
                true => raw.to_path_buf(),
                false => std::fs::canonicalize(raw).unwrap_or_else(|_| raw.to_path_buf()),
            };
            !self
                .gone
                .iter()
                .any(|g| real.starts_with(g) || raw.starts_with(g) || g.starts_with(&real))
        })
    }

    /// Moves the calling thread into the view for a start, in the folder
    /// of the same name as its working folder; the guard moves it back.
    /// Needs root's `CAP_SYS_ADMIN` and `CAP_SYS_CHROOT`: enter before a
    /// user switch ([`super::as_user`]), which keeps neither of both.
    /// On an error the thread is where it was, and the view is given up.
    pub(super) fn enter(&self) -> std::io::Result<Entered> {
        let entered = self.try_enter();
        if let Err(e) = &entered {
            give_up(&format!("cannot enter fewer: {e}"));
        }
        entered
    }

    fn try_enter(&self) -> std::io::Result<Entered> {
        with_home(|_| Ok(()))?;
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let cwd = open(".", flags, Mode::empty())?;
        // (None if it was removed since.)
        let path = std::env::current_dir().ok();
        setns(self.ns.as_fd(), CloneFlags::CLONE_NEWNS)?;
        let entered = Entered {
            cwd,
            _here: std::marker::PhantomData,
        };
        // The folder of that name in the view (reachable there, unlike the
        // host's), or else the host's itself.
        match path {
            Some(p) if nix::unistd::chdir(&p).is_ok() => {}
            _ => nix::unistd::fchdir(&entered.cwd)?,
        }
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
        let back = with_home(|home| Ok(setns(home.as_fd(), CloneFlags::CLONE_NEWNS)?))
            .and_then(|()| Ok(nix::unistd::fchdir(&self.cwd)?));
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
pub(super) mod tests;
