//! Games in progress: each is played by the arena's match runner
//! (`play_on_arrival`: answers applied as they come) in its own task, with two seats
//! whose connections are the hub's ([`SeatLink`]). The runner keeps the
//! game, its move clocks and its rulings; the hub passes requests in and
//! reads what the runner last said. A request that brings a move polls the
//! runner itself once its line is in ([`super::drive`]), so the move is
//! answered without a turn of the scheduler. A finished game is closed
//! (stored in the store's next group commit, then its bots released) by
//! whoever polls the runner when it ends, usually the request that ended
//! it; requests that would tell a bot the game is over wait until it is
//! durable.

use std::sync::{Arc, OnceLock};

use croupier_arena::live::{play_on_arrival, LiveConfig, LiveSeat};
use croupier_arena::record::now_rfc3339;
use croupier_arena::transport::Link;
use croupier_dialects::skullwhist_rest::Refusal;
use croupier_dialects::skullwhist_rest::SkullWhistRest;
use croupier_rules::skullwhist::SkullWhistVariant;
use croupier_rules::skullwhist::{Card, SkullWhist};
use croupier_rules::{Record, SeatInfo};
use croupier_store::{BotId, GameEnd, GameId, Store};
use tokio::sync::watch;

use super::drive::Drive;
use super::seat::SeatLink;
use super::view_sync::ViewSync;

/// A game in progress.
pub struct LiveGame {
    /// Its id.
    pub id: GameId,
    /// Bots by seat.
    pub bots: [BotId; 2],
    /// The 13 cards each seat was dealt, sorted.
    pub(super) hands: [Vec<Card>; 2],
    pub(super) seats: [Arc<SeatLink>; 2],
    /// `None` while the game runs; once it is over, whether its record is
    /// durable. Requests that would tell a bot the game is over wait on it.
    pub(super) stored: watch::Receiver<Option<bool>>,
    /// With several instances: the views' changes and how far they are
    /// written to the database (see `view_sync`).
    pub(super) sync: Option<Arc<ViewSync>>,
    /// The game's runner, once its task has started it.
    /// (It comes to nothing: the game is closed by then, see [`End`].)
    pub(super) runner: OnceLock<Arc<Drive<()>>>,
}

/// Where a seat stands for a `new-game` ([`LiveGame::seat_state`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SeatState {
    /// It has not bid: its game is the answer.
    Open,
    /// It has bid: the game must be finished first.
    Bid,
    /// The game is over and stored.
    Over,
}

impl std::fmt::Debug for LiveGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveGame")
            .field("id", &self.id)
            .field("bots", &self.bots)
            .finish_non_exhaustive()
    }
}

impl LiveGame {
    pub(super) fn seat_of(&self, bot: BotId) -> Option<usize> {
        self.bots.iter().position(|b| *b == bot)
    }

    /// Whether the game is over for seat `i` (the runner said so).
    pub(super) fn over(&self, i: usize) -> bool {
        self.seats[i].view().over
    }

    /// Where seat `i` stands for a `new-game`, here or asked by another
    /// instance: a game that is over is waited on until it is stored
    /// (its seats leave the tables before it counts as stored).
    pub(super) async fn seat_state(&self, i: usize) -> SeatState {
        let (over, has_bid) = {
            let v = self.seats[i].view();
            (v.over, v.has_bid)
        };
        if over {
            self.wait_stored().await;
            SeatState::Over
        } else if has_bid {
            SeatState::Bid
        } else {
            SeatState::Open
        }
    }

    /// Waits until the finished game is durable (or its writer gave up);
    /// whether it was stored.
    pub(super) async fn wait_stored(&self) -> bool {
        let mut rx = self.stored.clone();
        matches!(
            rx.wait_for(Option::is_some).await.map(|s| *s),
            Ok(Some(true))
        )
    }

