//! Pull bots: the server keeps a mailbox per bot. A match's messages for the
//! bot go into it with growing sequence numbers; the bot fetches them with a
//! long poll (`GET /v1/messages`) and answers decisions with
//! `POST /v1/answer`. A match opens its connection through the mailbox
//! ([`conn::PullConnector`], a `Connector` for the match runner), so a
//! pull bot is a seat like any other.
//!
//! With several processes on PostgreSQL ([`Mailboxes::share`], issue 13)
//! the messages are rows (`croupier_store::postgres::pull`): a poll on any
//! instance fetches them, woken by a `NOTIFY`; an answer that reaches
//! another process than the match's is relayed to it (`hub::relay`); and
//! whether a bot polls is read from the table, so a worker seats it too.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_arena::transport::TransportError;
use croupier_store::postgres::cluster::Cluster;
use croupier_store::BotId;

use crate::hub::relay::{PullAnswer, PullHome, Relay};
use serde::Serialize;
use tokio::sync::{mpsc, Notify};
use tokio::time::{timeout_at, Instant};

pub mod conn;

/// Most messages kept for a bot that does not fetch them; a match's message
/// beyond them is refused (the match sees the bot unreachable), in memory
/// and in the shared tables alike.
pub const MAX_QUEUED: usize = 4096;

/// The error of a message refused because the bot's mailbox is full.
fn full() -> TransportError {
    TransportError::Disconnected(format!(
        "the pull bot's mailbox is full: {MAX_QUEUED} messages were not fetched"
    ))
}

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
    /// With several processes: the shared tables, and this bot.
    shared: Option<(Arc<Shared>, BotId)>,
}

/// The mailboxes' shared side (several processes on PostgreSQL).
struct Shared {
    db: Cluster,
    relay: Arc<Relay>,
    pollers: Mutex<HashMap<BotId, Polled>>,
    /// The process playing each match answered lately, by (bot, tag): a
    /// match keeps its home while it lasts, so only the first answer of a
    /// match relayed from here reads it from the table.
    homes: Mutex<HashMap<(BotId, String), i64>>,
}

/// A bot seen polling: (polling then, seconds since its last poll ended,
/// when read).
type Polled = (bool, Option<f64>, Instant);

/// How long the pollers read from the table are trusted.
const POLLERS_EVERY: Duration = Duration::from_millis(250);
/// How often (in pollers' reads) the matches of stopped processes are
/// forgotten: every 2 s.
const ORPHANS_EVERY_TICKS: u32 = 8;
/// Most matches' homes remembered (see [`Shared::home`]).
const HOMES_KEPT: usize = 4096;
/// How far back the pollers are read.
const POLLERS_RECENT_SECS: f64 = 120.0;
/// How long an answer relayed to the match's process may take.
const RELAY_WAIT: Duration = Duration::from_secs(5);

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
    /// The process playing the match did not answer (several processes).
    #[error("the server playing match '{0}' did not answer: try again")]
    Unreachable(String),
}

impl Mailbox {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere must not take the mailbox down with it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the bot is waiting for work: polling now, or polled within
    /// `recent`.
    pub fn waiting(&self, recent: Duration) -> bool {
        if let Some((shared, bot)) = &self.shared {
            let pollers = shared.pollers.lock().unwrap_or_else(|e| e.into_inner());
            return pollers.get(bot).is_some_and(|(now, ago, at)| {
                *now || ago
                    .is_some_and(|a| Duration::from_secs_f64(a.max(0.0)) + at.elapsed() <= recent)
            });
        }
        let inner = self.lock();
        inner.polling > 0 || inner.last_poll.is_some_and(|t| t.elapsed() <= recent)
    }

    /// Messages after `after`, waiting up to `wait` for one to arrive.
    /// Messages up to `after` are acknowledged and dropped.
    pub async fn fetch(&self, after: u64, wait: Duration) -> Vec<Envelope> {
        if let Some((shared, bot)) = &self.shared {
            return shared.fetch(*bot, after, wait).await;
        }
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

    /// Delivers an answer, to this process's match or (several processes)
    /// to the process playing it.
    pub async fn answer_anywhere(
        &self,
        tag: &str,
        decision: u64,
        action: &str,
    ) -> Result<(), AnswerError> {
        let local = self.answer(tag, decision, action);
        let Some((shared, bot)) = &self.shared else {
            return local;
        };
        if !matches!(local, Err(AnswerError::NoMatch(_))) {
            return local;
        }
        let no_match = || AnswerError::NoMatch(tag.chars().take(80).collect());
        let home = match shared.home(*bot, tag).await {
            Ok(Some(home)) if home != shared.relay.instance() => home,
            Ok(_) => return Err(no_match()),
            Err(e) => {
                tracing::warn!("pull bot {bot}: the match's process: {e}");
                return Err(AnswerError::Unreachable(tag.chars().take(80).collect()));
            }
        };
        let a = PullAnswer {
            bot: *bot,
            tag: tag.to_string(),
            decision,
            action: action.to_string(),
        };
        let reply = shared.relay.ask_pull(home, &a, RELAY_WAIT).await;
        if !matches!(reply.as_deref(), Some("ok" | "late")) {
            // The match is over there, or its process is gone.
            shared.forget_home(*bot, tag);
        }
        match reply.as_deref() {
            Some("ok") => Ok(()),
            Some("late") => Err(AnswerError::NotAwaited(decision)),
            Some(_) => Err(no_match()),
            None => Err(AnswerError::Unreachable(tag.chars().take(80).collect())),
        }
    }

    /// Notes a message for match `tag` (the decision it awaits, if it asks
    /// for one); the message as JSON.
    fn note(&self, tag: &str, line: &str) -> serde_json::Value {
        let message: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|_| serde_json::Value::String(line.into()));
        if message.get("type").and_then(serde_json::Value::as_str) == Some("act") {
            let decision = message.get("decision").and_then(serde_json::Value::as_u64);
            if let Some((_, awaited)) = self.lock().matches.get_mut(tag) {
                *awaited = decision;
            }
        }
        message
    }

