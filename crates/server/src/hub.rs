//! The live side of the SkullWhist server: sessions, matchmaking, games in
//! progress and their clocks. Handlers and house bots call the same methods.
//!
//! Locking: `inner` (a std mutex) guards the maps and is never held across
//! an await; each game has its own async mutex, so requests for one game are
//! serialised (no double play, no lost update) while games run in parallel.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_arena::runner::{finish, now_rfc3339, step};
use croupier_dialects::skullwhist_rest::{self as rest, Status};
use croupier_rules::skullwhist::{
    Card, SkullWhist, SkullWhistAction, SkullWhistObservation, SkullWhistVariant,
};
use croupier_rules::{Fault, Game, Record, Seat, SeatInfo, StepKind};
use croupier_store::{BotId, GameEnd, GameId, Store};
use rand::seq::IndexedRandom;
use rand::Rng;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

/// Clocks and limits of the server.
#[derive(Clone, Debug)]
pub struct HubConfig {
    /// A session expires after this long without a request.
    pub session_idle: Duration,
    /// A bot that is due and silent this long forfeits.
    pub move_timeout: Duration,
    /// How long `new-game` waits for an opponent before `retry`.
    pub poll_timeout: Duration,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            session_idle: Duration::from_secs(300),
            move_timeout: Duration::from_secs(120),
            poll_timeout: Duration::from_secs(30),
        }
    }
}

pub use croupier_dialects::skullwhist_rest::Refusal;

fn refuse<T>(msg: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(msg.into()))
}

/// A game in progress.
#[derive(Debug)]
pub struct LiveGame {
    /// Its id.
    pub id: GameId,
    /// Bots by seat.
    pub bots: [BotId; 2],
    engine: SkullWhist,
    record: Record,
    /// When each seat became due (deal, or the start of its turn).
    due: [Option<Instant>; 2],
    over: bool,
    /// Once the game is over: turns true when its record is durable. The
    /// game's lock is not held while the store writes; requests that would
    /// tell a bot the game is over wait on this instead.
    stored: Option<watch::Receiver<bool>>,
}

impl LiveGame {
    fn seat_of(&self, bot: BotId) -> Option<Seat> {
        self.bots
            .iter()
            .position(|b| *b == bot)
            .map(|i| Seat(i as u8))
    }

    /// Sets the clocks after a step: the seats that must act now are due
    /// from now (if they were not already), the others are not.
    fn reset_clocks(&mut self) {
        let to_act = self.engine.to_act();
        let now = Instant::now();
        for i in 0..2u8 {
            let d = &mut self.due[usize::from(i)];
            if to_act.contains(Seat(i)) {
                d.get_or_insert(now);
            } else {
                *d = None;
            }
        }
    }

    /// Milliseconds since `seat` became due.
    fn thinking_ms(&self, seat: Seat) -> f64 {
        self.due[seat.index()].map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0)
    }

    fn act(&mut self, seat: Seat, action: SkullWhistAction) -> Result<(), Refusal> {
        self.engine.apply(seat, action)?;
        let ms = self.thinking_ms(seat);
        self.record
            .steps
            .push(step(seat, StepKind::Action(action.to_string()), ms, None));
        self.due[seat.index()] = None;
        self.reset_clocks();
        self.over = self.engine.is_over();
        Ok(())
    }

    fn forfeit(&mut self, seat: Seat, fault: Fault) {
        if self.engine.forfeit(seat).is_ok() {
            let ms = self.thinking_ms(seat);
            self.record
                .steps
                .push(step(seat, StepKind::Forfeit, ms, Some(fault)));
            self.over = true;
        }
    }
}

/// What `new-game` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewGame {
    /// A game: its id, the opponent and this bot's 13 cards, sorted.
    Game {
        game: GameId,
        opponent: BotId,
        cards: Vec<Card>,
    },
    /// No opponent within the poll time.
    Retry,
}

struct Waiter {
    bot: BotId,
    ticket: u64,
    tx: oneshot::Sender<GameId>,
}

struct Session {
    bot: BotId,
    last_seen: Instant,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<String, Session>,
    session_of: HashMap<BotId, String>,
    game_of: HashMap<BotId, GameId>,
    waiting: Vec<Waiter>,
    games: HashMap<GameId, Arc<tokio::sync::Mutex<LiveGame>>>,
    next_ticket: u64,
}

