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
//!
//! Imports point one way, from this file down: the loop uses `delivery.rs`
//! (what goes out to remote bots), `faults.rs` (an answer applied, or the
//! game's ruling on a fault), and the vocabulary of `seat.rs`, `config.rs`
//! and `clocks.rs`; no file of the folder imports this one.

mod clocks;
mod config;
mod decisions;
mod delivery;
mod faults;
mod seat;

pub use config::LiveConfig;
pub(crate) use config::Think;
pub(crate) use decisions::Mode;
pub use seat::{Driver, LiveSeat, ProgramSeat};

use std::time::Duration;

use croupier_bots::{bot_rng, BotRng};
use croupier_rules::{game_rng, Game, GameRng, Record, Seat};
use tokio::task::JoinSet;
use tokio::time::Instant;

use clocks::Clocks;
use delivery::start;

use crate::record::{finish, now_rfc3339, MatchError};
use crate::seeds;

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
    // A program's sandbox held for the match is set up now, every seat's
    // beside the others' (its first start waits for it), unless one was
    // kept from the last match ([`LiveSeat::take_held`]): for a dialect
    // that starts its program each round, and for any program whose
    // sandbox is kept for the next match ([`LiveSeat::keep_held`]: a
    // series), so that the series sets it up once (issue 53).
    for s in seats.iter_mut() {
        if let Driver::Program(p) = &mut s.driver {
            if p.held.is_none() && (p.dialect.starts_per_round() || p.keep) {
                p.held = p.link.hold(&config.limits);
            }
        }
    }
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
    let mut clocks = Clocks::new(config.budget, n);
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
    // A sandbox held for this match ends with it (nothing of it, not its
    // `/tmp`, reaches the next match), unless its caller keeps it to clear
    // it for the next ([`LiveSeat::keep_held`]).
    for s in seats.iter_mut() {
        if let Driver::Program(p) = &mut s.driver {
            if !p.keep {
                p.held = None;
            }
        }
    }
    result?;
    finish(&game, &mut record)?;
    Ok(record)
}
