//! Games in progress: each is played by the arena's match runner
//! (`play_on_arrival`: answers applied as they come) in its own task, with two seats
//! whose connections are the hub's ([`SeatLink`]). The runner keeps the
//! game, its move clocks and its rulings; the hub passes requests in and
//! reads what the runner last said. A request that brings a move polls the
//! runner itself once its line is in ([`super::drive`]), so the move is
//! answered without a turn of the scheduler. A finished game is stored (in
//! the store's next group commit) by its task; requests that would tell a
//! bot the game is over wait until it is durable.

use std::sync::{Arc, Mutex, OnceLock};

use croupier_arena::live::{play_on_arrival, LiveConfig, LiveSeat};
use croupier_arena::runner::{now_rfc3339, MatchError};
use croupier_arena::transport::Link;
use croupier_dialects::skullwhist_rest::{self as rest, SkullWhistRest};
use croupier_rules::skullwhist::SkullWhistVariant;
use croupier_rules::skullwhist::{Card, SkullWhist, SkullWhistAction, SkullWhistObservation};
use croupier_rules::{Record, SeatInfo};
use croupier_store::{BotId, GameEnd, GameId, Store};
use tokio::sync::watch;

use super::drive::Drive;
use super::seat::SeatLink;
use super::{Hub, Inner, Refusal};

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
    /// written to the database (see `cluster`).
    pub(super) sync: Option<Arc<super::cluster::ViewSync>>,
    /// The game's runner, once its task has started it.
    pub(super) runner: OnceLock<Arc<Drive<Played>>>,
}

/// What the runner of a game comes to.
pub(super) type Played = Result<Record, MatchError>;

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

    /// Waits until the finished game is durable (or its writer gave up);
    /// whether it was stored.
    pub(super) async fn wait_stored(&self) -> bool {
        let mut rx = self.stored.clone();
        matches!(
            rx.wait_for(Option::is_some).await.map(|s| *s),
            Ok(Some(true))
        )
    }

    /// Whether a relayed line is answered by this game; the reply text.
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
            Ok(()) => "ok".into(),
            Err(Refusal(r)) => format!("refused {r}"),
        }
    }

    /// Polls the game's runner once in the calling task (see
    /// [`super::drive`]).
    fn step_here(&self) {
        if let Some(r) = self.runner.get() {
            r.step_here();
        }
    }

    /// A `bid`/`play` line of seat `i`: the runner's reply. The request that
    /// ends the game is answered once the game is durable.
    async fn request(&self, i: usize, line: String) -> Result<(), Refusal> {
        let not_in_game = || Refusal("you are not in a game".into());
        if self.over(i) {
            self.wait_stored().await;
            return Err(not_in_game());
        }
        let reply = match self.seats[i].send(line).await {
            Some(answer) => {
                // The move is applied and answered here, in this task.
                self.step_here();
                answer.await.ok()
            }
            None => None,
        };
        match reply {
            // wo (issue 13): timed when CROUPIER_WAITS is set.
            Some(Ok(())) if self.over(i) => match croupier_store::postgres::waits::timed(
                "game: final move waits until stored",
                self.wait_stored(),
            )
            .await
            {
                true => Ok(()),
                false => Err(Refusal(
                    "internal error: the game could not be stored".into(),
                )),
            },
            Some(reply) => {
                // With several instances, the seats' views reach the
                // database before the bot hears its answer.
                self.flushed().await;
                reply
            }
            None => {
                self.wait_stored().await;
                Err(not_in_game())
            }
        }
    }
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
    pub(super) inner: Arc<Mutex<Inner>>,
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
    let runner = Drive::new(async move {
        let played = play_on_arrival(&SkullWhistVariant {}, seed, &mut seats, &config);
        crate::live_games::watched(watch, played).await
    });
    let _ = g.runner.set(Arc::clone(&runner));
    let played: Result<Record, String> = match runner.run().await {
        Ok(Ok(mut record)) => {
            record.started = Some(t.started.clone());
            Ok(record)
        }
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(panic),
    };
    let end = played
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|record| GameEnd::from_record(record, &g.bots).map_err(|e| e.to_string()));
    let stored = match end {
        Ok(end) => {
            match (end.forfeited_by, end.scores.as_slice()) {
                (Some(f), _) => tracing::info!(
                    "game {}: bot {} forfeited against bot {}",
                    g.id,
                    f,
                    g.bots.iter().find(|b| **b != f).copied().unwrap_or(f)
                ),
                (None, [Some(a), Some(b), ..]) => tracing::info!(
                    "game {}: bot {} {a} to bot {} {b}",
                    g.id,
                    g.bots[0],
                    g.bots[1]
                ),
                (None, _) => {}
            }
            match t.store.finish_game(g.id, &end).await {
                Ok(()) => true,
                Err(e) => {
                    tracing::error!("cannot store finished game {}: {e}", g.id);
                    false
                }
            }
        }
        Err(e) => {
            // A rules or runner bug: the game is kept as aborted, with the reason.
            let reason = format!("the game could not be closed: {e}");
            tracing::error!("game {}: {reason}", g.id);
            let _ = t.store.abort_game(g.id, &reason, &now_rfc3339()).await;
            false
        }
    };
    if let Some(db) = &t.cluster {
        // Other instances stop sending requests to this game.
        if let Err(e) = db.unseat(g.id).await {
            tracing::warn!("game {}: cannot clear its seats: {e}", g.id);
        }
    }
    crate::live_games::closed(t.live.as_ref(), g.id, &played); // once stored (issue 16)
    {
        let mut inner = t.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.games.remove(&g.id);
        for b in g.bots {
            if inner.game_of.get(&b) == Some(&g.id) {
                inner.game_of.remove(&b);
            }
        }
    }
    let _ = t.done.send(Some(stored));
}

