//! The lease SQL, once for both backends: `$n` placeholders (sqlx binds
//! them by number on SQLite too); the backends differ only in the clock
//! expression and the row locks.

/// Implements [`super::LeaseStore`] for `$store`, reading
/// through `self.$read` and writing through `self.$write`; `$now` is the
/// database clock in milliseconds, `$skip` the lock a reaper takes on the
/// registrations it reaps (skipping those another reaper holds), `$own`
/// the lock a process leaving takes on its own registration (waiting for
/// its claims in flight, which hold `$share`, to commit), `$share`
/// the lock a claim takes on its own registration, `$shared` whether
/// several processes may use the database, `$lease_to` what marks the games
/// dealt from now on as the process's.
macro_rules! lease_queries {
    ($store:ty, $read:ident, $write:ident, $now:literal, $skip:literal, $own:literal, $share:literal, $shared:literal, $lease_to:expr) => {
        #[async_trait::async_trait]
        impl $crate::leases::LeaseStore for $store {
            fn shared(&self) -> bool {
                $shared
            }

            fn lease_new_games(&self, id: $crate::leases::ProcessId) {
                let lease_to: fn(&$store, i64) = $lease_to;
                lease_to(self, id);
            }

            async fn register_again(
                &self,
                id: $crate::leases::ProcessId,
                p: &$crate::leases::NewProcess,
            ) -> Result<$crate::leases::ProcessRow, $crate::StoreError> {
                Ok(sqlx::query_as(concat!(
                    "INSERT INTO ladder_processes (id, role, host, pid, started_ms, beat_ms, expires_ms) VALUES ($5, $1, $2, $3, ",
                    $now, ", ", $now, ", ", $now, " + $4)
                     RETURNING id, role, host, pid, started_ms, beat_ms, expires_ms"
                ))
                .bind(&p.role)
                .bind(&p.host)
                .bind(p.pid)
                .bind(p.ttl_ms)
                .bind(id)
                .fetch_one(&self.$write)
                .await?)
            }

            async fn register_process(
                &self,
                p: &$crate::leases::NewProcess,
            ) -> Result<$crate::leases::ProcessRow, $crate::StoreError> {
                Ok(sqlx::query_as(concat!(
                    "INSERT INTO ladder_processes (role, host, pid, started_ms, beat_ms, expires_ms) VALUES ($1, $2, $3, ",
                    $now, ", ", $now, ", ", $now, " + $4)
                     RETURNING id, role, host, pid, started_ms, beat_ms, expires_ms"
                ))
                .bind(&p.role)
                .bind(&p.host)
                .bind(p.pid)
                .bind(p.ttl_ms)
                .fetch_one(&self.$write)
                .await?)
            }

            async fn heartbeat(
                &self,
                id: $crate::leases::ProcessId,
                ttl_ms: i64,
            ) -> Result<bool, $crate::StoreError> {
                let r = sqlx::query(concat!(
                    "UPDATE ladder_processes SET beat_ms = ", $now, ", expires_ms = ", $now,
                    " + $1 WHERE id = $2"
                ))
                .bind(ttl_ms)
                .bind(id)
                .execute(&self.$write)
                .await?;
                Ok(r.rows_affected() > 0)
            }

            async fn reap_processes(
                &self,
                which: $crate::leases::Reap,
                why: &str,
                at: &str,
            ) -> Result<Vec<$crate::leases::Reaped>, $crate::StoreError> {
                use $crate::leases::{ProcessRow, Reap, Reaped};
                let mut tx = self.$write.begin().await?;
                let dead: Vec<ProcessRow> = match which {
                    Reap::Expired => sqlx::query_as(concat!(
                        "SELECT id, role, host, pid, started_ms, beat_ms, expires_ms FROM ladder_processes WHERE expires_ms < ",
                        $now, " ORDER BY id", $skip
                    ))
                    .fetch_all(&mut *tx)
                    .await?,
                    // Its own row is waited for, not skipped: a claim of
                    // this process still in flight holds it, and the game
                    // that claim deals must be closed here too.
                    Reap::One(id) => sqlx::query_as(concat!(
                        "SELECT id, role, host, pid, started_ms, beat_ms, expires_ms FROM ladder_processes WHERE id = $1 ORDER BY id",
                        $own
                    ))
                    .bind(id)
                    .fetch_all(&mut *tx)
                    .await?,
                    Reap::AllBut(id) => sqlx::query_as(concat!(
                        "SELECT id, role, host, pid, started_ms, beat_ms, expires_ms FROM ladder_processes WHERE id <> $1 ORDER BY id",
                        $skip
                    ))
                    .bind(id)
                    .fetch_all(&mut *tx)
                    .await?,
                };
                let mut out = Vec::with_capacity(dead.len());
                for process in dead {
                    let reason = format!("{why}: {}", process.label());
                    let games: Vec<i64> = sqlx::query_scalar(
                        "UPDATE games SET status = 'aborted', reason = $1, finished = $2
                         WHERE status = 'running' AND leased_by = $3 RETURNING id",
                    )
                    .bind(&reason)
                    .bind(at)
                    .bind(process.id)
                    .fetch_all(&mut *tx)
                    .await?;
                    let bots: Vec<i64> =
                        sqlx::query_scalar("DELETE FROM ladder_leases WHERE process = $1 RETURNING bot")
                            .bind(process.id)
                            .fetch_all(&mut *tx)
                            .await?;
                    sqlx::query("DELETE FROM ladder_processes WHERE id = $1")
                        .bind(process.id)
                        .execute(&mut *tx)
                        .await?;
                    let (mut games, mut bots) = (games, bots);
                    games.sort_unstable();
                    bots.sort_unstable();
                    out.push(Reaped {
                        process,
                        games,
                        bots,
                    });
                }
                tx.commit().await?;
                Ok(out)
            }

            async fn start_leased_game(
                &self,
                g: &$crate::leases::LeasedGame<'_>,
            ) -> Result<Option<$crate::GameId>, $crate::StoreError> {
                if g.bots.len() < 2 {
                    return Err($crate::StoreError::Db(sqlx::Error::Protocol(
                        "a game needs at least two bots".into(),
                    )));
                }
                let mut tx = self.$write.begin().await?;
                // The claimer must still be registered; its registration is
                // locked against a reaper until the claim commits.
                let alive: Option<i64> = sqlx::query_scalar(concat!(
                    "SELECT id FROM ladder_processes WHERE id = $1 AND expires_ms >= ",
                    $now,
                    $share
                ))
                .bind(g.process)
                .fetch_optional(&mut *tx)
                .await?;
                if alive.is_none() {
                    return Ok(None);
                }
                // In id order, so that two claims never wait for each other.
                let mut claim = g.claim.to_vec();
                claim.sort_unstable();
                claim.dedup();
                for bot in &claim {
                    let r = sqlx::query(concat!(
                        "INSERT INTO ladder_leases (bot, process, game_id, free_ms) VALUES ($1, $2, NULL, NULL)
                         ON CONFLICT (bot) DO UPDATE SET process = excluded.process, game_id = NULL, free_ms = NULL
                         WHERE (ladder_leases.free_ms IS NOT NULL AND ladder_leases.free_ms <= ",
                        $now,
                        ") OR NOT EXISTS (SELECT 1 FROM ladder_processes p WHERE p.id = ladder_leases.process)"
                    ))
                    .bind(bot)
                    .bind(g.process)
                    .execute(&mut *tx)
                    .await?;
                    if r.rows_affected() == 0 {
                        tx.rollback().await?;
                        return Ok(None);
                    }
                }
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO games (game, status, bot1, bot2, seats, seed, started, leased_by)
                     VALUES ($1, 'running', $2, $3, $4, $5, $6, $7) RETURNING id",
                )
                .bind(g.game)
                .bind(g.bots[0])
                .bind(g.bots[1])
                .bind(g.bots.len() as i64)
                .bind(g.seed)
                .bind(g.started)
                .bind(g.process)
                .fetch_one(&mut *tx)
                .await?;
                for (seat, bot) in g.bots.iter().enumerate() {
                    sqlx::query("INSERT INTO game_seats (game_id, seat, bot) VALUES ($1, $2, $3)")
                        .bind(id)
                        .bind(seat as i64)
                        .bind(bot)
                        .execute(&mut *tx)
                        .await?;
                }
                for bot in &claim {
                    sqlx::query("UPDATE ladder_leases SET game_id = $1 WHERE bot = $2")
                        .bind(id)
                        .bind(bot)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(Some(id))
            }

            async fn release_bots(
                &self,
                process: $crate::leases::ProcessId,
                bots: &[$crate::BotId],
                rest_ms: i64,
            ) -> Result<(), $crate::StoreError> {
                let mut tx = self.$write.begin().await?;
                for bot in bots {
                    sqlx::query(concat!(
                        "UPDATE ladder_leases SET game_id = NULL, free_ms = ",
                        $now,
                        " + $1 WHERE bot = $2 AND process = $3"
                    ))
                    .bind(rest_ms)
                    .bind(bot)
                    .bind(process)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok(())
            }

            async fn taken_bots(&self) -> Result<Vec<$crate::BotId>, $crate::StoreError> {
                Ok(sqlx::query_scalar(concat!(
                    "SELECT bot FROM ladder_leases WHERE free_ms IS NULL OR free_ms > ",
                    $now,
                    " ORDER BY bot"
                ))
                .fetch_all(&self.$read)
                .await?)
            }

            async fn processes(
                &self,
            ) -> Result<Vec<$crate::leases::ProcessRow>, $crate::StoreError> {
                Ok(sqlx::query_as(
                    "SELECT id, role, host, pid, started_ms, beat_ms, expires_ms FROM ladder_processes ORDER BY id",
                )
                .fetch_all(&self.$read)
                .await?)
            }
        }
    };
}
