//! The one decision loop of a live match, for both ways of applying answers
//! ([`Mode`]): by rounds ([`super::play_live`]) or on arrival
//! ([`super::play_on_arrival`], the 2014 REST API's games).
//!
//! Every step: the events go out, then every seat that became due is asked
//! once — a built-in strategy answers at once (on the blocking pool, or on
//! the calling thread in [`crate::runner::play_match`]), a
//! remote bot gets its prompt (all prompts concurrently) and is due from
//! then until it answers, with one deadline however many refusals and
//! other seats' answers come between. Then the runner waits for the first
//! message of a due seat. By rounds, the answers are held until every due
//! seat answered and are then applied together in seat order (a record does
//! not depend on who answered first). On arrival, each answer is applied the
//! moment it comes, so a seat that answered a simultaneous decision (a
//! sealed bid) sees it stand at once, and its dialect's
//! [`accepted`](croupier_dialects::Dialect::accepted) lines go out as soon
//! as the events it caused are delivered; connections that [speak out of
//! turn](crate::transport::Conn::speaks_out_of_turn) are listened to
//! throughout: a message from a seat that is not due is decoded against the
//! game as it stands, and refused if its dialect refuses (it cannot be
//! legal: the seat need not act); a bot that abandons the match is ruled
//! against at once.

use std::time::Duration;

use croupier_bots::BotRng;
use croupier_dialects::Reply;
use croupier_rules::{Fault, Game, GameRng, Record, RuleError, Seat};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::clocks::Clocks;
use super::config::{LiveConfig, Think};
use super::delivery::{deliver, flush};
use super::faults::{fault, rejected, settle, transport_fault, Decision};
use super::seat::{Driver, LiveSeat, ProgramSeat};
use crate::record::MatchError;
use crate::transport::TransportError;

/// How the answers of a decision are applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Every seat due is asked, and the answers are applied together, in
    /// seat order, once every seat answered.
    Rounds,
    /// Each answer is applied the moment it comes; connections that speak
    /// out of turn are listened to throughout.
    OnArrival,
}

/// A remote seat that must answer.
struct Due<A> {
    /// When it became due (its thinking time runs from here).
    since: Instant,
    /// When its time is up.
    deadline: Instant,
    /// How long it took to answer, when the prompt itself brought the answer
    /// back ([`crate::transport::Conn::answers_in_reply`]).
    answered_in: Option<Duration>,
    /// Its legal actions when it was asked.
    legal: Vec<A>,
    /// The CPU time its bot had used when it was asked (a program in a
    /// cgroup), to charge the decision its CPU time.
    cpu_since: Option<Duration>,
}

impl<A> Due<A> {
    /// The thinking time the seat used for its answer.
    fn used(&self) -> Duration {
        self.answered_in.unwrap_or_else(|| self.since.elapsed())
    }
}

/// An answer waiting for the rest of its round.
struct Held<A> {
    decision: Decision<A>,
    /// Thinking time, for the record.
    ms: f64,
    /// CPU time of the bot's processes for it, for the record.
    cpu_ms: Option<f64>,
    /// The seat's legal actions when it was asked (for a random-move ruling).
    legal: Vec<A>,
}

/// What one message of a remote seat came to.
enum Heard<A> {
    /// Nothing to apply (skipped, refused, or out of turn): keep waiting.
    Nothing,
    /// A seat that is not due forfeited or left: its fault is ruled at once.
    Ruled(Fault),
    /// The due seat's answer, after `used` of thinking.
    Answer(Decision<A>, Duration),
}

