//! What the browser tests share: finding Debian's Chromium and chromedriver,
//! starting chromedriver on a free loopback port, opening headless sessions
//! whose processes are killed however the test ends, and the screenshot
//! folder.
//!
//! Without chromedriver (`/usr/bin/chromedriver`, or `CHROMEDRIVER`) and
//! Chromium (`/usr/bin/chromium`, or `CHROMIUM`) a test prints a notice and
//! passes, unless `CI=true`.

#![allow(dead_code)] // each browser test uses a different part of this module
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly

use std::path::{Path, PathBuf};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};

fn executable(env: &str, default: &str) -> Option<PathBuf> {
    let p = std::env::var_os(env).map_or_else(|| PathBuf::from(default), PathBuf::from);
    p.exists().then_some(p)
}

/// Saves a screenshot of `c`'s window as `name.png` in [`screenshots_dir`].
pub async fn shot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    std::fs::write(screenshots_dir().join(format!("{name}.png")), png).unwrap();
}

/// The value of JavaScript expression `js` on `c`'s page.
pub async fn eval(c: &Client, js: &str) -> Value {
    c.execute(&format!("return {js};"), Vec::new())
        .await
        .unwrap()
}

/// The folder screenshots go to: `target/screenshots/`.
pub fn screenshots_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    let dir = target.join("screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Kills every process whose command line holds its marker (a browser
/// profile's folder), when dropped.
struct Reaper(String);

impl Drop for Reaper {
    fn drop(&mut self) {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        for entry in dir.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains(&self.0) {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// A running chromedriver. Its browsers, and chromedriver itself, are
/// stopped when it is dropped, a failed assertion included.
pub struct Driver {
    port: u16,
    chromium: PathBuf,
    process: tokio::process::Child,
    // Each session's profile folder; the reapers are declared first so
    // that they run before the folders are removed.
    reapers: Vec<Reaper>,
    profiles: Vec<tempfile::TempDir>,
}

impl Driver {
    /// Starts chromedriver on a free loopback port, or returns `None` (after
    /// a notice) when the browser is not installed and `CI` is not `true`.
    pub fn start() -> Option<Self> {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        let (Some(driver), Some(chromium)) = (
            executable("CHROMEDRIVER", "/usr/bin/chromedriver"),
            executable("CHROMIUM", "/usr/bin/chromium"),
        ) else {
            assert!(!ci, "CI=true but chromium or chromedriver is missing");
            eprintln!("SKIPPED: install chromium and chromium-driver to run the browser test");
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let process = tokio::process::Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Some(Self {
            port,
            chromium,
            process,
            reapers: Vec::new(),
            profiles: Vec::new(),
        })
    }

    /// A new headless browser session (1280×1000, browser log on), with
    /// JavaScript on or off.
    pub async fn session(&mut self, javascript: bool) -> Client {
        let profile = tempfile::tempdir().unwrap();
        self.reapers
            .push(Reaper(profile.path().display().to_string()));
        let mut args = vec![
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            "--window-size=1280,1000".into(),
            "--hide-scrollbars".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        self.profiles.push(profile);
        if !javascript {
            args.push("--blink-settings=scriptEnabled=false".into());
        }
        let caps = json!({
            "goog:chromeOptions": { "binary": self.chromium, "args": args },
            "goog:loggingPrefs": {"browser": "ALL"}
        });
        let Value::Object(caps) = caps else {
            unreachable!()
        };
        for _ in 0..100 {
            let mut b =
                ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
            if let Ok(c) = b
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{}", self.port))
                .await
            {
                return c;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("chromedriver does not answer");
    }

    /// Stops chromedriver (after the sessions were closed).
    pub async fn stop(mut self) {
        let _ = self.process.kill().await;
    }
}
