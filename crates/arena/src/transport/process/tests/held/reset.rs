//! A held sandbox cleared for another match ([`Held::reset`]): nothing of
//! the last match (processes, files, IPC objects) reaches the next.

use super::*;

/// The lines a round's program says until `end`.
async fn said(p: &mut BotProcess) -> Vec<String> {
    let mut lines = Vec::new();
    loop {
        let line = p.recv(soon(5000)).await.unwrap();
        if line == "end" {
            return lines;
        }
        lines.push(line);
    }
}

/// Leaves a daemon (waited for, up to 3 s, until it runs `sleep`), files
/// in every writable place and System V and POSIX IPC objects behind, and
/// says what it left (as [`LOOK`] sees it). In one line, as each test's
/// commands are: a command with a line break starts in a sandbox of its
/// own.
const LEAVE: &str = "setsid sleep 4242 </dev/null >/dev/null 2>&1 & d=$!; i=0; \
    until [ \"$(tr '\\0' ' ' </proc/$d/cmdline 2>/dev/null)\" = 'sleep 4242 ' ] || \
    [ $i -ge 300 ]; do i=$((i + 1)); sleep 0.01; done; \
    echo a >/tmp/a; echo b >/tmp/.b; mkdir -p /tmp/d/e; echo c >/tmp/d/e/c; \
    echo s >/dev/shm/s; echo q >/dev/mqueue/q; \
    ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null; ipcmk -S 1 >/dev/null";

