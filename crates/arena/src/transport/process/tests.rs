use super::stop::signal_group;
use super::*;

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

fn soon(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

fn alive(pid: i32) -> bool {
    // Signal 0 checks existence; a zombie still "exists", so look at /proc.
    lifetime::running(Pid::from_raw(pid))
}

fn limits() -> ProcessLimits {
    ProcessLimits {
        grace: Duration::from_millis(200),
        ..ProcessLimits::default()
    }
}

#[tokio::test]
async fn lines_go_both_ways() {
    let mut p =
        BotProcess::spawn(&sh("while read l; do echo \"got $l\"; done"), &limits()).unwrap();
    p.send(&["a".into(), "b".into()], soon(1000)).await.unwrap();
    assert_eq!(p.recv(soon(2000)).await.unwrap(), "got a");
    assert_eq!(p.recv(soon(2000)).await.unwrap(), "got b");
    p.terminate().await;
}

#[tokio::test]
async fn silence_times_out_at_the_deadline() {
    let mut p = BotProcess::spawn(&sh("sleep 5"), &limits()).unwrap();
    let start = Instant::now();
    assert_eq!(p.recv(soon(150)).await, Err(TransportError::Timeout));
    assert!(start.elapsed() < Duration::from_secs(2));
    p.terminate().await;
}

#[tokio::test]
async fn a_crash_is_reported_with_its_exit_status() {
    let mut p = BotProcess::spawn(&sh("echo bye >&2; exit 3"), &limits()).unwrap();
    match p.recv(soon(2000)).await {
        Err(TransportError::Closed(_)) => {}
        other => panic!("{other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(p.stderr_tail().contains("bye"));
    p.terminate().await;
}

/// A bot whose output closed while something it left holds its stderr
/// keeps the reader of its stderr, for whoever stops it to wait for the
/// rest (the first, short wait for it ran out).
#[tokio::test]
async fn the_stderr_reader_outlasting_the_end_of_output_is_kept() {
    let mut p = BotProcess::spawn(
        &sh("(sleep 2; echo late >&2) >/dev/null & echo up; exit 0"),
        &limits(),
    )
    .unwrap();
    assert_eq!(p.recv(soon(2000)).await.unwrap(), "up");
    assert!(matches!(
        p.recv(soon(2000)).await,
        Err(TransportError::Closed(_))
    ));
    let reader = p.stderr_reader.take().expect("the reader is kept");
    p.terminate().await;
    // Stopped with the bot's group, the child closes its stderr.
    assert!(tokio::time::timeout(Duration::from_secs(2), reader)
        .await
        .is_ok());
}

#[tokio::test]
async fn a_missing_program_is_an_error_not_a_panic() {
    let err = BotProcess::spawn(&["/nonexistent/bot".to_string()], &limits()).unwrap_err();
    assert!(matches!(err, TransportError::Io(_)));
    assert!(BotProcess::spawn(&[], &limits()).is_err());
}

#[tokio::test]
async fn an_overlong_line_is_refused_and_the_next_line_still_read() {
    let l = ProcessLimits {
        max_line: 1000,
        ..limits()
    };
    let mut p = BotProcess::spawn(
        &sh("head -c 5000 /dev/zero | tr '\\\\0' x; echo; echo ok"),
        &l,
    )
    .unwrap();
    assert_eq!(
        p.recv(soon(2000)).await,
        Err(TransportError::LineTooLong(1000))
    );
    assert_eq!(p.recv(soon(2000)).await.unwrap(), "ok");
    p.terminate().await;
}

#[tokio::test]
async fn a_ten_megabyte_line_costs_bounded_memory() {
    let mut p = BotProcess::spawn(
        &sh("head -c 10000000 /dev/zero | tr '\\\\0' x; echo; echo after"),
        &limits(),
    )
    .unwrap();
    assert!(matches!(
        p.recv(soon(5000)).await,
        Err(TransportError::LineTooLong(_))
    ));
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "after");
    p.terminate().await;
}

#[tokio::test]
async fn stderr_floods_are_kept_bounded_and_apart_from_answers() {
    let l = ProcessLimits {
        stderr_keep: 1000,
        ..limits()
    };
    let mut p = BotProcess::spawn(&sh("head -c 3000000 /dev/zero >&2; echo answer"), &l).unwrap();
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "answer");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(p.stderr_tail().len() <= 1000);
    assert!(p.stderr.lock().unwrap().total() >= 1_000_000);
    p.terminate().await;
}

/// Starts a program that ignores SIGTERM under `limits` and stops it:
/// how long the stop took, and its first process (bubblewrap in a
/// sandbox).
async fn stop_one_ignoring_sigterm(limits: &ProcessLimits) -> (Duration, i32) {
    let mut p = BotProcess::spawn(
        &sh("trap '' TERM; echo ready; while true; do sleep 0.05; done"),
        limits,
    )
    .unwrap();
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "ready");
    let pid = p.pgid.unwrap().as_raw();
    let start = Instant::now();
    p.terminate().await;
    (start.elapsed(), pid)
}

