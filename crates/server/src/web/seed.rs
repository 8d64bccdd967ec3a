//! Demo data: finished games of all three games, played by the engines with
//! the built-in strategies (real, replayable records, with the odd fault),
//! imported in bulk. Used by `croupier bench web` and the website's tests.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use croupier_arena::runner::{rfc3339, step};
use croupier_bots::{bot_rng, BotRng, Builtins};
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
use croupier_rules::{Fault, Game, GameKind, Record, Seat, SeatInfo};
use croupier_rules::{StepKind, Variant as _};
use croupier_store::web::ImportGame;
use croupier_store::{BotId, GameEnd, SqliteStore, Store, StoreError};
use rand::Rng;

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

/// Plays one game with the strategies `names`; a rare fault (about one game
/// in 150) gets the game's ruling: a random move in Goofspiel, a forfeit
/// otherwise.
fn play<G: Builtins>(variant: &G::Variant, seed: u64, bots: &[usize]) -> Option<Record> {
    let mut game = G::new(variant, bots.len(), seed).ok()?;
    let mut strategies = Vec::with_capacity(bots.len());
    for (i, b) in bots.iter().enumerate() {
        let mut s = G::make(BOTS[*b].2)?;
        s.new_game(Seat(i as u8), variant, bots.len());
        strategies.push(s);
    }
    // The random bots stand for in-process house bots (no dialect, times
    // near zero); the others for bots reached over a transport.
    let builtin: Vec<bool> = bots.iter().map(|b| BOTS[*b].2 == "random").collect();
    let infos = bots
        .iter()
        .zip(&builtin)
        .map(|(b, inside)| SeatInfo {
            dialect: (!inside).then(|| "croupier".to_string()),
            ..SeatInfo::named(BOTS[*b].0)
        })
        .collect();
    let mut record = Record::begin::<G>(variant, seed, infos);
    let mut rngs: Vec<BotRng> = (0..bots.len())
        .map(|i| bot_rng(seed.wrapping_add(i as u64 + 1)))
        .collect();
    let mut chance = bot_rng(seed ^ 0xFA17);
    let mut seen = vec![0usize; bots.len()];
    let mut legal = Vec::new();
    while let Some(seat) = game.to_act().first() {
        for (i, (s, seen)) in strategies.iter_mut().zip(&mut seen).enumerate() {
            croupier_bots::catch_up(&game, Seat(i as u8), s.as_mut(), seen);
        }
        legal.clear();
        game.legal_actions(seat, &mut legal);
        let i = seat.index();
        let thought = chance.random_range(0.2f64..6.0).powi(3);
        let ms = if builtin[i] { 0.004 } else { thought };
        let obs = game.observation(seat);
        let chosen = if legal.is_empty() {
            None
        } else {
            Some(strategies.get_mut(i)?.act(&obs, &legal, rngs.get_mut(i)?))
        };
        let fault = match chosen {
            None => Some(("illegal", "no legal action".to_string())),
            Some(_) if chance.random_range(0..6000) == 0 => {
                Some(("timeout", "no answer within 10 s".to_string()))
            }
            Some(a) => game
                .check(seat, a)
                .err()
                .map(|e| ("illegal", format!("'{a}': {e}"))),
        };
        let (Some(a), None) = (chosen, &fault) else {
            let (kind, detail) = fault.unwrap_or(("illegal", String::new()));
            rule_fault(
                &mut game,
                &mut record,
                seat,
                &legal,
                &mut chance,
                kind,
                detail,
            )?;
            continue;
        };
        game.apply(seat, a).ok()?;
        record
            .steps
            .push(step(seat, StepKind::Action(a.to_string()), ms, None));
    }
    record.outcome = game.outcome()?;
    Some(record)
}

