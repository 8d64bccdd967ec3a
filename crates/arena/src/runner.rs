//! One match between in-process strategies.

use std::time::{Instant, SystemTime};

use croupier_bots::{bot_rng, BotRng, Strategy};
use croupier_rules::{
    game_rng, Fault, Game, GameRng, Record, RecordedStep, RuleError, Seat, SeatInfo, SetupError,
    StepKind,
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
    pub fn for_game(name: &str) -> Ruling {
        match name {
            "goofspiel" => Ruling::RandomMove,
            _ => Ruling::Forfeit,
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

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
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
    let ruling = Ruling::for_game(G::NAME);
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
        if ruling == Ruling::RandomMove {
            if let Some(&sub) = legal.choose(&mut arena_rng) {
                if game.apply(seat, sub).is_ok() {
                    record.steps.push(step(
                        seat,
                        StepKind::Action(sub.to_string()),
                        ms,
                        Some(fault),
                    ));
                    continue;
                }
            }
        }
        game.forfeit(seat)
            .map_err(|e| MatchError::Stuck(e.to_string()))?;
        record
            .steps
            .push(step(seat, StepKind::Forfeit(true), ms, Some(fault)));
    }
    deliver_events(&game, players, &mut seen);
    record.outcome = game
        .outcome()
        .ok_or_else(|| MatchError::Stuck("no seat to act but no outcome".into()))?;
    record.finished = Some(now_rfc3339());
    Ok(record)
}

fn step(seat: Seat, kind: StepKind, ms: f64, fault: Option<Fault>) -> RecordedStep {
    RecordedStep {
        seat,
        kind,
        ms: Some((ms * 1000.0).round() / 1000.0),
        fault,
    }
}

fn deliver_events<G: Game>(game: &G, players: &mut [Player<G>], seen: &mut [usize]) {
    use croupier_rules::Event as _;
    let events = game.events();
    for (i, p) in players.iter_mut().enumerate() {
        for e in &events[seen[i]..] {
            if e.visible_to(Seat(i as u8)) {
                p.strategy.notify(e);
            }
        }
        seen[i] = events.len();
    }
}
