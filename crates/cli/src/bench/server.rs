//! `croupier bench server`: N concurrent REST bots play full SkullWhist games
//! against a real `croupier serve` child process on loopback; in turns with
//! them, the same load generator hits a trivial axum endpoint in a child
//! process of its own (`bench::bare`), which shows the limit of the machine
//! and of the load generator itself.
//!
//! Latencies are kept per endpoint: status, bid, play and old-game are the
//! server's service time; new-game is a long poll that waits for an opponent
//! and is reported apart, as the matchmaking wait. The server's memory is
//! sampled through the run, so a long run (`--seconds 600`) is a soak test.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context as _};
use serde_json::{json, Value};

use crate::bench::bare::Slice;
use crate::bench::proc::{
    cpu_seconds, load_average, open_fds, rss_mib, status_kib, wait_bare, wait_up, Server,
};
use crate::bench::rest_bots::{spawn_bots, Control};
use crate::bench::server_stats::{round, Endpoint, Stats, Summary};

/// The bare endpoint runs at most this long in all (a soak run needs no
/// soak of the baseline).
const BARE_SECONDS_MAX: f64 = 30.0;
/// After the bots resume, the time before the server's next slice.
const RAMP: Duration = Duration::from_secs(1);
/// How long the bots may take to finish their games when paused.
const PAUSE_LIMIT: Duration = Duration::from_secs(15);
/// How long the bots may take to be back in games when resumed.
const RESUME_LIMIT: Duration = Duration::from_secs(5);

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
    /// generator on the other (see `bench::cores`).
    pub split_cores: bool,
    /// This `croupier` binary, which serves the bare endpoint.
    pub exe: PathBuf,
    /// Slices of the measured time, each followed by one of the bare
    /// endpoint's.
    pub alternations: usize,
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
        .then(crate::bench::cores::split)
        .transpose()?;
    if let Some(c) = &cores {
        crate::bench::cores::pin_this_thread(&c.server)?;
    }
    // Only the REST bots under test play.
    let (server, base) = Server::serve(
        &options.server,
        &database,
        &["--poll-timeout", "5", "--no-ladder"],
        "warn",
    )?;
    let pid = server.pid();
    // Started on the server's CPUs too.
    let (bare_endpoint, bare_base) = crate::bench::bare::BareChild::start(&options.exe)?;
    // The load generator's runtime, built below, starts its threads here.
    if let Some(c) = &cores {
        crate::bench::cores::pin_this_thread(&c.load)?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let load_before = load_average();
    rt.block_on(async {
        wait_up(&base).await?;
        wait_bare(&bare_base)
            .await
            .context("the bare endpoint's process (croupier bench bare-endpoint)")?;
        let mut memory = Memory {
            idle_mib: rss_mib(pid),
            ..Memory::default()
        };
        let stats = Arc::new(Stats::default());
        let control = Arc::new(Control::default());
        let mut tasks = spawn_bots(options.bots, &base, 'b', &stats, &control)?;
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
                control.stop();
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
        // For a profiler attached to the server (docs/benchmarks.md), and
        // for scripts/build-pgo.sh, which finds the server's profile by
        // this PID: keep the words "measuring server pid N".
        eprintln!(
            "bench server: warm-up over after {warmup_secs:.1} s; measuring server pid {pid} for {} s",
            options.seconds
        );
        memory.after_warmup_mib = rss_mib(pid);
        stats.clear_latencies();
        let bare_stats = Arc::new(Stats::default());
        let n = options.alternations;
        let slice_time = Duration::from_secs_f64(options.seconds / n as f64);
        let bare_time = Duration::from_secs_f64(options.seconds.min(BARE_SECONDS_MAX) / n as f64);
        let every = Duration::from_secs_f64((options.seconds / 20.0).clamp(0.5, 30.0));
        let (mut mine, mut theirs) = (Totals::default(), Totals::default());
        let (mut unpaused, mut waits, mut fds) = (Vec::new(), Vec::new(), 0);
        for round in 0..n {
            if round > 0 {
                control.resume();
                // Every bot back in a game (a connection idle through a
                // long pause is opened anew), then the ramp.
                control.resumed(options.bots, RESUME_LIMIT).await;
                tokio::time::sleep(RAMP).await;
            }
            // The server's waits in this slice only.
            server.take_waits().await;
            let start = Instant::now();
            let (g0, r0) = (
                stats.game_ends.load(Ordering::Relaxed),
                stats.requests.load(Ordering::Relaxed),
            );
            let (cpu0, me0) = (cpu_seconds(pid), cpu_seconds(std::process::id()));
            stats.keep_latencies(true);
            while start.elapsed() < slice_time {
                tokio::time::sleep(every.min(slice_time.saturating_sub(start.elapsed()))).await;
                memory
                    .samples
                    .push((mine.seconds + start.elapsed().as_secs_f64(), rss_mib(pid)));
            }
            stats.keep_latencies(false);
            let (g1, r1) = (
                stats.game_ends.load(Ordering::Relaxed),
                stats.requests.load(Ordering::Relaxed),
            );
            let (cpu1, me1) = (cpu_seconds(pid), cpu_seconds(std::process::id()));
            waits.push(server.take_waits().await.into_iter().collect());
            fds = open_fds(pid);
            let slice = Slice {
                seconds: start.elapsed().as_secs_f64(),
                requests: r1 - r0,
                server_cpu: cpu1 - cpu0,
                load_cpu: me1 - me0,
            };
            mine.add(&slice, g1 - g0);
            if !control.pause(PAUSE_LIMIT).await {
                unpaused.push(round + 1);
            }
            let b = crate::bench::bare::slice(&bare_endpoint, &bare_base, options.bots, bare_time, &bare_stats)
                .await?;
            theirs.add(&b, 0);
        }
        let waits = crate::bench::waits::merge(waits);
        control.stop();
        let mut errors = Vec::new();
        while let Some(r) = tasks.join_next().await {
            match r {
                Ok(Ok(())) => {}
                Ok(Err(e)) => errors.push(format!("{e:#}")),
                Err(e) => errors.push(e.to_string()),
            }
        }
        let secs = mine.seconds;
        let croupier = mine.measured(Arc::clone(&stats));
        let bare = theirs.measured(bare_stats);
        let extra = json!({
            "warmup_seconds": round(warmup_secs),
            "server_cpu_cores": round(croupier.server_cpu / secs),
            "server_open_fds": fds,
            "memory": memory.json(pid),
            "bot_errors": errors.len(),
            "first_bot_error": errors.first(),
            "load_average_before": load_before,
            "load_average_after": load_average(),
            "split_cores": cores.map(|c| json!({
                "server_cpus": c.counts.0,
                "load_cpus": c.counts.1,
                "server_half": crate::bench::cores::list(&c.server),
                // As the kernel has them, for the children.
                "server_process_cpus": crate::bench::cores::cpus_of(pid),
                "bare_process_cpus": crate::bench::cores::cpus_of(bare_endpoint.pid()),
            })),
            "waits": waits.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "cpu_us_per_request": cpu_figures(&croupier, &bare, cores.is_none()),
            "alternations": mine.rounds.iter().zip(&theirs.rounds).map(|(m, t)| json!({
                "requests_per_sec": round(*m),
                "bare_requests_per_sec": round(*t),
                "over_bare": round(m / t.max(1e-9)),
            })).collect::<Vec<_>>(),
            "rounds_the_bots_did_not_pause_in": unpaused,
        });
        report(&options, &croupier, &bare, extra);
        if !options.json {
            crate::bench::waits::print("in the server", &waits, secs);
        }
        Ok(())
    })
}

