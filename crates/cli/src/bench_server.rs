//! `croupier bench server`: N concurrent REST bots play full SkullWhist games
//! against a real `croupier serve` child process on loopback; the same load
//! generator then hits a trivial axum endpoint in this process, which shows
//! the limit of the machine and of the load generator itself.
//!
//! Latencies are kept per endpoint: status, bid, play and old-game are the
//! server's service time; new-game is a long poll that waits for an opponent
//! and is reported apart, as the matchmaking wait. The server's memory is
//! sampled through the run, so a long run (`--seconds 600`) is a soak test.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use serde_json::{json, Value};

use crate::bench_proc::{
    cpu_seconds, load_average, open_fds, rss_mib, status_kib, wait_up, Server,
};
use crate::bench_rest_bots::{client, spawn_bots, Bot};
use crate::bench_server_stats::{round, Endpoint, Stats, Summary};

/// The bare endpoint runs at most this long (a soak run needs no soak of
/// the baseline).
const BARE_SECONDS_MAX: f64 = 30.0;

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Concurrent REST bots.
    pub bots: usize,
    /// Seconds measured after the warm-up.
    pub seconds: f64,
    /// One JSON object instead of the table.
    pub json: bool,
    /// The `croupier` binary to serve with (default: this one).
    pub server: PathBuf,
    /// The server's database URL (default: SQLite in a temporary folder).
    pub database: Option<String>,
    /// The server and the bare endpoint on one half of the CPUs, the load
    /// generator on the other (see `bench_cores`).
    pub split_cores: bool,
}

/// Memory of the server through the measured time.
#[derive(Debug, Default)]
struct Memory {
    idle_mib: f64,
    after_warmup_mib: f64,
    /// (seconds since the warm-up, RSS MiB).
    samples: Vec<(f64, f64)>,
}

impl Memory {
    fn json(&self, pid: u32) -> Value {
        let rss: Vec<f64> = self.samples.iter().map(|s| s.1).collect();
        let half = &rss[rss.len() / 2..];
        let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
        let end = rss.last().copied().unwrap_or(0.0);
        json!({
            "idle_mib": self.idle_mib,
            "after_warmup_mib": self.after_warmup_mib,
            "end_mib": end,
            "max_mib": max(&rss),
            "max_second_half_mib": max(half),
            "peak_mib": round(status_kib(pid, "VmHWM:").unwrap_or(0) as f64 / 1024.0),
            "growth_after_warmup_mib": round(end - self.after_warmup_mib),
            "samples": self.samples.iter().map(|(t, m)| json!([round(*t), m])).collect::<Vec<_>>(),
        })
    }
}

