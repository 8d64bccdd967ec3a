//! What the process-level benchmarks share: children stopped when dropped
//! ([`Owned`]: SIGTERM, then SIGKILL), a `croupier serve` child on a port
//! it picked and said (any child that says where it listens:
//! [`announced`]), waiting for it to answer, a free loopback port, the
//! kernel's figures of a process (memory, CPU time, open files) and the
//! machine's load, and percentiles of sorted samples.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use anyhow::{anyhow, Context as _};

/// How long a child that a benchmark drops has to stop on its SIGTERM
/// before it gets SIGKILL.
pub const STOP_LIMIT: Duration = Duration::from_secs(10);

/// A child process of a benchmark, stopped and reaped when dropped (a
/// failed benchmark included): SIGTERM first, so that it stops as it
/// would for an operator (a server finishes its requests and closes its
/// store; a build that writes a profile or coverage as it exits writes it),
/// then SIGKILL if it is still there after [`STOP_LIMIT`].
#[derive(Debug)]
pub struct Owned(pub Child);

impl std::ops::Deref for Owned {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Owned {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Owned {
    /// SIGKILL now, and reaped: a crash, for benches that measure one.
    pub fn crash(&mut self) -> std::io::Result<()> {
        self.0.kill()?;
        let _ = self.0.wait();
        Ok(())
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        let pid = self.0.id();
        if !stop(&mut self.0, STOP_LIMIT) {
            eprintln!(
                "bench: process {pid} did not stop within {} s of its SIGTERM: killed",
                STOP_LIMIT.as_secs()
            );
        }
    }
}

/// Stops `child`: SIGTERM, up to `limit` for it to exit, then SIGKILL;
/// reaped either way. Whether it stopped on the SIGTERM (or had already
/// ended).
pub fn stop(child: &mut Child, limit: Duration) -> bool {
    use nix::sys::signal::{kill, Signal};
    let pid = i32::try_from(child.id());
    let mut ended = || !matches!(child.try_wait(), Ok(None));
    if ended() {
        return true;
    }
    if let Ok(pid) = pid {
        let _ = kill(nix::unistd::Pid::from_raw(pid), Signal::SIGTERM);
        let deadline = std::time::Instant::now() + limit;
        let mut pause = Duration::from_millis(1);
        loop {
            if ended() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// A child server process, stopped and reaped when dropped ([`Owned`]),
/// with its tag for `bench::waits`.
pub struct Server(pub Owned, u16);

/// Tags of the servers started here, for their `bench::waits` files.
static NEXT_TAG: AtomicU16 = AtomicU16::new(1);

impl Server {
    /// Starts `EXE serve` on a loopback port it picks itself (`--listen
    /// 127.0.0.1:0`), with no house bots, over `database`, with `extra`
    /// arguments and the log at `log` (the line that says where it
    /// listens is read, whatever `log` is); the server and its base URL,
    /// once it listens (see [`announced`]; [`wait_up`] waits for its
    /// answers).
    pub fn serve(
        exe: &Path,
        database: &str,
        extra: &[&str],
        log: &str,
    ) -> anyhow::Result<(Server, String)> {
        let tag = NEXT_TAG.fetch_add(1, Ordering::Relaxed);
        let mut command = Command::new(exe);
        crate::bench::waits::arm(&mut command, tag);
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--house-bots", ""])
            .args(extra)
            .arg("--database")
            .arg(database)
            .env("RUST_LOG", format!("{log},croupier::serve=info"))
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        let what = format!("{} serve", exe.display());
        let (child, port) = announced(
            command,
            &what,
            croupier_server::announce::port_in_serving_line,
            false,
        )?;
        Ok((
            Server(Owned(child), tag),
            format!("http://127.0.0.1:{port}"),
        ))
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

/// How long a child may take to say where it listens.
const ANNOUNCE_LIMIT: Duration = Duration::from_secs(60);

/// Starts `command` (`what`, for messages) with its stderr piped, and
/// waits for the line of it in which `port_in` finds the port the child
/// listens on: the child picked a free port itself, so no other process
/// can have it. The rest of its stderr is read in the background (passed
/// on to this process's stderr with `forward`), so that the child never
/// waits on a full pipe. A child that ends first, or says nothing of the
/// kind within [`ANNOUNCE_LIMIT`], is an error with its last lines.
pub fn announced(
    mut command: Command,
    what: &str,
    port_in: fn(&str) -> Option<u16>,
    forward: bool,
) -> anyhow::Result<(Child, u16)> {
    use std::io::BufRead as _;
    use std::sync::{Arc, Mutex, PoisonError};
    let mut child = command
        .env("NO_COLOR", "1")
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {what}"))?;
    let Some(stderr) = child.stderr.take() else {
        return Err(anyhow!("{what}: no stderr"));
    };
    let (tx, rx) = std::sync::mpsc::channel::<u16>();
    // Its last lines before the port, for the error.
    let last: Arc<Mutex<Vec<String>>> = Arc::default();
    let kept = Arc::clone(&last);
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        // Bytes, not text: a line that is not UTF-8 must not stop the
        // draining (the child would then write into a closed pipe).
        for line in std::io::BufReader::new(stderr).split(b'\n') {
            let Ok(line) = line else { break };
            let line = String::from_utf8_lossy(&line);
            match &tx {
                Some(t) => match port_in(&line) {
                    Some(port) => {
                        let _ = t.send(port);
                        tx = None;
                    }
                    None => {
                        let mut last = kept.lock().unwrap_or_else(PoisonError::into_inner);
                        if last.len() == 8 {
                            last.remove(0);
                        }
                        last.push(line.into_owned());
                    }
                },
                None if forward => eprintln!("{line}"),
                None => {}
            }
        }
    });
    let outcome = rx.recv_timeout(ANNOUNCE_LIMIT);
    if let Ok(port) = outcome {
        return Ok((child, port));
    }
    let _ = child.kill();
    let status = child
        .wait()
        .map_or_else(|e| e.to_string(), |s| s.to_string());
    let last = last
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .join(" / ");
    let said = if last.is_empty() {
        String::new()
    } else {
        format!("; its last lines: {last}")
    };
    Err(match outcome {
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => anyhow!(
            "{what} did not say where it listens within {} s; stopped ({status}){said}",
            ANNOUNCE_LIMIT.as_secs()
        ),
        _ => anyhow!("{what} ended before it said where it listens ({status}){said}"),
    })
}

/// Ports [`free_port`] has handed out in this process.
static HANDED_OUT: std::sync::Mutex<BTreeSet<u16>> = std::sync::Mutex::new(BTreeSet::new());

/// A loopback port nobody listens on (now), and one this process has not
/// handed out before: the children of one benchmark (several instances,
/// a proxy) never get the same port, even if one of them has not bound its
/// port yet when the next asks. Another process may still take it first
/// (its child then ends, and [`wait_up`] says that nothing answered); a
/// child that can pick its own port and say it is started with
/// [`announced`] instead.
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
const UP_LIMIT: Duration = Duration::from_secs(30);

/// What a probe of [`wait_for`] found.
enum Probe {
    /// What was started answers.
    Up,
    /// Not yet: an answer it may give while starting (why).
    NotYet(String),
    /// Something else answers (what it said).
    Other(String),
}

/// Sends `request` (a method and a path) to `base` until `judge`, given
/// the answer's status, content type and body, finds what was started
/// answering, for at most [`UP_LIMIT`]; no answer is waited out, and
/// something else answering fails at once.
async fn wait_for(
    base: &str,
    what: &str,
    request: (reqwest::Method, &str),
    judge: impl Fn(reqwest::StatusCode, &str, &str) -> Probe,
) -> anyhow::Result<()> {
    let probe = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(2))
        .build()?;
    let (method, path) = request;
    let url = format!("{base}{path}");
    let begin = std::time::Instant::now();
    let mut last = String::from("no probe yet");
    while begin.elapsed() < UP_LIMIT {
        let outcome = match probe.request(method.clone(), &url).send().await {
            Err(e) => Probe::NotYet(e.to_string()),
            Ok(reply) => {
                let status = reply.status();
                let kind = reply
                    .headers()
                    .get(reqwest::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("no content-type")
                    .to_string();
                let body = reply.text().await.unwrap_or_default();
                judge(status, &kind, &body)
            }
        };
        match outcome {
            Probe::Up => return Ok(()),
            Probe::NotYet(why) => last = why,
            Probe::Other(said) => {
                return Err(anyhow!(
                    "something other than {what} answers at {base}: {method} {path} answered {said}"
                ))
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(anyhow!(
        "{what} at {base} did not answer within {} s (last: {last})",
        UP_LIMIT.as_secs()
    ))
}

/// Waits up to 30 s for the croupier server at `base` (directly or through
/// a proxy) to answer `GET /api/` with its API's page (HTML). A 5xx (a
/// proxy whose servers are not up yet) is waited out; any other answer
/// fails at once.
pub async fn wait_up(base: &str) -> anyhow::Result<()> {
    let page = (reqwest::Method::GET, "/api/");
    wait_for(base, "the croupier server", page, |status, kind, _| {
        if status.is_success() && kind.starts_with("text/html") {
            Probe::Up
        } else if status.is_server_error() {
            Probe::NotYet(format!("GET /api/ answered {status}"))
        } else {
            Probe::Other(format!("{status}, {kind}"))
        }
    })
    .await
}

/// Waits up to 30 s for the bare endpoint at `base` to answer a status
/// call with `{"result":"success"}`; any other answer fails at once.
pub async fn wait_bare(base: &str) -> anyhow::Result<()> {
    let status_call = (reqwest::Method::POST, "/api/status/");
    wait_for(base, "the bare endpoint", status_call, |status, _, body| {
        if status.is_success() && body == r#"{"result":"success"}"# {
            Probe::Up
        } else {
            Probe::Other(format!("{status}: {body:.80}"))
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
    use axum::response::IntoResponse as _;

    /// `sh` running `script` after it says "ready" (its trap is set), with
    /// its stdout's reader.
    fn shell(script: &str) -> (Child, std::io::BufReader<std::process::ChildStdout>) {
        use std::io::BufRead as _;
        let mut child = Command::new("sh")
            .args([
                "-c",
                &format!("{script}; echo ready; while :; do sleep 0.02; done"),
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh runs");
        let mut out = std::io::BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        out.read_line(&mut line).expect("sh says ready");
        assert_eq!(line, "ready\n");
        (child, out)
    }

    #[test]
    fn a_child_is_stopped_by_its_sigterm_first() {
        use std::io::BufRead as _;
        let (mut child, mut out) = shell("trap 'echo stopping; exit 0' TERM");
        assert!(stop(&mut child, Duration::from_secs(10)));
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line, "stopping\n", "the child did not get its SIGTERM");
        assert!(child.try_wait().unwrap().is_some(), "not reaped");
    }

    #[test]
    fn a_child_that_ignores_sigterm_is_killed_after_the_limit() {
        let (mut child, _out) = shell("trap '' TERM");
        let t = std::time::Instant::now();
        assert!(!stop(&mut child, Duration::from_millis(300)));
        assert!(t.elapsed() >= Duration::from_millis(300));
        assert!(child.try_wait().unwrap().is_some(), "not reaped");
    }

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
        assert!(
            format!("{e:#}").contains("something other than the croupier server"),
            "{e:#}"
        );
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
            format!("{e:#}").contains("something other than the bare endpoint"),
            "{e:#}"
        );
    }

    /// A proxy's 503s, while its servers start, are waited out.
    #[tokio::test]
    async fn a_proxy_not_ready_yet_is_waited_for() {
        let asked = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let counted = std::sync::Arc::clone(&asked);
        let page = axum::Router::new().route(
            "/api/",
            axum::routing::get(move || {
                let n = counted.fetch_add(1, Ordering::SeqCst);
                async move {
                    match n {
                        0..3 => axum::http::StatusCode::SERVICE_UNAVAILABLE.into_response(),
                        _ => axum::response::Html("<p>API</p>").into_response(),
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, page).await });
        wait_up(&base).await.unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), 4);
    }

    /// The port a child says; a child that ends first is named with its
    /// status and last lines, at once.
    #[test]
    fn a_child_says_its_port_or_why_it_ended() {
        let bare = |line: &str| line.split("listening on :").nth(1)?.trim().parse().ok();
        let mut says = Command::new("sh");
        says.args([
            "-c",
            "echo starting >&2; echo 'listening on :4242' >&2; sleep 30",
        ]);
        let (mut child, port) = announced(says, "a test child", bare, false).unwrap();
        assert_eq!(port, 4242);
        let _ = child.kill();
        let _ = child.wait();

        let mut fails = Command::new("sh");
        fails.args(["-c", "echo 'cannot listen: address in use' >&2; exit 3"]);
        let begin = std::time::Instant::now();
        let e = announced(fails, "a test child", bare, false).unwrap_err();
        let e = format!("{e:#}");
        assert!(begin.elapsed() < Duration::from_secs(10));
        assert!(
            e.contains("a test child ended before it said where it listens"),
            "{e}"
        );
        assert!(e.contains("exit status: 3"), "{e}");
        assert!(e.contains("cannot listen: address in use"), "{e}");
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
