//! Pull bots: the server keeps a mailbox per bot. A match's messages for the
//! bot go into it with growing sequence numbers; the bot fetches them with a
//! long poll (`GET /v1/messages`) and answers decisions with
//! `POST /v1/answer`. A mailbox is a [`Connector`] for the match runner, so a
//! pull bot is a seat like any other.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_arena::transport::TransportError;
use croupier_arena::transport::{Conn, Connector};
use croupier_store::BotId;
use futures::future::BoxFuture;
use serde::Serialize;
use tokio::sync::{mpsc, Notify};
use tokio::time::{timeout_at, Instant};

/// Messages kept for a bot that does not fetch them (older ones are dropped).
const MAX_QUEUED: usize = 4096;

/// One message for a pull bot.
#[derive(Debug, Clone, Serialize)]
pub struct Envelope {
    /// Sequence number, growing from 1.
    pub seq: u64,
    /// The match (and seat) it belongs to.
    #[serde(rename = "match")]
    pub tag: String,
    /// The croupier/1 message.
    pub message: serde_json::Value,
}

#[derive(Default)]
struct Inner {
    next_seq: u64,
    queue: VecDeque<Envelope>,
    /// Open matches: where answers go, and the decision awaiting one.
    matches: HashMap<String, (mpsc::Sender<String>, Option<u64>)>,
    polling: usize,
    last_poll: Option<Instant>,
}

/// A pull bot's mailbox.
#[derive(Default)]
pub struct Mailbox {
    inner: Mutex<Inner>,
    arrived: Notify,
}

impl std::fmt::Debug for Mailbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailbox").finish_non_exhaustive()
    }
}

/// Why an answer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// No such match is open for this bot.
    #[error("no match '{0}' is in progress for this bot")]
    NoMatch(String),
    /// The decision is not the one awaited.
    #[error("decision {0} is not awaiting an answer (late, duplicate or unknown)")]
    NotAwaited(u64),
}

impl Mailbox {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere must not take the mailbox down with it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the bot is waiting for work: polling now, or polled within
    /// `recent`.
    pub fn waiting(&self, recent: Duration) -> bool {
        let inner = self.lock();
        inner.polling > 0 || inner.last_poll.is_some_and(|t| t.elapsed() <= recent)
    }

    /// Messages after `after`, waiting up to `wait` for one to arrive.
    /// Messages up to `after` are acknowledged and dropped.
    pub async fn fetch(&self, after: u64, wait: Duration) -> Vec<Envelope> {
        let deadline = Instant::now() + wait;
        {
            let mut inner = self.lock();
            inner.polling += 1;
        }
        let out = loop {
            let notified = self.arrived.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut inner = self.lock();
                // A bot that remembers a sequence number of an earlier server
                // run (numbers restart at 1) gets everything.
                let after = if after > inner.next_seq { 0 } else { after };
                while inner.queue.front().is_some_and(|m| m.seq <= after) {
                    inner.queue.pop_front();
                }
                if !inner.queue.is_empty() {
                    break inner.queue.iter().take(256).cloned().collect();
                }
            }
            if timeout_at(deadline, notified).await.is_err() {
                break Vec::new();
            }
        };
        let mut inner = self.lock();
        inner.polling = inner.polling.saturating_sub(1);
        inner.last_poll = Some(Instant::now());
        out
    }

    /// Delivers an answer to decision `decision` of match `tag`.
    pub fn answer(&self, tag: &str, decision: u64, action: &str) -> Result<(), AnswerError> {
        let mut inner = self.lock();
        let Some((tx, awaited)) = inner.matches.get_mut(tag) else {
            return Err(AnswerError::NoMatch(tag.chars().take(80).collect()));
        };
        if *awaited != Some(decision) {
            return Err(AnswerError::NotAwaited(decision));
        }
        let line = serde_json::json!({ "action": action, "decision": decision }).to_string();
        if tx.try_send(line).is_err() {
            return Err(AnswerError::NotAwaited(decision));
        }
        *awaited = None;
        Ok(())
    }

    fn post(&self, tag: &str, line: &str) {
        let message: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|_| serde_json::Value::String(line.into()));
        let mut inner = self.lock();
        if message.get("type").and_then(serde_json::Value::as_str) == Some("act") {
            let decision = message.get("decision").and_then(serde_json::Value::as_u64);
            if let Some((_, awaited)) = inner.matches.get_mut(tag) {
                *awaited = decision;
            }
        }
        inner.next_seq += 1;
        let seq = inner.next_seq;
        if inner.queue.len() >= MAX_QUEUED {
            inner.queue.pop_front();
        }
        inner.queue.push_back(Envelope {
            seq,
            tag: tag.to_string(),
            message,
        });
        drop(inner);
        self.arrived.notify_waiters();
    }
}

/// The pull bots' mailboxes.
#[derive(Debug, Default)]
pub struct Mailboxes {
    boxes: Mutex<HashMap<BotId, Arc<Mailbox>>>,
}

