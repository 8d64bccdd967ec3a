//! `croupier bench flood`: the probes of issue 18 as figures. A `croupier
//! serve` child on loopback gets many slow connections (half a request head
//! each, from several 127.x addresses) while normal requests are timed;
//! then one client guesses a bot's password as fast as it can.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncWriteExt as _;

use crate::bench::proc::{cpu_seconds, percentile, rss_mib, wait_up, Server};

/// Concurrent keep-alive connections of the over-the-rate phase.
const OVER_RATE_CONNECTIONS: usize = 16;
/// How long the over-the-rate phase sends.
const OVER_RATE_TIME: Duration = Duration::from_secs(3);

/// One bot far over its request rate: `status` as fast as
/// [`OVER_RATE_CONNECTIONS`] connections from one address can ask, for
/// [`OVER_RATE_TIME`]. Nearly every request is throttled (`retry`), so the
/// server's CPU per request is the price of a refusal: (requests, refused,
/// other answers, server CPU µs per request).
async fn over_rate(base: &str, pid: u32) -> anyhow::Result<(u64, u64, u64, f64)> {
    // A server that stops answering ends the bench rather than hanging it.
    let c = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()?;
    let creds = json!({"name": "flood-eager", "password": "a long secret"});
    c.post(format!("{base}/api/register/"))
        .json(&creds)
        .send()
        .await?;
    let login: serde_json::Value = c
        .post(format!("{base}/api/login/"))
        .json(&creds)
        .send()
        .await?
        .json()
        .await?;
    let session = login["session"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("the login reply has no session: {login}"))?
        .to_string();
    let body = json!({ "session": session }).to_string();
    let cpu = cpu_seconds(pid);
    let end = Instant::now() + OVER_RATE_TIME;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..OVER_RATE_CONNECTIONS {
        let (c, url, body) = (c.clone(), format!("{base}/api/status/"), body.clone());
        tasks.spawn(async move {
            let (mut refused, mut other) = (0u64, 0u64);
            while Instant::now() < end {
                let r = c.post(&url).body(body.clone()).send().await?;
                let v: serde_json::Value = r.json().await.unwrap_or_default();
                if v["result"] == "retry" {
                    refused += 1;
                } else {
                    other += 1;
                }
            }
            anyhow::Ok((refused, other))
        });
    }
    let (mut refused, mut other) = (0u64, 0u64);
    while let Some(done) = tasks.join_next().await {
        let (r, o) = done??;
        refused += r;
        other += o;
    }
    let requests = refused + other;
    let us = (cpu_seconds(pid) - cpu) * 1e6 / requests.max(1) as f64;
    Ok((requests, refused, other, us))
}

/// Times `n` normal requests (`GET /api/`, fresh connection each): (p50,
/// p99 in ms, failures).
async fn normal_requests(base: &str, n: usize) -> anyhow::Result<(f64, f64, usize)> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()?;
    let mut ms = Vec::with_capacity(n);
    let mut failures = 0;
    for _ in 0..n {
        let t = Instant::now();
        match client.get(format!("{base}/api/")).send().await {
            Ok(r) if r.status().is_success() => {
                let _ = r.bytes().await;
                ms.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            _ => failures += 1,
        }
    }
    ms.sort_by(f64::total_cmp);
    let tenth = |x: f64| (x * 10.0).round() / 10.0;
    Ok((
        tenth(percentile(&ms, 0.5)),
        tenth(percentile(&ms, 0.99)),
        failures,
    ))
}

