//! A hosted bot's next match starts in its kept sandbox, cleared; another
//! bot never gets it; idle and surplus sandboxes are dropped. These start
//! real sandboxes (bubblewrap, as the server's do).

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::sync::Arc;
use std::time::Duration;

use croupier_arena::live::{play_live, LiveConfig, LiveSeat};
use croupier_arena::spec::remote_seat;
use croupier_arena::transport::process::{BotProcess, ProcessLimits, Sandbox};
use croupier_arena::transport::Link;
use croupier_bots::Builtins as _;
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::SeatInfo;

use super::*;
use crate::hosted::run::HostedConnector;

/// What the marking bot does first: it says on stderr its PID namespace
/// (which names its sandbox), its pid there (a kept sandbox's counts on
/// from the last match) and whether it found the mark an earlier match
/// left in `/tmp`; then it plays as the random example bot.
const MARKING: &str = r#"import os, sys
left = os.path.exists("/tmp/m")
open("/tmp/m", "w").close()
sys.stderr.write("ns=%s pid=%d tmp=%s\n" % (os.readlink("/proc/self/ns/pid"), os.getpid(), "left" if left else "fresh"))
sys.stderr.flush()
"#;

/// [`MARKING`] before the random Croupier-dialect example bot.
fn marking() -> String {
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/bots/croupier/random_bot.py"
    );
    MARKING.to_string() + &std::fs::read_to_string(example).expect("the example bot")
}

fn have_python() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The bot's command, in a folder the sandbox's user may read.
fn marking_bot() -> (tempfile::TempDir, Vec<String>) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.path().join("marking.py");
    std::fs::write(&file, marking()).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let argv = vec!["python3".to_string(), file.to_string_lossy().into_owned()];
    (dir, argv)
}

fn strict() -> Sandbox {
    Sandbox::Strict(Default::default())
}

/// One Goofspiel match of `bot`'s program against a house bot, through a
/// connector kept in `kept`; what the program said on stderr.
async fn one_match(bot: BotId, argv: &[String], kept: &Arc<KeptSandboxes>) -> String {
    let conn = HostedConnector::new(argv.to_vec(), strict(), None).kept_in(bot, Arc::clone(kept));
    let log = Arc::clone(&conn.log);
    let mut seats: Vec<LiveSeat<Goofspiel>> = vec![
        remote_seat(
            SeatInfo::named("hosted"),
            Link::Custom(Arc::new(conn)),
            DialectKind::Croupier,
        ),
        LiveSeat::builtin(
            SeatInfo::named("house"),
            Goofspiel::builtin("random").unwrap(),
        ),
    ];
    let record = play_live(
        &GoofspielVariant::default(),
        5,
        &mut seats,
        &LiveConfig::default(),
    )
    .await
    .unwrap();
    assert!(record.steps.iter().all(|s| s.fault.is_none()), "{record:?}");
    // The connector goes with the seats: its sandbox goes back to `kept`.
    drop(seats);
    let text = log.lock().unwrap().text();
    text
}

/// What [`marking`] said.
#[derive(Debug)]
struct Marks {
    ns: String,
    pid: u32,
    tmp: String,
}

fn marks(said: &str) -> Marks {
    let line = said
        .lines()
        .find(|l| l.starts_with("ns="))
        .unwrap_or_else(|| panic!("{said:?}"));
    let word = |key: &str| {
        line.split(' ')
            .find_map(|w| w.strip_prefix(key))
            .unwrap_or_else(|| panic!("{line:?}"))
            .to_string()
    };
    Marks {
        ns: word("ns="),
        pid: word("pid=").parse().unwrap(),
        tmp: word("tmp="),
    }
}

/// Waits (at most 10 s) until `kept` keeps `n` sandboxes.
async fn kept_count(kept: &KeptSandboxes, n: usize) {
    let until = Instant::now() + Duration::from_secs(10);
    while kept.len() != n && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(kept.len(), n, "sandboxes kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_bots_next_match_starts_in_its_kept_sandbox_cleared() {
    if !have_python() {
        eprintln!("SKIPPED: no python3");
        return;
    }
    let (_dir, argv) = marking_bot();
    let kept = KeptSandboxes::new(Duration::from_secs(60), 4);
    // Each match's first start waits for the last one's clearing.
    let first = marks(&one_match(7, &argv, &kept).await);
    let second = marks(&one_match(7, &argv, &kept).await);
    kept_count(&kept, 1).await;
    // Cleared in between: the mark of the first match is gone.
    assert_eq!(
        (first.tmp.as_str(), second.tmp.as_str()),
        ("fresh", "fresh")
    );
    // The same sandbox: its PID namespace, whose pids count on.
    assert_eq!(first.ns, second.ns, "{first:?} {second:?}");
    assert!(second.pid > first.pid, "{first:?} {second:?}");
    // Another bot gets a sandbox of its own.
    let other = marks(&one_match(8, &argv, &kept).await);
    assert_ne!(other.ns, first.ns);
    assert_eq!(other.tmp, "fresh");
    kept_count(&kept, 2).await;
}

/// A sandbox set up for `argv` (what a match leaves to be kept).
fn held(argv: &[String]) -> Held {
    let limits = ProcessLimits {
        sandbox: strict(),
        ..ProcessLimits::default()
    };
    BotProcess::hold(argv, &limits).unwrap()
}

/// Waits (at most 10 s) until `bot`'s sandbox is cleared and kept.
async fn cleared(kept: &KeptSandboxes, bot: BotId) {
    let until = Instant::now() + Duration::from_secs(10);
    while !kept.is_ready(bot) && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(kept.is_ready(bot), "bot {bot}'s sandbox is not kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_surplus_sandboxes_are_dropped() {
    let argv = vec!["cat".to_string()];
    // At most one: the longest idle goes first.
    let kept = KeptSandboxes::new(Duration::from_secs(60), 1);
    kept.give_back(1, held(&argv));
    cleared(&kept, 1).await;
    kept.give_back(2, held(&argv));
    cleared(&kept, 2).await;
    assert_eq!(kept.len(), 1);
    assert!(kept.take(1, Duration::ZERO).await.is_none());
    assert!(kept.take(2, Duration::ZERO).await.is_some());
    assert!(kept.is_empty());
    // Idle for its time: dropped without anyone looking.
    let kept = KeptSandboxes::new(Duration::from_millis(200), 4);
    kept.give_back(3, held(&argv));
    cleared(&kept, 3).await;
    kept_count(&kept, 0).await;
    assert!(kept.take(3, Duration::ZERO).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_next_match_waits_for_the_clearing_under_way() {
    let kept = KeptSandboxes::new(Duration::from_secs(60), 4);
    kept.give_back(4, held(&["cat".to_string()]));
    assert!(!kept.is_ready(4), "cleared at once");
    assert!(kept.take(4, Duration::from_secs(5)).await.is_some());
    // No sandbox for a bot without one, at once.
    let asked = Instant::now();
    assert!(kept.take(5, Duration::from_secs(5)).await.is_none());
    assert!(asked.elapsed() < Duration::from_secs(5));
}
