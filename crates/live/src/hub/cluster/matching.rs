//! `new-game` with several instances. A bot is paired with a bot waiting
//! in this same instance when there is one (no other instance is asked:
//! the partner's row, if it has one, is taken with one `DELETE`, and its
//! poll is told in memory), or with one that comes here within
//! [`LOCAL_FIRST`] (issue 50: a game between two bots of one instance
//! relays nothing), else with one waiting in the shared table
//! (when other instances run, or for a house bot), else it waits in both:
//! in the table (another instance may take it; its `NOTIFY` wakes the
//! poll) and in this instance's list (a bot arriving here takes it).
//!
//! A waiting bot's row is written before it is listed here, so a bot taken
//! from the list whose row is gone was taken by another instance.
//!
//! While the instance is alone (no other instance has answered requests
//! within a heartbeat and a half, see `Crowd`), nobody else can take a
//! waiting bot: it waits in the list only, and pairing it costs no
//! statement. A house bot takes such a bot from the list under its own
//! deal lock ([`Cluster::claim`](croupier_store::postgres::cluster::Cluster::claim)).
//! When another instance comes (its notice ends "alone" at once), a bot
//! listed without a row writes one at its poll's next look, within about
//! a second: before the newcomer serves, which first waits a heartbeat and
//! a half.

use std::sync::Arc;
use std::time::Duration;

use croupier_store::postgres::cluster::{Claim, Pairing};
use croupier_store::{BotId, GameId};
use rand::seq::IndexedRandom;
use rand::Rng;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::super::matchmaking::{to_the_end, DealMark, NewGame, OwnGame, Take};
use super::super::relay::{HomeRead, Relay, OVER, SEAT_BID, SEAT_OPEN};
use super::super::state::{refuse, Hub, Waiter};
use super::{game_of_row, internal, TRY_AGAIN};
use croupier_dialects::skullwhist_rest::Refusal;

/// How long a waiting bot's poll sleeps between looks at the tables (a
/// `NOTIFY` wakes it as soon as it is dealt a game; this only makes good a
/// lost notification, and pairs the waiting bots of house-bot loops).
const POLL_STEP_MS: u64 = 1000;

/// How long `new-game` waits for the home of the bot's game to say where
/// its seat stands.
const SEAT_WAIT: Duration = Duration::from_secs(3);

/// How long a bot waits for a partner in this instance before it looks at
/// the shared table (see [`Hub::local_first`]).
const LOCAL_FIRST: Duration = Duration::from_millis(50);

/// A bot's place in this instance's list.
struct Listing {
    ticket: u64,
    /// Where its game comes.
    rx: oneshot::Receiver<GameId>,
    /// Whether it waits in the shared table too.
    row: bool,
}

