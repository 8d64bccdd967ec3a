//! A bot program as a child process, behind an actor-style handle.
//!
//! The child gets piped stdin/stdout, runs in its own process group (so a bot
//! that forks is stopped whole), and has its stderr drained into a bounded
//! log that is never mixed with its answers. A reader task splits stdout into
//! lines of bounded length. Dropping the handle kills the whole group; the
//! polite way out is [`BotProcess::terminate`]: SIGTERM, a grace period, then
//! SIGKILL, and the child is reaped. [`lifetime`] makes sure that no bot
//! outlives the process that started it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::io::AsyncRead;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::process::Child;
use tokio::sync::mpsc;
use tokio::time::{timeout_at, Instant};

use super::conn::Conn;
use super::error::TransportError;
use launch::{held_for, launch, Launched};
pub use output::StderrLog;
use output::{read_lines, Line, StderrReader};

mod as_user;
pub mod cgroup;
mod held;
mod held_folders;
mod held_lines;
mod holder;
mod inside;
mod launch;
mod lifetime;
mod limiter;
mod limits;
mod mount_in;
mod mount_view;
mod output;
mod procstat;
mod sandbox;
mod sandbox_check;
mod seccomp;
mod spare;
mod spare_pool;
mod stop;
mod which;
pub use held::Held;
pub use lifetime::{adopt_orphans, seal_inherited_descriptors, MARKER};
pub use limits::ProcessLimits;
pub use sandbox::{bot_folders, Sandbox, SandboxLimits};
pub use sandbox_check::{check as check_sandbox, check_program, SandboxError};
pub use which::find_program;

/// Bot programs started, by sandbox (`strict`, `off`) and result (`ok`,
/// `error`), in the metrics (issue 49).
pub const PROCESS_STARTS: &str = "croupier_bot_process_starts_total";
/// How long starting a bot program took (until it was running, in its
/// sandbox's wrapper), by sandbox, in seconds.
pub const PROCESS_START_SECONDS: &str = "croupier_bot_process_start_seconds";

/// How long a bot whose output closed may take to finish its stderr
/// (longer if no process is left to write it: [`StderrReader::finish`]).
const STDERR_LAST_WORDS: Duration = Duration::from_millis(100);
/// How long a stopped bot's stderr is read on, for what it wrote as it
/// was stopped.
const STDERR_AFTER_STOP: Duration = Duration::from_millis(20);

/// The first process of a bot program.
#[derive(Debug)]
enum Leader {
    /// Started by Croupier (or the sandbox started for it).
    Own(Child),
    /// Started in a sandbox held for the match ([`Held`]).
    Held(held::HeldLeader),
}

impl Leader {
    /// How it ended, once it has.
    fn ended(&mut self) -> Option<String> {
        match self {
            Leader::Own(child) => match child.try_wait() {
                Ok(Some(status)) => Some(status.to_string()),
                _ => None,
            },
            Leader::Held(l) => l.ended(),
        }
    }

    /// Waits until it has ended.
    async fn wait(&mut self) {
        match self {
            Leader::Own(child) => {
                let _ = child.wait().await;
            }
            Leader::Held(l) => l.wait().await,
        }
    }
}

/// A bot's stdin: a pipe to its own process, or its round's FIFO in a
/// held sandbox.
#[derive(Debug)]
struct Input(pipe::Sender);

impl Input {
    async fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.write_all(buf).await?;
        self.0.flush().await
    }
}

/// Ends every live bot ([`lifetime::stop_all`]: SIGTERM, up to `grace`,
/// SIGKILL, orphans reaped) and removes the folders of held sandboxes, for
/// a caller that then exits without dropping its matches. Returns how many
/// bots were live.
pub fn stop_all(grace: Duration) -> usize {
    let bots = lifetime::stop_all(grace);
    held_folders::remove_all();
    bots
}

