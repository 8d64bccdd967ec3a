//! Sandboxes prepared ahead (issue 53): a program that is started anew
//! each round (Love Letter's dialects) has its next sandbox set up while
//! the current round plays, so that its next start costs one `exec`
//! instead of a sandbox's namespaces and mounts.
//!
//! A prepared sandbox ([`Prepared`]) is the whole chain of a sandboxed
//! start (`bwrap`, `prlimit`, the cgroup) ending in a shell that waits for
//! one line on its stdin and then becomes the program ([`GATE`]). It
//! belongs to the seat that asked for it: the seat's next start takes it
//! (waiting for it if it is still being set up, rather than setting up a
//! second one), and it is killed when dropped unused (the match ended).

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::Child;
use tokio::task::JoinHandle;

use super::cgroup::BotCgroup;
use super::lifetime::forget;

/// A program started (in its sandbox and cgroup, registered as a live
/// bot) whose pipes nobody reads yet.
#[derive(Debug)]
pub(super) struct Launched {
    pub(super) child: Child,
    pub(super) serial: u64,
    pub(super) group: Option<BotCgroup>,
}

/// The shell that holds a prepared sandbox. It says [`READY`] on stdout
/// once the sandbox is set up (read at once by [`ready`], so the program
/// never sees it); then one line on stdin opens it, and it becomes the
/// program (`$@`, found on the sandbox's `PATH` as a direct start would).
/// `read` takes its line a byte at a time from a pipe, so nothing meant
/// for the program is lost; at the end of its input it ends without
/// starting anything.
pub const GATE: &str = r#"echo croupier-prepared; read -r go || exit 0; exec "$@""#;

/// What [`GATE`] says when its sandbox is set up.
const READY: &[u8] = b"croupier-prepared\n";

/// How long a sandbox may take to be set up.
pub const SETUP: Duration = Duration::from_secs(10);

/// The command a prepared sandbox runs: [`GATE`] with `argv`.
pub fn gated(argv: &[String]) -> Vec<String> {
    let mut v = vec![
        "/bin/sh".to_string(),
        "-c".to_string(),
        GATE.to_string(),
        "croupier-prepared".to_string(),
    ];
    v.extend_from_slice(argv);
    v
}

/// Waits (blocking this thread) until the sandbox of `s` says it is set
/// up; `false` if it ends, says something else, or takes longer than
/// [`SETUP`]. It reads exactly [`READY`]'s bytes: nothing after them is
/// taken from the pipe. (No Tokio timer: the runtime may be shutting down.)
pub(super) fn ready(s: &Standby) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let Some(out) = s.0.as_ref().and_then(|l| l.child.stdout.as_ref()) else {
        return false;
    };
    let until = Instant::now() + SETUP;
    let mut said = Vec::with_capacity(READY.len());
    while said.len() < READY.len() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(out.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(ms)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(_) => return false,
        }
        let mut buf = [0u8; READY.len()];
        let want = READY.len() - said.len();
        match nix::unistd::read(out.as_fd(), &mut buf[..want]) {
            Ok(0) => return false,
            Ok(n) => said.extend_from_slice(&buf[..n]),
            Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
    said == READY
}

/// A sandbox set up and waiting at its gate; killed whole when dropped
/// unused.
#[derive(Debug)]
pub(super) struct Standby(Option<Launched>);

impl Standby {
    pub(super) fn new(l: Launched) -> Standby {
        Standby(Some(l))
    }

    /// Its first process (the leader of its process group).
    #[cfg(test)]
    pub(super) fn pid(&self) -> Option<i32> {
        self.0
            .as_ref()?
            .child
            .id()
            .and_then(|p| i32::try_from(p).ok())
    }

    /// Opens the gate: the program starts in the sandbox now. `None` if
    /// the sandbox has ended meanwhile.
    pub(super) fn open(mut self) -> Option<Launched> {
        let l = self.0.as_mut()?;
        if !matches!(l.child.try_wait(), Ok(None)) {
            return None;
        }
        let opened = l
            .child
            .stdin
            .as_ref()
            .is_some_and(|s| nix::unistd::write(s.as_fd(), b"\n").is_ok_and(|n| n == 1));
        // Handed over whole: dropping `self` kills nothing any more.
        opened.then(|| self.0.take()).flatten()
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        let Some(l) = self.0.take() else {
            return;
        };
        // Its whole group (the sandbox dies with it); tokio reaps the
        // child (kill_on_drop), and its cgroup goes when dropped.
        if let Some(pgid) = l.child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        forget(l.serial);
    }
}

/// The next start of a program, prepared ahead ([`BotProcess::prepare`]);
/// [`BotProcess::spawn_prepared`] uses it. Dropped unused, its sandbox is
/// killed.
///
/// [`BotProcess::prepare`]: super::BotProcess::prepare
/// [`BotProcess::spawn_prepared`]: super::BotProcess::spawn_prepared
#[derive(Debug)]
pub struct Prepared {
    /// What it was prepared for (the command and its limits).
    pub(super) what: String,
    pub(super) state: State,
}

#[derive(Debug)]
pub(super) enum State {
    /// Being set up.
    Pending(JoinHandle<Option<Box<Standby>>>),
    /// Set up (`None`: it could not be).
    Done(Option<Box<Standby>>),
}

impl Prepared {
    /// Waits until the sandbox is set up; whether it could be.
    pub async fn wait(&mut self) -> bool {
        if let State::Pending(task) = &mut self.state {
            let done = task.await.ok().flatten();
            self.state = State::Done(done);
        }
        matches!(self.state, State::Done(Some(_)))
    }

    /// The sandbox, once set up (waiting for it), if it was.
    pub(super) async fn take(mut self) -> Option<Box<Standby>> {
        self.wait().await;
        match std::mem::replace(&mut self.state, State::Done(None)) {
            State::Done(s) => s,
            State::Pending(_) => None,
        }
    }
}
