//! The sandbox of a bot program (`--sandbox strict`), built from two
//! well-kept tools driven as processes:
//!
//! * bubblewrap (`bwrap`): new user, PID, network, IPC, UTS and cgroup
//!   namespaces; the program sees a read-only system (`/usr`, `/bin`, `/lib*`,
//!   the few files of `/etc` that dynamic linking and Java need), its own
//!   folders read-only, a small private `/tmp`, its own `/proc` and a minimal
//!   `/dev`, and nothing else of the host; it runs as uid 65534 without
//!   capabilities, in a session of its own, with a cleared environment, may
//!   not make further user namespaces, and dies with its parent
//!   (`--die-with-parent`): since it is PID 1's child in its own PID
//!   namespace, the kernel ends everything it started when it ends; it
//!   also installs a system-call filter that keeps kernel keys out of
//!   reach ([`super::seccomp`]);
//! * limits of memory (data segment), CPU time, processes, open files and
//!   file size: set on the sandbox's first process from outside before it
//!   may start the program ([`super::inside`], [`super::limiter`]), or,
//!   where that cannot be done, by `prlimit` (util-linux) inside.
//!
//! When croupier runs as root, bubblewrap itself is started as uid 65534 on
//! the host too, because the kernel does not apply the process limit to
//! root: the bot's folders must then be readable by all. The spawner
//! thread switches its own user for the start ([`super::as_user`]), so
//! that the start stays a `posix_spawn`: `Command::uid` makes the standard
//! library `fork` croupier's whole address space instead, and a parent
//! with a 200 MB heap that it keeps writing then took 81 ms a start
//! (copy-on-write faults) against 9 ms through `setpriv` (issue 53).
//! Commands run elsewhere (the sandbox's check and probe, the `sh` that
//! enters a v2 cgroup) switch through `setpriv --reuid` ([`wrap_as`]).

use std::path::{Path, PathBuf};

use super::which::find_program;
use crate::transport::error::TransportError;

/// How bot programs are confined.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Sandbox {
    /// Run as the organiser, with the organiser's rights.
    #[default]
    Off,
    /// Run in a bubblewrap sandbox with these limits.
    Strict(SandboxLimits),
}

/// Resource limits of a sandboxed bot (each process of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxLimits {
    /// Data segment of each process (heap and other private writable
    /// memory), bytes.
    pub memory: u64,
    /// CPU time of each process, seconds.
    pub cpu_seconds: u64,
    /// Processes and threads in all.
    pub processes: u64,
    /// Open files of each process.
    pub open_files: u64,
    /// Largest file it may write, bytes.
    pub file_size: u64,
    /// Size of its private `/tmp`, and of its `/dev/shm`, bytes (each).
    pub tmp_size: u64,
}

/// One of a sandbox's per-process limits, under each name it goes by.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limit {
    /// The kernel's resource number (`RLIMIT_…`).
    pub resource: u32,
    /// `prlimit`'s option.
    pub option: &'static str,
    /// Its line in `/proc/PID/limits`.
    pub shown_as: &'static str,
    pub value: u64,
}

impl SandboxLimits {
    /// The limits set on each process of the sandbox (not `tmp_size`),
    /// soft and hard alike.
    pub(super) fn each(&self) -> [Limit; 5] {
        use nix::libc::{RLIMIT_CPU, RLIMIT_DATA, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_NPROC};
        let limit = |resource, option, shown_as, value| Limit {
            resource,
            option,
            shown_as,
            value,
        };
        [
            limit(RLIMIT_DATA, "--data", "Max data size", self.memory),
            limit(RLIMIT_CPU, "--cpu", "Max cpu time", self.cpu_seconds),
            limit(RLIMIT_NPROC, "--nproc", "Max processes", self.processes),
            limit(RLIMIT_NOFILE, "--nofile", "Max open files", self.open_files),
            limit(RLIMIT_FSIZE, "--fsize", "Max file size", self.file_size),
        ]
    }
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            memory: 512 << 20,
            cpu_seconds: 600,
            processes: 64,
            open_files: 256,
            file_size: 16 << 20,
            tmp_size: 64 << 20,
        }
    }
}

/// User and group id of the bot inside the sandbox (and, when croupier is
/// root, outside): `nobody`.
pub(super) const NOBODY: &str = "65534";
/// Where a held sandbox sees the folder of its rounds' FIFOs (the holder
/// shell names it too).
pub(super) const HELD_FOLDER: &str = "/run/croupier-held";

/// [`NOBODY`] as a number.
pub(super) const NOBODY_ID: u32 = 65534;

/// Folders of the system that every sandbox sees read-only.
const SYSTEM: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// Files of `/etc` that programs need to start (the dynamic linker's cache,
/// `alternatives` for `java`, the time zone).
const ETC: [&str; 5] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
];

/// A tool the sandbox needs, or why it is missing.
fn tool(name: &str, package: &str) -> Result<PathBuf, TransportError> {
    find_program(name).ok_or_else(|| {
        TransportError::Io(format!(
            "{name} is not installed (Debian package {package})"
        ))
    })
}

