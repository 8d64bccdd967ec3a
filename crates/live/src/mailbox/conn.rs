//! A pull bot's seat in a match: the [`Connector`] that opens a match's
//! connection through the bot's mailbox, and that connection, which posts
//! the match's messages to the mailbox (or the shared tables) and takes
//! the bot's answers from it.

use std::sync::Arc;

use croupier_arena::transport::TransportError;
use croupier_arena::transport::{Conn, Connector};
use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::time::{timeout_at, Instant};

use super::{full, Mailbox, MAX_QUEUED};

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
            opened: false,
        }))
    }
}

/// One match's connection to a pull bot.
struct PullConn {
    mailbox: Arc<Mailbox>,
    tag: String,
    answers: mpsc::Receiver<String>,
    /// Whether the match is recorded in the shared tables (several
    /// processes: with its first messages).
    opened: bool,
}

impl Conn for PullConn {
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        _deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>> {
        let Some((shared, bot)) = self.mailbox.shared.clone() else {
            let posted = self.mailbox.post(&self.tag, lines);
            return Box::pin(async { posted });
        };
        let messages: Vec<String> = lines
            .iter()
            .map(|l| self.mailbox.note(&self.tag, l).to_string())
            .collect();
        let home = (!self.opened).then(|| shared.relay.instance());
        self.opened = true;
        Box::pin(async move {
            let posted = shared
                .db
                .pull_post(bot, &self.tag, &messages, home, MAX_QUEUED as i64)
                .await
                .map_err(|e| TransportError::Io(format!("the pull bot's mailbox: {e}")))?;
            if !posted {
                // Not recorded: the first messages go again with the next send.
                if home.is_some() {
                    self.opened = false;
                }
                return Err(full());
            }
            Ok(())
        })
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

    fn close(mut self: Box<Self>) -> BoxFuture<'static, ()> {
        let tag = std::mem::take(&mut self.tag);
        self.mailbox.lock().matches.remove(&tag);
        let shared = self.mailbox.shared.clone();
        Box::pin(async move {
            if let Some((shared, bot)) = shared {
                if let Err(e) = shared.db.pull_close(bot, &tag).await {
                    tracing::warn!("pull bot {bot}: cannot close match {tag}: {e}");
                }
            }
        })
    }
}

impl Drop for PullConn {
    /// A match dropped without closing its connection (abandoned: the
    /// process stops, or lost its lease) closes it all the same.
    fn drop(&mut self) {
        if self.tag.is_empty() {
            return; // closed
        }
        let tag = std::mem::take(&mut self.tag);
        self.mailbox.lock().matches.remove(&tag);
        let (Some((shared, bot)), Ok(rt)) = (
            self.mailbox.shared.clone(),
            tokio::runtime::Handle::try_current(),
        ) else {
            return;
        };
        rt.spawn(async move {
            if let Err(e) = shared.db.pull_close(bot, &tag).await {
                tracing::warn!("pull bot {bot}: cannot close match {tag}: {e}");
            }
        });
    }
}
