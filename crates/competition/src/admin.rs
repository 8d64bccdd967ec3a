//! Admin actions (issue 49 item 5), below any HTTP framework: bans of bots
//! and owners, a bot's rating reset, new seasons, and the audit log. The
//! store writes each action with its audit row ([`croupier_store::admin`]);
//! this module checks the input and carries out what a ban means for the
//! games still to be played:
//!
//! - the ladder reads bans with the bots on every tick (`BotInfo::banned`)
//!   and pairs no banned bot;
//! - a ban withdraws the bot (an owner's: each of their bots) from every
//!   scheduled or running tournament it is entered in: its games not yet
//!   dealt are void, later rounds pair it no more, and a tournament that
//!   starts later withdraws a banned entry at its start;
//! - a 2014 REST bot cannot log in nor ask for a new game ([`Bans`]);
//! - a game in progress is never interrupted: it finishes and is recorded
//!   and rated as any other.
//!
//! An unban lets the bot play on the ladder again; tournament withdrawals
//! stay.

use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use croupier_rules::GameKind;
use croupier_store::admin::{Act, AuditRow, BanChange, BanRow, SeasonRow, Target};
use croupier_store::{BotId, BotKind, Store, StoreError};

/// The longest reason kept.
pub const MAX_REASON: usize = 500;
/// How long this process trusts its list of banned bots for the 2014 REST
/// API before reading it again (another instance may have banned one).
const BANS_FRESH: Duration = Duration::from_secs(5);

/// Why an admin action was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The input is wrong (HTTP 400); nothing changed.
    #[error("{0}")]
    Invalid(String),
    /// No such bot, owner or game (HTTP 404); nothing changed.
    #[error("{0}")]
    NotFound(String),
    /// Already so (HTTP 409); nothing changed.
    #[error("{0}")]
    Conflict(String),
    /// The store failed (HTTP 500).
    #[error("storage failed: {0}")]
    Store(#[from] StoreError),
}

/// The admin actions, and the banned bots as the 2014 REST API checks them.
pub struct Admin {
    store: Arc<dyn Store>,
    bans: RwLock<Bans>,
}

impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin").finish_non_exhaustive()
    }
}

/// The banned bots as last read, and when.
#[derive(Debug)]
struct Bans {
    bots: HashSet<BotId>,
    read: Option<Instant>,
}

/// A reason: trimmed, required for a ban, at most [`MAX_REASON`] characters.
pub fn reason(text: Option<&str>, required: bool) -> Result<Option<String>, AdminError> {
    let text = text.map(str::trim).filter(|t| !t.is_empty());
    match text {
        None if required => Err(AdminError::Invalid(
            "reason: say why (1 to 500 characters); it is shown on the bot's page".into(),
        )),
        Some(t) if t.chars().count() > MAX_REASON => Err(AdminError::Invalid(format!(
            "reason: at most {MAX_REASON} characters"
        ))),
        t => Ok(t.map(str::to_string)),
    }
}

/// A game name, or a clear error.
pub fn game(name: &str) -> Result<GameKind, AdminError> {
    name.parse::<GameKind>()
        .map_err(|e| AdminError::Invalid(format!("game: {e}")))
}

impl Admin {
    /// Admin over `store`.
    pub fn new(store: Arc<dyn Store>) -> Admin {
        Admin {
            store,
            bans: RwLock::new(Bans {
                bots: HashSet::new(),
                read: None,
            }),
        }
    }

    /// Whether `bot` is banned (or its owner is), as this process last read
    /// it (at most a few seconds ago; at once after a ban made here).
    pub async fn is_banned(&self, bot: BotId) -> Result<bool, StoreError> {
        let fresh = {
            let b = self.bans.read().unwrap_or_else(|e| e.into_inner());
            b.read
                .is_some_and(|t| t.elapsed() < BANS_FRESH)
                .then(|| b.bots.contains(&bot))
        };
        match fresh {
            Some(banned) => Ok(banned),
            None => Ok(self.reread().await?.contains(&bot)),
        }
    }

