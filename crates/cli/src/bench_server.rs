//! `croupier bench server`: N concurrent REST bots play full SkullWhist games
//! against a real `croupier serve` child process on loopback; the same load
//! generator then hits a trivial axum endpoint in this process, which shows
//! the limit of the machine and of the load generator itself.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use rand::seq::IndexedRandom;
use serde_json::{json, Value};

/// Latencies (µs) and counts collected by the load generator.
#[derive(Default)]
struct Stats {
    latencies: Mutex<Vec<u32>>,
    requests: AtomicU64,
    games: AtomicU64,
    failures: AtomicU64,
}

impl Stats {
    fn record(&self, t: Instant) {
        let us = t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
        self.requests.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut l) = self.latencies.lock() {
            l.push(us);
        }
    }

    fn percentiles(&self) -> (f64, f64) {
        let mut l = self.latencies.lock().map(|l| l.clone()).unwrap_or_default();
        if l.is_empty() {
            return (0.0, 0.0);
        }
        l.sort_unstable();
        let p = |q: f64| f64::from(l[((l.len() - 1) as f64 * q) as usize]) / 1000.0;
        (p(0.50), p(0.99))
    }
}

struct Bot {
    client: reqwest::Client,
    base: String,
    stats: Arc<Stats>,
}

impl Bot {
    async fn call(&self, method: &str, body: Value) -> anyhow::Result<Value> {
        let t = Instant::now();
        let reply: Value = self
            .client
            .post(format!("{}/api/{method}/", self.base))
            .json(&body)
            .send()
            .await?
            .json()
            .await?;
        self.stats.record(t);
        Ok(reply)
    }
}

fn ok(v: &Value) -> anyhow::Result<&Value> {
    match v["result"].as_str() {
        Some("success") => Ok(v),
        _ => Err(anyhow!("{v}")),
    }
}