#[tokio::test]
async fn a_bot_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let (took, pid) = stop_one_ignoring_sigterm(&limits()).await;
    assert!(took < Duration::from_secs(2));
    assert!(!alive(pid));
}

#[tokio::test]
async fn children_the_bot_forks_are_stopped_with_it() {
    let mut p = BotProcess::spawn(&sh("sleep 60 & echo $!; wait"), &limits()).unwrap();
    let grandchild: i32 = p.recv(soon(2000)).await.unwrap().trim().parse().unwrap();
    assert!(alive(grandchild));
    p.terminate().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!alive(grandchild), "the forked child outlived the bot");
}

#[tokio::test]
async fn dropping_the_handle_kills_the_bot() {
    let mut p = BotProcess::spawn(&sh("echo $$; sleep 60"), &limits()).unwrap();
    let pid: i32 = p.recv(soon(2000)).await.unwrap().trim().parse().unwrap();
    drop(p);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!alive(pid));
}

#[tokio::test]
async fn a_bot_that_closes_stdout_is_seen_as_closed() {
    let mut p = BotProcess::spawn(&sh("exec 1>&-; sleep 60"), &limits()).unwrap();
    assert!(matches!(
        p.recv(soon(2000)).await,
        Err(TransportError::Closed(_))
    ));
    p.terminate().await;
}

#[tokio::test]
async fn a_bot_that_never_reads_cannot_block_our_writes() {
    let mut p = BotProcess::spawn(&sh("sleep 60"), &limits()).unwrap();
    let big: Vec<String> = (0..20_000)
        .map(|i| format!("line {i} of padding padding padding"))
        .collect();
    let r = p.send(&big, soon(300)).await;
    assert_eq!(r, Err(TransportError::Timeout));
    p.terminate().await;
}

#[tokio::test]
async fn a_last_line_without_newline_still_counts() {
    let mut p = BotProcess::spawn(&sh("printf 7"), &limits()).unwrap();
    assert_eq!(p.recv(soon(2000)).await.unwrap(), "7");
    p.terminate().await;
}

/// A held round's program that has not made its group yet (here, a
/// child of this test in the test's group, this test standing for its
/// holder) is signalled alone; one that is not its holder's child is not.
#[test]
fn a_leader_not_yet_leading_its_group_is_signalled_alone() {
    let mut sleep = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = Pid::from_raw(sleep.id() as i32);
    let me = std::process::id() as i32;
    let ours = super::held::HeldLeader::running(pid, me);
    let not_ours = super::held::HeldLeader::running(pid, me + 1);
    assert!(ours.before_its_group());
    assert!(!not_ours.before_its_group());
    signal_group(pid, Signal::SIGKILL, || not_ours.before_its_group());
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        sleep.try_wait().unwrap().is_none(),
        "not its holder's child"
    );
    signal_group(pid, Signal::SIGKILL, || ours.before_its_group());
    let status = sleep.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9));
}

mod held;
mod seccomp;

mod host_user {
    use super::*;

