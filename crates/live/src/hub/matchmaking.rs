//! Matchmaking: `new-game` is a long poll that pairs a bot with one that is
//! waiting (chosen at random), or waits for one until the poll time, and
//! deals the game (seats in random order).

use std::sync::Arc;

use croupier_arena::live::LiveConfig;
use croupier_arena::record::now_rfc3339;
use croupier_dialects::skullwhist_rest::{self as rest, Status};
use croupier_rules::skullwhist::{Card, SkullWhist, SkullWhistVariant};
use croupier_rules::{Game, Seat};
use croupier_store::{BotId, GameId};
use rand::seq::IndexedRandom;
use rand::Rng;
use tokio::sync::{oneshot, watch};

use super::game::{LiveGame, Registry, SeatState, Table};
use super::lock::lock;
use super::seat::{SeatLink, View};
use super::state::{refuse, Hub, Inner, Waiter};
use croupier_dialects::skullwhist_rest::Refusal;
use croupier_store::postgres::cluster::Pairing;

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

/// Two bots taken for a deal that is under way (the dealer and the bot it
/// took), from the moment the dealer takes its partner (under the lock that
/// takes it) until the deal has ended or is given up: the mark is dropped
/// then, wherever that happens. A `new-game` of a marked bot waits for the
/// deal first ([`Hub::no_deal_under_way`]), so a bot whose request was
/// dropped mid-deal (the deal runs on, see [`Hub::deal_to_end`]) and that
/// asks again is given that game, never a second one.
pub(super) struct DealMark {
    inner: Arc<std::sync::Mutex<Inner>>,
    dealt: Arc<tokio::sync::Notify>,
    bots: [BotId; 2],
}

impl DealMark {
    /// Marks `bots`; `inner` is `hub`'s maps, locked by the caller.
    pub(super) fn new(hub: &Hub, inner: &mut Inner, bots: [BotId; 2]) -> DealMark {
        for b in bots {
            *inner.dealing.entry(b).or_default() += 1;
        }
        DealMark {
            inner: Arc::clone(&hub.inner),
            dealt: Arc::clone(&hub.dealt),
            bots,
        }
    }
}

impl Drop for DealMark {
    fn drop(&mut self) {
        {
            let mut inner = lock(&self.inner);
            for b in self.bots {
                if let Some(n) = inner.dealing.get_mut(&b) {
                    *n -= 1;
                    if *n == 0 {
                        inner.dealing.remove(&b);
                    }
                }
            }
        }
        self.dealt.notify_waiters();
    }
}

/// What `new-game` does on one instance: take a waiting bot, or wait.
pub(super) enum Take {
    /// Another bot was waiting: taken (both marked as in a deal).
    Partner(Waiter, DealMark),
    /// Listed: its ticket, and where its game comes.
    Listed(u64, oneshot::Receiver<GameId>),
}

/// What `new-game` makes of a bot's game in this instance.
pub(super) enum OwnGame {
    /// The reply: the game, or a refusal.
    Reply(Result<NewGame, Refusal>),
    /// Its game just ended and is stored.
    Ended,
    /// It is in no game of this instance.
    NotHere,
}

impl Hub {
    /// `new-game` for a bot in a game of this instance: that game while it
    /// has not bid, a refusal once it has; a game that just ended is waited
    /// for until it is stored.
    pub(super) async fn own_game(&self, bot: BotId) -> OwnGame {
        let Some((g, i)) = self.current_seat(bot) else {
            return OwnGame::NotHere;
        };
        match g.seat_state(i).await {
            SeatState::Over => OwnGame::Ended,
            SeatState::Bid => OwnGame::Reply(refuse(format!(
                "you are in game {} and have bid; finish it first",
                g.id
            ))),
            SeatState::Open => OwnGame::Reply(Ok(NewGame::Game {
                game: g.id,
                opponent: g.bots[1 - i],
                cards: g.hands[i].clone(),
            })),
        }
    }

