//! What keeping a hosted bot's sandbox from match to match saves (issue
//! 53): Goofspiel matches of one hosted program against a house bot,
//! through the server's connector, each match in a new sandbox or in the
//! sandbox kept from the bot's last match, the two played in turns.
//!
//! ```sh
//! cargo run --release -p croupier-competition --example hosted_matches -- \
//!     target/release/croupier [MATCHES]
//! ```
//!
//! The program is `CROUPIER bot random --dialect croupier` (its folder must
//! be readable by the sandbox's user); MATCHES (default 200) are split
//! into four turns of each mode. It prints milliseconds per match for each
//! mode and turn (with a kept sandbox, each match's first start waits for
//! the clearing after the last, as on the server when a bot plays again at
//! once), then the medians and their ratio, for the time per match and the
//! machine's CPU per match.

use std::sync::Arc;
use std::time::{Duration, Instant};

use croupier_arena::live::{play_live, LiveConfig, LiveSeat};
use croupier_arena::spec::remote_seat;
use croupier_arena::transport::process::{Sandbox, SandboxLimits};
use croupier_arena::transport::Link;
use croupier_bots::Builtins as _;
use croupier_competition::hosted::kept::KeptSandboxes;
use croupier_competition::hosted::run::HostedConnector;
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::SeatInfo;

type Failure = Box<dyn std::error::Error>;

/// One match; `kept`: through a connector whose sandbox is kept.
async fn one(argv: &[String], kept: Option<&Arc<KeptSandboxes>>, seed: u64) -> Result<(), Failure> {
    let conn = HostedConnector::new(
        argv.to_vec(),
        Sandbox::Strict(SandboxLimits::default()),
        None,
    );
    let conn = match kept {
        Some(k) => conn.kept_in(1, Arc::clone(k)),
        None => conn,
    };
    let mut seats: Vec<LiveSeat<Goofspiel>> = vec![
        remote_seat(
            SeatInfo::named("hosted"),
            Link::Custom(Arc::new(conn)),
            DialectKind::Croupier,
        ),
        LiveSeat::builtin(SeatInfo::named("house"), Goofspiel::builtin("random")?),
    ];
    let record = play_live(
        &GoofspielVariant::default(),
        seed,
        &mut seats,
        &LiveConfig::default(),
    )
    .await?;
    if let Some(f) = record.steps.iter().find_map(|s| s.fault.as_ref()) {
        return Err(format!("the hosted program failed: {f:?}").into());
    }
    Ok(())
}

/// CPU seconds the whole machine has been busy (`/proc/stat`: every CPU,
/// all but idle and I/O wait, 10 ms ticks): the holders' and the
/// kernel's own work (a network namespace's teardown runs in a kernel
/// thread) count too, which a process's own times would miss. Run it on
/// an otherwise quiet machine.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse::<f64>().ok())
        .collect();
    // user nice system idle iowait irq softirq steal ...
    let busy: f64 = ticks
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4)
        .map(|(_, t)| t)
        .sum();
    busy / 100.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let mut args = std::env::args().skip(1);
    let bin = args
        .next()
        .ok_or("usage: hosted_matches CROUPIER-BINARY [MATCHES]")?;
    let matches: u64 = args.next().map(|m| m.parse()).transpose()?.unwrap_or(200);
    let per_turn = (matches / 8).max(1);
    let argv: Vec<String> = [bin.as_str(), "bot", "random", "--dialect", "croupier"]
        .map(String::from)
        .to_vec();
    let kept = KeptSandboxes::new(Duration::from_secs(60), 16);
    let (mut fresh, mut reused) = (Vec::new(), Vec::new());
    let (mut fresh_cpu, mut reused_cpu) = (Vec::new(), Vec::new());
    let mut seed = 0;
    for turn in 1..=4 {
        for keep in [false, true] {
            let started = Instant::now();
            let cpu = cpu_seconds();
            for _ in 0..per_turn {
                seed += 1;
                // A kept sandbox's next match waits for its clearing.
                one(&argv, keep.then_some(&kept), seed).await?;
            }
            let ms = started.elapsed().as_secs_f64() * 1000.0 / per_turn as f64;
            let cpu_ms = (cpu_seconds() - cpu) * 1000.0 / per_turn as f64;
            let mode = if keep { "kept sandbox" } else { "new sandbox" };
            println!(
                "turn {turn}, {mode}: {ms:.2} ms per match, CPU {cpu_ms:.2} ms per match ({per_turn} matches)"
            );
            if keep {
                reused.push(ms);
                reused_cpu.push(cpu_ms);
            } else {
                fresh.push(ms);
                fresh_cpu.push(cpu_ms);
            }
        }
    }
    let (f, k) = (median(fresh), median(reused));
    let (fc, kc) = (median(fresh_cpu), median(reused_cpu));
    println!(
        "median ms per match: new sandbox {f:.2}, kept sandbox {k:.2}; kept / new {:.2}",
        k / f
    );
    println!(
        "median CPU ms per match: new sandbox {fc:.2}, kept sandbox {kc:.2}; kept / new {:.2}",
        kc / fc
    );
    Ok(())
}
