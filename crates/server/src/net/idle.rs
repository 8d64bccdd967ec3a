//! Idle watch of one connection: the time since its last reply (or since
//! it opened), and whether a request is being answered. A reply whose body
//! streams (server-sent events) is being answered until its stream ends
//! ([`BusyBody`]): a spectator's stream is not closed as idle.
//!
//! It is also the limit on a request head's time: a connection that has
//! not given its next request's whole head within the header timeout of
//! its last reply is closed, idle or half sent alike. Bytes read do not
//! count as activity: a head sent a byte at a time gets no longer than a
//! head never sent. (hyper's own `header_read_timeout` did this before with
//! a timer per request; here no timer is set per request, issue 53.)

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use hyper::body::{Body as HttpBody, Frame, SizeHint};

use tokio::time::Instant;

/// The activity of one connection.
#[derive(Debug)]
pub struct Activity {
    start: Instant,
    /// Milliseconds from `start` to the end of the last reply.
    last: AtomicU64,
    in_flight: AtomicUsize,
}

impl Activity {
    pub fn new() -> Arc<Self> {
        Arc::new(Activity {
            start: Instant::now(),
            last: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
        })
    }

    /// A request's head has arrived: the connection is not idle until its
    /// reply (no time is read: `idle` is zero meanwhile).
    pub fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
    }

    /// A request has its reply: the wait for the next head starts now.
    pub fn end(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.last.store(ms, Ordering::Relaxed);
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    /// How long the connection has waited for its client with no request
    /// being answered (zero while one is).
    pub fn idle(&self) -> Duration {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return Duration::ZERO;
        }
        let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }

    /// Completes once the connection has been idle for `limit()`, which is
    /// asked again at least every half second (it shrinks when the server
    /// is crowded).
    pub async fn idle_for(&self, limit: impl Fn() -> Duration) {
        loop {
            let idle = self.idle();
            let limit = limit();
            if idle >= limit {
                return;
            }
            let nap = (limit - idle).clamp(Duration::from_millis(100), Duration::from_millis(500));
            tokio::time::sleep(nap).await;
        }
    }
}

/// A reply being sent: dropped, the reply has ended.
#[derive(Debug)]
pub struct Busy(Arc<Activity>);

impl Busy {
    /// For a reply whose head is out and whose body streams: `activity`
    /// stays answering until the guard is dropped.
    pub fn until_dropped(activity: Arc<Activity>) -> Busy {
        Busy(activity)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A streamed reply body that keeps its connection answering until it ends
/// or is dropped (sent whole, or its client gone).
#[derive(Debug)]
pub struct BusyBody {
    inner: Body,
    _busy: Busy,
}

impl BusyBody {
    pub fn new(inner: Body, busy: Busy) -> Self {
        BusyBody { inner, _busy: busy }
    }
}

impl HttpBody for BusyBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
