//! `croupier bench server --instances 1,2,3`: the REST bots of `bench
//! server` against one `croupier serve` on SQLite, reached directly and
//! then behind haproxy, then one on PostgreSQL reached directly, then 1,
//! 2, 3… instances on one PostgreSQL database behind haproxy (round robin,
//! the configuration of docs/deploy/haproxy.cfg), in the same run: games
//! per second and the service latencies of each setup, and each setup's
//! share of SQLite's games/s reached the same way (directly, or through
//! the proxy, which shares the machine's cores). PostgreSQL is the
//! `--database` URL, or else a throw-away cluster (a fresh database per
//! setup).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};

pub use crate::bench::cluster_report::Options;
use crate::bench::cluster_report::{order, report, Row};
use crate::bench::proc::{cpu_seconds, free_port, wait_up, Owned};
use crate::bench::rest_bots::{spawn_bots, Control};
use crate::bench::server_stats::Stats;

/// The proxy configuration of the docs.
/// Its lines marked `# affinity` route on the session (issue 50); without
/// them, `balance roundrobin`.
const HAPROXY_CFG: &str = include_str!("../../../../docs/deploy/haproxy.cfg");

/// A server instance, given a CPU cgroup of its own when there is a
/// quota (the process is dropped, and ends, before its cgroup is removed).
/// It starts outside the cgroup, so that its bots register and log in
/// (argon2, the longest part of the warm-up) at full speed, and enters it
/// before the measured time ([`Instance::confine`]).
struct Instance {
    proc: Owned,
    group: Option<crate::bench::cgroup::CpuGroup>,
}

impl Instance {
    fn pid(&self) -> u32 {
        self.proc.0.id()
    }

    /// Moves the instance (all its threads) into its capped cgroup.
    fn confine(&self) -> anyhow::Result<()> {
        match &self.group {
            Some(g) => g.add(self.pid()),
            None => Ok(()),
        }
    }
}

/// `croupier serve` on `port`, with a cgroup capped to `quota` cores if
/// given.
fn instance(
    server: &Path,
    database: &str,
    port: u16,
    quota: Option<f64>,
) -> anyhow::Result<Instance> {
    let group = crate::bench::cgroup::CpuGroup::capped(quota, &port.to_string())?;
    let proc = serve(server, database, port)?;
    Ok(Instance { proc, group })
}

fn serve(server: &Path, database: &str, port: u16) -> anyhow::Result<Owned> {
    let mut command = Command::new(server);
    crate::bench::waits::arm(&mut command, port);
    let child = command
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--house-bots", "", "--poll-timeout", "5", "--no-ladder"])
        .arg("--database")
        .arg(database)
        // The instances' warnings and errors go to the benchmark's stderr.
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {} serve", server.display()))?;
    Ok(Owned(child))
}

/// The docs' haproxy configuration with our ports: the frontend on
/// `front`, one `server` line per backend port.
pub fn haproxy_config(front: u16, backs: &[u16], affinity: bool) -> String {
    let mut out = String::new();
    for line in HAPROXY_CFG.lines() {
        if !affinity && line.trim_end().ends_with("# affinity") {
            if line.contains("balance ") {
                out.push_str("    balance roundrobin\n");
            }
            continue;
        }
        if line.trim_start().starts_with("server ") {
            continue;
        }
        out.push_str(&line.replace("127.0.0.1:8080", &format!("127.0.0.1:{front}")));
        out.push('\n');
    }
    for (i, p) in backs.iter().enumerate() {
        out.push_str(&format!("    server s{i} 127.0.0.1:{p}\n"));
    }
    out
}

