//! The capacity the ladder and the tournaments share.
//!
//! The ladder's `max_matches` is the whole: while a tournament runs,
//! tournaments play at most `tournament_share` of it at once and the ladder
//! starts matches only while it has fewer than the rest (at least one);
//! with no tournament running the ladder has it all. A remote bot plays one
//! game at a time: the tournaments claim it here, and the ladder skips
//! claimed bots (and the tournaments wait for a bot in a ladder match).
//! While a tournament runs, its entries (not withdrawn) are reserved for it:
//! the ladder plays the other bots, so a round is not held up by ladder
//! matches.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use croupier_store::BotId;

/// Who else seats bots beside the tournaments (the ladder): whether it
/// has `bot` in a match now. The ladder implements it; the capacity holds
/// it weakly, so that it never keeps the ladder alive.
pub trait BusyBots: Send + Sync {
    /// Whether `bot` is in a match now.
    fn is_busy(&self, bot: BotId) -> bool;
}

/// The default share of the capacity tournaments may use.
pub const DEFAULT_SHARE: f64 = 0.75;

/// The shared capacity.
#[derive(Debug)]
pub struct Capacity {
    max_matches: usize,
    share: f64,
    tournaments_running: AtomicUsize,
    claimed: Mutex<HashSet<BotId>>,
    reserved: Mutex<HashSet<BotId>>,
    ladder: OnceLock<Weak<dyn BusyBots>>,
    played: AtomicU64,
}

impl Capacity {
    /// `max_matches` games at once in all, of which tournaments take at most
    /// `share` (clamped to 0.05–1) while one runs.
    pub fn new(max_matches: usize, share: f64) -> Capacity {
        let share = if share.is_finite() {
            share.clamp(0.05, 1.0)
        } else {
            DEFAULT_SHARE
        };
        Capacity {
            max_matches: max_matches.max(1),
            share,
            tournaments_running: AtomicUsize::new(0),
            claimed: Mutex::new(HashSet::new()),
            reserved: Mutex::new(HashSet::new()),
            ladder: OnceLock::new(),
            played: AtomicU64::new(0),
        }
    }

    /// Lets the tournaments see which bots the ladder has in a match.
    pub fn attach_ladder(&self, ladder: &Arc<impl BusyBots + 'static>) {
        let ladder: Weak<dyn BusyBots> = Arc::downgrade(ladder) as Weak<dyn BusyBots>;
        let _ = self.ladder.set(ladder);
    }

    /// Games tournaments may play at once.
    pub fn tournament_slots(&self) -> usize {
        ((self.max_matches as f64 * self.share).floor() as usize).max(1)
    }

    /// Matches the ladder may have in progress now.
    pub fn ladder_limit(&self) -> usize {
        if self.tournaments_running.load(Ordering::Relaxed) == 0 {
            self.max_matches
        } else {
            self.max_matches
                .saturating_sub(self.tournament_slots())
                .max(1)
        }
    }

    pub(crate) fn set_tournaments_running(&self, n: usize) {
        self.tournaments_running.store(n, Ordering::Relaxed);
    }

    /// Whether `bot` is in a tournament game now, or entered (and not
    /// withdrawn) in a running tournament: the ladder leaves it alone.
    pub fn in_tournament(&self, bot: BotId) -> bool {
        self.lock().contains(&bot)
            || self
                .reserved
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&bot)
    }

    /// The remote entries of the running tournaments.
    pub(crate) fn reserve(&self, bots: HashSet<BotId>) {
        *self.reserved.lock().unwrap_or_else(|e| e.into_inner()) = bots;
    }

    /// Tournament games finished since the server started.
    pub fn played(&self) -> u64 {
        self.played.load(Ordering::Relaxed)
    }

    pub(crate) fn count_game(&self) {
        self.played.fetch_add(1, Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<BotId>> {
        self.claimed.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn ladder_busy(&self, bots: &[BotId]) -> bool {
        let Some(ladder) = self.ladder.get().and_then(Weak::upgrade) else {
            return false;
        };
        bots.iter().any(|b| ladder.is_busy(*b))
    }

    /// Claims `bots` for a tournament game, waiting while any is in another
    /// game. Claiming first and then asking the ladder (which skips claimed
    /// bots under its own lock) means no bot is ever seated twice.
    pub(crate) async fn claim(self: &Arc<Self>, bots: &[BotId]) -> Claim {
        loop {
            let taken = {
                let mut c = self.lock();
                if bots.iter().any(|b| c.contains(b)) {
                    false
                } else {
                    c.extend(bots.iter().copied());
                    true
                }
            };
            if taken {
                if !self.ladder_busy(bots) {
                    return Claim(Arc::clone(self), bots.to_vec());
                }
                let mut c = self.lock();
                for b in bots {
                    c.remove(b);
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Bots claimed for a game; released when dropped.
pub(crate) struct Claim(Arc<Capacity>, Vec<BotId>);

impl Drop for Claim {
    fn drop(&mut self) {
        let mut c = self.0.lock();
        for b in &self.1 {
            c.remove(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_keeps_its_share_while_a_tournament_runs() {
        let c = Capacity::new(64, 0.75);
        assert_eq!(c.tournament_slots(), 48);
        assert_eq!(c.ladder_limit(), 64);
        c.set_tournaments_running(1);
        assert_eq!(c.ladder_limit(), 16);
        let all = Capacity::new(4, 1.0);
        all.set_tournaments_running(2);
        assert_eq!((all.tournament_slots(), all.ladder_limit()), (4, 1));
    }

    #[tokio::test]
    async fn a_claimed_bot_waits_for_its_release() {
        let c = Arc::new(Capacity::new(8, 0.5));
        let first = c.claim(&[1, 2]).await;
        assert!(c.in_tournament(1));
        let c2 = Arc::clone(&c);
        let waiting = tokio::spawn(async move { c2.claim(&[2, 3]).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!waiting.is_finished());
        drop(first);
        let second = waiting
            .await
            .unwrap_or_else(|_| panic!("claim task failed"));
        assert!(c.in_tournament(3) && !c.in_tournament(1));
        drop(second);
        assert!(!c.in_tournament(2));
    }
}
