//! Sandboxes held for a match ([`Held`]): rounds started inside, the
//! holders, signals, wear; clearing for another match in [`reset`].

use super::*;
use crate::transport::process::holder::Kind;
use nix::sys::signal::killpg;

mod quiet;
mod reset;

fn strict() -> ProcessLimits {
    ProcessLimits {
        sandbox: Sandbox::Strict(SandboxLimits::default()),
        ..limits()
    }
}

/// Whether `ancestor` is `pid` or one of its ancestors (from `/proc`).
fn below(pid: i32, ancestor: i32) -> bool {
    let mut p = pid;
    for _ in 0..32 {
        if p == ancestor {
            return true;
        }
        let parent = procstat::parent_and_group_of(p);
        match parent {
            Some((q, _)) if q > 1 => p = q,
            _ => return false,
        }
    }
    false
}

async fn gone(pid: i32) -> bool {
    let t = std::time::Instant::now();
    while alive(pid) && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    !alive(pid)
}

thread_local! {
    /// The holder the sandboxes [`start`] sets up run (this host's
    /// when `None`), for [`the_shell_holder_passes_the_same_tests`].
    static HOLDER: std::cell::Cell<Option<Kind>> = const { std::cell::Cell::new(None) };
}

/// A round's program in the sandbox `held` keeps (set up at the first),
/// which must start there: not on its own, as `spawn_held` starts it
/// when the sandbox cannot be used (a test would then pass without
/// one), and, when the test says so, with the shell holder.
async fn start(held: &mut Option<Held>, argv: &[String]) -> BotProcess {
    let kind = HOLDER.with(std::cell::Cell::get);
    if let (None, Some(kind)) = (held.as_ref(), kind) {
        let what = held_for(argv, &strict());
        *held = Some(Held::set_up(argv, &strict(), what, kind).unwrap());
    }
    let p = BotProcess::spawn_held(held, argv, &strict()).await.unwrap();
    assert!(held.is_some(), "the held sandbox was given up");
    assert!(
        matches!(p.leader, Leader::Held(_)),
        "the round started in a sandbox of its own"
    );
    if kind == Some(Kind::Sh) {
        assert_eq!(holder_program(held), "/bin/sh");
    }
    p
}

/// The first word of the command of the holder of `held`.
fn holder_program(held: &Option<Held>) -> String {
    let pid = held
        .as_ref()
        .and_then(Held::holder_pid)
        .expect("a holder found");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
    String::from_utf8_lossy(first).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_holder_is_perl_where_the_host_has_it() {
    let mut held = None;
    let mut p = start(&mut held, &sh("echo up")).await;
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
    let expected = match Kind::here() {
        Kind::Perl => "/usr/bin/perl",
        Kind::Sh => "/bin/sh",
    };
    assert_eq!(
        Kind::here() == Kind::Perl,
        std::path::Path::new("/usr/bin/perl").is_file()
    );
    assert_eq!(holder_program(&held), expected);
    p.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rounds_program_leads_a_session_and_a_group_of_its_own() {
    // Its pid, process group and session inside the sandbox.
    let argv = sh("read -r _ _ _ _ g s _ </proc/$$/stat; echo \"$$ $g $s\"");
    let mut held = None;
    for _ in 0..2 {
        let mut p = start(&mut held, &argv).await;
        let line = p.recv(soon(5000)).await.unwrap();
        let ids: Vec<&str> = line.split(' ').collect();
        assert_eq!(ids.len(), 3, "{line}");
        assert!(ids.iter().all(|i| *i == ids[0]), "{line}");
        p.terminate().await;
    }
}

/// The shell holder, used where the host has no Perl, passes the tests
/// of rounds and resets the Perl holder passes (each test builds its
/// own runtime on this thread, whose [`HOLDER`] says which to use).
#[test]
fn the_shell_holder_passes_the_same_tests() {
    struct Back;
    impl Drop for Back {
        fn drop(&mut self) {
            HOLDER.with(|k| k.set(None));
        }
    }
    let _back = Back;
    HOLDER.with(|k| k.set(Some(Kind::Sh)));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut held = None;
        let mut p = start(&mut held, &sh("echo up")).await;
        assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
        assert_eq!(holder_program(&held), "/bin/sh");
        p.terminate().await;
    });
    drop(rt);
    every_round_starts_in_the_one_sandbox_on_fresh_pipes();
    a_rounds_program_leads_a_session_and_a_group_of_its_own();
    a_program_that_ignores_sigterm_is_killed_and_the_next_round_starts();
    a_round_that_exits_says_how_and_its_input_ends_when_closed();
    a_round_starts_while_the_last_one_runs_and_each_says_how_it_ended();
    a_program_that_ends_at_once_keeps_its_round_and_its_sandbox();
    a_rounds_exit_ends_the_children_it_left_in_its_group();
    commands_that_differ_in_a_word_naming_no_file_share_the_sandbox();
    reset::a_reset_sandbox_keeps_nothing_of_the_last_match();
    reset::a_reset_kills_a_round_still_running();
    reset::folders_a_program_closed_are_cleared_too();
    reset::what_is_left_beside_empty_folders_is_cleared_too();
    reset::a_bots_folder_inside_tmp_is_kept_and_the_rest_cleared();
    reset::a_bots_folder_right_inside_tmp_is_kept_and_nothing_else();
}

