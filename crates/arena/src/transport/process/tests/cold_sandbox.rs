//! A program in a sandbox of its own (a cold start): the folders bound
//! for it, its private `/tmp`, and how it is stopped.

use super::*;

/// A program, or a file among its arguments, directly in the shared
/// temporary folder is bound alone; the folder itself never, and a
/// folder of its own inside it whole.
#[test]
fn of_a_shared_folder_only_the_file_named_is_bound() {
    let tmp = std::env::temp_dir();
    let own = tempfile::Builder::new()
        .prefix("croupier-test-bot-dir")
        .tempdir_in(&tmp)
        .unwrap();
    let file = tempfile::Builder::new()
        .prefix("croupier-test-bot")
        .tempfile_in(&tmp)
        .unwrap();
    // A program given as a path must be one.
    std::fs::set_permissions(
        file.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let inside = own.path().join("bot.py");
    std::fs::write(&inside, "").unwrap();
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let cwd = std::path::Path::new("/");
    let folders = |argv: &[String]| bot_folders(argv, cwd);
    assert_eq!(folders(&[s(file.path())]), vec![file.path().to_path_buf()]);
    assert_eq!(
        folders(&["python3".into(), s(file.path())]),
        vec![file.path().to_path_buf()]
    );
    assert!(folders(&["cat".into(), s(&tmp)]).is_empty());
    // Where a folder really is decides, not how it is written.
    let roundabout = tmp
        .join("..")
        .join(tmp.file_name().unwrap())
        .join(file.path().file_name().unwrap());
    assert_eq!(folders(&[s(&roundabout)]), vec![roundabout.clone()]);
    assert!(folders(&["cat".into(), s(&tmp.join(".."))]).is_empty());
    assert!(folders(&["cat".into(), "/var/tmp".into()]).is_empty());
    assert_eq!(
        folders(&["python3".into(), s(&inside)]),
        vec![own.path().to_path_buf()]
    );
}

/// Such a program runs, with its own private `/tmp` (writable, and
/// nothing of the host's there but itself).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_in_the_shared_tmp_keeps_a_private_tmp() {
    use std::os::unix::fs::PermissionsExt as _;
    // The host's /tmp, which the sandbox's own /tmp is listed against.
    let tmp = std::path::Path::new("/tmp");
    let neighbour = tempfile::Builder::new()
        .prefix("croupier-test-neighbour")
        .tempfile_in(tmp)
        .unwrap();
    let bot = tempfile::Builder::new()
        .prefix("croupier-test-bot")
        .tempfile_in(tmp)
        .unwrap();
    std::fs::write(
        bot.path(),
        "#!/bin/sh\nls -a /tmp | tr '\\n' ' '; echo\necho x > /tmp/scratch && echo wrote\ncat\n",
    )
    .unwrap();
    std::fs::set_permissions(bot.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bot_path = bot.path().to_path_buf();
    // Written and closed: a file still open for writing cannot be run.
    let bot = bot.into_temp_path();
    let mut p = BotProcess::spawn(&[bot_path.to_string_lossy().into_owned()], &strict()).unwrap();
    let seen = p.recv(soon(5000)).await.unwrap();
    let name = |p: &std::path::Path| p.file_name().unwrap().to_string_lossy().into_owned();
    assert!(seen.contains(&name(&bot_path)), "{seen}");
    assert!(!seen.contains(&name(neighbour.path())), "{seen}");
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "wrote");
    p.terminate().await;
    drop(bot);
}

fn strict() -> ProcessLimits {
    ProcessLimits {
        sandbox: Sandbox::Strict(SandboxLimits::default()),
        grace: Duration::from_millis(500),
        ..limits()
    }
}

/// With a grace period long enough for a trap's work on a busy
/// machine.
fn strict_patient() -> ProcessLimits {
    ProcessLimits {
        grace: Duration::from_secs(3),
        ..strict()
    }
}

