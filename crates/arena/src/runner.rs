//! One match between in-process strategies ([`play_match`]), and what every
//! match shares: fault rulings, seeds, the record builder (`step`,
//! `finish`) and the timestamp format.

use std::time::SystemTime;

use croupier_bots::{RandomBot, Strategy};
use croupier_rules::{
    Fault, Game, GameKind, GameRng, Record, RecordedStep, Seat, SeatInfo, SetupError, StepKind,
};
use rand::seq::IndexedRandom;

use crate::live::{self, Driver, LiveConfig, LiveSeat, Mode, Think};

/// Why a match could not be played.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// The game could not be set up.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The rules reached a state with no way on (a bug in a rules engine).
    #[error("the game cannot go on: {0}")]
    Stuck(String),
}

/// What the arena does when a seat's answer is refused by the rules.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ruling {
    /// A random legal action is played for the seat (GOPS, Jujitsu).
    RandomMove,
    /// The seat forfeits ([`Game::forfeit`]: the game for SkullWhist, the
    /// round for Love Letter).
    Forfeit,
}

impl Ruling {
    /// The ruling the game's original competition used.
    pub fn for_game(game: GameKind) -> Ruling {
        match game {
            GameKind::Goofspiel => Ruling::RandomMove,
            GameKind::SkullWhist | GameKind::LoveLetter => Ruling::Forfeit,
        }
    }
}

/// A seat: who it is and the strategy that plays it.
pub struct Player<G: Game> {
    /// Name and version for the record.
    pub info: SeatInfo,
    /// The strategy.
    pub strategy: Box<dyn Strategy<G>>,
}

impl<G: Game> std::fmt::Debug for Player<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Player")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Seed derivation, so that one number fixes a whole series.
pub mod seeds {
    /// SplitMix64: a well-mixed 64-bit value from any input.
    pub fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The game seed of game `index` of a series.
    pub fn game(base: u64, index: u64) -> u64 {
        mix(base ^ mix(index))
    }

    /// The generator seed of a seat's strategy in a game.
    pub fn bot(game_seed: u64, seat: u8) -> u64 {
        mix(game_seed ^ mix(0xB07 + u64::from(seat)))
    }

    /// The seed of the arena's own generator (random moves for faults).
    pub fn arena(game_seed: u64) -> u64 {
        mix(game_seed ^ 0xA4E4A)
    }
}

/// A time as records and the store write it: RFC 3339, UTC, milliseconds.
/// The one timestamp format of Croupier.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// Now, as [`rfc3339`] writes it.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// Plays one game of `G` between `players` (in seat order) from `seed`, and
/// returns its record. Strategies see only their own observation and the
/// events visible to their seat.
///
/// The match runs the one decision loop of every match
/// ([`crate::live`], by rounds: the seats due are asked, then their answers
/// applied in seat order), with each strategy thinking on this thread. With
/// no remote seat nothing in it waits, so it is driven to its end here, with
/// no runtime; it may be called from any thread.
pub fn play_match<G: Game>(
    variant: &G::Variant,
    seed: u64,
    players: &mut [Player<G>],
) -> Result<Record, MatchError> {
    // The strategies are lent to the match's seats and given back after.
    let mut seats: Vec<LiveSeat<G>> = players
        .iter_mut()
        .map(|p| {
            let strategy = std::mem::replace(&mut p.strategy, Box::new(RandomBot));
            LiveSeat::builtin(p.info.clone(), strategy)
        })
        .collect();
    let played = futures::executor::block_on(live::play(
        variant,
        seed,
        &mut seats,
        &LiveConfig::default(),
        Mode::Rounds,
        Think::Inline,
    ));
    for (p, s) in players.iter_mut().zip(seats) {
        if let Driver::Builtin(strategy) = s.driver {
            p.strategy = strategy;
        }
    }
    played
}

/// Applies the game's fault ruling for `seat` (a random legal action, or a
/// forfeit) and records it with the fault.
pub(crate) fn apply_ruling<G: Game>(
    game: &mut G,
    seat: Seat,
    fault: Fault,
    legal: &[G::Action],
    rng: &mut GameRng,
    record: &mut Record,
    ms: f64,
) -> Result<(), MatchError> {
    if Ruling::for_game(G::KIND) == Ruling::RandomMove {
        if let Some(&sub) = legal.choose(rng) {
            if game.apply(seat, sub).is_ok() {
                record.steps.push(step(
                    seat,
                    StepKind::Action(sub.to_string()),
                    ms,
                    Some(fault),
                ));
                return Ok(());
            }
        }
    }
    game.forfeit(seat)
        .map_err(|e| MatchError::Stuck(e.to_string()))?;
    record
        .steps
        .push(step(seat, StepKind::Forfeit, ms, Some(fault)));
    Ok(())
}

