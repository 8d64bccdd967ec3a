//! One ladder match: its bots claimed and dealt, played to its end with
//! `play_live`, stored, and each remote bot's health scored; the table's
//! bots released however it ends.

use std::time::Duration;

use croupier_arena::live::{play_live, LiveConfig};
use croupier_bots::Builtins;
use croupier_live::lease::{self, TermEnd};
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{GameKind, Record};
use croupier_store::{BotId, GameEnd, GameId};
use rand::seq::SliceRandom;
use tokio::time::Instant;

use super::config::GameLadder;
use super::seats::{self, Entrant};
use super::{health, GameError, Ladder};

/// The label of the ladder's games in the metrics.
const LADDER: croupier_live::metrics::GameSource = croupier_live::metrics::GameSource::Ladder;
use croupier_live::metrics::Counted;

impl Ladder {
    /// Plays one match, stores it, and scores the bots' health.
    pub(super) async fn play(&self, g: GameLadder, mut table: Vec<Entrant>) {
        // The bots are released however the match ends, a panic included.
        let mut release = Release(self, g.game, table.clone(), false);
        table.shuffle(&mut rand::rng());
        let ids: Vec<BotId> = table.iter().map(Entrant::id).collect();
        let started = croupier_arena::record::now_rfc3339();
        // Issue 13: the bots that may sit at one table only are claimed in
        // the database with the deal (house bots only at house-only tables).
        let house_only = table.iter().all(Entrant::is_house);
        let claim: Vec<BotId> = table
            .iter()
            .filter(|e| house_only || !e.is_house())
            .map(Entrant::id)
            .collect();
        let rest = if house_only {
            self.config.house_pause
        } else {
            self.config.rest
        };
        // Issue 13: the match is abandoned if this process's registration
        // ends meanwhile (reaped as lost, or stopping).
        let mut term = self.member.get().map(|m| m.term());
        let (seed, stored) = match (croupier_live::visibility::fresh_seed(), self.member.get()) {
            (Ok(seed), Some(m)) => (
                seed,
                m.start_game(g.game.name(), &ids, &claim, seed as i64, &started)
                    .await
                    .map_err(GameError::Deal),
            ),
            (Ok(_), None) => (0, Err(GameError::NotJoined)),
            (Err(e), _) => (0, Err(GameError::from(e))),
        };
        let result = match stored {
            Err(e) => Err(e),
            Ok(None) => {
                tracing::debug!("ladder {}: a bot was claimed elsewhere first", g.game);
                Ok(())
            }
            Ok(Some(id)) => {
                release.3 = true;
                // Counted as aborted if the match is abandoned (this future
                // dropped) or fails before it is stored.
                let counted = Counted::start(g.game.name(), LADDER);
                let played =
                    self.play_dealt(&g, id, &table, &ids, &claim, seed, &started, rest, counted);
                let ended = async {
                    match term.as_mut() {
                        Some(t) => t.ended().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    done = played => done,
                    end = ended => {
                        self.abandon(&g, id, end, &claim, rest).await;
                        Ok(())
                    }
                }
            }
        };
        if let Err(e) = result {
            tracing::warn!("ladder {}: {e}", g.game);
        }
    }

    /// A match dealt in a term of the registration that ended: its bots
    /// are not this process's any more. Nothing of it is stored; a lost
    /// term's game was closed by the reaper (closing it again here changes
    /// nothing then), a stopping process's games are closed as it leaves.
    async fn abandon(
        &self,
        g: &GameLadder,
        id: GameId,
        end: TermEnd,
        claim: &[BotId],
        rest: Duration,
    ) {
        croupier_live::live_games::closed(
            self.live.get(),
            id,
            &Err::<Record, _>(GameError::Abandoned(end)),
        );
        match end {
            TermEnd::Lost => {
                tracing::warn!(
                    "ladder {}: game {id} abandoned: this process was taken for lost",
                    g.game
                );
                let now = croupier_arena::record::now_rfc3339();
                let why = format!("{}: this process was taken for lost", lease::LOST);
                if let Err(e) = self.store.abort_game(id, &why, &now).await {
                    tracing::warn!("ladder {}: cannot abort game {id}: {e}", g.game);
                }
                // The reaper freed the bots: this releases nothing, unless
                // the game was dealt just after this process registered
                // again (its claim is then this process's, and must end).
                // The bots are busy here until this match is gone, so no
                // newer claim of this process on them exists.
                if let Some(m) = self.member.get() {
                    m.release(claim, rest).await;
                }
            }
            TermEnd::Stopped => {
                tracing::info!("ladder {}: game {id} stopped with the process", g.game);
            }
        }
    }

    /// Plays a dealt match to its end, stores it and releases its bots.
    #[allow(clippy::too_many_arguments)]
    async fn play_dealt(
        &self,
        g: &GameLadder,
        id: GameId,
        table: &[Entrant],
        ids: &[BotId],
        claim: &[BotId],
        seed: u64,
        started: &str,
        rest: Duration,
        counted: Counted,
    ) -> Result<(), GameError> {
        let live = LiveConfig {
            move_time: g.move_time,
            budget: g.budget,
            ..LiveConfig::default()
        };
        // wf (issue 16): spectators watch the match.
        let names: Vec<String> = table.iter().map(|e| e.name().to_string()).collect();
        let watch = self
            .live
            .get()
            .map(|l| l.open(id, g.game.name(), names, started, None));
        let played = croupier_live::live_games::watched(watch, async {
            match g.game {
                GameKind::Goofspiel => self.play_game::<Goofspiel>(g, table, seed, &live).await,
                GameKind::LoveLetter => self.play_game::<LoveLetter>(g, table, seed, &live).await,
                GameKind::SkullWhist => self.play_game::<SkullWhist>(g, table, seed, &live).await,
            }
        })
        .await;
        // Issue 12 hook: hosted bots' versions and stderr.
        if let Some(h) = self.hosted.get() {
            h.match_over(id, ids).await;
        }
        let done = match played {
            Ok(record) => self
                .finish(id, ids, table, &record, counted)
                .await
                .map(|()| record),
            Err(e) => {
                drop(counted); // aborted
                let now = croupier_arena::record::now_rfc3339();
                if let Err(stored) = self.store.abort_game(id, &e.to_string(), &now).await {
                    tracing::warn!("ladder {}: cannot abort game {id}: {stored}", g.game);
                }
                Err(e)
            }
        };
        croupier_live::live_games::closed(self.live.get(), id, &done); // wf (issue 16)
        if let Some(m) = self.member.get() {
            m.release(claim, rest).await;
        }
        done.map(|_| ())
    }

    async fn play_game<G: Builtins>(
        &self,
        g: &GameLadder,
        table: &[Entrant],
        seed: u64,
        live: &LiveConfig,
    ) -> Result<Record, GameError> {
        let variant = parse_variant::<G>(g.variant.as_deref())?;
        let mut seats =
            seats::live_seats::<G>(table, &self.http, &self.mailboxes, self.hosted.get())?;
        Ok(play_live::<G>(&variant, seed, &mut seats, live).await?)
    }

    async fn finish(
        &self,
        id: i64,
        ids: &[BotId],
        table: &[Entrant],
        record: &Record,
        counted: Counted,
    ) -> Result<(), GameError> {
        let end =
            GameEnd::from_record(record, ids).map_err(|source| GameError::Record { id, source })?;
        self.store
            .finish_game(id, &end)
            .await
            .map_err(|source| GameError::Store { id, source })?;
        counted.finished(record);
        tracing::info!(
            "ladder game {id} ({}): {}",
            record.game,
            table
                .iter()
                .zip(&record.outcome.scores)
                .map(|(e, s)| format!("{} {s}", e.name()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for (seat, e) in table.iter().enumerate() {
            let Entrant::Remote(b) = e else { continue };
            let fault = health::last_fault(record, seat);
            health::record(&*self.store, &self.config, b, fault).await;
        }
        Ok(())
    }
}

/// Releases a table's bots when dropped: a match played (dealt: `.3`)
/// counts, one never dealt is forgotten.
struct Release<'a>(&'a Ladder, GameKind, Vec<Entrant>, bool);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        if self.3 {
            s.end(self.1, &self.2, Instant::now());
        } else {
            s.cancel(self.1, &self.2);
        }
    }
}
