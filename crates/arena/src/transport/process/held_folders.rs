//! The folders of held sandboxes' FIFOs ([`super::held`]), in the
//! temporary folder, so that none outlives the process that made it:
//!
//! * each is removed with its sandbox (dropped);
//! * [`remove_all`] removes those still there when the bots are stopped
//!   (SIGINT or SIGTERM to `croupier play`, `serve` or `worker`), since the
//!   process then exits without dropping its matches; no folder is made
//!   after it (a match starting while the process stops would leave its
//!   folder behind);
//! * a process killed outright (SIGKILL) cannot remove its own, so each is
//!   locked (`flock`) by the process that made it for as long as it lives
//!   (the kernel lets go of the lock when the process ends, however it
//!   ends), and the first held sandbox of a later process removes those
//!   that nobody holds. Their names say which process made them
//!   (`croupier-held-<pid>-…`), for people; a pid says nothing of a process
//!   in another PID namespace, or of one restarted with the same pid.

use std::collections::BTreeSet;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::sandbox::{is_root, NOBODY_ID};

/// What every such folder's name starts with.
const PREFIX: &str = "croupier-held-";

/// How long a folder must have been left unchanged (made, or a round's
/// FIFOs made or removed) to be swept: one is locked at once after it is
/// made.
const FRESH: std::time::Duration = std::time::Duration::from_secs(60);

/// The folders a process made and has not removed yet.
#[derive(Debug, Default)]
struct Folders {
    made: BTreeSet<PathBuf>,
    /// All removed for the process's exit ([`remove_all`]): no more are
    /// made.
    closed: bool,
}

static LIVE: Mutex<Folders> = Mutex::new(Folders {
    made: BTreeSet::new(),
    closed: false,
});

fn lock_folders(folders: &Mutex<Folders>) -> std::sync::MutexGuard<'_, Folders> {
    folders.lock().unwrap_or_else(|e| e.into_inner())
}

fn live() -> std::sync::MutexGuard<'static, Folders> {
    lock_folders(&LIVE)
}

/// A held sandbox's folder, locked while it lives: removed when dropped.
#[derive(Debug)]
pub(super) struct Folder {
    dir: tempfile::TempDir,
    _lock: Flock<File>,
}

impl Folder {
    /// Makes a new folder in the temporary folder (after removing, once a
    /// process, those left by processes that have died).
    pub(super) fn new() -> std::io::Result<Folder> {
        static SWEPT: Once = Once::new();
        SWEPT.call_once(|| {
            let n = sweep(&std::env::temp_dir());
            if n > 0 {
                tracing::info!("removed {n} held sandboxes' folders left by ended processes");
            }
        });
        let (dir, lock) = make_in(&LIVE, &std::env::temp_dir())?;
        Ok(Folder { dir, _lock: lock })
    }

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        live().made.remove(self.dir.path());
        // The `TempDir` removes the folder itself.
    }
}

/// Locks folder `path` (not following a link), if nobody holds it.
fn lock(path: &Path) -> std::io::Result<Option<Flock<File>>> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW)
        .open(path)?;
    match Flock::lock(dir, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Some(lock)),
        Err((_, Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(e.into()),
    }
}

