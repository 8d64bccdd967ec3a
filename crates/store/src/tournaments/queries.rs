//! The tournament SQL, once for both backends: `$n` placeholders (sqlx binds
//! them by number on SQLite too), flags bound as `bool`, ids as `i64`.

/// Implements [`super::TournamentStore`] for `$store`, reading through
/// `self.$read` and writing through `self.$write` (pools), with `$hints`
/// (a [`super::ListHints`]) naming the index each tournament games list
/// walks.
macro_rules! tournament_queries {
    ($store:ty, $db:ty, $read:ident, $write:ident, $hints:expr) => {
        const HINTS: $crate::tournaments::ListHints = $hints;
        const TOURNAMENT: &str = "id, name, game, variant, format, rounds, deals, duplicate, seats, move_ms, budget_ms, starts_at, seed, status, current_round, all_bots, created_by, created_at, started_at, finished_at, reason, winner";
        const ENTRY: &str = "tournament_id, bot, seq, name, kind, endpoint, dialect, auth_user, auth_password, strategy, frozen, withdrawn, withdrawn_round, version_id, version";
        marked_queries!($store, $db, $read);
        const GAME: &str =
            "id, tournament_id, round, table_no, game_no, seats, seed, status, game_id, ranks, faults, scores";

        async fn insert_entry(
            tx: &mut sqlx::Transaction<'_, $db>,
            id: i64,
            e: &$crate::tournaments::EntryRow,
        ) -> Result<(), sqlx::Error> {
            sqlx::query(
                "INSERT INTO tournament_entries (tournament_id, bot, seq, name, kind, endpoint, dialect, auth_user, auth_password, strategy, frozen, withdrawn, withdrawn_round, version_id, version)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
            )
            .bind(id)
            .bind(e.bot)
            .bind(e.seq)
            .bind(&e.name)
            .bind(e.kind.name())
            .bind(&e.endpoint)
            .bind(&e.dialect)
            .bind(&e.auth_user)
            .bind(&e.auth_password)
            .bind(&e.strategy)
            .bind(e.frozen)
            .bind(&e.withdrawn)
            .bind(e.withdrawn_round)
            .bind(e.version_id)
            .bind(e.version)
            .execute(&mut **tx)
            .await?;
            Ok(())
        }

        impl $store {
            /// Ends tournament `id` if it is scheduled or running, with its
            /// status, end time, reason and winner in one statement (so that
            /// whoever finds it finished finds its winner); its pending games
            /// become void. False if it was already over.
            async fn end_with(
                &self,
                id: i64,
                status: &str,
                at: &str,
                reason: Option<&str>,
                winner: Option<&str>,
            ) -> Result<bool, $crate::StoreError> {
                let mut tx = self.$write.begin().await?;
                let r = sqlx::query(
                    "UPDATE tournaments SET status = $1, finished_at = $2, reason = $3, winner = $4
                     WHERE id = $5 AND status IN ('scheduled', 'running')",
                )
                .bind(status)
                .bind(at)
                .bind(reason)
                .bind(winner)
                .bind(id)
                .execute(&mut *tx)
                .await?;
                if r.rows_affected() == 0 {
                    return Ok(false);
                }
                sqlx::query("UPDATE tournament_games SET status = 'void' WHERE tournament_id = $1 AND status = 'pending'")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(true)
            }
        }

        #[async_trait::async_trait]
        impl $crate::tournaments::TournamentStore for $store {
            async fn set_owner_admin(&self, name: &str, admin: bool) -> Result<bool, $crate::StoreError> {
                let r = sqlx::query("UPDATE owners SET admin = $1 WHERE name = $2")
                    .bind(admin)
                    .bind(name)
                    .execute(&self.$write)
                    .await?;
                Ok(r.rows_affected() > 0)
            }

            async fn owner_is_admin(&self, owner: i64) -> Result<bool, $crate::StoreError> {
                let admin: Option<bool> = sqlx::query_scalar("SELECT admin FROM owners WHERE id = $1")
                    .bind(owner)
                    .fetch_optional(&self.$read)
                    .await?;
                Ok(admin.unwrap_or(false))
            }

            async fn create_tournament(
                &self,
                t: &$crate::tournaments::NewTournament,
            ) -> Result<i64, $crate::StoreError> {
                let mut tx = self.$write.begin().await?;
                let r: Result<i64, sqlx::Error> = sqlx::query_scalar(
                    "INSERT INTO tournaments (name, game, variant, format, rounds, deals, duplicate, seats, move_ms, budget_ms, starts_at, seed, status, all_bots, created_by, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'scheduled', $13, $14, $15) RETURNING id",
                )
                .bind(&t.name)
                .bind(&t.game)
                .bind(&t.variant)
                .bind(&t.format)
                .bind(t.rounds)
                .bind(t.deals)
                .bind(t.duplicate)
                .bind(t.seats)
                .bind(t.move_ms)
                .bind(t.budget_ms)
                .bind(t.starts_at)
                .bind(t.seed)
                .bind(t.all_bots)
                .bind(t.created_by)
                .bind($crate::rows::now())
                .fetch_one(&mut *tx)
                .await;
                let id = match r {
                    Ok(id) => id,
                    Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                        return Err($crate::StoreError::NameTaken)
                    }
                    Err(e) => return Err(e.into()),
                };
                for e in &t.entries {
                    insert_entry(&mut tx, id, e).await?;
                }
                tx.commit().await?;
                Ok(id)
            }

            async fn tournament_list(&self) -> Result<Vec<$crate::tournaments::TournamentRow>, $crate::StoreError> {
                let rows = sqlx::query_as(&format!("SELECT {TOURNAMENT} FROM tournaments ORDER BY id DESC"))
                    .fetch_all(&self.$read)
                    .await?;
                Ok(rows)
            }

            async fn tournament_count(&self) -> Result<i64, $crate::StoreError> {
                let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tournaments")
                    .fetch_one(&self.$read)
                    .await?;
                Ok(n)
            }

            async fn tournament_page(
                &self,
                offset: i64,
                limit: i64,
            ) -> Result<Vec<$crate::tournaments::TournamentRow>, $crate::StoreError> {
                let rows = sqlx::query_as(&format!(
                    "SELECT {TOURNAMENT} FROM tournaments ORDER BY id DESC LIMIT $1 OFFSET $2"
                ))
                .bind(limit.max(0))
                .bind(offset.max(0))
                .fetch_all(&self.$read)
                .await?;
                Ok(rows)
            }

            async fn open_tournaments(&self) -> Result<Vec<$crate::tournaments::TournamentRow>, $crate::StoreError> {
                // The partial index `tournaments_open` holds these rows alone.
                let rows = sqlx::query_as(&format!(
                    "SELECT {TOURNAMENT} FROM tournaments
                     WHERE status IN ('scheduled', 'running') ORDER BY id DESC"
                ))
                .fetch_all(&self.$read)
                .await?;
                Ok(rows)
            }

            async fn tournament_counts(&self) -> Result<Vec<(String, i64)>, $crate::StoreError> {
                let rows = sqlx::query_as(
                    "SELECT status, COUNT(*) FROM tournaments GROUP BY status ORDER BY status",
                )
                .fetch_all(&self.$read)
                .await?;
                Ok(rows)
            }

            async fn plan_counts(&self, id: i64) -> Result<$crate::tournaments::PlanCounts, $crate::StoreError> {
                let counts = sqlx::query_as(
                    "SELECT CAST(COALESCE(SUM(CASE WHEN status = 'done' THEN 1 ELSE 0 END), 0) AS BIGINT) AS done,
                            CAST(COALESCE(SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END), 0) AS BIGINT) AS running,
                            CAST(COALESCE(SUM(CASE WHEN status <> 'void' THEN 1 ELSE 0 END), 0) AS BIGINT) AS not_void,
                            CAST(COALESCE(MAX(round), 0) AS BIGINT) AS planned_rounds
                     FROM tournament_games WHERE tournament_id = $1",
                )
                .bind(id)
                .fetch_one(&self.$read)
                .await?;
                Ok(counts)
            }

            async fn tournament(&self, id: i64) -> Result<Option<$crate::tournaments::TournamentRow>, $crate::StoreError> {
                let row = sqlx::query_as(&format!("SELECT {TOURNAMENT} FROM tournaments WHERE id = $1"))
                    .bind(id)
                    .fetch_optional(&self.$read)
                    .await?;
                Ok(row)
            }

            async fn tournament_by_name(&self, name: &str) -> Result<Option<$crate::tournaments::TournamentRow>, $crate::StoreError> {
                let row = sqlx::query_as(&format!("SELECT {TOURNAMENT} FROM tournaments WHERE name = $1"))
                    .bind(name)
                    .fetch_optional(&self.$read)
                    .await?;
                Ok(row)
            }

            async fn tournament_entries(&self, id: i64) -> Result<Vec<$crate::tournaments::EntryRow>, $crate::StoreError> {
                let rows = sqlx::query_as(&format!(
                    "SELECT {ENTRY} FROM tournament_entries WHERE tournament_id = $1 ORDER BY seq, bot"
                ))
                .bind(id)
                .fetch_all(&self.$read)
                .await?;
                Ok(rows)
            }

            async fn start_tournament(
                &self,
                id: i64,
                entries: &[$crate::tournaments::EntryRow],
                rounds: i64,
                at: &str,
            ) -> Result<bool, $crate::StoreError> {
                let mut tx = self.$write.begin().await?;
                // Only a tournament still to start: a cancel that came first
                // wins (the row is held from here to the commit).
                let started = sqlx::query(
                    "UPDATE tournaments SET status = 'running', rounds = $1, started_at = $2
                     WHERE id = $3 AND status = 'scheduled'",
                )
                .bind(rounds)
                .bind(at)
                .bind(id)
                .execute(&mut *tx)
                .await?;
                if started.rows_affected() == 0 {
                    return Ok(false);
                }
                sqlx::query("DELETE FROM tournament_entries WHERE tournament_id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                for e in entries {
                    insert_entry(&mut tx, id, e).await?;
                }
                tx.commit().await?;
                Ok(true)
            }

            async fn plan_round(
                &self,
                id: i64,
                round: i64,
                games: &[$crate::tournaments::NewTournamentGame],
            ) -> Result<bool, $crate::StoreError> {
                let mut tx = self.$write.begin().await?;
                // The tournament's row first, and only while it runs: a
                // cancel that came first wins, and one that comes later
                // waits for this (and voids these games).
                let running = sqlx::query("UPDATE tournaments SET current_round = $1 WHERE id = $2 AND status = 'running'")
                    .bind(round)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                if running.rows_affected() == 0 {
                    return Ok(false);
                }
                for g in games {
                    sqlx::query(
                        "INSERT INTO tournament_games (tournament_id, round, table_no, game_no, seats, seed, status)
                         VALUES ($1, $2, $3, $4, $5, $6, 'pending')",
                    )
                    .bind(id)
                    .bind(round)
                    .bind(g.table_no)
                    .bind(g.game_no)
                    .bind($crate::tournaments::join(&g.seats))
                    .bind(g.seed)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok(true)
            }

            async fn tournament_games(&self, id: i64) -> Result<Vec<$crate::tournaments::TournamentGameRow>, $crate::StoreError> {
                use futures::TryStreamExt;
                let sql = format!(
                    "SELECT {GAME} FROM tournament_games WHERE tournament_id = $1 ORDER BY round, table_no, game_no"
                );
                let mut rows = sqlx::query_as(&sql).bind(id).fetch(&self.$read);
                let mut games = Vec::new();
                while let Some(game) = rows.try_next().await? {
                    games.push(game);
                    // A round-robin of 256 is 32,768 rows: read without a
                    // pause, they would hold the runtime's thread for tens
                    // of milliseconds (rows come in faster than they are
                    // decoded, so the stream never waits).
                    if games.len() % $crate::tournaments::ROWS_BETWEEN_YIELDS == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                Ok(games)
            }

            async fn start_tournament_game(
                &self,
                plan: i64,
                game: &str,
                bots: &[i64],
                seed: i64,
                started: &str,
            ) -> Result<i64, $crate::StoreError> {
                if bots.len() < 2 {
                    return Err($crate::StoreError::Db(sqlx::Error::Protocol(
                        "a game needs at least two bots".into(),
                    )));
                }
                let mut tx = self.$write.begin().await?;
                // Only a pending plan is dealt: one voided meanwhile (its
                // bot withdrawn, e.g. banned) is not.
                let tournament: Option<i64> = sqlx::query_scalar(
                    "SELECT tournament_id FROM tournament_games WHERE id = $1 AND status = 'pending'",
                )
                .bind(plan)
                .fetch_optional(&mut *tx)
                .await?;
                let Some(tournament) = tournament else {
                    return Err($crate::StoreError::NotPending);
                };
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO games (game, status, bot1, bot2, seats, seed, started, tournament_id)
                     VALUES ($1, 'running', $2, $3, $4, $5, $6, $7) RETURNING id",
                )
                .bind(game)
                .bind(bots[0])
                .bind(bots[1])
                .bind(bots.len() as i64)
                .bind(seed)
                .bind(started)
                .bind(tournament)
                .fetch_one(&mut *tx)
                .await?;
                for (seat, bot) in bots.iter().enumerate() {
                    sqlx::query("INSERT INTO game_seats (game_id, seat, bot, tournament_id) VALUES ($1, $2, $3, $4)")
                        .bind(id)
                        .bind(seat as i64)
                        .bind(bot)
                        .bind(tournament)
                        .execute(&mut *tx)
                        .await?;
                }
                sqlx::query("UPDATE tournament_games SET status = 'running', game_id = $1 WHERE id = $2")
                    .bind(id)
                    .bind(plan)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(id)
            }

            async fn finish_tournament_game(&self, plan: i64, ranks: &[i64], faults: &[i64]) -> Result<(), $crate::StoreError> {
                // Its scores as `finish_game` stored them (before this).
                sqlx::query(&format!(
                    "UPDATE tournament_games SET status = 'done', ranks = $1, faults = $2, scores = {}
                     WHERE id = $3",
                    $crate::tournaments::SCORES_OF_GAME
                ))
                    .bind($crate::tournaments::join(ranks))
                    .bind($crate::tournaments::join(faults))
                    .bind(plan)
                    .execute(&self.$write)
                    .await?;
                Ok(())
            }

            async fn reset_tournament_game(&self, plan: i64) -> Result<(), $crate::StoreError> {
                sqlx::query("UPDATE tournament_games SET status = 'pending', game_id = NULL WHERE id = $1 AND status <> 'done'")
                    .bind(plan)
                    .execute(&self.$write)
                    .await?;
                Ok(())
            }

            async fn withdraw_entry(&self, id: i64, bot: i64, round: i64, reason: &str) -> Result<(), $crate::StoreError> {
                let mut tx = self.$write.begin().await?;
                // Only while the tournament is not over, its row held
                // meanwhile (as `plan_round`).
                let open = sqlx::query(
                    "UPDATE tournaments SET status = status WHERE id = $1 AND status IN ('scheduled', 'running')",
                )
                .bind(id)
                .execute(&mut *tx)
                .await?;
                if open.rows_affected() == 0 {
                    return Ok(());
                }
                sqlx::query("UPDATE tournament_entries SET withdrawn = $1, withdrawn_round = $2 WHERE tournament_id = $3 AND bot = $4")
                    .bind(reason)
                    .bind(round)
                    .bind(id)
                    .bind(bot)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(
                    "UPDATE tournament_games SET status = 'void' WHERE tournament_id = $1 AND status = 'pending'
                     AND (',' || seats || ',') LIKE $2",
                )
                .bind(id)
                .bind(format!("%,{bot},%"))
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn end_tournament(&self, id: i64, status: &str, at: &str, reason: Option<&str>) -> Result<bool, $crate::StoreError> {
                self.end_with(id, status, at, reason, None).await
            }

            async fn finish_tournament(&self, id: i64, at: &str, winner: Option<&str>) -> Result<bool, $crate::StoreError> {
                self.end_with(id, "finished", at, None, winner).await
            }

            async fn keep_winner(&self, id: i64, winner: Option<&str>) -> Result<bool, $crate::StoreError> {
                let r = sqlx::query("UPDATE tournaments SET winner = $1 WHERE id = $2 AND status = 'finished'")
                    .bind(winner)
                    .bind(id)
                    .execute(&self.$write)
                    .await?;
                Ok(r.rows_affected() > 0)
            }

            async fn bot_tournaments(&self, bot: i64) -> Result<Vec<$crate::tournaments::TournamentRow>, $crate::StoreError> {
                let rows = sqlx::query_as(&format!(
                    "SELECT {TOURNAMENT} FROM tournaments WHERE id IN (SELECT tournament_id FROM tournament_entries WHERE bot = $1) ORDER BY id DESC"
                ))
                .bind(bot)
                .fetch_all(&self.$read)
                .await?;
                Ok(rows)
            }

            async fn deal_pending(&self, game: i64) -> Result<bool, $crate::StoreError> {
                let n: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM tournament_games t JOIN games g ON g.id = $1
                     WHERE g.tournament_id IS NOT NULL AND t.tournament_id = g.tournament_id
                       AND t.seed = g.seed AND t.status IN ('pending', 'running')",
                )
                .bind(game)
                .fetch_one(&self.$read)
                .await?;
                Ok(n > 0)
            }

            async fn filtered_games(
                &self,
                filter: &$crate::tournaments::GamesFilter,
                offset: i64,
                limit: i64,
            ) -> Result<Vec<$crate::web::GameSummary>, $crate::StoreError> {
                use $crate::tournaments::Marked;
                let games = match (filter.marked, filter.tournament) {
                    (Marked::Hide, Some(_)) => Vec::new(),
                    (Marked::Hide, None) => {
                        let list = filter.listed();
                        return $crate::tournaments::ladder::page(self, &list, offset, limit).await;
                    }
                    (Marked::All, None) => {
                        return $crate::web::WebReads::games_at(
                            self,
                            &filter.listed(),
                            $crate::web::PageAt::Newest(offset),
                            limit,
                        )
                        .await;
                    }
                    (_, tournament) => {
                        let (from, finished, id) =
                            marked(filter.game.is_some(), tournament.is_some(), filter.bot.is_some());
                        sqlx::query_as(&format!(
                            "SELECT g.id, g.game, g.status, g.started, g.finished FROM (
                                 SELECT {id} AS id FROM {from}
                                 ORDER BY {finished} DESC, {id} DESC LIMIT $4 OFFSET $5) p
                             JOIN games g ON g.id = p.id
                             ORDER BY g.finished DESC, g.id DESC"
                        ))
                        .bind(&filter.game)
                        .bind(tournament)
                        .bind(filter.bot)
                        .bind(limit)
                        .bind(offset)
                        .fetch_all(&self.$read)
                        .await?
                    }
                };
                $crate::sql_web::with_seats(self, games).await
            }

            async fn count_filtered_games(&self, filter: &$crate::tournaments::GamesFilter) -> Result<i64, $crate::StoreError> {
                use $crate::tournaments::Marked;
                match (filter.marked, filter.tournament) {
                    (Marked::Hide, Some(_)) => Ok(0),
                    (Marked::Hide, None) => $crate::tournaments::ladder::count(self, &filter.listed()).await,
                    (Marked::All, None) => $crate::web::WebReads::count_finished(self, &filter.listed()).await,
                    (Marked::Only, None) => {
                        Ok($crate::tournaments::ladder::LadderReads::totals(self, &filter.listed()).await?.1)
                    }
                    (_, tournament) => count_marked(&self.$read, &filter.game, tournament, filter.bot, None, None).await,
                }
            }

            async fn tournament_game_counts(&self, id: i64) -> Result<(i64, i64, i64), $crate::StoreError> {
                let count = |status: &'static str| {
                    sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM games WHERE tournament_id = $1 AND status = $2")
                        .bind(id)
                        .bind(status)
                        .fetch_one(&self.$read)
                };
                Ok((count("finished").await?, count("aborted").await?, count("running").await?))
            }
        }
    };
}