    /// For the request that ended the game: waits until the game is closed
    /// (whether it was stored), polling the runner here whenever it is
    /// woken (its game's group commit answered), so that the answer does
    /// not also wait for the game's task to come round in the run queue.
    async fn close_here(&self) -> bool {
        let Some(r) = self.runner.get() else {
            return self.wait_stored().await;
        };
        let mut rx = self.stored.clone();
        loop {
            if let Some(stored) = *rx.borrow_and_update() {
                return stored;
            }
            r.step_here();
            if let Some(stored) = *rx.borrow_and_update() {
                return stored;
            }
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        return false;
                    }
                }
                () = r.nudged() => {}
            }
        }
    }

    /// A line relayed from another instance for seat `i`: the reply text.
    pub(super) async fn relayed(&self, i: usize, line: String) -> String {
        if i > 1 {
            return super::relay::GONE.into();
        }
        if line == "abandon" {
            self.seats[i].abandon().await;
            self.step_here();
            self.wait_stored().await;
            return "ok".into();
        }
        match self.request(i, line).await {
            Ok(()) => "ok".to_string(),
            Err(Refusal(r)) => format!("refused {r}"),
        }
    }

    /// Seat `i`'s `status` as the runner last set it, the one place every
    /// instance's answer comes from (issue 50: reads never go back in
    /// time); `None` once the game is over for the seat, after its record
    /// is durable.
    pub(super) async fn status(&self, i: usize) -> Option<Arc<str>> {
        let status = {
            let v = self.seats.get(i)?.view();
            (!v.over).then(|| Arc::clone(&v.status))
        };
        if status.is_none() {
            self.wait_stored().await;
        }
        status
    }

    /// Polls the game's runner once in the calling task (see
    /// [`super::drive`]).
    fn step_here(&self) {
        if let Some(r) = self.runner.get() {
            r.step_here();
        }
    }

    /// Puts seat `i`'s line in its inbox and applies it here, in this task
    /// (see [`super::drive`]): where the runner's answer comes, or `None`
    /// when the game is gone. When the inbox has room, the game's task is
    /// not woken for the line ([`Drive::hold`]).
    async fn put(
        &self,
        i: usize,
        line: String,
    ) -> Option<tokio::sync::oneshot::Receiver<Result<(), Refusal>>> {
        let held = self.runner.get().and_then(|r| r.hold());
        match self.seats[i].try_send(line) {
            Ok(answer) => {
                match held {
                    Some(held) => held.step(),
                    None => self.step_here(),
                }
                Some(answer)
            }
            Err(None) => None,
            Err(Some(line)) => {
                drop(held);
                let answer = self.seats[i].send(line).await?;
                self.step_here();
                Some(answer)
            }
        }
    }

    /// A `bid`/`play` line of seat `i`: the runner's reply. The request that
    /// ends the game is answered once the game is durable. The answer does
    /// not wait for the database: no other instance reads the game's
    /// state but through this one (issue 50).
    pub(super) async fn request(&self, i: usize, line: String) -> Result<(), Refusal> {
        let not_in_game = || Refusal("you are not in a game".into());
        if self.over(i) {
            self.wait_stored().await;
            return Err(not_in_game());
        }
        let reply = match self.put(i, line).await {
            Some(answer) => answer.await.ok(),
            None => None,
        };
        match reply {
            // wo (issue 13): timed when CROUPIER_WAITS is set.
            Some(Ok(())) if self.over(i) => match croupier_store::waits::timed(
                "game: final move waits until stored",
                self.close_here(),
            )
            .await
            {
                true => Ok(()),
                false => Err(Refusal(
                    "internal error: the game could not be stored".into(),
                )),
            },
            Some(reply) => reply,
            None => {
                self.wait_stored().await;
                Err(not_in_game())
            }
        }
    }
}

/// What a game tells the hub that dealt it, and asks of it: implemented
/// by the hub's maps (`state`), handed down to each game's task.
pub(super) trait Registry: Send + Sync {
    /// Bot `bot`'s name, if the hub knows it.
    fn name(&self, bot: BotId) -> Option<Arc<str>>;
    /// Remembers bot `bot`'s name.
    fn remember(&self, bot: BotId, name: Arc<str>);
    /// Game `id` is over and closed: its bots are in it no more.
    fn closed(&self, id: GameId, bots: [BotId; 2]);
}

/// What a game's task needs.
pub(super) struct Table {
    pub(super) game: Arc<LiveGame>,
    pub(super) seed: u64,
    pub(super) started: String,
    /// Seats played inside the server (their dialect writes observations).
    pub(super) house: [bool; 2],
    pub(super) config: LiveConfig,
    pub(super) store: Arc<dyn Store>,
    /// The hub's maps, told when the game closes.
    pub(super) hub: Arc<dyn Registry>,
    /// Where spectators watch the game (issue 16).
    pub(super) live: Option<Arc<crate::live_games::LiveGames>>,
    pub(super) done: watch::Sender<Option<bool>>,
    /// With several instances: the shared tables.
    pub(super) cluster: Option<croupier_store::postgres::cluster::Cluster>,
}