impl Mailboxes {
    /// The mailbox of `bot` (made on first use).
    pub fn get(&self, bot: BotId) -> Arc<Mailbox> {
        let mut boxes = self.boxes.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(boxes.entry(bot).or_default())
    }

    /// The mailbox of `bot` if it has one.
    pub fn peek(&self, bot: BotId) -> Option<Arc<Mailbox>> {
        let boxes = self.boxes.lock().unwrap_or_else(|e| e.into_inner());
        boxes.get(&bot).cloned()
    }
}

/// Opens match connections through a mailbox.
#[derive(Debug)]
pub struct PullConnector(pub Arc<Mailbox>);

impl Connector for PullConnector {
    fn connect(&self, match_tag: &str) -> Result<Box<dyn Conn>, TransportError> {
        let (tx, rx) = mpsc::channel(4);
        self.0
            .lock()
            .matches
            .insert(match_tag.to_string(), (tx, None));
        Ok(Box::new(PullConn {
            mailbox: Arc::clone(&self.0),
            tag: match_tag.to_string(),
            answers: rx,
        }))
    }
}

/// One match's connection to a pull bot.
struct PullConn {
    mailbox: Arc<Mailbox>,
    tag: String,
    answers: mpsc::Receiver<String>,
}

impl Conn for PullConn {
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        _deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>> {
        for line in lines {
            self.mailbox.post(&self.tag, line);
        }
        Box::pin(async { Ok(()) })
    }

    fn recv(&mut self, deadline: Instant) -> BoxFuture<'_, Result<String, TransportError>> {
        Box::pin(async move {
            match timeout_at(deadline, self.answers.recv()).await {
                Err(_) => Err(TransportError::Timeout),
                Ok(Some(line)) => Ok(line),
                Ok(None) => Err(TransportError::Disconnected("the mailbox closed".into())),
            }
        })
    }

    fn survives_faults(&self) -> bool {
        true
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        self.mailbox.lock().matches.remove(&self.tag);
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_flow_and_answers_must_be_awaited() {
        let mb = Arc::new(Mailbox::default());
        let mut conn = PullConnector(Arc::clone(&mb)).connect("m1").unwrap();
        let later = Instant::now() + Duration::from_secs(1);
        conn.send(
            &[
                r#"{"type":"start","game":"goofspiel"}"#.to_string(),
                r#"{"type":"act","decision":1,"legal":["1"]}"#.to_string(),
            ],
            later,
        )
        .await
        .unwrap();
        let got = mb.fetch(0, Duration::from_millis(10)).await;
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].seq, got[1].seq), (1, 2));
        assert_eq!(got[1].message["decision"], 1);
        // Acknowledged messages are gone.
        assert!(mb.fetch(2, Duration::from_millis(10)).await.is_empty());
        assert_eq!(mb.answer("m1", 2, "1"), Err(AnswerError::NotAwaited(2)));
        assert!(matches!(
            mb.answer("other", 1, "1"),
            Err(AnswerError::NoMatch(_))
        ));
        mb.answer("m1", 1, "1").unwrap();
        // A second answer to the same decision is late.
        assert_eq!(mb.answer("m1", 1, "1"), Err(AnswerError::NotAwaited(1)));
        let line = conn.recv(later).await.unwrap();
        assert_eq!(line, r#"{"action":"1","decision":1}"#);
        assert!(mb.waiting(Duration::from_secs(5)));
        conn.close().await;
        assert!(matches!(
            mb.answer("m1", 1, "1"),
            Err(AnswerError::NoMatch(_))
        ));
    }

    #[tokio::test]
    async fn a_long_poll_wakes_when_a_message_arrives() {
        let mb = Arc::new(Mailbox::default());
        let mut conn = PullConnector(Arc::clone(&mb)).connect("m").unwrap();
        let poll = tokio::spawn({
            let mb = Arc::clone(&mb);
            async move { mb.fetch(0, Duration::from_secs(20)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        conn.send(&[r#"{"type":"end"}"#.to_string()], Instant::now())
            .await
            .unwrap();
        let got = poll.await.unwrap();
        assert_eq!(got.len(), 1);
        assert!(!mb.waiting(Duration::ZERO) || mb.waiting(Duration::from_secs(1)));
    }

    #[tokio::test]
    async fn a_sequence_number_from_an_earlier_run_starts_over() {
        let mb = Arc::new(Mailbox::default());
        let mut conn = PullConnector(Arc::clone(&mb)).connect("m").unwrap();
        conn.send(&[r#"{"type":"start"}"#.to_string()], Instant::now())
            .await
            .unwrap();
        let got = mb.fetch(9_999, Duration::from_millis(10)).await;
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].seq, 1);
    }

    #[tokio::test]
    async fn an_unanswered_decision_times_out() {
        let mb = Arc::new(Mailbox::default());
        let mut conn = PullConnector(mb).connect("m").unwrap();
        let r = conn.recv(Instant::now() + Duration::from_millis(20)).await;
        assert!(matches!(r, Err(TransportError::Timeout)));
    }
}
