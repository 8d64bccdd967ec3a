//! `croupier bench subprocess --sandbox strict|off`: what the sandbox costs.
//! For each mode (always `off`, the baseline, and `strict` when asked) it
//! measures in the same run: the start of a bot program (spawn to its first
//! answer, then stopped), the round trip of one decision line, and Love
//! Letter matches per second when every seat's program is started again
//! for each round (as both Love Letter managers do; one series per mode,
//! played in turns), and Goofspiel matches per second between programs
//! started once per match (in turns too).
//! With `strict` it also times a first start that may take a spare
//! sandbox set up ahead of it, and a round's start in a sandbox held for the
//! match (docs/sandbox.md). Where bot programs
//! can get cgroups (issue 51), it also compares, in alternation, the start
//! of a sandboxed program with and without its cgroup, and measures the
//! cores a program with four busy children takes under a one-core quota.

use std::path::Path;
use std::time::{Duration, Instant};

use croupier_arena::seeds;
use croupier_arena::series::Table;
use croupier_arena::spec::BotSpec;
use croupier_arena::transport::process::cgroup::{self, BotCpus, CgroupLimits};
use croupier_arena::transport::process::{BotProcess, Held, ProcessLimits, Sandbox};
use croupier_arena::LiveConfig;
use croupier_bots::Builtins;
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use serde_json::json;

fn limits(sandbox: &Sandbox) -> ProcessLimits {
    ProcessLimits {
        sandbox: sandbox.clone(),
        cgroup: None,
        ..ProcessLimits::default()
    }
}

fn name(sandbox: &Sandbox) -> &'static str {
    match sandbox {
        Sandbox::Off => "off",
        Sandbox::Strict(_) => "strict",
    }
}

/// How [`start`] starts each program.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    /// In a sandbox of its own, set up for it ([`BotProcess::spawn`]).
    Own,
    /// In a spare sandbox set up ahead of it where one is ready
    /// ([`BotProcess::spawn_ready`] with spare sandboxes, as a hosted
    /// bot's first start takes one; `cat` needs no folder bound into it),
    /// else in one of its own.
    Spare,
    /// As a round's program in a sandbox held for the match
    /// ([`BotProcess::spawn_held`]).
    Held,
}

