//! Matches with bot programs: every seat is a built-in strategy or a program
//! that speaks a dialect over its stdin/stdout. Decisions have deadlines,
//! simultaneous decisions are asked for at once, and every fault gets its
//! game's ruling without stalling the match.

use std::time::Duration;

use croupier_bots::{bot_rng, BotRng, Strategy};
use croupier_dialects::{Dialect, DialectKind, Flow, Reply};
use croupier_rules::{
    game_rng, Event as _, Fault, Game, GameRng, Record, RuleError, Seat, SeatInfo, StepKind,
};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::process::{BotProcess, ProcessLimits, TransportError};
use crate::runner::{apply_ruling, finish, now_rfc3339, seeds, step, MatchError};

/// How a live match is run.
#[derive(Clone, Debug)]
pub struct LiveConfig {
    /// Time a bot has for each decision.
    pub move_time: Duration,
    /// Limits of bot processes.
    pub limits: ProcessLimits,
}

impl Default for LiveConfig {
    fn default() -> Self {
        LiveConfig {
            move_time: Duration::from_secs(10),
            limits: ProcessLimits::default(),
        }
    }
}

/// A seat of a live match.
pub struct LiveSeat<G: Game> {
    /// Name and version for the record.
    pub info: SeatInfo,
    /// Who plays it.
    pub driver: Driver<G>,
}

impl<G: Game> std::fmt::Debug for LiveSeat<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSeat")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Who plays a seat.
pub enum Driver<G: Game> {
    /// A strategy in this process.
    Builtin(Box<dyn Strategy<G>>),
    /// A program speaking a dialect.
    Program(Box<ProgramSeat<G>>),
}

/// A bot program and its dialect.
pub struct ProgramSeat<G: Game> {
    argv: Vec<String>,
    dialect: Box<dyn Dialect<G>>,
    process: Option<BotProcess>,
    /// Why the bot can no longer be asked (it crashed, or missed a deadline
    /// in a dialect that cannot tell a late answer from the next one).
    broken: Option<Fault>,
}

impl<G: Game> ProgramSeat<G> {
    /// A program (`argv[0]` and its arguments) speaking `dialect`.
    pub fn new(argv: Vec<String>, dialect: Box<dyn Dialect<G>>) -> Self {
        ProgramSeat {
            argv,
            dialect,
            process: None,
            broken: None,
        }
    }
}

impl<G: Game> LiveSeat<G> {
    /// A seat played by a built-in strategy.
    pub fn builtin(info: SeatInfo, strategy: Box<dyn Strategy<G>>) -> Self {
        LiveSeat {
            info,
            driver: Driver::Builtin(strategy),
        }
    }

    /// A seat played by a program.
    pub fn program(info: SeatInfo, argv: Vec<String>, dialect: Box<dyn Dialect<G>>) -> Self {
        LiveSeat {
            info,
            driver: Driver::Program(Box::new(ProgramSeat::new(argv, dialect))),
        }
    }
}

impl<G: Game> std::fmt::Debug for Driver<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Driver::Builtin(_) => f.write_str("Builtin"),
            Driver::Program(p) => p.fmt(f),
        }
    }
}

impl<G: Game> std::fmt::Debug for ProgramSeat<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgramSeat")
            .field("argv", &self.argv)
            .field("running", &self.process.is_some())
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

/// What a seat answered.
enum Decision<A> {
    Action(A),
    Fault(Fault),
}

fn fault(kind: &str, detail: impl Into<String>) -> Fault {
    Fault {
        kind: kind.to_string(),
        detail: detail.into(),
    }
}

