//! The spawner thread as another user, for one start.
//!
//! Run as root, croupier starts bubblewrap as `nobody`. A start that sets
//! its user through the standard library (`Command::uid`) is a `fork` of
//! croupier's whole address space, which costs more the more memory
//! croupier holds; `setpriv --reuid …` costs an `exec` of its own (about
//! 0.7 ms here). Linux keeps a user per *thread*, and a `posix_spawn`'s
//! child starts with its calling thread's: so the spawner thread itself
//! becomes `nobody` ([`AsUser::enter`]), starts bubblewrap, and becomes
//! root again when the guard is dropped (docs/benchmarks.md, "A cold start
//! without `setpriv`").
//!
//! Only this thread changes: the system calls are the kernel's own, not
//! the C library's `setresuid`, which changes every thread of the process.
//! While switched, the thread keeps root as its saved user id, which is
//! what lets it come back, and `CAP_SYS_RESOURCE` and `CAP_SYS_ADMIN` as
//! its only effective capabilities (those it has), so that the start's
//! process is not held to `nobody`'s process limit. The program it starts
//! keeps neither: `exec` sets the saved id to the effective one
//! (`nobody`), and a program with no file capabilities and no set-user-id
//! bit, started by a thread whose real and effective users are not root
//! and whose ambient and inheritable sets are empty, gets no capability.
//!
//! While switched (the start's `posix_spawn`, until the child's `exec`),
//! the thread and its child can be signalled by another process running
//! as that user on the host, and their scheduling changed. No bot can:
//! each runs in a PID namespace of its own, where croupier has no pid. A host process running as `nobody` could already trace and kill
//! every sandbox's bubblewrap, so nothing untrusted may run as `nobody` on
//! a host that runs croupier as root (docs/sandbox.md).
//!
//! The start's pipes are made before, by the thread that asks for it
//! (`launch`): a pipe's pages count as its maker's real user's, and those
//! of `nobody` are the bots' own (`fs.pipe-user-pages-soft`).
//!
//! A change of a thread's effective user also sets the whole process's
//! dumpable flag (to `fs.suid_dumpable`); the guard puts back what it
//! was. Switches take turns ([`SWITCHING`]), so that two never overlap.

use std::io;
use std::sync::{Mutex, MutexGuard};

use rustix::process::{DumpableBehavior, Gid, Uid};
use rustix::thread::{self, CapabilitySet, CapabilitySets};

/// What a switched thread keeps of its capabilities, as effective ones:
/// either exempts its start's pipes and process from the limits of the
/// user it switched to, as they are exempt for root.
const KEPT: CapabilitySet = CapabilitySet::SYS_RESOURCE.union(CapabilitySet::SYS_ADMIN);

/// Whether croupier runs as root (effective uid 0).
pub(super) fn is_root() -> bool {
    // Read once: croupier's user stays (only the spawner thread switches
    // its own for a start, and comes back).
    static ROOT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ROOT.get_or_init(|| rustix::process::geteuid().is_root())
}

/// Held by a switched thread: one at a time (only the spawner thread
/// switches in croupier; tests read the process-wide flags under it).
static SWITCHING: Mutex<()> = Mutex::new(());

/// The lock of [`SWITCHING`], whoever panicked while holding it.
fn switching() -> MutexGuard<'static, ()> {
    SWITCHING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The spawner thread switched to another user and group, with no
/// supplementary group and no ambient or inheritable capability; as it
/// was when dropped (on the thread that switched: it cannot be sent).
#[derive(Debug)]
pub(super) struct AsUser {
    gid: Gid,
    groups: Vec<Gid>,
    caps: CapabilitySets,
    dumpable: DumpableBehavior,
    /// Also what keeps the guard on its thread: a `MutexGuard` cannot be
    /// sent.
    _turn: MutexGuard<'static, ()>,
}

impl AsUser {
    /// Switches the calling thread to `id` as its real and effective user
    /// and group (root stays its saved user). Needs root; on an error the
    /// thread is left as it was (its ambient set, meaningless to root,
    /// stays empty).
    pub(super) fn enter(id: u32) -> io::Result<AsUser> {
        let turn = switching();
        let gid = rustix::process::getegid();
        let groups = rustix::process::getgroups()?;
        let caps = thread::capabilities(None)?;
        let dumpable = rustix::process::dumpable_behavior()?;
        thread::clear_ambient_capability_set()?;
        thread::set_thread_groups(&[])?;
        let me = AsUser {
            gid,
            groups,
            caps,
            dumpable,
            _turn: turn,
        };
        // From here on, dropping `me` puts back what was changed.
        let (uid, gid) = (Uid::from_raw(id), Gid::from_raw(id));
        thread::set_thread_res_gid(gid, gid, gid)?;
        thread::set_thread_res_uid(uid, uid, Uid::ROOT)?;
        thread::set_capabilities(
            None,
            CapabilitySets {
                effective: caps.permitted & KEPT,
                permitted: caps.permitted,
                inheritable: CapabilitySet::empty(),
            },
        )?;
        Ok(me)
    }
}

impl Drop for AsUser {
    fn drop(&mut self) {
        // Root as effective user gives back the thread's capabilities,
        // which the group, the groups and the sets then need.
        let back = thread::set_thread_res_uid(Uid::ROOT, Uid::ROOT, Uid::ROOT)
            .and_then(|()| thread::set_thread_res_gid(self.gid, self.gid, self.gid))
            .and_then(|()| thread::set_thread_groups(&self.groups))
            .and_then(|()| thread::set_capabilities(None, self.caps));
        if let Err(e) = back {
            // Cannot happen to a thread whose saved user is root. Were it
            // to, the next start (a program without a sandbox among them)
            // would run as whatever the thread was left: stop here.
            eprintln!("croupier: the bot spawner thread cannot become root again: {e}");
            std::process::abort();
        }
        // `PR_SET_DUMPABLE` takes 0 or 1 only.
        let dumpable = match self.dumpable {
            DumpableBehavior::Dumpable => DumpableBehavior::Dumpable,
            _ => DumpableBehavior::NotDumpable,
        };
        if let Err(e) = rustix::process::set_dumpable_behavior(dumpable) {
            tracing::warn!("cannot put back croupier's dumpable flag: {e}");
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
        // Read between switches: the flag is the process's, and another
        // test may be starting a sandbox meanwhile.
        let dumpable = || {
            let _turn = switching();
            rustix::process::dumpable_behavior().unwrap()
        };
        let dumpable_before = dumpable();
        let caps = thread::capabilities(None).unwrap();
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
        let kept = format!("{:016x}", (caps.permitted & KEPT).bits());
        assert_eq!(field(&during, "CapEff:"), [kept.as_str()]);
        assert_eq!(field(&during, "CapInh:"), [NONE]);
        assert_eq!(field(&during, "CapAmb:"), [NONE]);
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
        for ids in ["Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:"] {
            assert_eq!(field(&after, ids), field(&before, ids), "{ids}");
        }
        assert_eq!(dumpable(), dumpable_before);
    }
}