/// A program alone in a sandbox of its own gets SIGTERM and its grace
/// period, as an unsandboxed one does: its trap runs, and what it
/// writes as it stops reaches its log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_in_a_sandbox_of_its_own_gets_sigterm_and_its_grace() {
    let mut p = BotProcess::spawn(
        &sh("trap 'sleep 0.1; echo bye >&2; exit 0' TERM; echo up; \
             while :; do sleep 0.01; done"),
        &strict_patient(),
    )
    .unwrap();
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
    let log = p.stderr_log();
    let bwrap = p.pgid.unwrap().as_raw();
    let start = Instant::now();
    p.terminate().await;
    let took = start.elapsed();
    assert!(
        log.lock().unwrap().tail().contains("bye"),
        "no last words: {:?}",
        log.lock().unwrap().tail()
    );
    assert!(
        took >= Duration::from_millis(100),
        "stopped in {took:?}, before its trap ran"
    );
    assert!(!alive(bwrap));
}

/// One that ignores SIGTERM is killed, whole, after the grace period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_in_a_sandbox_of_its_own_ignoring_sigterm_is_killed_after_its_grace() {
    let (took, bwrap) = stop_one_ignoring_sigterm(&strict()).await;
    assert!(
        took >= Duration::from_millis(500),
        "killed before its grace: {took:?}"
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(!alive(bwrap));
}

/// Processes whose command line holds `token` (a sandbox's bubblewrap
/// and first process hold the program's whole command).
fn holding(token: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(token))
        })
        .collect()
}

/// Whether nothing holding `token` is left within two seconds.
async fn all_gone(token: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(2);
    while !holding(token).is_empty() {
        if Instant::now() > until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// Stopped at once after its start (before bubblewrap may have said
/// which process the sandbox starts with, or while the sandbox is
/// being set up), or dropped, a sandbox still ends whole: nothing of
/// it is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_stopped_or_dropped_as_it_starts_ends_whole() {
    for i in 0..10 {
        let token = format!("stopped-at-start-{}-{i}", std::process::id());
        let p = BotProcess::spawn(&sh(&format!("echo up; cat; : {token}")), &strict()).unwrap();
        if i % 3 == 1 {
            tokio::time::sleep(Duration::from_millis(2 * i)).await;
        }
        if i % 2 == 0 {
            p.terminate().await;
        } else {
            drop(p);
        }
        assert!(all_gone(&token).await, "left: {:?}", holding(&token));
    }
}

/// A sandbox whose bubblewrap ends while it is still being set up
/// lives on (its first process sets its parent-death signal only
/// later, and leaves bubblewrap's group for a session of its own): it
/// is killed through that first process when the bot is stopped or
/// dropped. Reproduced by stopping the first process (SIGSTOP) as soon
/// as bubblewrap names it, before its session, killing bubblewrap
/// alone, and letting the first process go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_whose_bubblewrap_ended_during_its_setup_is_killed_with_the_bot() {
    let mut reproduced = 0;
    for i in 0..40 {
        let token = format!("orphaned-setup-{}-{i}", std::process::id());
        let mut p = BotProcess::spawn(
            &sh(&format!("echo up; while :; do sleep 0.01; done; : {token}")),
            &strict(),
        )
        .unwrap();
        let until = Instant::now() + Duration::from_secs(2);
        let first = loop {
            if let Some(f) = p.inside.as_mut().unwrap().first() {
                break f;
            }
            assert!(Instant::now() < until, "bubblewrap never named its child");
            std::thread::yield_now();
        };
        let first_pid = Pid::from_raw(first);
        nix::sys::signal::kill(first_pid, Signal::SIGSTOP).unwrap();
        let group = procstat::parent_and_group_of(first).map(|(_, g)| g);
        if group == Some(first) {
            // Too late: its session is made; this round shows nothing.
            nix::sys::signal::kill(first_pid, Signal::SIGCONT).unwrap();
            p.terminate().await;
            continue;
        }
        let Leader::Own(child) = &mut p.leader else {
            panic!("not a program of its own");
        };
        child.start_kill().unwrap();
        let _ = child.wait().await;
        nix::sys::signal::kill(first_pid, Signal::SIGCONT).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        if holding(&token).is_empty() {
            // Its setup failed without its parent: nothing to show.
            continue;
        }
        reproduced += 1;
        if i % 2 == 0 {
            p.terminate().await;
        } else {
            drop(p);
        }
        assert!(all_gone(&token).await, "left: {:?}", holding(&token));
        if reproduced == 3 {
            return;
        }
    }
    panic!("the orphaned setup was reproduced {reproduced} times in 40");
}
