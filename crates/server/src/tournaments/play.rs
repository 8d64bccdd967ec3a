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
use croupier_arena::transport::http::{HttpClient, HttpEndpoint};
use croupier_arena::transport::Link;
use croupier_bots::Builtins;
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{GameKind, Record, SeatInfo};
use croupier_store::tournaments::{EntryRow, TournamentRow};
use croupier_store::{BotId, BotKind};

use crate::mailbox::{Mailboxes, PullConnector};

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
pub fn link(e: &EntryRow, reach: &Reach<'_>) -> Result<(Link, DialectKind), String> {
    match e.kind {
        BotKind::Push => {
            let dialect: DialectKind = e
                .dialect
                .as_deref()
                .unwrap_or("croupier")
                .parse()
                .map_err(|err| format!("bot {}: {err}", e.name))?;
            let url = e
                .endpoint
                .as_deref()
                .ok_or_else(|| format!("push bot {} has no URL", e.name))?;
            let auth = e
                .auth_user
                .clone()
                .map(|u| (u, e.auth_password.clone().unwrap_or_default()));
            let endpoint = HttpEndpoint::parse(url, auth).map_err(|err| err.to_string())?;
            Ok((Link::Http(Arc::clone(reach.http), endpoint), dialect))
        }
        BotKind::Pull => Ok((
            Link::Custom(Arc::new(PullConnector(reach.mailboxes.get(e.bot)))),
            DialectKind::Croupier,
        )),
        BotKind::House | BotKind::Rest => Err(format!("bot {} is not reached over a link", e.name)),
        BotKind::Hosted => reach
            .hosted
            .get(&e.bot)
            .cloned()
            .ok_or_else(|| format!("hosted bot {} was not linked for this game", e.name)),
    }
}

/// Checks that an entry can be seated in `game` (at the start, so that a bot
/// that cannot be reached at all is left out with a reason, not retried).
/// Hosted entries are checked by the caller, against their frozen version.
pub fn check_entry(game: GameKind, e: &EntryRow, reach: &Reach<'_>) -> Result<(), String> {
    match e.kind {
        BotKind::House => {
            let strategy = e.strategy.as_deref().unwrap_or_default();
            let ok = match game {
                GameKind::Goofspiel => Goofspiel::builtin(strategy).map(|_| ()),
                GameKind::LoveLetter => LoveLetter::builtin(strategy).map(|_| ()),
                GameKind::SkullWhist => SkullWhist::builtin(strategy).map(|_| ()),
            };
            ok.map_err(|err| format!("house bot {}: {err}", e.name))
        }
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
) -> Result<Record, String> {
    let live = LiveConfig {
        move_time: Duration::from_millis(t.move_ms.max(1) as u64),
        budget: t.budget_ms.map(|b| Duration::from_millis(b.max(0) as u64)),
        ..LiveConfig::default()
    };
    let game: GameKind = t.game.parse().map_err(|e| format!("{e}"))?;
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
) -> Result<Record, String> {
    let variant = parse_variant::<G>(t.variant.as_deref()).map_err(|e| e.to_string())?;
    let mut seats: Vec<LiveSeat<G>> = Vec::with_capacity(entries.len());
    for e in entries {
        let info = SeatInfo::named(e.name.clone());
        seats.push(match e.kind {
            BotKind::House => LiveSeat::builtin(
                info,
                G::builtin(e.strategy.as_deref().unwrap_or_default())
                    .map_err(|err| err.to_string())?,
            ),
            BotKind::Rest | BotKind::Push | BotKind::Pull | BotKind::Hosted => {
                let (link, dialect) = link(e, reach)?;
                remote_seat::<G>(info, link, dialect)
            }
        });
    }
    play_live::<G>(&variant, seed, &mut seats, live)
        .await
        .map_err(|e| e.to_string())
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
