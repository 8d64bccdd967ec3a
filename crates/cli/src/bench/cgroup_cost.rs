//! `croupier bench subprocess --sandbox strict`, the cgroup part (issue
//! 51): what a bot program's cgroup adds to its start, with and without it
//! in alternation in the same run, and the cores that a program with four
//! busy children takes under a one-core quota (read from its cgroup).

use std::time::{Duration, Instant};

use croupier_arena::transport::process::cgroup::{self, CgroupLimits};
use croupier_arena::transport::process::{BotProcess, ProcessLimits, Sandbox};
use serde_json::json;

use crate::bench::server_stats::median;

/// Four children that spin, then an echo loop.
const BUSY: &str = "for i in 1 2 3 4; do (while :; do :; done) & done; \
                    while read l; do echo \"$l\"; done";

fn limits(sandbox: &Sandbox, cgroup: Option<&CgroupLimits>) -> ProcessLimits {
    ProcessLimits {
        sandbox: sandbox.clone(),
        cgroup: cgroup.cloned(),
        ..ProcessLimits::default()
    }
}

/// Milliseconds from spawning `cat` to its first answer.
async fn one_start(l: &ProcessLimits) -> anyhow::Result<f64> {
    let t = Instant::now();
    let mut p = BotProcess::spawn(&["cat".to_string()], l)?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    p.send(&["ping".to_string()], deadline).await?;
    p.recv(deadline).await?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    p.terminate().await;
    Ok(ms)
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Prints the start of a program in `sandbox` without and with its cgroup
/// (medians, alternated), and the cores four busy children take.
pub async fn run(sandbox: &Sandbox, cg: &CgroupLimits, time: Duration) -> anyhow::Result<()> {
    let (without, with) = (limits(sandbox, None), limits(sandbox, Some(cg)));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let begin = Instant::now();
    while begin.elapsed() < time || a.len() < 10 {
        a.push(one_start(&without).await?);
        b.push(one_start(&with).await?);
    }
    let (a, b) = (median(a), median(b));
    for (what, value) in [
        ("process_start_ms_without_cgroup", a),
        ("process_start_ms_with_cgroup", b),
        ("cgroup_start_overhead_ms", b - a),
    ] {
        println!(
            "{}",
            json!({"bench": "subprocess", "sandbox": "strict", "what": what, "value": round(value)})
        );
    }
    // The cgroup's own part of a start, without the noise of the rest:
    // made, entered and left by this thread (removed untimed).
    let mut setup = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        let g = cgroup::for_bot(cg).ok_or_else(|| anyhow::anyhow!("no cgroup"))?;
        if let Some(e) = g.thread_entry() {
            drop(e.enter()?);
        }
        setup.push(t.elapsed().as_secs_f64() * 1e3);
        g.remove().await;
    }
    println!(
        "{}",
        json!({"bench": "subprocess", "what": "cgroup_setup_ms", "value": round(median(setup))})
    );
    let busy = vec!["/bin/sh".to_string(), "-c".to_string(), BUSY.to_string()];
    let mut p = BotProcess::spawn(&busy, &with)?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    p.send(&["ping".to_string()], deadline).await?;
    p.recv(deadline).await?;
    let cpu0 = p.cpu_time().unwrap_or_default();
    let t = Instant::now();
    tokio::time::sleep(time.max(Duration::from_secs(2))).await;
    let cores = (p.cpu_time().unwrap_or_default() - cpu0).as_secs_f64() / t.elapsed().as_secs_f64();
    p.terminate().await;
    println!(
        "{}",
        json!({"bench": "subprocess", "sandbox": "strict", "what": "cores_of_four_busy_children",
               "quota_cores": cg.cpus.cores(), "value": round(cores)})
    );
    Ok(())
}