/// Runs the decisions of a match until the game is over.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run<G: Game>(
    mode: Mode,
    think: Think,
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
    let mut due: Vec<Option<Due<G::Action>>> = (0..n).map(|_| None).collect();
    let mut held: Vec<Option<Held<G::Action>>> = (0..n).map(|_| None).collect();
    let mut skipped: Vec<Option<String>> = vec![None; n];
    // The seats whose answers just stood: told once their events are out.
    let mut accepted: Vec<usize> = Vec::new();
    'steps: loop {
        deliver(game, seats, seen, config, tag, reaper).await;
        // The seats whose answers stood hear so first: a bot waiting for
        // its reply (a REST request) waits for nothing else.
        for i in accepted.drain(..) {
            if let Driver::Program(p) = &mut seats[i].driver {
                let mut lines = Vec::new();
                p.dialect.accepted(game, Seat(i as u8), &mut lines);
                flush(p, &mut lines, config).await;
            }
        }
        // Spectators see the public events (issue 16).
        crate::watch::publish(game, Some(config.move_time));
        // A bot that can no longer be asked is stopped now, not at the end.
        for s in seats.iter_mut() {
            if let Driver::Program(p) = &mut s.driver {
                close_broken(p, reaper);
            }
        }
        let to_act = game.to_act();
        if to_act.is_empty() {
            return Ok(());
        }
        // Seats no longer due forget their clock.
        for i in 0..n {
            if !to_act.contains(Seat(i as u8)) {
                due[i] = None;
                skipped[i] = None;
            }
        }
        // Seats newly due are asked: built-in strategies answer at once, a
        // remote seat whose time is spent is ruled, the others are prompted.
        let mut now: Vec<(usize, Held<G::Action>)> = Vec::new();
        let mut prompts: Vec<Option<Vec<G::Action>>> = (0..n).map(|_| None).collect();
        for i in 0..n {
            let seat = Seat(i as u8);
            if !to_act.contains(seat) || due[i].is_some() || held[i].is_some() {
                continue;
            }
            let legal = game.legal_vec(seat);
            match &mut seats[i].driver {
                // Nothing it could answer (a bug in a rules engine): ruled
                // like an illegal answer.
                Driver::Builtin(_) if legal.is_empty() => {
                    let why = RuleError::illegal("no legal action");
                    let f = fault("illegal", format!("'': {why}"));
                    now.push((i, held_answer(Decision::Fault(f), 0.0, legal)));
                }
                Driver::Builtin(strategy) => {
                    let obs = game.observation(seat);
                    let (a, took) = match think {
                        Think::Blocking => {
                            crate::think::act_blocking(strategy, obs, legal.clone(), &mut rngs[i])
                                .await
                        }
                        Think::Inline => {
                            crate::think::act_inline(strategy, &obs, &legal, &mut rngs[i])
                        }
                    };
                    clocks.charge(i, took);
                    let ms = took.as_secs_f64() * 1000.0;
                    now.push((i, held_answer(Decision::Action(a), ms, legal)));
                }
                Driver::Program(_) if clocks.spent(i) => {
                    let f = fault("budget", "the bot's thinking time is spent");
                    now.push((i, held_answer(Decision::Fault(f), 0.0, legal)));
                }
                Driver::Program(_) => prompts[i] = Some(legal),
            }
            // On arrival a built-in's answer stands before anyone else is
            // asked.
            if mode == Mode::OnArrival && !now.is_empty() {
                prompts.iter_mut().for_each(|p| *p = None);
                break;
            }
        }
        let asked = prompt_all(game, seats, &mut prompts, clocks, config, reaper).await;
        for (i, r, legal) in asked {
            match r {
                Ok((since, deadline, answered_in, cpu_since)) => {
                    due[i] = Some(Due {
                        since,
                        deadline,
                        answered_in,
                        legal,
                        cpu_since,
                    })
                }
                Err((f, used)) => {
                    let (d, ms) = charged(clocks, i, Decision::Fault(f), used);
                    now.push((i, held_answer(d, ms, legal)));
                }
            }
        }
        now.sort_by_key(|(i, _)| *i);
        match mode {
            Mode::OnArrival if !now.is_empty() => {
                for (i, h) in now {
                    // An earlier answer may have ended the game.
                    if game.is_over() {
                        break;
                    }
                    let stood = settle(
                        game, seats, i, h.decision, &h.legal, h.ms, arena_rng, record,
                    )?;
                    note_cpu(record, i, h.cpu_ms);
                    if stood {
                        accepted.push(i);
                    }
                }
                continue 'steps;
            }
            Mode::OnArrival => {}
            Mode::Rounds => {
                for (i, h) in now {
                    held[i] = Some(h);
                }
            }
        }
        // Wait for the answers.
        loop {
            if mode == Mode::Rounds && due.iter().all(Option::is_none) {
                // Every answer is in: applied together, in seat order.
                let round: Vec<(usize, Held<G::Action>)> = held
                    .iter_mut()
                    .enumerate()
                    .filter_map(|(i, h)| h.take().map(|h| (i, h)))
                    .collect();
                if round.is_empty() {
                    return Err(MatchError::Stuck(
                        "seats are due but none can answer".into(),
                    ));
                }
                for (i, h) in round {
                    // An earlier answer of this decision may have ended the
                    // game (a forfeit during sealed bids): the rest are moot.
                    if game.is_over() {
                        break;
                    }
                    let stood = settle(
                        game, seats, i, h.decision, &h.legal, h.ms, arena_rng, record,
                    )?;
                    note_cpu(record, i, h.cpu_ms);
                    if stood {
                        accepted.push(i);
                    }
                }
                continue 'steps;
            }
            let (i, heard) = match stranded(seats, &due) {
                Some(stranded) => stranded,
                None => {
                    let listen = mode == Mode::OnArrival;
                    let Some((i, got)) = next_message(seats, &due, listen).await else {
                        return Err(MatchError::Stuck(
                            "seats are due but none can answer".into(),
                        ));
                    };
                    let heard = hear(game, seats, i, got, &due, &mut skipped, config, reaper);
                    (i, heard.await)
                }
            };
            let (decision, used) = match heard {
                Heard::Nothing => continue,
                Heard::Ruled(f) => {
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
                    continue 'steps;
                }
                Heard::Answer(d, used) => (d, used),
            };
            let Some(d) = due[i].take() else {
                continue;
            };
            skipped[i] = None;
            let cpu_ms = cpu_used(&seats[i], d.cpu_since);
            let (decision, ms) = charged(clocks, i, decision, used);
            match mode {
                Mode::Rounds => {
                    let mut h = held_answer(decision, ms, d.legal);
                    h.cpu_ms = cpu_ms;
                    held[i] = Some(h);
                }
                Mode::OnArrival => {
                    let legal = game.legal_vec(Seat(i as u8));
                    let stood = settle(game, seats, i, decision, &legal, ms, arena_rng, record)?;
                    note_cpu(record, i, cpu_ms);
                    if stood {
                        accepted.push(i);
                    }
                    continue 'steps;
                }
            }
        }
    }
}

