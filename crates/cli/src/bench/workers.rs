//! `croupier bench workers` (issue 13): ladder matches per second of push
//! HTTP bots played by 1 and then 2 `croupier worker`s on one PostgreSQL
//! database (a throw-away cluster), and the fault table: a worker, then a
//! `serve` instance, killed with SIGKILL mid-match, with the games finished
//! before, found after, and the matches closed ("worker lost") and when.
//!
//! The bots are Jujitsu bots served by this process (one HTTP server, one
//! path per bot, the lowest card they hold). Figures only; nothing is
//! asserted on time.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use croupier_store::scratch::ScratchCluster;
use croupier_store::{BotKind, NewBot};
use serde::Serialize;
use sqlx::PgPool;

use crate::bench::proc::Owned;
use crate::error::CliError;

const LADDER: &str = r#"
rest = "0ms"
max_matches = 64
[goofspiel]
variant = "jujitsu rounds=5,6,7,8"
move_time = "5s"
house = []
house_games = false
[loveletter]
enabled = false
[skullwhist]
enabled = false
"#;

/// A worker, in its own CPU cgroup when there is a quota (dropped, and
/// ended, before its cgroup is removed).
struct Capped {
    _proc: Owned,
    _group: Option<crate::bench::cgroup::CpuGroup>,
}

#[derive(Serialize)]
struct Throughput {
    bench: &'static str,
    workers: usize,
    /// CPU cores each worker may use (its own cgroup), if capped.
    cpu_quota: Option<f64>,
    bots: usize,
    seconds: f64,
    matches: i64,
    matches_per_s: f64,
    /// CPU cores the workers used in the measured time, all together (a
    /// figure at `workers × quota` means the quota is what limits them).
    worker_cpu_cores: f64,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_medians_line_compares_the_medians() {
        let line = super::medians_line(&[vec![10.0, 20.0, 12.0], vec![30.0, 21.0, 24.0]]);
        assert_eq!(line["one_worker_matches_per_s"], 12.0);
        assert_eq!(line["two_workers_matches_per_s"], 24.0);
        assert_eq!(line["of_one_worker"], 2.0);
        assert_eq!(line["scale_out_efficiency"], 1.0);
        assert_eq!(line["rounds"], 3);
        let none = super::medians_line(&[vec![0.0], vec![5.0]]);
        assert!(none["of_one_worker"].is_null());
    }
}

#[derive(Serialize)]
struct Fault {
    bench: &'static str,
    killed: &'static str,
    killed_at_s: f64,
    finished_before: usize,
    finished_before_found_after: usize,
    matches_closed: i64,
    matches_rerun: i64,
    closed_after_s: Option<f64>,
    finished_after: i64,
}

/// A Jujitsu bid: the lowest card the bot still holds this round.
async fn bid(body: String) -> String {
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    let rounds = doc["rounds"].as_array().cloned().unwrap_or_default();
    let cards = doc["match"][rounds.len().saturating_sub(1)]
        .as_u64()
        .unwrap_or(1);
    let played: std::collections::HashSet<u64> = rounds
        .last()
        .and_then(|r| r["turns"].as_array())
        .map(|t| t.iter().filter_map(|t| t["myBid"].as_u64()).collect())
        .unwrap_or_default();
    (1..=cards)
        .find(|c| !played.contains(c))
        .unwrap_or(1)
        .to_string()
}

struct Setup {
    url: String,
    pool: PgPool,
    ladder: std::path::PathBuf,
}

async fn setup(
    cluster: &ScratchCluster,
    port: u16,
    bots: usize,
    dir: &std::path::Path,
) -> anyhow::Result<Setup> {
    let url = cluster.create_database().await?;
    let store = croupier_store::open(&url).await?;
    let owner = store.create_owner("bench", "!").await?;
    for i in 0..bots {
        store
            .create_remote_bot(&NewBot {
                name: format!("b{i}"),
                game: "goofspiel".into(),
                kind: BotKind::Push,
                owner,
                endpoint: Some(format!("http://127.0.0.1:{port}/b{i}")),
                dialect: "jujitsu".into(),
                auth_user: None,
                auth_password: None,
                token_hash: None,
            })
            .await?;
    }
    let ladder = dir.join("ladder.toml");
    std::fs::write(&ladder, LADDER)?;
    Ok(Setup {
        pool: PgPool::connect(&url).await?,
        url,
        ladder,
    })
}

