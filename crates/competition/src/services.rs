//! What the server's handlers and pages share: the running parts of a
//! server, as the composition root (`croupier_server::prepare`) wires them.

use std::sync::Arc;

use croupier_live::hub::Hub;
use croupier_live::live_games;
use croupier_live::mailbox;

use crate::{admin, hosted, human, ladder, tournaments};

/// What the handlers and pages share.
#[derive(Debug)]
pub struct Services {
    /// Sessions, matchmaking and games.
    pub hub: Arc<Hub>,
    /// Pull bots' mailboxes.
    pub mailboxes: Arc<mailbox::Mailboxes>,
    /// The ladder, when it runs.
    pub ladder: Option<Arc<ladder::Ladder>>,
    /// Whether push bots may be registered at, and called on, loopback,
    /// private, link-local or multicast addresses (see `croupier serve
    /// --allow-private-bot-urls`).
    pub allow_private_bot_urls: bool,
    /// Tournaments (issue 15), when the ladder runs.
    pub tournaments: Option<Arc<tournaments::Tournaments>>,
    /// Hosted bots, once `croupier_server::enable_hosted` has run (issue 12).
    pub hosted: std::sync::OnceLock<Arc<hosted::Hosted>>,
    /// Games in progress that spectators can watch (issue 16).
    pub live: Arc<live_games::LiveGames>,
    /// Games people play from the website (issue 16).
    pub people: Arc<human::People>,
    /// Admin actions and the banned bots (issue 49).
    pub admin: Arc<admin::Admin>,
    /// The briefs and pages of tournaments that are over, once made.
    pub kept: tournaments::kept::Kept,
}
