//! No bot outlives its manager.
//!
//! * Every bot program is started from one dedicated thread that lives as
//!   long as the process, under `setpriv --pdeathsig KILL` (util-linux):
//!   `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits,
//!   so bots started from short-lived threads would be killed too early.
//!   If this process is killed outright (SIGKILL), the kernel kills each bot.
//! * Every live bot is in a registry (its process group, and how its
//!   program sits in it: [`Shape`]), so that [`stop_all`] can end them all
//!   when the manager is interrupted: SIGTERM to the programs, a grace
//!   period, SIGKILL.
//! * With [`adopt_orphans`] this process becomes a child subreaper: a bot's
//!   daemonised (`setsid`) descendants re-parent to it instead of to PID 1,
//!   and are killed and reaped when their bot ends or when [`stop_all`] runs.
//!   Each bot's environment carries `CROUPIER_BOT=<manager pid>.<serial>`,
//!   so that an orphan is only killed with the bot it came from (or when its
//!   marker is gone, at the next bot's end). A child outside every bot's
//!   process group and without a marker is this process's own (a sandbox
//!   check, a tool), not an orphan: it is left to the code that waits for it.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use super::as_user::AsUser;
use super::cgroup::ThreadEntry;
use super::which::find_program;
use super::{mount_view, procstat};
use crate::transport::error::TransportError;

/// The environment variable that names a bot's manager and serial number.
pub const MARKER: &str = "CROUPIER_BOT";

/// Where a registered process's program is, for its SIGTERM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// The program itself (or what `exec`s it), in the group it leads.
    Program,
    /// bubblewrap, whose first process (the sandbox's PID 1) leads the
    /// program's group: a SIGTERM to bubblewrap's group would end the
    /// sandbox at once, so the program's group gets it (see `inside`).
    OwnSandbox,
    /// bubblewrap around a holder that starts each round's program in a
    /// group of its own (see `held`): those groups get the SIGTERM, and
    /// the holder goes with its sandbox.
    HeldSandbox,
}

/// Live bots: serial number → process id (also its process group id) and
/// shape.
static REGISTRY: Mutex<Option<HashMap<u64, (Pid, Shape)>>> = Mutex::new(None);
static SERIAL: AtomicU64 = AtomicU64::new(1);
static ADOPTING: AtomicBool = AtomicBool::new(false);
/// Set by [`stop_all`]: no bot starts any more.
static STOPPING: AtomicBool = AtomicBool::new(false);

type Job = Box<dyn FnOnce() + Send>;

fn registry() -> MutexGuard<'static, Option<HashMap<u64, (Pid, Shape)>>> {
    // A panic elsewhere while holding the lock leaves a usable map.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// The thread that starts every bot; it never exits before the process.
fn spawner() -> &'static Mutex<mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("croupier-spawner".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job();
                }
            });
        if let Err(e) = started {
            eprintln!("warning: cannot start the bot spawner thread: {e}");
        }
        Mutex::new(tx)
    })
}

/// `setpriv` if it can set a parent-death signal, checked once.
fn setpriv() -> Option<&'static PathBuf> {
    static SETPRIV: OnceLock<Option<PathBuf>> = OnceLock::new();
    SETPRIV
        .get_or_init(|| {
            let found = find_program("setpriv").filter(|p| {
                std::process::Command::new(p)
                    .args(["--pdeathsig", "KILL", "--", "true"])
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            });
            if found.is_none() {
                eprintln!(
                    "warning: setpriv (util-linux) with --pdeathsig not found: bot programs \
                     will outlive croupier if croupier itself is killed with SIGKILL"
                );
            }
            found
        })
        .as_ref()
}

/// `argv` prefixed so that the kernel kills the program when its parent
/// thread (the spawner) dies: `setpriv --pdeathsig KILL -- argv`.
pub fn with_death_signal(argv: &[String]) -> Vec<String> {
    match setpriv() {
        Some(p) => {
            let mut v = vec![
                p.to_string_lossy().into_owned(),
                "--pdeathsig".into(),
                "KILL".into(),
                "--".into(),
            ];
            v.extend_from_slice(argv);
            v
        }
        None => argv.to_vec(),
    }
}

