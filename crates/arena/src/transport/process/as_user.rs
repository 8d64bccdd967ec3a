//! The spawner thread as another user, for one start.
//!
//! Run as root, croupier starts bubblewrap as `nobody`. A start that sets
//! its user through the standard library (`Command::uid`) is a `fork` of
//! croupier's whole address space, which costs more the more memory
//! croupier holds; `setpriv --reuid …` costs an `exec` of its own (about
//! 0.7 ms here). Linux keeps a user per *thread*, and a `posix_spawn`'s
//! child starts with its calling thread's: so the spawner thread itself
//! becomes `nobody` ([`AsUser::enter`]), starts bubblewrap, and becomes
//! root again when the guard is dropped (docs/benchmarks.md, 6 Dec 2026,
//! fifth stop).
//!
//! Only this thread changes: the system calls are the kernel's own, not
//! the C library's `setresuid`, which changes every thread of the process.
//! While switched, the thread keeps root as its saved user id, which is
//! what lets it come back; the program it starts does not keep it: `exec`
//! sets the saved id to the effective one (`nobody`), and a program with
//! no file capabilities, started by a thread whose real and effective
//! users are not root and whose ambient set is empty, gets no capability.
//!
//! A change of a thread's effective user makes the kernel mark the whole
//! process not dumpable; the guard puts back what it was. While switched
//! (the time of one `posix_spawn`), the thread can be signalled by another
//! process whose user is the one it switched to. No bot can: each runs in
//! a PID namespace of its own, where croupier has no pid.

use std::io;

use rustix::process::{DumpableBehavior, Gid, Uid};
use rustix::thread;

/// The spawner thread switched to another user and group, with no
/// supplementary group and no ambient capability; root again when
/// dropped.
#[derive(Debug)]
pub(super) struct AsUser {
    gid: Gid,
    groups: Vec<Gid>,
    dumpable: DumpableBehavior,
}

impl AsUser {
    /// Switches the calling thread to `id` as its real and effective user
    /// and group (root stays its saved user). Needs root; on an error the
    /// thread is left as it was.
    pub(super) fn enter(id: u32) -> io::Result<AsUser> {
        let me = AsUser {
            gid: rustix::process::getegid(),
            groups: rustix::process::getgroups()?,
            dumpable: rustix::process::dumpable_behavior()?,
        };
        thread::clear_ambient_capability_set()?;
        let gid = Gid::from_raw(id);
        thread::set_thread_groups(&[])?;
        // From here on, dropping `me` puts back what was changed.
        let uid = Uid::from_raw(id);
        thread::set_thread_res_gid(gid, gid, gid)?;
        thread::set_thread_res_uid(uid, uid, Uid::ROOT)?;
        Ok(me)
    }
}

impl Drop for AsUser {
    fn drop(&mut self) {
        // Root as effective user gives back the thread's capabilities,
        // which the group and the groups then need.
        let back = thread::set_thread_res_uid(Uid::ROOT, Uid::ROOT, Uid::ROOT)
            .and_then(|()| thread::set_thread_res_gid(self.gid, self.gid, self.gid))
            .and_then(|()| thread::set_thread_groups(&self.groups))
            .and_then(|()| rustix::process::set_dumpable_behavior(self.dumpable));
        if let Err(e) = back {
            // Cannot happen to a thread whose saved user is root; were it
            // to, the thread stays the lesser user and its next starts
            // fail with a clear error rather than gain anything.
            tracing::error!("the bot spawner thread cannot become root again: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of the line `field` of a `/proc` status file.
    fn field<'a>(status: &'a str, field: &str) -> Vec<&'a str> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .map(|rest| rest.split_whitespace().collect())
            .unwrap_or_default()
    }

    const NONE: &str = "0000000000000000";

    #[test]
    fn only_the_switched_thread_changes_what_it_starts_is_nobody_and_it_comes_back() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: needs root");
            return;
        }
        let own = || std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let before = own();
        let dumpable = rustix::process::dumpable_behavior().unwrap();
        let (go, went) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            went.recv().unwrap();
            own()
        });
        let switched = AsUser::enter(65534).unwrap();
        let during = own();
        assert_eq!(field(&during, "Uid:"), ["65534", "65534", "0", "65534"]);
        assert_eq!(field(&during, "Gid:"), ["65534"; 4]);
        assert!(field(&during, "Groups:").is_empty());
        assert_eq!(field(&during, "CapEff:"), [NONE]);
        // What the thread starts now (a `posix_spawn`) is nobody through
        // and through: no saved root, no group, no capability.
        let child = std::process::Command::new("cat")
            .arg("/proc/self/status")
            .output()
            .unwrap();
        let child = String::from_utf8(child.stdout).unwrap();
        assert_eq!(field(&child, "Uid:"), ["65534"; 4]);
        assert_eq!(field(&child, "Gid:"), ["65534"; 4]);
        assert!(field(&child, "Groups:").is_empty());
        for caps in ["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"] {
            assert_eq!(field(&child, caps), [NONE], "{caps}");
        }
        // Another thread stays root meanwhile.
        go.send(()).unwrap();
        let elsewhere = other.join().unwrap();
        assert_eq!(field(&elsewhere, "Uid:"), ["0"; 4]);
        drop(switched);
        let after = own();
        for ids in ["Uid:", "Gid:", "Groups:", "CapEff:", "CapPrm:"] {
            assert_eq!(field(&after, ids), field(&before, ids), "{ids}");
        }
        assert_eq!(rustix::process::dumpable_behavior().unwrap(), dumpable);
    }
}
