//! A sandbox held for a match (issue 53): a program that its dialect starts
//! anew each round (Love Letter's) runs every round of a match in one
//! sandbox, so that a round's start costs a `fork` and an `exec` inside it
//! instead of a new sandbox's namespaces, mounts and teardown.
//!
//! The sandbox is a direct start's (the same `bwrap`, limits and cgroup,
//! see [`super::sandbox`]) whose program is a holder ([`super::holder`]: a
//! small Perl program, or a shell script where the host's Perl does not
//! run) that starts the program once for each round number it reads on
//! its stdin. Each round's stdin, stdout and stderr are three FIFOs that
//! Croupier makes for that round in a folder of its own (mode 0700, owned
//! by the sandbox's user), bound read-only at
//! [`HELD_FOLDER`](super::sandbox::HELD_FOLDER): the program gets fresh
//! pipes each round, as a program started on its own does, and nothing of
//! one round's input or output reaches the next. The holder says when the
//! round's program has started (its pid inside) and when it has ended (its
//! exit status); Croupier signals the program's process group on the host,
//! as it signals any bot's, and the holder reaps it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::sys::stat::Mode;
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::process::Child;
use tokio::sync::watch;

use super::cgroup::BotCgroup;
use super::held_folders::Folder;
pub(super) use super::held_lines::{listen, Patience};
use super::held_lines::{order, Asked, Progress};
use super::holder;
use super::inside::SandboxInfo;
use super::launch::{launch, Launched};
use super::lifetime::forget;
use super::limits::ProcessLimits;
use super::procstat;
use super::sandbox::Sandbox;
use super::sandbox::{is_root, NOBODY_ID};
use crate::transport::error::TransportError;

/// The holder's pid inside its sandbox: bubblewrap's init is 1, and the
/// holder is its one child.
pub(super) const HOLDER_PID: i32 = 2;

/// How long the holder may take to start a round's program (the first
/// round's includes setting up the sandbox).
pub const SETUP: Duration = Duration::from_secs(10);

/// How long the holder may take to start a later round's program.
const ROUND: Duration = Duration::from_secs(2);

/// How often, in rounds, the holder's CPU time is checked between
/// clearings ([`Held::not_worn`]: it reads `/proc`). A round costs the
/// holder ~0.3 ms, so half of even a 1 s limit is over a thousand rounds
/// away.
const WEAR_EVERY: u64 = 64;

/// A sandbox held for a seat's match, waiting for its next round. Dropped,
/// it is killed whole (the round's program with it).
#[derive(Debug)]
pub struct Held {
    /// What it was set up for (the command and its limits).
    pub(super) what: String,
    child: Child,
    serial: u64,
    control: pipe::Sender,
    progress: watch::Receiver<Progress>,
    /// The folder of the rounds' FIFOs (removed when dropped).
    pub(super) dir: Folder,
    /// Rounds started so far.
    rounds: u64,
    /// The command of the last round started.
    last: Option<Vec<String>>,
    /// The holder's pid on the host, found below the sandbox's first
    /// process at the first round (each round's program is looked for
    /// below it, not below the whole sandbox).
    holder: Option<i32>,
    /// How much CPU time the holder may use before the sandbox is given
    /// up for a new one: half of its limit (the CPU-time limit counts
    /// each process's own, and the holder's grows with every round it
    /// starts; at the limit it would be killed, and its sandbox with it,
    /// mid-round).
    worn_at: Duration,
    /// Its holder was seen past [`Held::worn_at`].
    worn: bool,
    cgroup: Option<Arc<BotCgroup>>,
    /// Where bubblewrap names the sandbox's first process: killed through
    /// it when the sandbox is dropped (which ends the sandbox even once
    /// bubblewrap has ended), and one dropped before it is named is killed
    /// when it is, as a stopped sandbox's, without a warning.
    inside: Option<SandboxInfo>,
}

/// One round's program in a held sandbox: its pipes and its leader.
pub(super) struct Round {
    pub(super) stdin: pipe::Sender,
    pub(super) stdout: pipe::Receiver,
    pub(super) stderr: pipe::Receiver,
    pub(super) leader: HeldLeader,
    pub(super) cgroup: Option<Arc<BotCgroup>>,
}

