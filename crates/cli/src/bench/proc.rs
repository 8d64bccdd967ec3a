//! What the process-level benchmarks share: a `croupier serve` child that is
//! killed when dropped, waiting for it to answer, a free loopback port, the
//! kernel's figures of a process (memory, CPU time, open files) and the
//! machine's load, and percentiles of sorted samples.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use std::collections::BTreeSet;

use anyhow::{anyhow, Context as _};

/// A child server process, killed and reaped when dropped (a failed
/// benchmark included).
pub struct Server(pub Child, u16);

impl Server {
    /// Starts `EXE serve` on a free loopback port with no house bots over
    /// `database`, with `extra` arguments and the log at `log`; the server
    /// and its base URL (not yet answering: see [`wait_up`]).
    pub fn serve(
        exe: &Path,
        database: &str,
        extra: &[&str],
        log: &str,
    ) -> anyhow::Result<(Server, String)> {
        let port = free_port()?;
        let listen = format!("127.0.0.1:{port}");
        let mut command = Command::new(exe);
        crate::bench::waits::arm(&mut command, port);
        let child = command
            .args(["serve", "--listen", &listen, "--house-bots", ""])
            .args(extra)
            .arg("--database")
            .arg(database)
            .env("RUST_LOG", log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {} serve", exe.display()))?;
        Ok((Server(child, port), format!("http://{listen}")))
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Its waits so far (with `CROUPIER_BENCH_WAITS`, see `bench::waits`),
    /// and it starts over.
    pub async fn take_waits(&self) -> Vec<(String, croupier_store::waits::Summary)> {
        crate::bench::waits::merge(crate::bench::waits::take(&[self.1], &[self.pid()]).await)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Ports [`free_port`] has handed out in this process.
static HANDED_OUT: std::sync::Mutex<BTreeSet<u16>> = std::sync::Mutex::new(BTreeSet::new());

/// A loopback port nobody listens on (now), and one this process has not
/// handed out before: the children of one benchmark (a server and the
/// bare endpoint, or several instances) never get the same port, even if
/// one of them has not bound its port yet when the next asks. (A port
/// another process takes meanwhile makes its child fail to start, which
/// [`wait_up`] reports.)
pub fn free_port() -> anyhow::Result<u16> {
    for _ in 0..64 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        if HANDED_OUT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(port)
        {
            return Ok(port);
        }
    }
    Err(anyhow!(
        "no loopback port left that this benchmark has not used"
    ))
}

/// How long [`wait_up`] and [`wait_bare`] wait.
const UP_LIMIT: Duration = Duration::from_secs(10);

/// Asks `probe` until `answered` says whether what answers is what was
/// started (`Ok(true)`), not yet (`Ok(false)`: no answer, or one it may
/// give while starting) or something else on its port (`Err`), for at
/// most [`UP_LIMIT`].
async fn wait_for<F, Fut>(base: &str, what: &str, mut answered: F) -> anyhow::Result<()>
where
    F: FnMut(reqwest::Client) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<bool>>,
{
    let probe = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(2))
        .build()?;
    let begin = std::time::Instant::now();
    while begin.elapsed() < UP_LIMIT {
        if answered(probe.clone()).await.with_context(|| {
            format!("{base} answers, but not as {what}: another process has its port")
        })? {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(anyhow!("{what} at {base} did not come up"))
}

/// Waits up to 10 s for the croupier server at `base` (directly or through
/// a proxy) to answer `GET /api/` with its API's page. Something else on
/// the port (an answer that is not the server's page) fails at once.
pub async fn wait_up(base: &str) -> anyhow::Result<()> {
    let url = format!("{base}/api/");
    wait_for(base, "the server", |probe| {
        let url = url.clone();
        async move {
            let Ok(reply) = probe.get(url).send().await else {
                return Ok(false);
            };
            let status = reply.status();
            let html = reply
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/html"));
            match (status.is_success(), html) {
                (true, true) => Ok(true),
                // A proxy whose servers are not up yet says 503.
                _ if status.is_server_error() => Ok(false),
                _ => Err(anyhow!("GET /api/ answered {status}, html: {html}")),
            }
        }
    })
    .await
}

/// Waits up to 10 s for the bare endpoint at `base` to answer a status
/// call with `{"result":"success"}`; anything else on the port fails at
/// once.
pub async fn wait_bare(base: &str) -> anyhow::Result<()> {
    let url = format!("{base}/api/status/");
    wait_for(base, "the bare endpoint", |probe| {
        let url = url.clone();
        async move {
            let Ok(reply) = probe.post(url).send().await else {
                return Ok(false);
            };
            let status = reply.status();
            let body = reply.text().await.unwrap_or_default();
            match status.is_success() && body == r#"{"result":"success"}"# {
                true => Ok(true),
                false => Err(anyhow!("POST /api/status/ answered {status}: {body:.80}")),
            }
        }
    })
    .await
}

/// A `kB` field of `/proc/PID/status` (`VmRSS:`, `VmHWM:`, ...).
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Resident memory of a process, in MiB to one decimal (0 once it is gone).
pub fn rss_mib(pid: u32) -> f64 {
    let kib = status_kib(pid, "VmRSS:").unwrap_or(0) as f64;
    (kib / 1024.0 * 10.0).round() / 10.0
}

/// CPU time (user + system) a process has used, in seconds.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    ticks / 100.0
}

/// Open file descriptors of a process.
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// The machine's 1, 5 and 15 minute load averages, as the kernel says them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The nearest-rank `q`-quantile (0.0..=1.0) of sorted samples; 0 for none.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
    sorted[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_sorted_samples() {
        let s: Vec<f64> = (1..=101).map(f64::from).collect();
        assert_eq!(percentile(&s, 0.5), 51.0);
        assert_eq!(percentile(&s, 0.99), 100.0);
        assert_eq!(percentile(&s, 1.0), 101.0);
        assert_eq!(percentile(&s, 0.0), 1.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
    }

    #[test]
    fn no_port_is_handed_out_twice() {
        let mut seen = BTreeSet::new();
        for _ in 0..300 {
            let port = free_port().unwrap();
            assert!(seen.insert(port), "port {port} handed out twice");
        }
    }

    /// A bare endpoint where a server was started (the two children got
    /// one port) is named at once, not taken for the server; and the
    /// reverse.
    #[tokio::test]
    async fn the_wrong_server_on_a_port_is_named() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, crate::bench::bare::app()).await });
        let begin = std::time::Instant::now();
        let e = wait_up(&base).await.unwrap_err();
        assert!(
            begin.elapsed() < Duration::from_secs(5),
            "{:?}",
            begin.elapsed()
        );
        assert!(format!("{e:#}").contains("not as the server"), "{e:#}");
        wait_bare(&base).await.unwrap();

        let page = axum::Router::new().route(
            "/api/",
            axum::routing::get(|| async { axum::response::Html("<p>API</p>") }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, page).await });
        wait_up(&base).await.unwrap();
        let e = wait_bare(&base).await.unwrap_err();
        assert!(
            format!("{e:#}").contains("not as the bare endpoint"),
            "{e:#}"
        );
    }

    #[test]
    fn this_process_has_figures() {
        let me = std::process::id();
        assert!(rss_mib(me) > 0.0);
        assert!(open_fds(me) > 0);
        assert!(status_kib(me, "NoSuchField:").is_none());
        assert_eq!(load_average().split(' ').count(), 3);
    }
}
