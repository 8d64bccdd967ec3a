//! Idle watch of one connection: the time since its last reply (or since
//! it opened), and whether a request is being answered. A reply whose body
//! streams (a game's events) is being answered until its body ends
//! ([`BusyBody`]). One whose client does not take what it was sent (hyper
//! holds a piece and asks for no more) is closed after the stream limit; one
//! with nothing to send, a game keeping its watchers waiting, only after the
//! much longer quiet limit (a backstop for a client gone unseen), or the
//! crowded second.
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
    /// Milliseconds from `start` to the end of the last reply, or to the
    /// last piece of a streamed one.
    last: AtomicU64,
    in_flight: AtomicUsize,
    /// Of those in flight, the replies whose heads are out and whose
    /// bodies are still being sent ([`BusyBody`]).
    streaming: AtomicUsize,
    /// Of those, the ones whose last piece hyper has not yet followed with
    /// a request for the next: sent, or stuck before a client that does
    /// not read.
    handed: AtomicUsize,
}

/// How long a connection may wait: for a request head, for its client to
/// take a streamed reply's piece, and for a streamed reply's next piece.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub head: Duration,
    pub stream: Duration,
    pub quiet: Duration,
}

/// What a connection waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// A request head.
    Head,
    /// Its client, to take a streamed reply's piece.
    Client,
    /// A streamed reply's next piece.
    Reply,
}

impl Activity {
    pub fn new() -> Arc<Self> {
        Arc::new(Activity {
            start: Instant::now(),
            last: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            streaming: AtomicUsize::new(0),
            handed: AtomicUsize::new(0),
        })
    }

    /// A request's head has arrived: the connection is not idle until its
    /// reply (no time is read meanwhile).
    pub fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
    }

    /// A request has its reply: the wait for the next head starts now.
    pub fn end(&self) {
        self.touch();
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    fn touch(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.last.store(ms, Ordering::Relaxed);
    }

    /// What the connection waits for and how long it has waited: `None`
    /// while a request is being answered; while a reply streams, since its
    /// last piece; while it waits for a request head, since its last reply
    /// (or its start).
    fn waited(&self) -> Option<(Duration, Wait)> {
        let streaming = self.streaming.load(Ordering::Acquire);
        if self.in_flight.load(Ordering::Acquire) > streaming {
            return None;
        }
        let wait = match (streaming, self.handed.load(Ordering::Acquire)) {
            (0, _) => Wait::Head,
            (_, 0) => Wait::Reply,
            _ => Wait::Client,
        };
        let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
        Some((self.start.elapsed().saturating_sub(last), wait))
    }

    /// Completes once the connection has waited longer than `limits()`
    /// allow, which is asked again at least every half second (they shrink
    /// when the server is crowded).
    pub async fn idle_for(&self, limits: impl Fn() -> Limits) {
        loop {
            let limits = limits();
            let nap = match self.waited() {
                None => Duration::from_millis(500),
                Some((waited, wait)) => {
                    let limit = match wait {
                        Wait::Head => limits.head,
                        Wait::Client => limits.stream,
                        Wait::Reply => limits.quiet,
                    };
                    if waited >= limit {
                        return;
                    }
                    (limit - waited).clamp(Duration::from_millis(100), Duration::from_millis(500))
                }
            };
            tokio::time::sleep(nap).await;
        }
    }
}

/// A streamed reply body that keeps its connection answering
/// until it ends or is dropped (sent whole, or its client gone), each piece
/// it yields counted as activity. hyper asks for the next piece at once
/// while its buffer has room (16 pieces, about 400 KiB), and once it is
/// full, after all of it is in the socket; a piece it holds without asking
/// for the next for the stream limit (its client does not read) has the
/// connection closed. Waiting for the next piece has the quiet limit.
#[derive(Debug)]
pub struct BusyBody {
    inner: Body,
    activity: Arc<Activity>,
    /// Its last piece is hyper's, which has not asked for the next.
    handed: bool,
}

impl BusyBody {
    /// The body of a reply whose head is out: `activity` is answering
    /// until it is dropped.
    pub fn new(inner: Body, activity: Arc<Activity>) -> Self {
        activity.touch();
        activity.streaming.fetch_add(1, Ordering::AcqRel);
        BusyBody {
            inner,
            activity,
            handed: false,
        }
    }

    fn taken(&mut self) {
        if std::mem::take(&mut self.handed) {
            self.activity.handed.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for BusyBody {
    fn drop(&mut self) {
        self.taken();
        self.activity.streaming.fetch_sub(1, Ordering::AcqRel);
        self.activity.end();
    }
}

impl HttpBody for BusyBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        // Asked again: the last piece was taken.
        self.taken();
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(_))) = &frame {
            self.activity.touch();
            self.handed = true;
            self.activity.handed.fetch_add(1, Ordering::AcqRel);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
