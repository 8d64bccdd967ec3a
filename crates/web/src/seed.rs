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
use croupier_store::tournaments::{EntryRow, NewTournament, TournamentId};
use croupier_store::web::ImportGame;
use croupier_store::{BotId, BotKind, GameEnd, RecordError, Store, StoreError};
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
    let finished = finish_time(i, total, spacing, end);
    let started = rfc3339(start_time(finished, seed));
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

/// When a game that finished at `finished` started: 0.8 to 4.8 s before,
/// by its `seed`.
fn start_time(finished: SystemTime, seed: u64) -> SystemTime {
    finished
        .checked_sub(Duration::from_millis(800 + seed % 4000))
        .unwrap_or(finished)
}

/// When game `i` of a series of `total` finishes: `spacing` after game
/// `i - 1`, the last one at `end`.
fn finish_time(i: u64, total: u64, spacing: Duration, end: SystemTime) -> SystemTime {
    let back = spacing * u32::try_from(total.saturating_sub(i + 1)).unwrap_or(u32::MAX);
    end.checked_sub(back).unwrap_or(end)
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
    seed_with_cups(store, count, spacing, end, None).await
}

/// Tournaments among seeded games, as a competition holds them now and
/// then beside its ladder: in each run of `every` games, the games of one
/// kind among the first `burst` are one tournament's (a cup), the kinds
/// taken in turn. A cup is a finished tournament of every demo bot of its
/// game (stored as a round-robin, without plans: its games are the
/// seeder's pairings); its games count as tournament games and are not
/// rated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cups {
    /// Games in a run (at least 1).
    pub every: u64,
    /// Of them, the first that may be the cup's (a third of them are).
    pub burst: u64,
}

impl Cups {
    /// A tenth of a series of `count` games in cups: a cup of about 1,000
    /// games in every 10,000, or, in a series of less than 30,000 games, in
    /// runs of a third of it (at least 30 games), so that a short series
    /// has cups of every game and ladder games of every game too.
    pub fn tenth(count: u64) -> Cups {
        let every = (count / 3).clamp(30, 10_000);
        Cups {
            every,
            burst: every * 3 / 10,
        }
    }

    /// The cup (numbered from 0) that game `i` of the series is in, if
    /// any. Cup `k` is of the kind that [`pick`] gives the games `i` with
    /// `i % 3 == k % 3`.
    pub fn of(self, i: u64) -> Option<u64> {
        let k = i / self.every.max(1);
        (i % self.every.max(1) < self.burst && i % 3 == k % 3).then_some(k)
    }
}

/// [`seed_until`], with `cups` among the games (none without): each cup's
/// tournament is created and started before its first game is stored,
/// and finished once its last game is.
pub async fn seed_with_cups(
    store: &dyn Store,
    count: u64,
    spacing: Duration,
    end: SystemTime,
    cups: Option<Cups>,
) -> Result<u64, SeedError> {
    let ids = demo_bots(store).await?;
    let mut stored = 0;
    let chunk = 2000u64;
    let mut start = 0;
    // The cup being filled: its number, its tournament and when its last
    // game so far finished.
    let mut open: Option<(u64, TournamentId, String)> = None;
    while start < count {
        let stop = (start + chunk).min(count);
        let mut games = play_games(start..stop, count, spacing, end, &ids).await?;
        let mut over = Vec::new();
        for (i, g) in (start..stop).zip(games.iter_mut()) {
            let Some(k) = cups.and_then(|c| c.of(i)) else {
                continue;
            };
            if open.as_ref().map(|o| o.0) != Some(k) {
                over.extend(open.take());
                let first = start_time(finish_time(i, count, spacing, end), g.seed as u64);
                let id = start_cup(store, k, first, &ids).await?;
                open = Some((k, id, String::new()));
            }
            if let Some((_, id, last)) = open.as_mut() {
                g.tournament = Some(*id);
                last.clone_from(&g.end.finished);
            }
        }
        stored += store.import_games(games).await?.len() as u64;
        for (_, id, last) in over {
            end_cup(store, id, &last).await?;
        }
        start = stop;
    }
    if let Some((_, id, last)) = open {
        end_cup(store, id, &last).await?;
    }
    Ok(stored)
}

