//! The [`Store`] once for both SQL backends: bots, owners and games, hosted
//! bots' versions (issue 12) and people's games (issue 16), in SQL that is
//! the same on SQLite and PostgreSQL (`$n` placeholders, which sqlx binds by
//! number on SQLite too; `TRUE`/`FALSE`; `RETURNING id`) and with the same
//! row mapping (`FromRow`).
//!
//! A backend is a [`SqlStore`]: the pools it reads and writes through, and
//! what it does its own way: the hot writes through its group commit,
//! closing the running games after a restart, bulk import, and the state
//! that several server instances share. Its website reads are the
//! [`crate::sql_web::SqlWeb`] half; its tournaments and leases are
//! `tournaments` and `leases`.

use async_trait::async_trait;
use sqlx::{Database, Decode, Encode, Executor, FromRow, IntoArguments, Pool, Type};

use crate::admin::AdminStore;
use crate::group::{Write, Written};
use crate::hosted::{BotVersion, MatchStderr, NewVersion, VALIDATING};
use crate::people::RatedSeat;
use crate::postgres::cluster::Cluster;
use crate::web::{ImportGame, ListCounts, WebReads};
use crate::{
    BotId, BotInfo, BotRow, GameEnd, GameId, GameRow, LeaseStore, NewBot, OwnerId, OwnerRow,
    PeopleRating, PersonGame, PersonSeat, Store, StoreError, TournamentStore,
};

/// A store on one SQL database, as the shared [`Store`] sees it.
#[async_trait]
pub(crate) trait SqlStore:
    TournamentStore + AdminStore + LeaseStore + Send + Sync + 'static
{
    /// The database.
    type Db: Database;

    /// The pool that reads.
    fn reads(&self) -> &Pool<Self::Db>;

    /// The pool that writes (SQLite: its one writer connection).
    fn writes(&self) -> &Pool<Self::Db>;

    /// Commits a hot write (a game started, finished or aborted, a bot's
    /// health) through the backend's group commit.
    async fn group_write(&self, write: Write) -> Result<Written, StoreError>;

    /// [`Store::abort_running`] in the backend's own SQL.
    async fn abort_running_games(&self, reason: &str, at: &str) -> Result<u64, StoreError>;

    /// [`Store::import_games`] in the backend's own statements.
    async fn import_finished(&self, games: Vec<ImportGame>) -> Result<Vec<GameId>, StoreError>;

    /// [`Store::recount_lists`]'s first step in the backend's own SQL: the
    /// seats of a tournament game that lack its tournament get it; returns
    /// how many.
    async fn mend_seats(&self) -> Result<u64, StoreError>;

    /// [`Store::recount_lists`]'s counting in the backend's own SQL, run
    /// in one transaction.
    fn recount_statements(&self) -> Vec<String>;

    /// [`Store::cluster`]: `None` unless several instances share the
    /// database.
    fn instances(&self) -> Option<Cluster> {
        None
    }
}

/// A bot as [`BotInfo`] (read `FROM bots`): `banned` is its own ban's
/// reason, or its owner's.
const BOT_INFO: &str = "id, name, game, kind, owner, endpoint, dialect, auth_user, auth_password, strikes, paused_until, pause_reason, enabled,
    COALESCE(ban_reason, (SELECT 'its owner ' || o.name || ' is banned: ' || o.ban_reason FROM owners o WHERE o.id = bots.owner)) AS banned";

const GAME: &str = "id, game, status, bot1, bot2, seed, started, finished, score1, score2, forfeited_by, reason, record";

const VERSION: &str = "id, bot, version, file_hash, file_name, runtime, entry, dialect, status, reason, stderr, created_at";

/// The id of an inserted row; a unique name clash is [`StoreError::NameTaken`].
fn inserted(r: Result<i64, sqlx::Error>) -> Result<i64, StoreError> {
    match r {
        Ok(id) => Ok(id),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(StoreError::NameTaken),
        Err(e) => Err(e.into()),
    }
}

