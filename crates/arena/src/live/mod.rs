//! Matches with bot programs: every seat is a built-in strategy or a program
//! that speaks a dialect over its stdin/stdout. Decisions have deadlines,
//! simultaneous decisions are asked for at once, and every fault gets its
//! game's ruling without stalling the match.
//!
//! One decision loop (`decisions.rs`) runs every live match, in one of two
//! modes: by rounds ([`play_live`]: every seat due is asked, the answers are
//! applied together in seat order, so a record does not depend on who
//! answered first), or on arrival ([`play_on_arrival`]: each answer is
//! applied the moment it comes, bots may speak out of turn and may leave at
//! any time; the 2014 REST API's games).

mod decisions;

pub(crate) use decisions::Mode;

use std::time::Duration;

use croupier_bots::{bot_rng, BotRng, Strategy};
use croupier_dialects::{Dialect, DialectKind, Flow};
use croupier_rules::{
    game_rng, Event as _, Fault, Game, GameRng, Record, RuleError, Seat, SeatInfo, StepKind,
};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::record::{apply_ruling, finish, now_rfc3339, step, MatchError};
use crate::seeds;
use crate::transport::{process::ProcessLimits, TransportError};
use crate::transport::{Conn, Link};

/// How a live match is run.
#[derive(Clone, Debug)]
pub struct LiveConfig {
    /// Time a bot has for each decision.
    pub move_time: Duration,
    /// Thinking time each remote bot has for the whole match (`None` =
    /// unlimited). Once it is spent, the bot is no longer asked: every
    /// decision left gets its game's fault ruling (a random card in
    /// Goofspiel). Built-in strategies are charged their (tiny) time, so that
    /// opponents see it, but never cut off.
    pub budget: Option<Duration>,
    /// Limits of bot processes.
    pub limits: ProcessLimits,
}