/// haproxy in front of `backs` (the docs' configuration), its frontend
/// on a free port: the proxy and that port.
fn proxy(dir: &Path, name: &str, backs: &[u16], affinity: bool) -> anyhow::Result<(Owned, u16)> {
    let front = free_port()?;
    let cfg = dir.join(format!("haproxy-{name}.cfg"));
    std::fs::write(&cfg, haproxy_config(front, backs, affinity))?;
    let proxy = Command::new("haproxy")
        .arg("-db")
        .arg("-f")
        .arg(&cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start haproxy (is it installed?)")?;
    Ok((Owned(proxy), front))
}

/// Statements PostgreSQL has run so far on the whole cluster, if
/// `pg_stat_statements` is loaded (`shared_preload_libraries`).
async fn statements_so_far(url: Option<&str>) -> Option<i64> {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(url?).await.ok()?;
    sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .execute(&mut c)
        .await
        .ok()?;
    sqlx::query_scalar("SELECT COALESCE(SUM(calls), 0)::BIGINT FROM pg_stat_statements")
        .fetch_one(&mut c)
        .await
        .ok()
}

/// How long the instances run under their quota before the measured
/// time: the requests queued at the quota settle.
const SETTLE: Duration = Duration::from_secs(3);

/// Runs the bots against `base` (served by `servers` on `ports`); the
/// servers enter their capped cgroups after the warm-up.
async fn measure(
    setup: String,
    base: &str,
    ports: &[u16],
    servers: &[Instance],
    options: &Options,
    pg: Option<&str>,
) -> anyhow::Result<Row> {
    let pids: Vec<u32> = servers.iter().map(Instance::pid).collect();
    let pids = &pids[..];
    wait_up(base).await?;
    let stats = Arc::new(Stats::default());
    let control = Arc::new(Control::default());
    let mut tasks = spawn_bots(options.bots, base, 'c', &stats, &control)?;
    let bots = options.bots as u64;
    let warm = Instant::now();
    let limit = Duration::from_secs(60 + bots / 2);
    let mut at_login = None;
    while warm.elapsed() < limit {
        if let Some(Ok(Err(e))) = tasks.try_join_next() {
            control.stop();
            return Err(e.context(format!("{setup}: a bot failed during the warm-up")));
        }
        let ends = stats.game_ends.load(Ordering::Relaxed);
        if stats.logged_in.load(Ordering::Relaxed) >= bots {
            let a = *at_login.get_or_insert(ends);
            if ends >= a + bots {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let warmed = warm.elapsed().as_secs_f64();
    if options.cpu_quota.is_some() {
        for s in servers {
            s.confine()?;
        }
        tokio::time::sleep(SETTLE).await;
    }
    // For a profiler attached to the instances (docs/benchmarks.md).
    eprintln!(
        "bench cluster: {setup}: warm-up over after {warmed:.1} s; measuring server pids {} for {} s",
        pids.iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
        options.seconds
    );
    let (g0, r0) = (
        stats.game_ends.load(Ordering::Relaxed),
        stats.requests.load(Ordering::Relaxed),
    );
    let cpu = || -> f64 { pids.iter().map(|p| cpu_seconds(*p)).sum() };
    let cpu0 = cpu();
    let s0 = statements_so_far(pg).await;
    crate::bench::waits::take(ports, pids).await;
    stats.clear_latencies();
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(options.seconds)).await;
    let secs = start.elapsed().as_secs_f64();
    let (g1, r1) = (
        stats.game_ends.load(Ordering::Relaxed),
        stats.requests.load(Ordering::Relaxed),
    );
    let s1 = statements_so_far(pg).await;
    let waits = crate::bench::waits::merge(crate::bench::waits::take(ports, pids).await);
    let cpu_cores = (cpu() - cpu0) / secs;
    control.stop();
    let mut errors = 0;
    // Bots finish their game; a few seconds at most.
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end {
        match tokio::time::timeout(Duration::from_secs(1), tasks.join_next()).await {
            Ok(None) => break,
            Ok(Some(Ok(Ok(())))) | Err(_) => {}
            Ok(Some(_)) => errors += 1,
        }
    }
    tasks.shutdown().await;
    Ok(Row {
        setup,
        round: 1,
        sqlite: false,
        proxied: false,
        games_per_sec: (g1 - g0) as f64 / 2.0 / secs,
        requests_per_sec: (r1 - r0) as f64 / secs,
        stats,
        cpu_cores,
        errors,
        // Less the two statements of the second look.
        statements: s0.zip(s1).map(|(a, b)| b - a - 2),
        seconds: secs,
        waits,
    })
}

/// Runs every setup and prints the table (or JSON).
pub fn run(options: Options) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let mut rows = Vec::new();
    // SQLite: one instance (what one machine runs), reached directly,
    // then behind the proxy (the baseline of the proxied setups), each on
    // a database of its own.
    for proxied in [false, true] {
        let port = free_port()?;
        let file = format!("bench-{}.db", if proxied { "proxied" } else { "direct" });
        let db = format!("sqlite://{}", dir.path().join(file).display());
        let server = instance(&options.server, &db, port, options.cpu_quota)?;
        let (base, setup, _proxy) = if proxied {
            rt.block_on(wait_up(&format!("http://127.0.0.1:{port}")))?;
            let (proxy, front) = proxy(dir.path(), "sqlite", &[port], false)?;
            let base = format!("http://127.0.0.1:{front}");
            (base, "SQLite, 1 instance, haproxy", Some(proxy))
        } else {
            let base = format!("http://127.0.0.1:{port}");
            (base, "SQLite, 1 instance, direct", None)
        };
        eprintln!("bench cluster: {setup}");
        let row = rt.block_on(measure(
            setup.into(),
            &base,
            &[port],
            std::slice::from_ref(&server),
            &options,
            None,
        ))?;
        rows.push(Row {
            sqlite: true,
            proxied,
            ..row
        });
    }
    let scratch = match &options.database {
        Some(_) => None,
        None => Some(
            croupier_store::scratch::ScratchCluster::start(true)
                .map_err(|e| anyhow!("a throw-away PostgreSQL cluster: {e}"))?,
        ),
    };
    // One instance without the proxy first (beside SQLite's, also direct),
    // then the instance counts asked for, behind haproxy, in each round.
    let rounds = (1..=options.rounds).flat_map(|r| {
        order(&options.instances, r)
            .into_iter()
            .map(move |n| (n, true, r))
    });
    let setups = std::iter::once((1, false, 1)).chain(rounds);
    for (n, proxied, round) in setups {
        let url = match (&options.database, &scratch) {
            (Some(url), _) => url.clone(),
            (None, Some(c)) => rt.block_on(c.create_database())?,
            (None, None) => return Err(anyhow!("no database")),
        };
        let ports: Vec<u16> = (0..n).map(|_| free_port()).collect::<Result<_, _>>()?;
        let mut servers = Vec::new();
        for p in &ports {
            servers.push(instance(&options.server, &url, *p, options.cpu_quota)?);
            // The first one migrates the database.
            rt.block_on(wait_up(&format!("http://127.0.0.1:{p}")))?;
        }
        if !proxied {
            eprintln!("bench cluster: PostgreSQL, 1 instance, direct");
            rows.push(rt.block_on(measure(
                "PostgreSQL, 1 instance, direct".into(),
                &format!("http://127.0.0.1:{}", ports[0]),
                &ports,
                &servers,
                &options,
                Some(&url),
            ))?);
            drop(servers);
            continue;
        }
        let (proxy, front) = proxy(
            dir.path(),
            &format!("postgres{n}"),
            &ports,
            options.affinity,
        )?;
        eprintln!(
            "bench cluster: PostgreSQL, {n} instance(s) behind haproxy (round {round} of {})",
            options.rounds
        );
        let row = rt.block_on(measure(
            format!("PostgreSQL, {n} instance(s), haproxy"),
            &format!("http://127.0.0.1:{front}"),
            &ports,
            &servers,
            &options,
            Some(&url),
        ))?;
        rows.push(Row {
            proxied,
            round,
            ..row
        });
        drop(proxy);
        drop(servers);
    }
    report(&options, &rows);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::haproxy_config;

    #[test]
    fn the_docs_proxy_routes_on_the_session_or_round_robin() {
        let affinity = haproxy_config(9000, &[9001, 9002], true);
        assert!(affinity.contains("balance hash req.body,json_query('$.session')"));
        assert!(affinity.contains("option http-buffer-request"));
        assert!(!affinity.contains("    balance roundrobin"));
        let plain = haproxy_config(9000, &[9001, 9002], false);
        assert!(plain.contains("    balance roundrobin\n"));
        assert!(!plain.contains("json_query") && !plain.contains("http-buffer-request"));
        for cfg in [&affinity, &plain] {
            assert!(cfg.contains("bind 127.0.0.1:9000"));
            assert!(
                cfg.contains("server s0 127.0.0.1:9001")
                    && cfg.contains("server s1 127.0.0.1:9002")
            );
        }
    }
}