impl Hub {
    /// `new-game` with several instances.
    pub(in crate::hub) async fn cluster_new_game(
        self: &Arc<Self>,
        relay: &Relay,
        bot: BotId,
        until: Instant,
    ) -> Result<NewGame, Refusal> {
        let house = self.lock().inside.contains(&bot);
        // A game of this instance: its own view (the row may lag behind
        // while the instance is alone).
        let row = match self.own_game(bot).await {
            OwnGame::Reply(reply) => return reply,
            OwnGame::Ended => None,
            // Alone, no other instance runs games.
            OwnGame::NotHere if relay.crowd().alone() => None,
            OwnGame::NotHere => relay.db().seat_of(bot).await.map_err(internal)?,
        };
        if let Some(row) = row {
            if house && row.home != relay.instance() {
                // A house bot plays where its loop runs: another
                // instance's loop has it.
                tokio::time::sleep(Duration::from_millis(500)).await;
                return Ok(NewGame::Retry);
            }
            // The row's views are written once, at the deal (issue 50):
            // where the seat stands now is the home's to say.
            let seat = if row.home == relay.instance() {
                // This instance's own game, no longer in its maps: ended.
                Some(OVER.to_string())
            } else {
                relay
                    .ask_home(
                        HomeRead::Seat,
                        row.home,
                        row.game,
                        row.seat as usize,
                        SEAT_WAIT,
                    )
                    .await
            };
            match seat.as_deref() {
                Some(SEAT_OPEN) => return Ok(game_of_row(&row)),
                Some(SEAT_BID) => {
                    return refuse(format!(
                        "you are in game {} and have bid; finish it first",
                        row.game
                    ))
                }
                Some(_) => self.wait_unseated(relay, bot, row.game).await,
                // A home that died: its lease closes the game.
                None => return refuse(TRY_AGAIN),
            }
        }
        // A house bot's loop runs in every instance: its deals go through
        // the table's per-bot lock, also when it takes a bot from the list
        // (below, while alone).
        if !house {
            while let Some((w, mark)) = self.pop_waiter(bot) {
                if let Some(reply) = self.deal_listed(relay, bot, w, None, mark).await? {
                    return Ok(reply);
                }
            }
        }
        // Listening for a deal by another instance from here on (a row
        // of an earlier poll may still be in the table).
        let waker = relay.waker(bot);
        if !house && !relay.crowd().alone() {
            if let Some(reply) = self.local_first(relay, bot, until).await? {
                return Ok(reply);
            }
        }
        // Wakes a bot listed without a row when another instance comes.
        let mut joined = relay.crowd().joined();
        let mut listed: Option<Listing> = None;
        loop {
            let alone = relay.crowd().alone();
            // Listed without a row while alone, and another instance has
            // come since: the bot waits in the table too from now on.
            if let Some(l) = listed.take_if(|l| !alone && !l.row) {
                if !self.unlist(bot, l.ticket) {
                    return self.taken_from_list(relay, bot, l).await;
                }
            }
            if house || !alone {
                let waiting = listed.as_ref().is_some_and(|l| l.row);
                if let Some(pairing) = relay
                    .db()
                    .take_partner(bot, waiting)
                    .await
                    .map_err(internal)?
                {
                    if let Some(l) = &listed {
                        self.unlist(bot, l.ticket);
                    }
                    let partner = pairing.partner;
                    let mark = DealMark::new(self, &mut self.lock(), [bot, partner]);
                    let id = self
                        .deal_to_end(bot, partner, Some(pairing), None, mark)
                        .await?;
                    return self.game_for(bot, id).await;
                }
            }
            if house && alone {
                if let Some(reply) = self.house_takes_listed(relay, bot).await? {
                    return Ok(reply);
                }
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            // House bots never wait: they take waiting bots from the
            // instance whose loop plays them.
            if !house && listed.is_none() {
                // Alone, no other instance could take the bot: it waits in
                // this instance's list only.
                let row = !alone;
                if row {
                    relay
                        .db()
                        .wait(bot, left.as_secs_f64())
                        .await
                        .map_err(internal)?;
                }
                match self.take_or_list(bot, row) {
                    // Taken for a deal since it looked for its game: that
                    // deal's game is the answer.
                    None => {
                        self.no_deal_under_way(bot, until).await;
                        return self.not_told(relay, bot, row).await;
                    }
                    Some(Take::Listed(ticket, rx)) => {
                        listed = Some(Listing { ticket, rx, row });
                        // Two bots on two instances that looked at the same
                        // moment both wait now: look once more, so one
                        // takes the other.
                        continue;
                    }
                    Some(Take::Partner(w, mark)) => {
                        // Its own row first: another instance may be
                        // taking this bot right now.
                        if row && !relay.db().stop_waiting(bot).await.map_err(internal)? {
                            drop(mark);
                            self.relist(w);
                            return self.taken_elsewhere(relay, bot).await;
                        }
                        if let Some(reply) = self.deal_listed(relay, bot, w, None, mark).await? {
                            return Ok(reply);
                        }
                        continue;
                    }
                }
            }
            // A bot of this instance deals it a game (in memory), or
            // another instance does (`NOTIFY`); the slow poll only makes
            // good a lost notification.
            let step = Duration::from_millis(POLL_STEP_MS + rand::rng().random_range(0..250));
            let step = step.min(left);
            match &mut listed {
                Some(l) => {
                    tokio::select! {
                        r = &mut l.rx => {
                            self.unlist(bot, l.ticket);
                            return match r {
                                Ok(id) => self.game_for(bot, id).await,
                                // Taken from the list, but its deal failed
                                // or another instance had taken it.
                                Err(_) => self.not_told(relay, bot, l.row).await,
                            };
                        }
                        _ = waker.notify.notified() => {
                            if let Some(row) = relay.db().seat_of(bot).await.map_err(internal)? {
                                self.unlist(bot, l.ticket);
                                return Ok(game_of_row(&row));
                            }
                        }
                        // Another instance came: the loop's next look
                        // writes the row.
                        Ok(()) = joined.changed(), if !l.row => {}
                        _ = tokio::time::sleep(step) => {}
                    }
                }
                None => {
                    let _ = tokio::time::timeout(step, waker.notify.notified()).await;
                }
            }
        }
        let Some(l) = listed else {
            return Ok(NewGame::Retry);
        };
        // Out of the list if it is still there (its game channel closes).
        self.unlist(bot, l.ticket);
        self.taken_from_list(relay, bot, l).await
    }

    /// Issue 50: before it looks at the table, a bot waits a moment in this
    /// instance's list only ([`LOCAL_FIRST`]), so that a bot arriving here
    /// takes it: their game then runs where both bots' requests arrive
    /// when the proxy routes on the session (docs/deploy/haproxy.cfg),
    /// and none of its requests is relayed. Two bots whose game just ended
    /// ask for their next one within milliseconds of each other. `None`:
    /// nobody came; the bot is out of the list again.
    async fn local_first(
        self: &Arc<Self>,
        relay: &Relay,
        bot: BotId,
        until: Instant,
    ) -> Result<Option<NewGame>, Refusal> {
        let wait = LOCAL_FIRST.min(until.saturating_duration_since(Instant::now()));
        if wait.is_zero() {
            return Ok(None);
        }
        match self.take_or_list(bot, false) {
            // Taken for a deal since it looked for its game.
            None => {
                self.no_deal_under_way(bot, until).await;
                self.not_told(relay, bot, false).await.map(Some)
            }
            // Another bot came here meanwhile.
            Some(Take::Partner(w, mark)) => self.deal_listed(relay, bot, w, None, mark).await,
            Some(Take::Listed(ticket, mut rx)) => {
                match tokio::time::timeout(wait, &mut rx).await {
                    Ok(Ok(id)) => {
                        self.unlist(bot, ticket);
                        self.game_for(bot, id).await.map(Some)
                    }
                    // Taken, but its deal failed.
                    Ok(Err(_)) => {
                        self.unlist(bot, ticket);
                        self.not_told(relay, bot, false).await.map(Some)
                    }
                    Err(_) if self.unlist(bot, ticket) => Ok(None),
                    // Taken at the last moment: that deal says how it went.
                    Err(_) => {
                        let l = Listing {
                            ticket,
                            rx,
                            row: false,
                        };
                        self.taken_from_list(relay, bot, l).await.map(Some)
                    }
                }
            }
        }
    }

    /// The poll of a bot whose listing `l` is no longer in the list: a bot
    /// of this instance took it at the last moment (its deal says how it
    /// went), or another instance took its row.
    async fn taken_from_list(
        &self,
        relay: &Relay,
        bot: BotId,
        l: Listing,
    ) -> Result<NewGame, Refusal> {
        if let Ok(Ok(id)) = tokio::time::timeout(Duration::from_secs(10), l.rx).await {
            return self.game_for(bot, id).await;
        }
        self.not_told(relay, bot, l.row).await
    }

    /// The end of the poll of a bot that no deal told of a game: with a
    /// row, another instance may have dealt it one (see
    /// [`Hub::taken_elsewhere`]); without, only this instance could (and
    /// its deal tells the poll, see `Hub::deal_and_tell`): a game the bot is
    /// seated in here is the answer all the same, else `Retry`.
    async fn not_told(&self, relay: &Relay, bot: BotId, row: bool) -> Result<NewGame, Refusal> {
        if row {
            return self.taken_elsewhere(relay, bot).await;
        }
        let id = self.lock().game_of.get(&bot).copied();
        match id {
            Some(id) => self.game_for(bot, id).await,
            None => Ok(NewGame::Retry),
        }
    }

    /// The poll of a waiting bot ends: out of the table, or, if it was
    /// taken meanwhile (its row is gone), its game if the deal is written.
    async fn taken_elsewhere(&self, relay: &Relay, bot: BotId) -> Result<NewGame, Refusal> {
        // Waits while another instance holds the row for a deal.
        if !relay.db().stop_waiting(bot).await.map_err(internal)? {
            if let Some(row) = relay.db().seat_of(bot).await.map_err(internal)? {
                return Ok(game_of_row(&row));
            }
        }
        Ok(NewGame::Retry)
    }

    /// Deals `bot` a game with `w`, taken from this instance's list, if
    /// `w`'s row (when it has one) is still there (else another instance
    /// took it: `None`). `claim`: `bot`'s deal lock (a house bot's);
    /// `mark`: the two bots marked as in a deal, until it ends. From the
    /// take of the row on, the deal runs to its end, whatever happens to
    /// the request (see `to_the_end`).
    async fn deal_listed(
        self: &Arc<Self>,
        relay: &Relay,
        bot: BotId,
        w: Waiter,
        claim: Option<Claim>,
        mark: DealMark,
    ) -> Result<Option<NewGame>, Refusal> {
        let (hub, db) = (Arc::clone(self), relay.db().clone());
        let id = to_the_end(async move {
            if w.row && !db.stop_waiting(w.bot).await.map_err(internal)? {
                // Dropping `w` tells its poll to look at the tables.
                return Ok(None);
            }
            let pairing: Pairing = match claim {
                Some(claim) => claim.with(w.bot),
                None => db.local_pairing(w.bot),
            };
            hub.deal_and_tell(bot, w.bot, Some(pairing), Some(w.tx), mark)
                .await
                .map(Some)
        })
        .await?;
        match id {
            Some(id) => self.game_for(bot, id).await.map(Some),
            None => Ok(None),
        }
    }

    /// A house bot, while this instance is alone, takes a bot waiting in
    /// its list (those wait without a row then, so the table has none of
    /// them), under its own deal lock as when it takes one from the table.
    async fn house_takes_listed(
        self: &Arc<Self>,
        relay: &Relay,
        bot: BotId,
    ) -> Result<Option<NewGame>, Refusal> {
        let Some((w, mark)) = self.pop_waiter(bot) else {
            return Ok(None);
        };
        let claim = match relay.db().claim(bot).await {
            Ok(Some(claim)) => claim,
            // Its deal lock is held elsewhere (another house bot's loop
            // has it), or it is seated: the bot waits on.
            Ok(None) => {
                self.relist(w);
                return Ok(None);
            }
            Err(e) => {
                self.relist(w);
                return Err(internal(e));
            }
        };
        self.deal_listed(relay, bot, w, Some(claim), mark).await
    }

    /// Takes a bot other than `bot` waiting in this instance, at random,
    /// and marks both as in a deal (none while `bot` is in a deal).
    fn pop_waiter(&self, bot: BotId) -> Option<(Waiter, DealMark)> {
        let mut inner = self.lock();
        if inner.dealing.contains_key(&bot) {
            return None;
        }
        inner.waiting.retain(|w| !w.tx.is_closed());
        let candidates: Vec<usize> = (0..inner.waiting.len())
            .filter(|i| inner.waiting[*i].bot != bot)
            .collect();
        let i = *candidates.choose(&mut rand::rng())?;
        let w = inner.waiting.swap_remove(i);
        let mark = DealMark::new(self, &mut inner, [bot, w.bot]);
        Some((w, mark))
    }

    /// Puts a bot taken from the list back.
    fn relist(&self, w: Waiter) {
        self.lock().waiting.push(w);
    }

    /// Takes `bot`'s listing out; whether it was still listed.
    fn unlist(&self, bot: BotId, ticket: u64) -> bool {
        let mut inner = self.lock();
        let before = inner.waiting.len();
        inner
            .waiting
            .retain(|w| !(w.bot == bot && w.ticket == ticket));
        inner.waiting.len() != before
    }
}
