//! A series keeps each seat's held sandbox from game to game (issue 53):
//! Love Letter's per-round programs (Postman's dialect) play two games at
//! a `Table` reusing its sandboxes, and the second game's rounds run in the
//! very sandboxes of the first (the same holder processes), cleared in
//! between; a table that does not reuse them kills them at each game's end.
//! A tournament does the same across its games and tables, and a series
//! of a program started once per match (Croupier's dialect) starts it in
//! its seat's kept sandbox from game to game. Its own
//! binary, since it watches the process table; its tests take turns, since
//! each counts every sandbox of this process.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::collections::BTreeSet;
use std::path::Path;

use croupier_arena::series::Table;
use croupier_arena::spec::BotSpec;
use croupier_arena::tournament::{run_tournament, Format, TournamentConfig};
use croupier_arena::transport::process::{ProcessLimits, Sandbox, SandboxLimits};
use croupier_arena::LiveConfig;
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};

/// The holders of this process's held sandboxes (whose fourth word is
/// `croupier-held`, Perl's or the shell's), by pid.
fn holders() -> BTreeSet<i32> {
    let me = std::process::id().to_string();
    let mut found = BTreeSet::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let words: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        // The holder is its sandbox's second process (a fork of it, before
        // it starts a round's program, has its command too).
        if words.get(3) == Some(&&b"croupier-held"[..]) && inside(pid) == Some(2) && below(pid, &me)
        {
            found.insert(pid);
        }
    }
    found
}

/// The pid of `pid` inside its own PID namespace.
fn inside(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let ids = status.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
    ids.split_whitespace().last()?.parse().ok()
}

