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

/// Starts `croupier serve` with its database in `dir` and `args` added, and
/// waits until it accepts connections.
pub fn serve(dir: &Path, args: &[&str]) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--house-pause-ms", "1"])
        .args(args)
        .arg("--database")
        .arg(format!("sqlite://{}", dir.join("db").display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start croupier serve");
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