    /// `argv` started as a held sandbox's round and in a sandbox of its
    /// own (the held sandbox is kept alive by the caller).
    async fn round_and_cold(
        argv: &[String],
        strict: &ProcessLimits,
    ) -> (Option<Held>, [BotProcess; 2]) {
        let mut held = None;
        let round = BotProcess::spawn_held(&mut held, argv, strict)
            .await
            .unwrap();
        let cold = BotProcess::spawn(argv, strict).unwrap();
        (held, [round, cold])
    }

    /// The `Uid:`, `Gid:` and `Groups:` lines of a process's status.
    fn ids(pid: i32) -> Vec<String> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        status
            .lines()
            .filter(|l| l.starts_with("Uid:") || l.starts_with("Gid:") || l.starts_with("Groups:"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    }

    /// A sandbox started cold and a round's program in a held one run, on the host, as
    /// `nobody` with no groups when croupier is root (the kernel does not
    /// apply the process limit to root), and as croupier's user otherwise.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sandbox_runs_as_nobody_on_the_host_when_croupier_is_root() {
        let strict = ProcessLimits {
            sandbox: Sandbox::Strict(SandboxLimits::default()),
            ..limits()
        };
        let me = ids(std::process::id() as i32);
        let (_held, started) = round_and_cold(&sh("echo up; cat"), &strict).await;
        for mut p in started {
            assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
            let leader = p.pgid.expect("a process group").as_raw();
            let seen = ids(leader);
            if super::super::sandbox::is_root() {
                assert_eq!(
                    seen,
                    [
                        "Uid: 65534 65534 65534 65534",
                        "Gid: 65534 65534 65534 65534",
                        "Groups:"
                    ]
                );
            } else {
                assert_eq!(seen[..2], me[..2]);
            }
            p.terminate().await;
        }
    }

    /// The sandbox's limits (set on its first process before it may go
    /// on, or by `prlimit` inside) reach the program and what it starts,
    /// cold and in a held sandbox, soft and hard alike.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_sandboxs_limits_reach_its_program() {
        let asked = SandboxLimits {
            memory: 300 << 20,
            cpu_seconds: 123,
            processes: 37,
            open_files: 41,
            file_size: 3 << 20,
            ..SandboxLimits::default()
        };
        let strict = ProcessLimits {
            sandbox: Sandbox::Strict(asked.clone()),
            ..limits()
        };
        // `cat` is a child of the shell.
        let argv = sh("cat /proc/self/limits; echo end");
        let (_held, started) = round_and_cold(&argv, &strict).await;
        for mut p in started {
            let mut seen = String::new();
            loop {
                let line = p.recv(soon(5000)).await.unwrap();
                if line == "end" {
                    break;
                }
                seen.push_str(&line);
                seen.push('\n');
            }
            // 314572800, 123, 37, 41 and 3145728, soft and hard.
            limiter::shows(&seen, &asked).unwrap();
            p.terminate().await;
        }
        // Here (Perl, pidfds, bubblewrap not setuid) they were set from
        // outside, at the gate.
        if std::path::Path::new("/usr/bin/perl").is_file() && !inside::bwrap_is_setuid() {
            assert!(inside::gated());
        }
    }

    /// Limits that cannot be set (more open files than the kernel allows
    /// any process) keep the program from ever starting: its sandbox is
    /// killed at the gate (or `prlimit` inside fails), cold and held.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sandbox_whose_limits_cannot_be_set_never_starts_its_program() {
        let strict = ProcessLimits {
            sandbox: Sandbox::Strict(SandboxLimits {
                open_files: 1 << 40,
                ..SandboxLimits::default()
            }),
            ..limits()
        };
        let argv = sh("echo started; cat");
        let mut held = None;
        let round = BotProcess::spawn_held(&mut held, &argv, &strict).await;
        let cold = BotProcess::spawn(&argv, &strict);
        // Refused at the start, or ended without a word.
        for mut p in [round, cold].into_iter().flatten() {
            let said = p.recv(soon(5000)).await;
            assert!(
                !matches!(&said, Ok(l) if l == "started"),
                "the program ran: {said:?}"
            );
            p.terminate().await;
        }
    }
}

mod cold_sandbox {
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
        let mut p =
            BotProcess::spawn(&[bot_path.to_string_lossy().into_owned()], &strict()).unwrap();
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
}
