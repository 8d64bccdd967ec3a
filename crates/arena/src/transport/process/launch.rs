//! How a bot program is started: its command (sandbox, cgroup), the
//! descriptors its sandbox is handed, and the spawn on the spawner thread.

use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;

use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use nix::unistd::Pid;

use super::inside::{self, SandboxInfo};
use super::limits::ProcessLimits;
use super::sandbox::Sandbox;
use super::which::find_program;
use super::{cgroup, holder, lifetime, mount_view, sandbox, seccomp};
use crate::transport::error::TransportError;

/// A program started (in its sandbox and cgroup, registered as a live
/// bot) whose pipes nobody reads yet.
#[derive(Debug)]
pub(super) struct Launched {
    pub(super) child: Child,
    /// Croupier's ends of its stdin, stdout and stderr.
    pub(super) stdin: pipe::Sender,
    pub(super) stdout: pipe::Receiver,
    pub(super) stderr: pipe::Receiver,
    pub(super) serial: u64,
    pub(super) group: Option<cgroup::BotCgroup>,
    /// Where bubblewrap says which process is the sandbox's first, for a
    /// program in a sandbox of its own.
    pub(super) info: Option<SandboxInfo>,
}

/// What a held sandbox must match: the sandbox `argv` gets under `limits`
/// (its whole command but the program: the folders it sees, its working
/// folder and every limit) and its cgroup's limits. Commands that differ
/// only in words that name no file or folder (a seed) get the same one.
pub(super) fn held_for(argv: &[String], limits: &ProcessLimits) -> String {
    let sandbox = match &limits.sandbox {
        Sandbox::Strict(l) => {
            sandbox::wrap_as(argv, &[], l, None, &sandbox::Handed::default()).ok()
        }
        Sandbox::Off => None,
    };
    format!("{sandbox:?} {:?}", limits.cgroup)
}

/// Who makes a start's bubblewrap the sandbox's user: the user the
/// spawner thread switches to for the start, if any, and whether
/// `setpriv` does it instead (a no-op unless croupier is root). `strict`:
/// the start has a sandbox; `wraps`: its cgroup puts a `sh` that must run
/// as root first; `thread_can`: the user the thread can switch to
/// ([`sandbox::start_as`]).
fn user_switch(strict: bool, wraps: bool, thread_can: Option<u32>) -> (Option<u32>, bool) {
    match (strict, wraps, thread_can) {
        (false, _, _) => (None, false),
        (true, false, Some(id)) => (Some(id), false),
        (true, _, _) => (None, true),
    }
}