fn held_answer<A>(decision: Decision<A>, ms: f64, legal: Vec<A>) -> Held<A> {
    Held {
        decision,
        ms,
        cpu_ms: None,
        legal,
    }
}

/// The CPU time, in milliseconds, that seat `s`'s bot used since it had
/// used `since` (read from its cgroup), if both are known.
fn cpu_used<G: Game>(s: &LiveSeat<G>, since: Option<Duration>) -> Option<f64> {
    let Driver::Program(p) = &s.driver else {
        return None;
    };
    let now = p.process.as_ref()?.cpu_time()?;
    Some(now.saturating_sub(since?).as_secs_f64() * 1000.0)
}

/// Records `cpu_ms` beside the wall time of the step seat `i` just took.
fn note_cpu(record: &mut Record, i: usize, cpu_ms: Option<f64>) {
    if let Some(step) = record.steps.last_mut().filter(|s| s.seat.0 as usize == i) {
        step.cpu_ms = cpu_ms.map(|c| (c * 1000.0).round() / 1000.0);
    }
}

/// Charges seat `i` the time it used; a timeout that used up its budget is
/// a spent budget. The decision and its time in milliseconds.
fn charged<A>(
    clocks: &mut Clocks,
    i: usize,
    decision: Decision<A>,
    used: Duration,
) -> (Decision<A>, f64) {
    clocks.charge(i, used);
    let decision = match decision {
        Decision::Fault(f) if f.kind == "timeout" && clocks.spent(i) => {
            Decision::Fault(fault("budget", "the bot's thinking time ran out"))
        }
        d => d,
    };
    (decision, used.as_secs_f64() * 1000.0)
}