    /// Queues `lines` of match `tag`, all or none: refused if they would
    /// not fit within [`MAX_QUEUED`].
    fn post(&self, tag: &str, lines: &[String]) -> Result<(), TransportError> {
        if self.lock().queue.len() + lines.len() > MAX_QUEUED {
            return Err(full());
        }
        let messages: Vec<serde_json::Value> = lines.iter().map(|l| self.note(tag, l)).collect();
        let mut inner = self.lock();
        for message in messages {
            inner.next_seq += 1;
            let seq = inner.next_seq;
            inner.queue.push_back(Envelope {
                seq,
                tag: tag.to_string(),
                message,
            });
        }
        drop(inner);
        self.arrived.notify_waiters();
        Ok(())
    }
}

/// The pull bots' mailboxes.
#[derive(Default)]
pub struct Mailboxes {
    boxes: Mutex<HashMap<BotId, Arc<Mailbox>>>,
    shared: std::sync::OnceLock<Arc<Shared>>,
}

impl std::fmt::Debug for Mailboxes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailboxes")
            .field("shared", &self.shared.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Mailboxes {
    /// Shares the mailboxes with the other processes on the database of
    /// `relay` (issue 13): messages as rows, answers relayed, pollers read
    /// from the table. Call before any mailbox is made.
    pub fn share(self: &Arc<Self>, relay: Arc<Relay>) {
        let shared = Arc::new(Shared {
            db: relay.db().clone(),
            relay: Arc::clone(&relay),
            pollers: Mutex::new(HashMap::new()),
            homes: Mutex::new(HashMap::new()),
        });
        if self.shared.set(Arc::clone(&shared)).is_err() {
            return;
        }
        relay.serve_pulls(Arc::new(Answers(Arc::downgrade(self))));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(POLLERS_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut ticks = 0u32;
            loop {
                tick.tick().await;
                ticks = ticks.wrapping_add(1);
                match shared.db.pull_pollers(POLLERS_RECENT_SECS).await {
                    Ok(rows) => {
                        let now = Instant::now();
                        let map = rows
                            .into_iter()
                            .map(|(bot, polling, ago)| (bot, (polling, ago, now)))
                            .collect();
                        *shared.pollers.lock().unwrap_or_else(|e| e.into_inner()) = map;
                    }
                    Err(e) => tracing::warn!("pull bots: who polls: {e}"),
                }
                // A stopped process's matches only refuse answers sooner:
                // once every few seconds is enough.
                if ticks.is_multiple_of(ORPHANS_EVERY_TICKS) {
                    if let Err(e) = shared.db.pull_clear_orphans().await {
                        tracing::warn!("pull bots: matches of stopped processes: {e}");
                    }
                }
            }
        });
    }

    /// The mailbox of `bot` (made on first use).
    pub fn get(&self, bot: BotId) -> Arc<Mailbox> {
        let mut boxes = self.boxes.lock().unwrap_or_else(|e| e.into_inner());
        let shared = self.shared.get();
        Arc::clone(boxes.entry(bot).or_insert_with(|| {
            Arc::new(Mailbox {
                shared: shared.map(|s| (Arc::clone(s), bot)),
                ..Mailbox::default()
            })
        }))
    }

    /// The mailbox of `bot` if it has one (with several processes: if the
    /// bot polled lately, on any instance).
    pub fn peek(&self, bot: BotId) -> Option<Arc<Mailbox>> {
        if let Some(shared) = self.shared.get() {
            let polled = shared
                .pollers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains_key(&bot);
            if polled {
                return Some(self.get(bot));
            }
        }
        let boxes = self.boxes.lock().unwrap_or_else(|e| e.into_inner());
        boxes.get(&bot).cloned()
    }

    /// Pull bots of this process waiting for work: polling now, or polled
    /// within `recent` (for monitoring).
    pub fn online(&self, recent: Duration) -> usize {
        let boxes: Vec<Arc<Mailbox>> = self
            .boxes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        boxes.iter().filter(|m| m.waiting(recent)).count()
    }
}

