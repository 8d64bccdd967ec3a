//! The admin SQL, once for both backends (`$n` placeholders).

/// Implements [`super::AdminStore`] for `$store`, reading through
/// `self.$read`, writing through `self.$write`, and running `$lock` (when
/// not empty) at the start of a season's switch.
macro_rules! admin_queries {
    ($store:ty, $db:ty, $read:ident, $write:ident, $lock:expr) => {
        const STANDINGS: &str = "SELECT s.bot, b.name, b.kind, s.game, s.mu, s.sigma, s.conservative, s.games,
            s.wins, s.losses, s.ties, s.forfeits, s.last_played FROM season_stats s JOIN bots b ON b.id = s.bot";
        const PAIRS: &str = "SELECT p.bot, a.name AS bot_name, p.opponent, o.name AS opponent_name, p.game,
            p.games, p.wins, p.losses, p.ties FROM season_pairs p JOIN bots a ON a.id = p.bot
            JOIN bots o ON o.id = p.opponent";

        /// Writes one audit row in `tx`.
        async fn log(
            tx: &mut sqlx::Transaction<'_, $db>,
            act: &$crate::admin::Act<'_>,
            action: &str,
            target: &str,
            details: Option<&str>,
        ) -> Result<(), sqlx::Error> {
            sqlx::query(
                "INSERT INTO admin_audit (at, actor, action, target, reason, details)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(act.at)
            .bind(act.actor)
            .bind(action)
            .bind(target)
            .bind(act.reason)
            .bind(details)
            .execute(&mut **tx)
            .await?;
            Ok(())
        }

        fn table(target: $crate::admin::Target<'_>) -> &'static str {
            match target {
                $crate::admin::Target::Bot(_) => "bots",
                $crate::admin::Target::Owner(_) => "owners",
            }
        }

        #[async_trait::async_trait]
        impl $crate::admin::AdminStore for $store {
            async fn ban(
                &self,
                target: $crate::admin::Target<'_>,
                act: &$crate::admin::Act<'_>,
            ) -> Result<$crate::admin::BanChange, $crate::StoreError> {
                use $crate::admin::BanChange;
                let table = table(target);
                let mut tx = self.$write.begin().await?;
                let now: Option<Option<String>> =
                    sqlx::query_scalar(&format!("SELECT ban_reason FROM {table} WHERE name = $1"))
                        .bind(target.name())
                        .fetch_optional(&mut *tx)
                        .await?;
                match now {
                    None => return Ok(BanChange::NotFound),
                    Some(Some(reason)) => return Ok(BanChange::Unchanged(Some(reason))),
                    Some(None) => {}
                }
                sqlx::query(&format!(
                    "UPDATE {table} SET ban_reason = $1, banned_by = $2, banned_at = $3 WHERE name = $4"
                ))
                .bind(act.reason.unwrap_or_default())
                .bind(act.actor)
                .bind(act.at)
                .bind(target.name())
                .execute(&mut *tx)
                .await?;
                let action = format!("ban-{}", target.kind());
                log(&mut tx, act, &action, target.name(), None).await?;
                tx.commit().await?;
                Ok(BanChange::Done)
            }

            async fn unban(
                &self,
                target: $crate::admin::Target<'_>,
                act: &$crate::admin::Act<'_>,
            ) -> Result<$crate::admin::BanChange, $crate::StoreError> {
                use $crate::admin::BanChange;
                let table = table(target);
                let mut tx = self.$write.begin().await?;
                let now: Option<Option<String>> =
                    sqlx::query_scalar(&format!("SELECT ban_reason FROM {table} WHERE name = $1"))
                        .bind(target.name())
                        .fetch_optional(&mut *tx)
                        .await?;
                let was = match now {
                    None => return Ok(BanChange::NotFound),
                    Some(None) => return Ok(BanChange::Unchanged(None)),
                    Some(Some(reason)) => reason,
                };
                sqlx::query(&format!(
                    "UPDATE {table} SET ban_reason = NULL, banned_by = NULL, banned_at = NULL WHERE name = $1"
                ))
                .bind(target.name())
                .execute(&mut *tx)
                .await?;
                let action = format!("unban-{}", target.kind());
                let details = format!("it was banned for: {was}");
                log(&mut tx, act, &action, target.name(), Some(&details)).await?;
                tx.commit().await?;
                Ok(BanChange::Done)
            }

            async fn bans(&self) -> Result<Vec<$crate::admin::BanRow>, $crate::StoreError> {
                Ok(sqlx::query_as(
                    "SELECT kind, name, reason, banned_by, banned_at FROM (
                       SELECT 'bot' AS kind, name, ban_reason AS reason, COALESCE(banned_by, '') AS banned_by,
                              COALESCE(banned_at, '') AS banned_at FROM bots WHERE ban_reason IS NOT NULL
                       UNION ALL
                       SELECT 'owner' AS kind, name, ban_reason AS reason, COALESCE(banned_by, '') AS banned_by,
                              COALESCE(banned_at, '') AS banned_at FROM owners WHERE ban_reason IS NOT NULL
                     ) AS b ORDER BY kind, name",
                )
                .fetch_all(&self.$read)
                .await?)
            }

            async fn banned_bots(&self) -> Result<Vec<i64>, $crate::StoreError> {
                Ok(sqlx::query_scalar(
                    "SELECT b.id FROM bots b LEFT JOIN owners o ON o.id = b.owner
                     WHERE b.ban_reason IS NOT NULL OR o.ban_reason IS NOT NULL ORDER BY b.id",
                )
                .fetch_all(&self.$read)
                .await?)
            }

            async fn bot_ban(
                &self,
                bot: i64,
            ) -> Result<Option<$crate::admin::BotBan>, $crate::StoreError> {
                type Row = (
                    Option<String>,
                    Option<String>,
                    Option<String>,
                    Option<String>,
                    Option<String>,
                    Option<String>,
                    Option<String>,
                );
                let row: Option<Row> = sqlx::query_as(
                    "SELECT b.ban_reason, b.banned_by, b.banned_at, o.name, o.ban_reason, o.banned_by, o.banned_at
                     FROM bots b LEFT JOIN owners o ON o.id = b.owner WHERE b.id = $1",
                )
                .bind(bot)
                .fetch_optional(&self.$read)
                .await?;
                let Some((reason, by, at, owner, o_reason, o_by, o_at)) = row else {
                    return Ok(None);
                };
                Ok(match (reason, o_reason) {
                    (Some(reason), _) => Some($crate::admin::BotBan {
                        reason,
                        banned_by: by.unwrap_or_default(),
                        banned_at: at.unwrap_or_default(),
                        owner: None,
                    }),
                    (None, Some(reason)) => Some($crate::admin::BotBan {
                        reason,
                        banned_by: o_by.unwrap_or_default(),
                        banned_at: o_at.unwrap_or_default(),
                        owner,
                    }),
                    (None, None) => None,
                })
            }

            async fn owner_ban(&self, owner: i64) -> Result<Option<String>, $crate::StoreError> {
                let r: Option<Option<String>> =
                    sqlx::query_scalar("SELECT ban_reason FROM owners WHERE id = $1")
                        .bind(owner)
                        .fetch_optional(&self.$read)
                        .await?;
                Ok(r.flatten())
            }

            async fn reset_rating(
                &self,
                name: &str,
                game: Option<&str>,
                act: &$crate::admin::Act<'_>,
            ) -> Result<Option<Vec<String>>, $crate::StoreError> {
                let (mu, sigma) = $crate::ratings::START;
                let mut tx = self.$write.begin().await?;
                let bot: Option<i64> = sqlx::query_scalar("SELECT id FROM bots WHERE name = $1")
                    .bind(name)
                    .fetch_optional(&mut *tx)
                    .await?;
                let Some(bot) = bot else { return Ok(None) };
                let rated: Vec<(String, f64, f64)> = sqlx::query_as(
                    "SELECT game, mu, sigma FROM bot_stats
                     WHERE bot = $1 AND (CAST($2 AS TEXT) IS NULL OR game = $2) ORDER BY game",
                )
                .bind(bot)
                .bind(game)
                .fetch_all(&mut *tx)
                .await?;
                for (g, was_mu, was_sigma) in &rated {
                    sqlx::query(
                        "UPDATE bot_stats SET mu = $1, sigma = $2, conservative = $3 WHERE bot = $4 AND game = $5",
                    )
                    .bind(mu)
                    .bind(sigma)
                    .bind($crate::ratings::conservative(mu, sigma))
                    .bind(bot)
                    .bind(g)
                    .execute(&mut *tx)
                    .await?;
                    let details = format!(
                        "{g}: {was_mu:.2} ± {was_sigma:.2} → {mu:.2} ± {sigma:.2}"
                    );
                    log(&mut tx, act, "reset-rating", name, Some(&details)).await?;
                }
                tx.commit().await?;
                Ok(Some(rated.into_iter().map(|r| r.0).collect()))
            }

            async fn new_season(
                &self,
                games: &[&str],
                act: &$crate::admin::Act<'_>,
            ) -> Result<Vec<$crate::admin::SeasonRow>, $crate::StoreError> {
                let mut tx = self.$write.begin().await?;
                let lock: &str = $lock;
                if !lock.is_empty() {
                    sqlx::query(lock).execute(&mut *tx).await?;
                }
                let mut started = Vec::with_capacity(games.len());
                for game in games {
                    let current: i64 = sqlx::query_scalar(
                        "SELECT COALESCE(MAX(season), 1) FROM seasons WHERE game = $1",
                    )
                    .bind(*game)
                    .fetch_one(&mut *tx)
                    .await?;
                    sqlx::query(
                        "INSERT INTO seasons (game, season, started_at, ended_at) VALUES ($1, $2, NULL, $3)
                         ON CONFLICT (game, season) DO UPDATE SET ended_at = excluded.ended_at",
                    )
                    .bind(*game)
                    .bind(current)
                    .bind(act.at)
                    .execute(&mut *tx)
                    .await?;
                    let rated = sqlx::query(
                        "INSERT INTO season_stats (season, bot, game, mu, sigma, conservative, games, wins, losses, ties, forfeits, last_game, last_played)
                         SELECT $1, bot, game, mu, sigma, conservative, games, wins, losses, ties, forfeits, last_game, last_played
                         FROM bot_stats WHERE game = $2",
                    )
                    .bind(current)
                    .bind(*game)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                    sqlx::query(
                        "INSERT INTO season_pairs (season, bot, opponent, game, games, wins, losses, ties)
                         SELECT $1, bot, opponent, game, games, wins, losses, ties FROM pair_stats WHERE game = $2",
                    )
                    .bind(current)
                    .bind(*game)
                    .execute(&mut *tx)
                    .await?;
                    sqlx::query("DELETE FROM bot_stats WHERE game = $1")
                        .bind(*game)
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query("DELETE FROM pair_stats WHERE game = $1")
                        .bind(*game)
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query(
                        "INSERT INTO seasons (game, season, started_at, ended_at) VALUES ($1, $2, $3, NULL)",
                    )
                    .bind(*game)
                    .bind(current + 1)
                    .bind(act.at)
                    .execute(&mut *tx)
                    .await?;
                    let details = format!(
                        "season {current} ended with {rated} rated bots; season {} started",
                        current + 1
                    );
                    log(&mut tx, act, "new-season", game, Some(&details)).await?;
                    started.push($crate::admin::SeasonRow {
                        game: game.to_string(),
                        season: current + 1,
                        started_at: Some(act.at.to_string()),
                        ended_at: None,
                    });
                }
                tx.commit().await?;
                Ok(started)
            }

            async fn seasons(
                &self,
                game: &str,
            ) -> Result<Vec<$crate::admin::SeasonRow>, $crate::StoreError> {
                let rows: Vec<$crate::admin::SeasonRow> = sqlx::query_as(
                    "SELECT game, season, started_at, ended_at FROM seasons WHERE game = $1 ORDER BY season",
                )
                .bind(game)
                .fetch_all(&self.$read)
                .await?;
                if rows.is_empty() {
                    return Ok(vec![$crate::admin::SeasonRow {
                        game: game.to_string(),
                        season: 1,
                        started_at: None,
                        ended_at: None,
                    }]);
                }
                Ok(rows)
            }

            async fn current_season(&self, game: &str) -> Result<i64, $crate::StoreError> {
                Ok(sqlx::query_scalar(
                    "SELECT COALESCE(MAX(season), 1) FROM seasons WHERE game = $1",
                )
                .bind(game)
                .fetch_one(&self.$read)
                .await?)
            }

            async fn season_leaderboard(
                &self,
                game: &str,
                season: i64,
            ) -> Result<Vec<$crate::web::BotStats>, $crate::StoreError> {
                Ok(sqlx::query_as(&format!(
                    "{STANDINGS} WHERE s.game = $1 AND s.season = $2 ORDER BY s.conservative DESC, b.name"
                ))
                .bind(game)
                .bind(season)
                .fetch_all(&self.$read)
                .await?)
            }

            async fn season_pairs(
                &self,
                game: &str,
                season: i64,
            ) -> Result<Vec<$crate::web::PairStats>, $crate::StoreError> {
                Ok(sqlx::query_as(&format!(
                    "{PAIRS} WHERE p.game = $1 AND p.season = $2 ORDER BY a.name, o.name"
                ))
                .bind(game)
                .bind(season)
                .fetch_all(&self.$read)
                .await?)
            }

            async fn audit(
                &self,
                before: Option<i64>,
                limit: i64,
            ) -> Result<Vec<$crate::admin::AuditRow>, $crate::StoreError> {
                Ok(sqlx::query_as(
                    "SELECT id, at, actor, action, target, reason, details FROM admin_audit
                     WHERE (CAST($1 AS BIGINT) IS NULL OR id < $1) ORDER BY id DESC LIMIT $2",
                )
                .bind(before)
                .bind(limit)
                .fetch_all(&self.$read)
                .await?)
            }
        }
    };
}
