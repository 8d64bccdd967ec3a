//! A bot program as a child process, behind an actor-style handle.
//!
//! The child gets piped stdin/stdout, runs in its own process group (so a bot
//! that forks is stopped whole), and has its stderr drained into a bounded
//! log that is never mixed with its answers. A reader task splits stdout into
//! lines of bounded length. Dropping the handle kills the whole group; the
//! polite way out is [`BotProcess::terminate`]: SIGTERM, a grace period, then
//! SIGKILL, and the child is reaped. [`lifetime`] makes sure that no bot
//! outlives the process that started it.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::time::{timeout_at, Instant};

use super::conn::Conn;
use super::error::TransportError;

pub mod cgroup;
mod lifetime;
mod sandbox;
mod standby;
mod which;
pub use lifetime::{adopt_orphans, stop_all, MARKER};
pub use sandbox::{
    bot_folders, check as check_sandbox, check_program, Sandbox, SandboxError, SandboxLimits,
};
use standby::Launched;
pub use standby::Prepared;
pub use which::find_program;

/// Limits for a bot process.
#[derive(Clone, Debug)]
pub struct ProcessLimits {
    /// Longest line a bot may write (bytes, newline excluded).
    pub max_line: usize,
    /// Bytes of stderr kept (the most recent ones).
    pub stderr_keep: usize,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// How the program is confined.
    pub sandbox: Sandbox,
    /// Its cgroup's limits (`None`: no cgroup). By default what
    /// [`cgroup::configure`] set for this process.
    pub cgroup: Option<cgroup::CgroupLimits>,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        ProcessLimits {
            max_line: 64 * 1024,
            stderr_keep: 64 * 1024,
            grace: Duration::from_millis(500),
            sandbox: Sandbox::Off,
            cgroup: cgroup::configured(),
        }
    }
}

enum Line {
    Text(String),
    TooLong,
    Eof,
}

/// The most recent bytes a bot wrote to stderr.
#[derive(Debug, Default)]
pub struct StderrLog {
    bytes: VecDeque<u8>,
    total: u64,
}

impl StderrLog {
    fn push(&mut self, chunk: &[u8], keep: usize) {
        self.total += chunk.len() as u64;
        self.bytes.extend(chunk);
        let excess = self.bytes.len().saturating_sub(keep);
        self.bytes.drain(..excess);
    }

    /// The kept tail as text.
    pub fn tail(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut v = a.to_vec();
        v.extend_from_slice(b);
        String::from_utf8_lossy(&v).into_owned()
    }

    /// Bytes written in all.
    pub fn total(&self) -> u64 {
        self.total
    }
}

/// Bot programs started, by sandbox (`strict`, `off`) and result (`ok`,
/// `error`), in the metrics (issue 49).
pub const PROCESS_STARTS: &str = "croupier_bot_process_starts_total";
/// How long starting a bot program took (until it was running, in its
/// sandbox's wrapper), by sandbox, in seconds.
pub const PROCESS_START_SECONDS: &str = "croupier_bot_process_start_seconds";

/// How long a bot whose output closed may take to finish its stderr.
const STDERR_LAST_WORDS: Duration = Duration::from_millis(100);

/// A running bot program.
#[derive(Debug)]
pub struct BotProcess {
    child: Child,
    pgid: Option<Pid>,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Line>,
    stderr: Arc<Mutex<StderrLog>>,
    /// The task reading stderr, until the bot's output closes.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
    limits: ProcessLimits,
    closed: bool,
    /// Its number in the registry of live bots.
    serial: u64,
    /// The cgroup all its processes run in, where there is one.
    cgroup: Option<cgroup::BotCgroup>,
}

