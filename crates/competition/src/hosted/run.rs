//! How a hosted version runs: its runtime's command, and a connector that
//! starts it in the sandbox for each match (each round, for Love Letter),
//! in a sandbox kept from its bot's last match where there is one
//! ([`super::kept`]), and keeps the tail of its stderr for its owner.

use std::path::Path;
use std::sync::{Arc, Mutex};

use croupier_arena::transport::process::cgroup::{BotCpus, CgroupLimits};
use croupier_arena::transport::process::{BotProcess, Held, ProcessLimits, Sandbox};
use croupier_arena::transport::{Conn, Connector, TransportError};
use croupier_store::BotId;
use futures::future::BoxFuture;
use tokio::time::Instant;

use super::kept::{KeptSandboxes, CLEARING_WAIT};

/// Where runtimes are looked for (the sandbox's own `PATH`).
const SYSTEM_BIN: [&str; 3] = ["/usr/local/bin", "/usr/bin", "/bin"];

/// Bytes of stderr kept per bot and match (the most recent ones).
pub const STDERR_KEEP: usize = 64 * 1024;

/// The runtimes a hosted bot can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// The entry file itself is executable (a compiled program, a script
    /// with a `#!` line).
    Native,
    /// `python3 ENTRY`.
    Python3,
    /// `node ENTRY`.
    Node,
    /// `ruby ENTRY`.
    Ruby,
    /// `java -jar ENTRY`.
    Java,
}

impl Runtime {
    /// Every runtime, by name.
    pub const ALL: [Runtime; 5] = [
        Runtime::Native,
        Runtime::Python3,
        Runtime::Node,
        Runtime::Ruby,
        Runtime::Java,
    ];

    /// Its name in the API.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Native => "native",
            Runtime::Python3 => "python3",
            Runtime::Node => "node",
            Runtime::Ruby => "ruby",
            Runtime::Java => "java",
        }
    }

    /// Reads a name.
    pub fn parse(s: &str) -> Result<Runtime, RuntimeError> {
        Runtime::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| RuntimeError::Unknown(s.chars().take(40).collect()))
    }

    /// The command that runs `entry` (inside `dir`) with its working folder
    /// `dir`. The interpreter is the server's own, under `/usr`, which the
    /// sandbox shows read-only; `env -C` is there too.
    pub fn command(self, dir: &Path, entry: &str) -> Result<Vec<String>, RuntimeError> {
        let file = dir.join(entry);
        let path = |p: &Path| p.to_string_lossy().into_owned();
        // Only the system's own programs: the sandbox shows `/usr` and `/bin`,
        // not the organiser's home (where version managers put shims).
        let tool = |name: &str| {
            SYSTEM_BIN
                .iter()
                .map(|d| Path::new(d).join(name))
                .find(|p| p.is_file())
                .map(|p| path(&p))
                .ok_or_else(|| RuntimeError::Missing(name.to_string()))
        };
        let mut argv = vec![tool("env")?, "-C".to_string(), path(dir)];
        match self {
            Runtime::Native => {}
            Runtime::Python3 => argv.push(tool("python3")?),
            Runtime::Node => argv.push(tool("node")?),
            Runtime::Ruby => argv.push(tool("ruby")?),
            Runtime::Java => argv.extend([tool("java")?, "-jar".to_string()]),
        }
        argv.push(path(&file));
        Ok(argv)
    }
}

/// A runtime this server cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A name that is no runtime.
    #[error("unknown runtime {0:?}: use one of {list}", list = Runtime::ALL.map(Runtime::name).join(", "))]
    Unknown(String),
    /// A runtime whose program is not installed.
    #[error("the runtime {0} is not installed on this server")]
    Missing(String),
}

/// The newest bytes a bot wrote to stderr over a match.
#[derive(Debug, Default)]
pub struct Tail(Vec<u8>);

impl Tail {
    fn push(&mut self, text: &str) {
        self.0.extend_from_slice(text.as_bytes());
        let excess = self.0.len().saturating_sub(STDERR_KEEP);
        self.0.drain(..excess);
    }

    /// The tail as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }
}