/// Runs the benchmark and prints one JSON line per measurement.
pub fn run(connections: usize, addresses: u8, exe: &std::path::Path) -> anyhow::Result<()> {
    let fd_limit = croupier_server::net::raise_fd_limit();
    let room = (fd_limit as usize).saturating_sub(300);
    let connections = connections.min(room);
    let dir = tempfile::tempdir()?;
    let database = format!("sqlite://{}", dir.path().join("flood.db").display());
    let (server, base) = Server::serve(exe, &database, &["--no-ladder"], "error")?;
    let target: SocketAddr = base.trim_start_matches("http://").parse()?;
    let pid = server.pid();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        wait_up(&base).await?;
        let (p50, p99, failed) = normal_requests(&base, 200).await?;
        let rss_idle = rss_mib(pid);
        println!(
            "{}",
            json!({"bench": "flood", "phase": "before", "normal_p50_ms": p50, "normal_p99_ms": p99, "normal_failed": failed, "server_rss_mib": rss_idle})
        );
        // The flood: half a request head per connection, then silence.
        let start = Instant::now();
        let mut held = Vec::with_capacity(connections);
        let mut connect_errors = 0usize;
        for i in 0..connections {
            let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + (i % addresses as usize) as u8));
            let sock = tokio::net::TcpSocket::new_v4()?;
            if sock.bind(SocketAddr::new(source, 0)).is_err() {
                connect_errors += 1;
                continue;
            }
            match tokio::time::timeout(Duration::from_secs(2), sock.connect(target)).await {
                Ok(Ok(mut s)) => {
                    let _ = s.write_all(b"GET /api/ HTTP/1.1\r\nHost: x\r\n").await;
                    held.push(s);
                }
                _ => connect_errors += 1,
            }
        }
        let opened = start.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_millis(500)).await;
        // Held: still open with nothing to read; the others were refused
        // (a 503 to read, or closed).
        let mut buf = [0u8; 512];
        let still_held = held
            .iter()
            .filter(|s| {
                matches!(s.try_read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
            })
            .count();
        let rss_during = rss_mib(pid);
        let (p50, p99, failed) = normal_requests(&base, 200).await?;
        println!(
            "{}",
            json!({"bench": "flood", "phase": "during", "connections": connections, "addresses": addresses,
                   "connect_errors": connect_errors, "held_by_server": still_held, "refused": held.len() - still_held, "seconds_to_open": (opened * 10.0).round() / 10.0,
                   "normal_p50_ms": p50, "normal_p99_ms": p99, "normal_failed": failed,
                   "server_rss_mib": rss_during, "fd_limit": fd_limit})
        );
        drop(held);
        tokio::time::sleep(Duration::from_secs(3)).await;
        let (p50, p99, failed) = normal_requests(&base, 200).await?;
        println!(
            "{}",
            json!({"bench": "flood", "phase": "after", "normal_p50_ms": p50, "normal_p99_ms": p99, "normal_failed": failed, "server_rss_mib": rss_mib(pid)})
        );
        let (requests, refused, other, us) = over_rate(&base, pid).await?;
        println!(
            "{}",
            json!({"bench": "flood", "phase": "over_rate", "connections": OVER_RATE_CONNECTIONS,
                   "seconds": OVER_RATE_TIME.as_secs_f64(), "requests": requests,
                   "throttled_retry": refused, "answered": other,
                   "server_cpu_us_per_request": (us * 10.0).round() / 10.0})
        );
        // Password guessing from one address, for 5 seconds.
        let c = reqwest::Client::builder().no_proxy().build()?;
        let reg = json!({"name": "flood-victim", "password": "a long secret"});
        c.post(format!("{base}/api/register/")).json(&reg).send().await?;
        let t = Instant::now();
        let (mut answered, mut throttled) = (0u64, 0u64);
        let mut i = 0u64;
        while t.elapsed() < Duration::from_secs(5) {
            i += 1;
            let guess = json!({"name": "flood-victim", "password": format!("guess {i}")});
            let r = c.post(format!("{base}/api/login/")).json(&guess).send().await?;
            // A reply that is not JSON was answered, not throttled.
            let v: serde_json::Value = r.json().await.unwrap_or_default();
            if v["result"] == "retry" {
                throttled += 1;
            } else {
                answered += 1;
            }
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{}",
            json!({"bench": "flood", "phase": "login_guesses", "seconds": (secs * 10.0).round() / 10.0,
                   "guesses_checked": answered, "throttled_retry": throttled,
                   "checked_per_second": ((answered as f64 / secs) * 10.0).round() / 10.0})
        );
        Ok(())
    })
}