pub(super) use super::as_user::is_root;

/// Whether `p` lies inside one of the system folders (already visible).
fn in_system(p: &Path) -> bool {
    SYSTEM
        .iter()
        .chain(["/etc", "/proc", "/dev"].iter())
        .any(|s| p.starts_with(s))
}

/// The folders of the host the program needs: the one holding the program
/// when it is given as a path (a bare name such as `python3` is looked up in
/// the sandbox's own `PATH`, the system's) and, for each argument that names
/// an existing file or folder, that folder (`python3 bots/x.py` sees
/// `bots/`); a file directly in a folder everyone shares ([`shared`]:
/// `/tmp/bot`) is bound alone, and such a folder itself never.
pub fn bot_folders(argv: &[String], cwd: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let program = argv
        .first()
        .filter(|p| p.contains('/'))
        .and_then(|p| find_program(p));
    let args = argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(PathBuf::from);
    for p in program.into_iter().chain(args) {
        let abs = if p.is_absolute() { p } else { cwd.join(p) };
        let (folder, file) = match std::fs::metadata(&abs) {
            Ok(m) if m.is_dir() => (abs, None),
            Ok(_) => match abs.parent() {
                Some(parent) => (parent.to_path_buf(), Some(abs.clone())),
                None => continue,
            },
            Err(_) => continue,
        };
        // Never the whole host, nor what is already there; of a folder
        // everyone shares, only the file named. Where the folder really
        // is decides (`/tmp/x/..`, a link to `/tmp`); it is bound by the
        // name given, which the command uses.
        let real = std::fs::canonicalize(&folder).unwrap_or_else(|_| folder.clone());
        let bound = match (shared(&real), file) {
            (false, _) => folder,
            (true, Some(file)) => file,
            (true, None) => continue,
        };
        if real.parent().is_none() || in_system(&real) || found.contains(&bound) {
            continue;
        }
        found.push(bound);
    }
    found
}

/// Whether `folder` (a real path) is one that every user and program of
/// the host writes in (`/tmp`, `/var/tmp`, the temporary folder croupier
/// was given, or where they really are): a
/// program or file directly in it is bound alone, since binding the folder
/// would show the bot everything else there (other bots' programs, the
/// folders of held sandboxes) and put it over the bot's private `/tmp`.
fn shared(folder: &Path) -> bool {
    // Found once (a start of a held sandbox's round asks again).
    static SHARED: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    SHARED
        .get_or_init(|| {
            let named = [
                PathBuf::from("/tmp"),
                PathBuf::from("/var/tmp"),
                std::env::temp_dir(),
            ];
            let real = named.iter().filter_map(|p| std::fs::canonicalize(p).ok());
            let mut all: Vec<PathBuf> = real.collect();
            all.extend(named);
            all
        })
        .iter()
        .any(|s| folder == s)
}

/// Where a sandboxed program works when croupier's working folder is not
/// in its sandbox (and where a spare sandbox waits for its program).
pub(super) const SCRATCH_FOLDER: &str = "/tmp";

/// Where a program whose folders are `folders` works in its sandbox:
/// croupier's working folder `cwd` when it exists there (it does when it
/// holds one of the bot's folders), so that relative paths keep working,
/// else [`SCRATCH_FOLDER`].
pub(super) fn working_folder(folders: &[PathBuf], cwd: &Path) -> PathBuf {
    if folders.iter().any(|f| f.starts_with(cwd)) {
        cwd.to_path_buf()
    } else {
        PathBuf::from(SCRATCH_FOLDER)
    }
}

/// Descriptors bubblewrap is handed, by number (the start must leave them
/// open across `exec`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Handed {
    /// The system-call filter it reads ([`super::seccomp`]).
    pub filter: Option<i32>,
    /// Where it writes the pid of the sandbox's first process
    /// ([`super::inside`]).
    pub info: Option<i32>,
    /// The gate the sandbox's first process waits at, once set up, until
    /// croupier has set its limits ([`super::inside`]); without it,
    /// `prlimit` sets them inside.
    pub gate: Option<i32>,
    /// The first process's own writer of that gate ([`super::inside`]).
    pub gate_writer: Option<i32>,
}

/// The command that runs `run` in the sandbox `argv` would get (the same
/// folders, user and limits): a probe of what `argv` will find there, or
/// the holder of a sandbox held for a match, which also sees the folder
/// `held` of its rounds' FIFOs at [`HELD_FOLDER`], read-only. bubblewrap
/// uses the descriptors `handed`.
pub(super) fn wrap_as(
    argv: &[String],
    run: &[String],
    limits: &SandboxLimits,
    held: Option<&Path>,
    handed: &Handed,
) -> Result<Vec<String>, TransportError> {
    let bwrap = bubblewrap(argv, run, limits, held, handed)?;
    as_sandbox_user(bwrap)
}