/// Starts `cmd` (in its own process group) on the spawner thread, registers
/// it, and returns it with its serial number. With `entry`, the spawner
/// thread forks from inside the bot's cgroup (and moves back), so that the
/// program starts there; with `view`, it starts it from those mounts (and
/// goes back: [`mount_view`]); with `user`, it starts it as that user (and
/// becomes root again: [`AsUser`]). `handed`, descriptors closed on `exec`, are left
/// open for this start alone (the sandbox's filter and info pipe, which
/// bubblewrap uses by their numbers), then closed here. `shape` says where
/// its program will be, for [`stop_all`].
pub(super) fn spawn(
    mut cmd: Command,
    entry: Option<ThreadEntry>,
    view: Option<std::sync::Arc<mount_view::View>>,
    user: Option<u32>,
    handed: Vec<OwnedFd>,
    shape: Shape,
) -> Result<(Child, u64), TransportError> {
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| TransportError::Io("bot programs need a Tokio runtime".into()))?;
    let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
    cmd.env(MARKER, format!("{}.{serial}", std::process::id()))
        .process_group(0);
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        // Spawn and register under the lock, so that a sweep never takes a
        // fresh bot for an orphan.
        let mut reg = registry();
        let _rt = handle.enter();
        let result = if STOPPING.load(Ordering::SeqCst) {
            Err(std::io::Error::other("croupier is stopping"))
        } else {
            let entered = entry.map(|e| e.enter());
            let opened = handed.iter().try_for_each(inheritable);
            let started = match (&entered, opened) {
                (Some(Err(e)), _) => Err(std::io::Error::other(format!(
                    "cannot enter the bot's cgroup: {e}"
                ))),
                (_, Err(e)) => Err(e),
                _ => spawn_from(&mut cmd, view.as_deref(), user),
            };
            drop(entered);
            // Any other start that ran meanwhile on another thread got a
            // copy of them too: a pipe's reading end, with a filter in it
            // that is no secret, and the writing end of an info pipe. Bots
            // start on this thread only; what starts elsewhere (a sandbox
            // check's probe, a tool) runs no bot code. Were a copy of the
            // info pipe written to before bubblewrap writes, this bot's
            // first process would stay unknown: its SIGTERM would go to
            // bubblewrap (no grace period), and a forged pid is refused
            // (see `inside`).
            drop(handed);
            started
        };
        if let Ok(child) = &result {
            if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
                reg.get_or_insert_with(HashMap::new)
                    .insert(serial, (Pid::from_raw(pid), shape));
            }
        }
        drop(reg);
        let _ = tx.send(result);
    });
    let sent = spawner()
        .lock()
        .map_err(|_| TransportError::Io("the bot spawner is gone".into()))?
        .send(job);
    if sent.is_err() {
        return Err(TransportError::Io("the bot spawner is gone".into()));
    }
    let child = rx
        .recv()
        .map_err(|_| TransportError::Io("the bot spawner is gone".into()))?
        .map_err(|e| TransportError::Io(e.to_string()))?;
    Ok((child, serial))
}

/// `cmd` started from `view`'s mounts if given (the host's if the thread
/// cannot enter them), as `user` if given.
fn spawn_from(
    cmd: &mut Command,
    view: Option<&mount_view::View>,
    user: Option<u32>,
) -> std::io::Result<Child> {
    // The view first, as root (entering a mount namespace takes
    // `CAP_SYS_CHROOT`, which a thread switched to another user lacks);
    // left after the thread is root again. One that cannot be entered is
    // given up, with a warning, and this start uses the host's mounts.
    let entered = view.and_then(|v| v.enter().ok());
    let started = spawn_as(cmd, user);
    drop(entered);
    started
}

/// `cmd` started, as `user` if given.
fn spawn_as(cmd: &mut Command, user: Option<u32>) -> std::io::Result<Child> {
    let switched = match user {
        Some(id) => Some(AsUser::enter(id).map_err(|e| {
            std::io::Error::other(format!("cannot switch to user {id} to start it: {e}"))
        })?),
        None => None,
    };
    let started = cmd.spawn();
    drop(switched);
    started
}

