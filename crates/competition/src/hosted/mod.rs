//! Hosted bots (issue 12): owners upload a bot program (one file, or a
//! `.tar.gz`/`.zip`) with a runtime and a dialect; every upload is a new
//! version. A version first plays one validation match against a house
//! bot; if it passes it becomes active, and the ladder plays the newest
//! active version of each hosted bot as a program seat in the sandbox
//! (`croupier serve --sandbox`). Which version played each game, and the
//! tail of its stderr, is kept for the bot's owner only.
//!
//! [`files`] keeps the uploads, [`run`] starts them; the HTTP side is
//! `croupier-server`'s `hosted_api`.

pub mod files;
pub mod kept;
pub mod run;
mod validate;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use croupier_arena::transport::process::cgroup::BotCpus;
use croupier_arena::transport::process::{check_program, Sandbox, SandboxError};
use croupier_arena::transport::Link;
use croupier_dialects::DialectKind;
use croupier_rules::GameKind;
use croupier_store::hosted::BotVersion;
use croupier_store::{BotId, BotInfo, BotKind, GameId, Store, StoreError};

use files::{FileError, Files};
use kept::KeptSandboxes;
use run::{HostedConnector, Runtime, RuntimeError, Tail};

/// Settings of hosted bots.
#[derive(Clone, Debug)]
pub struct HostedConfig {
    /// The bot-files folder (outside the database's).
    pub dir: PathBuf,
    /// How their programs are confined.
    pub sandbox: Sandbox,
    /// Time per decision in validation matches, by game (the ladder's).
    pub move_time: HashMap<GameKind, Duration>,
    /// Issue 51: the CPU quota of the programs in ladder matches, people's
    /// games and validation matches (the ladder settings' `bot_cpus`);
    /// `None`, and in tournaments, the process's `--bot-cpus`.
    pub ladder_cpus: Option<BotCpus>,
}

/// The dialects a hosted bot may speak.
pub const DIALECTS: [DialectKind; 4] = [
    DialectKind::LoveLetter,
    DialectKind::LoveLetterPostman,
    DialectKind::Gops,
    DialectKind::Croupier,
];

/// Why a hosted bot cannot be seated now.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// It is in another game: try again when that one is over.
    #[error("hosted bot {0} is in another game; try again soon")]
    Busy(String),
    /// It has no active version (none passed validation yet).
    #[error("hosted bot {0} has no active version")]
    NoActiveVersion(String),
    /// Its version cannot be started.
    #[error(transparent)]
    Broken(#[from] HostedError),
    /// Its version names a dialect Croupier does not speak.
    #[error("bot {bot}: {source}")]
    Dialect {
        /// The bot's name.
        bot: String,
        /// The unknown name.
        source: croupier_dialects::UnknownDialect,
    },
}

/// A version in a ladder match, and its stderr so far.
type Playing = (i64, Arc<Mutex<Tail>>);

/// Hosted bots: their files, active versions and per-match logs.
pub struct Hosted {
    store: Arc<dyn Store>,
    files: Files,
    config: HostedConfig,
    /// The newest active version of each hosted bot, with its command.
    active: Mutex<HashMap<BotId, (BotVersion, Vec<String>)>>,
    /// The stderr logs of the ladder matches in progress, by bot.
    playing: Mutex<HashMap<BotId, Playing>>,
    /// Told whenever a bot leaves `playing` (a game waiting for a busy
    /// hosted bot waits on it).
    freed: tokio::sync::Notify,
    /// Each bot's sandbox, cleared and kept for its next match.
    kept: Arc<KeptSandboxes>,
}

impl std::fmt::Debug for Hosted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hosted")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Why hosted bots cannot be loaded, or a version cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum HostedError {
    /// The bot-files folder cannot be opened.
    #[error("bot files folder {dir}: {cause}")]
    Folder {
        /// The folder.
        dir: String,
        /// Why.
        cause: FileError,
    },
    /// A version's files cannot be unpacked again.
    #[error("the version's files: {0}")]
    Files(FileError),
    /// A version's runtime cannot run here.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The sandbox cannot run the version here.
    #[error(transparent)]
    Sandbox(SandboxError),
}

