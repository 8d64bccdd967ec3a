//! A manager that adopts its bots' orphans (a child subreaper, as the
//! `croupier` binary is) kills what a bot leaves behind when that bot ends,
//! and nothing else: a child the manager started itself for another job
//! (a sandbox check, a tool) is neither killed nor reaped, so the code that
//! waits for it gets its exit status. Its own binary, since being a
//! subreaper is a property of the whole process.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::time::Duration;

use croupier_arena::transport::process::{adopt_orphans, BotProcess, ProcessLimits};
use tokio::time::Instant;

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z"),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bots_orphans_go_with_it_and_the_managers_own_children_stay() {
    if !adopt_orphans() {
        eprintln!("SKIPPED: this process cannot become a child subreaper here");
        return;
    }
    let limits = ProcessLimits {
        grace: Duration::from_millis(200),
        ..ProcessLimits::default()
    };
    // The manager's own child: in the manager's process group, no marker.
    let mut own = std::process::Command::new("sleep")
        .arg("30")
        .env_remove(croupier_arena::transport::process::MARKER)
        .spawn()
        .unwrap();
    let own_pid = own.id() as i32;

    // A bot that detaches a child into a session of its own and drops the
    // marker from its environment, then ends.
    let mut bot = BotProcess::spawn(
        &sh("env -u CROUPIER_BOT setsid sleep 30 >/dev/null 2>&1 < /dev/null & echo $!; read x"),
        &limits,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let orphan: i32 = bot.recv(deadline).await.unwrap().trim().parse().unwrap();
    assert!(alive(orphan));
    bot.terminate().await;

    let until = std::time::Instant::now() + Duration::from_secs(3);
    while alive(orphan) && std::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(orphan), "the bot's detached child outlived it");

    // The manager's own child is untouched, and still ours to wait for.
    assert!(
        alive(own_pid),
        "a sweep after a bot's end killed a child that was not the bot's"
    );
    assert!(
        matches!(own.try_wait(), Ok(None)),
        "a sweep reaped a child that was not the bot's"
    );
    own.kill().unwrap();
    let status = own.wait().expect("its status is still ours to read");
    assert!(!status.success());
}
