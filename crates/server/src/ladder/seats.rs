//! A match's seats: the bots the ladder can seat ([`Entrant`]: a house
//! strategy or a registered push/pull bot) and the live seats built from
//! them, each remote bot reached through its link and dialect.

use std::sync::Arc;

use croupier_arena::live::LiveSeat;
use croupier_arena::spec::remote_seat;
use croupier_arena::transport::http::{HttpClient, HttpEndpoint};
use croupier_arena::transport::Link;
use croupier_bots::Builtins;
use croupier_dialects::DialectKind;
use croupier_rules::SeatInfo;
use croupier_store::{BotId, BotInfo, BotKind};

use crate::mailbox::{Mailboxes, PullConnector};

/// A bot the ladder can seat.
#[derive(Clone, Debug)]
pub(super) enum Entrant {
    /// A built-in strategy, registered as a house bot.
    House {
        id: BotId,
        name: String,
        strategy: String,
    },
    /// A registered push or pull bot.
    Remote(BotInfo),
}

impl Entrant {
    pub(super) fn id(&self) -> BotId {
        match self {
            Entrant::House { id, .. } => *id,
            Entrant::Remote(b) => b.id,
        }
    }

    pub(super) fn is_house(&self) -> bool {
        matches!(self, Entrant::House { .. })
    }

    pub(super) fn name(&self) -> &str {
        match self {
            Entrant::House { name, .. } => name,
            Entrant::Remote(b) => &b.name,
        }
    }
}

/// The live seats of `table`, in its order.
pub(super) fn live_seats<G: Builtins>(
    table: &[Entrant],
    http: &Arc<HttpClient>,
    mailboxes: &Mailboxes,
    hosted: Option<&Arc<crate::hosted::Hosted>>,
) -> Result<Vec<LiveSeat<G>>, String> {
    let mut seats: Vec<LiveSeat<G>> = Vec::with_capacity(table.len());
    for e in table {
        seats.push(match e {
            Entrant::House { name, strategy, .. } => LiveSeat::builtin(
                SeatInfo::named(name.clone()),
                G::builtin(strategy).map_err(|e| e.to_string())?,
            ),
            Entrant::Remote(b) => {
                let (link, dialect) = link(b, http, mailboxes, hosted)?;
                remote_seat::<G>(SeatInfo::named(b.name.clone()), link, dialect)
            }
        });
    }
    Ok(seats)
}

/// How the server reaches a registered bot, and the dialect it speaks.
fn link(
    b: &BotInfo,
    http: &Arc<HttpClient>,
    mailboxes: &Mailboxes,
    hosted: Option<&Arc<crate::hosted::Hosted>>,
) -> Result<(Link, DialectKind), String> {
    let dialect: DialectKind = b
        .dialect
        .as_deref()
        .unwrap_or("croupier")
        .parse()
        .map_err(|e| format!("bot {}: {e}", b.name))?;
    match b.kind {
        BotKind::Push => {
            let url = b.endpoint.as_deref().unwrap_or_default();
            let auth = b
                .auth_user
                .clone()
                .map(|u| (u, b.auth_password.clone().unwrap_or_default()));
            let endpoint = HttpEndpoint::parse(url, auth).map_err(|e| e.to_string())?;
            Ok((Link::Http(Arc::clone(http), endpoint), dialect))
        }
        BotKind::Pull => Ok((
            Link::Custom(Arc::new(PullConnector(mailboxes.get(b.id)))),
            DialectKind::Croupier,
        )),
        // Issue 12 hook: a hosted bot's newest active version.
        BotKind::Hosted => match hosted {
            Some(h) => h.link(b),
            None => Err(format!("bot {}: hosted bots are off", b.name)),
        },
        BotKind::Rest | BotKind::House => Err(format!("bot {} is not an HTTP bot", b.name)),
    }
}