fn spawn(exe: &std::path::Path, role: &str, s: &Setup) -> anyhow::Result<Owned> {
    let mut c = Command::new(exe);
    c.arg(role);
    if role == "serve" {
        c.args(["--listen", "127.0.0.1:0", "--house-bots", ""]);
    }
    c.arg("--database")
        .arg(&s.url)
        .arg("--ladder")
        .arg(&s.ladder)
        .args(["--allow-private-bot-urls", "--sandbox", "off"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Ok(Owned(c.spawn()?))
}

async fn count(pool: &PgPool, status: &str) -> anyhow::Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM games WHERE status = $1")
            .bind(status)
            .fetch_one(pool)
            .await?,
    )
}

/// Waits until `n` games have finished (at most 60 s).
async fn until_finished(pool: &PgPool, n: i64) -> anyhow::Result<()> {
    let t0 = Instant::now();
    while count(pool, "finished").await? < n {
        if t0.elapsed() > Duration::from_secs(60) {
            anyhow::bail!("fewer than {n} ladder games finished in 60 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

async fn throughput(
    cluster: &ScratchCluster,
    port: u16,
    exe: &std::path::Path,
    workers: usize,
    bots: usize,
    seconds: f64,
    quota: Option<f64>,
) -> anyhow::Result<Throughput> {
    let dir = tempfile::tempdir()?;
    let s = setup(cluster, port, bots, dir.path()).await?;
    let mut procs = Vec::new();
    for i in 0..workers {
        let group = crate::bench::cgroup::CpuGroup::capped(quota, &format!("worker{i}"))?;
        let proc = spawn(exe, "worker", &s)?;
        if let Some(g) = &group {
            g.add(proc.0.id())?;
        }
        procs.push(Capped {
            _proc: proc,
            _group: group,
        });
    }
    until_finished(&s.pool, 5).await?;
    let pids: Vec<u32> = procs.iter().map(|p| p._proc.0.id()).collect();
    let cpu = || -> f64 {
        pids.iter()
            .map(|p| crate::bench::proc::cpu_seconds(*p))
            .sum()
    };
    let before = count(&s.pool, "finished").await?;
    let cpu0 = cpu();
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    let matches = count(&s.pool, "finished").await? - before;
    let secs = t0.elapsed().as_secs_f64();
    let worker_cpu_cores = (cpu() - cpu0) / secs;
    drop(procs);
    Ok(Throughput {
        bench: "workers",
        workers,
        cpu_quota: quota,
        bots,
        seconds: secs,
        matches,
        matches_per_s: matches as f64 / secs,
        worker_cpu_cores,
    })
}

/// Kills `victim` (SIGKILL) mid-match beside `other`, and watches.
async fn fault(
    cluster: &ScratchCluster,
    port: u16,
    exe: &std::path::Path,
    victim_role: &'static str,
    bots: usize,
) -> anyhow::Result<Fault> {
    let dir = tempfile::tempdir()?;
    let s = setup(cluster, port, bots, dir.path()).await?;
    let started = Instant::now();
    let mut victim = spawn(exe, victim_role, &s)?;
    let _other = spawn(exe, "worker", &s)?;
    until_finished(&s.pool, 20).await?;
    let pid = i64::from(victim.0.id());
    // Wait for the victim to be in a match, then kill it.
    let t0 = Instant::now();
    loop {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM games g JOIN ladder_processes p ON p.id = g.leased_by
             WHERE g.status = 'running' AND p.pid = $1",
        )
        .bind(pid)
        .fetch_one(&s.pool)
        .await?;
        if n > 0 {
            break;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            anyhow::bail!("the {victim_role} never played a match");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    victim.crash()?;
    let killed = Instant::now();
    let before: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM games WHERE status = 'finished' ORDER BY id")
            .fetch_all(&s.pool)
            .await?;
    let lost = |pool: PgPool| async move {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM games WHERE status = 'aborted' AND reason LIKE 'worker lost:%'",
        )
        .fetch_one(&pool)
        .await?;
        anyhow::Ok(n)
    };
    let mut closed_after = None;
    while killed.elapsed() < Duration::from_secs(40) {
        if lost(s.pool.clone()).await? > 0 {
            closed_after = Some(killed.elapsed().as_secs_f64());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A little more play after the closing, then count.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let found: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM games WHERE status = 'finished' AND id = ANY($1)")
            .bind(&before)
            .fetch_all(&s.pool)
            .await?;
    Ok(Fault {
        bench: "workers-fault",
        killed: victim_role,
        killed_at_s: (killed - started).as_secs_f64(),
        finished_before: before.len(),
        finished_before_found_after: found.len(),
        matches_closed: lost(s.pool.clone()).await?,
        matches_rerun: 0,
        closed_after_s: closed_after,
        finished_after: count(&s.pool, "finished").await? - before.len() as i64,
    })
}

/// The line of the medians over the rounds: matches/s of one and two
/// workers (each run, in round order), and two ÷ one.
fn medians_line(runs: &[Vec<f64>; 2]) -> serde_json::Value {
    use crate::bench::server_stats::{median, round};
    let (one, two) = (median(runs[0].clone()), median(runs[1].clone()));
    let each = |v: &Vec<f64>| v.iter().copied().map(round).collect::<Vec<_>>();
    serde_json::json!({
        "bench": "workers-medians",
        "rounds": runs[0].len(),
        "one_worker_matches_per_s": round(one),
        "two_workers_matches_per_s": round(two),
        "one_worker_runs": each(&runs[0]),
        "two_workers_runs": each(&runs[1]),
        "of_one_worker": (one > 0.0).then(|| round(two / one)),
        "scale_out_efficiency": (one > 0.0).then(|| round(two / (2.0 * one))),
    })
}

/// Runs the benchmark (`rounds` runs of 1 and 2 workers, alternating
/// which goes first); prints one JSON line per figure.
pub fn run(
    seconds: f64,
    bots: usize,
    exe: &std::path::Path,
    quota: Option<f64>,
    rounds: usize,
) -> Result<(), CliError> {
    if !(2..=500).contains(&bots) {
        return Err(CliError::Usage(
            "--bots must be between 2 and 500 for bench workers".into(),
        ));
    }
    let cluster = ScratchCluster::start(true)
        .map_err(|e| CliError::Usage(format!("bench workers needs PostgreSQL: {e}")))?;
    let rt = tokio::runtime::Runtime::new().map_err(|e| CliError::Failed(e.into()))?;
    rt.block_on(async {
        let app = axum::Router::new().route(
            "/{bot}",
            axum::routing::post(|body: String| async move { bid(body).await }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let mut runs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for round in 1..=rounds {
            // 1 then 2 workers in odd rounds, 2 then 1 in even ones.
            let order = crate::bench::cluster_report::order(&[1, 2], round);
            let mut measured = Vec::new();
            for workers in order {
                let t = throughput(&cluster, port, exe, workers, bots, seconds, quota).await?;
                runs[workers - 1].push(t.matches_per_s);
                measured.push(t);
            }
            let one = measured
                .iter()
                .find(|t| t.workers == 1)
                .map_or(0.0, |t| t.matches_per_s);
            measured.sort_by_key(|t| t.workers);
            for t in &measured {
                let mut line = serde_json::to_value(t)?;
                line["round"] = serde_json::json!(round);
                // Scale-out: matches/s with N workers ÷ (N × with one, the
                // same round).
                if one > 0.0 {
                    line["of_one_worker"] = serde_json::json!(t.matches_per_s / one);
                    line["scale_out_efficiency"] =
                        serde_json::json!(t.matches_per_s / (t.workers as f64 * one));
                }
                println!("{line}");
            }
        }
        if rounds > 1 {
            println!("{}", medians_line(&runs));
        }
        for victim in ["worker", "serve"] {
            let f = fault(&cluster, port, exe, victim, bots).await?;
            println!("{}", serde_json::to_string(&f)?);
        }
        anyhow::Ok(())
    })
    .map_err(CliError::Failed)
}
