//! One bot program's cgroup: made with its limits, entered before the
//! program starts, read for CPU time and memory, emptied and removed at
//! the end.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::Duration;

use super::layout::Layout;
use super::limits::CgroupLimits;
use super::procs::{kill_in, pids_in, wait_for};

/// The period of the CPU bandwidth limit, in microseconds.
const PERIOD_US: u64 = 100_000;

/// The cgroup of one bot program (a folder in each hierarchy it uses).
/// Dropping it kills what runs in it and removes it (in the background);
/// [`BotCgroup::remove`] does so and waits.
#[derive(Debug)]
pub struct BotCgroup {
    /// The folders made, in the order made.
    dirs: Vec<PathBuf>,
    /// `cpuacct.usage` (v1, nanoseconds) or `cpu.stat` (v2).
    usage: PathBuf,
    /// The memory controller's folder.
    memory: PathBuf,
    v2: bool,
    /// v1: how the spawner thread enters it.
    entry: Option<ThreadEntry>,
    /// Removed already.
    gone: bool,
}

/// How a thread moves into a bot's v1 cgroups and back (`0`, itself,
/// written to `tasks`): a process it forks meanwhile starts inside them.
#[derive(Clone, Debug)]
pub struct ThreadEntry {
    /// Per hierarchy: the bot's `tasks`, the hierarchy's mount and
    /// controller, and the `tasks` of croupier's own cgroup there (where
    /// the thread goes back if its own cannot be read).
    moves: Vec<Move>,
}

#[derive(Clone, Debug)]
struct Move {
    bot: PathBuf,
    mount: PathBuf,
    controller: &'static str,
    parent: PathBuf,
}

/// A thread inside a bot's cgroups; it moves back when dropped, to the
/// cgroups it was in.
#[derive(Debug)]
pub struct Entered {
    homes: Vec<PathBuf>,
}

/// What a thread writes to a `tasks` file to move itself: `0`, the
/// calling thread. The kernel then skips the global lock that moving a
/// process (or a thread named by its id) takes, and whose first writer
/// waits for an RCU grace period: about 10 ms per bot instead of 0.1 ms.
const ME: &str = "0";

impl ThreadEntry {
    /// Moves the calling thread into the bot's cgroups.
    pub fn enter(&self) -> std::io::Result<Entered> {
        // Where the thread is now, read before it moves: it goes back
        // there, not to croupier's first cgroup (a benchmark may have
        // moved the process into a capped one since).
        let now = super::layout::thread_cgroups().unwrap_or_default();
        let homes = self
            .moves
            .iter()
            .map(|m| {
                super::layout::thread_v1_dir(&now, &m.mount, m.controller)
                    .map_or_else(|| m.parent.join("tasks"), |d| d.join("tasks"))
            })
            .collect();
        let entered = Entered { homes };
        for m in &self.moves {
            std::fs::write(&m.bot, ME)?;
        }
        Ok(entered)
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        for home in &self.homes {
            if let Err(e) = std::fs::write(home, ME) {
                tracing::warn!(
                    "cannot move the spawner thread back to {}: {e}",
                    home.display()
                );
            }
        }
    }
}

fn mkdir(dir: PathBuf, made: &mut Vec<PathBuf>) -> std::io::Result<PathBuf> {
    std::fs::create_dir(&dir)?;
    made.push(dir.clone());
    Ok(dir)
}

fn set(dir: &Path, file: &str, value: impl ToString) -> std::io::Result<()> {
    let value = value.to_string();
    std::fs::write(dir.join(file), &value)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{file} = {value}: {e}")))
}

