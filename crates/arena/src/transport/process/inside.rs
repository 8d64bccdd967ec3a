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
//! them), checks them in `/proc`, and only then opens the gate. This
//! spares an `exec` of `prlimit` inside each sandbox (about 0.8 ms a
//! start). bubblewrap takes the gate's end-of-file for a go, so the first
//! process holds a writer of the gate itself ([`GateEnds`]): only
//! croupier's byte opens it. A sandbox whose limits cannot be set, or
//! whose start is dropped half-way (the runtime ending), has its first
//! process killed ([`Gate`]) while it can surely be named (by its pidfd,
//! or in bubblewrap's group while bubblewrap is unreaped); one whose
//! croupier was killed outright, or that could not be named, never starts
//! its program, and is killed by the limiter, which croupier's death
//! wakes ([`limiter`]). Where bubblewrap is
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

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use nix::fcntl::OFlag;
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
/// How long the limiter may take to set a sandbox's limits.
const LIMITING: Duration = Duration::from_secs(5);

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
/// limiter runs ([`limiter`]) and pidfds work, and not where bubblewrap is
/// setuid (its child is then root's; checked once).
pub(super) fn gated() -> bool {
    static GATED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *GATED.get_or_init(|| {
        // The first process is named by a pidfd (Linux 5.3 on).
        let pidfds = i32::try_from(std::process::id())
            .ok()
            .and_then(pidfd)
            .is_some();
        !bwrap_is_setuid() && pidfds && limiter::available()
    })
}

/// Whether the `bwrap` found is setuid (or not found).
pub(super) fn bwrap_is_setuid() -> bool {
    find_program("bwrap")
        .and_then(|p| std::fs::metadata(p).ok())
        .is_none_or(|m| m.permissions().mode() & 0o4000 != 0)
}

/// The pipes of one sandbox's start: the ends bubblewrap is handed (by
/// number, see [`Pipes::info_fd`] and [`Pipes::gate_fd`]) and those kept.
#[derive(Debug)]
pub(super) struct Pipes {
    info_read: pipe::Receiver,
    info_write: OwnedFd,
    gate: Option<GateEnds>,
}

/// A gate's ends: the one bubblewrap reads, croupier's writing end, and a
/// copy of that writing end handed to bubblewrap too. bubblewrap takes the
/// gate's end-of-file for a go; with a writer of its own in the sandbox's
/// first process, the gate never reaches end-of-file, so only croupier's
/// byte opens it: croupier gone (killed outright, or a start dropped half
/// way), the first process waits at its gate and never starts the program
/// without its limits. bubblewrap is handed that copy as `--sync-fd`: the
/// sandbox's PID 1 keeps it, and the program does not inherit it.
#[derive(Debug)]
struct GateEnds {
    read: OwnedFd,
    write: OwnedFd,
    handed_write: OwnedFd,
}

