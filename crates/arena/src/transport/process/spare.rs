//! Spare sandboxes (issue 53): sandboxes set up ahead of the programs
//! that will run in them, so that a sandboxed program's first start costs
//! what a round's start in a held sandbox costs (a `fork` and an `exec`
//! inside it) instead of a new sandbox's namespaces and mounts.
//!
//! A spare is a held sandbox ([`super::held`]) set up for no program yet:
//! the sandbox every program gets under the same limits and cgroup, but
//! without any bot's folders, working in `/tmp`. When a program's first
//! start ([`BotProcess::spawn_ready`](super::BotProcess::spawn_ready), or
//! the first start in a held sandbox,
//! [`BotProcess::spawn_held`](super::BotProcess::spawn_held)) finds one
//! ready for its limits, the program's folders are bound into it
//! read-only ([`super::mount_in`]: croupier must be root for that; a
//! program that needs no folder of its own, such as `python3 -c …` or a
//! system command, needs nothing bound), its holder moves to the
//! program's working folder, and the program starts there. From then on
//! it is that program's held sandbox, exactly as if it had been set up for
//! it. Each start that looks for a spare, found or not, has another set
//! up in the background, so that at most [`KEEP`] are ready or being set
//! up for each kind of sandbox; the first start of a kind finds none.
//!
//! Only programs started with
//! [`ProcessLimits::spare_sandboxes`](super::ProcessLimits::spare_sandboxes)
//! use them (a server's hosted bots; not a one-off match, where a spare
//! would be set up for nothing). Spares of at most [`KINDS`] kinds are
//! kept (the kind used longest ago goes first), and a spare unused for
//! [`IDLE`] is let go at the next start that looks for one, of any kind;
//! the oldest ready spare is taken first. A spare is a live bot's
//! sandbox as any other: it ends with croupier. The bookkeeping of these
//! rules is [`super::spare_pool`]'s, tested apart from any sandbox.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::held::{Held, Patience};
use super::limits::ProcessLimits;
use super::sandbox::{bot_folders, is_root, start_as, working_folder, Sandbox, SCRATCH_FOLDER};
use super::spare_pool::Pool;
use super::{holder, mount_in};
use crate::transport::error::TransportError;

/// Spares ready or being set up, for each kind of sandbox.
pub const KEEP: usize = 2;

/// Kinds of sandbox (limits and cgroup) spares are kept for.
pub const KINDS: usize = 4;

/// How long a spare may wait for a program.
pub const IDLE: Duration = Duration::from_secs(600);

/// The command a spare is set up for: one that needs no folder of its own.
fn no_program() -> Vec<String> {
    vec!["/bin/sh".to_string()]
}

/// Every spare ready or being set up, by kind.
fn pool() -> MutexGuard<'static, Pool<Held>> {
    static POOL: OnceLock<Mutex<Pool<Held>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(Pool::new(KEEP, KINDS, IDLE)))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Set once binding a program's folders into a spare has failed for a
/// reason not the program's own (a kernel or a container that refuses
/// it): from then on only programs without folders of their own take
/// spares.
static BIND_FAILED: AtomicBool = AtomicBool::new(false);

