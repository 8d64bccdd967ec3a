//! The hosted bots' queries (issue 12), once for both backends: `$n`
//! placeholders (sqlx binds them by number on SQLite too). Each backend's
//! module expands [`hosted_queries`] over its pool type.

/// Defines the hosted bots' query functions over pool type `$pool`.
macro_rules! hosted_queries {
    ($pool:ty) => {
        use crate::hosted::{BotVersion, MatchStderr, NewVersion, VALIDATING};
        use crate::{BotId, GameId, StoreError};

        const VERSION: &str = "id, bot, version, file_hash, file_name, runtime, entry, dialect, status, reason, stderr, created_at";

        pub(crate) async fn add_version(w: &$pool, v: &NewVersion) -> Result<BotVersion, StoreError> {
            let mut tx = w.begin().await?;
            sqlx::query("INSERT INTO bot_files (hash, size, created_at) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING")
                .bind(&v.file_hash)
                .bind(v.file_size)
                .bind(crate::now())
                .execute(&mut *tx)
                .await?;
            let row: BotVersion = sqlx::query_as(&format!(
                "INSERT INTO bot_versions (bot, version, file_hash, file_name, runtime, entry, dialect, status, created_at)
                 SELECT $1, COALESCE(MAX(version), 0) + 1, $2, $3, $4, $5, $6, $7, $8 FROM bot_versions WHERE bot = $9
                 RETURNING {VERSION}"
            ))
            .bind(v.bot)
            .bind(&v.file_hash)
            .bind(&v.file_name)
            .bind(&v.runtime)
            .bind(&v.entry)
            .bind(&v.dialect)
            .bind(VALIDATING)
            .bind(crate::now())
            .bind(v.bot)
            .fetch_one(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(row)
        }

        pub(crate) async fn set_status(
            w: &$pool,
            id: i64,
            status: &str,
            reason: Option<&str>,
            stderr: Option<&str>,
        ) -> Result<(), StoreError> {
            sqlx::query("UPDATE bot_versions SET status = $1, reason = $2, stderr = $3 WHERE id = $4")
                .bind(status)
                .bind(reason)
                .bind(stderr)
                .bind(id)
                .execute(w)
                .await?;
            Ok(())
        }

        pub(crate) async fn versions(p: &$pool, bot: BotId) -> Result<Vec<BotVersion>, StoreError> {
            Ok(sqlx::query_as(&format!(
                "SELECT {VERSION} FROM bot_versions WHERE bot = $1 ORDER BY version DESC"
            ))
            .bind(bot)
            .fetch_all(p)
            .await?)
        }

        pub(crate) async fn active(p: &$pool, bot: BotId) -> Result<Option<BotVersion>, StoreError> {
            Ok(sqlx::query_as(&format!(
                "SELECT {VERSION} FROM bot_versions WHERE bot = $1 AND status = 'active' ORDER BY version DESC LIMIT 1"
            ))
            .bind(bot)
            .fetch_optional(p)
            .await?)
        }

        pub(crate) async fn add_match(
            w: &$pool,
            game: GameId,
            bot: BotId,
            version: i64,
            stderr: &str,
        ) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO hosted_matches (game_id, bot, version, stderr) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (game_id, bot) DO UPDATE SET version = excluded.version, stderr = excluded.stderr",
            )
            .bind(game)
            .bind(bot)
            .bind(version)
            .bind(stderr)
            .execute(w)
            .await?;
            Ok(())
        }

        pub(crate) async fn matches(
            p: &$pool,
            bot: BotId,
            limit: i64,
        ) -> Result<Vec<MatchStderr>, StoreError> {
            Ok(sqlx::query_as(
                "SELECT game_id, bot, version, stderr FROM hosted_matches WHERE bot = $1 ORDER BY game_id DESC LIMIT $2",
            )
            .bind(bot)
            .bind(limit)
            .fetch_all(p)
            .await?)
        }

        pub(crate) async fn game_versions(
            p: &$pool,
            game: GameId,
        ) -> Result<Vec<(BotId, i64)>, StoreError> {
            Ok(
                sqlx::query_as("SELECT bot, version FROM hosted_matches WHERE game_id = $1 ORDER BY bot")
                    .bind(game)
                    .fetch_all(p)
                    .await?,
            )
        }
    };
}

pub(crate) use hosted_queries;
