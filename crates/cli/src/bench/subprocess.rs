//! `croupier bench subprocess`: the cost of talking to bot programs.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use croupier_arena::series::{run_series, SeriesConfig};
use croupier_arena::transport::process::{BotProcess, ProcessLimits};
use croupier_arena::LiveConfig;
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use serde_json::json;

/// Round trips of one short line through `cat` over plain blocking pipes.
fn bare_pipe_rtt(time: Duration) -> anyhow::Result<f64> {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdin"))?;
    let mut stdout = BufReader::new(
        child
            .stdout
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stdout"))?,
    );
    let (mut n, mut line) = (0u64, String::new());
    let start = Instant::now();
    while start.elapsed() < time {
        for _ in 0..100 {
            stdin.write_all(b"Competition card:  7\n")?;
            stdin.flush()?;
            line.clear();
            stdout.read_line(&mut line)?;
            n += 1;
        }
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / n as f64;
    drop(stdin);
    child.wait()?;
    Ok(us)
}

/// The same round trips through Croupier's transport (actor, deadlines).
fn transport_rtt(time: Duration) -> anyhow::Result<f64> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut p = BotProcess::spawn(&["cat".to_string()], &ProcessLimits::default())?;
        let line = vec!["Competition card:  7".to_string()];
        let (mut n, start) = (0u64, tokio::time::Instant::now());
        while start.elapsed() < time {
            for _ in 0..100 {
                let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
                p.send(&line, deadline).await?;
                p.recv(deadline).await?;
                n += 1;
            }
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / n as f64;
        p.terminate().await;
        Ok::<f64, anyhow::Error>(us)
    })
}

/// Mean time per decision of bot programs in whole matches (from the
/// records' thinking times) and matches per second.
fn matches<G: croupier_bots::Builtins>(
    variant: G::Variant,
    bots: &[&str],
    games: u64,
    exe: &Path,
) -> anyhow::Result<(f64, f64)> {
    let config = SeriesConfig::<G::Variant> {
        variant,
        bots: bots.iter().map(|b| b.parse()).collect::<Result<_, _>>()?,
        games,
        seed: 1,
        records: None,
        live: LiveConfig::default(),
        exe: exe.to_path_buf(),
        on_fault: None,
    };
    let (mut ms, mut steps) = (0.0, 0u64);
    let start = Instant::now();
    run_series::<G>(&config, |_, r| {
        for s in &r.steps {
            ms += s.ms.unwrap_or(0.0);
            steps += 1;
        }
    })?;
    let secs = start.elapsed().as_secs_f64();
    Ok((ms * 1000.0 / steps.max(1) as f64, games as f64 / secs))
}

pub fn run(seconds: f64, exe: &Path) -> anyhow::Result<()> {
    let time = Duration::from_secs_f64(seconds);
    let pipe = bare_pipe_rtt(time)?;
    println!(
        "{}",
        json!({"bench": "subprocess", "what": "bare_pipe_round_trip_us", "value": round(pipe)})
    );
    let transport = transport_rtt(time)?;
    println!(
        "{}",
        json!({"bench": "subprocess", "what": "transport_round_trip_us", "value": round(transport), "overhead_us": round(transport - pipe)})
    );
    let games = ((seconds * 40.0) as u64).max(5);
    let (decision, gps) = matches::<Goofspiel>(
        GoofspielVariant::gops(),
        &["builtin:random@gops", "builtin:random@gops"],
        games,
        exe,
    )?;
    println!(
        "{}",
        json!({"bench": "subprocess", "what": "gops_decision_us", "value": round(decision), "overhead_us": round(decision - pipe), "games_per_sec": round(gps)})
    );
    let (decision, mps) = matches::<LoveLetter>(
        LoveLetterVariant::default(),
        &["builtin:random@loveletter"; 4],
        (games / 4).max(3),
        exe,
    )?;
    println!(
        "{}",
        json!({"bench": "subprocess", "what": "loveletter_4p_matches_per_sec", "value": round(mps), "decision_us": round(decision), "bot": "croupier bot random --dialect loveletter (one process per seat per round)"})
    );
    Ok(())
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