impl BotCgroup {
    /// A new cgroup `name` in `layout` with `limits`.
    pub(crate) fn create(
        layout: &Layout,
        name: &str,
        limits: &CgroupLimits,
    ) -> std::io::Result<BotCgroup> {
        let quota = ((limits.cpus.cores() * PERIOD_US as f64).round() as u64).max(1000);
        let mut g = BotCgroup {
            dirs: Vec::new(),
            usage: PathBuf::new(),
            memory: PathBuf::new(),
            v2: matches!(layout, Layout::V2 { .. }),
            entry: None,
            gone: false,
        };
        match layout {
            Layout::V1 {
                cpu,
                cpuacct,
                memory,
            } => {
                // A new cgroup's period is the default, PERIOD_US. v1 refuses
                // a quota above the parent's (croupier itself capped, as
                // in `bench server --cpu-quota`): a bot gets at most that.
                let c = mkdir(cpu.join(name), &mut g.dirs)?;
                set(&c, "cpu.cfs_quota_us", within_parent(quota, cpu))?;
                let a = if cpuacct == cpu {
                    c.clone()
                } else {
                    mkdir(cpuacct.join(name), &mut g.dirs)?
                };
                let m = mkdir(memory.join(name), &mut g.dirs)?;
                if let Some(bytes) = limits.memory {
                    set(&m, "memory.limit_in_bytes", bytes)?;
                    // Swap counts too, where the kernel accounts it.
                    let _ = set(&m, "memory.memsw.limit_in_bytes", bytes);
                }
                g.usage = a.join("cpuacct.usage");
                g.memory = m;
                let hierarchy = |bot: &Path, controller: &'static str, parent: &Path| Move {
                    bot: bot.join("tasks"),
                    mount: limits.root.join(controller),
                    controller,
                    parent: parent.to_path_buf(),
                };
                let mut moves = vec![hierarchy(&c, "cpu", cpu)];
                if cpuacct != cpu {
                    moves.push(hierarchy(&a, "cpuacct", cpuacct));
                }
                moves.push(hierarchy(&g.memory, "memory", memory));
                g.entry = Some(ThreadEntry { moves });
            }
            Layout::V2 { parent } => {
                let d = mkdir(parent.join(name), &mut g.dirs)?;
                set(&d, "cpu.max", format!("{quota} {PERIOD_US}"))?;
                if let Some(bytes) = limits.memory {
                    set(&d, "memory.max", bytes)?;
                    let _ = set(&d, "memory.swap.max", 0);
                }
                g.usage = d.join("cpu.stat");
                g.memory = d;
            }
        }
        Ok(g)
    }

    /// v1: how the thread that starts the program enters the cgroup
    /// (`None` on v2: see [`BotCgroup::wrap`]).
    pub fn thread_entry(&self) -> Option<ThreadEntry> {
        self.entry.clone()
    }

    /// Whether [`wrap`](Self::wrap) puts a `sh` (run as root) before a
    /// command.
    pub fn wraps(&self) -> bool {
        self.v2_dir().is_some()
    }

    fn v2_dir(&self) -> Option<&PathBuf> {
        self.dirs.first().filter(|_| self.v2)
    }

    /// The command that starts `argv` inside the cgroup: on v2 a `sh` that
    /// writes its pid into `cgroup.procs` and then becomes `argv`; on v1
    /// `argv` itself (the spawner thread enters the cgroup instead).
    pub fn wrap(&self, argv: Vec<String>) -> Vec<String> {
        let Some(dir) = self.v2_dir() else {
            return argv;
        };
        let mut v = vec![
            "/bin/sh".to_string(),
            "-c".to_string(),
            r#"echo $$ > "$0" && exec "$@""#.to_string(),
            dir.join("cgroup.procs").to_string_lossy().into_owned(),
        ];
        v.extend(argv);
        v
    }

    /// The CPU time its processes used so far (all of them, ended ones
    /// too).
    pub fn cpu_time(&self) -> Option<Duration> {
        let text = std::fs::read_to_string(&self.usage).ok()?;
        if self.v2 {
            let usec: u64 = text
                .lines()
                .find_map(|l| l.strip_prefix("usage_usec "))?
                .trim()
                .parse()
                .ok()?;
            Some(Duration::from_micros(usec))
        } else {
            Some(Duration::from_nanos(text.trim().parse().ok()?))
        }
    }

    /// The most memory its process tree held at once, bytes.
    pub fn memory_peak(&self) -> Option<u64> {
        let file = if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        read_number(&self.memory.join(file))
    }

    /// How many of its processes the kernel killed for going over its
    /// memory limit.
    pub fn oom_kills(&self) -> Option<u64> {
        let file = if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        let text = std::fs::read_to_string(self.memory.join(file)).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("oom_kill "))?
            .trim()
            .parse()
            .ok()
    }

    /// Moves process `pid` (and what it starts from now on) into it.
    pub fn add(&self, pid: u32) -> std::io::Result<()> {
        for d in &self.dirs {
            std::fs::write(d.join("cgroup.procs"), pid.to_string())?;
        }
        Ok(())
    }

    /// The processes in it now.
    pub fn processes(&self) -> Vec<i32> {
        self.dirs.first().map(|d| pids_in(d)).unwrap_or_default()
    }

    /// SIGKILL to every process in it.
    pub fn kill_all(&self) {
        for d in &self.dirs {
            kill_in(d);
        }
    }

    /// Tries to remove its folders once; true when all are gone.
    fn try_remove(&mut self) -> bool {
        self.dirs
            .retain(|d| std::fs::remove_dir(d).is_err() && d.exists());
        self.dirs.is_empty()
    }

    /// Kills what runs in it and removes it, waiting (up to two seconds,
    /// then it is left to a background thread) for its processes to end.
    pub async fn remove(mut self) {
        for _ in 0..400 {
            self.kill_all();
            if self.try_remove() {
                self.gone = true;
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Drop hands it over.
    }

    /// As [`remove`](Self::remove), blocking this thread.
    pub fn remove_now(mut self) {
        self.gone = wait_for(
            || {
                self.kill_all();
                self.try_remove()
            },
            Duration::from_secs(2),
            Duration::from_millis(5),
        );
    }
}

impl std::fmt::Display for BotCgroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.dirs.first() {
            Some(d) => write!(f, "{}", d.display()),
            None => write!(f, "(removed cgroup)"),
        }
    }
}