impl Pipes {
    /// Makes them (closed on `exec`; the start leaves bubblewrap's open
    /// for it alone): the gate too with `gate`. Needs a Tokio runtime
    /// (the info is read by a task of it).
    pub(super) fn new(gate: bool) -> Result<Pipes, TransportError> {
        let err =
            |e: nix::Error| TransportError::Io(format!("cannot make the sandbox's pipes: {e}"));
        tokio::runtime::Handle::try_current()
            .map_err(|_| TransportError::Io("bot programs need a Tokio runtime".into()))?;
        let (info_read, info_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(err)?;
        // Made before the start, so that nothing can fail after it (it
        // makes the pipe non-blocking).
        let info_read = pipe::Receiver::from_owned_fd(info_read)
            .map_err(|e| TransportError::Io(format!("cannot watch the sandbox's start: {e}")))?;
        let gate = match gate {
            true => {
                let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(err)?;
                let handed_write = write
                    .try_clone()
                    .map_err(|e| TransportError::Io(format!("cannot make the gate: {e}")))?;
                Some(GateEnds {
                    read,
                    write,
                    handed_write,
                })
            }
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
        self.gate.as_ref().map(|g| g.read.as_raw_fd())
    }

    /// `--sync-fd`'s number, with a gate: the first process's own writer
    /// of the gate, which bubblewrap keeps in the sandbox's PID 1 and does
    /// not pass to the program.
    pub(super) fn gate_writer_fd(&self) -> Option<RawFd> {
        self.gate.as_ref().map(|g| g.handed_write.as_raw_fd())
    }

    /// Splits them into the ends bubblewrap is handed and those kept.
    pub(super) fn split(self) -> (Vec<OwnedFd>, Kept) {
        let mut handed = vec![self.info_write];
        let gate = self.gate.map(|g| {
            handed.extend([g.read, g.handed_write]);
            g.write
        });
        let kept = Kept {
            info: self.info_read,
            gate,
        };
        (handed, kept)
    }
}

/// The ends kept by croupier until bubblewrap has started.
#[derive(Debug)]
pub(super) struct Kept {
    info: pipe::Receiver,
    gate: Option<OwnedFd>,
}

impl Kept {
    /// Once `bwrap` (bubblewrap, this process's unreaped child) runs:
    /// starts the task that reads its info, sets `limits` on its first
    /// process and opens the gate. The info pipe is read to its end (a
    /// piece written to a pipe closed at this end would end bubblewrap).
    pub(super) fn watch(self, bwrap: Pid, limits: &SandboxLimits) -> SandboxInfo {
        let state = Arc::new(Mutex::new(State::default()));
        let shared = SandboxInfo {
            state: Arc::clone(&state),
        };
        // Made before the task, so that a task dropped before it first
        // runs still kills what waits at the gate.
        let gate = self.gate.map(|fd| Gate {
            fd: Some(fd),
            bwrap,
            bwrap_fd: pidfd(bwrap.as_raw()),
            first: None,
        });
        tokio::spawn(open_gate(self.info, gate, bwrap, limits.clone(), state));
        shared
    }
}

/// The gate's writing end, kept by the task. The first process holds a
/// writer of its own ([`GateEnds`]), so dropping this one never lets it
/// go; dropped unopened (a failure, or the runtime ending in the middle of
/// a start), it kills that process, so that it does not wait for good: by
/// its pidfd once it is named, else with bubblewrap's process group, which
/// it stays in until it makes its own session after the gate.
struct Gate {
    fd: Option<OwnedFd>,
    bwrap: Pid,
    /// A pidfd of bubblewrap, opened while it was surely unreaped.
    bwrap_fd: Option<OwnedFd>,
    first: Option<Arc<OwnedFd>>,
}

impl Gate {
    /// Lets the first process go on.
    fn open(mut self) -> Result<(), String> {
        let fd = self.fd.as_ref().ok_or("the gate is closed")?;
        rustix::io::write(fd, b"1").map_err(|e| format!("cannot let a sandbox start: {e}"))?;
        self.fd = None;
        Ok(())
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let Some(fd) = self.fd.take() else {
            return;
        };
        match &self.first {
            Some(first) => kill(first),
            // Never named: it is in bubblewrap's group, whose id is surely
            // theirs while bubblewrap is unreaped (were it reaped, a first
            // process left would wait at its gate for good).
            None if self.bwrap_fd.as_ref().is_some_and(unreaped) => {
                let _ = killpg(self.bwrap, Signal::SIGKILL);
            }
            None => {}
        }
        drop(fd);
    }
}

/// The task of [`Kept::watch`].
async fn open_gate(
    mut info: pipe::Receiver,
    mut gate: Option<Gate>,
    bwrap: Pid,
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
        let stopped = {
            let mut s = lock(&state);
            s.first = First::Unknown;
            s.stopped
        };
        if gate.is_some() && !stopped {
            tracing::warn!("bubblewrap did not name its sandbox's first process: it is killed");
        }
        // Its first process (if any) is killed with bubblewrap's group.
        drop(gate);
        return;
    };
    if let Some(g) = gate.as_mut() {
        g.first = Some(Arc::clone(&fd));
    }
    let stopped = {
        let mut s = lock(&state);
        s.first = First::Known(pid, Arc::clone(&fd));
        s.stopped
    };
    if stopped {
        // Stopped before it was named: it never starts its program.
        kill(&fd);
    } else if let Some(g) = gate.take() {
        let set = tokio::time::timeout(LIMITING, limiter::set(pid, &limits))
            .await
            .unwrap_or_else(|_| Err("the limiter did not answer".into()))
            .and_then(|()| limited(pid, bwrap, &limits));
        let opened = match set {
            Ok(()) => g.open(),
            Err(e) => Err(format!(
                "cannot set a sandbox's limits, so it is killed: {e}"
            )),
        };
        if let Err(why) = opened {
            if lock(&state).stopped {
                tracing::debug!("a sandbox stopped as it started: {why}");
            } else {
                tracing::warn!("{why}");
            }
        }
    }
    // Let go, or killed as it closed.
    drop(gate);
    // The rest of the info, so that none of it is written to a closed pipe.
    let _ = tokio::time::timeout(NAMING, info_end(&mut info, &mut said)).await;
}

/// Whether process `pid` is still bubblewrap's child and has `limits`
/// (soft and hard), as the limiter said: the gate opens for no other
/// process, and on no word but the kernel's.
fn limited(pid: i32, bwrap: Pid, limits: &SandboxLimits) -> Result<(), String> {
    let seen = std::fs::read_to_string(format!("/proc/{pid}/limits"))
        .map_err(|e| format!("cannot read its limits: {e}"))?;
    let still = procstat::parent_and_group_of(pid).is_some_and(|(p, _)| p == bwrap.as_raw());
    if !still {
        return Err("its first process has gone".into());
    }
    limiter::shows(&seen, limits)
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

/// Whether the process of `pidfd`, this process's child, is not reaped
/// yet (running, or ended and waitable: `WNOWAIT` reaps nothing).
fn unreaped(pidfd: &OwnedFd) -> bool {
    use rustix::process::{waitid, WaitId, WaitIdOptions};
    use std::os::fd::AsFd;
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    waitid(WaitId::PidFd(pidfd.as_fd()), options).is_ok()
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

    /// A pidfd of the sandbox's first process, once read.
    pub(super) fn pidfd(&self) -> Option<Arc<OwnedFd>> {
        match &lock(&self.state).first {
            First::Known(_, fd) => Some(Arc::clone(fd)),
            _ => None,
        }
    }

    /// The host pid of the sandbox's first process, once read (for tests).
    #[cfg(test)]
    pub(super) fn first(&mut self) -> Option<i32> {
        match lock(&self.state).first {
            First::Known(pid, _) => Some(pid),
            _ => None,
        }
    }

    /// Marks the sandbox as being stopped: a first process named from
    /// now on is killed, and one never named is not warned of.
    pub(super) fn stopping(&mut self) {
        lock(&self.state).stopped = true;
    }

    /// Kills the sandbox's PID 1, and with it everything in its PID
    /// namespace, where it is known (through its pidfd: never another
    /// process); one not named yet is killed when it is.
    pub(super) fn kill(&mut self) {
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