/// Mean milliseconds from spawning `cat` to its first answer, and to its
/// end after SIGTERM, how many starts were timed, and how many of them
/// took a spare sandbox. Each start comes `gap` after the last one's stop
/// (a server's starts are not back to back; at 0, a spare's setup in the
/// background takes from the next start's CPU, and it may find none).
/// With [`Start::Held`], one untimed start first sets the sandbox up, as
/// a program started anew each round is; with [`Start::Spare`], one
/// untimed start first has the first spares set up (0.2 s for them), and
/// each start then has another set up in the background.
async fn start(
    sandbox: &Sandbox,
    time: Duration,
    gap: Duration,
    how: Start,
) -> anyhow::Result<(f64, f64, u32, u32)> {
    let mut l = limits(sandbox);
    l.spare_sandboxes = how == Start::Spare;
    let argv = ["cat".to_string()];
    let mut holder = None;
    // A start as `how` says, and the program's first answer.
    async fn started(
        how: Start,
        holder: &mut Option<Held>,
        argv: &[String],
        l: &ProcessLimits,
    ) -> anyhow::Result<BotProcess> {
        let mut p = match how {
            Start::Held => BotProcess::spawn_held(holder, argv, l).await?,
            Start::Spare => BotProcess::spawn_ready(argv, l).await?,
            Start::Own => BotProcess::spawn(argv, l)?,
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        p.send(&["ping".to_string()], deadline).await?;
        p.recv(deadline).await?;
        Ok(p)
    }
    if how != Start::Own {
        started(how, &mut holder, &argv, &l)
            .await?
            .terminate()
            .await;
        anyhow::ensure!(
            how != Start::Held || holder.is_some(),
            "only a sandbox is held"
        );
        if how == Start::Spare {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let (mut n, mut spared, mut up, mut down) = (0u32, 0u32, 0.0, 0.0);
    let begin = Instant::now();
    while begin.elapsed() < time || n < 5 {
        let t = Instant::now();
        let p = started(how, &mut holder, &argv, &l).await?;
        up += t.elapsed().as_secs_f64() * 1e3;
        spared += u32::from(p.started_in_spare());
        let t = Instant::now();
        p.terminate().await;
        down += t.elapsed().as_secs_f64() * 1e3;
        n += 1;
        tokio::time::sleep(gap).await;
    }
    anyhow::ensure!(
        how != Start::Held || holder.is_some(),
        "the held sandbox was given up"
    );
    Ok((up / f64::from(n), down / f64::from(n), n, spared))
}

/// Mean microseconds of one line to `cat` and back.
async fn round_trip(sandbox: &Sandbox, time: Duration) -> anyhow::Result<f64> {
    let mut p = BotProcess::spawn(&["cat".to_string()], &limits(sandbox))?;
    let line = vec!["Competition card:  7".to_string()];
    let (mut n, begin) = (0u64, Instant::now());
    while begin.elapsed() < time {
        for _ in 0..100 {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            p.send(&line, deadline).await?;
            p.recv(deadline).await?;
            n += 1;
        }
    }
    let us = begin.elapsed().as_secs_f64() * 1e6 / n as f64;
    p.terminate().await;
    Ok(us)
}

/// How many turns each series measure takes per mode.
const TURNS: u64 = 4;

/// Matches per second in each mode of a series of `games` between four
/// (Love Letter) or two (Goofspiel) seats of the program `bot`: each mode
/// plays one series (its own [`Table`], seats rotating, sandboxes kept
/// from game to game as `croupier play` keeps them), in turns (a part of
/// the games in each mode, then again), so that a machine whose speed
/// drifts during the run weighs on every mode alike. A part's time
/// includes clearing the sandboxes of its last game; the first part of a
/// mode includes setting its sandboxes up.
fn series_in_turns<G: Builtins>(
    modes: &[Sandbox],
    games: u64,
    exe: &Path,
    variant: &G::Variant,
    bots: &[BotSpec],
) -> anyhow::Result<Vec<f64>> {
    let part = games.div_ceil(TURNS).max(2);
    let lives: Vec<LiveConfig> = modes
        .iter()
        .map(|m| LiveConfig {
            limits: limits(m),
            ..LiveConfig::default()
        })
        .collect();
    let tables = lives
        .iter()
        .map(|live| Ok(Table::<G>::new(variant, bots, live, exe)?.reusing_sandboxes()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut seconds = vec![0.0; modes.len()];
    for turn in 0..TURNS {
        for (table, spent) in tables.iter().zip(&mut seconds) {
            let begin = Instant::now();
            for g in turn * part..(turn + 1) * part {
                let seating: Vec<&BotSpec> = (0..bots.len())
                    .map(|s| &bots[(s + g as usize) % bots.len()])
                    .collect();
                table.play(&seating, seeds::game(1, g))?;
            }
            table.settle();
            *spent += begin.elapsed().as_secs_f64();
        }
    }
    Ok(seconds.iter().map(|s| (part * TURNS) as f64 / s).collect())
}

/// Love Letter, four `croupier bot random` programs started anew each
/// round (as both Love Letter managers do).
fn loveletter_in_turns(modes: &[Sandbox], games: u64, exe: &Path) -> anyhow::Result<Vec<f64>> {
    let bots: Vec<BotSpec> = vec!["builtin:random@loveletter".parse()?; 4];
    series_in_turns::<LoveLetter>(modes, games, exe, &LoveLetterVariant::default(), &bots)
}

/// Goofspiel, two `croupier bot random` programs in Croupier's dialect,
/// each started once per match (as most dialects are).
fn goofspiel_in_turns(modes: &[Sandbox], games: u64, exe: &Path) -> anyhow::Result<Vec<f64>> {
    let bots: Vec<BotSpec> = vec!["builtin:random@croupier".parse()?; 2];
    series_in_turns::<Goofspiel>(modes, games, exe, &GoofspielVariant::default(), &bots)
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Runs the measures without the sandbox and, given one, with it.
pub fn run(seconds: f64, gap: Duration, exe: &Path, strict: Option<Sandbox>) -> anyhow::Result<()> {
    let time = Duration::from_secs_f64(seconds);
    let modes: Vec<Sandbox> = std::iter::once(Sandbox::Off).chain(strict).collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let games = ((seconds * 2.0) as u64).max(3);
    let with_cgroup = modes
        .iter()
        .find(|m| **m != Sandbox::Off)
        .and_then(|strict| {
            let cg = CgroupLimits::new(BotCpus::ONE, None);
            match cgroup::check(&cg) {
                Ok(()) => Some((strict.clone(), cg)),
                Err(why) => {
                    eprintln!("no cgroup comparison: {why}");
                    None
                }
            }
        });
    if let Some((strict, cg)) = &with_cgroup {
        rt.block_on(crate::bench::cgroup_cost::run(strict, cg, time))?;
    }
    let per_sec = loveletter_in_turns(&modes, games, exe)?;
    let gops = goofspiel_in_turns(&modes, games * 10, exe)?;
    let mut rows = Vec::new();
    for ((m, mps), gps) in modes.iter().zip(per_sec).zip(gops) {
        let (up, down, _, _) = rt.block_on(start(m, time, gap, Start::Own))?;
        // A first start that may take a spare sandbox, and a round's start
        // in a sandbox held for the match (only sandboxes are held).
        let (spare, held) = match m {
            Sandbox::Off => (None, None),
            Sandbox::Strict(_) => {
                let (spare, _, n, spared) = rt.block_on(start(m, time, gap, Start::Spare))?;
                println!(
                    "{}",
                    json!({"bench": "subprocess", "sandbox": name(m), "what": "starts_that_took_a_spare", "value": spared, "of": n})
                );
                (
                    Some(spare),
                    Some(rt.block_on(start(m, time, gap, Start::Held))?.0),
                )
            }
        };
        let rtt = rt.block_on(round_trip(m, time))?;
        let figures = [
            ("process_start_ms", Some(up)),
            ("process_start_spare_ms", spare),
            ("process_start_held_ms", held),
            ("process_stop_ms", Some(down)),
            ("decision_round_trip_us", Some(rtt)),
            ("loveletter_4p_matches_per_sec_reexec_per_round", Some(mps)),
            ("goofspiel_matches_per_sec_start_per_match", Some(gps)),
        ];
        for (what, value) in figures {
            let Some(value) = value else { continue };
            println!(
                "{}",
                json!({"bench": "subprocess", "sandbox": name(m), "what": what, "value": round(value)})
            );
        }
        rows.push((up, rtt, mps, held, gps, spare));
    }
    if let [off, strict] = rows.as_slice() {
        println!(
            "{}",
            json!({
                "bench": "subprocess",
                "what": "sandbox_overhead",
                "process_start_ms": round(strict.0 - off.0),
                "process_start_spare_ms": strict.5.map(|p| round(p - off.0)),
                "process_start_held_ms": strict.3.map(|p| round(p - off.0)),
                "decision_round_trip_us": round(strict.1 - off.1),
                "loveletter_matches_per_sec_ratio": round(strict.2 / off.2),
                "goofspiel_matches_per_sec_ratio": round(strict.4 / off.4),
                "start_gap_ms": gap.as_millis() as u64,
            })
        );
    }
    Ok(())
}