/// Starts a hosted version for each match (or round) it plays.
#[derive(Debug)]
pub struct HostedConnector {
    argv: Vec<String>,
    limits: ProcessLimits,
    /// Its stderr over the whole match.
    pub log: Arc<Mutex<Tail>>,
    /// The sandbox its program runs in, held for the match (a connector
    /// serves one match): each round's, for a dialect that starts it anew
    /// each round (Love Letter's), and the match's too with a
    /// [`home`](Self::home). Taken from home or set up at the first start,
    /// killed with the connector or given back home.
    held: tokio::sync::Mutex<Slot>,
    /// Where its sandbox is kept between the bot's matches, and the bot.
    home: Option<(BotId, Arc<KeptSandboxes>)>,
}

impl HostedConnector {
    /// A connector for `argv` under `sandbox`; its program's CPU quota is
    /// `cpus` when given, else the process's (`--bot-cpus`). Either applies
    /// only where this process gives bot programs cgroups at all.
    pub fn new(argv: Vec<String>, sandbox: Sandbox, cpus: Option<BotCpus>) -> HostedConnector {
        let defaults = ProcessLimits::default();
        HostedConnector {
            argv,
            limits: ProcessLimits {
                stderr_keep: STDERR_KEEP,
                sandbox,
                cgroup: with_cpus(defaults.cgroup.clone(), cpus),
                // A server starts hosted bots again and again: a first
                // start takes a sandbox set up ahead of it.
                spare_sandboxes: true,
                ..defaults
            },
            log: Arc::default(),
            held: tokio::sync::Mutex::default(),
            home: None,
        }
    }

    /// The same connector for `bot`, whose program starts in the sandbox
    /// `kept` keeps from its last match (each match's, not only each
    /// round's; taken at the first start), and whose sandbox goes back
    /// there, to be cleared, when the connector is dropped after the
    /// match. Only a sandboxed program keeps one.
    pub fn kept_in(mut self, bot: BotId, kept: Arc<KeptSandboxes>) -> HostedConnector {
        if !matches!(self.limits.sandbox, Sandbox::Off) {
            self.home = Some((bot, kept));
        }
        self
    }
}

impl Drop for HostedConnector {
    fn drop(&mut self) {
        if let (Some((bot, kept)), Some(held)) = (&self.home, self.held.get_mut().held.take()) {
            kept.give_back(*bot, held);
        }
    }
}

/// A connector's sandbox, and whether its home was looked in.
#[derive(Debug, Default)]
struct Slot {
    held: Option<Held>,
    looked: bool,
}

/// The cgroup limits `process` (this process's) with the CPU quota `cpus`
/// instead, when given; no cgroup stays no cgroup.
fn with_cpus(process: Option<CgroupLimits>, cpus: Option<BotCpus>) -> Option<CgroupLimits> {
    process.map(|c| CgroupLimits {
        cpus: cpus.unwrap_or(c.cpus),
        ..c
    })
}

impl Connector for HostedConnector {
    fn connect(&self, _match_tag: &str) -> Result<Box<dyn Conn>, TransportError> {
        let p = BotProcess::spawn(&self.argv, &self.limits)?;
        Ok(Box::new(LoggedConn {
            p,
            log: Arc::clone(&self.log),
        }))
    }

    /// Each round's program starts in the sandbox held for the match, as
    /// a local Love Letter program's does (issue 53), not in a new one;
    /// with a home ([`HostedConnector::kept_in`]), each match's program
    /// too, in the sandbox kept from the bot's last match.
    fn connect_held<'a>(
        &'a self,
        _match_tag: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conn>, TransportError>> {
        Box::pin(async move {
            let mut slot = self.held.lock().await;
            if !slot.looked {
                slot.looked = true;
                if let Some((bot, kept)) = &self.home {
                    slot.held = kept.take(*bot, CLEARING_WAIT).await;
                }
            }
            let p = BotProcess::spawn_held(&mut slot.held, &self.argv, &self.limits).await?;
            Ok(Box::new(LoggedConn {
                p,
                log: Arc::clone(&self.log),
            }) as Box<dyn Conn>)
        })
    }

    fn keeps_sandbox(&self) -> bool {
        self.home.is_some()
    }
}

/// A hosted bot's process; its stderr goes to the owner's log, not into
/// fault details (game records are public).
struct LoggedConn {
    p: BotProcess,
    log: Arc<Mutex<Tail>>,
}