    async fn reread(&self) -> Result<HashSet<BotId>, StoreError> {
        let bots: HashSet<BotId> = self
            .store
            .admin()
            .banned_bots()
            .await?
            .into_iter()
            .collect();
        let mut b = self.bans.write().unwrap_or_else(|e| e.into_inner());
        b.bots = bots.clone();
        b.read = Some(Instant::now());
        Ok(bots)
    }

    /// Bans `target` for `why` (required); withdraws the bots concerned from
    /// the tournaments still to be played.
    pub async fn ban(
        &self,
        target: Target<'_>,
        actor: &str,
        why: Option<&str>,
    ) -> Result<(), AdminError> {
        let why = reason(why, true)?.unwrap_or_default();
        let bots = self.bots_of(target).await?;
        if let Target::Owner(name) = target {
            if name == actor {
                return Err(AdminError::Invalid(
                    "you cannot ban yourself (another admin can)".into(),
                ));
            }
        }
        let at = croupier_arena::record::now_rfc3339();
        let act = Act {
            actor,
            at: &at,
            reason: Some(&why),
        };
        match self.store.admin().ban(target, &act).await? {
            BanChange::Done => {}
            BanChange::NotFound => return Err(not_found(target)),
            BanChange::Unchanged(r) => {
                return Err(AdminError::Conflict(format!(
                    "{} '{}' is already banned: {}",
                    target.kind(),
                    target.name(),
                    r.unwrap_or_default()
                )))
            }
        }
        tracing::info!(
            "admin {actor} banned {} {}: {why}",
            target.kind(),
            target.name()
        );
        self.reread().await?;
        for bot in bots {
            self.withdraw(bot, &why).await?;
        }
        Ok(())
    }

    /// Lifts `target`'s ban.
    pub async fn unban(
        &self,
        target: Target<'_>,
        actor: &str,
        why: Option<&str>,
    ) -> Result<(), AdminError> {
        let why = reason(why, false)?;
        let at = croupier_arena::record::now_rfc3339();
        let act = Act {
            actor,
            at: &at,
            reason: why.as_deref(),
        };
        match self.store.admin().unban(target, &act).await? {
            BanChange::Done => {}
            BanChange::NotFound => return Err(not_found(target)),
            BanChange::Unchanged(_) => {
                return Err(AdminError::Conflict(self.not_banned(target).await?));
            }
        }
        tracing::info!(
            "admin {actor} lifted the ban of {} {}",
            target.kind(),
            target.name()
        );
        self.reread().await?;
        Ok(())
    }

    /// Why unbanning `target` changes nothing: it is not banned, or (a bot)
    /// only its owner is.
    async fn not_banned(&self, target: Target<'_>) -> Result<String, StoreError> {
        if let Target::Bot(name) = target {
            if let Some(row) = self.store.bot_by_name(name).await? {
                let ban = self.store.admin().bot_ban(row.id).await?;
                if let Some(owner) = ban.and_then(|b| b.owner) {
                    return Ok(format!(
                        "bot '{name}' has no ban of its own: its owner {owner} is banned (unban-owner {owner})"
                    ));
                }
            }
        }
        Ok(format!(
            "{} '{}' is not banned",
            target.kind(),
            target.name()
        ))
    }

    /// The bans in force.
    pub async fn bans(&self) -> Result<Vec<BanRow>, AdminError> {
        Ok(self.store.admin().bans().await?)
    }