/// Starts `argv` with piped stdio in its own process group, in the sandbox
/// and cgroup of `limits`. With `held` (the folder of a held sandbox's
/// FIFOs and its holder), the sandbox runs the holder that starts the
/// program each round ([`holder`]) instead of the program.
pub(super) fn launch(
    argv: &[String],
    limits: &ProcessLimits,
    held: Option<(&std::path::Path, holder::Kind)>,
) -> Result<Launched, TransportError> {
    let program = argv
        .first()
        .ok_or_else(|| TransportError::Io("empty command".into()))?;
    if find_program(program).is_none() {
        return Err(TransportError::Io(format!(
            "cannot start '{program}': no such program"
        )));
    }
    let group = limits.cgroup.as_ref().and_then(cgroup::for_bot);
    let (full, handed, kept) = match &limits.sandbox {
        Sandbox::Off => (lifetime::with_death_signal(argv), Vec::new(), None),
        // bubblewrap dies with its parent, and its PID namespace with it;
        // it reads the sandbox's system-call filter from a pipe, says
        // which process the sandbox starts with, and that process waits
        // for its limits ([`inside`]) before it starts the program (or
        // the holder of a held sandbox).
        Sandbox::Strict(l) => {
            let filter = seccomp::pipe()?;
            let (run, dir) = match held {
                Some((dir, kind)) => (kind.command(), Some(dir)),
                None => (argv.to_vec(), None),
            };
            let pipes = inside::Pipes::new(inside::gated())?;
            let fds = sandbox::Handed {
                filter: filter.as_ref().map(AsRawFd::as_raw_fd),
                info: Some(pipes.info_fd()),
                gate: pipes.gate_fd(),
                gate_writer: pipes.gate_writer_fd(),
            };
            let full = sandbox::bubblewrap(argv, &run, l, dir, &fds)?;
            let (handed, kept) = pipes.split();
            let handed: Vec<OwnedFd> = filter.into_iter().chain(handed).collect();
            (full, handed, Some((kept, l)))
        }
    };
    // bubblewrap runs as the sandbox's user: started so by the spawner
    // thread, or, after the `sh` that enters a v2 cgroup as root (or where
    // the thread cannot switch), by `setpriv`.
    let wraps = group.as_ref().is_some_and(cgroup::BotCgroup::wraps);
    let (user, by_setpriv) = user_switch(
        matches!(limits.sandbox, Sandbox::Strict(_)),
        wraps,
        sandbox::start_as(),
    );
    // A sandbox starts from fewer mounts where it can ([`mount_view`]):
    // not a v2 cgroup's `sh`, which writes under `/sys`.
    let view = match (&limits.sandbox, wraps) {
        (Sandbox::Strict(_), false) => mount_view::view().filter(|v| v.serves(&full)),
        _ => None,
    };
    let full = if by_setpriv {
        sandbox::as_sandbox_user(full)?
    } else {
        full
    };
    let full = match &group {
        Some(g) => g.wrap(full),
        None => full,
    };
    let (first, args) = full
        .split_first()
        .ok_or_else(|| TransportError::Io("empty command".into()))?;
    // The pipes are made here, not by the spawn: the spawner thread may be
    // the sandbox's user by then, and a pipe's pages count as its maker's
    // (`as_user`).
    let io = |e: std::io::Error| TransportError::Io(format!("cannot start '{program}': {e}"));
    let (stdin_read, stdin_write) = std::io::pipe().map_err(io)?;
    let (stdout_read, stdout_write) = std::io::pipe().map_err(io)?;
    let (stderr_read, stderr_write) = std::io::pipe().map_err(io)?;
    let stdin = pipe::Sender::from_owned_fd(stdin_write.into()).map_err(io)?;
    let stdout = pipe::Receiver::from_owned_fd(stdout_read.into()).map_err(io)?;
    let stderr = pipe::Receiver::from_owned_fd(stderr_read.into()).map_err(io)?;
    let mut cmd = Command::new(first);
    cmd.args(args)
        .stdin(Stdio::from(stdin_read))
        .stdout(Stdio::from(stdout_write))
        .stderr(Stdio::from(stderr_write))
        .kill_on_drop(true);
    let entry = group.as_ref().and_then(cgroup::BotCgroup::thread_entry);
    let shape = match (&limits.sandbox, held) {
        (Sandbox::Off, _) => lifetime::Shape::Program,
        (Sandbox::Strict(_), None) => lifetime::Shape::OwnSandbox,
        (Sandbox::Strict(_), Some(_)) => lifetime::Shape::HeldSandbox,
    };
    let (child, serial) = lifetime::spawn(cmd, entry, view, user, handed, shape)
        .map_err(|e| TransportError::Io(format!("cannot start '{program}': {e}")))?;
    // (A child without an id has already been reaped: a first process of
    // its, if any, waits at its gate for good, which croupier's closed end
    // does not open.)
    let watched = match (kept, child.id().and_then(|id| i32::try_from(id).ok())) {
        (Some((kept, l)), Some(bwrap)) => Some(kept.watch(Pid::from_raw(bwrap), l)),
        _ => None,
    };
    Ok(Launched {
        child,
        stdin,
        stdout,
        stderr,
        serial,
        group,
        info: watched,
    })
}

#[cfg(test)]
mod tests {
    use super::user_switch;

    /// The thread switches for a sandbox unless a v2 cgroup's `sh` must
    /// run as root first, or the thread cannot; `setpriv` then switches
    /// after it; a start without a sandbox switches nothing.
    #[test]
    fn bubblewrap_becomes_the_sandboxs_user_once_and_after_any_root_sh() {
        assert_eq!(user_switch(true, false, Some(65534)), (Some(65534), false));
        assert_eq!(user_switch(true, true, Some(65534)), (None, true));
        assert_eq!(user_switch(true, false, None), (None, true));
        assert_eq!(user_switch(true, true, None), (None, true));
        assert_eq!(user_switch(false, false, Some(65534)), (None, false));
        assert_eq!(user_switch(false, true, Some(65534)), (None, false));
    }
}
