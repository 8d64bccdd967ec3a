//! The sessions an instance checked in the database lately (issue 13, with
//! several instances): a request whose token was found live less than
//! [`SESSION_RECHECK`] ago is not checked again. A login anywhere drops the
//! bot's cached token in every instance (`NOTIFY` "s BOT" on the shared
//! channel, sent by the login's transaction; see `relay`); a lost
//! notification is made good by the recheck, and a lost listener empties
//! the cache.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use croupier_store::BotId;
use tokio::time::Instant;

use super::lock::lock;

/// How long a session found live is trusted without asking the database
/// again (at most: never longer than a quarter of the idle time).
pub const SESSION_RECHECK: Duration = Duration::from_secs(5);

/// The cache (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct SessionCache(Mutex<Sessions>);

#[derive(Debug, Default)]
struct Sessions {
    /// token → (bot, when the database said it was live).
    by_token: HashMap<String, (BotId, Instant)>,
    /// bot → its cached token.
    by_bot: HashMap<BotId, String>,
}

impl SessionCache {
    /// The bot of `token` if the database said it was live less than
    /// `recheck` ago.
    pub(super) fn get(&self, token: &str, recheck: Duration) -> Option<BotId> {
        self.get_at(token, recheck, Instant::now())
    }

    fn get_at(&self, token: &str, recheck: Duration, now: Instant) -> Option<BotId> {
        let cache = lock(&self.0);
        let (bot, at) = cache.by_token.get(token)?;
        (now.saturating_duration_since(*at) < recheck).then_some(*bot)
    }

    /// Remembers that the database said `token` is `bot`'s live session
    /// (its earlier token, if another, is forgotten).
    pub(super) fn put(&self, token: &str, bot: BotId) {
        self.put_at(token, bot, Instant::now());
    }

    fn put_at(&self, token: &str, bot: BotId, now: Instant) {
        let mut cache = lock(&self.0);
        if let Some(old) = cache.by_bot.insert(bot, token.to_string()) {
            if old != token {
                cache.by_token.remove(&old);
            }
        }
        cache.by_token.insert(token.to_string(), (bot, now));
    }

    /// Drops `bot`'s cached session (it logged in again somewhere).
    pub(super) fn forget(&self, bot: BotId) {
        let mut cache = lock(&self.0);
        if let Some(token) = cache.by_bot.remove(&bot) {
            cache.by_token.remove(&token);
        }
    }

    /// Drops the sessions not checked for `older` (they would be checked
    /// again anyway); keeps the cache as small as the active bots.
    pub(super) fn prune(&self, older: Duration) {
        self.prune_at(older, Instant::now());
    }

    fn prune_at(&self, older: Duration, now: Instant) {
        let mut cache = lock(&self.0);
        let Sessions { by_token, by_bot } = &mut *cache;
        by_token.retain(|_, (bot, at)| {
            let keep = now.saturating_duration_since(*at) < older;
            if !keep {
                by_bot.remove(bot);
            }
            keep
        });
    }

    /// Forgets every session (notifications may have been lost).
    pub(super) fn clear(&self) {
        *lock(&self.0) = Sessions::default();
    }

    /// How many sessions are kept (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        let cache = lock(&self.0);
        assert_eq!(cache.by_token.len(), cache.by_bot.len(), "maps differ");
        cache.by_token.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECHECK: Duration = Duration::from_secs(5);

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn a_session_is_trusted_until_its_recheck() {
        let c = SessionCache::default();
        let t0 = Instant::now();
        assert_eq!(c.get_at("t1", RECHECK, t0), None, "an unknown token");
        c.put_at("t1", 7, t0);
        assert_eq!(c.get_at("t1", RECHECK, t0), Some(7));
        assert_eq!(c.get_at("t1", RECHECK, t0 + secs(4)), Some(7), "4 s ago");
        assert_eq!(c.get_at("t1", RECHECK, t0 + secs(5)), None, "5 s ago");
        // Checked again: trusted again.
        c.put_at("t1", 7, t0 + secs(5));
        assert_eq!(c.get_at("t1", RECHECK, t0 + secs(6)), Some(7));
        // The public side uses the clock.
        c.put("t2", 8);
        assert_eq!(c.get("t2", RECHECK), Some(8));
    }

    #[test]
    fn a_new_token_or_a_login_elsewhere_drops_the_old_one() {
        let c = SessionCache::default();
        c.put("old", 7);
        c.put("other", 8);
        c.put("new", 7);
        assert_eq!(c.get("old", RECHECK), None, "the bot's earlier token");
        assert_eq!(c.get("new", RECHECK), Some(7));
        assert_eq!(c.len(), 2);
        c.forget(7);
        assert_eq!(c.get("new", RECHECK), None, "a bot that logged in again");
        assert_eq!(c.get("other", RECHECK), Some(8), "another bot's session");
        c.forget(99); // unknown: nothing happens
        assert_eq!(c.len(), 1);
        c.clear();
        assert_eq!(c.get("other", RECHECK), None, "cleared");
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn pruning_drops_only_sessions_not_checked_lately() {
        let c = SessionCache::default();
        let t0 = Instant::now();
        c.put_at("a", 1, t0);
        c.put_at("b", 2, t0 + secs(15));
        c.prune_at(secs(20), t0 + secs(25));
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c.get_at("b", secs(60), t0 + secs(25)), Some(2));
        assert_eq!(c.get_at("a", secs(60), t0 + secs(25)), None);
        // The public side uses the clock: a session checked now stays.
        c.put("c", 3);
        c.prune(secs(20));
        assert_eq!(c.get("c", RECHECK), Some(3));
    }
}