impl Hosted {
    /// Opens the bot-files folder and loads the active versions (unpacking
    /// again any whose folder is missing).
    pub async fn new(store: Arc<dyn Store>, config: HostedConfig) -> Result<Hosted, HostedError> {
        let files = Files::open(&config.dir).map_err(|cause| HostedError::Folder {
            dir: config.dir.display().to_string(),
            cause,
        })?;
        let hosted = Hosted {
            store,
            files,
            config,
            active: Mutex::default(),
            playing: Mutex::default(),
            freed: tokio::sync::Notify::new(),
            kept: KeptSandboxes::new(kept::KEEP_IDLE, kept::KEEP_MAX),
        };
        let bots = hosted.store.remote_bots().await?;
        for b in bots.iter().filter(|b| b.kind == BotKind::Hosted) {
            let Some(v) = hosted.store.active_version(b.id).await? else {
                continue;
            };
            // Issue 49: a version the sandbox cannot run is not played
            // (say, a bot-files folder its user cannot read).
            let runnable = match hosted.command(&v) {
                Ok(argv) => match hosted.runnable(argv.clone()).await {
                    // Only a program the sandbox surely cannot run is left
                    // out; a probe that failed for another reason (no
                    // process could start just then) is not its fault.
                    Err(HostedError::Sandbox(
                        e @ (SandboxError::Unreadable { .. } | SandboxError::NotFound { .. }),
                    )) => Err(HostedError::Sandbox(e)),
                    Err(e) => {
                        tracing::warn!("hosted bot {}: the sandbox check failed: {e}", b.name);
                        Ok(argv)
                    }
                    Ok(argv) => Ok(argv),
                },
                Err(e) => Err(e),
            };
            match runnable {
                Ok(argv) => {
                    lock(&hosted.active).insert(b.id, (v, argv));
                }
                Err(e) => tracing::warn!(
                    "hosted bot {} version {} is not played: {e}",
                    b.name,
                    v.version
                ),
            }
        }
        Ok(hosted)
    }

    /// `argv` if the sandbox can run it: its user can read the program and
    /// its files, and its interpreter is found inside (issue 49; a probe in
    /// the same sandbox, [`check_program`]).
    pub(crate) async fn runnable(&self, argv: Vec<String>) -> Result<Vec<String>, HostedError> {
        let Sandbox::Strict(limits) = self.config.sandbox.clone() else {
            return Ok(argv);
        };
        tokio::task::spawn_blocking(move || check_program(&argv, &limits).map(|()| argv))
            .await
            .map_err(|e| HostedError::Sandbox(SandboxError::Refused(e.to_string())))?
            .map_err(HostedError::Sandbox)
    }

    /// The uploaded files.
    pub fn files(&self) -> &Files {
        &self.files
    }

    /// The bot-files folder.
    pub fn dir(&self) -> &Path {
        &self.config.dir
    }

    /// The command of version `v`, its files unpacked.
    fn command(&self, v: &BotVersion) -> Result<Vec<String>, HostedError> {
        let dir = self
            .files
            .restore(&v.file_hash, &v.file_name)
            .map_err(HostedError::Files)?;
        Ok(Runtime::parse(&v.runtime)?.command(&dir, &v.entry)?)
    }

    /// Whether the ladder can seat bot `id`: it has an active version
    /// and is in no other game (its stderr and version are kept per bot).
    pub fn ready(&self, id: BotId) -> bool {
        lock(&self.active).contains_key(&id) && !lock(&self.playing).contains_key(&id)
    }

    /// The newest active version of bot `id`.
    pub fn active_version(&self, id: BotId) -> Option<i64> {
        lock(&self.active).get(&id).map(|(v, _)| v.version)
    }

    /// How the ladder reaches hosted bot `b` in its next match: its newest
    /// active version, started in the sandbox, its stderr kept until
    /// [`Hosted::match_over`].
    pub fn link(&self, b: &BotInfo) -> Result<(Link, DialectKind), LinkError> {
        let (v, argv) = lock(&self.active)
            .get(&b.id)
            .cloned()
            .ok_or_else(|| LinkError::NoActiveVersion(b.name.clone()))?;
        self.hold(b.id, &b.name, &v, argv, self.config.ladder_cpus)
    }

    /// Checks that version `v` can be started here (its files unpack, its
    /// runtime is installed).
    pub fn check_version(&self, v: &BotVersion) -> Result<(), HostedError> {
        self.command(v).map(|_| ())
    }

    /// How a tournament reaches version `v` of hosted bot `bot` (the version
    /// frozen at the tournament's start, whatever is active now); like
    /// [`Hosted::link`], it holds the bot until [`Hosted::match_over`].
    pub fn link_version(
        &self,
        bot: BotId,
        name: &str,
        v: &BotVersion,
    ) -> Result<(Link, DialectKind), LinkError> {
        let argv = self.command(v)?;
        self.hold(bot, name, v, argv, None)
    }

