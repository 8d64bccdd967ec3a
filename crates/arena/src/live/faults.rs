//! What a seat's answer comes to: an action the rules accept, or a fault
//! (a refused action, a failed connection) and the game's ruling on it.

use croupier_dialects::DialectKind;
use croupier_rules::{Fault, Game, GameRng, Record, RuleError, Seat, StepKind};

use super::seat::{Driver, LiveSeat, ProgramSeat};
use crate::record::{apply_ruling, step, MatchError};
use crate::transport::TransportError;

/// What a seat answered.
pub(super) enum Decision<A> {
    Action(A),
    Fault(Fault),
}

pub(super) fn fault(kind: &str, detail: impl Into<String>) -> Fault {
    Fault {
        kind: kind.to_string(),
        detail: detail.into(),
    }
}

/// Applies seat `i`'s decision: its action, or the game's ruling on its
/// fault (also on an action the rules refuse). True when the action stood.
#[allow(clippy::too_many_arguments)]
pub(super) fn settle<G: Game>(
    game: &mut G,
    seats: &mut [LiveSeat<G>],
    i: usize,
    decision: Decision<G::Action>,
    legal: &[G::Action],
    ms: f64,
    arena_rng: &mut GameRng,
    record: &mut Record,
) -> Result<bool, MatchError> {
    let seat = Seat(i as u8);
    let f = match decision {
        Decision::Action(a) => match game.apply(seat, a) {
            Ok(()) => {
                record
                    .steps
                    .push(step(seat, StepKind::Action(a.to_string()), ms, None));
                return Ok(true);
            }
            Err(e) => fault("illegal", format!("'{a}': {e}")),
        },
        Decision::Fault(f) => f,
    };
    if crate::explain::watched() {
        let stderr = match &seats[i].driver {
            Driver::Program(p) => p.stderr(),
            Driver::Builtin(_) => None,
        };
        crate::explain::notify(
            i as u8,
            &seats[i].info.name,
            &f,
            stderr.as_deref().unwrap_or(""),
        );
    }
    tell_fault(game, seats, seat);
    apply_ruling(game, seat, f, legal, arena_rng, record, ms)?;
    Ok(false)
}

/// Tells every remote seat's dialect that `faulty` faulted.
fn tell_fault<G: Game>(game: &G, seats: &mut [LiveSeat<G>], faulty: Seat) {
    for (j, s) in seats.iter_mut().enumerate() {
        if let Driver::Program(p) = &mut s.driver {
            p.dialect.fault_ruled(game, Seat(j as u8), faulty);
        }
    }
}

/// The fault of an answer the rules reject.
pub(super) fn rejected(e: RuleError, line: &str) -> Fault {
    match e {
        RuleError::Malformed(m) => fault("malformed", m),
        e => fault("illegal", format!("'{}': {e}", clip(line))),
    }
}

/// The fault of a failed connection (with the last skipped line and the
/// bot's diagnostics); marks the seat broken unless it can be asked again.
pub(super) fn transport_fault<G: Game>(
    p: &mut ProgramSeat<G>,
    e: TransportError,
    skipped: Option<String>,
) -> Fault {
    let mut detail = e.to_string();
    if let Some(line) = skipped {
        detail += &format!(
            "; the last line it sent answered nothing and was skipped: '{}'",
            clip(&line)
        );
    }
    let tail = p
        .process
        .as_ref()
        .map(|c| c.diagnostics())
        .unwrap_or_default();
    if matches!(e, TransportError::Closed(_)) && !tail.trim().is_empty() {
        detail += &format!("; stderr: {}", clip(tail.trim()));
    }
    let f = fault(e.fault_kind(), detail);
    let survives = p.process.as_ref().is_some_and(|c| c.survives_faults());
    // A crashed program cannot answer again. One that missed a deadline can
    // stay only in a dialect that tells late answers from new ones (decision
    // ids). HTTP bots are asked afresh each time.
    let keep = !matches!(e, TransportError::Abandoned { .. })
        && (survives
            || (matches!(e, TransportError::Timeout | TransportError::LineTooLong(_))
                && p.dialect.kind() == DialectKind::Croupier));
    if !keep {
        p.broken = Some(f.clone());
    }
    f
}

fn clip(text: &str) -> String {
    let mut s: String = text.chars().take(200).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}