/// One target's measured slices, summed.
#[derive(Default)]
struct Totals {
    seconds: f64,
    requests: u64,
    /// Game ends the bots saw (two per game).
    games: u64,
    server_cpu: f64,
    load_cpu: f64,
    /// Requests/s of each slice.
    rounds: Vec<f64>,
}

impl Totals {
    fn add(&mut self, slice: &Slice, games: u64) {
        self.seconds += slice.seconds;
        self.requests += slice.requests;
        self.games += games;
        self.server_cpu += slice.server_cpu;
        self.load_cpu += slice.load_cpu;
        self.rounds
            .push(slice.requests as f64 / slice.seconds.max(1e-9));
    }

    fn measured(&self, stats: Arc<Stats>) -> Measured {
        let secs = self.seconds.max(1e-9);
        Measured {
            seconds: self.seconds,
            requests_per_sec: self.requests as f64 / secs,
            // Both bots of a game see it end.
            games_per_sec: self.games as f64 / 2.0 / secs,
            stats,
            server_cpu: self.server_cpu,
            load_cpu: self.load_cpu,
        }
    }
}

/// The figures of one target.
struct Measured {
    seconds: f64,
    requests_per_sec: f64,
    games_per_sec: f64,
    stats: Arc<Stats>,
    /// CPU seconds the server used in the measured time (0 in this process).
    server_cpu: f64,
    /// CPU seconds this process (the load generator) used then.
    load_cpu: f64,
}