/// What one message (or failure) of seat `i`'s connection comes to. A
/// refusal goes back to the bot, which keeps its turn and its deadline.
#[allow(clippy::too_many_arguments)]
async fn hear<G: Game>(
    game: &G,
    seats: &mut [LiveSeat<G>],
    i: usize,
    got: Result<String, TransportError>,
    due: &[Option<Due<G::Action>>],
    skipped: &mut [Option<String>],
    config: &LiveConfig,
    reaper: &mut JoinSet<()>,
) -> Heard<G::Action> {
    let seat = Seat(i as u8);
    let Driver::Program(p) = &mut seats[i].driver else {
        return Heard::Nothing;
    };
    let Some(d) = &due[i] else {
        // Out of turn: refused, or ruled at once if the bot left.
        return match got {
            Ok(line) => match p.dialect.decode(game, seat, &line) {
                Err(e) => {
                    let mut lines = Vec::new();
                    if p.dialect.refuse(game, seat, &e, &mut lines) {
                        flush(p, &mut lines, config).await;
                    }
                    Heard::Nothing
                }
                Ok(Reply::Forfeit) => Heard::Ruled(fault("forfeit", "the bot forfeited")),
                // Nothing to apply: the seat need not act.
                Ok(Reply::Action(_) | Reply::Ignore) => Heard::Nothing,
            },
            Err(e @ TransportError::Abandoned { .. }) => {
                let f = transport_fault(p, e, None);
                close_broken(p, reaper);
                Heard::Ruled(f)
            }
            // Nothing was asked: the connection is no longer listened to,
            // and faults when next asked.
            Err(e) => {
                p.broken
                    .get_or_insert_with(|| fault(e.fault_kind(), e.to_string()));
                Heard::Nothing
            }
        };
    };
    let used = d.used();
    let failed = match got {
        Ok(line) => match p.dialect.decode(game, seat, &line) {
            Ok(Reply::Action(a)) => return Heard::Answer(Decision::Action(a), used),
            Ok(Reply::Ignore) => {
                skipped[i] = Some(line);
                return Heard::Nothing;
            }
            Ok(Reply::Forfeit) => {
                let f = fault("forfeit", "the bot forfeited");
                return Heard::Answer(Decision::Fault(f), used);
            }
            Err(e) => {
                let mut refusal = Vec::new();
                if !p.dialect.refuse(game, seat, &e, &mut refusal) {
                    return Heard::Answer(Decision::Fault(rejected(e, &line)), used);
                }
                // Refused: the bot may try again, by the same deadline.
                let Some(conn) = p.process.as_mut() else {
                    return Heard::Nothing;
                };
                match conn.send(&refusal, d.deadline).await {
                    Ok(()) => return Heard::Nothing,
                    Err(e) => e,
                }
            }
        },
        Err(e) => e,
    };
    let f = transport_fault(p, failed, skipped[i].take());
    close_broken(p, reaper);
    Heard::Answer(Decision::Fault(f), d.used())
}

/// A prompt's result: when the seat became due and its deadline, or why it
/// cannot answer and the time that took; and how long the answer took when
/// the prompt brought it back.
/// The bot's CPU time when asked rides along.
type Asked = Result<(Instant, Instant, Option<Duration>, Option<Duration>), (Fault, Duration)>;

