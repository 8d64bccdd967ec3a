//! A request body that fails once it has waited for its next piece longer
//! than the body timeout (issue 18), with its timer armed only while it
//! waits.
//!
//! `tower_http`'s `RequestBodyTimeoutLayer`, used before, set a timer for
//! every piece before reading it, and so registered and cancelled a timer
//! in Tokio's wheel about twice a request even when the whole body had
//! arrived with its head, as a bot's small JSON body does (issue 53: the
//! timer wheel was about 0.3 µs of the 11 µs a `status` costs). Here the
//! piece is read first, and a timer is set only when the body has to
//! wait.

use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Frame, SizeHint};
use tokio::time::Sleep;

/// The error of a body that stalled.
#[derive(Debug, thiserror::Error)]
#[error("the request body stalled for longer than {0:?}")]
pub struct Stalled(pub Duration);

/// `B`, failing with [`Stalled`] when it waits `timeout` for a piece.
#[derive(Debug)]
pub struct StallBody<B> {
    inner: B,
    timeout: Duration,
    /// Set while the body waits for its next piece.
    waiting: Option<Pin<Box<Sleep>>>,
    /// Timers set so far: one per wait, none for a body that was there.
    #[cfg(test)]
    armed: u32,
}

impl<B> StallBody<B> {
    pub fn new(inner: B, timeout: Duration) -> Self {
        StallBody {
            inner,
            timeout,
            waiting: None,
            #[cfg(test)]
            armed: 0,
        }
    }
}

impl<B> Body for StallBody<B>
where
    B: Body + Unpin,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    type Data = B::Data;
    type Error = Box<dyn StdError + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            this.waiting = None;
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let timeout = this.timeout;
        #[cfg(test)]
        if this.waiting.is_none() {
            this.armed += 1;
        }
        let waiting = this
            .waiting
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match waiting.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(Stalled(timeout))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;
    use http_body_util::{BodyExt, StreamBody};

    type Piece = Result<Frame<Bytes>, std::io::Error>;

    /// A body whose pieces come from the returned sender.
    fn channel_body() -> (
        tokio::sync::mpsc::Sender<Piece>,
        StallBody<impl Body<Data = Bytes, Error = std::io::Error> + Unpin>,
    ) {
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let pieces = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
        let body = StallBody::new(StreamBody::new(pieces), Duration::from_millis(200));
        (tx, body)
    }

    #[tokio::test(start_paused = true)]
    async fn pieces_within_the_timeout_pass_and_a_stall_fails() {
        let (tx, mut body) = channel_body();
        // Three pieces, each 150 ms after the last: 450 ms in all, longer
        // than the timeout, but no single wait is.
        let sender = tokio::spawn(async move {
            for piece in ["a", "b", "c"] {
                tokio::time::sleep(Duration::from_millis(150)).await;
                tx.send(Ok(Frame::data(Bytes::from(piece)))).await.unwrap();
            }
            // Then nothing for longer than the timeout.
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(tx);
        });
        let mut read = String::new();
        let error = loop {
            match body.frame().await {
                Some(Ok(f)) => read.push_str(std::str::from_utf8(&f.into_data().unwrap()).unwrap()),
                Some(Err(e)) => break e,
                None => panic!("the body ended instead of stalling"),
            }
        };
        assert_eq!(read, "abc");
        // A timer for each wait: before each piece and for the stall.
        assert_eq!(body.armed, 4);
        assert!(error.downcast_ref::<Stalled>().is_some(), "{error}");
        sender.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_has_arrived_sets_no_timer_and_ends() {
        let (tx, mut body) = channel_body();
        tx.send(Ok(Frame::data(Bytes::from("whole"))))
            .await
            .unwrap();
        drop(tx);
        let first = body.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), Bytes::from("whole"));
        assert_eq!(body.armed, 0, "a timer was set for a piece that was there");
        assert!(body.frame().await.is_none());
    }
}
