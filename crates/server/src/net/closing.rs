//! Telling a connection to finish: all of them when the server stops (each
//! finishes the request it is answering, and takes no other), or one whose
//! idle watch ran out (it is closed).
//!
//! hyper-util's `GracefulShutdown` did the first with one `watch` channel
//! for all connections, whose `changed()` every connection's task polled
//! each time it woke, under the channel's one lock; and the idle watch's
//! timer was polled beside the connection too, on every wake. Together
//! about 2% of a server's CPU answering `status` calls (issue 53). Here a
//! connection's watch ([`Told`]) is two flags and a waker of its own: each
//! poll reads atomics, the waker is stored once, and the idle watch runs in
//! a task of its own. The one lock is taken when a connection opens and
//! closes, and at the shutdown.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::task::AtomicWaker;
use tokio::sync::Notify;

/// The connections of one listener, and whether they were told to finish.
#[derive(Debug, Default)]
pub struct Closing {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    told: AtomicBool,
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Flags>>>,
    /// Woken when the last open connection has closed.
    none_open: Notify,
}

/// One connection's flags.
#[derive(Debug, Default)]
struct Flags {
    /// Its task's waker. The task is the only one to poll its [`Told`],
    /// and a task's waker wakes that task wherever it runs: stored once,
    /// and again after each wake (which takes it).
    waker: AtomicWaker,
    /// Its idle watch ran out.
    idle: AtomicBool,
}

/// Why a connection is to finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The server stops: the request in hand gets its reply.
    Stopping,
    /// Its idle watch ran out: it is closed.
    Idle,
}

/// One connection's watch, for its task only: ready with [`Why::Stopping`]
/// once the server stops (once), and with [`Why::Idle`] when its idle watch
/// ran out. The connection counts as open until it is dropped.
#[derive(Debug)]
pub struct Told {
    inner: Arc<Inner>,
    id: u64,
    flags: Arc<Flags>,
    registered: bool,
    stopping_seen: bool,
}

/// The idle watch's side of a connection's [`Told`].
#[derive(Debug)]
pub struct IdleOut(Arc<Flags>);

impl IdleOut {
    /// The connection has been idle too long: its task closes it.
    pub fn close(&self) {
        self.0.idle.store(true, Ordering::Release);
        self.0.waker.wake();
    }
}

impl Closing {
    /// No connection yet, none told.
    pub fn new() -> Self {
        Closing::default()
    }

    /// The watch of a connection just opened, and its idle watch's side.
    pub fn watch(&self) -> (Told, IdleOut) {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let flags = Arc::new(Flags::default());
        lock(&self.inner.open).insert(id, Arc::clone(&flags));
        let told = Told {
            inner: Arc::clone(&self.inner),
            id,
            flags: Arc::clone(&flags),
            registered: false,
            stopping_seen: false,
        };
        (told, IdleOut(flags))
    }

    /// Connections open (their watches not dropped).
    #[cfg(test)]
    pub fn open(&self) -> usize {
        lock(&self.inner.open).len()
    }

    /// Tells every connection, open now or opened later, to finish, then
    /// waits until none is open.
    pub async fn shutdown(&self) {
        self.inner.told.store(true, Ordering::SeqCst);
        for flags in lock(&self.inner.open).values() {
            flags.waker.wake();
        }
        loop {
            let none = self.inner.none_open.notified();
            tokio::pin!(none);
            none.as_mut().enable();
            if lock(&self.inner.open).is_empty() {
                return;
            }
            none.await;
        }
    }
}

impl Told {
    fn why(&mut self) -> Option<Why> {
        if self.flags.idle.load(Ordering::Acquire) {
            return Some(Why::Idle);
        }
        if !self.stopping_seen && self.inner.told.load(Ordering::Acquire) {
            self.stopping_seen = true;
            return Some(Why::Stopping);
        }
        None
    }
}

impl Future for Told {
    type Output = Why;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Why> {
        if let Some(why) = self.why() {
            // A wake took the waker: stored again at the next poll.
            self.registered = false;
            return Poll::Ready(why);
        }
        if !self.registered {
            self.flags.waker.register(cx.waker());
            self.registered = true;
            // Told between the first look and the waker's registration.
            if let Some(why) = self.why() {
                self.registered = false;
                return Poll::Ready(why);
            }
        }
        Poll::Pending
    }
}

impl Drop for Told {
    fn drop(&mut self) {
        let mut open = lock(&self.inner.open);
        open.remove(&self.id);
        if open.is_empty() {
            self.inner.none_open.notify_waiters();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn every_open_connection_is_told_and_the_shutdown_waits_for_them() {
        let closing = Arc::new(Closing::new());
        let mut tasks = Vec::new();
        for _ in 0..3 {
            let (told, _) = closing.watch();
            tasks.push(tokio::spawn(told));
        }
        // A connection's watch that is never told keeps the shutdown
        // waiting until it is dropped.
        let lingering = closing.watch();
        assert_eq!(closing.open(), 4);
        tokio::task::yield_now().await;
        let stop = tokio::spawn({
            let closing = Arc::clone(&closing);
            async move { closing.shutdown().await }
        });
        for t in tasks {
            let why = tokio::time::timeout(Duration::from_secs(5), t)
                .await
                .expect("told")
                .unwrap();
            assert_eq!(why, Why::Stopping);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!stop.is_finished(), "one connection is still open");
        drop(lingering);
        tokio::time::timeout(Duration::from_secs(5), stop)
            .await
            .expect("the shutdown ends once none is open")
            .unwrap();
        assert_eq!(closing.open(), 0);
    }

    #[tokio::test]
    async fn a_connection_opened_after_the_shutdown_is_told_at_once() {
        let closing = Closing::new();
        closing.shutdown().await;
        let (told, _) = closing.watch();
        let why = tokio::time::timeout(Duration::from_secs(5), told)
            .await
            .expect("told at once");
        assert_eq!(why, Why::Stopping);
    }

    #[tokio::test]
    async fn an_idle_connection_is_told_before_and_after_the_shutdown() {
        let closing = Arc::new(Closing::new());
        let (mut told, idle) = closing.watch();
        let waiting = tokio::spawn(async move {
            let first = (&mut told).await;
            let second = (&mut told).await;
            (first, second)
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "told before anything happened");
        // The server stops; the connection finishes its request, then its
        // idle watch runs out (each is a wake of the waiting task).
        let stop = tokio::spawn({
            let closing = Arc::clone(&closing);
            async move { closing.shutdown().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        idle.close();
        let (first, second) = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken twice")
            .unwrap();
        assert_eq!((first, second), (Why::Stopping, Why::Idle));
        tokio::time::timeout(Duration::from_secs(5), stop)
            .await
            .expect("the connection's task ended")
            .unwrap();
    }
}