impl Conn for LoggedConn {
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(self.p.send(lines, deadline))
    }

    fn recv(&mut self, deadline: Instant) -> BoxFuture<'_, Result<String, TransportError>> {
        Box::pin(self.p.recv(deadline))
    }

    fn cpu_time(&self) -> Option<std::time::Duration> {
        self.p.cpu_time()
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        let LoggedConn { p, log } = *self;
        Box::pin(async move {
            let stderr = p.stderr_log();
            // Its log is complete once it is stopped.
            p.terminate().await;
            let text = stderr.lock().map(|l| l.tail()).unwrap_or_default();
            if let Ok(mut t) = log.lock() {
                t.push(&text);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Says `first` in a new sandbox, `again` where an earlier start left
    /// its mark in `/tmp`.
    fn marker() -> Vec<String> {
        [
            "sh",
            "-c",
            "if [ -e /tmp/m ]; then echo again; else : >/tmp/m; echo first; fi",
        ]
        .map(String::from)
        .to_vec()
    }

    async fn said(mut c: Box<dyn Conn>) -> String {
        let line = c
            .recv(Instant::now() + std::time::Duration::from_secs(10))
            .await
            .unwrap_or_else(|e| format!("{e}"));
        c.close().await;
        line
    }

    /// A hosted Love Letter bot's rounds start in one sandbox held for the
    /// match (what a round leaves in `/tmp` is there in the next, as for a
    /// local program), while each match start gets a sandbox of its own.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_hosted_bots_rounds_start_in_the_sandbox_held_for_its_match() {
        let conn = HostedConnector::new(marker(), Sandbox::Strict(Default::default()), None);
        assert_eq!(said(conn.connect_held("t").await.unwrap()).await, "first");
        assert_eq!(said(conn.connect_held("t").await.unwrap()).await, "again");
        assert_eq!(said(conn.connect_held("t").await.unwrap()).await, "again");
        let other = HostedConnector::new(marker(), Sandbox::Strict(Default::default()), None);
        assert_eq!(said(other.connect("t").unwrap()).await, "first");
        assert_eq!(said(other.connect("t").unwrap()).await, "first");
    }

    /// What a program writes on stderr as it is stopped (SIGTERM) reaches
    /// its owner's log: unsandboxed, in a sandbox of its own (the SIGTERM
    /// goes to the program inside, not to bubblewrap), and in a kept
    /// sandbox, whose rounds' programs get SIGTERM in their own group.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stopped_programs_last_words_reach_the_log() {
        let argv: Vec<String> = [
            "sh",
            "-c",
            "trap 'echo bye >&2; exit 0' TERM; echo up; while :; do sleep 0.01; done",
        ]
        .map(String::from)
        .to_vec();
        let kept = KeptSandboxes::new(std::time::Duration::from_secs(60), 4);
        for (what, conn) in ["unsandboxed", "own sandbox", "kept sandbox"]
            .into_iter()
            .zip([
                HostedConnector::new(argv.clone(), Sandbox::Off, None),
                HostedConnector::new(argv.clone(), Sandbox::Strict(Default::default()), None),
                HostedConnector::new(argv.clone(), Sandbox::Strict(Default::default()), None)
                    .kept_in(1, kept),
            ])
        {
            let log = Arc::clone(&conn.log);
            let kept = conn.keeps_sandbox();
            let c = if kept {
                conn.connect_held("t").await
            } else {
                conn.connect("t")
            };
            assert_eq!(said(c.unwrap()).await, "up");
            let text = log.lock().unwrap().text();
            assert!(text.contains("bye"), "{what}: log {text:?}");
        }
    }

    #[test]
    fn the_ladder_quota_replaces_only_the_cpus_of_a_cgroup() {
        let process = CgroupLimits {
            cpus: BotCpus::ONE,
            memory: Some(512 << 20),
            root: "/sys/fs/cgroup".into(),
        };
        let half = BotCpus::new(0.5).ok();
        let ladder = with_cpus(Some(process.clone()), half).unwrap();
        assert_eq!(
            (ladder.cpus, ladder.memory),
            (BotCpus::new(0.5).unwrap(), Some(512 << 20))
        );
        assert_eq!(with_cpus(Some(process.clone()), None), Some(process));
        // Where this process gives programs no cgroup, neither does the ladder.
        assert_eq!(with_cpus(None, half), None);
    }
}