/// The first process of a round's program in a held sandbox: its pid on
/// the host (the leader of its process group) and how it ended.
#[derive(Debug)]
pub(super) struct HeldLeader {
    round: u64,
    /// Its pid on the host, the id of its process group; `None` for a
    /// program that had already ended when it was looked for.
    pub(super) pid: Option<Pid>,
    /// Its holder's pid on the host (its parent).
    holder: Option<i32>,
    progress: watch::Receiver<Progress>,
}

impl HeldLeader {
    /// Whether it still runs as its holder's child but does not lead a
    /// process group yet: the holder says that a round started right
    /// after its `fork`, before the child's `setsid`, and such a program
    /// is signalled alone (it has no children yet).
    pub(super) fn before_its_group(&self) -> bool {
        let (Some(pid), Some(holder)) = (self.pid, self.holder) else {
            return false;
        };
        self.ended().is_none()
            && procstat::parent_and_group_of(pid.as_raw())
                .is_some_and(|(parent, group)| parent == holder && group != pid.as_raw())
    }

    /// A leader `pid` whose holder is `holder`, in a round that has not
    /// ended.
    #[cfg(test)]
    pub(super) fn running(pid: Pid, holder: i32) -> HeldLeader {
        HeldLeader {
            round: 1,
            pid: Some(pid),
            holder: Some(holder),
            progress: watch::channel(Progress::default()).1,
        }
    }

    /// How it ended, once it has (`None` while it runs).
    pub(super) fn ended(&self) -> Option<String> {
        let p = self.progress.borrow();
        match p.ended(self.round) {
            Some(Some(status)) => Some(describe(status)),
            Some(None) => Some("ended".to_string()),
            None if p.gone => Some("its sandbox ended".to_string()),
            None => None,
        }
    }

    /// Waits until it has ended (or its sandbox has).
    pub(super) async fn wait(&mut self) {
        let round = self.round;
        let _ = self
            .progress
            .wait_for(|p| p.gone || p.ended(round).is_some())
            .await;
    }
}

/// An exit status as the standard library writes one.
fn describe(status: i32) -> String {
    match status.checked_sub(128).filter(|s| *s > 0) {
        Some(sig) => match Signal::try_from(sig) {
            Ok(s) => format!("signal: {sig} ({})", s.as_str()),
            Err(_) => format!("signal: {sig}"),
        },
        None => format!("exit status: {status}"),
    }
}

impl Held {
    /// Sets up a sandbox (in the background: its first round's start
    /// waits for it): `launch` starts it, with the folder of the rounds'
    /// FIFOs to bind at [`HELD_FOLDER`](super::sandbox::HELD_FOLDER),
    /// running its holder ([`super::holder`]), and gives what it started
    /// ([`Launched`]: its process, its number among the live bots, its
    /// cgroup and where bubblewrap names its first process). Its rounds
    /// may start any
    /// command that gets the same sandbox (`what`); `cpu_limit` is the CPU
    /// time each of its processes may use.
    pub(super) fn start(
        what: String,
        cpu_limit: Duration,
        launch: impl FnOnce(&Path) -> Result<Launched, TransportError>,
    ) -> Result<Held, TransportError> {
        let io = |e: std::io::Error| TransportError::Io(format!("cannot hold a sandbox: {e}"));
        let dir = Folder::new().map_err(io)?;
        if is_root() {
            // The sandbox runs as nobody on the host then.
            std::os::unix::fs::chown(dir.path(), Some(NOBODY_ID), Some(NOBODY_ID)).map_err(io)?;
        }
        let Launched {
            child,
            stdin: control,
            stdout: out,
            stderr: mut err,
            serial,
            group,
            info: inside,
        } = launch(dir.path())?;
        let (tx, progress) = watch::channel(Progress::default());
        tokio::spawn(listen(out, tx));
        // What the holder says on its stderr (why it ended).
        tokio::spawn(async move {
            let mut said = Vec::new();
            let _ = (&mut err).take(4096).read_to_end(&mut said).await;
            if !said.is_empty() {
                tracing::debug!("a held sandbox: {}", String::from_utf8_lossy(&said));
            }
            let _ = tokio::io::copy(&mut err, &mut tokio::io::sink()).await;
        });
        Ok(Held {
            what,
            child,
            serial,
            control,
            progress,
            dir,
            rounds: 0,
            last: None,
            holder: None,
            worn_at: cpu_limit / 2,
            worn: false,
            cgroup: group.map(Arc::new),
            inside,
        })
    }