/// A running bot program.
#[derive(Debug)]
pub struct BotProcess {
    leader: Leader,
    pgid: Option<Pid>,
    stdin: Option<Input>,
    lines: mpsc::Receiver<Line>,
    stderr: Arc<Mutex<StderrLog>>,
    /// The task reading stderr, until the bot's output closes.
    stderr_reader: Option<StderrReader>,
    limits: ProcessLimits,
    closed: bool,
    /// Its number in the registry of live bots (`None` in a held sandbox:
    /// the sandbox has the number).
    serial: Option<u64>,
    /// The cgroup all its processes run in, where there is one (shared
    /// with the sandbox it is held in, which removes it).
    cgroup: Option<Arc<cgroup::BotCgroup>>,
    /// Which process its sandbox of its own starts with, for its SIGTERM
    /// ([`inside`]).
    inside: Option<inside::SandboxInfo>,
    /// The spare sandbox it started in ([`spare`]), which ends with it.
    sandbox: Option<Held>,
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
        match started.is_ok() {
            true => Self::started(sandbox, since),
            false => {
                metrics::counter!(PROCESS_STARTS, "sandbox" => sandbox, "result" => "error")
                    .increment(1);
            }
        }
        started
    }

    /// [`spawn`](Self::spawn) without its metrics.
    fn start(argv: &[String], limits: &ProcessLimits) -> Result<BotProcess, TransportError> {
        let launched = launch(argv, limits, None)?;
        Ok(Self::attach(launched, limits))
    }

    /// Starts `argv` as [`spawn`](Self::spawn) does, or, with
    /// [`ProcessLimits::spare_sandboxes`], in a spare sandbox set up ahead
    /// of it where one is ready ([`spare`]). That sandbox ends when the
    /// handle stops the program (or is dropped): a process the program
    /// left in a session of its own lives until then, as in a held
    /// sandbox, where a sandbox of its own ends with the program.
    pub async fn spawn_ready(
        argv: &[String],
        limits: &ProcessLimits,
    ) -> Result<BotProcess, TransportError> {
        if !limits.spare_sandboxes || !Self::holdable(argv) {
            return Self::spawn(argv, limits);
        }
        let since = std::time::Instant::now();
        if let Some(mut held) = spare::take(argv, limits).await {
            match held.round(argv).await {
                Ok(round) => {
                    Self::started("strict", since);
                    let mut p = Self::attach_round(round, limits);
                    p.sandbox = Some(held);
                    return Ok(p);
                }
                Err(e) => tracing::debug!("a spare sandbox for {argv:?} is given up: {e}"),
            }
        }
        Self::spawn(argv, limits)
    }

    /// Counts a start that worked, and how long it took, in the metrics.
    fn started(sandbox: &'static str, since: std::time::Instant) {
        metrics::counter!(PROCESS_STARTS, "sandbox" => sandbox, "result" => "ok").increment(1);
        metrics::histogram!(PROCESS_START_SECONDS, "sandbox" => sandbox)
            .record(since.elapsed().as_secs_f64());
    }

    /// Sets up, in the background, a sandbox held for the starts of
    /// `argv` under `limits` in a match (each round's, or the match's in a
    /// series; [`Held`]; its first start waits for it). `None` without a
    /// sandbox (nothing to set up), for a program that could not start in
    /// it (not found, or a word with a line break: each start is then
    /// [`spawn`](Self::spawn)'s, which says why), or if it cannot be
    /// started (the first start then says why).
    pub fn hold(argv: &[String], limits: &ProcessLimits) -> Option<Held> {
        if matches!(limits.sandbox, Sandbox::Off) || !Self::holdable(argv) {
            return None;
        }
        Self::try_hold(argv, limits, held_for(argv, limits))
    }

    /// Whether `argv` can start in a held sandbox: a start of its own says
    /// why a program is not found, and a word with a line break cannot be
    /// passed to the holder.
    fn holdable(argv: &[String]) -> bool {
        argv.first().is_some_and(|p| find_program(p).is_some())
            && !argv.iter().any(|w| w.contains(['\n', '\r']))
    }

    /// [`Held::set_up`] with the holder of this host, or `None` (logged)
    /// where the sandbox cannot be set up.
    fn try_hold(argv: &[String], limits: &ProcessLimits, what: String) -> Option<Held> {
        Held::set_up(argv, limits, what, holder::Kind::here())
            .inspect_err(|e| tracing::debug!("cannot hold a sandbox for {argv:?}: {e}"))
            .ok()
    }

    /// Starts `argv` in the sandbox `held` keeps for it, for a dialect
    /// that starts its program anew each round (or for each match of a
    /// series): the first start sets the sandbox up, and later ones start
    /// the program inside it ([`Held`]), while the previous round's program
    /// may still be ending. A sandbox held for
    /// another command or other limits is dropped first; one that cannot be
    /// set up or used any more is dropped, and the program starts as
    /// [`spawn`](Self::spawn) starts it. Without a sandbox this is `spawn`.
    pub async fn spawn_held(
        held: &mut Option<Held>,
        argv: &[String],
        limits: &ProcessLimits,
    ) -> Result<BotProcess, TransportError> {
        if matches!(limits.sandbox, Sandbox::Off) || !Self::holdable(argv) {
            return Self::spawn(argv, limits);
        }
        let since = std::time::Instant::now();
        let what = held_for(argv, limits);
        if held.as_ref().is_some_and(|h| h.what != what) {
            *held = None;
        }
        if held.is_none() {
            *held = match spare::take(argv, limits).await {
                Some(mut spare) => {
                    spare.what = what;
                    Some(spare)
                }
                None => Self::try_hold(argv, limits, what),
            };
            if held.is_none() {
                return Self::spawn(argv, limits);
            }
        }
        if let Some(h) = held.as_mut() {
            match h.round(argv).await {
                Ok(round) => {
                    Self::started("strict", since);
                    return Ok(Self::attach_round(round, limits));
                }
                Err(e) => {
                    tracing::debug!("a sandbox held for {argv:?} is given up: {e}");
                    *held = None;
                }
            }
        }
        Self::spawn(argv, limits)
    }

    /// Reads the pipes of a round's program in a held sandbox.
    fn attach_round(round: held::Round, limits: &ProcessLimits) -> BotProcess {
        let pgid = round.leader.pid;
        Self::attach_pipes(
            Leader::Held(round.leader),
            pgid,
            Some(Input(round.stdin)),
            Some(round.stdout),
            Some(round.stderr),
            None,
            round.cgroup,
            limits,
        )
    }

    /// Reads the pipes of a program started by [`launch`].
    fn attach(launched: Launched, limits: &ProcessLimits) -> BotProcess {
        let Launched {
            child,
            stdin,
            stdout,
            stderr,
            serial,
            group,
            info,
        } = launched;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let mut p = Self::attach_pipes(
            Leader::Own(child),
            pgid,
            Some(Input(stdin)),
            Some(stdout),
            Some(stderr),
            Some(serial),
            group.map(Arc::new),
            limits,
        );
        p.inside = info;
        p
    }

    /// Reads a program's stdout and stderr.
    #[allow(clippy::too_many_arguments)]
    fn attach_pipes(
        leader: Leader,
        pgid: Option<Pid>,
        stdin: Option<Input>,
        stdout: Option<impl AsyncRead + Unpin + Send + 'static>,
        stderr_pipe: Option<pipe::Receiver>,
        serial: Option<u64>,
        cgroup: Option<Arc<cgroup::BotCgroup>>,
        limits: &ProcessLimits,
    ) -> BotProcess {
        let (tx, rx) = mpsc::channel(16);
        if let Some(out) = stdout {
            tokio::spawn(read_lines(BufReader::new(out), tx, limits.max_line));
        }
        let stderr = Arc::new(Mutex::new(StderrLog::default()));
        let stderr_reader = stderr_pipe
            .map(|err| StderrReader::spawn(err, Arc::clone(&stderr), limits.stderr_keep));
        BotProcess {
            leader,
            pgid,
            stdin,
            lines: rx,
            stderr,
            stderr_reader,
            limits: limits.clone(),
            closed: false,
            serial,
            cgroup,
            inside: None,
            sandbox: None,
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
        match timeout_at(deadline, stdin.write_all(&buf)).await {
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
                // let that reach the log (briefly if a child of the bot
                // holds stderr open), so that the fault can quote it.
                // Kept if it outlasts the wait: `terminate` waits for the
                // rest.
                if let Some(mut reader) = self.stderr_reader.take() {
                    if !reader.finish(STDERR_LAST_WORDS).await {
                        self.stderr_reader = Some(reader);
                    }
                }
                // A held sandbox's holder says how the program ended just
                // after it has.
                if let Leader::Held(l) = &mut self.leader {
                    let _ = tokio::time::timeout(STDERR_LAST_WORDS, l.wait()).await;
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
        match self.leader.ended() {
            Some(how) => {
                self.pgid = None;
                format!(" ({how})")
            }
            None => String::new(),
        }
    }

    /// Whether it started in a spare sandbox ([`spawn_ready`](Self::spawn_ready)).
    pub fn started_in_spare(&self) -> bool {
        self.sandbox.is_some()
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

    /// The bot's cgroup, where it has one.
    pub fn cgroup(&self) -> Option<&cgroup::BotCgroup> {
        self.cgroup.as_deref()
    }

    /// The CPU time the bot's processes used so far, from its cgroup.
    pub fn cpu_time(&self) -> Option<Duration> {
        self.cgroup.as_deref().and_then(cgroup::BotCgroup::cpu_time)
    }
}

impl Held {
    /// Whether rounds of `argv` under `limits` may run in it (they get
    /// the same sandbox).
    pub fn suits(&self, argv: &[String], limits: &ProcessLimits) -> bool {
        self.what == held_for(argv, limits)
    }
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