fn parent(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether `pid` descends from the process `ancestor`.
fn below(pid: i32, ancestor: &str) -> bool {
    let mut p = pid;
    for _ in 0..16 {
        match parent(p) {
            Some(q) if q.to_string() == ancestor => return true,
            Some(q) if q > 1 => p = q,
            _ => return false,
        }
    }
    false
}

fn have_python() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One test at a time: each counts every held sandbox of this process.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Love Letter's example random AI in Postman's dialect (a program per
/// seat per round).
fn postman_bot() -> BotSpec {
    let ai = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/bots/loveletter/random_bot.py")
        .canonicalize()
        .unwrap();
    format!("python3 {}@loveletter-postman", ai.display())
        .parse()
        .unwrap()
}

fn strict() -> LiveConfig {
    LiveConfig {
        limits: ProcessLimits {
            sandbox: Sandbox::Strict(SandboxLimits::default()),
            cgroup: None,
            ..ProcessLimits::default()
        },
        ..LiveConfig::default()
    }
}

/// Asserts that no step of `record` is a fault (the first one is shown).
fn assert_no_fault(record: &croupier_rules::Record) {
    let first = record.steps.iter().find_map(|s| s.fault.as_ref());
    assert!(first.is_none(), "game {}: {first:?}", record.seed);
}

fn two_games(reuse: bool) -> (BTreeSet<i32>, BTreeSet<i32>) {
    let bot = postman_bot();
    let bots = vec![bot.clone(), bot];
    // The rules `croupier play` picks when every bot speaks Postman's dialect.
    let variant = LoveLetterVariant::postman();
    let live = strict();
    let exe = Path::new("/nonexistent");
    let mut table = Table::<LoveLetter>::new(&variant, &bots, &live, exe).unwrap();
    if reuse {
        table = table.reusing_sandboxes();
    }
    let seating: Vec<&BotSpec> = bots.iter().collect();
    let mut after = Vec::new();
    for seed in [1, 2] {
        let record = table.play(&seating, seed).unwrap();
        table.settle();
        // Played through, every round's programs started (a seat whose
        // program could not start would be out after its first fault),
        // every play legal.
        assert!(record.steps.len() > 8, "{record:?}");
        assert_no_fault(&record);
        // A sandbox killed at a game's end takes a moment to go.
        let mut now = holders();
        let t = std::time::Instant::now();
        while !reuse && !now.is_empty() && t.elapsed() < std::time::Duration::from_secs(3) {
            std::thread::sleep(std::time::Duration::from_millis(20));
            now = holders();
        }
        after.push(now);
    }
    (after.remove(0), after.remove(0))
}

#[test]
fn a_series_plays_its_games_in_the_sandboxes_of_the_first() {
    if !have_python() {
        eprintln!("SKIPPED: no python3");
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (first, second) = two_games(true);
    assert_eq!(first.len(), 2, "one sandbox per seat kept: {first:?}");
    assert_eq!(first, second, "the second game set up new sandboxes");
    // Without reuse, each game's sandboxes end with it.
    let (first, second) = two_games(false);
    assert!(
        first.is_empty() && second.is_empty(),
        "{first:?} {second:?}"
    );
}

#[test]
fn a_tournament_plays_its_games_and_tables_in_the_same_sandboxes() {
    if !have_python() {
        eprintln!("SKIPPED: no python3");
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // Three entries of one program at tables of two: three tables, each
    // deal under both seatings, every game seating that program twice.
    let bot = postman_bot();
    let config = TournamentConfig {
        variant: LoveLetterVariant::postman(),
        bots: vec![bot.clone(), bot.clone(), bot],
        format: Format::RoundRobin,
        players: 2,
        deals: 1,
        duplicate: true,
        seed: 5,
        records: None,
        live: strict(),
        exe: "/nonexistent".into(),
        on_fault: None,
    };
    let mut seen: Vec<BTreeSet<i32>> = Vec::new();
    let result = run_tournament::<croupier_rules::loveletter::LoveLetter>(&config, |record| {
        assert!(record.steps.iter().all(|s| s.fault.is_none()), "{record:?}");
        seen.push(holders());
    })
    .unwrap();
    assert_eq!(seen.len(), 6, "{}", result.game);
    // After every game the same two sandboxes are being cleared for the
    // next (without reuse each game's end kills its own and the next game
    // sets up two new ones).
    assert_eq!(seen[0].len(), 2, "{seen:?}");
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:?}");
}

/// What the held-only bot does first: it looks at its parent (anything but
/// a held sandbox's holder, and it ends at once: a crash, a fault in the
/// record); then it plays as the random example bot.
const HELD_ONLY: &str = r#"import os, sys
parent = open("/proc/%d/cmdline" % os.getppid(), "rb").read().split(b"\0")
if b"croupier-held" not in parent:
    sys.exit("started outside a held sandbox: %r" % parent)
"#;

/// [`HELD_ONLY`] before the random Croupier-dialect example bot.
fn held_only() -> String {
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/bots/croupier/random_bot.py"
    );
    HELD_ONLY.to_string() + &std::fs::read_to_string(example).expect("the example bot")
}

#[test]
fn a_series_starts_a_per_match_program_in_its_kept_sandbox() {
    use std::os::unix::fs::PermissionsExt;
    if !have_python() {
        eprintln!("SKIPPED: no python3");
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // Readable by the sandbox's user (nobody, when the tests run as root).
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.path().join("held_only.py");
    std::fs::write(&file, held_only()).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let bot: BotSpec = format!("python3 {}@croupier", file.display())
        .parse()
        .unwrap();
    let bots = vec![bot.clone(), bot];
    let variant = croupier_rules::goofspiel::GoofspielVariant::default();
    let live = strict();
    let exe = Path::new("/nonexistent");
    let table = Table::<croupier_rules::goofspiel::Goofspiel>::new(&variant, &bots, &live, exe)
        .unwrap()
        .reusing_sandboxes();
    let seating: Vec<&BotSpec> = bots.iter().collect();
    let mut after = Vec::new();
    for seed in [1, 2, 3] {
        let record = table.play(&seating, seed).unwrap();
        table.settle();
        // Every decision answered by the program: it started under a
        // holder (it ends at once anywhere else).
        assert_no_fault(&record);
        assert!(record.steps.len() >= 13, "{record:?}");
        after.push(holders());
    }
    assert_eq!(after[0].len(), 2, "one sandbox per seat kept: {after:?}");
    assert!(
        after.iter().all(|h| *h == after[0]),
        "new sandboxes: {after:?}"
    );
}
