//! One match between in-process strategies.

use std::time::{Instant, SystemTime};

use croupier_bots::{bot_rng, BotRng, Strategy};
use croupier_rules::{
    game_rng, Fault, Game, GameKind, GameRng, Record, RecordedStep, RuleError, Seat, SeatInfo,
    SetupError, StepKind,
};
use rand::seq::IndexedRandom;

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
pub fn play_match<G: Game>(
    variant: &G::Variant,
    seed: u64,
    players: &mut [Player<G>],
) -> Result<Record, MatchError> {
    let mut game = G::new(variant, players.len(), seed)?;
    let mut record = Record::begin::<G>(
        variant,
        seed,
        players.iter().map(|p| p.info.clone()).collect(),
    );
    record.started = Some(now_rfc3339());
    let mut rngs: Vec<BotRng> = (0..players.len())
        .map(|i| bot_rng(seeds::bot(seed, i as u8)))
        .collect();
    let mut arena_rng: GameRng = game_rng(seeds::arena(seed));
    let mut seen = vec![0usize; players.len()];
    let seats = players.len();
    for (i, p) in players.iter_mut().enumerate() {
        p.strategy.new_game(Seat(i as u8), variant, seats);
    }
    let mut legal = Vec::new();
    // A game always ends: every step either applies an action or a forfeit,
    // and each game's rules bound the number of actions.
    while let Some(seat) = game.to_act().first() {
        deliver_events(&game, players, &mut seen);
        legal.clear();
        game.legal_actions(seat, &mut legal);
        let i = seat.index();
        let obs = game.observation(seat);
        let started = Instant::now();
        let answer = if legal.is_empty() {
            None
        } else {
            Some(players[i].strategy.act(&obs, &legal, &mut rngs[i]))
        };
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let refused = match answer {
            Some(a) => match game.apply(seat, a) {
                Ok(()) => {
                    record
                        .steps
                        .push(step(seat, StepKind::Action(a.to_string()), ms, None));
                    continue;
                }
                Err(e) => (a.to_string(), e),
            },
            None => (String::new(), RuleError::illegal("no legal action")),
        };
        let fault = Fault {
            kind: "illegal".into(),
            detail: format!("'{}': {}", refused.0, refused.1),
        };
        apply_ruling(
            &mut game,
            seat,
            fault,
            &legal,
            &mut arena_rng,
            &mut record,
            ms,
        )?;
    }
    deliver_events(&game, players, &mut seen);
    finish(&game, &mut record)?;
    Ok(record)
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

fn deliver_events<G: Game>(game: &G, players: &mut [Player<G>], seen: &mut [usize]) {
    for (i, (p, seen)) in players.iter_mut().zip(seen).enumerate() {
        croupier_bots::catch_up(game, Seat(i as u8), p.strategy.as_mut(), seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_bots::{Builtins, RandomBot};
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