fn leader(p: &BotProcess) -> i32 {
    p.pgid.expect("a process group").as_raw()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_round_starts_in_the_one_sandbox_on_fresh_pipes() {
    // It reads one line and answers it, then leaves the rest unread.
    let argv = sh("read first; echo \"r $first\"; echo \"e $first\" >&2; exec sleep 30");
    let mut held = None;
    let mut sandbox = None;
    for round in ["x", "y", "z"] {
        let mut p = start(&mut held, &argv).await;
        let h = held.as_ref().expect("a sandbox held for the match");
        let pid = h.pid().expect("the held sandbox runs");
        assert_eq!(*sandbox.get_or_insert(pid), pid, "a new sandbox");
        assert!(below(leader(&p), pid), "the program runs outside it");
        assert_ne!(leader(&p), pid);
        // What the last round left unread does not reach this one.
        p.send(&[round.to_string(), "left over".into()], soon(1000))
            .await
            .unwrap();
        assert_eq!(p.recv(soon(5000)).await.unwrap(), format!("r {round}"));
        let t = std::time::Instant::now();
        while !p.stderr_tail().contains('e') && t.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(p.stderr_tail(), format!("e {round}\n"));
        let program = leader(&p);
        p.terminate().await;
        assert!(gone(program).await, "the round's program still runs");
    }
    // The FIFOs of finished rounds are gone too.
    let h = held.take().expect("still held");
    let left: Vec<_> = std::fs::read_dir(h.dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    let pid = h.pid().unwrap();
    drop(h);
    assert!(gone(pid).await, "a dropped held sandbox still runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_ignores_sigterm_is_killed_and_the_next_round_starts() {
    let argv = sh("trap '' TERM; echo up; exec sleep 30");
    let mut held = None;
    let mut first = None;
    for _ in 0..2 {
        let mut p = start(&mut held, &argv).await;
        let pid = held.as_ref().and_then(|h| h.pid()).expect("held");
        assert_eq!(*first.get_or_insert(pid), pid, "a new sandbox");
        assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
        let program = leader(&p);
        p.terminate().await;
        assert!(!alive(program), "terminate left it running");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_that_exits_says_how_and_its_input_ends_when_closed() {
    let mut held = None;
    let argv = sh("read x; exit 3");
    let mut p = start(&mut held, &argv).await;
    p.send(&["go".into()], soon(1000)).await.unwrap();
    closed(&mut p, 5000, " (exit status: 3)").await;
    p.terminate().await;
    // The end of its input reaches the program.
    let argv = sh("cat; echo after");
    let mut p = start(&mut held, &argv).await;
    p.send(&["a".into()], soon(1000)).await.unwrap();
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "a");
    p.stdin = None;
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "after");
    p.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_starts_while_the_last_one_runs_and_each_says_how_it_ended() {
    let mut held = None;
    let argv = sh("echo up; read code; exit $code");
    let mut first = start(&mut held, &argv).await;
    assert_eq!(first.recv(soon(5000)).await.unwrap(), "up");
    let mut second = start(&mut held, &argv).await;
    assert_eq!(second.recv(soon(5000)).await.unwrap(), "up");
    // The second ends first.
    for (p, code) in [(&mut second, 5), (&mut first, 4)] {
        p.send(&[code.to_string()], soon(1000)).await.unwrap();
        match p.recv(soon(5000)).await {
            Err(TransportError::Closed(how)) => {
                assert_eq!(how, format!(" (exit status: {code})"))
            }
            other => panic!("{other:?}"),
        }
    }
    first.terminate().await;
    second.terminate().await;
}

/// A round's program that exits while a child it left in its group
/// holds its output open has ended all the same, as in a sandbox of
/// its own (where the end of the first process ends the sandbox): its
/// group goes with it, and the exit is seen at once, not as silence
/// (a per-match program that could not fork looked like a timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rounds_exit_ends_the_children_it_left_in_its_group() {
    let mut held = None;
    let mut p = start(&mut held, &sh("sleep 300 & echo up; exit 3")).await;
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
    closed(&mut p, 3000, " (exit status: 3)").await;
    p.terminate().await;
}

/// Asserts that the program's output ends within `ms`, how it ended
/// being `how`.
async fn closed(p: &mut BotProcess, ms: u64, how: &str) {
    match p.recv(soon(ms)).await {
        Err(TransportError::Closed(said)) => assert_eq!(said, how),
        other => panic!("{other:?}"),
    }
}

/// A program that ends at once can be reaped inside before Croupier
/// looks for it on the host: its round still counts, in the same
/// sandbox, with its output (it used to be given up, and the program
/// started again in a sandbox of its own: once in 50 rounds or so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_ends_at_once_keeps_its_round_and_its_sandbox() {
    let mut held = None;
    let mut first = None;
    for round in 0..40 {
        let argv = vec![
            "sh".to_string(),
            "-c".to_string(),
            "echo \"$0\"".to_string(),
            format!("round {round}"),
        ];
        let mut p = start(&mut held, &argv).await;
        let pid = held.as_ref().and_then(|h| h.pid()).expect("held");
        assert_eq!(
            *first.get_or_insert(pid),
            pid,
            "a new sandbox in round {round}"
        );
        assert_eq!(p.recv(soon(5000)).await.unwrap(), format!("round {round}"));
        closed(&mut p, 5000, " (exit status: 0)").await;
        p.terminate().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_that_differ_in_a_word_naming_no_file_share_the_sandbox() {
    let mut held = None;
    let mut first = None;
    let words = ["seed 1", "  two  spaces\\ and a backslash ", "3"];
    for word in words {
        let argv = vec![
            "sh".to_string(),
            "-c".to_string(),
            "printf '[%s]\\n' \"$0\"".to_string(),
            word.to_string(),
        ];
        let mut p = start(&mut held, &argv).await;
        let pid = held.as_ref().and_then(|h| h.pid()).expect("held");
        assert_eq!(*first.get_or_insert(pid), pid, "a new sandbox for {word:?}");
        assert_eq!(p.recv(soon(5000)).await.unwrap(), format!("[{word}]"));
        p.terminate().await;
    }
    // A word with a line break is not said to the holder: the program
    // starts on its own, and the sandbox stays held.
    let argv = sh("printf '%s' 'a\nb'");
    let mut p = BotProcess::spawn_held(&mut held, &argv, &strict())
        .await
        .unwrap();
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "a");
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "b");
    assert!(!below(leader(&p), first.unwrap()));
    assert_eq!(held.as_ref().and_then(|h| h.pid()), first);
    p.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_held_for_another_command_or_limits_is_dropped() {
    let argv = sh("echo a; cat");
    // A script in a folder of its own: its sandbox sees that folder.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("b.sh");
    std::fs::write(&script, "echo b; cat\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let other = vec!["sh".to_string(), script.to_string_lossy().into_owned()];
    let mut looser = strict();
    if let Sandbox::Strict(l) = &mut looser.sandbox {
        l.processes += 1;
    }
    for (cmd, lim, first) in [(&other, strict(), "b"), (&argv, looser, "a")] {
        let mut held = None;
        let p = start(&mut held, &argv).await;
        p.terminate().await;
        let old = held.as_ref().and_then(|h| h.pid()).expect("held");
        let mut p = BotProcess::spawn_held(&mut held, cmd, &lim).await.unwrap();
        let new = held.as_ref().and_then(|h| h.pid()).expect("held");
        assert_ne!(old, new);
        assert!(below(leader(&p), new));
        assert_eq!(p.recv(soon(5000)).await.unwrap(), first);
        p.terminate().await;
        assert!(
            gone(old).await,
            "the sandbox held for another start still runs"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_held_sandbox_ends_with_its_program() {
    let mut held = None;
    let mut p = BotProcess::spawn_held(&mut held, &sh("echo up; cat"), &strict())
        .await
        .unwrap();
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
    let (program, sandbox) = (leader(&p), held.as_ref().and_then(|h| h.pid()).unwrap());
    drop(held);
    assert!(gone(sandbox).await && gone(program).await);
    assert!(matches!(
        p.recv(soon(5000)).await,
        Err(TransportError::Closed(_))
    ));
    tokio::time::timeout(Duration::from_secs(5), p.terminate())
        .await
        .expect("terminate ends");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_sandbox_that_died_is_given_up_for_a_start_of_its_own() {
    let argv = sh("echo up; cat");
    let mut held = None;
    let p = start(&mut held, &argv).await;
    p.terminate().await;
    let pid = held.as_ref().and_then(|h| h.pid()).unwrap();
    let holder = held.as_ref().and_then(Held::holder_pid).unwrap();
    killpg(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    assert!(gone(pid).await);
    // The sandbox's inside ends after its first process: a holder
    // still alive could start the next round and then die.
    assert!(gone(holder).await, "the holder outlived its sandbox");
    let mut p = BotProcess::spawn_held(&mut held, &argv, &strict())
        .await
        .unwrap();
    assert!(held.is_none(), "a dead sandbox is kept");
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
    p.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_whose_holder_used_half_its_cpu_time_is_replaced() {
    let argv = sh("echo up");
    let mut held = None;
    let mut p = start(&mut held, &argv).await;
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
    p.terminate().await;
    let h = held.as_mut().expect("held");
    let old = h.pid().expect("the held sandbox runs");
    // Its holder has used some CPU time, which is at least none.
    h.wear_at(Duration::ZERO);
    let e = h.reset().await.expect_err("a worn sandbox is reset");
    assert!(e.to_string().contains("CPU time"), "{e}");
    // The next round starts elsewhere, and the round after in a new
    // sandbox held for the match.
    let p = BotProcess::spawn_held(&mut held, &argv, &strict())
        .await
        .unwrap();
    assert!(held.is_none(), "a worn sandbox is kept");
    p.terminate().await;
    assert!(gone(old).await, "the worn sandbox still runs");
    let mut p = start(&mut held, &argv).await;
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
    assert_ne!(held.as_ref().and_then(Held::pid), Some(old));
    p.terminate().await;
}

/// A round's program runs as the holder's user, but may not trace the
/// Perl holder, nor open its descriptors (its stdout, where it could
/// say that a reset cleared the sandbox).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rounds_program_cannot_reach_the_perl_holders_descriptors() {
    if Kind::here() != Kind::Perl {
        return;
    }
    let holder = crate::transport::process::held::HOLDER_PID;
    let argv = sh(&format!(
        "ls /proc/{holder}/fd >/dev/null 2>&1 && echo open || echo closed; \
         ls /proc/$$/fd >/dev/null 2>&1 && echo open || echo closed"
    ));
    let mut held = None;
    let mut p = start(&mut held, &argv).await;
    assert_eq!(holder_program(&held), "/usr/bin/perl");
    // The holder's are closed to it; its own are not.
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "closed");
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "open");
    p.terminate().await;
}

#[tokio::test]
async fn an_unsandboxed_program_is_not_held() {
    let mut held = None;
    let mut p = BotProcess::spawn_held(&mut held, &sh("echo up"), &limits())
        .await
        .unwrap();
    assert!(held.is_none());
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "up");
    p.terminate().await;
}