    /// Sets up a sandbox held for rounds of `argv` under `limits`
    /// ([`Held::start`], with [`launch`]), with the holder `kind`.
    pub(super) fn set_up(
        argv: &[String],
        limits: &ProcessLimits,
        what: String,
        kind: holder::Kind,
    ) -> Result<Held, TransportError> {
        let cpu_limit = match &limits.sandbox {
            Sandbox::Strict(l) => Duration::from_secs(l.cpu_seconds),
            Sandbox::Off => Duration::MAX,
        };
        Held::start(what, cpu_limit, |dir| {
            launch(argv, limits, Some((dir, kind)))
        })
    }

    /// Starts the next round's program, `argv`; an error means this sandbox
    /// can no longer be used.
    pub(super) async fn round(&mut self, argv: &[String]) -> Result<Round, TransportError> {
        if self.progress.borrow().gone {
            return Err(TransportError::Io("the held sandbox ended".into()));
        }
        let n = self.rounds + 1;
        if self.worn || n.is_multiple_of(WEAR_EVERY) {
            self.not_worn()?;
        }
        let said = order(n, argv, self.last.as_deref())
            .ok_or_else(|| TransportError::Io("a word of the command holds a line break".into()))?;
        self.rounds = n;
        let fifos = self.fifos(n)?;
        let opened = (|| {
            Ok::<_, std::io::Error>((
                // Read-write, so that it opens before the program's end
                // does; the program sees its input end when this closes.
                pipe::OpenOptions::new()
                    .read_write(true)
                    .open_sender(&fifos[0])?,
                pipe::OpenOptions::new().open_receiver(&fifos[1])?,
                pipe::OpenOptions::new().open_receiver(&fifos[2])?,
            ))
        })();
        let started = match opened {
            Ok(pipes) => self.go(n, &said).await.map(|pid| (pipes, pid)),
            Err(e) => Err(TransportError::Io(format!(
                "cannot open a round's pipes: {e}"
            ))),
        };
        for f in &fifos {
            let _ = std::fs::remove_file(f);
        }
        let ((stdin, stdout, stderr), inside) = started?;
        self.last = Some(argv.to_vec());
        let root = self.child.id().and_then(|p| i32::try_from(p).ok());
        if self.holder.is_none() {
            self.holder = root
                .and_then(|r| procstat::host_pid(r, HOLDER_PID))
                .map(Pid::as_raw);
        }
        let pid = self.find(n, inside, root).await?;
        Ok(Round {
            stdin,
            stdout,
            stderr,
            leader: HeldLeader {
                round: n,
                pid,
                holder: self.holder,
                progress: self.progress.clone(),
            },
            cgroup: self.cgroup.clone(),
        })
    }

