//! What a match writes down, and how it can fail: the record builder
//! ([`step`], [`finish`]), the game's fault ruling played and recorded as a
//! step ([`Ruling`]), the one timestamp format ([`rfc3339`]) and
//! [`MatchError`]. Every match uses it, in-process ([`crate::runner`]) or
//! live ([`crate::live`]).

use std::time::SystemTime;

use croupier_rules::{
    Fault, Game, GameKind, GameRng, Record, RecordedStep, Seat, SetupError, StepKind,
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

/// A time as records and the store write it: RFC 3339, UTC, milliseconds.
/// The one timestamp format of Croupier.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// Now, as [`rfc3339`] writes it.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
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
        cpu_ms: None,
        fault,
    }
}