    /// Lets bot `id` go without a game to record (a tournament could not
    /// seat its other bots yet).
    pub fn release(&self, id: BotId) {
        if lock(&self.playing).remove(&id).is_some() {
            self.freed.notify_waiters();
        }
    }

    /// Resolves the next time a hosted bot is let go (after a game or a
    /// [`Hosted::release`]). Create it before trying [`Hosted::link_version`]
    /// and await it after a [`LinkError::Busy`], so no release is missed.
    pub fn freed(&self) -> tokio::sync::futures::Notified<'_> {
        self.freed.notified()
    }

    fn hold(
        &self,
        bot: BotId,
        name: &str,
        v: &BotVersion,
        argv: Vec<String>,
        cpus: Option<BotCpus>,
    ) -> Result<(Link, DialectKind), LinkError> {
        let dialect: DialectKind = v.dialect.parse().map_err(|source| LinkError::Dialect {
            bot: name.to_string(),
            source,
        })?;
        // One game at a time: the version and stderr are kept per bot until
        // `match_over`, so a second game (a person's challenge beside a
        // ladder match) would mix them up.
        let conn = match lock(&self.playing).entry(bot) {
            std::collections::hash_map::Entry::Occupied(_) => {
                return Err(LinkError::Busy(name.to_string()))
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                let conn = HostedConnector::new(argv, self.config.sandbox.clone(), cpus)
                    .kept_in(bot, Arc::clone(&self.kept));
                slot.insert((v.version, Arc::clone(&conn.log)));
                conn
            }
        };
        Ok((Link::Custom(Arc::new(conn)), dialect))
    }

    /// Stores, for each hosted bot of game `id`, the version that played and
    /// its stderr.
    pub async fn match_over(&self, id: GameId, bots: &[BotId]) {
        for bot in bots {
            let Some((version, log)) = lock(&self.playing).remove(bot) else {
                continue;
            };
            self.freed.notify_waiters();
            let text = lock(&log).text();
            if let Err(e) = self.store.add_hosted_match(id, *bot, version, &text).await {
                tracing::warn!("hosted bot {bot}: cannot store the stderr of game {id}: {e}");
            }
        }
    }

    /// Makes `v` the version the ladder plays (it passed validation).
    fn activate(&self, v: BotVersion, argv: Vec<String>) {
        let mut active = lock(&self.active);
        let newer = active
            .get(&v.bot)
            .is_some_and(|(cur, _)| cur.version > v.version);
        if !newer {
            active.insert(v.bot, (v, argv));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(bot: BotId) -> BotVersion {
        BotVersion {
            id: 1,
            bot,
            version: 1,
            file_hash: String::new(),
            file_name: "bot.py".into(),
            runtime: "python3".into(),
            entry: "bot.py".into(),
            dialect: "gops".into(),
            status: "active".into(),
            reason: None,
            stderr: None,
            created_at: "0".into(),
        }
    }

    #[tokio::test]
    async fn a_busy_bot_is_refused_and_its_release_wakes_a_waiter() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("h.db").display());
        let store = croupier_store::open(&url).await.expect("store");
        let config = HostedConfig {
            dir: dir.path().join("files"),
            sandbox: Sandbox::Off,
            move_time: HashMap::new(),
            ladder_cpus: None,
        };
        let hosted = Hosted::new(store, config).await.expect("hosted");
        let bot: BotId = 7;
        let v = version(bot);
        let argv = || vec!["true".to_string()];
        hosted.hold(bot, "b", &v, argv(), None).expect("first game");
        assert!(matches!(
            hosted.hold(bot, "b", &v, argv(), None),
            Err(LinkError::Busy(_))
        ));
        // A waiter that listens before the release is woken by it.
        let freed = hosted.freed();
        tokio::pin!(freed);
        freed.as_mut().enable();
        assert!(
            tokio::time::timeout(Duration::from_millis(50), freed.as_mut())
                .await
                .is_err(),
            "woken with the bot still busy"
        );
        hosted.release(bot);
        tokio::time::timeout(Duration::from_secs(5), freed)
            .await
            .expect("the release wakes the waiter");
        hosted.hold(bot, "b", &v, argv(), None).expect("free again");
    }
}
