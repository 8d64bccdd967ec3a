//! What goes out to remote bots: connecting and greeting them
//! ([`start`]), and the events each seat may see ([`deliver`], [`flush`]),
//! starting and stopping programs as their dialects require.

use croupier_dialects::Flow;
use croupier_rules::{Event as _, Game, Seat};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::config::LiveConfig;
use super::faults::fault;
use super::seat::{Driver, LiveSeat, ProgramSeat};

/// Connects to a remote bot (starting a program) and greets it.
pub(super) async fn start<G: Game>(
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
    p.last_stderr = None;
    let match_tag = format!("{tag}-{}", seat.index());
    // A program with a sandbox held for it starts there (each round's, or
    // the match's in a series, or in a sandbox its connector keeps).
    let opened = match p.dialect.starts_per_round() || p.held.is_some() || p.link.keeps_sandbox() {
        true => {
            p.link
                .open_held(&mut p.held, &config.limits, &match_tag)
                .await
        }
        false => p.link.open_ready(&config.limits, &match_tag).await,
    };
    let mut conn = match opened {
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
pub(super) async fn deliver<G: Game>(
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
pub(super) async fn flush<G: Game>(
    p: &mut ProgramSeat<G>,
    pending: &mut Vec<String>,
    config: &LiveConfig,
) {
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