/// Bot `b`'s name, from the hub's cache or the store.
async fn bot_name(t: &Table, b: BotId) -> String {
    let known = {
        let inner = t.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.names.get(&b).map(|n| n.to_string())
    };
    if let Some(name) = known {
        return name;
    }
    match t.store.bot_info(b).await {
        Ok(Some(info)) => {
            let mut inner = t.inner.lock().unwrap_or_else(|p| p.into_inner());
            inner.names.insert(b, Arc::from(info.name.as_str()));
            info.name
        }
        Ok(None) => format!("bot {b}"),
        Err(e) => {
            tracing::warn!("game {}: cannot read bot {b}'s name: {e}", t.game.id);
            format!("bot {b}")
        }
    }
}

impl Hub {
    /// The bot's game and its seat in it.
    pub(super) fn current_seat(&self, bot: BotId) -> Option<(Arc<LiveGame>, usize)> {
        let game = self.current_game(bot)?;
        let seat = game.seat_of(bot)?;
        Some((game, seat))
    }

    /// `bid`.
    pub async fn bid(&self, bot: BotId, bid: i64) -> Result<(), Refusal> {
        let Some((game, i)) = self.current_seat(bot) else {
            return self.remote_line(bot, rest::bid_line(bid)).await;
        };
        game.request(i, rest::bid_line(bid)).await
    }

    /// `play`: plays a card; the game's record is stored before this returns
    /// when the card ends the game.
    pub async fn play(&self, bot: BotId, card: &str) -> Result<(), Refusal> {
        let card = rest::parse_card(card)?;
        let Some((game, i)) = self.current_seat(bot) else {
            return self.remote_line(bot, rest::play_line(card)).await;
        };
        game.request(i, rest::play_line(card)).await
    }

    /// `status`: the reply, as JSON text.
    pub async fn status(&self, bot: BotId) -> Arc<str> {
        if let Some((game, i)) = self.current_seat(bot) {
            let status = {
                let v = game.seats[i].view();
                (!v.over).then(|| Arc::clone(&v.status))
            };
            match status {
                Some(s) => return s,
                None => {
                    game.wait_stored().await;
                }
            }
        } else if let Some(s) = self.remote_status(bot).await {
            return s;
        }
        Arc::clone(&self.not_in_game)
    }

    /// What a bot sees of its game and may do (for house bots, once marked
    /// with [`Hub::plays_inside`]).
    pub async fn observation(
        &self,
        bot: BotId,
    ) -> Option<(SkullWhistObservation, Vec<SkullWhistAction>)> {
        let (game, i) = self.current_seat(bot)?;
        let v = game.seats[i].view();
        if v.over {
            return None;
        }
        v.observation.clone()
    }
}