    /// The bots a ban of `target` stops (a house bot cannot be banned: it
    /// is the server's own, taken off the ladder in its settings).
    async fn bots_of(&self, target: Target<'_>) -> Result<Vec<BotId>, AdminError> {
        match target {
            Target::Bot(name) => {
                let row = self
                    .store
                    .bot_by_name(name)
                    .await?
                    .ok_or_else(|| not_found(target))?;
                let info = self.store.bot_info(row.id).await?;
                if row.house || info.is_some_and(|i| i.kind == BotKind::House) {
                    return Err(AdminError::Invalid(format!(
                        "'{name}' is a house bot: take its strategy out of the ladder's settings instead of banning it"
                    )));
                }
                Ok(vec![row.id])
            }
            Target::Owner(name) => {
                let owner = self
                    .store
                    .owner_by_name(name)
                    .await?
                    .ok_or_else(|| not_found(target))?;
                Ok(self
                    .store
                    .remote_bots()
                    .await?
                    .into_iter()
                    .filter(|b| b.owner == Some(owner.id))
                    .map(|b| b.id)
                    .collect())
            }
        }
    }

    /// Withdraws `bot` from every scheduled or running tournament it is
    /// still in: its games not yet dealt are void.
    async fn withdraw(&self, bot: BotId, why: &str) -> Result<(), StoreError> {
        let ts = self.store.tournaments();
        for t in ts.bot_tournaments(bot).await? {
            if t.status != "scheduled" && t.status != "running" {
                continue;
            }
            let entries = ts.tournament_entries(t.id).await?;
            if entries
                .iter()
                .any(|e| e.bot == bot && e.withdrawn.is_none())
            {
                ts.withdraw_entry(t.id, bot, t.current_round, &format!("banned: {why}"))
                    .await?;
                tracing::info!("tournament {}: bot {bot} withdrawn (banned)", t.name);
            }
        }
        Ok(())
    }

    /// Sets bot `name`'s rating back to the start (in `game`, or in every
    /// game it is rated in); returns the games reset.
    pub async fn reset_rating(
        &self,
        name: &str,
        game: Option<GameKind>,
        actor: &str,
        why: Option<&str>,
    ) -> Result<Vec<String>, AdminError> {
        let why = reason(why, false)?;
        let at = croupier_arena::record::now_rfc3339();
        let act = Act {
            actor,
            at: &at,
            reason: why.as_deref(),
        };
        let reset = self
            .store
            .admin()
            .reset_rating(name, game.map(GameKind::name), &act)
            .await?
            .ok_or_else(|| not_found(Target::Bot(name)))?;
        if reset.is_empty() {
            return Err(AdminError::NotFound(match game {
                Some(g) => format!("bot '{name}' has no rating in {g} this season"),
                None => format!("bot '{name}' has no rating this season"),
            }));
        }
        tracing::info!(
            "admin {actor} reset the rating of {name} in {}",
            reset.join(", ")
        );
        Ok(reset)
    }

    /// Starts a new season of `game` (of every game when `None`).
    pub async fn new_season(
        &self,
        game: Option<GameKind>,
        actor: &str,
        why: Option<&str>,
    ) -> Result<Vec<SeasonRow>, AdminError> {
        let why = reason(why, false)?;
        let games: Vec<&str> = match game {
            Some(g) => vec![g.name()],
            None => GameKind::ALL.iter().map(|g| g.name()).collect(),
        };
        let at = croupier_arena::record::now_rfc3339();
        let act = Act {
            actor,
            at: &at,
            reason: why.as_deref(),
        };
        let started = self.store.admin().new_season(&games, &act).await?;
        for s in &started {
            tracing::info!("admin {actor} started season {} of {}", s.season, s.game);
        }
        Ok(started)
    }

    /// Every season of every game, oldest first.
    pub async fn seasons(&self) -> Result<Vec<SeasonRow>, AdminError> {
        let mut all = Vec::new();
        for g in GameKind::ALL {
            all.extend(self.store.admin().seasons(g.name()).await?);
        }
        Ok(all)
    }

    /// The audit log, newest first.
    pub async fn audit(
        &self,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditRow>, AdminError> {
        Ok(self.store.admin().audit(before, limit).await?)
    }
}

fn not_found(target: Target<'_>) -> AdminError {
    AdminError::NotFound(format!(
        "there is no {} named '{}'",
        target.kind(),
        target.name()
    ))
}
