//! Decisions on arrival ([`super::play_on_arrival`]): each answer is
//! applied the moment it comes, so a seat that answered a simultaneous
//! decision (a sealed bid) sees its answer stand at once, and its
//! dialect's [`accepted`](croupier_dialects::Dialect::accepted) lines go
//! out as soon as the events it caused are delivered.
//!
//! A seat is due from the moment the game needs it until it answers, with
//! one deadline however many refusals and other seats' answers come
//! between. Connections that [speak out of
//! turn](crate::transport::Conn::speaks_out_of_turn) are listened to
//! throughout: a message from a seat that is not due is decoded against the
//! game as it stands, and refused if its dialect refuses (it cannot be
//! legal: the seat need not act); a bot that abandons the match is ruled
//! against at once.

use std::time::Duration;

use croupier_bots::BotRng;
use croupier_dialects::Reply;
use croupier_rules::{Game, GameRng, Record, Seat};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::{
    deliver, fault, flush, rejected, settle, transport_fault, Clocks, Decision, Driver, LiveConfig,
    LiveSeat, ProgramSeat,
};
use crate::runner::MatchError;
use crate::transport::TransportError;

/// A seat that must answer.
#[derive(Clone, Copy)]
struct Due {
    /// When it became due.
    since: Instant,
    /// When its time is up.
    deadline: Instant,
}

/// Runs the decisions of a match on arrival until the game is over.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run<G: Game>(
    game: &mut G,
    seats: &mut [LiveSeat<G>],
    config: &LiveConfig,
    tag: &str,
    clocks: &mut Clocks,
    rngs: &mut [BotRng],
    arena_rng: &mut GameRng,
    record: &mut Record,
    seen: &mut [usize],
    reaper: &mut JoinSet<()>,
) -> Result<(), MatchError> {
    let n = seats.len();
    let mut due: Vec<Option<Due>> = vec![None; n];
    let mut skipped: Vec<Option<String>> = vec![None; n];
    // The seat whose answer was just applied: told once its events are out.
    let mut accepted: Option<usize> = None;
    'steps: loop {
        deliver(game, seats, seen, config, tag, reaper).await;
        crate::watch::publish(game); // spectators' public events (issue 16)
        if let Some(i) = accepted.take() {
            if let Driver::Program(p) = &mut seats[i].driver {
                let mut lines = Vec::new();
                p.dialect.accepted(game, Seat(i as u8), &mut lines);
                flush(p, &mut lines, config).await;
            }
        }
        let to_act = game.to_act();
        if to_act.is_empty() {
            return Ok(());
        }
        // Seats no longer due forget their clock; seats newly due are asked
        // (a built-in strategy answers at once).
        for i in 0..n {
            let seat = Seat(i as u8);
            if !to_act.contains(seat) {
                due[i] = None;
                skipped[i] = None;
                continue;
            }
            if due[i].is_some() {
                continue;
            }
            let legal = game.legal_vec(seat);
            let (decision, ms) = match &mut seats[i].driver {
                // Nothing it could answer: left to the rules.
                Driver::Builtin(_) if legal.is_empty() => continue,
                Driver::Builtin(strategy) => {
                    let obs = game.observation(seat);
                    let t = std::time::Instant::now();
                    let a = strategy.act(&obs, &legal, &mut rngs[i]);
                    clocks.charge(i, t.elapsed());
                    (Decision::Action(a), t.elapsed().as_secs_f64() * 1000.0)
                }
                Driver::Program(_) if clocks.spent(i) => (
                    Decision::Fault(fault("budget", "the bot's thinking time is spent")),
                    0.0,
                ),
                Driver::Program(p) => {
                    p.dialect.clocks(&clocks.ms());
                    let limit = clocks.limit(i, config.move_time);
                    match ask(game, seat, p, &legal, limit).await {
                        Ok(d) => {
                            due[i] = Some(d);
                            continue;
                        }
                        Err(f) => (Decision::Fault(f), 0.0),
                    }
                }
            };
            if settle(game, seats, i, decision, &legal, ms, arena_rng, record)? {
                accepted = Some(i);
            }
            continue 'steps;
        }
        // The first message of a seat that is due or speaks out of turn.
        let Some((i, got)) = next_message(seats, &due).await else {
            return Err(MatchError::Stuck(
                "seats are due but none can answer".into(),
            ));
        };
        let seat = Seat(i as u8);
        let Driver::Program(p) = &mut seats[i].driver else {
            continue;
        };
        let Some(d) = due[i] else {
            // Out of turn: refused, or ruled at once if the bot left.
            match got {
                Ok(line) => match p.dialect.decode(game, seat, &line) {
                    Err(e) => {
                        let mut lines = Vec::new();
                        if p.dialect.refuse(game, seat, &e, &mut lines) {
                            flush(p, &mut lines, config).await;
                        }
                    }
                    Ok(Reply::Forfeit) => {
                        let f = fault("forfeit", "the bot forfeited");
                        settle(
                            game,
                            seats,
                            i,
                            Decision::Fault(f),
                            &[],
                            0.0,
                            arena_rng,
                            record,
                        )?;
                    }
                    // Nothing to apply: the seat need not act.
                    Ok(Reply::Action(_) | Reply::Ignore) => {}
                },
                Err(e @ TransportError::Abandoned { .. }) => {
                    let f = transport_fault(p, e, None);
                    close_broken(p, reaper);
                    settle(
                        game,
                        seats,
                        i,
                        Decision::Fault(f),
                        &[],
                        0.0,
                        arena_rng,
                        record,
                    )?;
                }
                // Nothing was asked: the connection is no longer listened
                // to, and faults when next asked.
                Err(e) => {
                    p.broken
                        .get_or_insert_with(|| fault(e.fault_kind(), e.to_string()));
                }
            }
            continue;
        };
        let used = d.since.elapsed();
        let ms = used.as_secs_f64() * 1000.0;
        let decision = match got {
            Ok(line) => match p.dialect.decode(game, seat, &line) {
                Ok(Reply::Action(a)) => Decision::Action(a),
                Ok(Reply::Ignore) => {
                    skipped[i] = Some(line);
                    continue;
                }
                Ok(Reply::Forfeit) => Decision::Fault(fault("forfeit", "the bot forfeited")),
                Err(e) => {
                    let mut lines = Vec::new();
                    if !p.dialect.refuse(game, seat, &e, &mut lines) {
                        Decision::Fault(rejected(e, &line))
                    } else {
                        // Refused: the bot may try again, by the same deadline.
                        flush(p, &mut lines, config).await;
                        continue;
                    }
                }
            },
            Err(e) => {
                let f = transport_fault(p, e, skipped[i].take());
                close_broken(p, reaper);
                Decision::Fault(f)
            }
        };
        clocks.charge(i, used);
        let decision = match decision {
            // A timeout that used up the budget is a spent budget.
            Decision::Fault(f) if f.kind == "timeout" && clocks.spent(i) => {
                Decision::Fault(fault("budget", "the bot's thinking time ran out"))
            }
            d => d,
        };
        due[i] = None;
        skipped[i] = None;
        let legal = game.legal_vec(seat);
        if settle(game, seats, i, decision, &legal, ms, arena_rng, record)? {
            accepted = Some(i);
        }
    }
}