/// Applies the game's ruling for a fault of `seat`: a random legal move in
/// Goofspiel, a forfeit otherwise.
fn rule_fault<G: Game>(
    game: &mut G,
    record: &mut Record,
    seat: Seat,
    legal: &[G::Action],
    chance: &mut BotRng,
    kind: &str,
    detail: String,
) -> Option<()> {
    let fault = Some(Fault {
        kind: kind.into(),
        detail,
    });
    // Faults stand for a bot that used its whole 10 s.
    let ms = 10_000.0;
    if G::NAME == Goofspiel::NAME && !legal.is_empty() {
        let a = legal[chance.random_range(0..legal.len())];
        game.apply(seat, a).ok()?;
        record
            .steps
            .push(step(seat, StepKind::Action(a.to_string()), ms, fault));
    } else {
        game.forfeit(seat).ok()?;
        record.steps.push(step(seat, StepKind::Forfeit, ms, fault));
    }
    Some(())
}

/// Plays games `range` of a demo series; game `i` finishes `spacing` after
/// game `i - 1`, the last one `end`.
pub fn play_games(
    range: std::ops::Range<u64>,
    total: u64,
    spacing: Duration,
    end: SystemTime,
    ids: &[BotId],
) -> Vec<ImportGame> {
    let mut out = Vec::with_capacity((range.end - range.start) as usize);
    for i in range {
        let (kind, seed, bots) = pick(i, 7);
        let record = match kind {
            GameKind::SkullWhist => play::<SkullWhist>(&SkullWhistVariant::default(), seed, &bots),
            GameKind::LoveLetter => play::<LoveLetter>(&LoveLetterVariant::default(), seed, &bots),
            GameKind::Goofspiel => {
                let v = if i % 2 == 0 {
                    GoofspielVariant::default()
                } else {
                    GoofspielVariant::parse("jujitsu").unwrap_or_default()
                };
                play::<Goofspiel>(&v, seed, &bots)
            }
        };
        let Some(mut record) = record else { continue };
        let back = spacing * u32::try_from(total.saturating_sub(i + 1)).unwrap_or(u32::MAX);
        let finished = end.checked_sub(back).unwrap_or(end);
        let started = finished
            .checked_sub(Duration::from_millis(800 + seed % 4000))
            .unwrap_or(finished);
        record.started = Some(rfc3339(started));
        record.finished = Some(rfc3339(finished));
        let bot_ids: Vec<BotId> = bots.iter().filter_map(|b| ids.get(*b).copied()).collect();
        let end = match GameEnd::from_record(&record, &bot_ids) {
            Ok(end) => end,
            Err(e) => {
                tracing::error!("demo game {i} cannot be stored: {e}");
                continue;
            }
        };
        out.push(ImportGame {
            game: kind.name().to_string(),
            bots: bot_ids,
            seed: seed as i64,
            started: record.started.clone().unwrap_or_default(),
            end,
        });
    }
    out
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
/// `spacing`; games are played on two blocking threads and imported in
/// transactions of 2,000.
pub async fn seed(
    store: &Arc<SqliteStore>,
    count: u64,
    spacing: Duration,
) -> Result<u64, StoreError> {
    let ids = demo_bots(store.as_ref()).await?;
    let end = SystemTime::now();
    let mut stored = 0;
    let chunk = 2000u64;
    let mut start = 0;
    while start < count {
        let stop = (start + chunk).min(count);
        let mid = start + (stop - start) / 2;
        let (a, b) = {
            let (ia, ib) = (ids.clone(), ids.clone());
            let ha = tokio::task::spawn_blocking(move || {
                play_games(start..mid, count, spacing, end, &ia)
            });
            let hb = tokio::task::spawn_blocking(move || {
                play_games(mid..stop, count, spacing, end, &ib)
            });
            (ha.await.unwrap_or_default(), hb.await.unwrap_or_default())
        };
        stored += store.import_games(&a).await?.len() as u64;
        stored += store.import_games(&b).await?.len() as u64;
        start = stop;
    }
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_games_are_complete_records_that_replay() {
        let ids: Vec<BotId> = (1..=BOTS.len() as i64).collect();
        let games = play_games(0..300, 300, Duration::from_secs(1), SystemTime::now(), &ids);
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