/// Answers relayed to this process by the others.
struct Answers(std::sync::Weak<Mailboxes>);

impl PullHome for Answers {
    fn answer(&self, bot: BotId, tag: &str, decision: u64, action: &str) -> String {
        let Some(boxes) = self.0.upgrade() else {
            return "gone".into();
        };
        let Some(mailbox) = boxes
            .boxes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&bot)
            .cloned()
        else {
            return "gone".into();
        };
        match mailbox.answer(tag, decision, action) {
            Ok(()) => "ok".into(),
            Err(AnswerError::NotAwaited(_)) => "late".into(),
            Err(_) => "gone".into(),
        }
    }
}

impl Shared {
    /// The process playing `bot`'s match `tag` (remembered once read).
    async fn home(&self, bot: BotId, tag: &str) -> Result<Option<i64>, croupier_store::StoreError> {
        let key = (bot, tag.to_string());
        if let Some(home) = self
            .homes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(Some(*home));
        }
        let home = self.db.pull_home(bot, tag).await?;
        if let Some(home) = home {
            let mut homes = self.homes.lock().unwrap_or_else(|e| e.into_inner());
            if homes.len() >= HOMES_KEPT {
                homes.clear();
            }
            homes.insert(key, home);
        }
        Ok(home)
    }

    fn forget_home(&self, bot: BotId, tag: &str) {
        self.homes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(bot, tag.to_string()));
    }

    async fn fetch(&self, bot: BotId, after: u64, wait: Duration) -> Vec<Envelope> {
        let deadline = Instant::now() + wait;
        let waker = self.relay.pull_waker(bot);
        let last = match self.db.pull_poll_start(bot, wait.as_secs_f64()).await {
            Ok(last) => last,
            Err(e) => {
                tracing::warn!("pull bot {bot}: cannot poll: {e}");
                tokio::time::sleep(wait.min(Duration::from_secs(1))).await;
                return Vec::new();
            }
        };
        // A bot that remembers a sequence number of an earlier run of the
        // database's live tables gets everything.
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let after = if after > last { 0 } else { after };
        let out = loop {
            let notified = waker.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.db.pull_fetch(bot, after, 256).await {
                Ok(rows) if !rows.is_empty() => {
                    break rows
                        .into_iter()
                        .map(|(seq, tag, message)| Envelope {
                            seq: u64::try_from(seq).unwrap_or(0),
                            tag,
                            message: serde_json::from_str(&message)
                                .unwrap_or(serde_json::Value::String(message)),
                        })
                        .collect();
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("pull bot {bot}: cannot fetch: {e}"),
            }
            let now = Instant::now();
            if now >= deadline {
                break Vec::new();
            }
            // A lost notification is made good by looking again each second.
            let step = (deadline - now).min(Duration::from_secs(1));
            let _ = tokio::time::timeout(step, notified).await;
        };
        if let Err(e) = self.db.pull_poll_end(bot).await {
            tracing::warn!("pull bot {bot}: {e}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::conn::PullConnector;
    use super::*;
    use croupier_arena::transport::Connector;

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
    async fn a_full_mailbox_refuses_messages_until_the_bot_fetches() {
        let mb = Arc::new(Mailbox::default());
        let mut conn = PullConnector(Arc::clone(&mb)).connect("m").unwrap();
        let later = Instant::now() + Duration::from_secs(1);
        let batch: Vec<String> = (0..MAX_QUEUED - 1)
            .map(|i| format!(r#"{{"type":"info","i":{i}}}"#))
            .collect();
        conn.send(&batch, later).await.unwrap();
        // Two more do not fit: neither is queued.
        let two = vec![r#"{"type":"a"}"#.to_string(), r#"{"type":"b"}"#.to_string()];
        let refused = conn.send(&two, later).await.unwrap_err();
        assert!(refused.to_string().contains("mailbox is full"), "{refused}");
        conn.send(&two[..1], later).await.unwrap();
        assert!(conn.send(&two[..1], later).await.is_err());
        // The oldest message is still there: nothing was dropped.
        let got = mb.fetch(0, Duration::from_millis(10)).await;
        assert_eq!((got.len(), got[0].seq), (256, 1));
        assert_eq!(got[0].message["i"], 0);
        // Acknowledged messages make room again.
        let got = mb.fetch(10, Duration::from_millis(10)).await;
        assert_eq!(got[0].seq, 11);
        let ten: Vec<String> = (0..10).map(|_| r#"{"type":"c"}"#.to_string()).collect();
        conn.send(&ten, later).await.unwrap();
        assert!(conn.send(&two[..1], later).await.is_err());
    }

    #[tokio::test]
    async fn an_unanswered_decision_times_out() {
        let mb = Arc::new(Mailbox::default());
        let mut conn = PullConnector(mb).connect("m").unwrap();
        let r = conn.recv(Instant::now() + Duration::from_millis(20)).await;
        assert!(matches!(r, Err(TransportError::Timeout)));
    }
}