/// One REST bot: plays random legal cards until `stop`.
async fn play(bot: Bot, name: String, stop: Arc<AtomicBool>) -> anyhow::Result<()> {
    ok(&bot
        .call("register", json!({"name": name, "password": "pw"}))
        .await?)?;
    let login = bot
        .call("login", json!({"name": name, "password": "pw"}))
        .await?;
    let session = ok(&login)?["session"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    while !stop.load(Ordering::Relaxed) {
        let g = bot.call("new-game", json!({"session": session})).await?;
        if g["result"] == "retry" {
            continue;
        }
        let mut hand: Vec<String> = ok(&g)?["cards"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        ok(&bot
            .call("bid", json!({"session": session, "bid": 3}))
            .await?)?;
        loop {
            let s = bot.call("status", json!({"session": session})).await?;
            if s["game"].is_null() {
                // Both bots of a game see it end: count halves.
                bot.stats.games.fetch_add(1, Ordering::Relaxed);
                break;
            }
            if s["your-turn"] != true {
                tokio::time::sleep(Duration::from_millis(1)).await;
                continue;
            }
            let lead = s["opponent-current-card"]
                .as_str()
                .map(|c| c.chars().next());
            let follow: Vec<&String> = hand
                .iter()
                .filter(|c| lead.flatten().is_some_and(|l| c.starts_with(l)))
                .collect();
            let choice = if follow.is_empty() {
                hand.choose(&mut rand::rng())
            } else {
                follow.choose(&mut rand::rng()).copied()
            };
            let Some(card) = choice.cloned() else { break };
            let r = bot
                .call("play", json!({"session": session, "card": card}))
                .await?;
            if r["result"] == "success" {
                hand.retain(|c| *c != card);
            } else {
                bot.stats.failures.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    Ok(())
}

fn client() -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(4)
        .timeout(Duration::from_secs(60))
        .build()?)
}

fn rss_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// CPU time (user + system) a process has used, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    ticks / 100.0
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

async fn wait_up(base: &str) -> anyhow::Result<()> {
    let c = client()?;
    for _ in 0..200 {
        if c.get(format!("{base}/api/")).send().await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(anyhow!("the server did not come up"))
}

/// Runs the server benchmark and prints one JSON line per measurement.
pub fn run(
    bots: usize,
    seconds: f64,
    database: Option<&str>,
    exe: &std::path::Path,
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let database = database.map_or_else(
        || format!("sqlite://{}", dir.path().join("bench.db").display()),
        String::from,
    );
    let port = free_port()?;
    let base = format!("http://127.0.0.1:{port}");
    let child = Command::new(exe)
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--house-bots",
            "",
            "--poll-timeout",
            "5",
            // Only the REST bots under test play.
            "--no-ladder",
        ])
        .arg("--database")
        .arg(&database)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start croupier serve")?;
    let server = Server(child);
    let pid = server.0.id();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let time = Duration::from_secs_f64(seconds);
    rt.block_on(async {
        wait_up(&base).await?;
        let idle_rss = rss_kib(pid, "VmRSS:").unwrap_or(0);
        let stats = Arc::new(Stats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = tokio::task::JoinSet::new();
        let run_id: u32 = rand::random();
        for i in 0..bots {
            let bot = Bot {
                client: client()?,
                base: base.clone(),
                stats: Arc::clone(&stats),
            };
            tasks.spawn(play(bot, format!("b{run_id:x}-{i}"), Arc::clone(&stop)));
        }
        // Registration (argon2id) and logins happen first; measure after.
        let warm = Instant::now();
        while stats.games.load(Ordering::Relaxed) < bots as u64 / 2
            && warm.elapsed() < Duration::from_secs(60)
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let (g0, r0) = (
            stats.games.load(Ordering::Relaxed),
            stats.requests.load(Ordering::Relaxed),
        );
        let cpu0 = cpu_seconds(pid);
        let warm_rss = rss_kib(pid, "VmRSS:").unwrap_or(0);
        if let Ok(mut l) = stats.latencies.lock() {
            l.clear();
        }
        let start = Instant::now();
        tokio::time::sleep(time).await;
        let secs = start.elapsed().as_secs_f64();
        let (g1, r1) = (
            stats.games.load(Ordering::Relaxed),
            stats.requests.load(Ordering::Relaxed),
        );
        let cpu1 = cpu_seconds(pid);
        let (p50, p99) = stats.percentiles();
        let live_rss = rss_kib(pid, "VmRSS:").unwrap_or(0);
        let peak_rss = rss_kib(pid, "VmHWM:").unwrap_or(0);
        stop.store(true, Ordering::Relaxed);
        let mut errors = 0;
        while let Some(r) = tasks.join_next().await {
            if !matches!(r, Ok(Ok(()))) {
                errors += 1;
            }
        }
        println!(
            "{}",
            json!({
                "bench": "server", "target": "croupier", "bots": bots, "seconds": round(secs),
                "games_per_sec": round((g1 - g0) as f64 / 2.0 / secs),
                "server_cpu_share": round((cpu1 - cpu0) / secs),
                "requests_per_sec": round((r1 - r0) as f64 / secs),
                "p50_ms": round(p50), "p99_ms": round(p99),
                "server_rss_mib": round(live_rss as f64 / 1024.0),
                "server_peak_rss_mib": round(peak_rss as f64 / 1024.0),
                "server_idle_rss_mib": round(idle_rss as f64 / 1024.0),
                "server_rss_after_logins_mib": round(warm_rss as f64 / 1024.0),
                "refused_plays": stats.failures.load(Ordering::Relaxed),
                "bot_errors": errors,
            })
        );
        baseline(bots, time).await
    })
}

/// The same request loop against an endpoint that does nothing.
async fn baseline(bots: usize, time: Duration) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let app = axum::Router::new().route(
        "/api/{method}/",
        axum::routing::post(|| async { axum::Json(json!({"result": "success"})) }),
    );
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let stats = Arc::new(Stats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..bots {
        let bot = Bot {
            client: client()?,
            base: format!("http://{addr}"),
            stats: Arc::clone(&stats),
        };
        let stop = Arc::clone(&stop);
        tasks.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                if bot
                    .call(
                        "status",
                        json!({"session": "0123456789abcdef0123456789abcdef"}),
                    )
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let r0 = stats.requests.load(Ordering::Relaxed);
    if let Ok(mut l) = stats.latencies.lock() {
        l.clear();
    }
    let start = Instant::now();
    tokio::time::sleep(time).await;
    let secs = start.elapsed().as_secs_f64();
    let r1 = stats.requests.load(Ordering::Relaxed);
    let (p50, p99) = stats.percentiles();
    stop.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    server.abort();
    println!(
        "{}",
        json!({
            "bench": "server", "target": "trivial-axum-endpoint", "bots": bots, "seconds": round(secs),
            "requests_per_sec": round((r1 - r0) as f64 / secs), "p50_ms": round(p50), "p99_ms": round(p99),
        })
    );
    Ok(())
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
