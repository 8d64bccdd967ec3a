//! What the process-level benchmarks share: a `croupier serve` child that is
//! killed when dropped, waiting for it to answer, a free loopback port, the
//! kernel's figures of a process (memory, CPU time, open files) and the
//! machine's load, and percentiles of sorted samples.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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

/// A loopback port nobody listens on (now).
pub fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Waits up to 10 s for the server at `base` to answer `GET /api/`.
pub async fn wait_up(base: &str) -> anyhow::Result<()> {
    let probe = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(2))
        .build()?;
    for _ in 0..200 {
        if probe.get(format!("{base}/api/")).send().await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(anyhow!("the server at {base} did not come up"))
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
    fn this_process_has_figures() {
        let me = std::process::id();
        assert!(rss_mib(me) > 0.0);
        assert!(open_fds(me) > 0);
        assert!(status_kib(me, "NoSuchField:").is_none());
        assert_eq!(load_average().split(' ').count(), 3);
    }
}