    /// Round `n`'s program on the host, found by its pid `inside` the
    /// sandbox below the holder (or below `root`, the sandbox's first
    /// process, if the holder is not known), or `None` if it has ended.
    ///
    /// The kernel's list of a process's children may miss one while
    /// others come and go (proc(5) on `/proc/PID/task/TID/children`: the
    /// last round's program may be ending and reaped meanwhile), so a
    /// program not found is looked for again, every millisecond, until it
    /// is found or its holder says it has ended, within [`ROUND`]. A
    /// program that ended at once may be reaped before it is looked for:
    /// its round counts, and its output is in the round's pipes, which are
    /// ours (starting it again elsewhere would run it twice). No wait once
    /// the holder is gone: it can no longer say so.
    async fn find(
        &self,
        n: u64,
        inside: i32,
        root: Option<i32>,
    ) -> Result<Option<Pid>, TransportError> {
        let until = tokio::time::Instant::now() + ROUND;
        let mut misses = 0u32;
        loop {
            if let Some(pid) = self
                .holder
                .or(root)
                .and_then(|from| procstat::host_pid(from, inside))
            {
                if misses > 0 {
                    tracing::debug!("a held round's program found after {misses} misses");
                }
                return Ok(Some(pid));
            }
            misses += 1;
            {
                let p = self.progress.borrow();
                if p.ended(n).is_some() {
                    return Ok(None);
                }
                if p.gone || tokio::time::Instant::now() >= until {
                    return Err(TransportError::Io("cannot find a round's program".into()));
                }
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Clears the sandbox for another match of the same program (a
    /// series' next game): kills whatever still runs in it and empties
    /// every place a program may write ([`super::holder::CLEAR`]), so that nothing of one
    /// match reaches the next, as if it were a new sandbox. Call it once
    /// every round's program has been stopped. An error means the sandbox
    /// is not to be used again (drop it).
    pub async fn reset(&mut self) -> Result<(), TransportError> {
        if self.progress.borrow().gone {
            return Err(TransportError::Io("the held sandbox ended".into()));
        }
        self.not_worn()?;
        let n = self.rounds + 1;
        self.rounds = n;
        match self.ask(n, &format!("{n} r\n"), ROUND, |p| p.reset).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(TransportError::Io(
                "the held sandbox could not be cleared".into(),
            )),
            Err(Asked::Late) => Err(TransportError::Io(
                "the held sandbox was not cleared in time".into(),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// Tells the holder `said` (order `n`, which is no round) and waits up
    /// to `wait` for each of the writing and its answer (`answer`: the
    /// last such answer it gave, with its number): whether it says it did.
    async fn ask(
        &mut self,
        n: u64,
        said: &str,
        wait: Duration,
        answer: fn(&Progress) -> Option<(u64, bool)>,
    ) -> Result<bool, Asked> {
        match tokio::time::timeout(wait, self.control.write_all(said.as_bytes())).await {
            Ok(r) => r.map_err(|e| Asked::Ended(format!(": {e}")))?,
            Err(_) => return Err(Asked::Deaf),
        }
        let done = self
            .progress
            .wait_for(|p| p.gone || answer(p).is_some_and(|(m, _)| m >= n));
        match tokio::time::timeout(wait, done).await {
            Ok(Ok(p)) => match (answer(&p), p.gone) {
                (Some((m, did)), false) if m == n => Ok(did),
                _ => Err(Asked::Ended(String::new())),
            },
            // No more news of the holder: its listener has stopped (the
            // runtime is ending, as when a `Table` is dropped mid-clearing).
            Ok(Err(_)) => Err(Asked::Unwatched),
            Err(_) => Err(Asked::Late),
        }
    }

    /// Has the holder work in `dir` from now on (a spare sandbox's, once
    /// its program's folders are bound, [`super::spare`]), waiting for its
    /// answer as `patience` says: the first order waits for the sandbox's
    /// setup, so a spare is known to be ready once it has entered its
    /// first folder. An error means this sandbox can no longer be used.
    pub(super) async fn enter(
        &mut self,
        dir: &Path,
        patience: Patience,
    ) -> Result<(), TransportError> {
        if self.progress.borrow().gone {
            return Err(TransportError::Io("the held sandbox ended".into()));
        }
        let dir = dir
            .to_str()
            .filter(|d| !d.contains(['\n', '\r']))
            .ok_or_else(|| TransportError::Io("a folder the holder cannot be told".into()))?;
        let n = self.rounds + 1;
        self.rounds = n;
        let wait = match patience {
            Patience::Setup => SETUP,
            Patience::Ready => ROUND,
        };
        match self
            .ask(n, &format!("{n} d\n{dir}\n"), wait, |p| p.entered)
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(TransportError::Io(format!(
                "the held sandbox cannot work in {dir}"
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether it can still be used: its holder has not ended, and what
    /// it says is still read (its listener's runtime still runs).
    pub(super) fn alive(&self) -> bool {
        !self.progress.borrow().gone && self.progress.has_changed().is_ok()
    }

    /// A pidfd of the sandbox's first process, once bubblewrap has named
    /// it: a handle on its namespaces.
    pub(super) fn first_process(&self) -> Option<std::sync::Arc<std::os::fd::OwnedFd>> {
        self.inside.as_ref().and_then(SandboxInfo::pidfd)
    }

    /// An error once the holder has used [`Held::worn_at`] of CPU time
    /// (checked at each clearing and every [`WEAR_EVERY`]th round; once
    /// seen, at every round).
    fn not_worn(&mut self) -> Result<(), TransportError> {
        match self.holder.and_then(procstat::cpu_time) {
            Some(used) if used >= self.worn_at => {
                self.worn = true;
                Err(TransportError::Io(format!(
                    "the held sandbox's holder has used {:.1} s of CPU time",
                    used.as_secs_f64()
                )))
            }
            _ => Ok(()),
        }
    }

    /// Makes round `n`'s FIFOs: its stdin, stdout and stderr.
    fn fifos(&self, n: u64) -> Result<[PathBuf; 3], TransportError> {
        let paths = ["in", "out", "err"].map(|end| self.dir.path().join(format!("{n}.{end}")));
        for p in &paths {
            make_fifo(p)
                .map_err(|e| TransportError::Io(format!("cannot make a round's pipe: {e}")))?;
        }
        Ok(paths)
    }

    /// Tells the holder to start round `n` (`said`: [`order`]); the
    /// program's pid inside.
    async fn go(&mut self, n: u64, said: &str) -> Result<i32, TransportError> {
        let said = self.control.write_all(said.as_bytes());
        let lost = |e: std::io::Error| TransportError::Io(format!("the held sandbox ended: {e}"));
        match tokio::time::timeout(SETUP, said).await {
            Ok(r) => r.map_err(lost)?,
            Err(_) => return Err(TransportError::Io("the held sandbox does not read".into())),
        }
        let up = self
            .progress
            .wait_for(|p| p.gone || p.started.is_some_and(|(m, _)| m >= n));
        // The first round waits for the sandbox's setup; a later one only
        // for a fork, so a holder that a program stopped costs its seat
        // [`ROUND`], not [`SETUP`], before the program starts on its own.
        let deadline = if n == 1 { SETUP } else { ROUND };
        match tokio::time::timeout(deadline, up).await {
            Ok(Ok(p)) => match (p.started, p.gone) {
                (Some((m, pid)), false) if m == n => Ok(pid),
                _ => Err(TransportError::Io("the held sandbox ended".into())),
            },
            _ => Err(TransportError::Io(
                "the held sandbox did not start the round".into(),
            )),
        }
    }

    /// Its first process on the host (the leader of its process group).
    #[cfg(test)]
    pub(super) fn pid(&self) -> Option<i32> {
        self.child.id().and_then(|p| i32::try_from(p).ok())
    }

    /// The host pid of the sandbox's first process, once named.
    #[cfg(test)]
    pub(super) fn first_pid(&mut self) -> Option<i32> {
        self.inside.as_mut().and_then(SandboxInfo::first)
    }

    /// Its holder's pid on the host, once a round has found it.
    #[cfg(test)]
    pub(super) fn holder_pid(&self) -> Option<i32> {
        self.holder
    }

    /// Gives the sandbox up once its holder has used `used` of CPU time.
    #[cfg(test)]
    pub(super) fn wear_at(&mut self, used: Duration) {
        self.worn_at = used;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // Its whole group (the sandbox, and the round's program with it,
        // since it is in the sandbox's PID namespace); tokio reaps the
        // child (kill_on_drop), and its cgroup goes with the last round.
        if let Some(info) = self.inside.as_mut() {
            info.kill();
        }
        if let Some(pgid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        forget(self.serial);
    }
}

/// A FIFO only the sandbox's user may open.
fn make_fifo(p: &Path) -> std::io::Result<()> {
    nix::unistd::mkfifo(p, Mode::S_IRUSR | Mode::S_IWUSR).map_err(std::io::Error::from)?;
    if is_root() {
        std::os::unix::fs::chown(p, Some(NOBODY_ID), Some(NOBODY_ID))?;
    }
    Ok(())
}
