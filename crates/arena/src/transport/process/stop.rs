//! How a bot program is stopped: SIGTERM to where its program runs, a
//! grace period, then SIGKILL to its whole group and sandbox; and the
//! same SIGKILL, at once, when its handle is dropped.

use std::sync::Arc;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::{lifetime, BotProcess, Leader, STDERR_AFTER_STOP};

impl BotProcess {
    /// Stops the bot: closes its stdin, SIGTERM to its process group, waits
    /// for the grace period, then SIGKILL; the child is always reaped. Its
    /// stderr log is complete when this returns (unless something that
    /// escaped both its group and its cgroup still holds the pipe: then
    /// after [`STDERR_AFTER_STOP`] at most). Once no process holds it, the
    /// reader gets up to a second more to run (`StderrReader::finish`).
    pub async fn terminate(mut self) {
        self.stdin = None;
        self.ask_to_stop();
        let grace = self.limits.grace;
        if tokio::time::timeout(grace, self.leader.wait())
            .await
            .is_err()
        {
            self.signal(Signal::SIGKILL);
            self.leader.wait().await;
        }
        // The group may hold children the bot forked; they go too (while
        // one lives, the group id stays reserved), and so do the orphans it
        // detached, and a sandbox that outlived its bubblewrap. Then the
        // handle forgets the id (see `signal`).
        self.kill_all();
        self.pgid = None;
        if let Some(serial) = self.serial {
            lifetime::forget(serial);
        }
        // A spare sandbox it started in ends with it (and lets its cgroup
        // go to the step below).
        self.sandbox = None;
        // Whatever escaped the group (a new session, a daemon) is still in
        // the cgroup: it goes, and so does the cgroup (unless a held
        // sandbox, which shares it, still runs: it removes it at its end).
        if let Some(g) = self.cgroup.take().and_then(|g| Arc::try_unwrap(g).ok()) {
            g.remove().await;
        }
        // Its last words: the reader ends as the last writer goes.
        if let Some(mut reader) = self.stderr_reader.take() {
            reader.finish(STDERR_AFTER_STOP).await;
        }
    }

    /// Whether the bot's first process runs (it is neither a zombie nor
    /// gone).
    pub(super) fn leader_running(&self) -> bool {
        self.pgid.is_some_and(lifetime::running)
    }

    /// SIGTERM to the bot's process group; in a sandbox of its own, to
    /// the group of the program inside, so that the program gets its
    /// grace period (a SIGTERM to bubblewrap would end the sandbox at
    /// once). Until bubblewrap has said which that is, and once it has
    /// ended, to bubblewrap's.
    fn ask_to_stop(&mut self) {
        // Only a program started by Croupier (`Leader::Own`) has one.
        let inner = match (self.inside.as_mut(), self.pgid) {
            (Some(info), Some(bwrap)) => info.program_group(bwrap),
            _ => None,
        };
        match inner {
            Some(group) => signal_group(group, Signal::SIGTERM, || false),
            None => {
                // A sandbox stopped before it is named goes quietly (its
                // bubblewrap may end before it names its first process,
                // which is killed if it is named all the same).
                if let Some(info) = self.inside.as_mut() {
                    info.stopping();
                }
                self.signal(Signal::SIGTERM)
            }
        }
    }

    /// SIGKILL to the bot's process group and, in a sandbox of its own,
    /// to the sandbox's first process (which ends the sandbox, even one
    /// whose bubblewrap has already ended: see [`super::inside`]).
    fn kill_all(&mut self) {
        // The first process first: once bubblewrap is gone, it could no
        // longer be told from another.
        if let Some(info) = self.inside.as_mut() {
            info.kill();
        }
        self.signal(Signal::SIGKILL);
    }

    /// Signals the bot's process group. The group id is safe to use while
    /// the leader is unreaped or any member lives; once the leader is
    /// reaped and its group empty, the id may be given to a new process
    /// (pids wrap at 32768 by default), so a handle forgets it right after
    /// its last kill.
    pub(super) fn signal(&self, sig: Signal) {
        if let Some(pgid) = self.pgid {
            // A held round's program may not lead its group yet (see
            // `before_its_group`): it is then signalled alone.
            signal_group(
                pgid,
                sig,
                || matches!(&self.leader, Leader::Held(l) if l.before_its_group()),
            );
        }
    }
}

/// Signals the process group `pgid`, or, if there is none and `alone()`,
/// the process `pgid` (ESRCH, the group already gone, is the normal case
/// after an exit).
pub(super) fn signal_group(pgid: Pid, sig: Signal, alone: impl FnOnce() -> bool) {
    if killpg(pgid, sig) == Err(nix::errno::Errno::ESRCH) && alone() {
        let _ = nix::sys::signal::kill(pgid, sig);
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        // Whatever happened, nothing of the bot outlives its handle; tokio
        // reaps the child (kill_on_drop).
        self.kill_all();
        if let Some(serial) = self.serial {
            lifetime::forget(serial);
        }
    }
}