impl BotProcess {
    /// Starts `argv` (program and arguments) with piped stdio in its own
    /// process group and in the sandbox of `limits`, killed by the kernel if
    /// this process dies.
    pub fn spawn(argv: &[String], limits: &ProcessLimits) -> Result<BotProcess, TransportError> {
        let since = std::time::Instant::now();
        let started = Self::start(argv, limits);
        let sandbox = match limits.sandbox {
            Sandbox::Off => "off",
            Sandbox::Strict(_) => "strict",
        };
        let result = if started.is_ok() { "ok" } else { "error" };
        metrics::counter!(PROCESS_STARTS, "sandbox" => sandbox, "result" => result).increment(1);
        if started.is_ok() {
            metrics::histogram!(PROCESS_START_SECONDS, "sandbox" => sandbox)
                .record(since.elapsed().as_secs_f64());
        }
        started
    }

    /// [`spawn`](Self::spawn) without its metrics.
    fn start(argv: &[String], limits: &ProcessLimits) -> Result<BotProcess, TransportError> {
        let launched = launch(argv, limits, false)?;
        Ok(Self::attach(launched, limits))
    }

    /// Prepares, in the background, the sandbox of the next start of
    /// `argv` with `limits`: set up up to the program itself, which it runs
    /// when [`BotProcess::spawn_prepared`] takes it (Love Letter's dialects
    /// start every program anew each round). Only sandboxed programs are
    /// prepared (`None` without a sandbox: there is nothing to set up).
    pub fn prepare(argv: &[String], limits: &ProcessLimits) -> Option<Prepared> {
        if matches!(limits.sandbox, Sandbox::Off) || argv.is_empty() {
            return None;
        }
        let handle = tokio::runtime::Handle::try_current().ok()?;
        let (args, lim) = (argv.to_vec(), limits.clone());
        let task = handle.spawn_blocking(move || match launch(&args, &lim, true) {
            Ok(launched) => {
                let standby = standby::Standby::new(launched);
                if standby::ready(&standby) {
                    Some(Box::new(standby))
                } else {
                    tracing::debug!("a sandbox prepared for {args:?} did not come up");
                    None
                }
            }
            Err(e) => {
                tracing::debug!("cannot prepare a sandbox for {args:?}: {e}");
                None
            }
        });
        Some(Prepared {
            what: prepared_for(argv, limits),
            state: standby::State::Pending(task),
        })
    }

    /// Starts `argv` in the sandbox `prepared` for it (waiting for it to
    /// be set up, up to [`standby::SETUP`]), or, if that one is not for
    /// this command and these limits or could not be set up, as
    /// [`spawn`](Self::spawn) does.
    pub async fn spawn_prepared(
        prepared: Prepared,
        argv: &[String],
        limits: &ProcessLimits,
    ) -> Result<BotProcess, TransportError> {
        let since = std::time::Instant::now();
        if prepared.what == prepared_for(argv, limits) {
            if let Some(launched) = prepared.take().await.and_then(|s| s.open()) {
                metrics::counter!(PROCESS_STARTS, "sandbox" => "strict", "result" => "ok")
                    .increment(1);
                metrics::histogram!(PROCESS_START_SECONDS, "sandbox" => "strict")
                    .record(since.elapsed().as_secs_f64());
                return Ok(Self::attach(launched, limits));
            }
        }
        Self::spawn(argv, limits)
    }

