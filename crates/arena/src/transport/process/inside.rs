//! The program inside a sandbox of its own, for its SIGTERM.
//!
//! Croupier's child in a sandbox is bubblewrap, which clones the sandbox's
//! PID 1 (a new session: `--new-session`), which starts the program in its
//! session and process group. A SIGTERM to bubblewrap's group ends
//! bubblewrap, and the kernel then kills the whole sandbox at once: the
//! program would never get its SIGTERM and grace period. So bubblewrap
//! writes its child's host pid to a pipe (`--info-fd`), and the program is
//! asked to stop through that child's process group: PID 1 of a PID
//! namespace ignores a SIGTERM it has no handler for, and bubblewrap ends
//! once the program has.
//!
//! That child is also held by a pidfd, which names it and no other
//! process, and killed through it with its sandbox: a sandbox stopped
//! while it was still being set up (its PID 1 not yet in a session of its
//! own, so out of reach of both signals to groups once bubblewrap has
//! gone) still ends whole.

use std::os::fd::{AsFd, OwnedFd};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::unistd::Pid;

use super::procstat;
use crate::transport::error::TransportError;

/// What bubblewrap says of the sandbox it started, read from its
/// `--info-fd` pipe once it is there.
#[derive(Debug)]
pub(super) struct SandboxInfo {
    /// The pipe's reading end, open as long as the sandbox may live:
    /// bubblewrap writes its info in several pieces, and one written to a
    /// pipe closed at this end would end it.
    pipe: OwnedFd,
    first: First,
}

/// The sandbox's first process, as far as it is known.
#[derive(Debug)]
enum First {
    /// Not read yet (bubblewrap may not have written it yet).
    Unread,
    /// The sandbox's PID 1: its host pid, and a pidfd of it.
    Known(i32, OwnedFd),
    /// Unreadable, or gone before it was read: the program is stopped
    /// with its sandbox.
    Unknown,
}

impl SandboxInfo {
    /// A pipe for `--info-fd`: this end, and the writing end to hand to
    /// bubblewrap (both closed on `exec`).
    pub(super) fn pipe() -> Result<(SandboxInfo, OwnedFd), TransportError> {
        let err =
            |e: nix::Error| TransportError::Io(format!("cannot make the sandbox's info pipe: {e}"));
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(err)?;
        fcntl(&read, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(err)?;
        Ok((
            SandboxInfo {
                pipe: read,
                first: First::Unread,
            },
            write,
        ))
    }

    /// Reads bubblewrap's info if it is there and not read yet; the first
    /// process is known when its pid is bubblewrap's (`bwrap`, this
    /// process's unreaped child) child once a pidfd holds it: bubblewrap
    /// starts no other child, so a pid reused since is not taken for it.
    fn read(&mut self, bwrap: Pid) {
        if !matches!(self.first, First::Unread) {
            return;
        }
        let mut buf = [0u8; 256];
        let n = loop {
            match nix::unistd::read(self.pipe.as_fd(), &mut buf) {
                Err(nix::errno::Errno::EINTR) => continue,
                Err(nix::errno::Errno::EAGAIN) => return,
                Err(_) => break 0,
                Ok(n) => break n,
            }
        };
        self.first = child_pid(&buf[..n])
            .and_then(|pid| {
                let fd = rustix::process::pidfd_open(
                    rustix::process::Pid::from_raw(pid)?,
                    rustix::process::PidfdFlags::empty(),
                )
                .ok()?;
                let (parent, _) = procstat::parent_and_group_of(pid)?;
                (parent == bwrap.as_raw()).then_some(First::Known(pid, fd))
            })
            .unwrap_or(First::Unknown);
    }

    /// The process group of the program in the sandbox that bubblewrap
    /// (`bwrap`) started: its PID 1's, once that leads a group of its own
    /// and while bubblewrap is its parent. `None` before then, and once
    /// it has ended.
    pub(super) fn program_group(&mut self, bwrap: Pid) -> Option<Pid> {
        self.read(bwrap);
        let First::Known(pid, _) = self.first else {
            return None;
        };
        let (parent, group) = procstat::parent_and_group_of(pid)?;
        (parent == bwrap.as_raw() && group == pid).then(|| Pid::from_raw(pid))
    }

    /// The host pid of the sandbox's first process, once read (for tests).
    #[cfg(test)]
    pub(super) fn first(&mut self, bwrap: Pid) -> Option<i32> {
        self.read(bwrap);
        match self.first {
            First::Known(pid, _) => Some(pid),
            _ => None,
        }
    }

    /// Kills the sandbox's PID 1, and with it everything in its PID
    /// namespace, where it is known (through its pidfd: never another
    /// process).
    pub(super) fn kill(&mut self, bwrap: Pid) {
        self.read(bwrap);
        if let First::Known(_, fd) = &self.first {
            let _ = rustix::process::pidfd_send_signal(fd, rustix::process::Signal::KILL);
        }
    }
}

/// The `child-pid` of bubblewrap's info (`{ "child-pid": 4242, ...`),
/// written at once after its clone, in one piece.
fn child_pid(info: &[u8]) -> Option<i32> {
    let text = std::str::from_utf8(info).ok()?;
    let after = text.split_once("\"child-pid\"")?.1.trim_start();
    let digits = after.strip_prefix(':')?.trim_start();
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok().filter(|p| *p > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_pid_is_read_from_bubblewraps_info() {
        assert_eq!(child_pid(b"{\n    \"child-pid\": 4242\n}\n"), Some(4242));
        assert_eq!(child_pid(b"{\"child-pid\":17,\"x\":1}"), Some(17));
        assert_eq!(child_pid(b"{\n    \"child-pid\": "), None);
        assert_eq!(child_pid(b"{\"child-pid\": 1}"), None);
        assert_eq!(child_pid(b"{\"pid\": 4242}"), None);
        assert_eq!(child_pid(&[0xff, 0xfe]), None);
    }
}
