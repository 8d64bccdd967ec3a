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
    // Its last words are kept by the time the fault is told.
    assert!(p.stderr_tail().contains("bye"));
    p.terminate().await;
}

/// A reader of stderr kept from its turn (a busy machine) past the short
/// wait, behind a pipe where the bot's last words are; with `hold`, the
/// writing end is returned, open (as a child of the bot would hold it).
fn late_reader(
    hold: bool,
) -> (
    StderrReader,
    Arc<Mutex<output::StderrLog>>,
    Option<std::io::PipeWriter>,
) {
    let (read, mut write) = std::io::pipe().unwrap();
    std::io::Write::write_all(&mut write, b"last words\n").unwrap();
    let log = Arc::new(Mutex::new(output::StderrLog::default()));
    let pipe = pipe::Receiver::from_owned_fd(read.into()).unwrap();
    let late = Duration::from_millis(300);
    let reader = StderrReader::late(pipe, Arc::clone(&log), 1000, late);
    (reader, log, hold.then_some(write))
}

#[tokio::test]
async fn last_words_are_waited_for_once_nothing_can_write_more() {
    let (mut reader, log, _) = late_reader(false);
    assert!(reader.finish(Duration::from_millis(50)).await);
    assert_eq!(log.lock().unwrap().tail(), "last words\n");
}

#[tokio::test]
async fn last_words_are_not_waited_for_while_something_holds_stderr() {
    let start = Instant::now();
    let (mut reader, _, _held) = late_reader(true);
    assert!(!reader.finish(Duration::from_millis(50)).await);
    // Not the longer wait, which would end after a second.
    assert!(
        start.elapsed() < Duration::from_millis(900),
        "{:?}",
        start.elapsed()
    );
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
    assert!(tokio::time::timeout(Duration::from_secs(2), reader.task)
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

mod cold_sandbox;
mod held;
mod host_user;
mod mounts;
mod network;
mod seccomp;
mod spare;
