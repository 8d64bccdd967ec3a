//! Games in progress: each behind its own async mutex, so requests for one
//! game are serialised while games run in parallel. Bids and plays are
//! decoded by the 2014 dialect (`skullwhist_rest`, the rules' own
//! validation); a finished game is stored (in the store's next group
//! commit) without holding its lock, and requests that would tell a bot
//! the game is over wait until it is durable.

use std::sync::Arc;

use croupier_arena::runner::{finish, now_rfc3339, step};
use croupier_dialects::skullwhist_rest::{self as rest, Status};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistAction, SkullWhistObservation};
use croupier_rules::{Fault, Game, Record, Seat, StepKind};
use croupier_store::{BotId, GameEnd, GameId};
use tokio::sync::watch;
use tokio::time::Instant;

use super::{Hub, Refusal};

/// A game in progress.
#[derive(Debug)]
pub struct LiveGame {
    /// Its id.
    pub id: GameId,
    /// Bots by seat.
    pub bots: [BotId; 2],
    pub(super) engine: SkullWhist,
    pub(super) record: Record,
    /// When each seat became due (deal, or the start of its turn).
    pub(super) due: [Option<Instant>; 2],
    pub(super) over: bool,
    /// Once the game is over: turns true when its record is durable. The
    /// game's lock is not held while the store writes; requests that would
    /// tell a bot the game is over wait on this instead.
    pub(super) stored: Option<watch::Receiver<bool>>,
}

impl LiveGame {
    pub(super) fn seat_of(&self, bot: BotId) -> Option<Seat> {
        self.bots
            .iter()
            .position(|b| *b == bot)
            .map(|i| Seat(i as u8))
    }

    /// Sets the clocks after a step: the seats that must act now are due
    /// from now (if they were not already), the others are not.
    pub(super) fn reset_clocks(&mut self) {
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
    pub(super) fn thinking_ms(&self, seat: Seat) -> f64 {
        self.due[seat.index()].map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0)
    }

    pub(super) fn act(&mut self, seat: Seat, action: SkullWhistAction) -> Result<(), Refusal> {
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

    pub(super) fn forfeit(&mut self, seat: Seat, fault: Fault) {
        if self.engine.forfeit(seat).is_ok() {
            let ms = self.thinking_ms(seat);
            self.record
                .steps
                .push(step(seat, StepKind::Forfeit, ms, Some(fault)));
            self.over = true;
        }
    }
}

impl Hub {
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
    pub(super) fn close(&self, g: &mut LiveGame) -> Closing {
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
    pub(super) async fn closed(&self, c: Closing) -> Result<(), Refusal> {
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

    pub(super) async fn forfeit_bot(
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
}

/// A finished game on its way to the store.
pub(super) struct Closing {
    id: GameId,
    bots: [BotId; 2],
    end: Result<GameEnd, String>,
    done: watch::Sender<bool>,
}

/// Waits until a finished game's record is durable (or its writer gave up),
/// so that no bot is told a game is over before a crash would keep it.
pub(super) async fn wait_stored(stored: Option<watch::Receiver<bool>>) {
    if let Some(mut rx) = stored {
        let _ = rx.wait_for(|done| *done).await;
    }
}
