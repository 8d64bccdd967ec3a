//! Whether other instances run (issue 13): while an instance is alone its
//! games' seats are not written, and its waiting bots have no rows (see
//! `relay`, whose heartbeat hook keeps this up to date).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::lock::lock;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// Whether another instance may answer requests for this instance's games
/// now. While an instance is alone, its games' seats need not be in the
/// database (nobody else looks for them): each heartbeat
/// looks at the other live instances, and a starting instance tells them
/// (`NOTIFY` "j") and waits one and a half heartbeats before it serves, so
/// that every running instance has seen it by then and writes the seats
/// of the games it dealt alone. An answer older than that counts as "not
/// alone", and wakes the seat writers as a newcomer's notice does (so a
/// lost notice, or a late heartbeat, still has the seats written before
/// the newcomer serves).
#[derive(Debug)]
pub struct Crowd {
    alone_at: Mutex<Option<Instant>>,
    /// How long a heartbeat's "alone" holds (one and a half heartbeats).
    alone_for: Duration,
    /// Bumped each time the instance stops being alone: the games' view
    /// writers write what they skipped.
    joined: watch::Sender<u64>,
    /// Newcomers' notices heard so far (a heartbeat that counted no other
    /// instance while one came does not make this one alone).
    pub(in crate::hub) heard: AtomicU64,
    /// "Alone" ran out without a heartbeat to renew it.
    lapsed: AtomicBool,
}

impl Crowd {
    pub(in crate::hub) fn new(beat: Duration) -> Crowd {
        Crowd {
            alone_at: Mutex::new(None),
            alone_for: beat.mul_f64(1.5),
            joined: watch::channel(0).0,
            heard: AtomicU64::new(0),
            lapsed: AtomicBool::new(false),
        }
    }

    /// A newcomer's notice ("j"): not alone.
    pub(in crate::hub) fn newcomer(&self) {
        self.heard.fetch_add(1, Ordering::SeqCst);
        self.set(false);
    }

    /// A heartbeat's count of the other instances, `others`, looked up
    /// after `heard` newcomers' notices: a notice heard since wins.
    pub(in crate::hub) fn counted(&self, others: i64, heard: u64) {
        let since = self.heard.load(Ordering::SeqCst) != heard;
        self.set(others == 0 && !since);
    }

    /// Ends "alone" if it ran out (no heartbeat renewed it), waking the
    /// view writers; how long until it runs out otherwise (`None`: not
    /// alone).
    pub(in crate::hub) fn lapse(&self) -> Option<Duration> {
        let mut at = lock(&self.alone_at);
        let t = (*at)?;
        let left = self.alone_for.saturating_sub(t.elapsed());
        if left.is_zero() {
            *at = None;
            drop(at);
            self.lapsed.store(true, Ordering::SeqCst);
            self.joined.send_modify(|n| *n += 1);
            return None;
        }
        Some(left)
    }

    /// Whether no other instance can be answering requests now.
    pub fn alone(&self) -> bool {
        lock(&self.alone_at).is_some_and(|t| t.elapsed() < self.alone_for)
    }

    /// How long a starting instance waits, when others run, before it
    /// serves: by then each of them has seen it, or its "alone" expired.
    pub(in crate::hub) fn join_wait(&self) -> Duration {
        self.alone_for + Duration::from_millis(200)
    }

    pub(in crate::hub) fn set(&self, alone: bool) {
        let was = std::mem::replace(&mut *lock(&self.alone_at), alone.then(Instant::now));
        let lapsed = self.lapsed.swap(false, Ordering::SeqCst);
        if alone && (lapsed || was.is_some_and(|t| t.elapsed() >= self.alone_for)) {
            // Meanwhile requests took the paths of several instances.
            tracing::info!("alone again after a late heartbeat");
        }
        if was.is_some() && !alone {
            self.joined.send_modify(|n| *n += 1);
        }
    }

    /// Wakes when the instance stops being alone.
    pub fn joined(&self) -> watch::Receiver<u64> {
        self.joined.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_instance_is_alone_only_while_a_recent_heartbeat_said_so() {
        let crowd = Crowd::new(Duration::from_millis(40));
        // Not alone before the first heartbeat.
        assert!(!crowd.alone());
        let joined = crowd.joined();
        crowd.set(true);
        assert!(crowd.alone());
        // An answer older than one and a half heartbeats no longer holds.
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(!crowd.alone());
        crowd.set(true);
        assert!(!joined.has_changed().unwrap());
        // Another instance appears: the view writers are woken.
        crowd.set(false);
        assert!(!crowd.alone());
        assert!(joined.has_changed().unwrap());
        assert!(crowd.join_wait() > Duration::from_millis(60));
    }

    #[tokio::test]
    async fn alone_running_out_or_a_newcomer_during_a_count_wakes_the_writers() {
        let crowd = Crowd::new(Duration::from_millis(40));
        let mut joined = crowd.joined();
        crowd.set(true);
        let left = crowd.lapse().expect("alone, with time left");
        assert!(left <= Duration::from_millis(60));
        assert!(!joined.has_changed().unwrap());
        // No heartbeat renews it: it runs out, and the writers wake.
        tokio::time::sleep(left + Duration::from_millis(5)).await;
        assert_eq!(crowd.lapse(), None);
        assert!(!crowd.alone());
        assert!(joined.has_changed().unwrap());
        joined.borrow_and_update();
        // A heartbeat's count that began before a newcomer's notice does
        // not make the instance alone again.
        crowd.set(true);
        let heard = crowd.heard.load(Ordering::SeqCst);
        crowd.newcomer();
        assert!(joined.has_changed().unwrap());
        crowd.counted(0, heard);
        assert!(!crowd.alone(), "the count undid the newcomer's notice");
        // A count begun after it does.
        crowd.counted(0, crowd.heard.load(Ordering::SeqCst));
        assert!(crowd.alone());
    }
}
