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

use std::os::fd::{AsFd, OwnedFd};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::unistd::Pid;

use super::procstat;
use crate::transport::error::TransportError;

/// What bubblewrap says of the sandbox it started: the reading end of its
/// `--info-fd` pipe, until it has been read.
#[derive(Debug)]
pub(super) struct SandboxInfo {
    state: State,
}

#[derive(Debug)]
enum State {
    /// Not read yet (bubblewrap may not have written it yet).
    Waiting(OwnedFd),
    /// Bubblewrap's child, the sandbox's PID 1, by its host pid.
    Child(i32),
    /// Unreadable: the program is stopped with its sandbox.
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
                state: State::Waiting(read),
            },
            write,
        ))
    }

    /// The process group of the program in the sandbox that bubblewrap
    /// (`bwrap`, this process's child) started: its PID 1's, while that
    /// is still bubblewrap's child and leads its group. `None` before
    /// bubblewrap has started it, and once it has ended.
    pub(super) fn program_group(&mut self, bwrap: Pid) -> Option<Pid> {
        if let State::Waiting(fd) = &self.state {
            let mut buf = [0u8; 256];
            self.state = match nix::unistd::read(fd.as_fd(), &mut buf) {
                Err(nix::errno::Errno::EAGAIN) => return None,
                Ok(n) => child_pid(&buf[..n]).map_or(State::Unknown, State::Child),
                Err(_) => State::Unknown,
            };
        }
        let State::Child(pid) = self.state else {
            return None;
        };
        // Its pid is ours to use while bubblewrap, unreaped, is its parent
        // (bubblewrap starts no other child).
        let (parent, group) = procstat::parent_and_group(&procstat::read(pid)?)?;
        (parent == bwrap.as_raw() && group == pid).then(|| Pid::from_raw(pid))
    }
}

/// The `child-pid` of bubblewrap's info (`{ "child-pid": 4242 }`), written
/// at once after its clone.
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
