//! The website's reads that PostgreSQL does its own way ([`SqlWeb`]): the
//! seats of listed games by one array, pages of finished games that the
//! migration's partial indexes serve, and the trend lines a bot at a time.
//! The reads both backends share are in `sql_web`.

use async_trait::async_trait;

use crate::sql_web::{page_args, GameSeat, Seek, SqlWeb, FACTS, GAMES, SEATS, SEATS_ORDER};
use crate::web::{
    histories_one_by_one, GameFactsRow, GameFilter, GameSummary, HistoryPoint, MinuteCount,
};
use crate::{BotId, GameId, PgStore, StoreError};

#[async_trait]
impl SqlWeb for PgStore {
    async fn seats_of(&self, ids: &[GameId]) -> Result<Vec<GameSeat>, StoreError> {
        Ok(sqlx::query_as(&format!("{SEATS} = ANY($1) {SEATS_ORDER}"))
            .bind(ids)
            .fetch_all(&self.pool)
            .await?)
    }

    async fn facts_of(&self, ids: &[GameId]) -> Result<Vec<GameFactsRow>, StoreError> {
        Ok(sqlx::query_as(&format!("{FACTS} = ANY($1)"))
            .bind(ids)
            .fetch_all(&self.pool)
            .await?)
    }

    async fn finished_page(
        &self,
        filter: &GameFilter,
        seek: &Seek,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        // Each list walks its index in the page's direction, from the
        // game of `seek.from` when there is one (a range of the index).
        // The skipped entries are skipped in the partial index alone (an
        // index-only scan), and only the games listed are read: skipping
        // whole rows cost 2 µs a game (issue 53).
        let order = seek.order("finished", "id");
        let (sql, scope): (String, Vec<Option<String>>) = match (&filter.game, filter.bot) {
            (None, None) => (
                format!(
                    "{GAMES} WHERE id IN (
                         SELECT id FROM games WHERE status = 'finished'{}
                         ORDER BY {order} LIMIT $1 OFFSET $2)
                     ORDER BY {order}",
                    seek.beyond("finished", "id", '$', 3),
                ),
                Vec::new(),
            ),
            (Some(game), None) => (
                format!(
                    "{GAMES} WHERE id IN (
                         SELECT id FROM games WHERE game = $3 AND status = 'finished'{}
                         ORDER BY {order} LIMIT $1 OFFSET $2)
                     ORDER BY {order}",
                    seek.beyond("finished", "id", '$', 4),
                ),
                vec![Some(game.clone())],
            ),
            // The bot's finished games from its seats' finish order
            // (migration 0015), then only the games listed.
            (game, Some(_)) => (
                format!(
                    "SELECT g.id, g.game, g.status, g.started, g.finished FROM (
                         SELECT s.game_id, s.finished FROM game_seats s
                         WHERE s.bot = $3 AND s.finished IS NOT NULL AND s.rank IS NOT NULL
                           AND ($4::TEXT IS NULL OR EXISTS (
                               SELECT 1 FROM games h WHERE h.id = s.game_id AND h.game = $4)){}
                         ORDER BY {} LIMIT $1 OFFSET $2) p
                     JOIN games g ON g.id = p.game_id
                     ORDER BY {}",
                    seek.beyond("s.finished", "s.game_id", '$', 5),
                    seek.order("s.finished", "s.game_id"),
                    seek.order("p.finished", "g.id"),
                ),
                vec![game.clone()],
            ),
        };
        let args = page_args::<sqlx::Postgres>(limit, filter, scope, seek)?;
        Ok(sqlx::query_as_with(&sql, args)
            .fetch_all(&self.pool)
            .await?)
    }

    async fn points_of(&self, bot: BotId, ids: &[GameId]) -> Result<Vec<HistoryPoint>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT game_id, mu, sigma FROM rating_history
             WHERE bot = $1 AND game_id = ANY($2) ORDER BY game_id",
        )
        .bind(bot)
        .bind(ids)
        .fetch_all(&self.pool)
        .await?)
    }

    async fn shared_games(
        &self,
        a: BotId,
        b: BotId,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        // `a`'s newest finished games in its seats' finish order, kept
        // when `b` sat in them too: the walk stops at the `limit`th.
        Ok(sqlx::query_as(
            "SELECT g.id, g.game, g.status, g.started, g.finished FROM (
                 SELECT s.game_id, s.finished FROM game_seats s
                 WHERE s.bot = $1 AND s.finished IS NOT NULL
                   AND EXISTS (SELECT 1 FROM game_seats t WHERE t.game_id = s.game_id AND t.bot = $2)
                 ORDER BY s.finished DESC, s.game_id DESC LIMIT $3) p
             JOIN games g ON g.id = p.game_id
             ORDER BY p.finished DESC, g.id DESC",
        )
        .bind(a)
        .bind(b)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    async fn minutes(&self, since: &str) -> Result<Vec<MinuteCount>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT substr(finished, 1, 16) AS minute, game, COUNT(*) AS games
             FROM games WHERE status = 'finished' AND finished >= $1
             GROUP BY minute, game ORDER BY minute, game",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?)
    }

    async fn histories(
        &self,
        game: &str,
        limit: i64,
    ) -> Result<Vec<(BotId, Vec<HistoryPoint>)>, StoreError> {
        histories_one_by_one(self, game, limit).await
    }
}