/// Sessions, matchmaking and games in progress.
pub struct Hub {
    inner: Mutex<Inner>,
    store: Arc<dyn Store>,
    config: HubConfig,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Hub {
    /// A hub over `store`.
    pub fn new(store: Arc<dyn Store>, config: HubConfig) -> Hub {
        Hub {
            inner: Mutex::new(Inner::default()),
            store,
            config,
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the maps half-updated
        // in a way that matters more than stopping the server would.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a session for `bot`, replacing its old one; a game it was
    /// playing is forfeited.
    pub async fn login(&self, bot: BotId, token: String) {
        let game = {
            let mut inner = self.lock();
            if let Some(old) = inner.session_of.insert(bot, token.clone()) {
                inner.sessions.remove(&old);
            }
            inner.sessions.insert(
                token,
                Session {
                    bot,
                    last_seen: Instant::now(),
                },
            );
            inner.waiting.retain(|w| w.bot != bot);
            inner
                .game_of
                .get(&bot)
                .and_then(|g| inner.games.get(g))
                .cloned()
        };
        if let Some(game) = game {
            let fault = Fault {
                kind: "relogin".into(),
                detail: "the bot logged in again".into(),
            };
            self.forfeit_bot(&game, bot, fault).await;
        }
    }

    /// The bot of a live session (and marks the session used).
    pub fn session_bot(&self, token: &str) -> Result<BotId, Refusal> {
        let mut inner = self.lock();
        let idle = self.config.session_idle;
        match inner.sessions.get_mut(token) {
            Some(s) if s.last_seen.elapsed() <= idle => {
                s.last_seen = Instant::now();
                Ok(s.bot)
            }
            Some(_) => {
                let bot = inner.sessions.remove(token).map(|s| s.bot);
                if let Some(bot) = bot {
                    inner.session_of.remove(&bot);
                }
                refuse("session expired: log in again")
            }
            None => refuse("unknown session: log in first"),
        }
    }

    fn current_game(&self, bot: BotId) -> Option<Arc<tokio::sync::Mutex<LiveGame>>> {
        let inner = self.lock();
        inner
            .game_of
            .get(&bot)
            .and_then(|g| inner.games.get(g))
            .cloned()
    }

    /// `new-game`: the bot's game if it has not bid yet, else a new opponent
    /// (matched as soon as one waits), else `Retry` after the poll time.
    pub async fn new_game(&self, bot: BotId) -> Result<NewGame, Refusal> {
        if let Some(game) = self.current_game(bot) {
            let g = game.lock().await;
            if g.over {
                let stored = g.stored.clone();
                drop(g);
                wait_stored(stored).await;
            } else {
                let seat = g
                    .seat_of(bot)
                    .ok_or_else(|| Refusal("internal: seat".into()))?;
                if g.engine.bids()[seat.index()].is_some() {
                    return refuse(format!(
                        "you are in game {} and have bid; finish it first",
                        g.id
                    ));
                }
                return Ok(NewGame::Game {
                    game: g.id,
                    opponent: g.bots[1 - seat.index()],
                    cards: rest::dealt_hand(g.engine.events(), seat).unwrap_or_default(),
                });
            }
        }
        let (partner, rx) = {
            let mut inner = self.lock();
            inner.waiting.retain(|w| w.bot != bot && !w.tx.is_closed());
            let candidates: Vec<usize> = (0..inner.waiting.len()).collect();
            match candidates.choose(&mut rand::rng()).copied() {
                Some(i) => (Some(inner.waiting.swap_remove(i)), None),
                None => {
                    let (tx, rx) = oneshot::channel();
                    inner.next_ticket += 1;
                    let ticket = inner.next_ticket;
                    inner.waiting.push(Waiter { bot, ticket, tx });
                    (None, Some((ticket, rx)))
                }
            }
        };
        if let Some(partner) = partner {
            let id = self.deal(bot, partner.bot).await?;
            let _ = partner.tx.send(id);
            return self.game_for(bot, id).await;
        }
        let Some((ticket, rx)) = rx else {
            return Ok(NewGame::Retry);
        };
        match tokio::time::timeout(self.config.poll_timeout, rx).await {
            Ok(Ok(id)) => self.game_for(bot, id).await,
            _ => {
                let matched = {
                    let mut inner = self.lock();
                    inner
                        .waiting
                        .retain(|w| !(w.bot == bot && w.ticket == ticket));
                    inner.game_of.get(&bot).copied()
                };
                match matched {
                    Some(id) => self.game_for(bot, id).await,
                    None => Ok(NewGame::Retry),
                }
            }
        }
    }

    async fn game_for(&self, bot: BotId, id: GameId) -> Result<NewGame, Refusal> {
        let game = self.lock().games.get(&id).cloned();
        let Some(game) = game else {
            return Ok(NewGame::Retry);
        };
        let g = game.lock().await;
        let seat = g
            .seat_of(bot)
            .ok_or_else(|| Refusal("internal: seat".into()))?;
        Ok(NewGame::Game {
            game: g.id,
            opponent: g.bots[1 - seat.index()],
            cards: rest::dealt_hand(g.engine.events(), seat).unwrap_or_default(),
        })
    }

    /// Deals a new game between two bots (seats in random order).
    async fn deal(&self, a: BotId, b: BotId) -> Result<GameId, Refusal> {
        let seed = crate::visibility::fresh_seed().map_err(Refusal)?;
        let bots = if rand::rng().random::<bool>() {
            [a, b]
        } else {
            [b, a]
        };
        let started = now_rfc3339();
        let id = self
            .store
            .start_game(SkullWhist::NAME, &bots, seed as i64, &started)
            .await
            .map_err(|e| {
                tracing::error!("cannot store a new game: {e}");
                Refusal("internal error: the game could not be stored".into())
            })?;
        let engine =
            SkullWhist::new(&SkullWhistVariant {}, 2, seed).map_err(|e| Refusal(e.to_string()))?;
        let mut record = Record::begin::<SkullWhist>(
            &SkullWhistVariant {},
            seed,
            bots.iter()
                .map(|b| SeatInfo::named(format!("bot:{b}")))
                .collect(),
        );
        record.started = Some(started);
        let mut live = LiveGame {
            id,
            bots,
            engine,
            record,
            due: [None; 2],
            over: false,
            stored: None,
        };
        live.reset_clocks();
        let mut inner = self.lock();
        inner
            .games
            .insert(id, Arc::new(tokio::sync::Mutex::new(live)));
        inner.game_of.insert(a, id);
        inner.game_of.insert(b, id);
        Ok(id)
    }

    /// `bid`.
    pub async fn bid(&self, bot: BotId, bid: i64) -> Result<(), Refusal> {
        let game = self
            .current_game(bot)
            .ok_or_else(|| Refusal("you are not in a game".into()))?;
        let mut g = game.lock().await;
        let seat = g
            .seat_of(bot)
            .ok_or_else(|| Refusal("you are not in this game".into()))?;
        let action = rest::decode_bid(&g.engine, seat, bid)?;
        g.act(seat, action)
    }

    /// `play`: plays a card; the game's record is stored before this returns
    /// when the card ends the game.
    pub async fn play(&self, bot: BotId, card: &str) -> Result<(), Refusal> {
        let card = rest::parse_card(card)?;
        let game = self
            .current_game(bot)
            .ok_or_else(|| Refusal("you are not in a game".into()))?;
        let mut g = game.lock().await;
        let seat = g
            .seat_of(bot)
            .ok_or_else(|| Refusal("you are not in this game".into()))?;
        let action = rest::decode_play(&g.engine, seat, card)?;
        g.act(seat, action)?;
        let closing = g.over.then(|| self.close(&mut g));
        drop(g);
        match closing {
            Some(closing) => self.closed(closing).await,
            None => Ok(()),
        }
    }

    /// Ends a finished game under its lock: what the store will keep, and
    /// the signal that it is kept. [`Hub::closed`] then waits for the store
    /// without the lock.
    fn close(&self, g: &mut LiveGame) -> Closing {
        let end = finish(&g.engine, &mut g.record)
            .map_err(|e| e.to_string())
            .and_then(|()| GameEnd::from_record(&g.record, &g.bots).map_err(|e| e.to_string()));
        let summary = end.as_ref().map_or((None, [None, None]), |e| {
            (e.forfeited_by, [e.scores[0], e.scores[1]])
        });
        match summary {
            (Some(f), _) => tracing::info!(
                "game {}: bot {} forfeited against bot {}",
                g.id,
                f,
                g.bots.iter().find(|b| **b != f).copied().unwrap_or(f)
            ),
            (None, [Some(a), Some(b)]) => tracing::info!(
                "game {}: bot {} {a} to bot {} {b}",
                g.id,
                g.bots[0],
                g.bots[1]
            ),
            (None, _) => {}
        }
        let (done, stored) = watch::channel(false);
        g.stored = Some(stored);
        Closing {
            id: g.id,
            bots: g.bots,
            end,
            done,
        }
    }

    /// Stores a closed game (in the store's next group commit), then
    /// releases its bots and wakes the requests waiting for it.
    async fn closed(&self, c: Closing) -> Result<(), Refusal> {
        let stored = match &c.end {
            Ok(end) => self
                .store
                .finish_game(c.id, end)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => {
                // A rules bug: the game is kept as aborted, with the reason.
                let reason = format!("the game could not be closed: {e}");
                let _ = self.store.abort_game(c.id, &reason, &now_rfc3339()).await;
                Err(reason)
            }
        };
        {
            let mut inner = self.lock();
            inner.games.remove(&c.id);
            for b in c.bots {
                if inner.game_of.get(&b) == Some(&c.id) {
                    inner.game_of.remove(&b);
                }
            }
        }
        let _ = c.done.send(true);
        stored.map_err(|e| {
            tracing::error!("cannot store finished game {}: {e}", c.id);
            Refusal("internal error: the game could not be stored".into())
        })
    }

    async fn forfeit_bot(
        &self,
        game: &Arc<tokio::sync::Mutex<LiveGame>>,
        bot: BotId,
        fault: Fault,
    ) {
        let mut g = game.lock().await;
        if g.over {
            return;
        }
        if let Some(seat) = g.seat_of(bot) {
            g.forfeit(seat, fault);
            let closing = self.close(&mut g);
            drop(g);
            let _ = self.closed(closing).await;
        }
    }

    /// `status`.
    pub async fn status(&self, bot: BotId) -> Status {
        let Some(game) = self.current_game(bot) else {
            return Status::default();
        };
        let g = game.lock().await;
        let Some(seat) = g.seat_of(bot) else {
            return Status::default();
        };
        if g.over {
            let stored = g.stored.clone();
            drop(g);
            wait_stored(stored).await;
            return Status::default();
        }
        let opponent = g.bots[1 - seat.index()];
        Status::of(g.id, opponent, &g.engine.observation(seat))
    }

    /// What a bot sees of its game (for house bots).
    pub async fn observation(
        &self,
        bot: BotId,
    ) -> Option<(SkullWhistObservation, Vec<SkullWhistAction>)> {
        let game = self.current_game(bot)?;
        let g = game.lock().await;
        let seat = g.seat_of(bot)?;
        if g.over {
            return None;
        }
        Some((g.engine.observation(seat), g.engine.legal_vec(seat)))
    }

    /// Forfeits games whose due bot has been silent too long, and ends idle
    /// sessions. Called periodically.
    pub async fn sweep(&self) {
        let limit = self.config.move_timeout;
        let games: Vec<_> = self.lock().games.values().cloned().collect();
        let mut closings = Vec::new();
        for game in games {
            let mut g = game.lock().await;
            if g.over {
                continue;
            }
            let late = (0..2).find(|i| g.due[*i].is_some_and(|t| t.elapsed() > limit));
            if let Some(i) = late {
                let what = if g.engine.bids()[i].is_none() {
                    "bid"
                } else {
                    "play"
                };
                let fault = Fault {
                    kind: "timeout".into(),
                    detail: format!("no {what} within {} s of becoming due", limit.as_secs_f64()),
                };
                g.forfeit(Seat(i as u8), fault);
                closings.push(self.close(&mut g));
            }
        }
        // Stored together, in one group commit.
        futures::future::join_all(closings.into_iter().map(|c| self.closed(c))).await;
        // Expired sessions are kept an hour longer, so that a bot using one
        // is told it expired rather than that it is unknown; a waiting bot
        // whose session expired stops waiting at once.
        let idle = self.config.session_idle;
        let forget = idle + Duration::from_secs(3600);
        let mut inner = self.lock();
        let lapsed: Vec<BotId> = inner
            .sessions
            .values()
            .filter(|s| s.last_seen.elapsed() > idle)
            .map(|s| s.bot)
            .collect();
        inner.waiting.retain(|w| !lapsed.contains(&w.bot));
        let expired: Vec<String> = inner
            .sessions
            .iter()
            .filter(|(_, s)| s.last_seen.elapsed() > forget)
            .map(|(t, _)| t.clone())
            .collect();
        for t in expired {
            if let Some(s) = inner.sessions.remove(&t) {
                if inner.session_of.get(&s.bot) == Some(&t) {
                    inner.session_of.remove(&s.bot);
                }
            }
        }
    }

    /// Games in progress and bots waiting, for monitoring.
    pub fn counts(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.games.len(), inner.waiting.len())
    }
}

/// A finished game on its way to the store.
struct Closing {
    id: GameId,
    bots: [BotId; 2],
    end: Result<GameEnd, String>,
    done: watch::Sender<bool>,
}

/// Waits until a finished game's record is durable (or its writer gave up),
/// so that no bot is told a game is over before a crash would keep it.
async fn wait_stored(stored: Option<watch::Receiver<bool>>) {
    if let Some(mut rx) = stored {
        let _ = rx.wait_for(|done| *done).await;
    }
}
