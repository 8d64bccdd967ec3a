//! Live games: the public events of every game in progress that the server
//! runs with `play_live` (ladder matches and games people play), for the
//! spectators' pages and the `/v1/games/{id}/events` stream (issue 16).
//!
//! Each game has a broadcast channel with a bounded buffer and a bounded
//! history (so a spectator who arrives late sees the game so far). The
//! runner's sink only pushes (never waits): a spectator that falls more
//! than [`LiveLimits::buffer`] messages behind is dropped, and the game is
//! never slowed. Spectators are counted per game, per client address and
//! overall, each with a bound.
//!
//! Only events that every seat may see reach this module (see
//! `croupier_arena::watch`): no hidden card of any seat, and a sealed bid
//! only with the reveal after the last one.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_arena::watch::{PublicEvent, Watch};
use croupier_store::GameId;
use serde::Serialize;
use tokio::sync::broadcast;

/// Bounds on spectators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveLimits {
    /// Spectators of one game.
    pub per_game: usize,
    /// Spectators from one client address (all games).
    pub per_client: usize,
    /// Spectators in all.
    pub total: usize,
    /// Messages a spectator may fall behind before it is dropped.
    pub buffer: usize,
    /// Messages kept per game for spectators who arrive late.
    pub history: usize,
    /// How long a finished game stays watchable (its end message).
    pub linger: Duration,
    /// Finished games kept watchable at once: past this, the oldest one
    /// goes before its `linger` is up (its record is public by then), so
    /// the memory of finished games does not grow with the games per second.
    pub lingering: usize,
}

impl Default for LiveLimits {
    fn default() -> Self {
        LiveLimits {
            per_game: 500,
            per_client: 16,
            total: 5000,
            buffer: 256,
            history: 4096,
            linger: Duration::from_secs(60),
            lingering: 1000,
        }
    }
}

/// One message of a game's public stream.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LiveMessage {
    /// The game and its seats (always first).
    Start {
        /// Stored game id.
        id: GameId,
        /// Game name.
        game: String,
        /// Seat names, by seat.
        seats: Vec<String>,
        /// Start time (RFC 3339).
        started: String,
        /// The seat a person plays, if any.
        person_seat: Option<usize>,
    },
    /// A public event.
    Event(PublicEvent),
    /// The game is over (`finished` or `aborted`); its record is public now,
    /// at `/games/{id}`.
    End {
        /// `finished` or `aborted`.
        status: String,
        /// Scores by seat, when finished.
        scores: Vec<Option<i64>>,
    },
}

/// A game being watched.
#[derive(Debug)]
pub struct LiveGame {
    /// The start message.
    pub start: LiveMessage,
    inner: Mutex<GameInner>,
}

#[derive(Debug)]
struct GameInner {
    history: Vec<Arc<LiveMessage>>,
    tx: broadcast::Sender<Arc<LiveMessage>>,
    spectators: usize,
    over: bool,
}

impl LiveGame {
    fn lock(&self) -> MutexGuard<'_, GameInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, msg: LiveMessage, keep: usize) {
        let msg = Arc::new(msg);
        let mut g = self.lock();
        if g.history.len() < keep {
            g.history.push(Arc::clone(&msg));
        }
        // No receiver is not an error: nobody watches.
        let _ = g.tx.send(msg);
    }

    /// The messages so far (start first).
    pub fn history(&self) -> Vec<Arc<LiveMessage>> {
        let mut out = vec![Arc::new(self.start.clone())];
        out.extend(self.lock().history.iter().cloned());
        out
    }

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.lock().over
    }
}

/// Why a spectator was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    /// No such game in progress.
    #[error("game {0} is not in progress")]
    NotLive(GameId),
    /// Too many spectators.
    #[error("{0}; try again later")]
    Full(&'static str),
}