/// Plays one game of `G` from `seed` between `seats`, and returns its record.
pub async fn play_live<G: Game>(
    variant: &G::Variant,
    seed: u64,
    seats: &mut [LiveSeat<G>],
    config: &LiveConfig,
) -> Result<Record, MatchError> {
    let mut game = G::new(variant, seats.len(), seed)?;
    let mut record = Record::begin::<G>(
        variant,
        seed,
        seats.iter().map(|s| s.info.clone()).collect(),
    );
    record.started = Some(now_rfc3339());
    let mut rngs: Vec<BotRng> = (0..seats.len())
        .map(|i| bot_rng(seeds::bot(seed, i as u8)))
        .collect();
    let mut arena_rng: GameRng = game_rng(seeds::arena(seed));
    let mut reaper = JoinSet::new();
    let n = seats.len();
    for (i, s) in seats.iter_mut().enumerate() {
        match &mut s.driver {
            Driver::Builtin(b) => b.new_game(Seat(i as u8), variant, n),
            Driver::Program(p) if !p.dialect.starts_per_round() => {
                start(p, &game, Seat(i as u8), config, &mut reaper).await;
            }
            Driver::Program(_) => {}
        }
    }
    let mut seen = vec![0usize; n];
    let result = run(
        &mut game,
        seats,
        config,
        &mut rngs,
        &mut arena_rng,
        &mut record,
        &mut seen,
        &mut reaper,
    )
    .await;
    // Goodbye and stop, whatever happened.
    for (i, s) in seats.iter_mut().enumerate() {
        if let Driver::Program(p) = &mut s.driver {
            if let Some(mut proc) = p.process.take() {
                let mut lines = Vec::new();
                p.dialect.goodbye(&game, Seat(i as u8), &mut lines);
                let _ = proc
                    .send(&lines, Instant::now() + config.limits.grace)
                    .await;
                reaper.spawn(proc.terminate());
            }
        }
    }
    while reaper.join_next().await.is_some() {}
    result?;
    finish(&game, &mut record)?;
    Ok(record)
}

#[allow(clippy::too_many_arguments)]
async fn run<G: Game>(
    game: &mut G,
    seats: &mut [LiveSeat<G>],
    config: &LiveConfig,
    rngs: &mut [BotRng],
    arena_rng: &mut GameRng,
    record: &mut Record,
    seen: &mut [usize],
    reaper: &mut JoinSet<()>,
) -> Result<(), MatchError> {
    loop {
        deliver(game, seats, seen, config, reaper).await;
        let to_act = game.to_act();
        if to_act.is_empty() {
            return Ok(());
        }
        let legal: Vec<Vec<G::Action>> = (0..seats.len())
            .map(|i| game.legal_vec(Seat(i as u8)))
            .collect();
        let mut answers: Vec<(usize, Decision<G::Action>, f64)> = Vec::new();
        // Built-in strategies answer at once, with their own generators.
        for (i, s) in seats.iter_mut().enumerate() {
            if let Driver::Builtin(strategy) = &mut s.driver {
                let seat = Seat(i as u8);
                if to_act.contains(seat) && !legal[i].is_empty() {
                    let obs = game.observation(seat);
                    let t = std::time::Instant::now();
                    let a = strategy.act(&obs, &legal[i], &mut rngs[i]);
                    answers.push((i, Decision::Action(a), t.elapsed().as_secs_f64() * 1000.0));
                }
            }
        }
        // Programs are asked together and answer concurrently.
        let g: &G = game;
        let asks = seats
            .iter_mut()
            .enumerate()
            .filter_map(|(i, s)| match &mut s.driver {
                Driver::Program(p) if to_act.contains(Seat(i as u8)) => {
                    let legal = &legal[i];
                    Some(async move {
                        let t = Instant::now();
                        let d = decide(g, Seat(i as u8), p, legal, config).await;
                        (i, d, t.elapsed().as_secs_f64() * 1000.0)
                    })
                }
                _ => None,
            });
        answers.extend(futures::future::join_all(asks).await);
        // A bot that can no longer be asked is stopped now, not at the end.
        for s in seats.iter_mut() {
            if let Driver::Program(p) = &mut s.driver {
                if p.broken.is_some() {
                    if let Some(proc) = p.process.take() {
                        reaper.spawn(proc.terminate());
                    }
                }
            }
        }
        answers.sort_by_key(|(i, _, _)| *i);
        for (i, decision, ms) in answers {
            // An earlier answer of this decision may have ended the game (a
            // forfeit during sealed bids): the rest are moot.
            if game.is_over() {
                break;
            }
            let seat = Seat(i as u8);
            match decision {
                Decision::Action(a) => match game.apply(seat, a) {
                    Ok(()) => {
                        record
                            .steps
                            .push(step(seat, StepKind::Action(a.to_string()), ms, None))
                    }
                    Err(e) => {
                        let f = fault("illegal", format!("'{a}': {e}"));
                        apply_ruling(game, seat, f, &legal[i], arena_rng, record, ms)?;
                    }
                },
                Decision::Fault(f) => {
                    apply_ruling(game, seat, f, &legal[i], arena_rng, record, ms)?
                }
            }
        }
    }
}