    /// Reads the pipes of a program started by [`launch`].
    fn attach(launched: Launched, limits: &ProcessLimits) -> BotProcess {
        let Launched {
            mut child,
            serial,
            group,
        } = launched;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr_pipe = child.stderr.take();
        let (tx, rx) = mpsc::channel(16);
        if let Some(out) = stdout {
            tokio::spawn(read_lines(BufReader::new(out), tx, limits.max_line));
        }
        let stderr = Arc::new(Mutex::new(StderrLog::default()));
        let stderr_reader = stderr_pipe.map(|mut err| {
            let log = Arc::clone(&stderr);
            let keep = limits.stderr_keep;
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut l) = log.lock() {
                        l.push(&buf[..n], keep);
                    }
                }
            })
        });
        BotProcess {
            child,
            pgid,
            stdin,
            lines: rx,
            stderr,
            stderr_reader,
            limits: limits.clone(),
            closed: false,
            serial,
            cgroup: group,
        }
    }

    /// Writes lines to the bot's stdin, each followed by a newline; gives up
    /// at `deadline` (a bot that does not read its input cannot stall us).
    pub async fn send(
        &mut self,
        lines: &[String],
        deadline: Instant,
    ) -> Result<(), TransportError> {
        if lines.is_empty() {
            return Ok(());
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(TransportError::Closed(String::new()));
        };
        let mut buf = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for l in lines {
            buf.extend_from_slice(l.as_bytes());
            buf.push(b'\n');
        }
        let write = async {
            stdin.write_all(&buf).await?;
            stdin.flush().await
        };
        match timeout_at(deadline, write).await {
            Err(_) => Err(TransportError::Timeout),
            Ok(Err(e)) => {
                self.stdin = None;
                Err(TransportError::Closed(format!(" (write failed: {e})")))
            }
            Ok(Ok(())) => Ok(()),
        }
    }

    /// Reads the next line the bot writes, waiting until `deadline`.
    pub async fn recv(&mut self, deadline: Instant) -> Result<String, TransportError> {
        if self.closed {
            return Err(TransportError::Closed(self.exit_note()));
        }
        match timeout_at(deadline, self.lines.recv()).await {
            Err(_) => Err(TransportError::Timeout),
            Ok(Some(Line::Text(t))) => Ok(t),
            Ok(Some(Line::TooLong)) => Err(TransportError::LineTooLong(self.limits.max_line)),
            Ok(Some(Line::Eof)) | Ok(None) => {
                self.closed = true;
                // A bot that exits has usually just said why on stderr:
                // let that reach the log (briefly: a child of the bot may
                // hold stderr open), so that the fault can quote it.
                if let Some(reader) = self.stderr_reader.take() {
                    let _ = tokio::time::timeout(STDERR_LAST_WORDS, reader).await;
                }
                Err(TransportError::Closed(self.exit_note()))
            }
        }
    }

    fn exit_note(&mut self) -> String {
        if !self.leader_running() {
            // What the bot left in its group goes now, while the group id
            // is still ours (see [`BotProcess::signal`]).
            self.signal(Signal::SIGKILL);
        }
        match self.child.try_wait() {
            Ok(Some(status)) => {
                self.pgid = None;
                format!(" ({status})")
            }
            _ => String::new(),
        }
    }

    /// The tail of what the bot wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().map(|l| l.tail()).unwrap_or_default()
    }

    /// The bot's stderr log, shared with the task that fills it (it keeps
    /// filling until the bot's last process closes its stderr).
    pub fn stderr_log(&self) -> Arc<Mutex<StderrLog>> {
        Arc::clone(&self.stderr)
    }

    /// Stops the bot: closes its stdin, SIGTERM to its process group, waits
    /// for the grace period, then SIGKILL; the child is always reaped.
    pub async fn terminate(mut self) {
        self.stdin = None;
        self.signal(Signal::SIGTERM);
        let grace = self.limits.grace;
        if tokio::time::timeout(grace, self.child.wait())
            .await
            .is_err()
        {
            self.signal(Signal::SIGKILL);
            let _ = self.child.wait().await;
        }
        // The group may hold children the bot forked; they go too (while
        // one lives, the group id stays reserved), and so do the orphans it
        // detached. Then the handle forgets the id (see `signal`).
        self.signal(Signal::SIGKILL);
        self.pgid = None;
        lifetime::forget(self.serial);
        // Whatever escaped the group (a new session, a daemon) is still in
        // the cgroup: it goes, and so does the cgroup.
        if let Some(g) = self.cgroup.take() {
            g.remove().await;
        }
    }

    /// The bot's cgroup, where it has one.
    pub fn cgroup(&self) -> Option<&cgroup::BotCgroup> {
        self.cgroup.as_ref()
    }

    /// The CPU time the bot's processes used so far, from its cgroup.
    pub fn cpu_time(&self) -> Option<Duration> {
        self.cgroup.as_ref().and_then(cgroup::BotCgroup::cpu_time)
    }

    /// Whether the bot's first process runs (it is neither a zombie nor
    /// gone).
    fn leader_running(&self) -> bool {
        self.pgid.is_some_and(lifetime::running)
    }

    /// Signals the bot's process group. The group id is safe to use while
    /// the leader is unreaped or any member lives; once the leader is
    /// reaped and its group empty, the id may be given to a new process
    /// (pids wrap at 32768 by default), so a handle forgets it right after
    /// its last kill.
    fn signal(&self, sig: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (group already gone) is the normal case after an exit.
            let _ = killpg(pgid, sig);
        }
    }
}