/// A spectator's place: the messages so far, then the live ones. Dropping
/// it frees the place.
#[derive(Debug)]
pub struct Spectator {
    /// Messages before this spectator arrived (start first).
    pub history: Vec<Arc<LiveMessage>>,
    /// The live messages (`Lagged` = too slow: the stream ends).
    pub rx: broadcast::Receiver<Arc<LiveMessage>>,
    /// Whether the game was already over.
    pub over: bool,
    /// The spectator's place in the counts, freed when dropped: whoever
    /// streams the messages keeps it as long as the stream.
    pub place: Place,
}

/// A spectator's place in the counts (per game, per address, overall).
#[derive(Debug)]
pub struct Place {
    games: Arc<LiveGames>,
    id: GameId,
    client: IpAddr,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut s = self.games.lock();
        s.total = s.total.saturating_sub(1);
        if let Some(n) = s.clients.get_mut(&self.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                s.clients.remove(&self.client);
            }
        }
        if let Some(g) = s.games.get(&self.id) {
            let mut g = g.lock();
            g.spectators = g.spectators.saturating_sub(1);
        }
    }
}

#[derive(Debug, Default)]
struct State {
    games: HashMap<GameId, Arc<LiveGame>>,
    /// Finished games still watchable, oldest first.
    over: VecDeque<GameId>,
    clients: HashMap<IpAddr, usize>,
    total: usize,
}

/// Every game in progress that can be watched.
#[derive(Debug, Default)]
pub struct LiveGames {
    state: Mutex<State>,
    limits: Mutex<LiveLimits>,
}

/// A game in progress, for lists.
#[derive(Debug, Clone, Serialize)]
pub struct LiveSummary {
    /// Stored game id.
    pub id: GameId,
    /// Game name.
    pub game: String,
    /// Seat names.
    pub seats: Vec<String>,
    /// Start time.
    pub started: String,
    /// Spectators now.
    pub spectators: usize,
    /// The seat a person plays, if any.
    pub person_seat: Option<usize>,
}

impl LiveGames {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The bounds in force.
    pub fn limits(&self) -> LiveLimits {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the bounds (benchmarks, tests, settings).
    pub fn set_limits(&self, limits: LiveLimits) {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner()) = limits;
    }

    /// Registers game `id` and returns the watch to run its match under
    /// (`croupier_arena::watch::scope`).
    pub fn open(
        &self,
        id: GameId,
        game: &str,
        seats: Vec<String>,
        started: &str,
        person_seat: Option<usize>,
    ) -> Arc<Watch> {
        let limits = self.limits();
        let (tx, _) = broadcast::channel(limits.buffer.max(1));
        let live = Arc::new(LiveGame {
            start: LiveMessage::Start {
                id,
                game: game.to_string(),
                seats,
                started: started.to_string(),
                person_seat,
            },
            inner: Mutex::new(GameInner {
                history: Vec::new(),
                tx,
                spectators: 0,
                over: false,
            }),
        });
        self.lock().games.insert(id, Arc::clone(&live));
        let keep = limits.history;
        Watch::new(
            Box::new(move |batch| {
                for e in batch {
                    live.push(LiveMessage::Event(e), keep);
                }
            }),
            Box::new(move |e| tracing::error!("game {id}: {e}")),
        )
    }

