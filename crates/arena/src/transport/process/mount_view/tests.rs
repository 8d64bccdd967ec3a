use super::*;

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

/// `/sys` whole, and what is below `/proc` and `/dev` but not they
/// themselves; each once, the topmost of a tree only.
#[test]
fn what_is_left_out_is_sys_and_what_is_below_proc_and_dev() {
    let points = paths(&[
        "/",
        "/proc",
        "/proc/sys/fs/binfmt_misc",
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
    assert_eq!(
        tops(&points),
        paths(&["/dev/pts", "/dev/shm", "/proc/sys/fs/binfmt_misc", "/sys"])
    );
    for kept in [
        "/",
        "/proc",
        "/dev",
        "/devices",
        "/tmp",
        "/srv/bots",
        "/system",
    ] {
        assert!(!left_out(Path::new(kept)), "{kept}");
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

fn mounts_of(pid: &str) -> Vec<PathBuf> {
    std::fs::read_to_string(format!("/proc/{pid}/mountinfo"))
        .unwrap()
        .lines()
        .filter_map(mount_point)
        .collect()
}

fn ns_of(pid: &str) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/ns/mnt")).unwrap()
}

/// As root: the view has no `/sys` (the host's has), a thread in it keeps
/// its working folder, and what it starts meanwhile starts there; it
/// comes back to the host's mounts and folder. A command binding a folder
/// under a mount left out is not served.
#[test]
fn a_thread_in_the_view_starts_programs_without_sys_and_comes_back() {
    if !crate::transport::process::sandbox::is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let view = view().expect("root makes the view");
    std::thread::spawn(move || {
        let host = ns_of("thread-self");
        let host_mounts = mounts_of("thread-self");
        let cwd = std::env::current_dir().unwrap();
        if host_mounts.iter().any(|p| p == Path::new("/sys")) {
            assert!(
                view.gone().iter().any(|p| p == Path::new("/sys")),
                "{:?}",
                view.gone()
            );
        }
        assert!(view.gone().iter().all(|p| left_out(p)), "{:?}", view.gone());
        let entered = view.enter().unwrap();
        assert_ne!(ns_of("thread-self"), host);
        let inside = mounts_of("thread-self");
        assert!(inside.iter().all(|p| !left_out(p)), "{inside:?}");
        assert!(inside.iter().any(|p| p == Path::new("/")));
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
        assert_eq!(seen, inside);
        drop(entered);
        assert_eq!(ns_of("thread-self"), host);
        assert_eq!(mounts_of("thread-self"), host_mounts);
        assert_eq!(std::env::current_dir().unwrap(), cwd);
    })
    .join()
    .unwrap();
    assert!(view.serves(&strings(&["bwrap", "--ro-bind", "/usr", "/usr", "--", "x"])));
    if let Some(gone) = view.gone().first() {
        let under = gone.join("bot").to_string_lossy().into_owned();
        assert!(!view.serves(&strings(&["bwrap", "--ro-bind", &under, &under, "--", "x"])));
    }
}