/// Prompts a seat that became due; its deadline, or why it cannot answer.
async fn ask<G: Game>(
    game: &G,
    seat: Seat,
    p: &mut ProgramSeat<G>,
    legal: &[G::Action],
    limit: Duration,
) -> Result<Due, croupier_rules::Fault> {
    if let Some(f) = &p.broken {
        return Err(f.clone());
    }
    let Some(conn) = p.process.as_mut() else {
        return Err(fault("crash", "the bot is not running"));
    };
    let since = Instant::now();
    let deadline = since + limit;
    let mut lines = Vec::new();
    p.dialect
        .prompt(game, seat, legal, limit.as_millis() as u64, &mut lines);
    if !lines.is_empty() {
        if let Err(e) = conn.send(&lines, deadline).await {
            return Err(transport_fault(p, e, None));
        }
    }
    Ok(Due { since, deadline })
}

/// A connection that can no longer be asked is stopped now.
fn close_broken<G: Game>(p: &mut ProgramSeat<G>, reaper: &mut JoinSet<()>) {
    if p.broken.is_some() {
        if let Some(conn) = p.process.take() {
            reaper.spawn(conn.close());
        }
    }
}

/// Waits for the first message of a seat that is due (until its deadline)
/// or whose connection speaks out of turn; `None` if no seat can send.
async fn next_message<G: Game>(
    seats: &mut [LiveSeat<G>],
    due: &[Option<Due>],
) -> Option<(usize, Result<String, TransportError>)> {
    // Out of turn there is no deadline: a year stands for none.
    let never = Instant::now() + Duration::from_secs(365 * 24 * 3600);
    let waits: Vec<_> = seats
        .iter_mut()
        .enumerate()
        .filter_map(|(i, s)| {
            let Driver::Program(p) = &mut s.driver else {
                return None;
            };
            if p.broken.is_some() {
                return None;
            }
            let conn = p.process.as_mut()?;
            let deadline = match due[i] {
                Some(d) => d.deadline,
                None if conn.speaks_out_of_turn() => never,
                None => return None,
            };
            Some(Box::pin(async move { (i, conn.recv(deadline).await) }))
        })
        .collect();
    if waits.is_empty() {
        return None;
    }
    Some(futures::future::select_all(waits).await.0)
}

#[cfg(test)]
#[path = "arrival_tests.rs"]
mod tests;