/// Creates and starts cup `k` (see [`Cups::of`]), whose first game starts
/// at `first`: every demo bot of its game is entered.
/// Its tournament. Its games are the seeder's own pairings, imported as
/// its planned games of round 1 (see `ImportGame::tournament`), so its
/// page has standings, as a played cup's has.
async fn start_cup(
    store: &dyn Store,
    k: u64,
    first: SystemTime,
    ids: &[BotId],
) -> Result<TournamentId, SeedError> {
    let kind = GameKind::ALL[(k % 3) as usize];
    let entrants: Vec<(EntryRow, &str)> = BOTS
        .iter()
        .zip(ids)
        .filter(|((_, game, _), _)| *game == kind)
        .enumerate()
        .map(|(seq, ((name, _, strategy), id))| {
            (
                EntryRow::new(*id, seq as i64, *name, BotKind::House),
                *strategy,
            )
        })
        .collect();
    let entries: Vec<EntryRow> = entrants.iter().map(|(e, _)| e.clone()).collect();
    let starts_at = first
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let new = NewTournament {
        seats: *kind.seats().end() as i64,
        starts_at,
        seed: k as i64,
        ..NewTournament::round_robin(&format!("cup-{}", k + 1), kind.name(), entries)
    };
    let t = store.tournaments();
    let id = t.create_tournament(&new).await?;
    let frozen: Vec<EntryRow> = entrants
        .into_iter()
        .map(|(e, strategy)| EntryRow {
            tournament_id: id,
            frozen: true,
            strategy: Some(strategy.to_string()),
            ..e
        })
        .collect();
    t.start_tournament(id, &frozen, 1, &rfc3339(first)).await?;
    Ok(id)
}

