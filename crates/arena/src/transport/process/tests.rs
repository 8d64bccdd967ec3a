use super::*;

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

fn soon(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

fn alive(pid: i32) -> bool {
    // Signal 0 checks existence; a zombie still "exists", so look at /proc.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.split_whitespace().nth(2).is_none_or(|s| s != "Z"),
        Err(_) => false,
    }
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

#[tokio::test]
async fn a_bot_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let mut p = BotProcess::spawn(
        &sh("trap '' TERM; echo ready; while true; do sleep 0.05; done"),
        &limits(),
    )
    .unwrap();
    assert_eq!(p.recv(soon(2000)).await.unwrap(), "ready");
    let pid = p.child.id().unwrap() as i32;
    let start = Instant::now();
    p.terminate().await;
    assert!(start.elapsed() < Duration::from_secs(2));
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

mod prepared {
    use super::*;

    fn strict() -> ProcessLimits {
        ProcessLimits {
            sandbox: Sandbox::Strict(SandboxLimits::default()),
            ..limits()
        }
    }

    fn pid_of(p: &Prepared) -> Option<i32> {
        match &p.state {
            standby::State::Done(Some(s)) => s.pid(),
            _ => None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_prepared_sandbox_starts_its_program_and_loses_no_line() {
        let argv = sh("echo up; while read l; do echo \"got $l\"; done");
        for _ in 0..2 {
            let mut next = BotProcess::prepare(&argv, &strict()).expect("a sandbox to prepare");
            assert!(next.wait().await, "the sandbox was not set up");
            let pid = pid_of(&next).expect("a prepared sandbox runs");
            let mut p = BotProcess::spawn_prepared(next, &argv, &strict())
                .await
                .unwrap();
            // The program runs in the prepared sandbox, not a new one.
            assert_eq!(p.pgid, Some(Pid::from_raw(pid)));
            assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
            p.send(&["a".into(), "b".into()], soon(1000)).await.unwrap();
            assert_eq!(p.recv(soon(5000)).await.unwrap(), "got a");
            assert_eq!(p.recv(soon(5000)).await.unwrap(), "got b");
            p.terminate().await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_start_waits_for_a_sandbox_still_being_set_up() {
        let argv = sh("echo up; cat");
        let next = BotProcess::prepare(&argv, &strict()).expect("a sandbox to prepare");
        let mut p = BotProcess::spawn_prepared(next, &argv, &strict())
            .await
            .unwrap();
        assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
        p.terminate().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sandbox_prepared_for_another_command_or_limits_is_not_used_and_ends() {
        let argv = sh("echo a; cat");
        let other = sh("echo b; cat");
        let mut looser = strict();
        if let Sandbox::Strict(l) = &mut looser.sandbox {
            l.processes += 1;
        }
        for (cmd, lim, first) in [(&other, strict(), "b"), (&argv, looser, "a")] {
            let mut next = BotProcess::prepare(&argv, &strict()).expect("a sandbox to prepare");
            assert!(next.wait().await);
            let unused = pid_of(&next).expect("a prepared sandbox runs");
            let mut p = BotProcess::spawn_prepared(next, cmd, &lim).await.unwrap();
            assert_ne!(p.pgid, Some(Pid::from_raw(unused)));
            assert_eq!(p.recv(soon(5000)).await.unwrap(), first);
            p.terminate().await;
            // The unused one was dropped: killed whole.
            let t = std::time::Instant::now();
            while alive(unused) && t.elapsed() < Duration::from_secs(5) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert!(!alive(unused), "an unused prepared sandbox still runs");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_prepared_sandbox_dropped_unused_ends() {
        let argv = sh("cat");
        let mut next = BotProcess::prepare(&argv, &strict()).expect("a sandbox to prepare");
        assert!(next.wait().await);
        let pid = pid_of(&next).expect("a prepared sandbox runs");
        assert!(alive(pid));
        drop(next);
        let t = std::time::Instant::now();
        while alive(pid) && t.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(!alive(pid), "a dropped prepared sandbox still runs");
    }

    #[tokio::test]
    async fn an_unsandboxed_program_is_not_prepared() {
        assert!(BotProcess::prepare(&sh("cat"), &limits()).is_none());
    }
}

mod host_user {
    use super::*;

    /// The `Uid:`, `Gid:` and `Groups:` lines of a process's status.
    fn ids(pid: i32) -> Vec<String> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        status
            .lines()
            .filter(|l| l.starts_with("Uid:") || l.starts_with("Gid:") || l.starts_with("Groups:"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    }

    /// A sandbox started cold and one prepared ahead run, on the host, as
    /// `nobody` with no groups when croupier is root (the kernel does not
    /// apply the process limit to root), and as croupier's user otherwise.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sandbox_runs_as_nobody_on_the_host_when_croupier_is_root() {
        let strict = ProcessLimits {
            sandbox: Sandbox::Strict(SandboxLimits::default()),
            ..limits()
        };
        let me = ids(std::process::id() as i32);
        let argv = sh("echo up; cat");
        let next = BotProcess::prepare(&argv, &strict).expect("a sandbox to prepare");
        let prepared = BotProcess::spawn_prepared(next, &argv, &strict);
        let cold = BotProcess::spawn(&argv, &strict).unwrap();
        for mut p in [prepared.await.unwrap(), cold] {
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
}
