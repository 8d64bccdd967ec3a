//! A match's seats: the bots the ladder can seat ([`Entrant`]: a house
//! strategy or a registered push/pull bot) and the live seats built from
//! them, each remote bot reached through its link and dialect.

use std::sync::Arc;

use croupier_arena::live::LiveSeat;
use croupier_arena::spec::remote_seat;
use croupier_arena::transport::http::{BadUrl, HttpClient, HttpEndpoint};
use croupier_arena::transport::Link;
use croupier_bots::{Builtins, UnknownBot};
use croupier_dialects::{DialectKind, UnknownDialect};
use croupier_rules::SeatInfo;
use croupier_store::{BotId, BotInfo, BotKind};

use crate::hosted::LinkError;
use croupier_live::mailbox::{conn::PullConnector, Mailboxes};

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

/// Why a registered bot cannot be seated in a match.
#[derive(Debug, thiserror::Error)]
pub enum SeatError {
    /// Its dialect is not one Croupier speaks.
    #[error("bot {bot}: {source}")]
    Dialect {
        /// The bot's name.
        bot: String,
        /// The unknown name.
        source: UnknownDialect,
    },
    /// A push bot without a URL.
    #[error("push bot {0} has no URL")]
    NoUrl(String),
    /// A push bot whose URL does not read.
    #[error(transparent)]
    Url(#[from] BadUrl),
    /// A push bot, and this server calls no push bots.
    #[error("{0} is a push bot, and this server calls no push bots")]
    NoHttp(String),
    /// A hosted bot, and this server runs no hosted bots.
    #[error("bot {0}: hosted bots are off")]
    HostedOff(String),
    /// A hosted bot that cannot be started now.
    #[error(transparent)]
    Hosted(#[from] LinkError),
    /// A bot that plays through no link (a 2014 REST bot, a house bot).
    #[error("bot {0} is not an HTTP bot")]
    NotRemote(String),
    /// A house strategy that does not exist.
    #[error(transparent)]
    House(#[from] UnknownBot),
}

/// The live seats of `table`, in its order.
pub(super) fn live_seats<G: Builtins>(
    table: &[Entrant],
    http: &Arc<HttpClient>,
    mailboxes: &Mailboxes,
    hosted: Option<&Arc<crate::hosted::Hosted>>,
) -> Result<Vec<LiveSeat<G>>, SeatError> {
    let mut seats: Vec<LiveSeat<G>> = Vec::with_capacity(table.len());
    for e in table {
        seats.push(match e {
            Entrant::House { name, strategy, .. } => {
                LiveSeat::builtin(SeatInfo::named(name.clone()), G::builtin(strategy)?)
            }
            Entrant::Remote(b) => {
                let (link, dialect) = link(b, Some(http), mailboxes, hosted)?;
                remote_seat::<G>(SeatInfo::named(b.name.clone()), link, dialect)
            }
        });
    }
    Ok(seats)
}

/// How the server reaches registered bot `b` (`http`: the client of push
/// bots, if this server calls them; `hosted`: hosted bots, if it runs
/// them), and the dialect it speaks. The one place for the ladder and
/// people's games.
pub(crate) fn link(
    b: &BotInfo,
    http: Option<&Arc<HttpClient>>,
    mailboxes: &Mailboxes,
    hosted: Option<&Arc<crate::hosted::Hosted>>,
) -> Result<(Link, DialectKind), SeatError> {
    match b.kind {
        BotKind::Push => {
            let http = http.ok_or_else(|| SeatError::NoHttp(b.name.clone()))?;
            let auth = (b.auth_user.clone(), b.auth_password.clone());
            push_link(
                &b.name,
                b.endpoint.as_deref(),
                b.dialect.as_deref(),
                auth,
                http,
            )
        }
        BotKind::Pull => Ok(pull_link(b.id, mailboxes)),
        // Issue 12 hook: a hosted bot's newest active version.
        BotKind::Hosted => match hosted {
            Some(h) => Ok(h.link(b)?),
            None => Err(SeatError::HostedOff(b.name.clone())),
        },
        BotKind::Rest | BotKind::House => Err(SeatError::NotRemote(b.name.clone())),
    }
}

/// How the server reaches push bot `name` at `endpoint` speaking `dialect`
/// (`croupier` when none is named), with basic auth `(user, password)`.
pub(crate) fn push_link(
    name: &str,
    endpoint: Option<&str>,
    dialect: Option<&str>,
    (user, password): (Option<String>, Option<String>),
    http: &Arc<HttpClient>,
) -> Result<(Link, DialectKind), SeatError> {
    let dialect = dialect_of(name, dialect)?;
    let url = endpoint.ok_or_else(|| SeatError::NoUrl(name.to_string()))?;
    let auth = user.map(|u| (u, password.unwrap_or_default()));
    let endpoint = HttpEndpoint::parse(url, auth)?;
    Ok((Link::Http(Arc::clone(http), endpoint), dialect))
}

/// How the server reaches pull bot `id`: through its mailbox, in the
/// Croupier dialect.
pub(crate) fn pull_link(id: BotId, mailboxes: &Mailboxes) -> (Link, DialectKind) {
    (
        Link::Custom(Arc::new(PullConnector(mailboxes.get(id)))),
        DialectKind::Croupier,
    )
}

/// The dialect named `dialect` of bot `name` (`croupier` when none is).
fn dialect_of(name: &str, dialect: Option<&str>) -> Result<DialectKind, SeatError> {
    dialect
        .unwrap_or("croupier")
        .parse()
        .map_err(|source| SeatError::Dialect {
            bot: name.to_string(),
            source,
        })
}
