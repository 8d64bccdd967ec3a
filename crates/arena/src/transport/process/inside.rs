//! A sandbox's first process: its limits, set from here before it may go
//! on, and the program inside, for its SIGTERM.
//!
//! Croupier's child in a sandbox is bubblewrap, which clones the sandbox's
//! PID 1 (a new session: `--new-session`), which starts the program in its
//! session and process group. bubblewrap writes its child's host pid to a
//! pipe (`--info-fd`) at once after the clone.
//!
//! **Limits.** That child sets the sandbox up, then waits for a byte on a
//! second pipe (`--block-fd`, the gate) before it starts the program. A
//! task of croupier's reads the pid, has the sandbox's limits set on that
//! process ([`limiter`], with `prlimit(2)`: data, CPU time, processes,
//! open files, file size; its program and every process after inherit
//! them), and only then opens the gate. This spares an `exec` of
//! `prlimit` inside each sandbox (about 0.8 ms a start). A sandbox whose limits cannot be set is killed
//! and its gate never opened: its first process is killed by its pidfd,
//! or, never named, with bubblewrap (it dies with its parent), and the
//! gate is closed only once bubblewrap has ended. Where bubblewrap is
//! setuid (its child is not this user's to limit) or the limiter cannot
//! run, `prlimit` runs inside as before ([`gated`]).
//!
//! **SIGTERM.** A SIGTERM to bubblewrap's group ends bubblewrap, and the
//! kernel then kills the whole sandbox at once: the program would never get
//! its SIGTERM and grace period. So the program is asked to stop through
//! that first process's group: PID 1 of a PID namespace ignores a SIGTERM
//! it has no handler for, and bubblewrap ends once the program has.
//!
//! That child is also held by a pidfd, which names it and no other
//! process, and killed through it with its sandbox: a sandbox stopped
//! while it was still being set up (its PID 1 not yet in a session of its
//! own, so out of reach of both signals to groups once bubblewrap has
//! gone) still ends whole. One stopped before it was named is killed when
//! it is named, and its gate never opened.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;

use super::sandbox::SandboxLimits;
use super::which::find_program;
use super::{limiter, procstat};
use crate::transport::error::TransportError;

/// How long bubblewrap may take to name its child before the sandbox is
/// given up.
const NAMING: Duration = Duration::from_secs(10);
/// How long a sandbox given up may take to end before its gate is closed.
const ENDING: Duration = Duration::from_secs(10);

/// What croupier knows of a sandbox's first process, shared with the task
/// that reads bubblewrap's info and opens the gate.
#[derive(Debug)]
pub(super) struct SandboxInfo {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    first: First,
    /// The bot was stopped: a first process named later is killed.
    stopped: bool,
}

/// The sandbox's first process, as far as it is known.
#[derive(Debug, Default)]
enum First {
    /// Not read yet (bubblewrap may not have written it yet).
    #[default]
    Unread,
    /// The sandbox's PID 1: its host pid, and a pidfd of it.
    Known(i32, Arc<OwnedFd>),
    /// Unreadable, or gone before it was read: the program is stopped
    /// with its sandbox.
    Unknown,
}

/// Whether the limits are set from here through a gate: where the
/// limiter runs ([`limiter`]), and not where bubblewrap is setuid (its
/// child is then root's; checked once).
pub(super) fn gated() -> bool {
    static SETUID: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let setuid = *SETUID.get_or_init(|| {
        find_program("bwrap")
            .and_then(|p| std::fs::metadata(p).ok())
            .is_none_or(|m| m.permissions().mode() & 0o4000 != 0)
    });
    !setuid && limiter::available()
}

/// The pipes of one sandbox's start: the ends bubblewrap is handed (by
/// number, see [`Pipes::info_fd`] and [`Pipes::gate_fd`]) and those kept.
#[derive(Debug)]
pub(super) struct Pipes {
    info_read: OwnedFd,
    info_write: OwnedFd,
    /// The gate's ends (read, write), when the limits are set from here.
    gate: Option<(OwnedFd, OwnedFd)>,
}