    /// `new-game`: the bot's game if it has not bid yet, else a new opponent
    /// (matched as soon as one waits), else `Retry` after the poll time.
    pub async fn new_game(self: &Arc<Self>, bot: BotId) -> Result<NewGame, Refusal> {
        // One poll time in all, a wait for a deal under way included.
        let until = tokio::time::Instant::now() + self.config.poll_timeout;
        if !self.no_deal_under_way(bot, until).await {
            return Ok(NewGame::Retry);
        }
        if let Some(relay) = self.relay.get() {
            return self.cluster_new_game(relay, bot, until).await;
        }
        let take = loop {
            if let OwnGame::Reply(reply) = self.own_game(bot).await {
                return reply;
            }
            if let Some(taken) = self.take_or_list(bot, false) {
                break taken;
            }
            // Taken for a deal since the look above (by a bot that took a
            // listing of an earlier request of this bot's): that deal first.
            if !self.no_deal_under_way(bot, until).await {
                return Ok(NewGame::Retry);
            }
        };
        let (ticket, rx) = match take {
            Take::Partner(partner, mark) => {
                let id = self
                    .deal_to_end(bot, partner.bot, None, Some(partner.tx), mark)
                    .await?;
                return self.game_for(bot, id).await;
            }
            Take::Listed(ticket, rx) => (ticket, rx),
        };
        match tokio::time::timeout_at(until, rx).await {
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

    /// Takes a waiting bot for a deal with `bot` (both marked), or lists
    /// `bot` (`row`: it waits in the shared table too), all under one
    /// lock: of two bots arriving together, one takes the other. `None` if
    /// `bot` is in a deal under way.
    pub(super) fn take_or_list(&self, bot: BotId, row: bool) -> Option<Take> {
        let mut inner = self.lock();
        if inner.dealing.contains_key(&bot) {
            return None;
        }
        inner.waiting.retain(|w| w.bot != bot && !w.tx.is_closed());
        let candidates: Vec<usize> = (0..inner.waiting.len()).collect();
        if let Some(i) = candidates.choose(&mut rand::rng()).copied() {
            let partner = inner.waiting.swap_remove(i);
            let mark = DealMark::new(self, &mut inner, [bot, partner.bot]);
            return Some(Take::Partner(partner, mark));
        }
        let (tx, rx) = oneshot::channel();
        inner.next_ticket += 1;
        let ticket = inner.next_ticket;
        inner.waiting.push(Waiter {
            bot,
            ticket,
            tx,
            row,
        });
        Some(Take::Listed(ticket, rx))
    }

    /// Waits until no deal of `bot` is under way in this instance (at most
    /// until `until`); whether none is.
    pub(super) async fn no_deal_under_way(&self, bot: BotId, until: tokio::time::Instant) -> bool {
        loop {
            let ended = self.dealt.notified();
            tokio::pin!(ended);
            // Told of every deal that ends from here on.
            ended.as_mut().enable();
            if !self.lock().dealing.contains_key(&bot) {
                return true;
            }
            if tokio::time::timeout_at(until, ended).await.is_err() {
                return false;
            }
        }
    }

    pub(super) async fn game_for(&self, bot: BotId, id: GameId) -> Result<NewGame, Refusal> {
        let game = self.lock().games.get(&id).cloned();
        let Some(g) = game else {
            return Ok(NewGame::Retry);
        };
        let i = g
            .seat_of(bot)
            .ok_or_else(|| Refusal("internal: seat".into()))?;
        Ok(NewGame::Game {
            game: g.id,
            opponent: g.bots[1 - i],
            cards: g.hands[i].clone(),
        })
    }

    /// Deals a game to `a` and `b` ([`Hub::deal`]) and then tells `partner`
    /// (the poll of the bot taken from the waiting list) which one, to the
    /// end ([`to_the_end`]). Its bots find the game with their next
    /// `new-game` (a bot that has not bid is given its game again), which
    /// waits for the deal while `mark` (dropped at its end) stands.
    pub(super) async fn deal_to_end(
        self: &Arc<Self>,
        a: BotId,
        b: BotId,
        pairing: Option<Pairing>,
        partner: Option<oneshot::Sender<GameId>>,
        mark: DealMark,
    ) -> Result<GameId, Refusal> {
        let hub = Arc::clone(self);
        to_the_end(async move { hub.deal_and_tell(a, b, pairing, partner, mark).await }).await
    }

    /// [`Hub::deal`], then tells `partner` which game; `mark` is dropped
    /// once the deal has ended, whichever way.
    pub(super) async fn deal_and_tell(
        &self,
        a: BotId,
        b: BotId,
        pairing: Option<Pairing>,
        partner: Option<oneshot::Sender<GameId>>,
        mark: DealMark,
    ) -> Result<GameId, Refusal> {
        let id = self.deal(a, b, pairing).await;
        if let (Ok(id), Some(partner)) = (&id, partner) {
            let _ = partner.send(*id);
        }
        drop(mark);
        id
    }

    /// Deals a new game between two bots (seats in random order). With
    /// several instances, `pairing` holds the partner taken from the
    /// shared waiting bots; the game's seats are written with it.
    async fn deal(&self, a: BotId, b: BotId, pairing: Option<Pairing>) -> Result<GameId, Refusal> {
        let seed = crate::visibility::fresh_seed().map_err(|e| Refusal(e.to_string()))?;
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
        crate::metrics::game_started(SkullWhist::NAME, crate::metrics::GameSource::Rest);
        // The deal, for `new-game` and the first status, before the runner
        // starts: the same rules from the same seed.
        let engine =
            SkullWhist::new(&SkullWhistVariant {}, 2, seed).map_err(|e| Refusal(e.to_string()))?;
        let inside = {
            let inner = self.lock();
            bots.map(|b| inner.inside.contains(&b))
        };
        let view = |i: usize| {
            let seat = Seat(i as u8);
            let obs = engine.observation(seat);
            View {
                status: Arc::from(Status::of(id, bots[1 - i], &obs).reply_text()),
                has_bid: false,
                over: false,
                observation: inside[i].then(|| (obs, engine.legal_vec(seat))),
            }
        };
        let hand = |i: u8| rest::dealt_hand(engine.events(), Seat(i)).unwrap_or_default();
        let (done, stored) = watch::channel(None);
        let sync = self.view_sync(); // wg, wm: issue 13
        let changed = sync.as_ref().map(|s| Arc::clone(&s.version));
        let live = Arc::new(LiveGame {
            id,
            bots,
            hands: [hand(0), hand(1)],
            seats: [
                SeatLink::new(view(0), changed.clone()),
                SeatLink::new(view(1), changed),
            ],
            stored,
            sync,
            runner: std::sync::OnceLock::new(),
        });
        {
            let mut inner = self.lock();
            inner.games.insert(id, Arc::clone(&live));
            inner.game_of.insert(a, id);
            inner.game_of.insert(b, id);
        }
        if let Some(pairing) = pairing {
            if let Err(e) = self.share_deal(pairing, &live).await {
                let mut inner = self.lock();
                inner.games.remove(&id);
                inner.game_of.retain(|_, g| *g != id);
                return Err(e);
            }
        }
        tokio::spawn(super::game::run(Table {
            game: Arc::clone(&live),
            seed,
            started,
            house: inside,
            config: LiveConfig {
                move_time: self.config.move_timeout,
                budget: None,
                ..LiveConfig::default()
            },
            store: Arc::clone(&self.store),
            hub: Arc::clone(&self.inner) as Arc<dyn Registry>,
            live: self.live.get().cloned(),
            done,
            cluster: self.relay.get().map(|r| r.db().clone()),
        }));
        if live.sync.is_some() {
            // wm: issue 13
            tokio::spawn(super::views::write_seats(Arc::clone(&live)));
        }
        Ok(id)
    }
}

/// Runs `deal` (a deal, from the take of its partner's row to the partner
/// told) in a task of its own and waits for it: a request dropped
/// meanwhile (its bot hung up, or its client gave up) cannot stop a deal
/// halfway. Stopped halfway, a deal would leave a game stored as running
/// that no runner plays, or bots seated in it that wait forever, and a
/// partner told nothing.
pub(super) async fn to_the_end<T: Send + 'static>(
    deal: impl std::future::Future<Output = Result<T, Refusal>> + Send + 'static,
) -> Result<T, Refusal> {
    tokio::spawn(deal).await.unwrap_or_else(|e| {
        // Cancelled: the server is shutting down.
        if e.is_panic() {
            tracing::error!("a deal stopped: {e}");
        }
        Err(Refusal(
            "internal error: the game could not be dealt".into(),
        ))
    })
}