/// Says which writable place is closed, what is in them, the System V objects and any
/// process of the daemon, one line each, then `end`.
const LOOK: &str = concat!(
    r#"for d in /tmp /dev/shm /dev/mqueue; do [ -r $d ] && [ -w $d ] || echo "shut $d"; done; "#,
    r#"ls -A /tmp /dev/shm /dev/mqueue | grep -v -e : -e '^$' | sed 's/^/file /'; "#,
    r#"cat /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem | grep -v key | sed 's/^/ipc /'; "#,
    r#"for p in /proc/[0-9]*; do [ "$(tr '\0' ' ' <$p/cmdline 2>/dev/null)" = 'sleep 4242 ' ] && echo "process $p"; done; "#,
    "echo end"
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(super) async fn a_reset_sandbox_keeps_nothing_of_the_last_match() {
    let mut held = None;
    let mut p = start(&mut held, &sh(&format!("{LEAVE}; {LOOK}"))).await;
    let left = said(&mut p).await;
    // The round did leave all of it (else the check below proves nothing).
    for what in ["file a", "file .b", "file d", "file s", "file q"] {
        assert!(left.iter().any(|l| l == what), "{what} not left: {left:?}");
    }
    assert_eq!(left.iter().filter(|l| l.starts_with("ipc ")).count(), 3);
    assert_eq!(left.iter().filter(|l| l.starts_with("process ")).count(), 1);
    p.terminate().await;
    let h = held.as_mut().expect("held");
    let sandbox = h.pid().expect("runs");
    h.reset().await.expect("cleared");
    // The next match's first round, in the same sandbox, finds nothing.
    let mut p = start(&mut held, &sh(LOOK)).await;
    assert_eq!(held.as_ref().and_then(|h| h.pid()), Some(sandbox));
    assert_eq!(said(&mut p).await, Vec::<String>::new());
    p.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(super) async fn a_reset_kills_a_round_still_running() {
    let mut held = None;
    let p = start(&mut held, &sh("trap '' TERM; echo up; exec sleep 30")).await;
    let program = leader(&p);
    // Not stopped: the reset kills it (with everything else inside).
    std::mem::forget(p);
    held.as_mut().expect("held").reset().await.expect("cleared");
    assert!(
        gone(program).await,
        "the round's program survived the reset"
    );
    let mut p = start(&mut held, &sh("echo next")).await;
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "next");
    p.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(super) async fn folders_a_program_closed_are_cleared_too() {
    let mut held = None;
    // Files in folders closed to writing (and `/tmp` itself closed).
    cleared_after(
        &mut held,
        "mkdir -p /tmp/shut/in; echo x >/tmp/shut/in/f; chmod 500 /tmp/shut/in /tmp/shut; \
         echo y >/dev/shm/g; chmod 000 /dev/shm /tmp; echo done",
    )
    .await;
}

/// Runs `script` (which ends saying `done`) as a round in `held`'s
/// sandbox, clears the sandbox, and checks that the next round finds
/// nothing (as [`LOOK`] sees it).
async fn cleared_after(held: &mut Option<Held>, script: &str) {
    let mut p = start(held, &sh(script)).await;
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "done", "{script}");
    p.terminate().await;
    held.as_mut().expect("held").reset().await.expect("cleared");
    let mut p = start(held, &sh(LOOK)).await;
    assert_eq!(said(&mut p).await, Vec::<String>::new(), "after {script}");
    p.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(super) async fn what_is_left_beside_empty_folders_is_cleared_too() {
    let mut held = None;
    // No file anywhere, but System V objects, and `/tmp` and `/dev/shm`
    // closed: the Perl holder's clearing may not stop at the empty folders.
    cleared_after(
        &mut held,
        "ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null; ipcmk -S 1 >/dev/null; \
         chmod 000 /dev/shm /tmp; echo done",
    )
    .await;
    // A round that left nothing: cleared as quickly, and still clear.
    cleared_after(&mut held, "echo done").await;
}

/// A round's program runs as its holder's user and may lower its
/// priority or its limits, which the next match's programs would inherit:
/// the Perl holder then refuses to be used again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_a_round_changed_is_not_used_again() {
    if Kind::here() != Kind::Perl {
        eprintln!("SKIPPED: only the Perl holder checks itself");
        return;
    }
    let holder = crate::transport::process::held::HOLDER_PID;
    for change in [
        format!("renice -n 19 -p {holder}"),
        format!("prlimit --pid {holder} --nofile=10:10"),
        format!("ionice -c 3 -p {holder}"),
    ] {
        let mut held = None;
        let mut p = start(
            &mut held,
            &sh(&format!("{change} >/dev/null && echo changed")),
        )
        .await;
        assert_eq!(p.recv(soon(5000)).await.unwrap(), "changed", "{change}");
        p.terminate().await;
        let h = held.as_mut().expect("held");
        assert!(
            h.reset().await.is_err(),
            "{change}: the sandbox was cleared for reuse"
        );
    }
    // Unchanged, it is cleared.
    let mut held = None;
    let mut p = start(&mut held, &sh("echo unchanged")).await;
    assert_eq!(p.recv(soon(5000)).await.unwrap(), "unchanged");
    p.terminate().await;
    held.as_mut().expect("held").reset().await.expect("cleared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_whose_holder_is_gone_cannot_be_reset() {
    let mut held = None;
    let holder = crate::transport::process::held::HOLDER_PID;
    // The program waits for a line before it kills the holder: a holder
    // killed while the round still starts gives the sandbox up at once.
    let mut p = start(
        &mut held,
        &sh(&format!("read x; kill -9 {holder}; echo done")),
    )
    .await;
    assert!(held.is_some(), "the round started in a held sandbox");
    p.send(&["go".into()], soon(5000)).await.unwrap();
    let _ = p.recv(soon(5000)).await;
    p.terminate().await;
    let h = held.as_mut().expect("held");
    let t = std::time::Instant::now();
    // Seen as ended, not merely timed out (which would take 2 s).
    let e = h.reset().await.expect_err("a reset without its holder");
    assert!(e.to_string().contains("ended"), "{e}");
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(super) async fn a_bots_folder_inside_tmp_is_kept_and_the_rest_cleared() {
    use std::os::unix::fs::PermissionsExt;
    // The bot's folder lies inside the host's /tmp, two folders down: the
    // sandbox mounts it inside its own /tmp, on folders made on the way.
    let top = tempfile::Builder::new()
        .prefix("croupier-held-bot-")
        .tempdir_in("/tmp")
        .unwrap();
    let folder = top.path().join("sub");
    std::fs::create_dir(&folder).unwrap();
    let bot = folder.join("bot.sh");
    std::fs::write(
        &bot,
        "#!/bin/sh\nup=${0%/*/*}\n[ \"$1\" = leave ] && echo x >/tmp/x && echo y >\"$up/y\"\n\
         find /tmp | sort; echo end\n",
    )
    .unwrap();
    for (p, mode) in [(top.path(), 0o755), (&folder, 0o755), (&bot, 0o755)] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let argv = |word: &str| vec![bot.to_string_lossy().into_owned(), word.to_string()];
    let mut held = None;
    let mut p = start(&mut held, &argv("leave")).await;
    let left = said(&mut p).await;
    let up = top.path().to_string_lossy().into_owned();
    assert!(left.contains(&"/tmp/x".to_string()), "{left:?}");
    assert!(left.contains(&format!("{up}/y")), "{left:?}");
    p.terminate().await;
    let h = held.as_mut().expect("held");
    let sandbox = h.pid();
    h.reset().await.expect("cleared");
    let mut p = start(&mut held, &argv("look")).await;
    assert_eq!(held.as_ref().and_then(|h| h.pid()), sandbox);
    // Only the way to the bot's folder, and the folder, are left.
    let f = folder.to_string_lossy().into_owned();
    let expected: Vec<String> = vec!["/tmp".into(), up.clone(), f.clone(), format!("{f}/bot.sh")];
    assert_eq!(said(&mut p).await, expected);
    p.terminate().await;
}

/// A bot's folder right inside the host's `/tmp`, and a bot's program
/// right in it (the top of the sandbox's `/tmp` holds their mount point
/// alone): what a round leaves there is cleared, and a sandbox with
/// nothing left (only the mount point: the holder sees it clear without
/// the shell's `find`s) is kept, with what is mounted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(super) async fn a_bots_folder_right_inside_tmp_is_kept_and_nothing_else() {
    use std::os::unix::fs::PermissionsExt;
    const SCRIPT: &str = "#!/bin/sh\n[ \"$1\" = leave ] && echo x >/tmp/.x && mkdir /tmp/d\n\
         find /tmp | sort; echo end\n";
    let folder = tempfile::Builder::new()
        .prefix("croupier-held-top-")
        .tempdir_in("/tmp")
        .unwrap();
    let in_folder = folder.path().join("bot.sh");
    std::fs::write(&in_folder, SCRIPT).unwrap();
    for p in [folder.path(), &in_folder] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let f = folder.path().to_string_lossy().into_owned();
    let clean: Vec<String> = vec!["/tmp".into(), f.clone(), format!("{f}/bot.sh")];
    kept_with_nothing_else(&in_folder, &clean).await;

    let alone = tempfile::Builder::new()
        .prefix("croupier-held-bot-")
        .tempfile_in("/tmp")
        .unwrap();
    std::fs::write(alone.path(), SCRIPT).unwrap();
    std::fs::set_permissions(alone.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Closed: a file open for writing cannot be run.
    let alone = alone.into_temp_path();
    let clean: Vec<String> = vec!["/tmp".into(), alone.to_string_lossy().into_owned()];
    kept_with_nothing_else(&alone, &clean).await;
}

/// Runs `bot` leaving files in `/tmp`, then twice, after a reset each,
/// looking: it must see `clean`, in the same sandbox.
async fn kept_with_nothing_else(bot: &std::path::Path, clean: &[String]) {
    let argv = |word: &str| vec![bot.to_string_lossy().into_owned(), word.to_string()];
    let mut held = None;
    let mut p = start(&mut held, &argv("leave")).await;
    let left = said(&mut p).await;
    assert!(left.contains(&"/tmp/.x".to_string()), "{left:?}");
    assert!(left.contains(&"/tmp/d".to_string()), "{left:?}");
    p.terminate().await;
    let sandbox = held.as_ref().and_then(|h| h.pid());
    for round in 0..2 {
        held.as_mut().expect("held").reset().await.expect("cleared");
        let mut p = start(&mut held, &argv("look")).await;
        assert_eq!(
            held.as_ref().and_then(|h| h.pid()),
            sandbox,
            "round {round}"
        );
        assert_eq!(said(&mut p).await, clean, "round {round}");
        p.terminate().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_holders_output_is_read_a_short_line_at_a_time() {
    // An endless line (a round's program cannot reach the Perl holder's
    // stdout, `/proc/2/fd/1`; the shell holder's it can, as the same user:
    // this bounds what croupier reads from one that writes there): the
    // listener stops and the sandbox counts as gone.
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", "yes x | tr -d '\\n'"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (tx, mut progress) = tokio::sync::watch::channel(Default::default());
    let listener = tokio::spawn(crate::transport::process::held::listen(
        child.stdout.take().unwrap(),
        tx,
    ));
    let ended = tokio::time::timeout(Duration::from_secs(5), listener).await;
    assert!(ended.is_ok(), "the listener reads an endless line");
    assert!(progress.borrow_and_update().gone);
}
