//! A throw-away PostgreSQL cluster for tests and benchmarks: `initdb` into
//! a temporary folder, `pg_ctl start` listening only on a Unix socket in
//! that folder, one fresh database per [`ScratchCluster::create_database`].
//!
//! PostgreSQL refuses to run as root; run as root (as in CI containers),
//! the cluster's folder is given to the user `nobody` and every server
//! command runs through `runuser -u nobody --`. The binaries are looked up
//! in `$CROUPIER_PG_BIN`, then `/usr/lib/postgresql/*/bin` (Debian's
//! `postgresql` package; the newest version wins), then `pg_config
//! --bindir`.
//!
//! Dropping the cluster stops it and deletes its folder. A cluster kept in
//! a `static` (one per test binary) is never dropped, so a watchdog process
//! does the same once the process that started the cluster has exited,
//! however it ended (a panic, an abort, a kill).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::migrate::MigrateDatabase;

/// Why a scratch cluster could not start.
#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    /// No PostgreSQL server binaries were found.
    #[error("PostgreSQL is not installed (no initdb/pg_ctl in $CROUPIER_PG_BIN, /usr/lib/postgresql/*/bin or pg_config --bindir)")]
    NotInstalled,
    /// A command failed.
    #[error("{0}")]
    Command(String),
    /// A file operation failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The user that owns and runs the cluster when we are root.
const RUN_AS: &str = "nobody";
/// The cluster's superuser (trust authentication on its private socket).
const SUPERUSER: &str = "croupier";
/// The port number, which only names the socket file (`.s.PGSQL.5432`);
/// nothing listens on TCP.
const PORT: u16 = 5432;

/// A running throw-away cluster (see the module documentation).
#[derive(Debug)]
pub struct ScratchCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_root: bool,
    watchdog: Option<Child>,
    next_db: AtomicU32,
}

/// The folder of the newest PostgreSQL server binaries, if any.
pub fn find_bin() -> Option<PathBuf> {
    let has = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Some(d) = std::env::var_os("CROUPIER_PG_BIN").map(PathBuf::from) {
        return has(&d).then_some(d);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            has(&bin).then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let d = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && has(&d)).then_some(d)
}

impl ScratchCluster {
    /// Creates and starts a cluster. `durable: false` turns off `fsync`
    /// (tests); `true` keeps PostgreSQL's defaults (benchmarks).
    pub fn start(durable: bool) -> Result<ScratchCluster, ScratchError> {
        let bin = find_bin().ok_or(ScratchError::NotInstalled)?;
        let dir = tempfile::Builder::new().prefix("croupier-pg-").tempdir()?;
        let as_root = {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(dir.path())?.uid() == 0
        };
        if as_root {
            let (uid, gid) = (id_of(RUN_AS, "-u")?, id_of(RUN_AS, "-g")?);
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))?;
        }
        let mut cluster = ScratchCluster {
            dir,
            bin,
            as_root,
            watchdog: None,
            next_db: AtomicU32::new(0),
        };
        let data = cluster.data();
        cluster.run(
            "initdb",
            &[
                "-D",
                path_str(&data)?,
                "-U",
                SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ],
        )?;
        cluster.watchdog = Some(cluster.spawn_watchdog()?);
        let socket = path_str(cluster.dir.path())?.to_string();
        let mut options = format!(
            "-c listen_addresses='' -k {socket} -p {PORT} -c shared_buffers=32MB -c max_connections=200"
        );
        if !durable {
            options.push_str(" -c fsync=off -c synchronous_commit=off -c full_page_writes=off");
        }
        let log = cluster.dir.path().join("server.log");
        cluster.run(
            "pg_ctl",
            &[
                "-D",
                path_str(&data)?,
                "-l",
                path_str(&log)?,
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ],
        )?;
        Ok(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The cluster's server process (the postmaster), from its pid file:
    /// a benchmark adds its CPU time, and its children's, to the client's.
    pub fn server_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// The URL of database `db` in this cluster.
    pub fn url(&self, db: &str) -> String {
        format!(
            "postgres://{SUPERUSER}@localhost:{PORT}/{db}?host={}",
            self.dir.path().display()
        )
    }

    /// Creates a new empty database; returns its URL.
    pub async fn create_database(&self) -> Result<String, sqlx::Error> {
        let n = self.next_db.fetch_add(1, Ordering::Relaxed);
        let url = self.url(&format!("scratch_{n}"));
        sqlx::Postgres::create_database(&url).await?;
        Ok(url)
    }

    /// Runs one of the cluster's binaries (as `nobody` when root).
    fn run(&self, tool: &str, args: &[&str]) -> Result<(), ScratchError> {
        let out = self
            .command(tool)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| ScratchError::Command(format!("cannot run {tool}: {e}")))?;
        if out.status.success() {
            Ok(())
        } else {
            let log =
                std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
            Err(ScratchError::Command(format!(
                "{tool} failed ({}): {}{}\n{log}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )))
        }
    }

    fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        if self.as_root {
            let mut c = Command::new("runuser");
            c.args(["-u", RUN_AS, "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    /// A shell that waits for this process to end, then stops the cluster
    /// and removes its folder (unless [`Drop`] did it first).
    fn spawn_watchdog(&self) -> Result<Child, ScratchError> {
        let pg_ctl = self.bin.join("pg_ctl");
        let runas = if self.as_root {
            format!("runuser -u {RUN_AS} -- ")
        } else {
            String::new()
        };
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
             {runas}'{pg_ctl}' -D '{data}' stop -m immediate >/dev/null 2>&1; rm -rf '{dir}'",
            pid = std::process::id(),
            pg_ctl = pg_ctl.display(),
            data = self.data().display(),
            dir = self.dir.path().display(),
        );
        Ok(Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?)
    }
}

impl Drop for ScratchCluster {
    fn drop(&mut self) {
        let data = self.data();
        if let Some(data) = data.to_str() {
            let _ = self.run("pg_ctl", &["-D", data, "stop", "-m", "immediate", "-w"]);
        }
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        // The TempDir removes the folder.
    }
}

fn path_str(p: &Path) -> Result<&str, ScratchError> {
    p.to_str()
        .ok_or_else(|| ScratchError::Command(format!("path is not UTF-8: {}", p.display())))
}

/// `id -u USER` or `id -g USER`.
fn id_of(user: &str, flag: &str) -> Result<u32, ScratchError> {
    let out = Command::new("id").args([flag, user]).output()?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| ScratchError::Command(format!("no user '{user}' to run PostgreSQL as")))
}