/// Plays a dealt game to its end through the match runner, stores it, and
/// releases its bots.
pub(super) async fn run(t: Table) {
    let g = &t.game;
    let mut seats: Vec<LiveSeat<SkullWhist>> = (0..2)
        .map(|i| {
            let mut dialect = SkullWhistRest::new(g.id, g.bots[1 - i]);
            if t.house[i] {
                dialect = dialect.with_observations();
            }
            let link: Arc<dyn croupier_arena::transport::Connector> = g.seats[i].clone();
            LiveSeat::remote(
                SeatInfo::named(format!("bot:{}", g.bots[i])),
                Link::Custom(link),
                Box::new(dialect),
            )
        })
        .collect();
    // Spectators watch the game's public events (issue 16).
    let watch = match &t.live {
        Some(live) => {
            let mut names = Vec::with_capacity(2);
            for b in g.bots {
                names.push(bot_name(&t, b).await);
            }
            Some(live.open(
                g.id,
                <SkullWhist as croupier_rules::Game>::NAME,
                names,
                &t.started,
                None,
            ))
        }
        None => None,
    };
    let (seed, config) = (t.seed, t.config.clone());
    let end = Arc::new(End {
        id: g.id,
        bots: g.bots,
        started: t.started.clone(),
        store: Arc::clone(&t.store),
        hub: Arc::clone(&t.hub),
        live: t.live.clone(),
        cluster: t.cluster.clone(),
        sync: g.sync.clone(),
        done: t.done,
    });
    // The game is closed by whoever polls the runner when it ends: usually
    // the request that brought the last card, which then waits for the
    // group commit itself (see `LiveGame::close_here`).
    let closer = Arc::clone(&end);
    let runner = Drive::new(async move {
        let played = play_on_arrival(&SkullWhistVariant {}, seed, &mut seats, &config);
        let played = crate::live_games::watched(watch, played).await;
        closer.close(played.map_err(|e| e.to_string())).await;
    });
    let _ = g.runner.set(Arc::clone(&runner));
    if let Err(panic) = runner.run().await {
        end.close(Err(panic)).await;
    }
}

/// What closing a game needs.
struct End {
    id: GameId,
    bots: [BotId; 2],
    started: String,
    store: Arc<dyn Store>,
    hub: Arc<dyn Registry>,
    live: Option<Arc<crate::live_games::LiveGames>>,
    cluster: Option<croupier_store::postgres::cluster::Cluster>,
    /// With several instances: whether the game's seats are in the tables.
    sync: Option<Arc<ViewSync>>,
    done: watch::Sender<Option<bool>>,
}

impl End {
    /// Stores the game, tells its spectators, releases its bots and then
    /// the requests waiting for it.
    async fn close(&self, played: Result<Record, String>) {
        let (id, bots) = (self.id, self.bots);
        let played = played.map(|mut record| {
            record.started = Some(self.started.clone());
            record
        });
        let stored = store_end(&*self.store, id, bots, &played).await;
        if let Some(db) = &self.cluster {
            // Other instances stop sending requests to this game; a game
            // dealt and ended while this instance was alone has no seats.
            let shared = match &self.sync {
                Some(s) => s.rows_end().await,
                None => true,
            };
            if shared {
                if let Err(e) = db.unseat(id).await {
                    tracing::warn!("game {id}: cannot clear its seats: {e}");
                }
            }
        }
        crate::live_games::closed(self.live.as_ref(), id, &played); // once stored (issue 16)
        self.hub.closed(id, bots);
        let _ = self.done.send(Some(stored));
    }
}

/// Stores how a game ended: finished with its record, or aborted with the
/// reason; whether it was stored as finished.
async fn store_end(
    store: &dyn Store,
    id: GameId,
    bots: [BotId; 2],
    played: &Result<Record, String>,
) -> bool {
    let end = played
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|record| GameEnd::from_record(record, &bots).map_err(|e| e.to_string()));
    match end {
        Ok(end) => {
            match (end.forfeited_by, end.scores.as_slice()) {
                (Some(f), _) => tracing::info!(
                    "game {id}: bot {f} forfeited against bot {}",
                    bots.iter().find(|b| **b != f).copied().unwrap_or(f)
                ),
                (None, [Some(a), Some(b), ..]) => {
                    tracing::info!("game {id}: bot {} {a} to bot {} {b}", bots[0], bots[1])
                }
                (None, _) => {}
            }
            let write = store.finish_game(id, &end);
            match croupier_store::waits::timed("game: stored", write).await {
                Ok(()) => {
                    if let Ok(record) = played {
                        crate::metrics::game_finished(crate::metrics::GameSource::Rest, record);
                    }
                    true
                }
                Err(e) => {
                    tracing::error!("cannot store finished game {id}: {e}");
                    crate::metrics::game_aborted("skullwhist", crate::metrics::GameSource::Rest);
                    false
                }
            }
        }
        Err(e) => {
            // A rules or runner bug: the game is kept as aborted, with the reason.
            let reason = format!("the game could not be closed: {e}");
            tracing::error!("game {id}: {reason}");
            crate::metrics::game_aborted("skullwhist", crate::metrics::GameSource::Rest);
            let _ = store.abort_game(id, &reason, &now_rfc3339()).await;
            false
        }
    }
}

/// Bot `b`'s name, from the hub's cache or the store.
async fn bot_name(t: &Table, b: BotId) -> String {
    if let Some(name) = t.hub.name(b) {
        return name.to_string();
    }
    match t.store.bot_info(b).await {
        Ok(Some(info)) => {
            t.hub.remember(b, Arc::from(info.name.as_str()));
            info.name
        }
        Ok(None) => format!("bot {b}"),
        Err(e) => {
            tracing::warn!("game {}: cannot read bot {b}'s name: {e}", t.game.id);
            format!("bot {b}")
        }
    }
}