/// What a prepared start must match: the command and every limit.
fn prepared_for(argv: &[String], limits: &ProcessLimits) -> String {
    format!("{argv:?} {:?} {:?}", limits.sandbox, limits.cgroup)
}

/// Starts `argv` with piped stdio in its own process group, in the sandbox
/// and cgroup of `limits`. With `gated` (a sandbox prepared ahead), the
/// sandbox runs a shell that waits for one line on stdin before it becomes
/// the program ([`standby::GATE`]).
fn launch(
    argv: &[String],
    limits: &ProcessLimits,
    gated: bool,
) -> Result<Launched, TransportError> {
    let program = argv
        .first()
        .ok_or_else(|| TransportError::Io("empty command".into()))?;
    if find_program(program).is_none() {
        return Err(TransportError::Io(format!(
            "cannot start '{program}': no such program"
        )));
    }
    let full = match &limits.sandbox {
        Sandbox::Off => lifetime::with_death_signal(argv),
        // bubblewrap dies with its parent, and its PID namespace with it.
        Sandbox::Strict(l) if gated => sandbox::wrap_as(argv, &standby::gated(argv), l)?,
        Sandbox::Strict(l) => sandbox::wrap(argv, l)?,
    };
    let group = limits.cgroup.as_ref().and_then(cgroup::for_bot);
    let full = match &group {
        Some(g) => g.wrap(full),
        None => full,
    };
    let (first, args) = full
        .split_first()
        .ok_or_else(|| TransportError::Io("empty command".into()))?;
    let mut cmd = Command::new(first);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let entry = group.as_ref().and_then(cgroup::BotCgroup::thread_entry);
    let (child, serial) = lifetime::spawn(cmd, entry)
        .map_err(|e| TransportError::Io(format!("cannot start '{program}': {e}")))?;
    Ok(Launched {
        child,
        serial,
        group,
    })
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        // Whatever happened, nothing of the bot outlives its handle; tokio
        // reaps the child (kill_on_drop).
        self.signal(Signal::SIGKILL);
        lifetime::forget(self.serial);
    }
}

/// Splits the bot's stdout into lines of at most `max` bytes. A longer line
/// is reported once and skipped up to its newline.
async fn read_lines<R: AsyncBufReadExt + Unpin>(mut r: R, tx: mpsc::Sender<Line>, max: usize) {
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    while let Ok(buf) = r.fill_buf().await {
        if buf.is_empty() {
            break;
        }
        let (chunk, found) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line.clear();
                if tx.send(Line::TooLong).await.is_err() {
                    return;
                }
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = found.unwrap_or(buf.len());
        r.consume(used);
        if found.is_some() {
            if !too_long {
                let mut text = String::from_utf8_lossy(&line).into_owned();
                if text.ends_with('\r') {
                    text.pop();
                }
                if tx.send(Line::Text(text)).await.is_err() {
                    return;
                }
            }
            line.clear();
            too_long = false;
        }
    }
    if !line.is_empty() && !too_long {
        // A last line without its newline still counts.
        let _ = tx
            .send(Line::Text(String::from_utf8_lossy(&line).into_owned()))
            .await;
    }
    let _ = tx.send(Line::Eof).await;
}

impl Conn for BotProcess {
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(BotProcess::send(self, lines, deadline))
    }

    fn recv(&mut self, deadline: Instant) -> BoxFuture<'_, Result<String, TransportError>> {
        Box::pin(BotProcess::recv(self, deadline))
    }

    fn diagnostics(&self) -> String {
        self.stderr_tail()
    }

    fn cpu_time(&self) -> Option<Duration> {
        BotProcess::cpu_time(self)
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(self.terminate())
    }
}

#[cfg(test)]
mod tests;
