use super::*;

fn folders(ps: &[&str]) -> Vec<(PathBuf, bool)> {
    ps.iter().map(|p| (PathBuf::from(p), true)).collect()
}

fn paths(ps: &[&str]) -> Vec<PathBuf> {
    ps.iter().map(PathBuf::from).collect()
}

fn strings(ws: &[&str]) -> Vec<String> {
    ws.iter().map(|w| w.to_string()).collect()
}

#[test]
fn a_mount_point_is_read_with_its_escapes() {
    let line = "36 35 98:0 /mnt1 /mnt\\040two\\134x rw,noatime master:1 - ext3 /dev/root rw";
    assert_eq!(mount_point(line), Some(PathBuf::from("/mnt two\\x")));
    assert_eq!(
        mount_point("25 1 0:23 / /sys rw - sysfs sysfs rw"),
        Some(PathBuf::from("/sys"))
    );
    assert_eq!(mount_point("short line"), None);
}

/// `/sys` whole, and the folders mounted below `/dev` but not `/dev`
/// itself; each once, the topmost of a tree only. Kept: what is below
/// `/proc` (a runtime's masks), device nodes bound on files below `/dev`
/// (bubblewrap binds them), and the rest.
#[test]
fn what_is_left_out_is_sys_and_the_folders_mounted_below_dev() {
    let mut points = folders(&[
        "/",
        "/proc",
        "/proc/sys/fs/binfmt_misc",
        "/proc/sys",
        "/sys",
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/cpu",
        "/dev",
        "/dev/pts",
        "/dev/shm",
        "/dev/shm",
        "/devices",
        "/tmp",
        "/srv/bots",
    ]);
    points.push((PathBuf::from("/dev/null"), false));
    points.push((PathBuf::from("/proc/kcore"), false));
    assert_eq!(tops(&points), paths(&["/dev/pts", "/dev/shm", "/sys"]));
    for kept in [
        "/",
        "/proc",
        "/proc/sys",
        "/dev",
        "/devices",
        "/tmp",
        "/srv/bots",
        "/system",
    ] {
        assert!(!left_out(Path::new(kept), true), "{kept}");
    }
    for kept in ["/dev/null", "/dev/urandom", "/proc/kcore"] {
        assert!(!left_out(Path::new(kept), false), "{kept}");
    }
}

/// Only bubblewrap's own options name binds: the program's words after
/// `--` do not.
#[test]
fn the_binds_of_a_command_are_its_options_sources() {
    let argv = strings(&[
        "bwrap",
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind-try",
        "/etc/ld.so.cache",
        "/etc/ld.so.cache",
        "--symlink",
        "usr/lib",
        "/lib",
        "--dev-bind",
        "/dev/null",
        "/dev/null",
        "--chdir",
        "/tmp",
        "--",
        "bot",
        "--bind",
        "/sys",
        "/x",
    ]);
    assert_eq!(
        binds(&argv).collect::<Vec<_>>(),
        ["/usr", "/etc/ld.so.cache", "/dev/null"]
    );
}

pub(crate) fn mounts_of(pid: &str) -> Vec<PathBuf> {
    std::fs::read_to_string(format!("/proc/{pid}/mountinfo"))
        .unwrap()
        .lines()
        .filter_map(mount_point)
        .collect()
}

fn ns_of(pid: &str) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/ns/mnt")).unwrap()
}

/// Whether this process may make and enter mount namespaces (root with
/// `CAP_SYS_ADMIN` and `CAP_SYS_CHROOT`; the tests do not run in a
/// chroot).
pub(crate) fn can_view() -> bool {
    use rustix::thread::CapabilitySet;
    let caps = rustix::thread::capabilities(None).map(|c| c.effective);
    let needed = CapabilitySet::SYS_ADMIN | CapabilitySet::SYS_CHROOT;
    rustix::process::geteuid().is_root() && caps.is_ok_and(|c| c.contains(needed))
}

/// Held by the tests that read or change the host's mounts or the view,
/// one at a time.
pub(crate) fn host_mounts() -> std::sync::MutexGuard<'static, ()> {
    static HOST_MOUNTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HOST_MOUNTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The turn of a test that reads or changes the host's mounts (one at a
/// time), or `None` (said) where no view can be made.
fn host_mounts_turn() -> Option<std::sync::MutexGuard<'static, ()>> {
    if !can_view() {
        eprintln!("skipped: needs root with CAP_SYS_ADMIN and CAP_SYS_CHROOT");
        return None;
    }
    Some(host_mounts())
}

/// A tmpfs mounted on the host at a folder of its own, taken away when
/// dropped (a failed test leaves nothing mounted).
struct Mounted(tempfile::TempDir);