/// Runs the server benchmark and prints its table (or JSON).
pub fn run(options: Options) -> anyhow::Result<()> {
    let fd_limit = croupier_server::net::raise_fd_limit() as usize;
    // Each bot holds one connection here and one in the server (the child
    // inherits the limit); both processes need some to spare.
    if options.bots + 200 > fd_limit {
        return Err(anyhow!(
            "{} bots need about {} open files; the limit is {fd_limit} (raise it with ulimit -n)",
            options.bots,
            options.bots + 200
        ));
    }
    let dir = tempfile::tempdir()?;
    let database = options.database.clone().map_or_else(
        || format!("sqlite://{}", dir.path().join("bench.db").display()),
        String::from,
    );
    let cores = options
        .split_cores
        .then(crate::bench_cores::split)
        .transpose()?;
    if let Some(c) = &cores {
        crate::bench_cores::pin_this_thread(&c.server)?;
    }
    // Only the REST bots under test play.
    let (server, base) = Server::serve(
        &options.server,
        &database,
        &["--poll-timeout", "5", "--no-ladder"],
        "warn",
    )?;
    let pid = server.pid();
    // The load generator's runtime, built below, starts its threads here.
    if let Some(c) = &cores {
        crate::bench_cores::pin_this_thread(&c.load)?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let load_before = load_average();
    rt.block_on(async {
        wait_up(&base).await?;
        let mut memory = Memory {
            idle_mib: rss_mib(pid),
            ..Memory::default()
        };
        let stats = Arc::new(Stats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = spawn_bots(options.bots, &base, 'b', &stats, &stop)?;
        // Registrations and logins (argon2id) happen first; measure once
        // every bot has logged in and, since, as many games have ended as
        // there are bots (or after a generous while).
        let warm = Instant::now();
        let warm_limit = Duration::from_secs(60 + options.bots as u64 / 2);
        let bots = options.bots as u64;
        let mut ends_at_login = None;
        while warm.elapsed() < warm_limit
            && !tasks.is_empty()
        {
            if let Some(Ok(Err(e))) = tasks.try_join_next() {
                stop.store(true, Ordering::Relaxed);
                return Err(e.context("a benchmark bot failed during the warm-up"));
            }
            let ends = stats.game_ends.load(Ordering::Relaxed);
            if stats.logged_in.load(Ordering::Relaxed) >= bots {
                let at_login = *ends_at_login.get_or_insert(ends);
                if ends >= at_login + bots {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let warmup_secs = warm.elapsed().as_secs_f64();
        if warm.elapsed() >= warm_limit {
            eprintln!("bench server: the warm-up was cut short after {warmup_secs:.0} s");
        }
        // For a profiler attached to the server (docs/benchmarks.md).
        eprintln!(
            "bench server: warm-up over after {warmup_secs:.1} s; measuring server pid {pid} for {} s",
            options.seconds
        );
        let (g0, r0) = (
            stats.game_ends.load(Ordering::Relaxed),
            stats.requests.load(Ordering::Relaxed),
        );
        let cpu0 = cpu_seconds(pid);
        memory.after_warmup_mib = rss_mib(pid);
        server.take_waits().await;
        stats.clear_latencies();
        let start = Instant::now();
        let time = Duration::from_secs_f64(options.seconds);
        let every = Duration::from_secs_f64((options.seconds / 20.0).clamp(0.5, 30.0));
        while start.elapsed() < time {
            tokio::time::sleep(every.min(time.saturating_sub(start.elapsed()))).await;
            memory
                .samples
                .push((start.elapsed().as_secs_f64(), rss_mib(pid)));
        }
        let secs = start.elapsed().as_secs_f64();
        let (g1, r1) = (
            stats.game_ends.load(Ordering::Relaxed),
            stats.requests.load(Ordering::Relaxed),
        );
        let cpu1 = cpu_seconds(pid);
        let waits = server.take_waits().await;
        let fds = open_fds(pid);
        stop.store(true, Ordering::Relaxed);
        let mut errors = Vec::new();
        while let Some(r) = tasks.join_next().await {
            match r {
                Ok(Ok(())) => {}
                Ok(Err(e)) => errors.push(format!("{e:#}")),
                Err(e) => errors.push(e.to_string()),
            }
        }
        let croupier = Measured {
            seconds: secs,
            requests_per_sec: (r1 - r0) as f64 / secs,
            games_per_sec: (g1 - g0) as f64 / 2.0 / secs,
            stats: Arc::clone(&stats),
        };
        let bare_time = Duration::from_secs_f64(options.seconds.min(BARE_SECONDS_MAX));
        let bare = baseline(options.bots, bare_time, cores.map(|c| c.server)).await?;
        let extra = json!({
            "warmup_seconds": round(warmup_secs),
            "server_cpu_cores": round((cpu1 - cpu0) / secs),
            "server_open_fds": fds,
            "memory": memory.json(pid),
            "bot_errors": errors.len(),
            "first_bot_error": errors.first(),
            "load_average_before": load_before,
            "load_average_after": load_average(),
            "split_cores": cores.map(|c| json!({"server_cpus": c.counts.0, "load_cpus": c.counts.1})),
            "waits": waits.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        });
        report(&options, &croupier, &bare, extra);
        if !options.json {
            crate::bench_waits::print("in the server", &waits, secs);
        }
        Ok(())
    })
}

/// The bare endpoint's server: a task of this runtime, or a thread with a
/// runtime of its own.
enum Bare {
    Task(tokio::task::JoinHandle<std::io::Result<()>>),
    Thread(
        tokio::sync::oneshot::Sender<()>,
        std::thread::JoinHandle<anyhow::Result<()>>,
    ),
}

impl Bare {
    async fn stop(self) -> anyhow::Result<()> {
        match self {
            Bare::Task(task) => {
                task.abort();
                Ok(())
            }
            Bare::Thread(stop, thread) => {
                // The thread may have ended already (its error is below).
                let _ = stop.send(());
                tokio::task::spawn_blocking(move || thread.join())
                    .await?
                    .map_err(|_| anyhow!("the bare endpoint's thread panicked"))?
            }
        }
    }
}

fn bare_app() -> axum::Router {
    axum::Router::new().route(
        "/api/{method}/",
        axum::routing::post(|| async { axum::Json(json!({"result": "success"})) }),
    )
}

/// The figures of one target.
struct Measured {
    seconds: f64,
    requests_per_sec: f64,
    games_per_sec: f64,
    stats: Arc<Stats>,
}

/// The same request loop against an endpoint that does nothing: in this
/// process's runtime, or with `--split-cores` on a runtime of its own on the
/// server's CPUs (`on`), as the server under test ran.
async fn baseline(
    bots: usize,
    time: Duration,
    on: Option<nix::sched::CpuSet>,
) -> anyhow::Result<Measured> {
    let (addr, server) = match on {
        None => {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            let addr: SocketAddr = listener.local_addr()?;
            let task = tokio::spawn(async move { axum::serve(listener, bare_app()).await });
            (addr, Bare::Task(task))
        }
        Some(cpus) => {
            let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
            listener.set_nonblocking(true)?;
            let addr = listener.local_addr()?;
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let thread = std::thread::spawn(move || -> anyhow::Result<()> {
                crate::bench_cores::pin_this_thread(&cpus)?;
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()?;
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)?;
                    tokio::select! {
                        served = axum::serve(listener, bare_app()) => served?,
                        _ = stopped => {}
                    }
                    anyhow::Ok(())
                })
            });
            (addr, Bare::Thread(stop, thread))
        }
    };
    let stats = Arc::new(Stats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..bots {
        let bot = Bot {
            client: client(i)?,
            base: format!("http://{addr}"),
            stats: Arc::clone(&stats),
        };
        let stop = Arc::clone(&stop);
        tasks.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let body = json!({"session": "0123456789abcdef0123456789abcdef"});
                if bot.call(Endpoint::Status, body).await.is_err() {
                    break;
                }
            }
        });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let r0 = stats.requests.load(Ordering::Relaxed);
    stats.clear_latencies();
    let start = Instant::now();
    tokio::time::sleep(time).await;
    let secs = start.elapsed().as_secs_f64();
    let r1 = stats.requests.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    server.stop().await?;
    Ok(Measured {
        seconds: secs,
        requests_per_sec: (r1 - r0) as f64 / secs,
        games_per_sec: 0.0,
        stats,
    })
}

/// Prints the per-endpoint table and the ratios against the bare endpoint,
/// or one JSON object with the same figures.
fn report(options: &Options, croupier: &Measured, bare: &Measured, extra: Value) {
    let bare_all = bare.stats.summary(Endpoint::Status);
    let service = croupier.stats.service();
    let wait = croupier.stats.summary(Endpoint::NewGame);
    let rows: Vec<(Endpoint, Summary)> = Endpoint::SERVICE
        .iter()
        .map(|&e| (e, croupier.stats.summary(e)))
        .collect();
    let rps_ratio = croupier.requests_per_sec / bare.requests_per_sec.max(1e-9);
    let p99_ratio = |s: &Summary| s.p99_ms / bare_all.p99_ms.max(1e-9);
    let count = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    if options.json {
        let mut endpoints = serde_json::Map::new();
        for (e, s) in &rows {
            let mut v = json!(s);
            v["p99_over_bare_p99"] = json!(round(p99_ratio(s)));
            endpoints.insert(e.method().to_string(), v);
        }
        let mut line = json!({
            "bench": "server",
            "bots": options.bots,
            "server": options.server.display().to_string(),
            "seconds": round(croupier.seconds),
            "games_per_sec": round(croupier.games_per_sec),
            "requests_per_sec": round(croupier.requests_per_sec),
            "requests_per_sec_over_bare": round(rps_ratio),
            "endpoints": endpoints,
            "service": service,
            "service_p99_over_bare_p99": round(p99_ratio(&service)),
            "matchmaking_wait": wait,
            "new_game_retries": count(&croupier.stats.new_game_retries),
            "refused_plays": count(&croupier.stats.refused_plays),
            "old_game_refusals": count(&croupier.stats.old_game_refusals),
            "auth_retries": count(&croupier.stats.auth_retries),
            "bare": {
                "seconds": round(bare.seconds),
                "requests_per_sec": round(bare.requests_per_sec),
                "latency": bare_all,
            },
        });
        if let (Some(l), Some(x)) = (line.as_object_mut(), extra.as_object()) {
            l.extend(x.clone());
        }
        println!("{line}");
        return;
    }
    println!(
        "croupier bench server: {} REST bots, {:.1} s measured after a {} s warm-up; bare endpoint {:.1} s",
        options.bots, croupier.seconds, extra["warmup_seconds"], bare.seconds
    );
    println!(
        "server: {}; load average before {}, after {}",
        options.server.display(),
        extra["load_average_before"].as_str().unwrap_or(""),
        extra["load_average_after"].as_str().unwrap_or("")
    );
    println!();
    println!("| endpoint | calls | p50 ms | p90 ms | p99 ms | max ms | p99 / bare p99 | |");
    println!("|---|---|---|---|---|---|---|---|");
    for (e, s) in &rows {
        let target = match e {
            Endpoint::OldGame => "",
            _ if p99_ratio(s) <= 2.0 => "target ≤ 2×: met",
            _ => "target ≤ 2×: missed",
        };
        println!("{}", s.row(e.method(), bare_all.p99_ms, target));
    }
    println!("{}", service.row("**service calls**", bare_all.p99_ms, ""));
    let retries = format!("{} retry answers", count(&croupier.stats.new_game_retries));
    println!("{}", wait.row("new-game (matchmaking wait)", 0.0, &retries));
    println!(
        "{}",
        bare_all.row("bare axum endpoint", bare_all.p99_ms, "")
    );
    println!();
    println!(
        "games/s {:.1}; requests/s {:.0} = {:.0}% of the bare endpoint's {:.0} (target ≥ 80%: {})",
        croupier.games_per_sec,
        croupier.requests_per_sec,
        rps_ratio * 100.0,
        bare.requests_per_sec,
        if rps_ratio >= 0.8 { "met" } else { "missed" }
    );
    let m = &extra["memory"];
    println!(
        "server: {} CPU cores, {} open files; RSS MiB idle {}, after warm-up {}, end {} (max {}, max in the second half {}, peak {})",
        extra["server_cpu_cores"],
        extra["server_open_fds"],
        m["idle_mib"],
        m["after_warmup_mib"],
        m["end_mib"],
        m["max_mib"],
        m["max_second_half_mib"],
        m["peak_mib"]
    );
    if croupier.seconds >= 60.0 {
        let samples: Vec<String> = m["samples"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| format!("{}s:{}", s[0].as_f64().unwrap_or(0.0).round(), s[1]))
            .collect();
        println!("RSS samples (MiB): {}", samples.join(" "));
    }
    if let Some(split) = extra["split_cores"].as_object() {
        println!(
            "split cores: the server and the bare endpoint on {} CPU(s), the load generator on {}",
            split["server_cpus"], split["load_cpus"]
        );
    }
    println!(
        "refused plays {}, old-game refusals {}, register/login retries {}, bot errors {}{}",
        count(&croupier.stats.refused_plays),
        count(&croupier.stats.old_game_refusals),
        count(&croupier.stats.auth_retries),
        extra["bot_errors"],
        extra["first_bot_error"]
            .as_str()
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default()
    );
}
