//! A seat of a REST game as the match runner sees it: the hub is a
//! [`Connector`], and each seat's [`Conn`] carries the bot's `bid`/`play`
//! requests to the runner (with a oneshot for the reply) and keeps what the
//! runner last said of the seat (its `status` reply, whether it has bid,
//! the end of the game) for the requests that only read.
//!
//! Per request the work is small: a request is one message into the
//! seat's inbox; a `status` poll reads the latest reply, already written as
//! JSON, under the seat's own short lock (never held across an await).

use std::sync::{Arc, Mutex, MutexGuard};

use croupier_arena::transport::{Conn, Connector, TransportError};
use croupier_dialects::skullwhist_rest::{HubLine, Refusal};
use croupier_rules::skullwhist::{SkullWhistAction, SkullWhistObservation};
use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{timeout_at, Instant};

/// Requests a bot may have in flight for one seat.
const INBOX: usize = 64;

/// A deadline further away than this is none (no move clock is a day).
const NO_DEADLINE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// What a seat's bot sends the runner.
pub(super) enum Request {
    /// A `bid N` / `play C` line and where its reply goes.
    Line(String, oneshot::Sender<Result<(), Refusal>>),
    /// The bot left the game (it logged in again).
    Abandon,
}

/// What the runner last said of a seat.
#[derive(Debug, Default)]
pub(super) struct View {
    /// The `status` reply (JSON).
    pub(super) status: Arc<str>,
    /// Whether the seat's bid stands.
    pub(super) has_bid: bool,
    /// Whether the game is over.
    pub(super) over: bool,
    /// What it observes and may do (only for house bots).
    pub(super) observation: Option<(SkullWhistObservation, Vec<SkullWhistAction>)>,
}

/// One seat of one game: the bot's side (requests, the view) and the
/// runner's side (the connection, made once).
pub(super) struct SeatLink {
    requests: mpsc::Sender<Request>,
    inbox: Mutex<Option<mpsc::Receiver<Request>>>,
    view: Arc<Mutex<View>>,
    /// Counts the view's changes (only with several instances: the
    /// version of the views written with a game's seats, see `views`).
    changed: Option<Arc<watch::Sender<u64>>>,
}

impl SeatLink {
    /// A seat whose view is `view` until the runner says more.
    pub(super) fn new(view: View, changed: Option<Arc<watch::Sender<u64>>>) -> Arc<SeatLink> {
        let (requests, inbox) = mpsc::channel(INBOX);
        Arc::new(SeatLink {
            requests,
            inbox: Mutex::new(Some(inbox)),
            view: Arc::new(Mutex::new(view)),
            changed,
        })
    }

    pub(super) fn view(&self) -> MutexGuard<'_, View> {
        lock(&self.view)
    }

    /// Puts a request line in the seat's inbox; where its reply comes
    /// (closed when the game ends before the runner answered it), or
    /// `None` when the game is gone.
    pub(super) async fn send(
        &self,
        line: String,
    ) -> Option<oneshot::Receiver<Result<(), Refusal>>> {
        let (tx, rx) = oneshot::channel();
        self.requests.send(Request::Line(line, tx)).await.ok()?;
        Some(rx)
    }

    /// [`SeatLink::send`] without waiting: `Err(Some(line))` when the inbox
    /// is full, `Err(None)` when the game is gone.
    pub(super) fn try_send(
        &self,
        line: String,
    ) -> Result<oneshot::Receiver<Result<(), Refusal>>, Option<String>> {
        let (tx, rx) = oneshot::channel();
        match self.requests.try_send(Request::Line(line, tx)) {
            Ok(()) => Ok(rx),
            Err(mpsc::error::TrySendError::Full(Request::Line(line, _))) => Err(Some(line)),
            Err(_) => Err(None),
        }
    }

    /// Tells the runner the bot left.
    pub(super) async fn abandon(&self) {
        let _ = self.requests.send(Request::Abandon).await;
    }
}

impl Connector for SeatLink {
    fn connect(&self, _match_tag: &str) -> Result<Box<dyn Conn>, TransportError> {
        let inbox = self
            .inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| TransportError::Io("the seat is already connected".into()))?;
        Ok(Box::new(HubConn {
            view: Arc::clone(&self.view),
            changed: self.changed.clone(),
            inbox,
            pending: None,
        }))
    }
}

