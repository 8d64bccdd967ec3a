//! Plays one planned tournament game with the entries as frozen at the
//! start: push bots over HTTP at their frozen URL and dialect, pull bots
//! through their mailbox, house bots in process, hosted programs as the
//! version frozen at the start (linked by the caller, see [`Reach::hosted`]). A bot that is down gets its
//! dialect's ruling (`play_live`); the game is stored like a ladder game,
//! marked with its tournament.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use croupier_arena::live::{play_live, LiveConfig, LiveSeat};
use croupier_arena::spec::remote_seat;
use croupier_arena::transport::http::HttpClient;
use croupier_arena::transport::Link;
use croupier_bots::{Builtins, Strategy};
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{GameKind, Record, SeatInfo};
use croupier_store::tournaments::{EntryRow, TournamentRow};
use croupier_store::{BotId, BotKind};

use super::error::{EntryError, TournamentError};
use crate::ladder::{pull_link, push_link};
use croupier_live::mailbox::Mailboxes;

/// What a seat needs to reach its bot.
#[allow(missing_debug_implementations)]
pub struct Reach<'a> {
    /// The shared HTTP client of push bots.
    pub http: &'a Arc<HttpClient>,
    /// Pull bots' mailboxes.
    pub mailboxes: &'a Arc<Mailboxes>,
    /// Hosted entries' links to their frozen versions, made (and the bots
    /// held) by the caller for this game.
    pub hosted: &'a HashMap<BotId, (Link, DialectKind)>,
}

/// How a frozen entry is reached.
pub fn link(e: &EntryRow, reach: &Reach<'_>) -> Result<(Link, DialectKind), EntryError> {
    match e.kind {
        BotKind::Push => {
            let auth = (e.auth_user.clone(), e.auth_password.clone());
            Ok(push_link(
                &e.name,
                e.endpoint.as_deref(),
                e.dialect.as_deref(),
                auth,
                reach.http,
            )?)
        }
        BotKind::Pull => Ok(pull_link(e.bot, reach.mailboxes)),
        BotKind::House | BotKind::Rest => Err(EntryError::NoLink(e.name.clone())),
        BotKind::Hosted => reach
            .hosted
            .get(&e.bot)
            .cloned()
            .ok_or_else(|| EntryError::NotLinked(e.name.clone())),
    }
}

/// The strategy of house entry `e`.
fn house<G: Builtins>(e: &EntryRow) -> Result<Box<dyn Strategy<G>>, EntryError> {
    let strategy = e
        .strategy
        .as_deref()
        .ok_or_else(|| EntryError::NoStrategy(e.name.clone()))?;
    G::builtin(strategy).map_err(|source| EntryError::House {
        name: e.name.clone(),
        source,
    })
}

/// Checks that an entry can be seated in `game` (at the start, so that a bot
/// that cannot be reached at all is left out with a reason, not retried).
/// Hosted entries are checked by the caller, against their frozen version.
pub fn check_entry(game: GameKind, e: &EntryRow, reach: &Reach<'_>) -> Result<(), EntryError> {
    match e.kind {
        BotKind::House => match game {
            GameKind::Goofspiel => house::<Goofspiel>(e).map(|_| ()),
            GameKind::LoveLetter => house::<LoveLetter>(e).map(|_| ()),
            GameKind::SkullWhist => house::<SkullWhist>(e).map(|_| ()),
        },
        BotKind::Hosted => Ok(()),
        BotKind::Rest | BotKind::Push | BotKind::Pull => link(e, reach).map(|_| ()),
    }
}

/// Plays a game of `t` with `seats` (entries by seat) on `seed`.
pub async fn play(
    t: &TournamentRow,
    seats: &[&EntryRow],
    seed: u64,
    reach: &Reach<'_>,
) -> Result<Record, TournamentError> {
    let live = LiveConfig {
        move_time: Duration::from_millis(t.move_ms.max(1) as u64),
        budget: t.budget_ms.map(|b| Duration::from_millis(b.max(0) as u64)),
        ..LiveConfig::default()
    };
    let game: GameKind = t.game.parse()?;
    match game {
        GameKind::Goofspiel => play_game::<Goofspiel>(t, seats, seed, &live, reach).await,
        GameKind::LoveLetter => play_game::<LoveLetter>(t, seats, seed, &live, reach).await,
        GameKind::SkullWhist => play_game::<SkullWhist>(t, seats, seed, &live, reach).await,
    }
}

async fn play_game<G: Builtins>(
    t: &TournamentRow,
    entries: &[&EntryRow],
    seed: u64,
    live: &LiveConfig,
    reach: &Reach<'_>,
) -> Result<Record, TournamentError> {
    let variant = parse_variant::<G>(t.variant.as_deref())?;
    let mut seats: Vec<LiveSeat<G>> = Vec::with_capacity(entries.len());
    for e in entries {
        let info = SeatInfo::named(e.name.clone());
        seats.push(match e.kind {
            BotKind::House => LiveSeat::builtin(info, house::<G>(e)?),
            BotKind::Rest | BotKind::Push | BotKind::Pull | BotKind::Hosted => {
                let (link, dialect) = link(e, reach)?;
                remote_seat::<G>(info, link, dialect)
            }
        });
    }
    Ok(play_live::<G>(&variant, seed, &mut seats, live).await?)
}

/// The seats that faulted at least once in `record`, and the last fault's
/// text of each seat.
pub fn faults(record: &Record) -> Vec<(i64, String)> {
    let mut out: Vec<(i64, String)> = Vec::new();
    for s in &record.steps {
        if let Some(f) = &s.fault {
            let seat = s.seat.index() as i64;
            let text = format!("{}: {}", f.kind, f.detail);
            match out.iter_mut().find(|(k, _)| *k == seat) {
                Some(slot) => slot.1 = text,
                None => out.push((seat, text)),
            }
        }
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

/// Ranks by seat of a finished record.
pub fn ranks(record: &Record) -> Vec<i64> {
    record.outcome.ranks.iter().map(|r| i64::from(*r)).collect()
}
