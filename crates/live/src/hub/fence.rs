//! A fence on this instance's notifications (issue 13): a way to know that
//! every notification committed before a moment has been heard.
//!
//! PostgreSQL delivers notifications in the order their transactions
//! committed, and a listener hears its own. So once a notification that
//! this instance sends to itself *after* a request arrived has come back,
//! every notification committed before the request arrived has been heard
//! too: the cache of the other instances' games (`remote_games`) is then
//! at least as fresh as a read of the rows would be, and a `status` can be
//! answered from it.
//!
//! Fences are shared: one notification (`f N`, on this instance's own
//! channel) serves every request that asked before it was sent. A request
//! takes the number of the fence not yet sent; the fence task sends that
//! number next and takes the following one. A lost listener connection
//! loses notifications: every fence sent before it fails (the asker reads
//! the rows instead), and so does one that does not come back in time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{watch, Notify};

/// What the listener has heard of the fences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    /// The highest fence heard (or given up, see [`Fence::lost`]).
    heard: u64,
    /// Bumped by each lost connection.
    epoch: u64,
}

/// How a wait for a fence ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passed {
    /// Every notification committed before the wait began was heard.
    Yes,
    /// The listener lost its connection meanwhile.
    Lost,
    /// The fence did not come back in time (a stalled listener, or a
    /// fence that could not be sent).
    TimedOut,
}

/// This instance's fences (see the module's documentation).
#[derive(Debug)]
pub struct Fence {
    /// The number of the fence not sent yet (moved by the fence task only).
    next: AtomicU64,
    /// The highest fence a request waits for.
    asked: AtomicU64,
    /// A request waits for a fence.
    want: Notify,
    mark: watch::Sender<Mark>,
}

impl Default for Fence {
    fn default() -> Self {
        Fence {
            next: AtomicU64::new(1),
            asked: AtomicU64::new(0),
            want: Notify::new(),
            mark: watch::Sender::new(Mark { heard: 0, epoch: 0 }),
        }
    }
}

impl Fence {
    /// Waits until every notification committed before this call has been
    /// heard ([`Passed::Yes`]), or the listener lost its connection
    /// meanwhile, or `wait` ran out.
    pub async fn pass(&self, wait: Duration) -> Passed {
        let mut mark = self.mark.subscribe();
        let epoch = mark.borrow().epoch;
        // Sent after this load, so committed after the call began.
        let target = self.next.load(Ordering::SeqCst);
        self.asked.fetch_max(target, Ordering::SeqCst);
        self.want.notify_one();
        let passed = tokio::time::timeout(
            wait,
            mark.wait_for(|m| m.heard >= target || m.epoch != epoch),
        )
        .await;
        match passed {
            Ok(Ok(m)) if m.epoch == epoch => Passed::Yes,
            Ok(_) => Passed::Lost,
            Err(_) => Passed::TimedOut,
        }
    }

    /// For the task that sends the fences: waits until a request wants
    /// one; the number to send now (see [`Fence::payload`]).
    pub async fn wanted(&self) -> u64 {
        loop {
            let n = self.next.load(Ordering::SeqCst);
            if self.asked.load(Ordering::SeqCst) >= n {
                return self.next.fetch_add(1, Ordering::SeqCst);
            }
            self.want.notified().await;
        }
    }

    /// The notification of fence `n` (on this instance's own channel).
    pub fn payload(n: u64) -> String {
        format!("f {n}")
    }

    /// The listener heard fence `n` (the rest of an `f` notification).
    pub fn heard(&self, n: &str) {
        let Ok(n) = n.parse::<u64>() else {
            tracing::warn!("a fence that does not parse: {n}");
            return;
        };
        self.mark.send_if_modified(|m| {
            let later = n > m.heard;
            if later {
                m.heard = n;
            }
            later
        });
    }

    /// The listener lost its connection: the fences sent so far may never
    /// come back, and their askers are told so.
    pub fn lost(&self) {
        let sent = self.next.load(Ordering::SeqCst) - 1;
        self.mark.send_modify(|m| {
            m.epoch += 1;
            m.heard = m.heard.max(sent);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const WAIT: Duration = Duration::from_secs(5);

    /// A fence task that sends each wanted fence into `sent`.
    fn sender(f: &Arc<Fence>) -> tokio::sync::mpsc::UnboundedReceiver<u64> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let f = Arc::clone(f);
        tokio::spawn(async move {
            loop {
                let n = f.wanted().await;
                if tx.send(n).is_err() {
                    return;
                }
            }
        });
        rx
    }

    /// A request waiting (at most `wait`) for a fence, in a task.
    fn pass(f: &Arc<Fence>, wait: Duration) -> tokio::task::JoinHandle<Passed> {
        let f = Arc::clone(f);
        tokio::spawn(async move { f.pass(wait).await })
    }

    /// (Tests run on one thread: spawned tasks run in order at each await.)
    #[tokio::test]
    async fn one_fence_serves_every_request_that_asked_before_it_was_sent() {
        let f = Arc::new(Fence::default());
        let mut sent = sender(&f);
        let (one, two) = (pass(&f, WAIT), pass(&f, WAIT));
        assert_eq!(sent.recv().await.unwrap(), 1, "the first fence is 1");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!one.is_finished() && !two.is_finished(), "passed unheard");
        assert!(sent.try_recv().is_err(), "a second fence for one batch");
        f.heard("1");
        assert_eq!(
            (one.await.unwrap(), two.await.unwrap()),
            (Passed::Yes, Passed::Yes)
        );
    }

    #[tokio::test]
    async fn a_later_request_waits_for_a_later_fence() {
        let f = Arc::new(Fence::default());
        let mut sent = sender(&f);
        let first = pass(&f, WAIT);
        assert_eq!(sent.recv().await.unwrap(), 1);
        // Fence 1 is on its way; a request now needs fence 2.
        let second = pass(&f, WAIT);
        assert_eq!(sent.recv().await.unwrap(), 2);
        f.heard("1");
        assert_eq!(first.await.unwrap(), Passed::Yes);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!second.is_finished(), "passed by an earlier fence");
        f.heard("2");
        assert_eq!(second.await.unwrap(), Passed::Yes);
        // Garbage is ignored.
        f.heard("x");
    }

    #[tokio::test]
    async fn a_lost_connection_fails_the_fences_sent_and_later_ones_pass() {
        let f = Arc::new(Fence::default());
        let mut sent = sender(&f);
        let before = pass(&f, WAIT);
        assert_eq!(sent.recv().await.unwrap(), 1);
        f.lost();
        assert_ne!(
            before.await.unwrap(),
            Passed::Yes,
            "a fence sent before a loss passed"
        );
        let lost = pass(&f, WAIT);
        assert_eq!(sent.recv().await.unwrap(), 2);
        f.lost();
        assert_eq!(lost.await.unwrap(), Passed::Lost);
        // The lost fence heard late changes nothing; a new one passes.
        f.heard("1");
        let after = pass(&f, WAIT);
        assert_eq!(sent.recv().await.unwrap(), 3);
        f.heard("3");
        assert_eq!(after.await.unwrap(), Passed::Yes);
        // A fence that never comes back fails in time.
        let silent = pass(&f, Duration::from_millis(100));
        assert_eq!(sent.recv().await.unwrap(), 4);
        assert_eq!(silent.await.unwrap(), Passed::TimedOut);
    }
}