/// Finishes a cup's tournament when its last game finished, and keeps its
/// winner with it, as the tournaments' driver does.
async fn end_cup(store: &dyn Store, id: TournamentId, last: &str) -> Result<(), SeedError> {
    let winner = croupier_competition::tournaments::view::winner_now(store, id).await?;
    store
        .tournaments()
        .finish_tournament(id, last, winner.as_deref())
        .await?;
    Ok(())
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

    #[test]
    fn cups_take_a_third_of_each_burst_the_kinds_in_turn() {
        let cups = Cups {
            every: 10,
            burst: 6,
        };
        // Runs of 10 games; in each, the games of its kind among the first
        // 6 (i % 3 == k % 3 in run k).
        let cupped: Vec<(u64, u64)> = (0..24).filter_map(|i| cups.of(i).map(|k| (i, k))).collect();
        assert_eq!(
            cupped,
            vec![(0, 0), (3, 0), (10, 1), (13, 1), (20, 2), (23, 2)]
        );
        let tenth = Cups::tenth(1_000_000);
        assert_eq!((tenth.every, tenth.burst), (10_000, 3_000));
        for i in 0..30_000 {
            if let Some(k) = tenth.of(i) {
                let (kind, _, _) = pick(i, 7);
                assert_eq!(kind, GameKind::ALL[(k % 3) as usize], "game {i}");
            }
        }
        for (count, cupped) in [(1_000_000, 100_000), (300, 30), (30, 3), (1, 1)] {
            let cups = Cups::tenth(count);
            let n = (0..count).filter(|i| cups.of(*i).is_some()).count();
            assert_eq!(n, cupped, "{count} games: {cups:?}");
        }
    }

    #[tokio::test]
    async fn seeded_cups_are_finished_tournaments_of_their_games() {
        use croupier_store::tournaments::{GamesFilter, Marked};
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("cups.db").display());
        let store = croupier_store::open(&url).await.unwrap();
        // Runs of 650 games: cup 3 (1,950 to 2,144) crosses the import's
        // chunks of 2,000.
        let cups = Cups {
            every: 650,
            burst: 195,
        };
        let end = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let n = seed_with_cups(
            store.as_ref(),
            2_500,
            Duration::from_secs(1),
            end,
            Some(cups),
        )
        .await
        .unwrap();
        assert_eq!(n, 2_500);
        let t = store.tournaments();
        let mut list = t.tournament_list().await.unwrap();
        list.sort_by_key(|c| c.id);
        // 4 cups of 65 games (a third of 195).
        assert_eq!(list.len(), 4);
        let mut marked = 0;
        for (k, cup) in list.iter().enumerate() {
            let kind = GameKind::ALL[k % 3].name();
            assert_eq!(
                (cup.name.as_str(), cup.game.as_str(), cup.status.as_str()),
                (format!("cup-{}", k + 1).as_str(), kind, "finished")
            );
            let filter = GamesFilter {
                tournament: Some(cup.id),
                ..GamesFilter::default()
            };
            let games = t.filtered_games(&filter, 0, 100).await.unwrap();
            assert_eq!(games.len(), 65, "{}", cup.name);
            assert!(games.iter().all(|g| g.game == kind), "{}", cup.name);
            assert_eq!(t.count_filtered_games(&filter).await.unwrap(), 65);
            let entries = t.tournament_entries(cup.id).await.unwrap();
            let demo = BOTS.iter().filter(|b| b.1.name() == kind).count();
            assert_eq!(entries.len(), demo, "{}", cup.name);
            assert!(entries.iter().all(|e| e.frozen && e.strategy.is_some()));
            // Its games are its planned games, done: progress, standings
            // and a winner, as a played cup has.
            let view = croupier_competition::tournaments::view::view(store.as_ref(), cup.clone())
                .await
                .unwrap();
            assert_eq!((view.progress.done, view.progress.total), (65, 65));
            assert_eq!(view.standings.len(), demo, "{}", cup.name);
            // The standings count its round: points for every game, the
            // most for the first place.
            assert_eq!(view.standings_after_round, 1, "{}", cup.name);
            let points: Vec<f64> = view.standings.iter().map(|s| s.points).collect();
            assert!(
                points[0] > 0.0 && points.iter().all(|p| *p <= points[0]),
                "{points:?}"
            );
            // Its winner is kept with it, and the brief says it.
            assert!(cup.winner.is_some(), "{}", cup.name);
            assert_eq!(cup.winner.as_ref(), Some(&view.standings[0].name));
            let brief = croupier_competition::tournaments::view::brief(store.as_ref(), cup.clone())
                .await
                .unwrap();
            assert_eq!(
                (brief.winner, brief.progress.done),
                (cup.winner.clone(), 65)
            );
            let played: i64 = view.standings.iter().map(|s| s.games).sum();
            let seats: usize = games.iter().map(|g| g.seats.len()).sum();
            assert_eq!(played, seats as i64, "{}: a game for each seat", cup.name);
            marked += games.len() as i64;
        }
        let only = GamesFilter {
            marked: Marked::Only,
            ..GamesFilter::default()
        };
        assert_eq!(t.count_filtered_games(&only).await.unwrap(), marked);
        let hide = GamesFilter {
            marked: Marked::Hide,
            ..GamesFilter::default()
        };
        assert_eq!(t.count_filtered_games(&hide).await.unwrap(), 2_500 - marked);
        // Without cups, the same series has no tournament.
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("none.db").display());
        let store = croupier_store::open(&url).await.unwrap();
        seed_until(store.as_ref(), 300, Duration::from_secs(1), end)
            .await
            .unwrap();
        assert!(store
            .tournaments()
            .tournament_list()
            .await
            .unwrap()
            .is_empty());
    }
}