    /// Ends game `id`: spectators get the end message, and the game stays
    /// watchable for [`LiveLimits::linger`].
    pub fn close(self: &Arc<Self>, id: GameId, status: &str, scores: Vec<Option<i64>>) {
        let Some(g) = self.lock().games.get(&id).cloned() else {
            return;
        };
        g.push(
            LiveMessage::End {
                status: status.to_string(),
                scores,
            },
            usize::MAX,
        );
        {
            let mut inner = g.lock();
            inner.over = true;
            // Spectators watching now keep the channel until they have read
            // the end; late ones only get the history. Without this the
            // finished game would hold its whole send buffer while it lingers.
            inner.tx = broadcast::channel(1).0;
            inner.history.shrink_to_fit();
        }
        let limits = self.limits();
        {
            let mut s = self.lock();
            s.over.push_back(id);
            while s.over.len() > limits.lingering {
                if let Some(old) = s.over.pop_front() {
                    s.games.remove(&old);
                }
            }
        }
        let me = Arc::clone(self);
        let linger = limits.linger;
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(async move {
                tokio::time::sleep(linger).await;
                me.forget(id);
            });
        } else {
            me.forget(id);
        }
    }

    /// Drops finished game `id` (its linger is up).
    fn forget(&self, id: GameId) {
        let mut s = self.lock();
        s.games.remove(&id);
        if let Some(i) = s.over.iter().position(|g| *g == id) {
            s.over.remove(i);
        }
    }

    /// The game `id`, if it is live (or just over).
    pub fn get(&self, id: GameId) -> Option<Arc<LiveGame>> {
        self.lock().games.get(&id).cloned()
    }

    /// Games in progress, newest first.
    pub fn list(&self) -> Vec<LiveSummary> {
        let s = self.lock();
        let mut out: Vec<LiveSummary> = s
            .games
            .iter()
            .filter_map(|(id, g)| {
                let inner = g.lock();
                if inner.over {
                    return None;
                }
                let LiveMessage::Start {
                    game,
                    seats,
                    started,
                    person_seat,
                    ..
                } = &g.start
                else {
                    return None;
                };
                Some(LiveSummary {
                    id: *id,
                    game: game.clone(),
                    seats: seats.clone(),
                    started: started.clone(),
                    spectators: inner.spectators,
                    person_seat: *person_seat,
                })
            })
            .collect();
        out.sort_by_key(|t| std::cmp::Reverse(t.id));
        out
    }

    /// A place to watch game `id` from `client`, within the bounds.
    pub fn watch(self: &Arc<Self>, id: GameId, client: IpAddr) -> Result<Spectator, WatchError> {
        let limits = self.limits();
        let mut s = self.lock();
        let g = s.games.get(&id).cloned().ok_or(WatchError::NotLive(id))?;
        if s.total >= limits.total {
            return Err(WatchError::Full(
                "the server has as many spectators as it takes",
            ));
        }
        if s.clients.get(&client).copied().unwrap_or(0) >= limits.per_client {
            return Err(WatchError::Full("too many streams from your address"));
        }
        let mut inner = g.lock();
        if inner.spectators >= limits.per_game {
            return Err(WatchError::Full(
                "this game has as many spectators as it takes",
            ));
        }
        inner.spectators += 1;
        // History and receiver under one lock: no message is missed or doubled.
        let mut history = vec![Arc::new(g.start.clone())];
        history.extend(inner.history.iter().cloned());
        let rx = inner.tx.subscribe();
        let over = inner.over;
        drop(inner);
        s.total += 1;
        *s.clients.entry(client).or_default() += 1;
        drop(s);
        Ok(Spectator {
            history,
            rx,
            over,
            place: Place {
                games: Arc::clone(self),
                id,
                client,
            },
        })
    }
}

/// Runs `fut` (a match) under `watch`, if any.
pub async fn watched<F: std::future::Future>(watch: Option<Arc<Watch>>, fut: F) -> F::Output {
    match watch {
        Some(w) => croupier_arena::watch::scope(w, fut).await,
        None => fut.await,
    }
}

