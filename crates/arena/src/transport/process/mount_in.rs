//! A bot's folders bound into a spare sandbox ([`super::spare`]), which
//! was set up before the bot's command was known (issue 53).
//!
//! bubblewrap binds a program's folders read-only as it sets up its
//! sandbox. A spare sandbox is set up without them; when a program takes
//! it, croupier (as root) binds them there itself, the way bubblewrap
//! would have: each folder's tree is cloned on the host
//! (`open_tree(OPEN_TREE_CLONE)`), then a thread of its own joins the
//! sandbox's mount namespace (`setns` through a pidfd of the sandbox's
//! first process, so that no reused pid can name another sandbox),
//! makes the mount point as the sandbox's user (the root of a sandbox is
//! a tmpfs of its user namespace, where the host's root is nobody), moves
//! the clone there (`move_mount`), makes it private, read-only, `nosuid`
//! and `nodev` (keeping the host mount's own flags, such as `noexec`, as
//! bubblewrap keeps them), and puts the sandbox's root back to read-only.
//! The thread then ends (it belongs to no other namespace after that).
//! Nothing but the holder has run in the sandbox, and it waits for its
//! next order meanwhile. The trees are cloned as the sandbox's user finds
//! them (a folder `nobody` may not reach is refused, as bubblewrap,
//! started as `nobody`, refuses it).
//!
//! A folder with other mounts inside it is not bound this way (bubblewrap
//! binds those too, recursively; a clone of one mount would show the
//! empty folders beneath them): such a program gets a sandbox of its own.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::mount::{mount, MsFlags};
use nix::sched::{setns, unshare, CloneFlags};
use nix::sys::statvfs::{statvfs, FsFlags};
use nix::unistd::{setfsgid, setfsuid, Gid, Uid};
use rustix::fs::CWD;
use rustix::mount::{move_mount, open_tree, MoveMountFlags, OpenTreeFlags};

use super::mount_view::mount_point;
use super::sandbox::NOBODY_ID;

/// Whether `folder` can be bound by [`bind_into`]: no mount of the host
/// lies inside it (`mountinfo`: this process's).
pub(super) fn bindable(folder: &Path, mountinfo: &str) -> bool {
    let real = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    !mountinfo
        .lines()
        .filter_map(mount_point)
        .any(|at| at != real && at.starts_with(&real))
}

/// Binds `folders` (files or folders of the host, by the names the
/// command uses) read-only into the mount namespace of the process
/// `sandbox` (a pidfd), at the same paths. Croupier must be root.
pub(super) fn bind_into(sandbox: &OwnedFd, folders: &[PathBuf]) -> io::Result<()> {
    if folders.is_empty() {
        return Ok(());
    }
    let sandbox = sandbox.try_clone()?;
    let folders = folders.to_vec();
    std::thread::Builder::new()
        .name("croupier-bind".into())
        .spawn(move || inside(&sandbox, &folders))?
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the binding thread panicked")))
}

/// [`bind_into`]'s work on its own thread: clones the folders' trees as
/// the sandbox's user would find them on the host (a folder `nobody` may
/// not reach is refused, as bubblewrap, started as `nobody`, refuses it),
/// then joins the sandbox's mount namespace and mounts each at its path.
fn inside(sandbox: &OwnedFd, folders: &[PathBuf]) -> io::Result<()> {
    let trees = as_sandbox_user(|| {
        folders
            .iter()
            .map(|f| {
                let flags = OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC;
                let tree = open_tree(CWD, f.as_path(), flags)?;
                Ok((tree, f.as_path(), f.is_dir()))
            })
            .collect::<io::Result<Vec<(OwnedFd, &Path, bool)>>>()
    })?;
    unshare(CloneFlags::CLONE_FS)?;
    setns(sandbox.as_fd(), CloneFlags::CLONE_NEWNS)?;
    // This thread's root and working folder are the sandbox's now.
    let root = Path::new("/");
    let flags = mount_flags(root)?;
    remount(root, flags - MsFlags::MS_RDONLY)?;
    let bound = trees.iter().try_for_each(|(tree, at, dir)| {
        as_sandbox_user(|| make_mount_point(at, *dir))?;
        move_mount(
            tree.as_fd(),
            "",
            CWD,
            *at,
            MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
        )?;
        mount(
            None::<&str>,
            *at,
            None::<&str>,
            MsFlags::MS_PRIVATE,
            None::<&str>,
        )?;
        // The host mount's own flags (`noexec`, times) kept, as
        // bubblewrap keeps them, and read-only, `nosuid`, `nodev` added.
        let kept = mount_flags(at)?;
        remount(
            at,
            kept | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        )
    });
    // Read-only again, whatever happened.
    let back = remount(root, flags | MsFlags::MS_RDONLY);
    bound.and(back)
}

/// The mount flags of the mount at `at`, which a bind remount must keep.
fn mount_flags(at: &Path) -> io::Result<MsFlags> {
    let f = statvfs(at)?.flags();
    let mut out = MsFlags::empty();
    for (has, keep) in [
        (FsFlags::ST_RDONLY, MsFlags::MS_RDONLY),
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if f.contains(has) {
            out |= keep;
        }
    }
    Ok(out)
}

/// A bind mount's flags set to `flags`.
fn remount(at: &Path, flags: MsFlags) -> io::Result<()> {
    mount(
        None::<&str>,
        at,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_BIND | flags,
        None::<&str>,
    )
    .map_err(io::Error::from)
}

/// Runs `f` with this thread's file system user and group the sandbox's
/// (the host's root is no one in the sandbox's user namespace, and may
/// not make files on its tmpfs), then root's again.
fn as_sandbox_user<T>(f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    setfsgid(Gid::from_raw(NOBODY_ID));
    setfsuid(Uid::from_raw(NOBODY_ID));
    let out = f();
    setfsuid(Uid::from_raw(0));
    setfsgid(Gid::from_raw(0));
    out
}

/// Makes the folder `at`, with the folders on its way (or, for a file, an
/// empty file there), unless it is there.
fn make_mount_point(at: &Path, dir: bool) -> io::Result<()> {
    if dir {
        return std::fs::create_dir_all(at);
    }
    if let Some(parent) = at.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(at)
    {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        other => other.map(|_| ()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_with_a_mount_inside_is_not_bindable() {
        let info = "22 1 0:21 / / rw - ext4 /dev/vda rw\n\
                    30 22 0:30 / /srv/bots/x\\040y/data rw - tmpfs tmpfs rw\n";
        assert!(!bindable(Path::new("/srv/bots/x y"), info));
        assert!(!bindable(Path::new("/srv/bots"), info));
        assert!(bindable(Path::new("/srv/bots/x y/data"), info));
        assert!(bindable(Path::new("/srv/other"), info));
        assert!(bindable(Path::new("/srv/bots/x"), info));
    }
}