/// Stores the outcome and finish time of a played game in its record.
pub fn finish<G: Game>(game: &G, record: &mut Record) -> Result<(), MatchError> {
    record.outcome = game
        .outcome()
        .ok_or_else(|| MatchError::Stuck("no seat to act but no outcome".into()))?;
    record.finished = Some(now_rfc3339());
    Ok(())
}

/// A recorded step: who, what, thinking time (rounded to microseconds) and
/// the fault that led to it.
pub fn step(seat: Seat, kind: StepKind, ms: f64, fault: Option<Fault>) -> RecordedStep {
    RecordedStep {
        seat,
        kind,
        ms: Some((ms * 1000.0).round() / 1000.0),
        fault,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_bots::{BotRng, Builtins};
    use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielObservation, GoofspielVariant};
    use croupier_rules::skullwhist::{SkullWhist, SkullWhistAction, SkullWhistVariant};

    /// Always bids 99, which nobody holds.
    struct Cheater;
    impl Strategy<Goofspiel> for Cheater {
        fn act(&mut self, _: &GoofspielObservation, _: &[Bid], _: &mut BotRng) -> Bid {
            Bid(99)
        }
    }

    struct BadBidder;
    impl Strategy<SkullWhist> for BadBidder {
        fn act(
            &mut self,
            _: &croupier_rules::skullwhist::SkullWhistObservation,
            _: &[SkullWhistAction],
            _: &mut BotRng,
        ) -> SkullWhistAction {
            SkullWhistAction::Bid(0)
        }
    }

    fn player<G: Game>(name: &str, s: Box<dyn Strategy<G>>) -> Player<G> {
        Player {
            info: SeatInfo::named(name),
            strategy: s,
        }
    }

    #[test]
    fn illegal_goofspiel_bid_gets_a_random_card_and_a_recorded_fault() {
        let mut players = vec![
            player("cheater", Box::new(Cheater)),
            player("random", Box::new(RandomBot)),
        ];
        let r = play_match::<Goofspiel>(&GoofspielVariant::gops(), 5, &mut players).unwrap();
        let faults: Vec<_> = r.steps.iter().filter(|s| s.fault.is_some()).collect();
        assert_eq!(faults.len(), 13, "every bid of seat 0 was substituted");
        assert!(faults.iter().all(|s| s.seat == Seat(0)));
        assert!(faults[0].fault.as_ref().unwrap().detail.contains("'99'"));
        r.verify::<Goofspiel>().unwrap();
    }

    #[test]
    fn illegal_skullwhist_bid_forfeits_the_game() {
        let mut players = vec![
            player("random", Box::new(RandomBot)),
            player("bad", Box::new(BadBidder) as Box<dyn Strategy<SkullWhist>>),
        ];
        let r = play_match::<SkullWhist>(&SkullWhistVariant {}, 5, &mut players).unwrap();
        assert_eq!(r.outcome.forfeited_by, Some(Seat(1)));
        assert!(matches!(r.steps.last().unwrap().kind, StepKind::Forfeit));
        r.verify::<SkullWhist>().unwrap();
    }

    #[test]
    fn a_match_is_a_function_of_its_seed() {
        let play = |seed| {
            let mut p = vec![
                player("a", SkullWhist::builtin("heuristic").unwrap()),
                player("b", SkullWhist::builtin("random").unwrap()),
            ];
            play_match::<SkullWhist>(&SkullWhistVariant {}, seed, &mut p).unwrap()
        };
        let (a, b, c) = (play(1), play(1), play(2));
        let actions = |r: &Record| r.steps.iter().map(|s| s.kind.clone()).collect::<Vec<_>>();
        assert_eq!(actions(&a), actions(&b));
        assert_ne!(actions(&a), actions(&c));
    }

    #[test]
    fn seeds_differ_per_game_and_seat() {
        assert_ne!(seeds::game(1, 0), seeds::game(1, 1));
        assert_ne!(seeds::bot(5, 0), seeds::bot(5, 1));
        assert_ne!(seeds::arena(5), seeds::bot(5, 0));
    }
}