/// Ends game `id` for its spectators, finished (with the record's scores)
/// or aborted.
pub fn closed<E>(
    live: Option<&Arc<LiveGames>>,
    id: GameId,
    done: &Result<croupier_rules::Record, E>,
) {
    let Some(live) = live else { return };
    match done {
        Ok(r) => live.close(
            id,
            "finished",
            r.outcome.scores.iter().map(|s| Some(*s)).collect(),
        ),
        Err(_) => live.close(id, "aborted", Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ev(i: usize) -> PublicEvent {
        PublicEvent {
            index: i,
            event: croupier_arena::watch::Told::of(serde_json::json!({"n": i})),
            to_act: vec![],
            view: None,
            at_ms: 0,
            move_ms: None,
        }
    }

    fn push(w: &Watch, events: Vec<PublicEvent>) {
        w.emit(events);
    }

    #[tokio::test]
    async fn late_spectators_get_the_history_then_live_messages() {
        let live = Arc::new(LiveGames::default());
        let w = live.open(1, "goofspiel", vec!["a".into(), "b".into()], "t", None);
        push(&w, vec![ev(0), ev(1)]);
        let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut s = live.watch(1, ip).unwrap();
        assert_eq!(s.history.len(), 3);
        push(&w, vec![ev(2)]);
        live.close(1, "finished", vec![Some(1), Some(2)]);
        assert!(matches!(&*s.rx.recv().await.unwrap(), LiveMessage::Event(e) if e.index == 2));
        assert!(matches!(
            &*s.rx.recv().await.unwrap(),
            LiveMessage::End { .. }
        ));
        assert!(live.list().is_empty(), "a finished game is not listed");
    }

    #[tokio::test]
    async fn finished_games_linger_within_a_bound_and_without_their_send_buffer() {
        let live = Arc::new(LiveGames::default());
        live.set_limits(LiveLimits {
            lingering: 3,
            ..LiveLimits::default()
        });
        let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let w = live.open(1, "goofspiel", vec![], "t", None);
        push(&w, vec![ev(0)]);
        let mut early = live.watch(1, ip).unwrap();
        live.close(1, "finished", vec![]);
        // A spectator already watching still reads the end, then the stream closes.
        assert!(matches!(
            &*early.rx.recv().await.unwrap(),
            LiveMessage::End { .. }
        ));
        assert!(early.rx.recv().await.is_err());
        let late = live.watch(1, ip).unwrap();
        assert!(late.over);
        assert_eq!(late.history.len(), 3, "start, the event and the end");
        for id in 2..=5 {
            let _w = live.open(id, "goofspiel", vec![], "t", None);
            live.close(id, "finished", vec![]);
        }
        assert_eq!(live.watch(1, ip).unwrap_err(), WatchError::NotLive(1));
        assert_eq!(live.watch(2, ip).unwrap_err(), WatchError::NotLive(2));
        for id in 3..=5 {
            assert!(live.watch(id, ip).is_ok(), "game {id} still lingers");
        }
    }

    #[test]
    fn spectators_are_bounded_per_game_per_client_and_freed_on_drop() {
        let live = Arc::new(LiveGames::default());
        live.set_limits(LiveLimits {
            per_game: 2,
            per_client: 3,
            total: 4,
            ..LiveLimits::default()
        });
        let _w1 = live.open(1, "goofspiel", vec![], "t", None);
        let _w2 = live.open(2, "goofspiel", vec![], "t", None);
        let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let b = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let s1 = live.watch(1, a).unwrap();
        let _s2 = live.watch(1, a).unwrap();
        assert!(matches!(live.watch(1, b), Err(WatchError::Full(_))));
        let _s3 = live.watch(2, a).unwrap();
        assert!(matches!(live.watch(2, a), Err(WatchError::Full(_))));
        let _s4 = live.watch(2, b).unwrap();
        assert!(
            matches!(live.watch(2, b), Err(WatchError::Full(_))),
            "total"
        );
        drop(s1);
        assert!(live.watch(1, b).is_ok());
        assert_eq!(live.watch(9, b).unwrap_err(), WatchError::NotLive(9));
    }

    #[tokio::test]
    async fn a_slow_spectator_lags_and_never_blocks_the_game() {
        let live = Arc::new(LiveGames::default());
        live.set_limits(LiveLimits {
            buffer: 4,
            ..LiveLimits::default()
        });
        let w = live.open(1, "goofspiel", vec![], "t", None);
        let mut s = live.watch(1, IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap();
        for i in 0..100 {
            push(&w, vec![ev(i)]);
        }
        assert!(matches!(
            s.rx.recv().await,
            Err(broadcast::error::RecvError::Lagged(_))
        ));
    }
}
