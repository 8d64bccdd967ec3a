//! Spare sandboxes ([`pool`]): a first start takes one set up ahead of
//! it, with its folders bound read-only and its working folder the one a
//! sandbox of its own would have; another spare does not see them.

use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::transport::process::held::Patience;
use crate::transport::process::spare as pool;

/// Limits of a kind of sandbox of its own (`tmp_mib`: its `/tmp`'s size),
/// so that tests running at once do not take each other's spares.
fn spared(tmp_mib: u64) -> ProcessLimits {
    ProcessLimits {
        sandbox: Sandbox::Strict(SandboxLimits {
            tmp_size: tmp_mib << 20,
            ..SandboxLimits::default()
        }),
        spare_sandboxes: true,
        ..limits()
    }
}

/// The spares ready for `l`, once [`pool::KEEP`] are (at most 20 s).
async fn spares_ready(l: &ProcessLimits) -> Vec<i32> {
    let until = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let ready = pool::ready(l);
        if ready.len() == pool::KEEP || std::time::Instant::now() > until {
            return ready;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A bot's folder (readable by the sandbox's user) with a program that
/// says where it works, what its data file holds and whether it may
/// write beside it, then echoes.
fn bot_folder(inside: &std::path::Path) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("spare-bot")
        .tempdir_in(inside)
        .unwrap();
    // Open to all: only a read-only mount keeps the bot from writing there.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(dir.path().join("data"), "the bot's own data\n").unwrap();
    let script = "echo \"in $(pwd)\"; cat \"$(dirname \"$0\")/data\"; \
                  if touch \"$(dirname \"$0\")/new\" 2>/dev/null; then echo wrote; else echo read-only; fi; \
                  if mkdir /new 2>/dev/null; then echo root-writable; else echo root-read-only; fi; \
                  while read l; do echo \"got $l\"; done";
    std::fs::write(dir.path().join("bot.sh"), script).unwrap();
    for f in ["data", "bot.sh"] {
        let p = dir.path().join(f);
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    dir
}

/// What the bot of [`bot_folder`] says first, and its echo.
async fn talk(p: &mut BotProcess) -> Vec<String> {
    let mut said = Vec::new();
    for _ in 0..4 {
        said.push(p.recv(soon(10_000)).await.unwrap());
    }
    p.send(&["ping".into()], soon(5_000)).await.unwrap();
    said.push(p.recv(soon(5_000)).await.unwrap());
    said
}

/// `sh` running the program of a [`bot_folder`] at `dir`, named as `dir`
/// is.
fn run_bot(dir: &std::path::Path) -> Vec<String> {
    vec!["sh".to_string(), dir.join("bot.sh").display().to_string()]
}

/// The first start of `argv` under `l`, which finds no spare (a sandbox
/// of its own): what the bot said, and the pids of the spares it left set
/// up, once ready.
async fn first_start(argv: &[String], l: &ProcessLimits) -> (Vec<String>, Vec<i32>) {
    let mut first = BotProcess::spawn_ready(argv, l).await.unwrap();
    assert!(first.sandbox.is_none(), "no spare was ready yet");
    let said = talk(&mut first).await;
    first.terminate().await;
    let spares = spares_ready(l).await;
    assert_eq!(spares.len(), pool::KEEP, "spares are set up after a start");
    (said, spares)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_start_takes_a_spare_with_its_folders_bound_read_only() {
    let l = spared(61);
    let bot = bot_folder(&std::env::temp_dir());
    let argv = run_bot(bot.path());
    // The first start of its kind finds no spare: a sandbox of its own.
    let (cold, spares) = first_start(&argv, &l).await;
    if !(is_root_here() && sandbox::start_as().is_some()) {
        // Folders are bound into a spare by root only: a sandbox of its own.
        let p = BotProcess::spawn_ready(&argv, &l).await.unwrap();
        assert!(p.sandbox.is_none());
        p.terminate().await;
        return;
    }
    let mut p = BotProcess::spawn_ready(&argv, &l).await.unwrap();
    assert!(p.sandbox.is_some(), "the start took a spare");
    let warm = talk(&mut p).await;
    // It sees what a sandbox of its own shows it, and works where that
    // one works.
    assert_eq!(warm, cold);
    assert_eq!(
        warm,
        [
            "in /tmp",
            "the bot's own data",
            "read-only",
            "root-read-only",
            "got ping"
        ]
    );
    assert!(!bot.path().join("new").exists());
    // The spare left in the pool does not see the bot's folder.
    let left: Vec<i32> = spares
        .iter()
        .copied()
        .filter(|pid| pool::ready(&l).contains(pid))
        .collect();
    assert!(!left.is_empty(), "one spare is left");
    for pid in left {
        let there = std::path::Path::new(&format!("/proc/{pid}/root"))
            .join(bot.path().strip_prefix("/").unwrap());
        assert!(
            !there.exists(),
            "{} is seen by another spare",
            there.display()
        );
    }
    p.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_named_from_the_working_folder_works_there_in_a_spare() {
    if !(is_root_here() && sandbox::start_as().is_some()) {
        return;
    }
    let l = spared(62);
    let cwd = std::env::current_dir().unwrap();
    let bot = bot_folder(&cwd);
    let argv = run_bot(bot.path().strip_prefix(&cwd).unwrap());
    let (cold, spares) = first_start(&argv, &l).await;
    let mut held = None;
    // A held sandbox's first round takes a spare too, which is then that
    // program's held sandbox for its later rounds.
    let mut p = BotProcess::spawn_held(&mut held, &argv, &l).await.unwrap();
    let taken = held.as_mut().and_then(Held::first_pid).unwrap();
    assert!(spares.contains(&taken), "a spare was taken");
    assert!(!pool::ready(&l).contains(&taken), "and is no longer spare");
    let warm = talk(&mut p).await;
    assert_eq!(warm, cold);
    assert_eq!(warm[0], format!("in {}", cwd.display()));
    p.terminate().await;
    assert!(held.as_ref().is_some_and(|h| h.suits(&argv, &l)));
    held.as_mut().unwrap().reset().await.unwrap();
    let mut again = BotProcess::spawn_held(&mut held, &argv, &l).await.unwrap();
    assert_eq!(talk(&mut again).await, cold);
    again.terminate().await;
}

fn is_root_here() -> bool {
    sandbox::is_root()
}

/// Both holders move to the folder they are told, say so, and start the
/// next round's program there; a folder they cannot enter is an error
/// (and the holder goes on).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_holders_work_where_they_are_told() {
    use crate::transport::process::holder::Kind;
    let l = spared(63);
    let argv = sh("pwd");
    let mut kinds = vec![Kind::here()];
    if kinds[0] != Kind::Sh {
        kinds.push(Kind::Sh);
    }
    for kind in kinds {
        let what = held_for(&argv, &l);
        let mut held = Held::set_up(&argv, &l, what, kind).unwrap();
        let err = held
            .enter(std::path::Path::new("/no/such/folder"), Patience::Setup)
            .await;
        assert!(
            matches!(&err, Err(TransportError::Io(e)) if e.contains("cannot work in")),
            "{kind:?}: {err:?}"
        );
        held.enter(std::path::Path::new("/dev"), Patience::Ready)
            .await
            .unwrap();
        let mut held = Some(held);
        let mut p = BotProcess::spawn_held(&mut held, &argv, &l).await.unwrap();
        assert_eq!(p.recv(soon(10_000)).await.unwrap(), "/dev", "{kind:?}");
        p.terminate().await;
        assert!(held.is_some(), "{kind:?}: the sandbox was kept");
    }
}

/// A folder the sandbox's user may not reach (inside a folder only root
/// may enter) is not bound into a spare, as bubblewrap, started as that
/// user, would not bind it; it fails that program's bind alone: the next
/// program with folders of its own still takes a spare.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_out_of_reach_keeps_spares_for_the_next_program() {
    if !(is_root_here() && sandbox::start_as().is_some()) {
        return;
    }
    let l = spared(64);
    let good = bot_folder(&std::env::temp_dir());
    let good_argv = run_bot(good.path());
    first_start(&good_argv, &l).await;
    // A bot's folder inside a folder only root may enter.
    let shut = tempfile::Builder::new()
        .prefix("spare-shut")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(shut.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let inner = bot_folder(shut.path());
    let shut_argv = run_bot(inner.path());
    if let Ok(p) = BotProcess::spawn_ready(&shut_argv, &l).await {
        assert!(
            !p.started_in_spare(),
            "a folder nobody may reach is not bound"
        );
        p.terminate().await;
    }
    assert_eq!(spares_ready(&l).await.len(), pool::KEEP);
    let mut p = BotProcess::spawn_ready(&good_argv, &l).await.unwrap();
    assert!(
        p.started_in_spare(),
        "spares still serve programs with folders"
    );
    talk(&mut p).await;
    p.terminate().await;
}
