//! Sandboxes kept for hosted bots between their matches (issue 53).
//!
//! A hosted bot's program starts in a sandbox its connector holds
//! ([`super::run::HostedConnector`]). When the match is over, the sandbox
//! is cleared in the background ([`Held::reset`]: every process in it
//! killed, `/tmp`, `/dev/shm`, `/dev/mqueue` and System V objects emptied)
//! and kept here for the same bot's next match, whose first start takes it
//! (waiting for a clearing still under way, at most [`CLEARING_WAIT`]) and
//! starts the program there instead of setting a new sandbox up. A
//! sandbox goes back only to the bot that held it, and only for the same
//! command and limits ([`Held::suits`]: a new version, unpacked in another
//! folder, gets a new one).
//!
//! Each kept sandbox is two idle processes (bubblewrap's and its holder),
//! so they are not kept forever: one idle for [`KEEP_IDLE`] is not used
//! again (and is killed at the next sweep, every 30 s), and at most
//! [`KEEP_MAX`] cleared ones are kept (the longest idle go first; those
//! still being cleared count, and are trimmed when their clearing ends).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use croupier_arena::transport::process::Held;
use croupier_store::BotId;
use tokio::sync::Notify;
use tokio::time::Instant;

/// How long a kept sandbox waits for its bot's next match.
pub const KEEP_IDLE: Duration = Duration::from_secs(300);

/// Sandboxes kept at most (of as many bots).
pub const KEEP_MAX: usize = 16;

/// How long a match's first start waits for its bot's last sandbox to be
/// cleared before it sets a new one up (a clearing takes a few
/// milliseconds, and normally gives up within 2 s; one that ends later is
/// replaced by the sandbox of the match that did not wait for it).
pub const CLEARING_WAIT: Duration = Duration::from_millis(2500);

/// A bot's sandbox after its match.
enum Kept {
    /// Being cleared; told when done.
    Clearing(Arc<Notify>),
    /// Cleared, waiting since `since`.
    Ready { held: Box<Held>, since: Instant },
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
    /// Keeps at most `max` sandboxes, each for at most `idle`, and kills
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
    /// kept here); if its last one is still being cleared, waits for it,
    /// at most `wait`.
    pub async fn take(&self, bot: BotId, wait: Duration) -> Option<Held> {
        let until = Instant::now() + wait;
        loop {
            let clearing = {
                let mut kept = self.lock();
                match kept.get(&bot) {
                    Some(Kept::Clearing(done)) => Arc::clone(done),
                    Some(Kept::Ready { .. }) => {
                        let Some(Kept::Ready { held, since }) = kept.remove(&bot) else {
                            return None;
                        };
                        drop(kept);
                        // One idle too long is killed here, outside the lock.
                        return (since.elapsed() < self.idle).then_some(*held);
                    }
                    None => return None,
                }
            };
            // Registered before looking again, so that the end of the
            // clearing is not missed in between.
            let told = clearing.notified();
            tokio::pin!(told);
            told.as_mut().enable();
            if !matches!(self.lock().get(&bot), Some(Kept::Clearing(d)) if Arc::ptr_eq(d, &clearing))
            {
                continue;
            }
            if tokio::time::timeout_at(until, told).await.is_err() {
                return None;
            }
        }
    }

    /// Clears `held`, which `bot` played its match in, in the background,
    /// and keeps it for its next match (in place of an older one); dropped
    /// (killed) if it cannot be cleared, or outside a Tokio runtime.
    pub fn give_back(self: &Arc<Self>, bot: BotId, mut held: Held) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let done = Arc::new(Notify::new());
        let older = self.lock().insert(bot, Kept::Clearing(Arc::clone(&done)));
        drop(older);
        let home = Arc::downgrade(self);
        rt.spawn(async move {
            let cleared = held.reset().await;
            let Some(home) = home.upgrade() else {
                return;
            };
            let dropped = {
                let mut kept = home.lock();
                // Unless a newer sandbox of the bot took its place.
                let ours =
                    matches!(kept.get(&bot), Some(Kept::Clearing(d)) if Arc::ptr_eq(d, &done));
                let mut dropped = Vec::new();
                match (ours, cleared) {
                    (true, Ok(())) => {
                        let since = Instant::now();
                        kept.insert(
                            bot,
                            Kept::Ready {
                                held: Box::new(held),
                                since,
                            },
                        );
                        dropped.extend(expire(&mut kept, home.idle, home.max));
                    }
                    (true, Err(e)) => {
                        tracing::debug!("hosted bot {bot}: its sandbox is not kept: {e}");
                        kept.remove(&bot);
                        dropped.push(held);
                    }
                    (false, _) => dropped.push(held),
                }
                dropped
            };
            done.notify_waiters();
            // Killed outside the lock.
            drop(dropped);
        });
    }

    /// Kills the sandboxes past their idle time.
    fn sweep(&self) {
        let dropped = expire(&mut self.lock(), self.idle, self.max);
        drop(dropped);
    }

    /// How many are kept now, cleared or being cleared.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `bot`'s sandbox is cleared and kept.
    #[cfg(test)]
    fn is_ready(&self, bot: BotId) -> bool {
        matches!(self.lock().get(&bot), Some(Kept::Ready { .. }))
    }
}

/// Takes out of `kept` the cleared sandboxes that have waited `idle` or
/// more, and then the longest idle ones while more than `max` are kept.
fn expire(kept: &mut HashMap<BotId, Kept>, idle: Duration, max: usize) -> Vec<Held> {
    let waiting = |k: &Kept| match k {
        Kept::Ready { since, .. } => Some(*since),
        Kept::Clearing(_) => None,
    };
    let stale: Vec<BotId> = kept
        .iter()
        .filter(|(_, k)| waiting(k).is_some_and(|s| s.elapsed() >= idle))
        .map(|(b, _)| *b)
        .collect();
    let mut out: Vec<Kept> = stale.iter().filter_map(|b| kept.remove(b)).collect();
    while kept.len() > max {
        let oldest = kept
            .iter()
            .filter_map(|(b, k)| waiting(k).map(|s| (s, *b)))
            .min()
            .map(|(_, b)| b);
        let Some(oldest) = oldest else {
            break;
        };
        out.extend(kept.remove(&oldest));
    }
    out.into_iter()
        .filter_map(|k| match k {
            Kept::Ready { held, .. } => Some(*held),
            Kept::Clearing(_) => None,
        })
        .collect()
}

/// Kills idle sandboxes now and then, until `kept` is gone.
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
