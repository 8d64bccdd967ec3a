//! Helpers shared by the integration tests of the `croupier` binary: the
//! workspace root, interpreters that may be missing, and `croupier serve`
//! on a free loopback port.

#![allow(dead_code)] // each test file uses a different part of this module

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The workspace root, where the example bots' paths start.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists")
}

/// Whether `interpreter` runs here; under CI its absence is a failure.
pub fn have(interpreter: &str) -> bool {
    let ok = Command::new(interpreter)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("CI").is_err(),
            "{interpreter} is missing under CI: .ci/run should install it"
        );
        eprintln!("SKIPPED: {interpreter} is not installed");
    }
    ok
}

/// `croupier serve` on a free loopback port, stopped when dropped.
pub struct Server {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `croupier serve` with its database in `dir` and `args` added, on
/// a port the server picks itself (`--listen 127.0.0.1:0`; it logs the address
/// it bound), so that tests running side by side never race for a port.
pub fn serve(dir: &Path, args: &[&str]) -> Server {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(["--house-pause-ms", "1"])
        .args(args)
        .arg("--database")
        .arg(format!("sqlite://{}", dir.join("db").display()))
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start croupier serve");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads the log until the address line, then drains it so that the
    // server never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(port) = croupier_server::announce::port_in_serving_line(&line) {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(port);
                }
            }
        }
    });
    let Ok(port) = rx.recv_timeout(Duration::from_secs(30)) else {
        let _ = child.kill();
        panic!("croupier serve did not say where it listens within 30 s");
    };
    let server = Server {
        child,
        port,
        url: format!("http://127.0.0.1:{port}"),
    };
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// A name no other process has: `croupier-KIND-NAME-PID-NANOS`, put into a
/// bot's command line so that [`marked`] finds its processes.
pub fn marker(kind: &str, name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("croupier-{kind}-{name}-{}-{nanos:09}", std::process::id())
}

/// Live (not zombie) processes whose command line contains `marker`.
pub fn marked(marker: &str) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, r)| r.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if cmd.contains(marker) && !zombie {
            found.push((pid, cmd));
        }
    }
    found
}

/// A loopback port free at this moment, for a server a test starts on it
/// (perhaps later, perhaps again after killing it). It lies below the
/// kernel's ephemeral range, which `bind(":0")` (other tests' servers) and
/// every outgoing connection take from, and is never handed out twice in
/// this test run: a port a test keeps unbound for a while (a cluster's
/// instance not started yet, or killed and restarted) is not taken by
/// another test's server meanwhile. (It was, once: haproxy then sent a
/// cluster's clients to another test's server, which knew none of them.)
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    // Ports below 1024 need privileges; a range starting low leaves less.
    let high = ephemeral.max(1025);
    let low = if high > 21000 {
        20000
    } else {
        (high / 2).max(1024)
    };
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let start = rand::random_range(low..high);
    (start..high)
        .chain(low..start)
        .find(|&port| {
            !given.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
        })
        .inspect(|&port| {
            given.insert(port);
        })
        .expect("a free loopback port below the ephemeral range")
}

/// Creates owner `name` (password `secret-pw`) on the server at `url`.
pub fn register_owner(url: &str, name: &str) {
    let r = reqwest::blocking::Client::new()
        .post(format!("{url}/v1/owners"))
        .body(format!(r#"{{"name": "{name}", "password": "secret-pw"}}"#))
        .send()
        .expect("POST /v1/owners");
    assert_eq!(r.status().as_u16(), 201, "owner {name}");
}

/// A GOPS bot (Python): the random example bot, which first says on
/// stderr its PID namespace, its pid and whether an earlier program left
/// its mark in `/tmp`, then leaves one: which sandbox a hosted bot's game
/// ran in, as its owner reads it per game.
pub fn marking_gops_bot() -> String {
    let example = std::fs::read_to_string(root().join("examples/bots/gops/random_bot.py"))
        .expect("the GOPS example bot");
    format!(
        r#"import os, sys
mark = "again" if os.path.exists("/tmp/mark") else "fresh"
open("/tmp/mark", "w").close()
print("ns=%s pid=%d tmp=%s" % (os.readlink("/proc/self/ns/pid"), os.getpid(), mark),
      file=sys.stderr, flush=True)
{example}"#
    )
}

/// What a [`marking_gops_bot`] said in one game.
#[derive(Debug)]
pub struct SandboxMarks {
    /// Its PID namespace (`pid:[…]`).
    pub ns: String,
    /// Its pid there.
    pub pid: u32,
    /// `fresh`, or `again` where an earlier program's mark was in `/tmp`.
    pub tmp: String,
}

/// The marks in one game's stderr.
pub fn sandbox_marks(stderr: &str) -> Option<SandboxMarks> {
    let line = stderr.lines().find(|l| l.starts_with("ns="))?;
    let mut words = line.split_whitespace();
    Some(SandboxMarks {
        ns: words.next()?.strip_prefix("ns=")?.to_string(),
        pid: words.next()?.strip_prefix("pid=")?.parse().ok()?,
        tmp: words.next()?.strip_prefix("tmp=")?.to_string(),
    })
}

/// Games in the order played ran in one kept sandbox, cleared between
/// them: one namespace, a larger pid each time, a fresh `/tmp`.
pub fn one_kept_sandbox(seen: &[SandboxMarks]) {
    for (game, m) in seen.iter().enumerate() {
        assert_eq!(
            m.tmp, "fresh",
            "game {game} found the last one's /tmp: {seen:?}"
        );
    }
    for pair in seen.windows(2) {
        assert_eq!(pair[0].ns, pair[1].ns, "a new sandbox: {seen:?}");
        assert!(pair[1].pid > pair[0].pid, "the pid did not grow: {seen:?}");
    }
}

/// A throw-away PostgreSQL cluster, or `None` where PostgreSQL is not
/// installed: the test then skips, saying so, except under `CI=true`,
/// where a missing PostgreSQL fails it.
pub fn postgres_or_skip() -> Option<croupier_store::scratch::ScratchCluster> {
    use croupier_store::scratch::{ScratchCluster, ScratchError};
    match ScratchCluster::start(false) {
        Ok(c) => Some(c),
        Err(ScratchError::NotInstalled) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipped: PostgreSQL is not installed (this test fails under CI=true)");
            None
        }
        Err(e) => panic!("cannot start PostgreSQL: {e}"),
    }
}
