//! The bare endpoint `croupier bench server` compares the server with: an
//! axum route that answers every POST with `{"result":"success"}` and does
//! nothing else.
//!
//! It runs as a process of its own (`croupier bench bare-endpoint`, not
//! listed in the help), started like the server under test: its own
//! default tokio runtime, its own threads, and the same loopback hops to and
//! from the load generator. The difference between the two is then the
//! server's work alone. With `--split-cores` it is started, as the server
//! is, while the benchmark's thread is pinned to the server's half of the
//! CPUs, and keeps that half.
//!
//! `bench server` measures it in slices that alternate with the server's
//! while the server's bots pause between games, so that both see the
//! machine alike: on a shared 2-core machine the same bare endpoint's
//! requests/s swing by half from one 10 s run to the next.
//!
//! Earlier builds served it once, after the server's run, from the load
//! generator's process: a task of its runtime (with `--split-cores`, a
//! runtime of its own on a thread pinned to the server's CPUs). Without
//! split cores that shared the load generator's threads, which no server
//! under test can.

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context as _};
use serde_json::json;

use crate::bench::proc::{cpu_seconds, Owned};
use crate::bench::rest_bots::{client, Bot};
use crate::bench::server_stats::{Endpoint, Stats};

/// The longest wait for every bot's first answer in a slice.
const CONNECTED_LIMIT: Duration = Duration::from_secs(5);

/// The route.
pub fn app() -> axum::Router {
    axum::Router::new().route(
        "/api/{method}/",
        axum::routing::post(|| async { axum::Json(json!({"result": "success"})) }),
    )
}

/// What the bare endpoint's child says on stderr once it listens, before
/// its address.
const LISTENING: &str = "bare endpoint listening on http://";

/// The port in the bare endpoint's [`LISTENING`] line.
fn port_in_line(line: &str) -> Option<u16> {
    let rest = line.split(LISTENING).nth(1)?;
    let (addr, _) = rest.split_once('/')?;
    addr.rsplit_once(':')?.1.parse().ok()
}

/// `croupier bench bare-endpoint --listen ADDR`: serves [`app`] on `listen`
/// (port 0: one the kernel picks, said on stderr as [`LISTENING`] says)
/// with a default multi-thread runtime (as `croupier serve` builds it) until
/// standard input ends, which it does when the benchmark that started it
/// ends or dies.
pub fn serve_child(listen: SocketAddr) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let served = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        eprintln!("{LISTENING}{}/", listener.local_addr()?);
        let stdin_ends = tokio::task::spawn_blocking(|| {
            let mut sink = [0u8; 64];
            while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
        });
        tokio::select! {
            served = axum::serve(listener, app()) => served?,
            _ = stdin_ends => {}
        }
        anyhow::Ok(())
    });
    // Without waiting for the thread blocked on standard input.
    rt.shutdown_background();
    served
}

/// A bare endpoint in a process of its own, stopped and reaped when dropped
/// ([`Owned`]).
pub struct BareChild(Owned);

impl BareChild {
    /// Starts `EXE bench bare-endpoint` on a loopback port it picks
    /// itself and says (on the CPUs the calling thread may use: affinity
    /// is inherited, see `bench::cores`); the child and its base URL
    /// (listening; `bench::proc::wait_bare` waits for its answers).
    pub fn start(exe: &Path) -> anyhow::Result<(Self, String)> {
        let mut command = Command::new(exe);
        command
            .args(["bench", "bare-endpoint", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        let what = format!("{} bench bare-endpoint", exe.display());
        let (child, port) = crate::bench::proc::announced(command, &what, port_in_line, true)?;
        Ok((BareChild(Owned(child)), format!("http://127.0.0.1:{port}")))
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

/// What one slice measured (of the bare endpoint, or of the server).
pub struct Slice {
    pub seconds: f64,
    pub requests: u64,
    /// CPU seconds of the serving process.
    pub server_cpu: f64,
    /// CPU seconds of this process (the load generator).
    pub load_cpu: f64,
}

/// `bots` closed loops of status calls at the bare endpoint for `time`;
/// latencies go to `stats`. Not counted: the ramp, until every bot has
/// been answered once (at most [`CONNECTED_LIMIT`]: each opens its
/// connection then, and a connection whose handshake the kernel dropped
/// under the burst is tried again only after a second), and 0.5 s more.
pub async fn slice(
    bare: &BareChild,
    base: &str,
    bots: usize,
    time: Duration,
    stats: &Arc<Stats>,
) -> anyhow::Result<Slice> {
    stats.keep_latencies(false);
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..bots {
        let bot = Bot {
            client: client(i)?,
            base: base.to_string(),
            stats: Arc::clone(stats),
        };
        let stop = Arc::clone(&stop);
        let answered = Arc::clone(&answered);
        let failed = Arc::clone(&failed);
        tasks.spawn(async move {
            let mut first = true;
            while !stop.load(Ordering::Relaxed) {
                let body = json!({"session": "0123456789abcdef0123456789abcdef"});
                if bot.call(Endpoint::Status, body).await.is_err() {
                    failed.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                if std::mem::take(&mut first) {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
    let ramp = Instant::now();
    while answered.load(Ordering::Relaxed) < bots && ramp.elapsed() < CONNECTED_LIMIT {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cpu = || (cpu_seconds(bare.pid()), cpu_seconds(std::process::id()));
    let r0 = stats.requests.load(Ordering::Relaxed);
    let (server0, load0) = cpu();
    stats.keep_latencies(true);
    let start = Instant::now();
    tokio::time::sleep(time).await;
    stats.keep_latencies(false);
    let seconds = start.elapsed().as_secs_f64();
    let r1 = stats.requests.load(Ordering::Relaxed);
    let (server1, load1) = cpu();
    stop.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    let failed = failed.load(Ordering::Relaxed);
    if failed > 0 || r1 == r0 {
        return Err(anyhow!(
            "the bare endpoint at {base} failed {failed} of {bots} bots and answered {} calls in {seconds:.1} s",
            r1 - r0
        ));
    }
    Ok(Slice {
        seconds,
        requests: r1 - r0,
        server_cpu: server1 - server0,
        load_cpu: load1 - load0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_read_from_the_listening_line() {
        assert_eq!(
            port_in_line(&format!("{LISTENING}127.0.0.1:4321/")),
            Some(4321)
        );
        assert_eq!(port_in_line(&format!("{LISTENING}127.0.0.1:43")), None);
        assert_eq!(
            port_in_line("croupier serving SkullWhist on http://127.0.0.1:80/"),
            None
        );
    }
}
