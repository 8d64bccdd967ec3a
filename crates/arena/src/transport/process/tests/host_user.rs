//! Who a sandboxed program runs as on the host, and the limits it gets,
//! in a sandbox of its own and as a held sandbox's round.

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

/// The `Uid:`, `Gid:` and `Groups:` lines of a process's status, and its
/// capability sets but the bounding one.
fn ids(pid: i32) -> Vec<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let shown = [
        "Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:", "CapAmb:",
    ];
    status
        .lines()
        .filter(|l| shown.iter().any(|s| l.starts_with(s)))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// A sandbox started cold and a round's program in a held one run, on the host, as
/// `nobody` with no groups and no capability when croupier is root (the
/// kernel does not apply the process limit to root; a cold start's
/// spawner thread switches user itself, `as_user`), and as croupier's
/// user otherwise.
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
                    "Groups:",
                    "CapInh: 0000000000000000",
                    "CapPrm: 0000000000000000",
                    "CapEff: 0000000000000000",
                    "CapAmb: 0000000000000000",
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