/// Asks a program for its decision, within the move time.
async fn decide<G: Game>(
    game: &G,
    seat: Seat,
    p: &mut ProgramSeat<G>,
    legal: &[G::Action],
    config: &LiveConfig,
) -> Decision<G::Action> {
    if let Some(f) = &p.broken {
        return Decision::Fault(f.clone());
    }
    let Some(proc) = p.process.as_mut() else {
        return Decision::Fault(fault("crash", "the bot is not running"));
    };
    let deadline = Instant::now() + config.move_time;
    let mut lines = Vec::new();
    p.dialect.prompt(
        game,
        seat,
        legal,
        config.move_time.as_millis() as u64,
        &mut lines,
    );
    let outcome: Result<(), TransportError> = match proc.send(&lines, deadline).await {
        Err(e) => Err(e),
        Ok(()) => loop {
            match proc.recv(deadline).await {
                Err(e) => break Err(e),
                Ok(line) => match p.dialect.decode(game, seat, &line) {
                    Ok(Reply::Action(a)) => return Decision::Action(a),
                    Ok(Reply::Ignore) => continue,
                    Ok(Reply::Forfeit) => {
                        return Decision::Fault(fault("forfeit", "the bot forfeited"))
                    }
                    Err(RuleError::Malformed(m)) => return Decision::Fault(fault("malformed", m)),
                    Err(e) => {
                        return Decision::Fault(fault("illegal", format!("'{}': {e}", clip(&line))))
                    }
                },
            }
        },
    };
    let Err(e) = outcome else {
        return Decision::Fault(fault("crash", "no answer"));
    };
    let mut detail = e.to_string();
    let tail = proc.stderr_tail();
    if matches!(e, TransportError::Closed(_)) && !tail.trim().is_empty() {
        detail += &format!("; stderr: {}", clip(tail.trim()));
    }
    let f = fault(e.fault_kind(), detail);
    // A crashed bot cannot answer again. One that missed a deadline can stay
    // only in a dialect that tells late answers from new ones (decision ids).
    let keep = matches!(e, TransportError::Timeout | TransportError::LineTooLong(_))
        && p.dialect.kind() == DialectKind::Croupier;
    if !keep {
        p.broken = Some(f.clone());
    }
    Decision::Fault(f)
}

fn clip(text: &str) -> String {
    let mut s: String = text.chars().take(200).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

/// Starts a program and greets it.
async fn start<G: Game>(
    p: &mut ProgramSeat<G>,
    game: &G,
    seat: Seat,
    config: &LiveConfig,
    reaper: &mut JoinSet<()>,
) {
    if let Some(old) = p.process.take() {
        reaper.spawn(old.terminate());
    }
    p.broken = None;
    let mut proc = match BotProcess::spawn(&p.argv, &config.limits) {
        Ok(proc) => proc,
        Err(e) => {
            p.broken = Some(fault("crash", e.to_string()));
            return;
        }
    };
    let deadline = Instant::now() + config.move_time;
    let mut lines = Vec::new();
    p.dialect.hello(game, seat, &mut lines);
    let mut greeted = proc.send(&lines, deadline).await;
    if greeted.is_ok() && p.dialect.expects_hello_reply() {
        greeted = proc.recv(deadline).await.map(|_name| ());
    }
    if let Err(e) = greeted {
        p.broken = Some(fault(e.fault_kind(), format!("at start: {e}")));
    }
    p.process = Some(proc);
}

/// Tells every seat the events it may see, starting and stopping programs
/// as their dialects require.
async fn deliver<G: Game>(
    game: &G,
    seats: &mut [LiveSeat<G>],
    seen: &mut [usize],
    config: &LiveConfig,
    reaper: &mut JoinSet<()>,
) {
    let events = game.events();
    for (i, s) in seats.iter_mut().enumerate() {
        let seat = Seat(i as u8);
        for e in &events[seen[i]..] {
            if !e.visible_to(seat) {
                continue;
            }
            match &mut s.driver {
                Driver::Builtin(b) => b.notify(e),
                Driver::Program(p) => {
                    let mut lines = Vec::new();
                    match p.dialect.event(game, seat, e, &mut lines) {
                        Flow::Restart => start(p, game, seat, config, reaper).await,
                        flow => {
                            if let Some(proc) = p.process.as_mut() {
                                let deadline = Instant::now() + config.move_time;
                                if let Err(e) = proc.send(&lines, deadline).await {
                                    p.broken.get_or_insert_with(|| {
                                        fault(e.fault_kind(), e.to_string())
                                    });
                                }
                            }
                            if flow == Flow::Stop {
                                if let Some(proc) = p.process.take() {
                                    reaper.spawn(proc.terminate());
                                }
                            }
                        }
                    }
                }
            }
        }
        seen[i] = events.len();
    }
}
