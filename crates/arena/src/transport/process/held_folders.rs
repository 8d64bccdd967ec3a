//! The folders of held sandboxes' FIFOs ([`super::held`]), in the
//! temporary folder, so that none outlives the process that made it:
//!
//! * each is removed with its sandbox (dropped);
//! * [`remove_all`] removes those still there when the bots are stopped
//!   (SIGINT or SIGTERM to `croupier play`, `serve` or `worker`), since the
//!   process then exits without dropping its matches;
//! * a process killed outright (SIGKILL) cannot remove its own, so each is
//!   named after the process that made it (`croupier-held-<pid>-…`), and
//!   the first held sandbox of a later process removes those whose process
//!   is gone.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

use super::sandbox::{is_root, NOBODY_ID};

/// What every such folder's name starts with.
const PREFIX: &str = "croupier-held-";

/// The folders this process made and has not removed yet.
static LIVE: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A held sandbox's folder: removed when dropped.
#[derive(Debug)]
pub(super) struct Folder(tempfile::TempDir);

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
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir()?;
        live().insert(dir.path().to_path_buf());
        Ok(Folder(dir))
    }

    pub(super) fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        live().remove(self.0.path());
        // The `TempDir` removes the folder itself.
    }
}

/// Removes every folder this process made that is still there: how many.
pub(super) fn remove_all() -> usize {
    let all = std::mem::take(&mut *live());
    all.iter()
        .filter(|p| std::fs::remove_dir_all(p).is_ok())
        .count()
}

/// Removes, in `tmp`, the held sandboxes' folders whose process has ended
/// and that this user (or, for root, the sandbox's user) owns: how many.
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
        let Some(pid) = name.to_str().and_then(maker) else {
            continue;
        };
        if pid == std::process::id() || alive(pid) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        let ours = meta.uid() == me || (is_root() && meta.uid() == NOBODY_ID);
        if meta.is_dir() && ours && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The pid in a held sandbox's folder's name.
fn maker(name: &str) -> Option<u32> {
    let (pid, rest) = name.strip_prefix(PREFIX)?.split_once('-')?;
    (!rest.is_empty() && !pid.starts_with('0'))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether a process `pid` exists (one that cannot be signalled by this
/// user counts as alive).
fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    kill(Pid::from_raw(pid), None) != Err(Errno::ESRCH)
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
    }

    #[test]
    fn only_folders_of_ended_processes_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        // A child that has ended (and been reaped): its pid is free.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let of_dead = tmp.path().join(format!("{PREFIX}{dead}-abc"));
        std::fs::create_dir(&of_dead).unwrap();
        std::fs::write(of_dead.join("1.in"), "").unwrap();
        let of_me = tmp
            .path()
            .join(format!("{PREFIX}{}-abc", std::process::id()));
        std::fs::create_dir(&of_me).unwrap();
        let of_init = tmp.path().join(format!("{PREFIX}1-abc"));
        std::fs::create_dir(&of_init).unwrap();
        let old_name = tmp.path().join(format!("{PREFIX}abcdef"));
        std::fs::create_dir(&old_name).unwrap();
        let file = tmp.path().join(format!("{PREFIX}{dead}-file"));
        std::fs::write(&file, "").unwrap();
        let target = tempfile::tempdir().unwrap();
        let link = tmp.path().join(format!("{PREFIX}{dead}-link"));
        std::os::unix::fs::symlink(target.path(), &link).unwrap();

        assert_eq!(sweep(tmp.path()), 1);
        assert!(!of_dead.exists());
        for kept in [&of_me, &of_init, &old_name, &file, &link] {
            assert!(std::fs::symlink_metadata(kept).is_ok(), "{kept:?} removed");
        }
        assert!(target.path().exists());
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
        assert!(live().contains(&pa) && live().contains(&pb));
        drop(a);
        assert!(!pa.exists());
        assert!(!live().contains(&pa));
        assert!(live().contains(&pb));
        drop(b);
        assert!(!pb.exists());
        // `remove_all` (it would remove other tests' folders here) is
        // tested by the CLI's `lifetime` tests: no folder is left after a
        // SIGINT or SIGTERM.
    }
}