#[async_trait]
impl<S> Store for S
where
    S: SqlStore + WebReads,
    for<'c> &'c mut <S::Db as Database>::Connection: Executor<'c, Database = S::Db>,
    for<'q> <S::Db as Database>::Arguments<'q>: IntoArguments<'q, S::Db>,
    for<'q> i64: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> bool: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> Option<i64>: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> &'q str: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> Option<&'q str>: Encode<'q, S::Db> + Type<S::Db>,
    for<'r> i64: Decode<'r, S::Db>,
    for<'r> (i64,): FromRow<'r, <S::Db as Database>::Row>,
    for<'r> (i64, i64): FromRow<'r, <S::Db as Database>::Row>,
    for<'r> BotRow: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> OwnerRow: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> GameRow: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> BotInfo: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> BotVersion: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> MatchStderr: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> PersonSeat: FromRow<'r, <S::Db as Database>::Row>,
    for<'q> f64: Encode<'q, S::Db> + Type<S::Db>,
    for<'r> (f64, f64): FromRow<'r, <S::Db as Database>::Row>,
    for<'r> PeopleRating: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> PersonGame: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> RatedSeat: FromRow<'r, <S::Db as Database>::Row>,
{
    async fn create_bot(
        &self,
        name: &str,
        password_hash: &str,
        house: bool,
    ) -> Result<BotId, StoreError> {
        let r = sqlx::query_scalar(
            "INSERT INTO bots (name, password_hash, house, kind, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(name)
        .bind(password_hash)
        .bind(house)
        .bind(if house { "house" } else { "rest" })
        .bind(crate::rows::now().as_str())
        .fetch_one(self.writes())
        .await;
        inserted(r)
    }

    async fn bot_by_name(&self, name: &str) -> Result<Option<BotRow>, StoreError> {
        Ok(
            sqlx::query_as("SELECT id, name, password_hash, house FROM bots WHERE name = $1")
                .bind(name)
                .fetch_optional(self.reads())
                .await?,
        )
    }

    async fn start_game(
        &self,
        game: &str,
        bots: &[BotId],
        seed: i64,
        started: &str,
    ) -> Result<GameId, StoreError> {
        let write = Write::StartGame {
            game: game.to_string(),
            bots: bots.to_vec(),
            seed,
            started: started.to_string(),
        };
        match self.group_write(write).await? {
            Written::Game(id) => Ok(id),
            Written::Done => Err(StoreError::Closed),
        }
    }

    async fn finish_game(&self, id: GameId, end: &GameEnd) -> Result<(), StoreError> {
        let end = end.clone();
        self.group_write(Write::FinishGame { id, end }).await?;
        Ok(())
    }

    async fn abort_game(&self, id: GameId, reason: &str, at: &str) -> Result<(), StoreError> {
        let (reason, at) = (reason.to_string(), at.to_string());
        self.group_write(Write::AbortGame { id, reason, at })
            .await?;
        Ok(())
    }

    async fn abort_running(&self, reason: &str, at: &str) -> Result<u64, StoreError> {
        self.abort_running_games(reason, at).await
    }

    async fn game(&self, id: GameId) -> Result<Option<GameRow>, StoreError> {
        Ok(
            sqlx::query_as(&format!("SELECT {GAME} FROM games WHERE id = $1"))
                .bind(id)
                .fetch_optional(self.reads())
                .await?,
        )
    }

    async fn count_games(&self, status: &str) -> Result<i64, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT COUNT(*) FROM games WHERE status = $1")
                .bind(status)
                .fetch_one(self.reads())
                .await?,
        )
    }

    async fn game_bots(&self, id: GameId) -> Result<Vec<BotId>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT bot FROM game_seats WHERE game_id = $1 ORDER BY seat")
                .bind(id)
                .fetch_all(self.reads())
                .await?,
        )
    }

    async fn ensure_house_bot(&self, name: &str, game: &str) -> Result<BotId, StoreError> {
        // House bots cannot log in: their "hash" is no valid PHC string.
        sqlx::query(
            "INSERT INTO bots (name, password_hash, house, kind, game, created_at) VALUES ($1, '!house', TRUE, 'house', $2, $3) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(game)
        .bind(crate::rows::now().as_str())
        .execute(self.writes())
        .await?;
        let id: i64 = sqlx::query_scalar("SELECT id FROM bots WHERE name = $1 AND kind = 'house'")
            .bind(name)
            .fetch_optional(self.writes())
            .await?
            .ok_or(StoreError::NameTaken)?;
        Ok(id)
    }

    async fn create_owner(&self, name: &str, password_hash: &str) -> Result<OwnerId, StoreError> {
        let r = sqlx::query_scalar(
            "INSERT INTO owners (name, password_hash, created_at) VALUES ($1, $2, $3) RETURNING id",
        )
        .bind(name)
        .bind(password_hash)
        .bind(crate::rows::now().as_str())
        .fetch_one(self.writes())
        .await;
        inserted(r)
    }

    async fn owner_by_name(&self, name: &str) -> Result<Option<OwnerRow>, StoreError> {
        Ok(
            sqlx::query_as("SELECT id, name, password_hash FROM owners WHERE name = $1")
                .bind(name)
                .fetch_optional(self.reads())
                .await?,
        )
    }

    async fn create_remote_bot(&self, bot: &NewBot) -> Result<BotId, StoreError> {
        let r = sqlx::query_scalar(
            "INSERT INTO bots (name, password_hash, house, kind, game, owner, endpoint, dialect, auth_user, auth_password, token_hash, created_at)
             VALUES ($1, '!remote', FALSE, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        )
        .bind(bot.name.as_str())
        .bind(bot.kind.name())
        .bind(bot.game.as_str())
        .bind(bot.owner)
        .bind(bot.endpoint.as_deref())
        .bind(bot.dialect.as_str())
        .bind(bot.auth_user.as_deref())
        .bind(bot.auth_password.as_deref())
        .bind(bot.token_hash.as_deref())
        .bind(crate::rows::now().as_str())
        .fetch_one(self.writes())
        .await;
        inserted(r)
    }

    async fn remote_bots(&self) -> Result<Vec<BotInfo>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {BOT_INFO} FROM bots WHERE kind IN ('push', 'pull', 'hosted') ORDER BY id"
        ))
        .fetch_all(self.reads())
        .await?)
    }

    async fn bot_info(&self, id: BotId) -> Result<Option<BotInfo>, StoreError> {
        Ok(
            sqlx::query_as(&format!("SELECT {BOT_INFO} FROM bots WHERE id = $1"))
                .bind(id)
                .fetch_optional(self.reads())
                .await?,
        )
    }

    async fn bot_by_token(&self, token_hash: &str) -> Result<Option<BotInfo>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {BOT_INFO} FROM bots WHERE token_hash = $1 AND kind = 'pull'"
        ))
        .bind(token_hash)
        .fetch_optional(self.reads())
        .await?)
    }

    async fn set_bot_health(
        &self,
        id: BotId,
        strikes: i64,
        paused_until: Option<i64>,
        pause_reason: Option<&str>,
    ) -> Result<(), StoreError> {
        let pause_reason = pause_reason.map(str::to_string);
        let write = Write::BotHealth {
            id,
            strikes,
            paused_until,
            pause_reason,
        };
        self.group_write(write).await?;
        Ok(())
    }

    async fn set_bot_enabled(&self, id: BotId, enabled: bool) -> Result<(), StoreError> {
        let sql = if enabled {
            "UPDATE bots SET enabled = TRUE, strikes = 0, paused_until = NULL, pause_reason = NULL WHERE id = $1"
        } else {
            "UPDATE bots SET enabled = FALSE WHERE id = $1"
        };
        sqlx::query(sql).bind(id).execute(self.writes()).await?;
        Ok(())
    }

    async fn set_bot_token(&self, id: BotId, token_hash: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE bots SET token_hash = $1 WHERE id = $2 AND kind = 'pull'")
            .bind(token_hash)
            .bind(id)
            .execute(self.writes())
            .await?;
        Ok(())
    }

    async fn import_games(&self, games: Vec<ImportGame>) -> Result<Vec<GameId>, StoreError> {
        self.import_finished(games).await
    }

    async fn recount_lists(&self) -> Result<ListCounts, StoreError> {
        // The seats first, on their own: under the counts' lock
        // (PostgreSQL), a batch holding a seat's row while it waits for the
        // lock would wait on the recount, which would wait on it.
        let mended_seats = self.mend_seats().await?;
        // Then the done tournament games' scores that an older instance
        // did not keep (counted first: the generic result has no row count).
        const LACKING: &str = "FROM tournament_games
             WHERE status = 'done' AND game_id IS NOT NULL AND scores IS NULL";
        let (lacking,): (i64,) = sqlx::query_as(&format!("SELECT COUNT(*) {LACKING}"))
            .fetch_one(self.writes())
            .await?;
        if lacking > 0 {
            let mend = format!(
                "UPDATE tournament_games SET scores = {} WHERE id IN (SELECT id {LACKING})",
                crate::tournaments::SCORES_OF_GAME
            );
            sqlx::query(&mend).execute(self.writes()).await?;
        }
        let mended_scores = u64::try_from(lacking).unwrap_or(0);
        let mut tx = self.writes().begin().await?;
        for sql in self.recount_statements() {
            sqlx::query(&sql).execute(&mut *tx).await?;
        }
        // Read before the commit: what this transaction counted.
        let (games, marked) = sqlx::query_as(crate::web::TOTALS_SQL)
            .bind(0_i64)
            .bind(None::<&str>)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(ListCounts {
            games,
            marked,
            mended_seats,
            mended_scores,
        })
    }

    fn tournaments(&self) -> &dyn TournamentStore {
        self
    }

    fn admin(&self) -> &dyn AdminStore {
        self
    }

    async fn add_bot_version(&self, v: &NewVersion) -> Result<BotVersion, StoreError> {
        let mut tx = self.writes().begin().await?;
        sqlx::query(
            "INSERT INTO bot_files (hash, size, created_at) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING",
        )
        .bind(v.file_hash.as_str())
        .bind(v.file_size)
        .bind(crate::rows::now().as_str())
        .execute(&mut *tx)
        .await?;
        let row: BotVersion = sqlx::query_as(&format!(
            "INSERT INTO bot_versions (bot, version, file_hash, file_name, runtime, entry, dialect, status, created_at)
             SELECT $1, COALESCE(MAX(version), 0) + 1, $2, $3, $4, $5, $6, $7, $8 FROM bot_versions WHERE bot = $9
             RETURNING {VERSION}"
        ))
        .bind(v.bot)
        .bind(v.file_hash.as_str())
        .bind(v.file_name.as_str())
        .bind(v.runtime.as_str())
        .bind(v.entry.as_str())
        .bind(v.dialect.as_str())
        .bind(VALIDATING)
        .bind(crate::rows::now().as_str())
        .bind(v.bot)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(row)
    }

    async fn set_version_status(
        &self,
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
            .execute(self.writes())
            .await?;
        Ok(())
    }

    async fn bot_versions(&self, bot: BotId) -> Result<Vec<BotVersion>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {VERSION} FROM bot_versions WHERE bot = $1 ORDER BY version DESC"
        ))
        .bind(bot)
        .fetch_all(self.reads())
        .await?)
    }

    async fn active_version(&self, bot: BotId) -> Result<Option<BotVersion>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {VERSION} FROM bot_versions WHERE bot = $1 AND status = 'active' ORDER BY version DESC LIMIT 1"
        ))
        .bind(bot)
        .fetch_optional(self.reads())
        .await?)
    }

    async fn add_hosted_match(
        &self,
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
        .execute(self.writes())
        .await?;
        Ok(())
    }

    async fn hosted_matches(&self, bot: BotId, limit: i64) -> Result<Vec<MatchStderr>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT game_id, bot, version, stderr FROM hosted_matches WHERE bot = $1 ORDER BY game_id DESC LIMIT $2",
        )
        .bind(bot)
        .bind(limit)
        .fetch_all(self.reads())
        .await?)
    }

    async fn game_versions(&self, game: GameId) -> Result<Vec<(BotId, i64)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT bot, version FROM hosted_matches WHERE game_id = $1 ORDER BY bot",
        )
        .bind(game)
        .fetch_all(self.reads())
        .await?)
    }

    async fn mark_person_game(
        &self,
        id: GameId,
        seat: usize,
        player: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO person_games (game_id, seat, player) VALUES ($1, $2, $3) ON CONFLICT (game_id) DO NOTHING",
        )
        .bind(id)
        .bind(seat as i64)
        .bind(player)
        .execute(self.writes())
        .await?;
        Ok(())
    }

    async fn person_game(&self, id: GameId) -> Result<Option<PersonSeat>, StoreError> {
        Ok(
            sqlx::query_as("SELECT seat, player FROM person_games WHERE game_id = $1")
                .bind(id)
                .fetch_optional(self.reads())
                .await?,
        )
    }

    async fn rate_person_game(&self, id: GameId) -> Result<bool, StoreError> {
        crate::people::rate_game(self.writes(), id).await
    }

    async fn people_leaderboard(
        &self,
        game: &str,
        limit: i64,
    ) -> Result<Vec<PeopleRating>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT kind, name, game, mu, sigma, conservative, games, wins, losses, ties, last_played
             FROM people_ratings WHERE game = $1 ORDER BY conservative DESC, name LIMIT $2",
        )
        .bind(game)
        .bind(limit)
        .fetch_all(self.reads())
        .await?)
    }

    async fn person_ratings(&self, player: &str) -> Result<Vec<PeopleRating>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT kind, name, game, mu, sigma, conservative, games, wins, losses, ties, last_played
             FROM people_ratings WHERE kind = 'person' AND name = $1 ORDER BY game",
        )
        .bind(player)
        .fetch_all(self.reads())
        .await?)
    }

    async fn person_games(&self, player: &str, limit: i64) -> Result<Vec<PersonGame>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT g.id AS game_id, g.game, g.status, g.finished, p.seat, s.rank, s.score
             FROM person_games p JOIN games g ON g.id = p.game_id
             LEFT JOIN game_seats s ON s.game_id = p.game_id AND s.seat = p.seat
             WHERE p.player = $1 ORDER BY p.game_id DESC LIMIT $2",
        )
        .bind(player)
        .bind(limit)
        .fetch_all(self.reads())
        .await?)
    }

    async fn set_bot_challenges(&self, bot: BotId, allow: bool) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO bot_challenges (bot, allow) VALUES ($1, $2) ON CONFLICT (bot) DO UPDATE SET allow = EXCLUDED.allow",
        )
        .bind(bot)
        .bind(allow)
        .execute(self.writes())
        .await?;
        Ok(())
    }

    async fn challengeable_bots(&self) -> Result<Vec<BotId>, StoreError> {
        Ok(
            // A banned bot (or a bot of a banned owner) cannot be challenged.
            sqlx::query_scalar(
                "SELECT c.bot FROM bot_challenges c JOIN bots b ON b.id = c.bot
                 LEFT JOIN owners o ON o.id = b.owner
                 WHERE c.allow AND b.ban_reason IS NULL AND o.ban_reason IS NULL ORDER BY c.bot",
            )
            .fetch_all(self.reads())
            .await?,
        )
    }

    fn leases(&self) -> &dyn LeaseStore {
        self // issue 13 (wc)
    }

    fn cluster(&self) -> Option<Cluster> {
        self.instances()
    }
}