impl Default for LiveConfig {
    fn default() -> Self {
        LiveConfig {
            move_time: Duration::from_secs(10),
            budget: None,
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
    /// A remote bot (a program, an HTTP bot, a pull client) speaking a
    /// dialect.
    Program(Box<ProgramSeat<G>>),
}

/// A remote bot and its dialect.
pub struct ProgramSeat<G: Game> {
    link: Link,
    dialect: Box<dyn Dialect<G>>,
    process: Option<Box<dyn Conn>>,
    /// Why the bot can no longer be asked (it crashed, or missed a deadline
    /// in a dialect that cannot tell a late answer from the next one).
    broken: Option<Fault>,
}

impl<G: Game> ProgramSeat<G> {
    /// A program (`argv[0]` and its arguments) speaking `dialect`.
    pub fn new(argv: Vec<String>, dialect: Box<dyn Dialect<G>>) -> Self {
        Self::with_link(Link::Process(argv), dialect)
    }

    /// A bot reached through `link`, speaking `dialect`.
    pub fn with_link(link: Link, dialect: Box<dyn Dialect<G>>) -> Self {
        ProgramSeat {
            link,
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
        Self::remote(info, Link::Process(argv), dialect)
    }

    /// A seat played by a bot reached through `link`.
    pub fn remote(info: SeatInfo, link: Link, dialect: Box<dyn Dialect<G>>) -> Self {
        LiveSeat {
            info,
            driver: Driver::Program(Box::new(ProgramSeat::with_link(link, dialect))),
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
            .field("link", &self.link)
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

/// Thinking time left per seat in a match with a budget.
struct Clocks {
    left: Vec<Option<Duration>>,
}

impl Clocks {
    fn ms(&self) -> Vec<Option<u64>> {
        self.left
            .iter()
            .map(|c| c.map(|d| d.as_millis().try_into().unwrap_or(u64::MAX)))
            .collect()
    }

    fn spent(&self, i: usize) -> bool {
        self.left[i].is_some_and(|d| d.is_zero())
    }

    /// The time seat `i` may think now.
    fn limit(&self, i: usize, move_time: Duration) -> Duration {
        self.left[i].map_or(move_time, |d| d.min(move_time))
    }

    fn charge(&mut self, i: usize, used: Duration) {
        if let Some(d) = &mut self.left[i] {
            *d = d.saturating_sub(used);
        }
    }
}

/// Plays one game of `G` from `seed` between `seats`, and returns its record.
/// The answers of a simultaneous decision are applied together, in seat
/// order, once every seat answered.
pub async fn play_live<G: Game>(
    variant: &G::Variant,
    seed: u64,
    seats: &mut [LiveSeat<G>],
    config: &LiveConfig,
) -> Result<Record, MatchError> {
    play(variant, seed, seats, config, Mode::Rounds, Think::Blocking).await
}

/// Plays one game like [`play_live`], but applies each answer as it
/// arrives, also during simultaneous decisions (sealed bids), and listens
/// throughout to connections that
/// [speak out of turn](crate::transport::Conn::speaks_out_of_turn). A
/// seat's move clock runs from the moment it became due until it answers,
/// whatever the other seats do; its [`Dialect::accepted`] lines go out once
/// its answer is applied and delivered. The record lists answers in the
/// order they came (with remote bots, not the same from run to run). Every
/// connection's `recv` must be cancel-safe.
///
/// [`Dialect::accepted`]: croupier_dialects::Dialect::accepted
pub async fn play_on_arrival<G: Game>(
    variant: &G::Variant,
    seed: u64,
    seats: &mut [LiveSeat<G>],
    config: &LiveConfig,
) -> Result<Record, MatchError> {
    play(
        variant,
        seed,
        seats,
        config,
        Mode::OnArrival,
        Think::Blocking,
    )
    .await
}

/// Where built-in strategies think.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Think {
    /// On Tokio's blocking pool, so that a searching strategy holds up no
    /// async worker ([`crate::think::act_blocking`]).
    Blocking,
    /// On the calling thread: a match of built-in strategies only
    /// ([`crate::runner::play_match`]), which nothing else shares and in
    /// which nothing waits, so it needs no runtime.
    Inline,
}

/// Plays one game: the one decision loop in `mode`, built-ins thinking
/// where `think` says.
pub(crate) async fn play<G: Game>(
    variant: &G::Variant,
    seed: u64,
    seats: &mut [LiveSeat<G>],
    config: &LiveConfig,
    mode: Mode,
    think: Think,
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
    // Names this match to HTTP bots (X-Croupier-Match), unique per run.
    let tag = format!("{:016x}", rand::random::<u64>());
    for (i, s) in seats.iter_mut().enumerate() {
        match &mut s.driver {
            Driver::Builtin(b) => b.new_game(Seat(i as u8), variant, n),
            Driver::Program(p) if !p.dialect.starts_per_round() => {
                start(p, &game, Seat(i as u8), config, &tag, &mut reaper).await;
            }
            Driver::Program(_) => {}
        }
    }
    let mut seen = vec![0usize; n];
    let mut clocks = Clocks {
        left: vec![config.budget; n],
    };
    let result = decisions::run(
        mode,
        think,
        &mut game,
        seats,
        config,
        &tag,
        &mut clocks,
        &mut rngs,
        &mut arena_rng,
        &mut record,
        &mut seen,
        &mut reaper,
    )
    .await;
    // Goodbye and stop, whatever happened.
    let remaining = clocks.ms();
    let grace = config
        .limits
        .grace
        .max(config.move_time.min(Duration::from_secs(5)));
    let goodbyes = seats
        .iter_mut()
        .enumerate()
        .filter_map(|(i, s)| match &mut s.driver {
            Driver::Program(p) => p.process.take().map(|mut conn| {
                let mut lines = Vec::new();
                p.dialect.clocks(&remaining);
                p.dialect.goodbye(&game, Seat(i as u8), &mut lines);
                async move {
                    let _ = conn.send(&lines, Instant::now() + grace).await;
                    conn
                }
            }),
            Driver::Builtin(_) => None,
        });
    // Closed here, together, not spawned: a spawned task would wait a turn
    // of a busy runtime's queue before the game could end (issue 20).
    let said = futures::future::join_all(goodbyes).await;
    futures::future::join_all(said.into_iter().map(|conn| conn.close())).await;
    while reaper.join_next().await.is_some() {}
    result?;
    finish(&game, &mut record)?;
    Ok(record)
}

/// Applies seat `i`'s decision: its action, or the game's ruling on its
/// fault (also on an action the rules refuse). True when the action stood.
#[allow(clippy::too_many_arguments)]
fn settle<G: Game>(
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
fn rejected(e: RuleError, line: &str) -> Fault {
    match e {
        RuleError::Malformed(m) => fault("malformed", m),
        e => fault("illegal", format!("'{}': {e}", clip(line))),
    }
}

/// The fault of a failed connection (with the last skipped line and the
/// bot's diagnostics); marks the seat broken unless it can be asked again.
fn transport_fault<G: Game>(
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

/// Connects to a remote bot (starting a program) and greets it.
async fn start<G: Game>(
    p: &mut ProgramSeat<G>,
    game: &G,
    seat: Seat,
    config: &LiveConfig,
    tag: &str,
    reaper: &mut JoinSet<()>,
) {
    if let Some(old) = p.process.take() {
        reaper.spawn(old.close());
    }
    p.broken = None;
    let mut conn = match p
        .link
        .open(&config.limits, &format!("{tag}-{}", seat.index()))
    {
        Ok(conn) => conn,
        Err(e) => {
            p.broken = Some(fault("crash", e.to_string()));
            return;
        }
    };
    let deadline = Instant::now() + config.move_time;
    let mut lines = Vec::new();
    p.dialect.hello(game, seat, &mut lines);
    let mut greeted = conn.send(&lines, deadline).await;
    if greeted.is_ok() && p.dialect.expects_hello_reply() {
        greeted = conn.recv(deadline).await.map(|_name| ());
    }
    if let Err(e) = greeted {
        p.broken = Some(fault(e.fault_kind(), format!("at start: {e}")));
    }
    p.process = Some(conn);
}

/// Tells every seat the events it may see, starting and stopping programs
/// as their dialects require. The lines of consecutive events go out in one
/// send with one deadline, so a slow HTTP bot costs at most one move time
/// per step, not one per event.
async fn deliver<G: Game>(
    game: &G,
    seats: &mut [LiveSeat<G>],
    seen: &mut [usize],
    config: &LiveConfig,
    tag: &str,
    reaper: &mut JoinSet<()>,
) {
    let events = game.events();
    for (i, s) in seats.iter_mut().enumerate() {
        let seat = Seat(i as u8);
        let mut pending: Vec<String> = Vec::new();
        for e in &events[seen[i]..] {
            if !e.visible_to(seat) {
                continue;
            }
            match &mut s.driver {
                Driver::Builtin(b) => b.notify(e),
                Driver::Program(p) => {
                    let mut lines = Vec::new();
                    match p.dialect.event(game, seat, e, &mut lines) {
                        Flow::Continue => pending.append(&mut lines),
                        Flow::Restart => {
                            flush(p, &mut pending, config).await;
                            start(p, game, seat, config, tag, reaper).await;
                            // The rest of the greeting (Postman's `players`
                            // and `start`) goes to the new process.
                            pending.append(&mut lines);
                        }
                        Flow::Stop => {
                            pending.append(&mut lines);
                            flush(p, &mut pending, config).await;
                            if let Some(conn) = p.process.take() {
                                reaper.spawn(conn.close());
                            }
                        }
                    }
                }
            }
        }
        if let Driver::Program(p) = &mut s.driver {
            flush(p, &mut pending, config).await;
        }
        seen[i] = events.len();
    }
}

/// Sends the lines waiting for a remote bot, unless it can no longer be
/// asked (then it is not told more).
async fn flush<G: Game>(p: &mut ProgramSeat<G>, pending: &mut Vec<String>, config: &LiveConfig) {
    if pending.is_empty() {
        return;
    }
    if let (Some(conn), None) = (p.process.as_mut(), &p.broken) {
        let deadline = Instant::now() + config.move_time;
        if let Err(e) = conn.send(pending, deadline).await {
            p.broken
                .get_or_insert_with(|| fault(e.fault_kind(), format!("delivering events: {e}")));
        }
    }
    pending.clear();
}