/// Makes a folder in `tmp`, locked, and lists it in `folders`, unless
/// they were all removed already: made and listed under one lock, so
/// that [`remove_all_in`] either removes it or refuses it.
fn make_in(
    folders: &Mutex<Folders>,
    tmp: &Path,
) -> std::io::Result<(tempfile::TempDir, Flock<File>)> {
    let mut folders = lock_folders(folders);
    if folders.closed {
        return Err(std::io::Error::other(
            "croupier is stopping: no held sandbox starts",
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .tempdir_in(tmp)?;
    let lock = lock(dir.path())?.ok_or_else(|| {
        std::io::Error::other(format!("{} is locked already", dir.path().display()))
    })?;
    folders.made.insert(dir.path().to_path_buf());
    Ok((dir, lock))
}

/// Removes every folder this process made that is still there, and makes
/// none after: how many.
pub(super) fn remove_all() -> usize {
    remove_all_in(&LIVE)
}

fn remove_all_in(folders: &Mutex<Folders>) -> usize {
    let all = {
        let mut folders = lock_folders(folders);
        folders.closed = true;
        std::mem::take(&mut folders.made)
    };
    all.iter().filter(|p| remove_dir(p)).count()
}

/// Removes folder `p` and what is in it. A round that makes its FIFOs
/// there at the same moment can make one removal fail ("not empty"): it
/// is tried again, three times in all.
fn remove_dir(p: &Path) -> bool {
    (0..3).any(|_| match std::fs::remove_dir_all(p) {
        Ok(()) => true,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    })
}

/// Removes, in `tmp`, the held sandboxes' folders that no process holds
/// and that this user (or, for root, the sandbox's user) owns, made a
/// minute ago or more: how many.
/// Anything else by that name (a link, a file, another user's folder, a
/// live process's) is left alone.
pub(super) fn sweep(tmp: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return 0;
    };
    let me = nix::unistd::geteuid().as_raw();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_str().and_then(maker).is_none() {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        let ours = meta.uid() == me || (is_root() && meta.uid() == NOBODY_ID);
        // One made a moment ago may not be locked yet.
        let fresh = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_none_or(|age| age < FRESH);
        if !meta.is_dir() || !ours || fresh {
            continue;
        }
        // Held while it is removed: no process made it again meanwhile.
        if let Ok(Some(_held)) = lock(&entry.path()) {
            if std::fs::remove_dir_all(entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// The pid in a held sandbox's folder's name.
fn maker(name: &str) -> Option<u32> {
    let (pid, rest) = name.strip_prefix(PREFIX)?.split_once('-')?;
    let digits = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    (digits && !rest.is_empty() && !pid.starts_with('0'))
        .then(|| pid.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_maker_is_read_from_the_name() {
        assert_eq!(maker("croupier-held-1234-AbCd12"), Some(1234));
        assert_eq!(maker("croupier-held-AbCd12"), None);
        assert_eq!(maker("croupier-held-1234-"), None);
        assert_eq!(maker("croupier-held-0123-x"), None);
        assert_eq!(maker("croupier-held--x"), None);
        assert_eq!(maker("other-1234-x"), None);
        assert_eq!(maker("croupier-held-+12-x"), None);
    }

    #[test]
    fn only_folders_nobody_holds_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let made = |name: String| {
            let p = tmp.path().join(name);
            std::fs::create_dir(&p).unwrap();
            let old = std::time::SystemTime::now() - 2 * FRESH;
            File::open(&p).unwrap().set_modified(old).unwrap();
            p
        };
        // Of a process that has ended: nobody holds it.
        let of_dead = made(format!("{PREFIX}4242-abc"));
        std::fs::write(of_dead.join("1.in"), "").unwrap();
        let old = std::time::SystemTime::now() - 2 * FRESH;
        File::open(&of_dead).unwrap().set_modified(old).unwrap();
        // Just made, not locked yet.
        let fresh = tmp.path().join(format!("{PREFIX}4246-abc"));
        std::fs::create_dir(&fresh).unwrap();
        // Of a live process (this one, here), whatever its pid.
        let of_live = made(format!("{PREFIX}4243-abc"));
        let _held = lock(&of_live).unwrap().unwrap();
        let old_name = made(format!("{PREFIX}abcdef"));
        let file = tmp.path().join(format!("{PREFIX}4244-file"));
        std::fs::write(&file, "").unwrap();
        let target = tempfile::tempdir().unwrap();
        let link = tmp.path().join(format!("{PREFIX}4245-link"));
        std::os::unix::fs::symlink(target.path(), &link).unwrap();

        assert_eq!(sweep(tmp.path()), 1);
        assert!(!of_dead.exists());
        for kept in [&of_live, &fresh, &old_name, &file, &link] {
            assert!(std::fs::symlink_metadata(kept).is_ok(), "{kept:?} removed");
        }
        assert!(target.path().exists());
    }

    #[test]
    fn a_live_folder_of_this_process_is_not_swept() {
        let folder = Folder::new().unwrap();
        // Old enough to be swept, were it not locked.
        let old = std::time::SystemTime::now() - 2 * FRESH;
        File::open(folder.path())
            .unwrap()
            .set_modified(old)
            .unwrap();
        let tmp = folder.path().parent().unwrap().to_path_buf();
        sweep(&tmp);
        assert!(folder.path().exists());
    }

    #[test]
    fn a_folder_is_named_after_its_process_and_goes_when_dropped() {
        let a = Folder::new().unwrap();
        let b = Folder::new().unwrap();
        let (pa, pb) = (a.path().to_path_buf(), b.path().to_path_buf());
        assert!(pa
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(maker)
            .is_some_and(|p| p == std::process::id()));
        assert!(live().made.contains(&pa) && live().made.contains(&pb));
        drop(a);
        assert!(!pa.exists());
        assert!(!live().made.contains(&pa));
        assert!(live().made.contains(&pb));
        drop(b);
        assert!(!pb.exists());
        // `remove_all` (it would remove other tests' folders here) is
        // tested by the CLI's `lifetime` tests: no folder is left after a
        // SIGINT or SIGTERM; its rule on a list of its own below.
    }

    #[test]
    fn once_all_are_removed_no_folder_is_made() {
        let tmp = tempfile::tempdir().unwrap();
        let folders = Mutex::new(Folders::default());
        let (a, _lock) = make_in(&folders, tmp.path()).unwrap();
        std::fs::write(a.path().join("1.in"), "").unwrap();
        assert_eq!(remove_all_in(&folders), 1);
        assert!(!a.path().exists());
        let refused = make_in(&folders, tmp.path()).expect_err("made after all were removed");
        assert!(refused.to_string().contains("stopping"), "{refused}");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