impl Pipes {
    /// Makes them (closed on `exec`; the start leaves bubblewrap's open
    /// for it alone): the gate too with `gate`.
    pub(super) fn new(gate: bool) -> Result<Pipes, TransportError> {
        let err =
            |e: nix::Error| TransportError::Io(format!("cannot make the sandbox's pipes: {e}"));
        let (info_read, info_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(err)?;
        fcntl(&info_read, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(err)?;
        let gate = match gate {
            true => Some(nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(err)?),
            false => None,
        };
        Ok(Pipes {
            info_read,
            info_write,
            gate,
        })
    }

    /// `--info-fd`'s number.
    pub(super) fn info_fd(&self) -> RawFd {
        self.info_write.as_raw_fd()
    }

    /// `--block-fd`'s number, with a gate.
    pub(super) fn gate_fd(&self) -> Option<RawFd> {
        self.gate.as_ref().map(|(read, _)| read.as_raw_fd())
    }

    /// Splits them into the ends bubblewrap is handed and those kept.
    pub(super) fn split(self) -> (Vec<OwnedFd>, Kept) {
        let (gate_read, gate_write) = self.gate.unzip();
        let handed = std::iter::once(self.info_write).chain(gate_read).collect();
        let kept = Kept {
            info: self.info_read,
            gate: gate_write,
        };
        (handed, kept)
    }
}

/// The ends kept by croupier until bubblewrap has started.
#[derive(Debug)]
pub(super) struct Kept {
    info: OwnedFd,
    gate: Option<OwnedFd>,
}

impl Kept {
    /// Once `bwrap` (bubblewrap, this process's unreaped child) runs:
    /// starts the task that reads its info, sets `limits` on its first
    /// process and opens the gate. The info pipe stays open until that
    /// process has ended (bubblewrap writes its info in several pieces, and
    /// one written to a pipe closed at this end would end it).
    pub(super) fn watch(
        self,
        bwrap: Pid,
        limits: &SandboxLimits,
    ) -> Result<SandboxInfo, TransportError> {
        let info = pipe::Receiver::from_owned_fd(self.info)
            .map_err(|e| TransportError::Io(format!("cannot watch the sandbox's start: {e}")))?;
        let state = Arc::new(Mutex::new(State::default()));
        let shared = SandboxInfo {
            state: Arc::clone(&state),
        };
        let bwrap_fd = pidfd(bwrap.as_raw());
        tokio::spawn(open_gate(
            info,
            self.gate,
            bwrap,
            bwrap_fd,
            limits.clone(),
            state,
        ));
        Ok(shared)
    }
}

/// The task of [`Kept::watch`].
async fn open_gate(
    mut info: pipe::Receiver,
    gate: Option<OwnedFd>,
    bwrap: Pid,
    bwrap_fd: Option<OwnedFd>,
    limits: SandboxLimits,
    state: Arc<Mutex<State>>,
) {
    let mut said = Vec::new();
    let named = tokio::time::timeout(NAMING, first_pid(&mut info, &mut said))
        .await
        .ok()
        .flatten()
        .and_then(|pid| {
            let fd = pidfd(pid)?;
            let (parent, _) = procstat::parent_and_group_of(pid)?;
            (parent == bwrap.as_raw()).then(|| (pid, Arc::new(fd)))
        });
    let Some((pid, fd)) = named else {
        lock(&state).first = First::Unknown;
        give_up(gate, bwrap, bwrap_fd).await;
        return;
    };
    let stopped = {
        let mut s = lock(&state);
        s.first = First::Known(pid, Arc::clone(&fd));
        s.stopped
    };
    if stopped {
        // Stopped before it was named: it never starts its program.
        kill(&fd);
    } else if let Some(gate) = &gate {
        let opened = limiter::set(pid, &limits)
            .await
            .map_err(|e| format!("cannot set a sandbox's limits, so it is killed: {e}"))
            .and_then(|()| {
                rustix::io::write(gate, b"1")
                    .map(|_| ())
                    .map_err(|e| format!("cannot let a sandbox start: {e}"))
            });
        if let Err(why) = opened {
            tracing::warn!("{why}");
            kill(&fd);
        }
    }
    // Killed or let go, its first process goes on no further without it.
    drop(gate);
    // The rest of the info, so that no piece of it is written to a closed
    // pipe.
    let _ = tokio::time::timeout(NAMING, info_end(&mut info, &mut said)).await;
}

/// A sandbox whose first process was never named: bubblewrap's group (its
/// first process is in it until it makes its own session) is killed while
/// the group's id is sure to be theirs (bubblewrap unreaped), and the gate
/// is closed once bubblewrap has ended. Were bubblewrap already reaped, a
/// first process might live on unnamed: its gate is then left shut for
/// good (one descriptor) rather than let it start without its limits.
async fn give_up(gate: Option<OwnedFd>, bwrap: Pid, bwrap_fd: Option<OwnedFd>) {
    let Some(gate) = gate else {
        return;
    };
    // Running, or ended and not reaped: not ECHILD (`WNOWAIT` reaps
    // nothing).
    let unreaped = bwrap_fd.as_ref().is_some_and(|b| {
        use rustix::process::{waitid, WaitId, WaitIdOptions};
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        waitid(WaitId::PidFd(b.as_fd()), options).is_ok()
    });
    if !unreaped {
        tracing::warn!("a sandbox's first process was never named: its gate stays shut");
        std::mem::forget(gate);
        return;
    }
    let _ = killpg(bwrap, Signal::SIGKILL);
    if let Some(b) = &bwrap_fd {
        let _ = tokio::time::timeout(ENDING, ended(b)).await;
    }
    drop(gate);
}

/// Waits until the process of `pidfd` (this process's child) has ended,
/// or has been reaped.
async fn ended(pidfd: &OwnedFd) {
    use rustix::process::{waitid, WaitId, WaitIdOptions};
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    while let Ok(None) = waitid(WaitId::PidFd(pidfd.as_fd()), options) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Reads more of bubblewrap's info into `said`: `false` once it ends.
async fn read_more(info: &mut pipe::Receiver, said: &mut Vec<u8>) -> bool {
    let mut buf = [0u8; 256];
    match info.read(&mut buf).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            said.extend_from_slice(&buf[..n]);
            said.len() <= 4096
        }
    }
}

/// Reads bubblewrap's info until its child's pid is there, whole (followed
/// by more of the info), or the info ends.
async fn first_pid(info: &mut pipe::Receiver, said: &mut Vec<u8>) -> Option<i32> {
    loop {
        if !read_more(info, said).await {
            return child_pid(said, true);
        }
        if let Some(pid) = child_pid(said, false) {
            return Some(pid);
        }
    }
}

/// Reads bubblewrap's info to its end (the object's closing brace).
async fn info_end(info: &mut pipe::Receiver, said: &mut Vec<u8>) {
    while !said.trim_ascii_end().ends_with(b"}") {
        if !read_more(info, said).await {
            return;
        }
    }
}

fn pidfd(pid: i32) -> Option<OwnedFd> {
    rustix::process::pidfd_open(
        rustix::process::Pid::from_raw(pid)?,
        rustix::process::PidfdFlags::empty(),
    )
    .ok()
}

fn kill(pidfd: &OwnedFd) {
    let _ = rustix::process::pidfd_send_signal(pidfd, rustix::process::Signal::KILL);
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl SandboxInfo {
    /// The process group of the program in the sandbox that bubblewrap
    /// (`bwrap`) started: its PID 1's, once that leads a group of its own
    /// and while bubblewrap is its parent. `None` before then, and once
    /// it has ended.
    pub(super) fn program_group(&mut self, bwrap: Pid) -> Option<Pid> {
        let First::Known(pid, _) = lock(&self.state).first else {
            return None;
        };
        let (parent, group) = procstat::parent_and_group_of(pid)?;
        (parent == bwrap.as_raw() && group == pid).then(|| Pid::from_raw(pid))
    }

    /// The host pid of the sandbox's first process, once read (for tests).
    #[cfg(test)]
    pub(super) fn first(&mut self, _bwrap: Pid) -> Option<i32> {
        match lock(&self.state).first {
            First::Known(pid, _) => Some(pid),
            _ => None,
        }
    }

    /// Kills the sandbox's PID 1, and with it everything in its PID
    /// namespace, where it is known (through its pidfd: never another
    /// process); one not named yet is killed when it is.
    pub(super) fn kill(&mut self, _bwrap: Pid) {
        let mut s = lock(&self.state);
        s.stopped = true;
        if let First::Known(_, fd) = &s.first {
            kill(fd);
        }
    }
}

/// The `child-pid` of bubblewrap's info (`{ "child-pid": 4242, ...`):
/// whole only once something follows it, or the info has ended (`ended`).
fn child_pid(info: &[u8], ended: bool) -> Option<i32> {
    let text = std::str::from_utf8(info).ok()?;
    let after = text.split_once("\"child-pid\"")?.1.trim_start();
    let digits = after.strip_prefix(':')?.trim_start();
    let end = match digits.find(|c: char| !c.is_ascii_digit()) {
        Some(end) => end,
        None if ended => digits.len(),
        None => return None,
    };
    digits[..end].parse().ok().filter(|p| *p > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_pid_is_read_from_bubblewraps_info() {
        assert_eq!(
            child_pid(b"{\n    \"child-pid\": 4242\n}\n", false),
            Some(4242)
        );
        assert_eq!(child_pid(b"{\"child-pid\":17,\"x\":1}", false), Some(17));
        assert_eq!(child_pid(b"{\n    \"child-pid\": ", true), None);
        assert_eq!(child_pid(b"{\"child-pid\": 1}", false), None);
        assert_eq!(child_pid(b"{\"pid\": 4242}", false), None);
        assert_eq!(child_pid(&[0xff, 0xfe], true), None);
    }

    #[test]
    fn a_pid_cut_short_is_not_taken_until_more_comes() {
        assert_eq!(child_pid(b"{\n    \"child-pid\": 42", false), None);
        assert_eq!(child_pid(b"{\n    \"child-pid\": 42", true), Some(42));
        assert_eq!(child_pid(b"{\n    \"child-pid\": 4242,", false), Some(4242));
    }
}