impl Drop for BotCgroup {
    fn drop(&mut self) {
        if self.gone {
            return;
        }
        self.kill_all();
        if !self.try_remove() {
            janitor(std::mem::take(&mut self.dirs));
        }
    }
}

/// A v1 CPU quota (µs per period) that the cgroup `parent` accepts for a
/// child: at most the parent's own quota, if it has one (`-1`: none).
fn within_parent(quota: u64, parent: &Path) -> u64 {
    std::fs::read_to_string(parent.join("cpu.cfs_quota_us"))
        .ok()
        .and_then(|q| q.trim().parse::<i64>().ok())
        .and_then(|q| u64::try_from(q).ok())
        .map_or(quota, |p| quota.min(p))
}

fn read_number(file: &Path) -> Option<u64> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// Removes the folders of ended bots' cgroups in the background, killing
/// what is left in them until they can go.
fn janitor(dirs: Vec<PathBuf>) {
    static JANITOR: OnceLock<Mutex<mpsc::Sender<Vec<PathBuf>>>> = OnceLock::new();
    if dirs.is_empty() {
        return;
    }
    let tx = JANITOR.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Vec<PathBuf>>();
        let started = std::thread::Builder::new()
            .name("croupier-cgroups".into())
            .spawn(move || {
                while let Ok(mut dirs) = rx.recv() {
                    let removed = wait_for(
                        || {
                            dirs.iter().for_each(|d| kill_in(d));
                            dirs.retain(|d| std::fs::remove_dir(d).is_err() && d.exists());
                            dirs.is_empty()
                        },
                        Duration::from_secs(10),
                        Duration::from_millis(10),
                    );
                    if !removed {
                        tracing::warn!("cannot remove the bot cgroups {dirs:?}");
                    }
                }
            });
        if let Err(e) = started {
            tracing::warn!("cannot start the cgroup janitor thread: {e}");
        }
        Mutex::new(tx)
    });
    if let Ok(tx) = tx.lock() {
        let _ = tx.send(dirs);
    }
}

#[cfg(test)]
mod tests {
    use super::within_parent;

    #[test]
    fn a_bot_quota_is_held_to_its_parents() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let quota = dir.path().join("cpu.cfs_quota_us");
        // No file, or no quota on the parent: the bot's own.
        assert_eq!(within_parent(100_000, dir.path()), 100_000);
        std::fs::write(&quota, "-1\n").expect("written");
        assert_eq!(within_parent(100_000, dir.path()), 100_000);
        // A parent capped below it: the parent's.
        std::fs::write(&quota, "20000\n").expect("written");
        assert_eq!(within_parent(100_000, dir.path()), 20_000);
        assert_eq!(within_parent(10_000, dir.path()), 10_000);
    }
}
