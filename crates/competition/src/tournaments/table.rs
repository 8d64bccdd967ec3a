//! Plays one planned game of a tournament: a slot of the tournaments'
//! share, its remote bots claimed (one game at a time each), its hosted
//! entries seated as their frozen versions, the game stored, played and
//! stored again with its result.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use croupier_arena::transport::http::HttpClient;
use croupier_arena::transport::Link;
use croupier_dialects::DialectKind;
use croupier_store::hosted::BotVersion;
use croupier_store::tournaments::{EntryRow, TournamentGameRow, TournamentId, TournamentRow};
use croupier_store::{BotId, BotKind, GameEnd, Store};
use tokio::sync::Semaphore;

use super::{play, Capacity, TournamentError};
use crate::hosted::{Hosted, LinkError};
use croupier_live::mailbox::Mailboxes;

/// The label of tournament games in the metrics.
const TOURNAMENT: croupier_live::metrics::GameSource =
    croupier_live::metrics::GameSource::Tournament;

/// How often a game waiting for a busy hosted bot looks whether its
/// tournament was cancelled.
const CANCEL_CHECK: Duration = Duration::from_secs(1);

/// What a table's task needs to play games.
pub(super) struct Handle {
    pub(super) store: Arc<dyn Store>,
    pub(super) mailboxes: Arc<Mailboxes>,
    pub(super) http: Arc<HttpClient>,
    pub(super) capacity: Arc<Capacity>,
    pub(super) slots: Arc<Semaphore>,
    pub(super) hosted: Option<Arc<Hosted>>,
}

/// The version frozen for hosted entry `e` at its tournament's start.
pub(super) async fn frozen_version(
    store: &Arc<dyn Store>,
    e: &EntryRow,
) -> Result<BotVersion, TournamentError> {
    let id = e
        .version_id
        .ok_or_else(|| TournamentError::NoFrozenVersion(e.name.clone()))?;
    store
        .bot_versions(e.bot)
        .await?
        .into_iter()
        .find(|v| v.id == id)
        .ok_or_else(|| TournamentError::VersionGone(e.name.clone()))
}

impl Handle {
    /// Whether tournament `id` is still running (not cancelled).
    pub(super) async fn still_running(&self, id: TournamentId) -> bool {
        match self.store.tournaments().tournament(id).await {
            Ok(Some(t)) => t.status == "running",
            Ok(None) => false,
            // A store hiccup: let the game try (it fails there if it must).
            Err(_) => true,
        }
    }

    /// Seats the hosted entries of a game as their frozen versions. A hosted
    /// bot plays one game at a time: while one is in another game (a
    /// person's challenge), this waits until a hosted bot is let go rather
    /// than faulting it; if one of several is busy, the others are let go
    /// meanwhile. Waiting ends if tournament `id` is cancelled.
    async fn link_hosted(
        &self,
        id: TournamentId,
        seats: &[&EntryRow],
    ) -> Result<HashMap<BotId, (Link, DialectKind)>, TournamentError> {
        let hosted: Vec<&EntryRow> = seats
            .iter()
            .copied()
            .filter(|e| e.kind == BotKind::Hosted)
            .collect();
        let mut links = HashMap::new();
        if hosted.is_empty() {
            return Ok(links);
        }
        let h = self.hosted.as_ref().ok_or(TournamentError::NoHosted)?;
        let mut versions = Vec::with_capacity(hosted.len());
        for e in &hosted {
            versions.push(frozen_version(&self.store, e).await?);
        }
        loop {
            // Listening before trying: a release between the try and the
            // wait is not missed.
            let freed = h.freed();
            tokio::pin!(freed);
            freed.as_mut().enable();
            let mut busy = None;
            for (e, v) in hosted.iter().zip(&versions) {
                match h.link_version(e.bot, &e.name, v) {
                    Ok(link) => {
                        links.insert(e.bot, link);
                    }
                    Err(err) => {
                        for bot in links.keys() {
                            h.release(*bot);
                        }
                        links.clear();
                        match err {
                            LinkError::Busy(_) => busy = Some(err),
                            LinkError::NoActiveVersion(_)
                            | LinkError::Broken(_)
                            | LinkError::Dialect { .. } => return Err(err.into()),
                        }
                        break;
                    }
                }
            }
            let Some(why) = busy else {
                return Ok(links);
            };
            tracing::debug!("tournament game waits: {why}");
            // A release wakes this at once; the timeout only looks again
            // whether the tournament was cancelled meanwhile.
            let _ = tokio::time::timeout(CANCEL_CHECK, freed).await;
            if !self.still_running(id).await {
                return Err(TournamentError::Cancelled);
            }
        }
    }