/// Prompts every seat in `prompts` (their legal actions) at once, each
/// within its own time limit.
async fn prompt_all<G: Game>(
    game: &G,
    seats: &mut [LiveSeat<G>],
    prompts: &mut [Option<Vec<G::Action>>],
    clocks: &Clocks,
    config: &LiveConfig,
    reaper: &mut JoinSet<()>,
) -> Vec<(usize, Asked, Vec<G::Action>)> {
    if prompts.iter().all(Option::is_none) {
        return Vec::new();
    }
    let remaining = clocks.ms();
    let remaining = &remaining;
    let asks = seats
        .iter_mut()
        .zip(prompts.iter_mut())
        .enumerate()
        .filter_map(|(i, (s, legal))| match (&mut s.driver, legal.take()) {
            (Driver::Program(p), Some(legal)) => {
                let limit = clocks.limit(i, config.move_time);
                Some(async move {
                    p.dialect.clocks(remaining);
                    let r = ask(game, Seat(i as u8), p, &legal, limit).await;
                    (i, r, legal)
                })
            }
            (Driver::Builtin(_), _) | (Driver::Program(_), None) => None,
        });
    let asked = futures::future::join_all(asks).await;
    for (i, r, _) in &asked {
        if r.is_err() {
            if let Driver::Program(p) = &mut seats[*i].driver {
                close_broken(p, reaper);
            }
        }
    }
    asked
}

/// Prompts a seat that became due, within `limit`.
async fn ask<G: Game>(
    game: &G,
    seat: Seat,
    p: &mut ProgramSeat<G>,
    legal: &[G::Action],
    limit: Duration,
) -> Asked {
    let since = Instant::now();
    if let Some(f) = &p.broken {
        return Err((f.clone(), Duration::ZERO));
    }
    let Some(conn) = p.process.as_mut() else {
        return Err((fault("crash", "the bot is not running"), Duration::ZERO));
    };
    let deadline = since + limit;
    let cpu_since = conn.cpu_time();
    let mut lines = Vec::new();
    p.dialect
        .prompt(game, seat, legal, limit.as_millis() as u64, &mut lines);
    if !lines.is_empty() {
        if let Err(e) = conn.send(&lines, deadline).await {
            return Err((transport_fault(p, e, None), since.elapsed()));
        }
    }
    let answered_in = conn.answers_in_reply().then(|| since.elapsed());
    Ok((since, deadline, answered_in, cpu_since))
}

/// A due seat that can no longer answer (its bot broke or stopped while it
/// was due), with its fault.
fn stranded<G: Game>(
    seats: &[LiveSeat<G>],
    due: &[Option<Due<G::Action>>],
) -> Option<(usize, Heard<G::Action>)> {
    seats.iter().zip(due).enumerate().find_map(|(i, (s, d))| {
        let (Driver::Program(p), Some(d)) = (&s.driver, d) else {
            return None;
        };
        let f = match (&p.broken, &p.process) {
            (Some(f), _) => f.clone(),
            (None, None) => fault("crash", "the bot is not running"),
            (None, Some(_)) => return None,
        };
        Some((i, Heard::Answer(Decision::Fault(f), d.used())))
    })
}

/// A connection that can no longer be asked is stopped now.
fn close_broken<G: Game>(p: &mut ProgramSeat<G>, reaper: &mut JoinSet<()>) {
    if p.broken.is_some() {
        if let Some(conn) = p.process.take() {
            if crate::explain::watched() {
                p.last_stderr = Some(conn.diagnostics());
            }
            reaper.spawn(conn.close());
        }
    }
}

/// Waits for the first message of a seat that is due (until its deadline)
/// or, when `listen` is set, whose connection speaks out of turn; `None` if
/// no seat can send.
async fn next_message<G: Game>(
    seats: &mut [LiveSeat<G>],
    due: &[Option<Due<G::Action>>],
    listen: bool,
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
            let deadline = match &due[i] {
                Some(d) => d.deadline,
                None if listen && p.broken.is_none() => {
                    let conn = p.process.as_ref()?;
                    if !conn.speaks_out_of_turn() {
                        return None;
                    }
                    never
                }
                None => return None,
            };
            let conn = p.process.as_mut()?;
            Some(Box::pin(async move { (i, conn.recv(deadline).await) }))
        })
        .collect();
    match waits.len() {
        0 => None,
        // One seat to hear from (a turn of one): no selection to make.
        1 => Some(waits.into_iter().next()?.await),
        _ => Some(futures::future::select_all(waits).await.0),
    }
}

#[cfg(test)]
#[path = "arrival_tests.rs"]
mod tests;
