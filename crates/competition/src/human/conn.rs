//! A person's seat as a [`Conn`]: the match runner talks croupier/1 to it
//! like to any bot. What it sends becomes the person's view (the events the
//! seat may see, its observation, its legal moves); the person's choice,
//! posted from the page, is the answer.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use croupier_arena::transport::{Conn, Connector, TransportError};
use croupier_dialects::croupier::ToBot;
use croupier_rules::Game;
use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::time::{timeout_at, Instant};

use super::table::Table;

/// Opens the person's one connection for the match.
pub struct PersonConnector<G> {
    table: Arc<Table>,
    answers: Mutex<Option<mpsc::Receiver<String>>>,
    _game: PhantomData<fn() -> G>,
}

impl<G> std::fmt::Debug for PersonConnector<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersonConnector")
            .field("game", &self.table.id)
            .finish_non_exhaustive()
    }
}

impl<G> PersonConnector<G> {
    /// The connector of `table`, whose answers arrive on `answers`.
    pub fn new(table: Arc<Table>, answers: mpsc::Receiver<String>) -> Self {
        PersonConnector {
            table,
            answers: Mutex::new(Some(answers)),
            _game: PhantomData,
        }
    }
}

impl<G: Game> Connector for PersonConnector<G> {
    fn connect(&self, _match_tag: &str) -> Result<Box<dyn Conn>, TransportError> {
        let answers = self
            .answers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| TransportError::Disconnected("the person's seat is taken".into()))?;
        Ok(Box::new(PersonConn::<G> {
            table: Arc::clone(&self.table),
            answers,
            _game: PhantomData,
        }))
    }
}

struct PersonConn<G> {
    table: Arc<Table>,
    answers: mpsc::Receiver<String>,
    _game: PhantomData<fn() -> G>,
}

impl<G: Game> Conn for PersonConn<G> {
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        _deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>> {
        self.table.update(|v| {
            for line in lines {
                match serde_json::from_str::<ToBot<serde_json::Value, G::Event>>(line) {
                    Ok(ToBot::Start { .. }) => {}
                    Ok(ToBot::Event { event }) => v.events.push(event.to_string()),
                    Ok(ToBot::Act {
                        decision,
                        observation,
                        legal,
                        deadline_ms,
                    }) => {
                        v.observation = Some(observation);
                        v.legal = legal;
                        v.decision = Some(decision);
                        v.deadline_ms = Some(deadline_ms);
                        v.asked_at = Some(super::table::unix_ms());
                    }
                    Ok(ToBot::End { outcome }) => {
                        v.outcome = serde_json::to_value(outcome).ok();
                    }
                    Err(e) => tracing::warn!("person seat: unreadable line: {e}"),
                }
            }
        });
        Box::pin(async { Ok(()) })
    }

    fn recv(&mut self, deadline: Instant) -> BoxFuture<'_, Result<String, TransportError>> {
        Box::pin(async move {
            let r = match timeout_at(deadline, self.answers.recv()).await {
                Err(_) => {
                    self.table.update(|v| {
                        v.notice = Some("Your time ran out: the rules chose for you.".into());
                    });
                    Err(TransportError::Timeout)
                }
                Ok(Some(line)) => Ok(line),
                Ok(None) => Err(TransportError::Disconnected("the page closed".into())),
            };
            self.table.update(|v| {
                v.legal.clear();
                v.decision = None;
            });
            r
        })
    }

    fn survives_faults(&self) -> bool {
        true
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}