    /// Plays planned game `g`: takes a slot of the tournaments' share and
    /// its remote bots, deals and stores the game, plays it, stores it.
    pub(super) async fn play_one(
        &self,
        t: &TournamentRow,
        entries: &[EntryRow],
        g: &TournamentGameRow,
    ) -> Result<(), TournamentError> {
        let seats: Vec<&EntryRow> = g
            .bots()
            .iter()
            .map(|b| entries.iter().find(|e| e.bot == *b))
            .collect::<Option<Vec<_>>>()
            .ok_or(TournamentError::NotEntered)?;
        let _slot = Arc::clone(&self.slots).acquire_owned().await?;
        let remote: Vec<BotId> = seats
            .iter()
            .filter(|e| e.kind != BotKind::House)
            .map(|e| e.bot)
            .collect();
        let _claim = self.capacity.claim(&remote).await;
        let hosted = self.link_hosted(t.id, &seats).await?;
        let ts = self.store.tournaments();
        let started = croupier_arena::record::now_rfc3339();
        let bots = g.bots();
        let id = match ts
            .start_tournament_game(g.id, &t.game, &bots, g.seed, &started)
            .await
        {
            Ok(id) => id,
            Err(e) => {
                if let Some(h) = &self.hosted {
                    for bot in hosted.keys() {
                        h.release(*bot);
                    }
                }
                return Err(TournamentError::Deal(e));
            }
        };
        let reach = play::Reach {
            http: &self.http,
            mailboxes: &self.mailboxes,
            hosted: &hosted,
        };
        // Counted as aborted unless it is stored as finished below.
        let counted = croupier_live::metrics::Counted::start(&t.game, TOURNAMENT);
        let played = play::play(t, &seats, g.seed as u64, &reach).await;
        // The hosted bots' connectors go before the bots are let go, so
        // that their sandboxes are on their way back to be kept for their
        // next game (which may start as soon as they are free).
        let any_hosted = !hosted.is_empty();
        drop(hosted);
        // Hosted entries: the version that played and its stderr, as the
        // ladder keeps them (shown to the bot's owner).
        if let (Some(h), true) = (&self.hosted, any_hosted) {
            h.match_over(id, &bots).await;
        }
        match played {
            Ok(record) => {
                let end = GameEnd::from_record(&record, &bots)
                    .map_err(|source| TournamentError::Record { id, source })?;
                self.store
                    .finish_game(id, &end)
                    .await
                    .map_err(|source| TournamentError::Finish { id, source })?;
                counted.finished(&record);
                let faults: Vec<i64> = play::faults(&record).into_iter().map(|f| f.0).collect();
                ts.finish_tournament_game(g.id, &play::ranks(&record), &faults)
                    .await?;
                self.capacity.count_game();
                Ok(())
            }
            Err(e) => {
                drop(counted); // aborted
                let now = croupier_arena::record::now_rfc3339();
                if let Err(stored) = self.store.abort_game(id, &e.to_string(), &now).await {
                    tracing::warn!("tournament {}: cannot abort game {id}: {stored}", t.name);
                }
                if let Err(stored) = ts.reset_tournament_game(g.id).await {
                    tracing::warn!(
                        "tournament {}: cannot deal planned game {} again: {stored}",
                        t.name,
                        g.id
                    );
                }
                Err(e)
            }
        }
    }
}
