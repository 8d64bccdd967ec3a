//! Sandboxes kept for hosted bots between their matches (issue 53).
//!
//! A hosted bot's program starts in a sandbox its connector holds
//! ([`super::run::HostedConnector`]). When the match is over, the sandbox
//! is cleared in the background ([`Held::reset`]: every process in it
//! killed, `/tmp`, `/dev/shm`, `/dev/mqueue` and System V objects emptied)
//! and kept here for the same bot's next match, which then starts its
//! program there instead of setting a new sandbox up. A sandbox goes back
//! only to the bot that held it, and only for the same command and limits
//! ([`Held::suits`]: a new version gets a new one).
//!
//! Each kept sandbox is two idle processes (bubblewrap's and its holder),
//! so they are not kept forever: one idle for [`KEEP_IDLE`] is dropped,
//! and at most [`KEEP_MAX`] are kept (the longest idle go first).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use croupier_arena::transport::process::Held;
use croupier_store::BotId;
use tokio::time::Instant;

/// How long a kept sandbox waits for its bot's next match.
pub const KEEP_IDLE: Duration = Duration::from_secs(300);

/// Sandboxes kept at most (of as many bots).
pub const KEEP_MAX: usize = 16;

/// A cleared sandbox and since when it waits.
struct Kept {
    held: Held,
    since: Instant,
}

/// The sandboxes kept for hosted bots' next matches, by bot.
pub struct KeptSandboxes {
    kept: Mutex<HashMap<BotId, Kept>>,
    idle: Duration,
    max: usize,
}

impl std::fmt::Debug for KeptSandboxes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptSandboxes")
            .field("kept", &self.len())
            .field("idle", &self.idle)
            .field("max", &self.max)
            .finish()
    }
}

impl KeptSandboxes {
    /// Keeps at most `max` sandboxes, each for at most `idle`, and drops
    /// those left idle in a task of the current Tokio runtime (none
    /// outside one: they are then dropped when next looked at).
    pub fn new(idle: Duration, max: usize) -> Arc<KeptSandboxes> {
        let kept = Arc::new(KeptSandboxes {
            kept: Mutex::default(),
            idle,
            max,
        });
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(sweep(Arc::downgrade(&kept)));
        }
        kept
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<BotId, Kept>> {
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The sandbox kept for `bot`'s next match, if any (it is no longer
    /// kept here).
    pub fn take(&self, bot: BotId) -> Option<Held> {
        let kept = self.lock().remove(&bot)?;
        (kept.since.elapsed() < self.idle).then_some(kept.held)
    }

    /// Clears `held`, which `bot` played its match in, in the background,
    /// and keeps it for its next match; dropped (killed) if it cannot be
    /// cleared, or outside a Tokio runtime.
    pub fn give_back(self: &Arc<Self>, bot: BotId, mut held: Held) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let home = Arc::downgrade(self);
        rt.spawn(async move {
            if let Err(e) = held.reset().await {
                tracing::debug!("hosted bot {bot}: its sandbox is not kept: {e}");
                return;
            }
            if let Some(home) = home.upgrade() {
                home.keep(bot, held);
            }
        });
    }

    /// Keeps `held` for `bot` (replacing an older one), then drops what is
    /// past its idle time or over the count, the longest idle first.
    fn keep(&self, bot: BotId, held: Held) {
        let dropped = {
            let mut kept = self.lock();
            let since = Instant::now();
            let mut dropped: Vec<Kept> =
                kept.insert(bot, Kept { held, since }).into_iter().collect();
            dropped.extend(expire(&mut kept, self.idle, self.max));
            dropped
        };
        // Killed outside the lock.
        drop(dropped);
    }

    /// Drops the sandboxes past their idle time.
    fn sweep(&self) {
        let dropped = expire(&mut self.lock(), self.idle, self.max);
        drop(dropped);
    }

    /// How many are kept now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Takes out of `kept` what has waited `idle` or more, and then the
/// longest idle ones while more than `max` are left.
fn expire(kept: &mut HashMap<BotId, Kept>, idle: Duration, max: usize) -> Vec<Kept> {
    let stale: Vec<BotId> = kept
        .iter()
        .filter(|(_, k)| k.since.elapsed() >= idle)
        .map(|(b, _)| *b)
        .collect();
    let mut out: Vec<Kept> = stale.iter().filter_map(|b| kept.remove(b)).collect();
    while kept.len() > max {
        let Some(oldest) = kept.iter().min_by_key(|(_, k)| k.since).map(|(b, _)| *b) else {
            break;
        };
        out.extend(kept.remove(&oldest));
    }
    out
}

/// Drops idle sandboxes now and then, until `kept` is gone.
async fn sweep(kept: Weak<KeptSandboxes>) {
    let every = match kept.upgrade() {
        Some(k) => (k.idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30)),
        None => return,
    };
    loop {
        tokio::time::sleep(every).await;
        match kept.upgrade() {
            Some(k) => k.sweep(),
            None => return,
        }
    }
}

#[cfg(test)]
#[path = "kept_tests.rs"]
mod tests;