/// Marks every descriptor this process was left open by its own parent
/// (above stderr: a shell's, a CI runner's, a supervisor's) close-on-exec,
/// so that none of them reaches a bot program: bubblewrap passes every
/// open descriptor on into its sandbox, and an unsandboxed program gets
/// them too. What Rust opens is close-on-exec already, and descriptors
/// handed to a start are opened for it alone ([`spawn`]). For the start
/// of `main`, before any other thread runs: a thread that hands a
/// descriptor to a child meanwhile would see it closed.
pub fn seal_inherited_descriptors() {
    close_fds::set_fds_cloexec(3, &[]);
}

/// Leaves `fd` open across `exec`, for the one start it is handed to.
pub(super) fn inheritable(fd: &OwnedFd) -> std::io::Result<()> {
    nix::fcntl::fcntl(
        fd,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
    )
    .map(|_| ())
    .map_err(std::io::Error::from)
}

/// Takes bot `serial` out of the registry (it has ended or been reaped),
/// then kills the orphans it left behind.
pub fn forget(serial: u64) {
    let was_live = registry()
        .as_mut()
        .is_some_and(|map| map.remove(&serial).is_some());
    if was_live && ADOPTING.load(Ordering::Relaxed) {
        sweep(Some(serial));
    }
}

/// Makes this process a child subreaper, so that processes a bot detaches
/// (double fork, `setsid`) re-parent here and are ended with their bot.
/// For the `croupier` binary. Its other children (sandbox checks, tools)
/// stay in its process group without a bot's marker and are left alone.
pub fn adopt_orphans() -> bool {
    match nix::sys::prctl::set_child_subreaper(true) {
        Ok(()) => {
            ADOPTING.store(true, Ordering::Relaxed);
            true
        }
        Err(_) => false,
    }
}