impl Mounted {
    fn new() -> Mounted {
        let dir = tempfile::tempdir().unwrap();
        mount(
            Some("tmpfs"),
            dir.path(),
            Some("tmpfs"),
            MsFlags::empty(),
            Some("size=64k"),
        )
        .unwrap();
        Mounted(dir)
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = umount2(self.0.path(), MntFlags::MNT_DETACH);
    }
}

/// As root: the view has no `/sys` (the host's has), a thread in it keeps
/// its working folder, and what it starts meanwhile starts there; it
/// comes back to the host's mounts and folder. A command binding a folder
/// under a mount left out is not served.
#[test]
fn a_thread_in_the_view_starts_programs_without_sys_and_comes_back() {
    let Some(_turn) = host_mounts_turn() else {
        return;
    };
    let view = view().expect("root makes the view");
    let gone = view.gone().to_vec();
    std::thread::spawn(move || {
        let host = ns_of("thread-self");
        let host_mounts = mounts_of("thread-self");
        let cwd = std::env::current_dir().unwrap();
        if host_mounts.iter().any(|p| p == Path::new("/sys")) {
            assert!(gone.iter().any(|p| p == Path::new("/sys")), "{gone:?}");
        }
        assert!(gone.iter().all(|p| left_out(p, true)), "{gone:?}");
        let entered = view.enter().unwrap();
        assert_ne!(ns_of("thread-self"), host);
        let inside = mounts_of("thread-self");
        assert!(
            inside.iter().all(|p| !left_out(p, p.is_dir())),
            "{inside:?}"
        );
        assert!(inside.iter().any(|p| p == Path::new("/")));
        // Its working folder is the view's own of that name.
        assert_eq!(std::env::current_dir().unwrap(), cwd);
        let child = std::process::Command::new("cat")
            .arg("/proc/self/mountinfo")
            .output()
            .unwrap();
        let seen: Vec<PathBuf> = String::from_utf8(child.stdout)
            .unwrap()
            .lines()
            .filter_map(mount_point)
            .collect();
        assert!(seen.iter().all(|p| !left_out(p, p.is_dir())), "{seen:?}");
        assert!(seen.len() < host_mounts.len() || gone.is_empty());
        drop(entered);
        assert_eq!(ns_of("thread-self"), host);
        assert_eq!(mounts_of("thread-self"), host_mounts);
        assert_eq!(std::env::current_dir().unwrap(), cwd);
    })
    .join()
    .unwrap();
    let view = super::view().expect("still made");
    assert!(view.serves(&strings(&["bwrap", "--ro-bind", "/usr", "/usr", "--", "x"])));
    if let Some(gone) = view.gone().first() {
        let under = gone.join("bot").to_string_lossy().into_owned();
        assert!(!view.serves(&strings(&["bwrap", "--ro-bind", &under, &under, "--", "x"])));
        let above = gone.parent().unwrap().to_string_lossy().into_owned();
        assert!(!view.serves(&strings(&["bwrap", "--ro-bind", &above, &above, "--", "x"])));
    }
}

/// A change to the host's mounts makes the view again at the next start:
/// a folder mounted since is in it.
#[test]
fn a_folder_mounted_on_the_host_since_is_in_the_next_view() {
    let Some(_turn) = host_mounts_turn() else {
        return;
    };
    let before = view().expect("root makes the view");
    // Mounted on the host's namespace (the test's threads are in it),
    // then taken away again.
    let mounted = Mounted::new();
    let point = mounted.0.path().to_path_buf();
    std::fs::write(point.join("mark"), "here").unwrap();
    let after = view().expect("made again");
    let seen = std::thread::spawn({
        let after = after.clone();
        let mark = point.join("mark");
        move || {
            let entered = after.enter().unwrap();
            let seen = std::fs::read_to_string(mark).ok();
            drop(entered);
            seen
        }
    })
    .join()
    .unwrap();
    drop(mounted);
    assert!(!Arc::ptr_eq(&before, &after), "the view was not made again");
    assert_eq!(seen.as_deref(), Some("here"));
}

/// A thread in a `chroot` (of its own: it has its own root and folder
/// first) is not at its namespace's root; one that is not, is.
#[test]
fn a_chroot_is_told_from_the_namespaces_root() {
    if !can_view() {
        eprintln!("skipped: needs root with CAP_SYS_ADMIN and CAP_SYS_CHROOT");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let jail = dir.path().to_path_buf();
    let told = std::thread::spawn(move || {
        let ns: OwnedFd = File::open("/proc/thread-self/ns/mnt").unwrap().into();
        unshare(CloneFlags::CLONE_FS).unwrap();
        let free = at_namespace_root(&ns).unwrap();
        nix::unistd::chroot(&jail).unwrap();
        (free, at_namespace_root(&ns).unwrap())
    })
    .join()
    .unwrap();
    assert_eq!(told, (true, false));
}
