//! Demo data: finished games of all three games, played by the arena's
//! runner (`play_live`) with the built-in strategies as house seats (real,
//! replayable records, with the odd fault the runner rules on), turned into
//! stored games by `GameEnd::from_record` and imported in bulk. Used by
//! `croupier bench web` and the website's tests.

use std::time::{Duration, SystemTime};

use croupier_arena::live::{play_live, LiveConfig, LiveSeat};
use croupier_arena::record::{rfc3339, MatchError};
use croupier_bots::{bot_rng, BotRng, Builtins, Strategy, UnknownBot};
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
use croupier_rules::{Game, GameKind, Record, Seat, SeatInfo};
use croupier_store::web::ImportGame;
use croupier_store::{BotId, GameEnd, RecordError, Store, StoreError};
use futures::StreamExt as _;
use rand::Rng;

/// Why demo games could not be seeded.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// A demo bot's strategy does not exist.
    #[error("demo bot: {0}")]
    Bot(#[from] UnknownBot),
    /// The runner could not play a game.
    #[error("demo game: {0}")]
    Match(#[from] MatchError),
    /// A record could not become a stored game.
    #[error("demo record: {0}")]
    Record(#[from] RecordError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The demo bots: (name, game, built-in strategy).
pub const BOTS: &[(&str, GameKind, &str)] = &[
    ("ace-of-spades", GameKind::SkullWhist, "heuristic"),
    ("trump-tight", GameKind::SkullWhist, "heuristic"),
    ("shuffler", GameKind::SkullWhist, "random"),
    ("coin-flip", GameKind::SkullWhist, "random"),
    ("countess", GameKind::LoveLetter, "heuristic"),
    ("baroness", GameKind::LoveLetter, "heuristic"),
    ("guard-dog", GameKind::LoveLetter, "random"),
    ("handmaid", GameKind::LoveLetter, "random"),
    ("gops-planner", GameKind::Goofspiel, "planner"),
    ("jujitsu-master", GameKind::Goofspiel, "planner"),
    ("lot-lizard", GameKind::Goofspiel, "random"),
];

/// One game to play: its kind, seed and the demo bots (indexes into
/// [`BOTS`]) by seat.
fn pick(i: u64, base: u64) -> (GameKind, u64, Vec<usize>) {
    let seed = base.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(i);
    let mut rng = bot_rng(seed ^ 0x5EED);
    let kind = GameKind::ALL[(i % 3) as usize];
    let mut pool: Vec<usize> = (0..BOTS.len()).filter(|b| BOTS[*b].1 == kind).collect();
    let range = kind.seats();
    let seats = if range.start() == range.end() {
        *range.start()
    } else {
        rng.random_range(range)
    };
    let mut chosen = Vec::with_capacity(seats);
    while chosen.len() < seats && !pool.is_empty() {
        chosen.push(pool.swap_remove(rng.random_range(0..pool.len())));
    }
    (kind, seed, chosen)
}

/// A demo strategy that, about once in 6,000 moves, repeats its previous
/// action (a card already played: the rules refuse it), so the runner rules
/// on a fault now and then: a random move in Goofspiel, a forfeit otherwise.
struct Clumsy<G: Game> {
    inner: Box<dyn Strategy<G>>,
    last: Option<G::Action>,
}

impl<G: Game> Strategy<G> for Clumsy<G> {
    fn new_game(&mut self, seat: Seat, variant: &G::Variant, seats: usize) {
        self.last = None;
        self.inner.new_game(seat, variant, seats);
    }

    fn notify(&mut self, event: &G::Event) {
        self.inner.notify(event);
    }

    fn act(&mut self, obs: &G::Observation, legal: &[G::Action], rng: &mut BotRng) -> G::Action {
        if let Some(old) = self.last {
            if rng.random_range(0..6000) == 0 {
                return old;
            }
        }
        let a = self.inner.act(obs, legal, rng);
        self.last = Some(a);
        a
    }
}

/// Plays one game between the demo bots `bots` (indexes into [`BOTS`])
/// through the arena's runner.
async fn play<G: Builtins>(
    variant: &G::Variant,
    seed: u64,
    bots: &[usize],
) -> Result<Record, SeedError> {
    let mut seats = Vec::with_capacity(bots.len());
    for b in bots {
        let (name, _, strategy) = BOTS[*b];
        // The random bots stand for in-process house bots; the others for
        // bots reached over a transport.
        let info = SeatInfo {
            dialect: (strategy != "random").then(|| "croupier".to_string()),
            ..SeatInfo::named(name)
        };
        let clumsy = Clumsy {
            inner: G::builtin(strategy)?,
            last: None,
        };
        seats.push(LiveSeat::builtin(info, Box::new(clumsy)));
    }
    Ok(play_live::<G>(variant, seed, &mut seats, &LiveConfig::default()).await?)
}

/// Plays games `range` of a demo series; game `i` finishes `spacing` after
/// game `i - 1`, the last one `end`. Up to 16 games are played at once.
pub async fn play_games(
    range: std::ops::Range<u64>,
    total: u64,
    spacing: Duration,
    end: SystemTime,
    ids: &[BotId],
) -> Result<Vec<ImportGame>, SeedError> {
    let games = futures::stream::iter(range)
        .map(|i| demo_game(i, total, spacing, end, ids))
        .buffered(16);
    games.collect::<Vec<_>>().await.into_iter().collect()
}

/// Plays and dates demo game `i`, ready to import.
async fn demo_game(
    i: u64,
    total: u64,
    spacing: Duration,
    end: SystemTime,
    ids: &[BotId],
) -> Result<ImportGame, SeedError> {
    let (kind, seed, bots) = pick(i, 7);
    let mut record = match kind {
        GameKind::SkullWhist => {
            play::<SkullWhist>(&SkullWhistVariant::default(), seed, &bots).await?
        }
        GameKind::LoveLetter => {
            play::<LoveLetter>(&LoveLetterVariant::default(), seed, &bots).await?
        }
        GameKind::Goofspiel => {
            let v = if i.is_multiple_of(2) {
                GoofspielVariant::default()
            } else {
                GoofspielVariant::jujitsu(vec![13])
            };
            play::<Goofspiel>(&v, seed, &bots).await?
        }
    };
    let back = spacing * u32::try_from(total.saturating_sub(i + 1)).unwrap_or(u32::MAX);
    let finished = end.checked_sub(back).unwrap_or(end);
    let started = finished
        .checked_sub(Duration::from_millis(800 + seed % 4000))
        .unwrap_or(finished);
    let started = rfc3339(started);
    steady_thinking(&mut record, seed);
    record.started = Some(started.clone());
    record.finished = Some(rfc3339(finished));
    let bot_ids: Vec<BotId> = bots.iter().filter_map(|b| ids.get(*b).copied()).collect();
    let end = GameEnd::from_record(&record, &bot_ids)?;
    Ok(ImportGame {
        tournament: None,
        game: kind.name().to_string(),
        bots: bot_ids,
        seed: seed as i64,
        started,
        end,
    })
}

/// Demo bots are built-in strategies that answer in microseconds: their
/// measured times say nothing and differ on every run. Each timed step gets
/// a thinking time drawn from the game's seed instead (0.2 to 40 ms), so
/// that a demo site, and the tests that read one, are the same every time.
fn steady_thinking(record: &mut Record, seed: u64) {
    for (i, step) in record.steps.iter_mut().enumerate() {
        if step.ms.is_some() {
            let h = (seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .wrapping_mul(0xBF58_476D_1CE4_E5B9)
                >> 40;
            step.ms = Some(0.2 + (h % 3981) as f64 / 100.0);
        }
    }
}

/// Registers the demo bots (as house bots of their games); their ids in
/// [`BOTS`] order.
pub async fn demo_bots(store: &dyn Store) -> Result<Vec<BotId>, StoreError> {
    let mut ids = Vec::with_capacity(BOTS.len());
    for (name, game, _) in BOTS {
        ids.push(store.ensure_house_bot(name, game.name()).await?);
    }
    Ok(ids)
}

/// Plays and stores `count` demo games, the last finishing now, one every
/// `spacing`; games are imported in transactions of 2,000.
pub async fn seed(store: &dyn Store, count: u64, spacing: Duration) -> Result<u64, SeedError> {
    seed_until(store, count, spacing, SystemTime::now()).await
}

/// [`seed`], with the last game finishing at `end`: the same `end` gives
/// the same games, times and ratings on every run.
pub async fn seed_until(
    store: &dyn Store,
    count: u64,
    spacing: Duration,
    end: SystemTime,
) -> Result<u64, SeedError> {
    let ids = demo_bots(store).await?;
    let mut stored = 0;
    let chunk = 2000u64;
    let mut start = 0;
    while start < count {
        let stop = (start + chunk).min(count);
        let games = play_games(start..stop, count, spacing, end, &ids).await?;
        stored += store.import_games(games).await?.len() as u64;
        start = stop;
    }
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn demo_games_are_complete_records_that_replay() {
        let ids: Vec<BotId> = (1..=BOTS.len() as i64).collect();
        let games = play_games(0..300, 300, Duration::from_secs(1), SystemTime::now(), &ids)
            .await
            .unwrap();
        assert_eq!(games.len(), 300, "every demo game is played to its end");
        for g in &games {
            let record: Record = serde_json::from_str(&g.end.record).unwrap();
            let replayed = match record.game.parse::<GameKind>().unwrap() {
                GameKind::SkullWhist => record.verify::<SkullWhist>().map(|_| ()),
                GameKind::LoveLetter => record.verify::<LoveLetter>().map(|_| ()),
                GameKind::Goofspiel => record.verify::<Goofspiel>().map(|_| ()),
            };
            assert!(replayed.is_ok(), "{}: {replayed:?}", record.game);
            assert_eq!(g.bots.len(), record.seats.len());
            assert!(g.started < g.end.finished);
        }
        assert!(
            games.iter().any(|g| g.bots.len() == 4),
            "some 4-seat Love Letter"
        );
    }
}
