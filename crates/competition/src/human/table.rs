//! One game a person plays: what they see of it ([`View`]) and their
//! answers, checked against the legal moves they were shown.

use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard};

use croupier_rules::GameKind;
use croupier_store::{BotId, GameId};
use serde::Serialize;
use tokio::sync::{mpsc, watch};

/// What the person sees of their game.
#[derive(Debug, Clone, Default, Serialize)]
pub struct View {
    /// Events the person's seat may see, as transcript lines, in order.
    pub events: Vec<String>,
    /// The person's observation when last asked to act.
    pub observation: Option<serde_json::Value>,
    /// Legal moves now (empty unless it is the person's turn).
    pub legal: Vec<String>,
    /// The decision the moves answer.
    pub decision: Option<u64>,
    /// Milliseconds the person had for this decision.
    pub deadline_ms: Option<u64>,
    /// When the person was asked (ms since the epoch).
    pub asked_at: Option<u64>,
    /// The outcome (scores, ranks) once over.
    pub outcome: Option<serde_json::Value>,
    /// `running`, `finished` or `aborted`.
    pub status: String,
    /// Something to tell the person (a refused move, a timeout, an abort).
    pub notice: Option<String>,
    /// Grows with every change (the page's script listens for it).
    pub version: u64,
}

/// One game a person plays.
#[derive(Debug)]
pub struct Table {
    /// Stored game id.
    pub id: GameId,
    /// The game.
    pub game: GameKind,
    /// The person's seat.
    pub seat: usize,
    /// Seat names.
    pub seats: Vec<String>,
    /// Who plays (`guest` or an owner's name).
    pub player: String,
    /// The cookie that may see and play the game.
    pub(super) key: String,
    pub(super) client: IpAddr,
    /// Registered opponents (for the per-bot bound).
    pub(super) bots: Vec<BotId>,
    pub(super) view: Mutex<View>,
    pub(super) changed: watch::Sender<u64>,
    pub(super) answers: mpsc::Sender<String>,
}

/// Why a move was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// Not the person's turn, or an old page.
    #[error("it is not your turn (or the page was old); here is the game now")]
    NotNow,
    /// Not one of the legal moves.
    #[error("'{0}' is not one of your legal moves")]
    Illegal(String),
}

impl Table {
    fn lock(&self) -> MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the view and tells listeners.
    pub fn update(&self, f: impl FnOnce(&mut View)) {
        let version = {
            let mut v = self.lock();
            f(&mut v);
            v.version += 1;
            v.version
        };
        self.changed.send_replace(version);
    }

    /// The view now.
    pub fn view(&self) -> View {
        self.lock().clone()
    }

    /// Whether `key` (a cookie) may see and play this game.
    pub fn belongs_to(&self, key: &str) -> bool {
        !key.is_empty() && self.key == key
    }

    /// A receiver that changes with the view.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// The person's move `action` for `decision`.
    pub fn answer(&self, decision: u64, action: &str) -> Result<(), MoveError> {
        let mut v = self.lock();
        if v.decision != Some(decision) {
            return Err(MoveError::NotNow);
        }
        if !v.legal.iter().any(|l| l == action) {
            return Err(MoveError::Illegal(action.chars().take(40).collect()));
        }
        let line = serde_json::json!({ "action": action, "decision": decision }).to_string();
        self.answers.try_send(line).map_err(|_| MoveError::NotNow)?;
        v.legal.clear();
        v.decision = None;
        v.notice = None;
        v.version += 1;
        let version = v.version;
        drop(v);
        self.changed.send_replace(version);
        Ok(())
    }

    pub(super) fn running(&self) -> bool {
        self.lock().status == "running"
    }
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