/// Ends every live bot: SIGTERM to each program's process group (in a
/// sandbox too: [`programs`]), up to `grace` for them to exit, SIGKILL to
/// each bot's group (which ends a sandbox whole), and (with
/// [`adopt_orphans`]) the orphans they left are killed and reaped. No bot
/// starts after this. Returns how many bots were live.
pub(super) fn stop_all(grace: Duration) -> usize {
    let live: Vec<(Pid, Shape)> = {
        let reg = registry();
        // Under the lock: a spawn either registered its bot already or will
        // be refused.
        STOPPING.store(true, Ordering::SeqCst);
        reg.as_ref()
            .map(|m| m.values().copied().collect())
            .unwrap_or_default()
    };
    let bots: Vec<Pid> = live.iter().map(|&(pid, _)| pid).collect();
    let asked = programs(&live);
    for &pg in &asked {
        let _ = killpg(pg, Signal::SIGTERM);
    }
    let until = Instant::now() + grace;
    while Instant::now() < until && asked.iter().any(|&p| running(p)) {
        std::thread::sleep(Duration::from_millis(10));
    }
    for &pg in &bots {
        let _ = killpg(pg, Signal::SIGKILL);
    }
    if ADOPTING.load(Ordering::Relaxed) {
        // Orphans appear once their parents have died.
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until && bots.iter().any(|&p| running(p)) {
            std::thread::sleep(Duration::from_millis(5));
        }
        for _ in 0..5 {
            if sweep(None) == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    bots.len()
}

/// The most processes [`programs`] visits below one held sandbox's holder
/// (a sandbox's own limit on processes is far lower).
const WALK: usize = 4096;

/// The process groups of the live bots' programs, to ask them to stop:
/// a bot's own group, or, in a sandbox, the groups inside it found through
/// `/proc` (parents and groups). A sandbox of its own whose first process
/// leads no group yet (it is being set up), or has none left, is asked
/// through bubblewrap's group, which ends it at once, as does a held
/// sandbox's SIGKILL once the grace period is over. A held round's
/// program forked but not yet in a group of its own gets no SIGTERM, only
/// that SIGKILL.
///
/// Unlike bubblewrap (this process's unreaped child), the processes found
/// below it are not pinned: one that ended since `/proc` was read could
/// have had its pid reused (after the whole pid range wrapped around), the
/// same bet every signal to a group by number makes.
fn programs(live: &[(Pid, Shape)]) -> Vec<Pid> {
    let sandboxed = live.iter().any(|&(_, shape)| shape != Shape::Program);
    let table = if sandboxed {
        procstat::table()
    } else {
        Vec::new()
    };
    let children = |of: i32| {
        table
            .iter()
            .filter(move |p| p.parent == of)
            .map(|p| (p.pid, p.group))
    };
    let mut groups = Vec::new();
    for &(bwrap, shape) in live {
        match shape {
            Shape::Program => groups.push(bwrap),
            Shape::OwnSandbox => {
                let first = children(bwrap.as_raw()).find(|&(pid, group)| pid == group);
                groups.push(first.map_or(bwrap, |(pid, _)| Pid::from_raw(pid)));
            }
            Shape::HeldSandbox => {
                // bubblewrap → the sandbox's PID 1 → the holder (in PID 1's
                // group: a SIGTERM would end it and the sandbox at once) →
                // each round's program, leading a group of its own.
                let mut below: Vec<i32> = children(bwrap.as_raw())
                    .flat_map(|(first, _)| children(first))
                    .map(|(holder, _)| holder)
                    .collect();
                // `/proc` is not read at one instant: a loop of parents
                // (pids reused meanwhile) must not make the walk endless.
                let mut walked = 0;
                while let Some(pid) = below.pop().filter(|_| walked < WALK) {
                    walked += 1;
                    for (child, group) in children(pid) {
                        if child == group {
                            groups.push(Pid::from_raw(child));
                        }
                        below.push(child);
                    }
                }
            }
        }
    }
    groups
}

/// Whether `pid` exists and is not a zombie.
pub(super) fn running(pid: Pid) -> bool {
    procstat::read(pid.as_raw())
        .as_deref()
        .and_then(procstat::state)
        .is_some_and(|state| state != "Z")
}

/// The bot serial in `pid`'s marker, if it names this manager.
fn marker_of(pid: i32) -> Option<u64> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let want = format!("{MARKER}={}.", std::process::id());
    env.split(|b| *b == 0).find_map(|var| {
        std::str::from_utf8(var)
            .ok()?
            .strip_prefix(&want)?
            .parse()
            .ok()
    })
}

/// Kills and reaps this process's children that are not registered bots
/// but orphans of bots. One that still carries the marker of another live
/// bot is left to that bot; `ending` is the bot whose end this sweep
/// follows (`None`: every orphan goes). Returns how many were found.
///
/// A child this process started itself for another job (a sandbox check,
/// a tool) stays in this process's group and has no marker: it is not an
/// orphan, and is neither killed nor reaped here, since reaping it would
/// take its exit status from the code that waits for it.
fn sweep(ending: Option<u64>) -> usize {
    let reg = registry();
    let live: HashMap<i32, u64> = reg
        .as_ref()
        .map(|m| m.iter().map(|(s, (p, _))| (p.as_raw(), *s)).collect())
        .unwrap_or_default();
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let my_group = nix::unistd::getpgrp().as_raw();
    let orphans: Vec<i32> = procstat::table()
        .into_iter()
        .filter(|p| p.parent == me && !live.contains_key(&p.pid))
        .filter(|p| p.group != my_group || marker_of(p.pid).is_some())
        .map(|p| p.pid)
        .filter(|&pid| match (ending, marker_of(pid)) {
            (Some(_), Some(owner)) => !live.values().any(|&s| s == owner),
            _ => true,
        })
        .collect();
    drop(reg);
    for &pid in &orphans {
        let pid = Pid::from_raw(pid);
        // It may lead a group of its own (setsid): that goes too.
        let _ = killpg(pid, Signal::SIGKILL);
        let _ = kill(pid, Signal::SIGKILL);
    }
    for &pid in &orphans {
        reap(Pid::from_raw(pid));
    }
    orphans.len()
}

/// Waits briefly for a killed orphan; a later sweep reaps one that lingers.
fn reap(pid: Pid) {
    let until = Instant::now() + Duration::from_millis(200);
    while Instant::now() < until {
        match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(nix::sys::wait::WaitStatus::StillAlive) => {
                std::thread::sleep(Duration::from_millis(2))
            }
            _ => return,
        }
    }
}
