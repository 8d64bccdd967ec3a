//! The website's reads that PostgreSQL does its own way ([`SqlWeb`]): the
//! seats of listed games by one array, pages of finished games that the
//! migration's partial indexes serve, and the trend lines a bot at a time.
//! The reads both backends share are in `sql_web`.

use async_trait::async_trait;

use crate::sql_web::{GameSeat, SqlWeb, FACTS, GAMES, SEATS, SEATS_ORDER};
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
        offset: i64,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        let games = match (&filter.game, filter.bot) {
            // The page's offset is skipped in the partial index alone
            // (an index-only scan), and only the games listed are read:
            // skipping whole rows cost 2 µs a game (issue 53).
            (None, None) => {
                sqlx::query_as(&format!(
                    "{GAMES} WHERE id IN (
                         SELECT id FROM games WHERE status = 'finished'
                         ORDER BY finished DESC, id DESC LIMIT $1 OFFSET $2)
                     ORDER BY finished DESC, id DESC"
                ))
                .bind(limit)
                .bind(offset)
                .fetch_all(&self.pool)
                .await?
            }
            (Some(game), None) => {
                sqlx::query_as(&format!(
                    "{GAMES} WHERE id IN (
                         SELECT id FROM games WHERE game = $1 AND status = 'finished'
                         ORDER BY finished DESC, id DESC LIMIT $2 OFFSET $3)
                     ORDER BY finished DESC, id DESC"
                ))
                .bind(game)
                .bind(limit)
                .bind(offset)
                .fetch_all(&self.pool)
                .await?
            }
            (game, Some(bot)) => {
                // The bot's newest finished games from its seats' finish
                // order (migration 0015), then only the games listed.
                sqlx::query_as(
                    "SELECT g.id, g.game, g.status, g.started, g.finished FROM (
                         SELECT s.game_id, s.finished FROM game_seats s
                         WHERE s.bot = $1 AND s.finished IS NOT NULL AND s.rank IS NOT NULL
                           AND ($2::TEXT IS NULL OR EXISTS (
                               SELECT 1 FROM games h WHERE h.id = s.game_id AND h.game = $2))
                         ORDER BY s.finished DESC, s.game_id DESC LIMIT $3 OFFSET $4) p
                     JOIN games g ON g.id = p.game_id
                     ORDER BY p.finished DESC, g.id DESC",
                )
                .bind(bot)
                .bind(game)
                .bind(limit)
                .bind(offset)
                .fetch_all(&self.pool)
                .await?
            }
        };
        Ok(games)
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