impl Measured {
    /// CPU µs per request of the server and of the load generator.
    fn cpu_us(&self) -> (f64, f64) {
        let requests = (self.requests_per_sec * self.seconds).max(1.0);
        (
            self.server_cpu * 1e6 / requests,
            self.load_cpu * 1e6 / requests,
        )
    }
}

/// CPU µs per request of each party in both runs and, when they share
/// the CPUs (`shared`), the best requests/s ratio a server could reach
/// with these bots if it cost only what the bare endpoint costs: with the
/// CPUs full, requests/s is the CPUs over the CPU time per request of
/// server and load generator together, and the load generator's differs
/// between the two (game replies to parse, cards to choose, timers). With
/// split cores each side has CPUs of its own, and this model does not hold.
fn cpu_figures(croupier: &Measured, bare: &Measured, shared: bool) -> Value {
    let (server, load) = croupier.cpu_us();
    let (bare_server, bare_load) = bare.cpu_us();
    let ceiling = shared.then(|| round((bare_load + bare_server) / (load + bare_server).max(1e-9)));
    json!({
        "server": round(server),
        "load_generator": round(load),
        "bare_endpoint": round(bare_server),
        "load_generator_on_bare": round(bare_load),
        "ratio_ceiling": ceiling,
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
            "throttled": count(&croupier.stats.throttled),
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
        "games/s {:.1}; requests/s {:.0} = {:.1}% of the bare endpoint's {:.0} (target ≥ 80%: {})",
        croupier.games_per_sec,
        croupier.requests_per_sec,
        rps_ratio * 100.0,
        bare.requests_per_sec,
        if rps_ratio >= 0.8 { "met" } else { "missed" }
    );
    let rounds: Vec<String> = extra["alternations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            format!(
                "{:.0}/{:.0} ({:.0}%)",
                r["requests_per_sec"].as_f64().unwrap_or(0.0),
                r["bare_requests_per_sec"].as_f64().unwrap_or(0.0),
                r["over_bare"].as_f64().unwrap_or(0.0) * 100.0
            )
        })
        .collect();
    println!(
        "requests/s of the server and of the bare endpoint, slice by slice: {}",
        rounds.join(", ")
    );
    let late = &extra["rounds_the_bots_did_not_pause_in"];
    if late.as_array().is_some_and(|l| !l.is_empty()) {
        println!(
            "warning: the bots did not pause within {} s before the bare endpoint's slice(s) {late} (counted from 1): it then shared the machine with games",
            PAUSE_LIMIT.as_secs()
        );
    }
    let c = &extra["cpu_us_per_request"];
    let ceiling = c["ratio_ceiling"].as_f64().map_or(String::new(), |r| {
        format!(
            " (a server costing what the bare endpoint costs would reach {:.0}% of its requests/s with these bots)",
            r * 100.0
        )
    });
    println!(
        "CPU µs per request: server {}, load generator {}; bare endpoint {}, load generator {}{ceiling}",
        c["server"], c["load_generator"], c["bare_endpoint"], c["load_generator_on_bare"],
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
        "refused plays {}, old-game refusals {}, register/login retries {}, throttled game calls {}, bot errors {}{}",
        count(&croupier.stats.refused_plays),
        count(&croupier.stats.old_game_refusals),
        count(&croupier.stats.auth_retries),
        count(&croupier.stats.throttled),
        extra["bot_errors"],
        extra["first_bot_error"]
            .as_str()
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default()
    );
}