/// A spare sandbox made `argv`'s (its folders bound, its holder in its
/// working folder; the caller names what it now holds, `Held::what`), or
/// `None` if none is ready for `limits` (another is then set up for the
/// next start, as after a spare is taken) or `argv` cannot start in one
/// (a folder with mounts inside it, or one to bind where croupier is not
/// root or binding failed before: no spare is set up for it): the caller
/// then sets a sandbox up as before.
pub(super) async fn take(argv: &[String], limits: &ProcessLimits) -> Option<Held> {
    if !limits.spare_sandboxes || matches!(limits.sandbox, Sandbox::Off) {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    let folders = bot_folders(argv, &cwd);
    let bindable = folders.is_empty()
        || is_root() && start_as().is_some() && !BIND_FAILED.load(Ordering::Relaxed) && {
            let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
            folders.iter().all(|f| mount_in::bindable(f, &info))
        };
    if !bindable {
        return None;
    }
    let kind = kind_of(limits);
    let (found, gone) = look(&kind, limits);
    // Sandboxes are killed outside the lock.
    drop(gone);
    let mut held = found?;
    if !folders.is_empty() {
        let Some(fd) = held.first_process() else {
            // Not named yet: back for a program without folders.
            put_back(&kind, held);
            return None;
        };
        let (f, to) = (folders.clone(), std::sync::Arc::clone(&fd));
        let bound = tokio::task::spawn_blocking(move || mount_in::bind_into(&to, &f))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        if let Err(e) = bound {
            // A folder this program's sandbox could not reach is its own
            // matter (its own sandbox's start says why); anything else is
            // the kernel's or the container's refusal, for every program.
            let its_own = matches!(
                e.raw_os_error(),
                Some(nix::libc::EACCES | nix::libc::ENOENT | nix::libc::ENOTDIR | nix::libc::ELOOP)
            );
            if its_own {
                tracing::debug!("cannot bind {folders:?} into a spare sandbox: {e}");
            } else if !BIND_FAILED.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "cannot bind a program's folders into a spare sandbox ({e}): \
                     programs with folders of their own get sandboxes of their own"
                );
            }
            return None;
        }
    }
    let dir = working_folder(&folders, &cwd);
    if !folders.is_empty() || dir != Path::new(SCRATCH_FOLDER) {
        if let Err(e) = held.enter(&dir, Patience::Ready).await {
            tracing::debug!("a spare sandbox is given up: {e}");
            return None;
        }
    }
    Some(held)
}

/// The oldest spare of `kind` ready (if any), with the setups that keep
/// [`KEEP`] of it ready or being set up begun, and what is let go (idle or
/// dead spares of every kind, kinds past [`KINDS`]), to be dropped by the
/// caller (not under the pool's lock). The rules are
/// [`Pool::look`](super::spare_pool::Pool::look)'s.
fn look(kind: &str, limits: &ProcessLimits) -> (Option<Held>, Vec<Held>) {
    let look = pool().look(kind, Instant::now(), Held::alive);
    for _ in 0..look.make {
        tokio::spawn(make(kind.to_string(), look.generation, limits.clone()));
    }
    (look.found, look.gone)
}

/// The kind of sandbox `limits` give a program before its folders: its
/// limits and cgroup (the holder is the same for every sandbox of a
/// process).
fn kind_of(limits: &ProcessLimits) -> String {
    format!("{:?} {:?}", limits.sandbox, limits.cgroup)
}

/// A spare not used after all goes back to its kind's, unless that has
/// enough.
fn put_back(kind: &str, held: Held) {
    let extra = pool().put_back(kind, held, Instant::now());
    drop(extra);
}

/// Counts a setup of a kind's keeping `generation` done when it ends, even
/// if its task is dropped (a runtime shutting down).
struct Making {
    kind: String,
    generation: u64,
}

impl Drop for Making {
    fn drop(&mut self) {
        pool().done(&self.kind, self.generation);
    }
}

/// Sets up a spare of `kind` and keeps it once it is ready (its holder
/// has entered its first folder), unless its kind was forgotten meanwhile.
async fn make(kind: String, generation: u64, limits: ProcessLimits) {
    let making = Making {
        kind: kind.clone(),
        generation,
    };
    // Set up on a thread of its own: a start waits for the spawner thread,
    // and a runtime thread blocked meanwhile would hold up the start that
    // took the last spare.
    let what = kind.clone();
    let kind_here = holder::Kind::here();
    let started =
        tokio::task::spawn_blocking(move || Held::set_up(&no_program(), &limits, what, kind_here))
            .await
            .unwrap_or_else(|e| Err(TransportError::Io(format!("a spare's setup failed: {e}"))));
    let made = match started {
        Ok(mut held) => match held.enter(Path::new(SCRATCH_FOLDER), Patience::Setup).await {
            Ok(()) => Some(held),
            Err(e) => {
                tracing::debug!("a spare sandbox did not get ready: {e}");
                None
            }
        },
        Err(e) => {
            tracing::debug!("cannot set up a spare sandbox: {e}");
            None
        }
    };
    let extra = made.and_then(|held| pool().made(&kind, generation, held, Instant::now()));
    drop(making);
    drop(extra);
}

/// The host pids of the first processes of the spares ready for
/// `limits` (for tests).
#[cfg(test)]
pub(super) fn ready(limits: &ProcessLimits) -> Vec<i32> {
    pool()
        .ready_mut(&kind_of(limits))
        .filter_map(Held::first_pid)
        .collect()
}
