//! Where a sandbox's bubblewrap starts from: the view of fewer mounts
//! ([`mount_view`]) where croupier is root, the host's mounts otherwise.
//! Either way the program runs, and its folders are bound.

use std::os::unix::fs::PermissionsExt;

use super::*;

fn strict() -> ProcessLimits {
    ProcessLimits {
        sandbox: Sandbox::Strict(SandboxLimits::default()),
        ..limits()
    }
}

fn ns_of(pid: i32) -> std::path::PathBuf {
    std::fs::read_link(format!("/proc/{pid}/ns/mnt")).unwrap()
}

/// The mount namespace of `argv`'s bubblewrap and its mount points, read
/// while it runs, once the program answered `up`.
async fn started_from(argv: &[String]) -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let mut p = BotProcess::spawn(argv, &strict()).unwrap();
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
    let bwrap = p.pgid.expect("a process group").as_raw();
    let ns = ns_of(bwrap);
    let points = mount_view::tests::mounts_of(&bwrap.to_string());
    p.terminate().await;
    (ns, points)
}

/// Whether a mount namespace's points leave out `/sys`.
fn without_sys(points: &[std::path::PathBuf]) -> bool {
    points.iter().all(|p| !p.starts_with("/sys"))
}

/// A sandbox starts from the view where croupier may make it, and its
/// device nodes are devices still; a program without a sandbox started
/// next by the same thread starts from the host's mounts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
// The other holders of the turn are plain tests that never wait on this
// runtime.
#[allow(clippy::await_holding_lock)]
async fn a_sandbox_starts_from_fewer_mounts_where_croupier_is_root() {
    // No view is made again meanwhile by another test's host mount.
    let _turn = mount_view::tests::host_mounts();
    let host = ns_of(std::process::id() as i32);
    let nodes = "for d in null zero full random urandom; do test -c /dev/$d || exit 9; done";
    let (from, points) = started_from(&sh(&format!("{nodes}; echo up; cat"))).await;
    let mut bare = BotProcess::spawn(&sh("echo up; cat"), &limits()).unwrap();
    assert_eq!(bare.recv(soon(5000)).await.unwrap(), "up");
    assert_eq!(ns_of(bare.pgid.expect("a process group").as_raw()), host);
    bare.terminate().await;
    if !mount_view::tests::can_view() {
        assert_eq!(from, host);
        return;
    }
    let view = mount_view::view().expect("root makes the view");
    assert_eq!(from, view.name());
    assert_ne!(from, host);
    assert!(without_sys(&points), "{points:?}");
    // A program in a folder of its own, bound into the sandbox, starts
    // from the view too. (No bot folder can lie under a mount left out:
    // `sandbox::bot_folders` binds none under `/proc` or `/dev`, and
    // nobody writes under `/sys`; `View::serves` is tested alone.)
    let dir = tempfile::Builder::new()
        .prefix("croupier-mounts")
        .tempdir()
        .unwrap();
    let script = dir.path().join("bot.sh");
    std::fs::write(&script, "echo up; cat\n").unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let argv = vec!["sh".to_string(), script.to_string_lossy().into_owned()];
    let (from, points) = started_from(&argv).await;
    assert_eq!(from, view.name());
    assert!(without_sys(&points), "{points:?}");
}

/// The sandbox check starts a sandbox from the view too, and keeps a view
/// bubblewrap starts from.
#[test]
fn the_sandbox_check_keeps_a_view_bubblewrap_starts_from() {
    let _turn = mount_view::tests::host_mounts();
    sandbox_check::check(&SandboxLimits::default()).unwrap();
    if mount_view::tests::can_view() {
        assert!(mount_view::view().is_some(), "the view was given up");
    }
}
