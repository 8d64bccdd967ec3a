//! The website's reads that SQLite does its own way ([`SqlWeb`]): each
//! walks an index the migrations made for it (`INDEXED BY`, so that the
//! planner never scans all games instead). The reads both backends share
//! are in `sql_web`.

use async_trait::async_trait;
use sqlx::FromRow;

use crate::sql_web::{page_args, GameSeat, Seek, SqlWeb, FACTS, GAMES, SEATS, SEATS_ORDER};
use crate::web::{GameFactsRow, GameFilter, GameSummary, HistoryPoint, MinuteCount};
use crate::{BotId, GameId, SqliteStore, StoreError};

/// `n` placeholders for a list of ids (`?,?,?`).
fn id_marks(n: usize) -> String {
    vec!["?"; n].join(",")
}

/// One point of a bot's rating history.
#[derive(FromRow)]
struct BotPoint {
    bot: BotId,
    #[sqlx(flatten)]
    point: HistoryPoint,
}

#[async_trait]
impl SqlWeb for SqliteStore {
    async fn seats_of(&self, ids: &[GameId]) -> Result<Vec<GameSeat>, StoreError> {
        let marks = id_marks(ids.len());
        let sql = format!("{SEATS} IN ({marks}) {SEATS_ORDER}");
        let mut q = sqlx::query_as(&sql);
        for id in ids {
            q = q.bind(id);
        }
        Ok(q.fetch_all(&self.pool).await?)
    }

    async fn facts_of(&self, ids: &[GameId]) -> Result<Vec<GameFactsRow>, StoreError> {
        let marks = id_marks(ids.len());
        let sql = format!("{FACTS} IN ({marks})");
        let mut q = sqlx::query_as(&sql);
        for id in ids {
            q = q.bind(id);
        }
        Ok(q.fetch_all(&self.pool).await?)
    }

    async fn finished_page(
        &self,
        filter: &GameFilter,
        seek: &Seek,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        // A bot listed in no other game kind needs no game filter (its
        // lists' lengths count every seat its list shows, rated or not).
        let mut game = filter.game.clone();
        if let (Some(g), Some(bot)) = (&game, filter.bot) {
            let others: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM finish_totals
                                WHERE bot = ? AND game != ? AND games != 0)",
            )
            .bind(bot)
            .bind(g)
            .fetch_one(&self.pool)
            .await?;
            if !others {
                game = None;
            }
        }
        // Each list walks its index in the page's direction, from the
        // game of `seek.from` when there is one (a range of the index),
        // and skips `seek.skip` entries of the index alone.
        let (sql, scope): (String, Vec<Option<String>>) = match (game, filter.bot) {
            (None, None) => (
                format!(
                    "{GAMES} INDEXED BY games_finished_order WHERE status = 'finished'{}
                     ORDER BY {} LIMIT ?1 OFFSET ?2",
                    seek.beyond("finished", "id", '?', 3),
                    seek.order("finished", "id"),
                ),
                Vec::new(),
            ),
            (Some(game), None) => (
                format!(
                    "{GAMES} INDEXED BY games_finished_order_by_game
                     WHERE game = ?3 AND status = 'finished'{}
                     ORDER BY {} LIMIT ?1 OFFSET ?2",
                    seek.beyond("finished", "id", '?', 4),
                    seek.order("finished", "id"),
                ),
                vec![Some(game)],
            ),
            // The bot's finished games from its seats' finish order (a
            // covering index), then only the games listed.
            (game, Some(_)) => (
                format!(
                    "SELECT g.id, g.game, g.status, g.started, g.finished FROM (
                         SELECT s.game_id FROM game_seats s INDEXED BY game_seats_finish_order_by_bot
                         WHERE s.bot = ?3 AND s.finished IS NOT NULL AND s.rank IS NOT NULL
                           AND (?4 IS NULL OR EXISTS (
                               SELECT 1 FROM games h WHERE h.id = s.game_id AND h.game = ?4)){}
                         ORDER BY {} LIMIT ?1 OFFSET ?2) p
                     JOIN games g ON g.id = p.game_id
                     ORDER BY {}",
                    seek.beyond("s.finished", "s.game_id", '?', 5),
                    seek.order("s.finished", "s.game_id"),
                    seek.order("g.finished", "g.id"),
                ),
                vec![game],
            ),
        };
        let args = page_args::<sqlx::Sqlite>(limit, filter, scope, seek)?;
        Ok(sqlx::query_as_with(&sql, args)
            .fetch_all(&self.pool)
            .await?)
    }

    async fn points_of(&self, bot: BotId, ids: &[GameId]) -> Result<Vec<HistoryPoint>, StoreError> {
        let marks = id_marks(ids.len());
        let sql = format!(
            "SELECT game_id, mu, sigma FROM rating_history
             WHERE bot = ? AND game_id IN ({marks}) ORDER BY game_id"
        );
        let mut q = sqlx::query_as(&sql).bind(bot);
        for id in ids {
            q = q.bind(id);
        }
        Ok(q.fetch_all(&self.pool).await?)
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
                 SELECT s.game_id FROM game_seats s INDEXED BY game_seats_finish_order_by_bot
                 WHERE s.bot = ?1 AND s.finished IS NOT NULL
                   AND EXISTS (SELECT 1 FROM game_seats t WHERE t.game_id = s.game_id AND t.bot = ?2)
                 ORDER BY s.finished DESC, s.game_id DESC LIMIT ?3) p
             JOIN games g ON g.id = p.game_id
             ORDER BY g.finished DESC, g.id DESC",
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
             FROM games INDEXED BY games_finished_at
             WHERE status = 'finished' AND finished >= ? GROUP BY minute, game ORDER BY minute",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?)
    }

    /// One query: per bot, the correlated subquery walks its history
    /// backwards on the primary key and stops after `limit` rows of this
    /// game.
    async fn histories(
        &self,
        game: &str,
        limit: i64,
    ) -> Result<Vec<(BotId, Vec<HistoryPoint>)>, StoreError> {
        let rows: Vec<BotPoint> = sqlx::query_as(
            "SELECT h.bot, h.game_id, h.mu, h.sigma FROM bot_stats s
             JOIN rating_history h ON h.bot = s.bot AND h.game_id IN (
                 SELECT h2.game_id FROM rating_history h2 JOIN games g ON g.id = h2.game_id
                 WHERE h2.bot = s.bot AND g.game = s.game ORDER BY h2.game_id DESC LIMIT ?2)
             WHERE s.game = ?1 ORDER BY h.bot, h.game_id",
        )
        .bind(game)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        let mut out: Vec<(BotId, Vec<HistoryPoint>)> = Vec::new();
        for BotPoint { bot, point } in rows {
            match out.last_mut() {
                Some((b, points)) if *b == bot => points.push(point),
                _ => out.push((bot, vec![point])),
            }
        }
        Ok(out)
    }
}
