//! A tournament's start: its entries (every eligible bot, for one open to
//! all) frozen with how each is reached (a hosted bot: its newest active
//! version); a banned bot, or one that cannot be reached, entered but
//! withdrawn before round 1; its rounds set; and the tournament marked
//! running, or cancelled when fewer than two bots can play.

use super::*;

impl Tournaments {
    /// Freezes the entries and marks the tournament running.
    pub(super) async fn start(&self, t: &TournamentRow) -> Result<(), TournamentError> {
        let game: GameKind = t.game.parse()?;
        let format = plan::Format::of(t)?;
        let ts = self.store.tournaments();
        let named = ts.tournament_entries(t.id).await?;
        let now = unix_now();
        let bots: Vec<BotId> = if t.all_bots {
            let mut ids: Vec<BotId> = self
                .store
                .remote_bots()
                .await?
                .into_iter()
                .filter(|b| b.game == t.game && b.enabled && b.banned.is_none())
                .filter(|b| b.paused_until.is_none_or(|p| p <= now))
                .map(|b| b.id)
                .collect();
            for (name, _) in self.house.get(&game).map(Vec::as_slice).unwrap_or_default() {
                if let Ok(Some(row)) = self.store.bot_by_name(name).await {
                    ids.push(row.id);
                }
            }
            ids
        } else {
            named.iter().map(|e| e.bot).collect()
        };
        let no_links = HashMap::new();
        let reach = play::Reach {
            http: &self.http,
            mailboxes: &self.mailboxes,
            hosted: &no_links,
        };
        let mut frozen = Vec::new();
        for bot in bots {
            let Some(e) = self.freeze(game, t.id, bot, frozen.len() as i64).await? else {
                continue;
            };
            let mut e = e;
            if let Some(why) = self.store.bot_info(bot).await?.and_then(|b| b.banned) {
                // Banned (issue 49): entered, but plays no game.
                e.withdrawn = Some(format!("banned: {why}"));
                e.withdrawn_round = Some(0);
                frozen.push(e);
                continue;
            }
            let checked = match e.kind {
                BotKind::Hosted => self.check_hosted(&e).await,
                BotKind::House | BotKind::Rest | BotKind::Push | BotKind::Pull => {
                    play::check_entry(game, &e, &reach).map_err(TournamentError::from)
                }
            };
            if let Err(why) = checked {
                e.withdrawn = Some(format!("cannot be reached at the start: {why}"));
                e.withdrawn_round = Some(0);
            }
            frozen.push(e);
        }
        let still_in = frozen.iter().filter(|e| e.withdrawn.is_none()).count();
        let rounds = match format {
            plan::Format::Swiss => t.rounds,
            plan::Format::RoundRobin => plan::round_robin_rounds(frozen.len()),
        };
        let at = croupier_arena::record::now_rfc3339();
        if !ts.start_tournament(t.id, &frozen, rounds, &at).await? {
            // Cancelled while its entries were checked: the loop finds it
            // over.
            return Ok(());
        }
        tracing::info!(
            "tournament {} started: {} entries frozen, {rounds} rounds",
            t.name,
            frozen.len()
        );
        if still_in < 2 {
            ts.end_tournament(
                t.id,
                "cancelled",
                &at,
                Some("fewer than two bots could play at the start"),
            )
            .await?;
        }
        Ok(())
    }

    /// Checks a hosted entry's frozen version: hosted bots are on, and the
    /// version can be started.
    async fn check_hosted(&self, e: &EntryRow) -> Result<(), TournamentError> {
        let Some(h) = self.hosted.get() else {
            return Err(TournamentError::NoHosted);
        };
        let v = table::frozen_version(&self.store, e).await?;
        Ok(h.check_version(&v)?)
    }

    /// An entry as it is now: how it is reached (a hosted bot: its newest
    /// active version, which all its games of the tournament play).
    async fn freeze(
        &self,
        game: GameKind,
        tournament: TournamentId,
        bot: BotId,
        seq: i64,
    ) -> Result<Option<EntryRow>, TournamentError> {
        let Some(info) = self.store.bot_info(bot).await? else {
            return Ok(None);
        };
        let strategy = match info.kind {
            BotKind::House => self.house_strategy(game, &info.name).map(str::to_string),
            BotKind::Rest | BotKind::Push | BotKind::Pull | BotKind::Hosted => None,
        };
        let version = match info.kind {
            BotKind::Hosted => self.store.active_version(bot).await?,
            BotKind::House | BotKind::Rest | BotKind::Push | BotKind::Pull => None,
        };
        let dialect = match &version {
            Some(v) => Some(v.dialect.clone()),
            None => info.dialect,
        };
        Ok(Some(EntryRow {
            tournament_id: tournament,
            bot,
            seq,
            name: info.name,
            kind: info.kind,
            endpoint: info.endpoint,
            dialect,
            auth_user: info.auth_user,
            auth_password: info.auth_password,
            strategy,
            frozen: true,
            withdrawn: None,
            withdrawn_round: None,
            version_id: version.as_ref().map(|v| v.id),
            version: version.as_ref().map(|v| v.version),
        }))
    }
}