fn lock(view: &Mutex<View>) -> MutexGuard<'_, View> {
    // A panic elsewhere must not take the seat down with it.
    view.lock().unwrap_or_else(|p| p.into_inner())
}

/// The runner's side of a seat.
struct HubConn {
    view: Arc<Mutex<View>>,
    changed: Option<Arc<watch::Sender<u64>>>,
    inbox: mpsc::Receiver<Request>,
    /// Where the reply to the request being decided goes.
    pending: Option<oneshot::Sender<Result<(), Refusal>>>,
}

impl HubConn {
    fn reply(&mut self, r: Result<(), Refusal>) {
        if let Some(tx) = self.pending.take() {
            // The bot may have gone (its HTTP request dropped): no matter.
            let _ = tx.send(r);
        }
    }

    fn bump(&self) {
        if let Some(c) = &self.changed {
            c.send_modify(|v| *v += 1);
        }
    }

    fn take(&mut self, line: &str) {
        match HubLine::parse(line) {
            Some(HubLine::View { has_bid, status }) => {
                let mut v = lock(&self.view);
                v.status = Arc::from(status);
                v.has_bid = has_bid;
                drop(v);
                self.bump();
            }
            Some(HubLine::Observation(json)) => {
                let parsed = serde_json::from_str::<(SkullWhistObservation, Vec<String>)>(json)
                    .ok()
                    .map(|(obs, legal)| {
                        let legal = legal.iter().filter_map(|a| a.parse().ok()).collect();
                        (obs, legal)
                    });
                lock(&self.view).observation = parsed;
            }
            Some(HubLine::Accepted) => self.reply(Ok(())),
            Some(HubLine::Refused(reason)) => self.reply(Err(Refusal(reason.to_string()))),
            Some(HubLine::Over) => {
                let mut v = lock(&self.view);
                v.over = true;
                v.observation = None;
                drop(v);
                self.bump();
            }
            None => tracing::error!("the 2014 dialect wrote an unknown line: {line}"),
        }
    }
}

impl Conn for HubConn {
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        _deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>> {
        for line in lines {
            self.take(line);
        }
        Box::pin(async { Ok(()) })
    }

    fn recv(&mut self, deadline: Instant) -> BoxFuture<'_, Result<String, TransportError>> {
        Box::pin(async move {
            // Out of turn the runner listens without a deadline (it passes
            // one a year away): no timer for it.
            let got = if deadline > Instant::now() + NO_DEADLINE {
                Ok(self.inbox.recv().await)
            } else {
                timeout_at(deadline, self.inbox.recv()).await
            };
            match got {
                Err(_) => Err(TransportError::Timeout),
                Ok(Some(Request::Line(line, tx))) => {
                    self.pending = Some(tx);
                    Ok(line)
                }
                Ok(Some(Request::Abandon)) => Err(TransportError::Abandoned {
                    kind: "relogin",
                    detail: "the bot logged in again".into(),
                }),
                Ok(None) => Err(TransportError::Disconnected("the hub closed".into())),
            }
        })
    }

    fn speaks_out_of_turn(&self) -> bool {
        true
    }

    fn survives_faults(&self) -> bool {
        true
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        lock(&self.view).over = true;
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line goes in without waiting while the inbox has room; a full
    /// inbox hands the line back (the request then waits for room), and a
    /// game gone says so.
    #[test]
    fn a_line_put_without_waiting_comes_back_when_the_inbox_is_full() {
        let seat = SeatLink::new(View::default(), None);
        for i in 0..INBOX {
            assert!(seat.try_send(format!("play {i}")).is_ok(), "line {i}");
        }
        match seat.try_send("play X".into()) {
            Err(Some(line)) => assert_eq!(line, "play X"),
            other => panic!("a full inbox: {:?}", other.map(|_| ())),
        }
        // The runner's side gone: the game is gone.
        drop(seat.inbox.lock().unwrap().take());
        assert!(matches!(seat.try_send("play Y".into()), Err(None)));
    }
}
