//! The sandbox's filter: kernel keys are out of a bot program's reach,
//! in a sandbox of its own and in a held one; nothing else is refused.

use super::*;
use crate::transport::process::seccomp::filter;

/// What each keyring call gives a program: `-1 ERRNO` or `ok`. Where they
/// work, they change nothing that lasts: the key goes to the thread's own
/// keyring, the request finds nothing, `keyctl(KEYCTL_GET_KEYRING_ID, @u,
/// 0)` only reads.
fn keyring_calls() -> Vec<String> {
    // Each call's errno, read right after it; one line (a held sandbox
    // takes no word with a line break).
    let script = concat!(
        r#"my ($t, $d, $p) = ("user", "croupier-test", "v"); my @out; "#,
        r#"my $r = syscall($ARGV[0] + 0, $t, $d, $p, 1, -1); push @out, $r < 0 ? "-1 " . ($! + 0) : "ok"; "#,
        r#"$r = syscall($ARGV[1] + 0, $t, $d, 0, 0); push @out, $r < 0 ? "-1 " . ($! + 0) : "ok"; "#,
        r#"$r = syscall($ARGV[2] + 0, 0, -4, 0); push @out, $r < 0 ? "-1 " . ($! + 0) : "ok"; "#,
        r#"print join(",", @out), "\n";"#
    );
    let mut argv: Vec<String> = vec!["perl".into(), "-e".into(), script.into()];
    argv.extend(
        [
            nix::libc::SYS_add_key,
            nix::libc::SYS_request_key,
            nix::libc::SYS_keyctl,
        ]
        .map(|n| n.to_string()),
    );
    argv
}

fn have_perl() -> bool {
    std::path::Path::new("/usr/bin/perl").is_file()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_program_cannot_reach_kernel_keys() {
    if !have_perl() {
        eprintln!("SKIPPED: no perl");
        return;
    }
    let argv = keyring_calls();
    let enosys = format!("-1 {}", nix::libc::ENOSYS);
    let refused = format!("{enosys},{enosys},{enosys}");
    // Unsandboxed, the calls reach the kernel (the last one works): the
    // refusals below are the filter's.
    let mut p = BotProcess::spawn(&argv, &limits()).unwrap();
    let line = p.recv(soon(5000)).await.unwrap();
    assert!(line.ends_with(",ok"), "{line}");
    p.terminate().await;
    let strict = ProcessLimits {
        sandbox: Sandbox::Strict(SandboxLimits::default()),
        ..limits()
    };
    let mut p = BotProcess::spawn(&argv, &strict).unwrap();
    assert_eq!(
        p.recv(soon(5000)).await.unwrap(),
        refused,
        "a sandbox of its own"
    );
    p.terminate().await;
    // A held sandbox's rounds inherit the holder's filter.
    let mut held = None;
    for _ in 0..2 {
        let mut p = BotProcess::spawn_held(&mut held, &argv, &strict)
            .await
            .unwrap();
        assert!(matches!(p.leader, Leader::Held(_)), "not held");
        assert_eq!(p.recv(soon(5000)).await.unwrap(), refused, "a held sandbox");
        p.terminate().await;
    }
}

/// Runs the filter on one call, as the kernel would: the classic BPF
/// instructions it uses (load a word, AND, jump if equal, return).
fn verdict(prog: &[u8], arch: u32, nr: u32) -> u32 {
    let ops: Vec<(u16, u8, u8, u32)> = prog
        .chunks(8)
        .map(|c| {
            (
                u16::from_ne_bytes([c[0], c[1]]),
                c[2],
                c[3],
                u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
            )
        })
        .collect();
    let (mut pc, mut a) = (0usize, 0u32);
    loop {
        let (code, jt, jf, k) = ops[pc];
        pc += 1;
        match code {
            0x20 => a = if k == 0 { nr } else { arch },
            0x54 => a &= k,
            0x15 => pc += usize::from(if a == k { jt } else { jf }),
            0x06 => return k,
            other => panic!("unexpected instruction {other:#x}"),
        }
    }
}

#[test]
fn the_filter_refuses_the_keyring_calls_and_nothing_else() {
    let Some(prog) = filter() else {
        eprintln!("SKIPPED: no filter on this architecture");
        return;
    };
    assert_eq!(prog.len() % 8, 0);
    let allow = 0x7fff_0000;
    let refuse = 0x0005_0000 | nix::libc::ENOSYS as u32;
    #[cfg(target_arch = "x86_64")]
    {
        let (x86_64, i386) = (0xc000_003e, 0x4000_0003);
        for nr in [248, 249, 250, 0x4000_0000 | 250] {
            assert_eq!(verdict(&prog, x86_64, nr), refuse, "x86-64 call {nr:#x}");
        }
        for nr in [286, 287, 288] {
            assert_eq!(verdict(&prog, i386, nr), refuse, "i386 call {nr}");
        }
        for nr in [0, 1, 59, 247, 251, 0x4000_0000] {
            assert_eq!(verdict(&prog, x86_64, nr), allow, "x86-64 call {nr:#x}");
        }
        // i386's 250 is another call (fadvise64).
        for nr in [3, 250, 285, 289] {
            assert_eq!(verdict(&prog, i386, nr), allow, "i386 call {nr}");
        }
    }
    // A call of an architecture the filter does not know kills.
    assert_eq!(verdict(&prog, 0x1234, 0), 0x8000_0000);
}