/// `cmd` run as the sandbox's user: as it is, or, when croupier is root,
/// after `setpriv` switches to `nobody`. Bot programs are started from a
/// thread that switches itself instead ([`super::as_user`]), but for the
/// `sh` that puts them in a v2 cgroup (which must run as root).
pub(super) fn as_sandbox_user(cmd: Vec<String>) -> Result<Vec<String>, TransportError> {
    if !is_root() {
        return Ok(cmd);
    }
    let setpriv = tool("setpriv", "util-linux")?;
    let mut v = vec![
        setpriv.to_string_lossy().into_owned(),
        format!("--reuid={NOBODY}"),
        format!("--regid={NOBODY}"),
        "--clear-groups".to_string(),
        "--".to_string(),
    ];
    v.extend(cmd);
    Ok(v)
}

/// The user a bot program's start switches to itself ([`super::as_user`])
/// instead of through `setpriv`: `nobody` when croupier is root (as its
/// real user too: the thread comes back to root whole).
pub(super) fn start_as() -> Option<u32> {
    // Read once, as `is_root`.
    static REAL_ROOT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let real_root = *REAL_ROOT.get_or_init(|| nix::unistd::getuid().is_root());
    (is_root() && real_root).then_some(NOBODY_ID)
}

/// [`wrap_as`]'s bubblewrap command, run as whoever starts it.
pub(super) fn bubblewrap(
    argv: &[String],
    run: &[String],
    limits: &SandboxLimits,
    held: Option<&Path>,
    handed: &Handed,
) -> Result<Vec<String>, TransportError> {
    let bwrap = tool("bwrap", "bubblewrap")?;
    let cwd = std::env::current_dir().map_err(|e| TransportError::Io(e.to_string()))?;
    let s = |x: &str| x.to_string();
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let mut cmd: Vec<String> = Vec::new();
    cmd.push(path(&bwrap));
    for flag in [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ] {
        cmd.push(s(flag));
    }
    if let Some(fd) = handed.filter {
        cmd.extend([s("--seccomp"), fd.to_string()]);
    }
    if let Some(fd) = handed.info {
        cmd.extend([s("--info-fd"), fd.to_string()]);
    }
    if let Some(fd) = handed.gate {
        cmd.extend([s("--block-fd"), fd.to_string()]);
    }
    if let Some(fd) = handed.gate_writer {
        cmd.extend([s("--sync-fd"), fd.to_string()]);
    }
    cmd.extend([s("--uid"), s(NOBODY), s("--gid"), s(NOBODY)]);
    cmd.extend([s("--hostname"), s("croupier-bot")]);
    for (k, v) in [
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("HOME", "/tmp"),
        ("TMPDIR", "/tmp"),
        ("LANG", "C.UTF-8"),
    ] {
        cmd.extend([s("--setenv"), s(k), s(v)]);
    }
    for dir in SYSTEM {
        let p = Path::new(dir);
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(p) {
                    cmd.extend([s("--symlink"), path(&target), s(dir)]);
                }
            }
            Ok(m) if m.is_dir() => cmd.extend([s("--ro-bind"), s(dir), s(dir)]),
            _ => {}
        }
    }
    let mut etc: Vec<String> = ETC.iter().map(|e| e.to_string()).collect();
    // Java reads its settings from /etc/java-NN-openjdk.
    if let Ok(dir) = std::fs::read_dir("/etc") {
        etc.extend(
            dir.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("java"))
                })
                .map(|p| path(&p)),
        );
    }
    for e in etc {
        cmd.extend([s("--ro-bind-try"), e.clone(), e]);
    }
    // The only places a program may write: `/tmp` and `/dev/shm` (each a
    // tmpfs of `tmp_size`) and `/dev/mqueue` (its IPC namespace's POSIX
    // message queues); `/` and `/dev` are read-only (remounted below), so
    // that a sandbox held for a series can be cleared between its matches
    // (see [`super::held`]).
    cmd.extend([s("--proc"), s("/proc"), s("--dev"), s("/dev")]);
    for tmp in ["/dev/shm", "/tmp"] {
        cmd.extend([
            s("--size"),
            limits.tmp_size.to_string(),
            s("--tmpfs"),
            s(tmp),
        ]);
    }
    cmd.extend([s("--mqueue"), s("/dev/mqueue")]);
    cmd.extend([s("--remount-ro"), s("/dev")]);
    let folders = bot_folders(argv, &cwd);
    for f in &folders {
        cmd.extend([s("--ro-bind"), path(f), path(f)]);
    }
    if let Some(h) = held {
        cmd.extend([s("--ro-bind"), path(h), s(HELD_FOLDER)]);
    }
    cmd.extend([s("--remount-ro"), s("/")]);
    cmd.extend([s("--chdir"), path(&working_folder(&folders, &cwd)), s("--")]);
    if handed.gate.is_none() {
        let prlimit = tool("prlimit", "util-linux")?;
        cmd.push(path(&prlimit));
        cmd.extend(limits.each().map(|l| format!("{}={}", l.option, l.value)));
        cmd.push(s("--"));
    }
    cmd.extend_from_slice(run);
    Ok(cmd)
}
