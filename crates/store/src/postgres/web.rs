//! [`WebReads`] for PostgreSQL, and bulk import of finished games. The
//! queries are those of the SQLite store (`sqlite_web.rs`) in PostgreSQL's
//! dialect; the partial indexes of the migration serve the same pages.

use std::collections::HashMap;

use async_trait::async_trait;
use sqlx::postgres::PgRow;
use sqlx::{FromRow, Row};

use crate::web::{
    BotStats, GameFilter, GameSummary, HistoryPoint, ImportGame, MinuteCount, PairStats,
    SeatSummary, WebBot, WebReads,
};
use crate::{BotId, GameId, PgStore, StoreError};

const STATS: &str = "SELECT s.bot, b.name, b.kind, s.game, s.mu, s.sigma, s.conservative, s.games,
    s.wins, s.losses, s.ties, s.forfeits, s.last_played FROM bot_stats s JOIN bots b ON b.id = s.bot";

const PAIRS: &str = "SELECT p.bot, a.name AS bot_name, p.opponent, o.name AS opponent_name, p.game,
    p.games, p.wins, p.losses, p.ties FROM pair_stats p JOIN bots a ON a.id = p.bot
    JOIN bots o ON o.id = p.opponent";

const GAMES: &str = "SELECT id, game, status, started, finished FROM games";

impl PgStore {
    /// Adds the seats of `rows` (games without seats yet), in one query.
    pub(crate) async fn with_seats(
        &self,
        rows: Vec<PgRow>,
    ) -> Result<Vec<GameSummary>, StoreError> {
        let mut games = Vec::with_capacity(rows.len());
        for r in &rows {
            games.push(GameSummary {
                id: r.try_get("id")?,
                game: r.try_get("game")?,
                status: r.try_get("status")?,
                started: r.try_get("started")?,
                finished: r.try_get("finished")?,
                seats: Vec::new(),
            });
        }
        if games.is_empty() {
            return Ok(games);
        }
        let ids: Vec<GameId> = games.iter().map(|g| g.id).collect();
        let rows = sqlx::query(
            "SELECT s.game_id, s.seat, s.bot, b.name, s.score, s.rank, s.forfeited
             FROM game_seats s JOIN bots b ON b.id = s.bot WHERE s.game_id = ANY($1)
             ORDER BY s.game_id, s.seat",
        )
        .bind(&ids)
        .fetch_all(&self.pool)
        .await?;
        let mut by_game: HashMap<GameId, Vec<SeatSummary>> = HashMap::new();
        for r in rows {
            by_game
                .entry(r.try_get("game_id")?)
                .or_default()
                .push(SeatSummary {
                    seat: r.try_get("seat")?,
                    bot: r.try_get("bot")?,
                    name: r.try_get("name")?,
                    score: r.try_get("score")?,
                    rank: r.try_get("rank")?,
                    forfeited: r.try_get("forfeited")?,
                });
        }
        for g in &mut games {
            g.seats = by_game.remove(&g.id).unwrap_or_default();
        }
        Ok(games)
    }

    /// Stores finished games in one transaction, rating each in order, as
    /// `start_game` followed by `finish_game` would. Returns their ids.
    pub async fn import_games(&self, games: &[ImportGame]) -> Result<Vec<GameId>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let mut ids = Vec::with_capacity(games.len());
        for g in games {
            if g.bots.len() < 2 {
                continue;
            }
            let e = &g.end;
            let id: GameId = sqlx::query_scalar(
                "INSERT INTO games (game, status, bot1, bot2, seats, seed, started, finished, score1, score2, forfeited_by, record)
                 VALUES ($1, 'finished', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
            )
            .bind(&g.game)
            .bind(g.bots[0])
            .bind(g.bots[1])
            .bind(g.bots.len() as i64)
            .bind(g.seed)
            .bind(&g.started)
            .bind(&e.finished)
            .bind(e.scores.first().copied().flatten())
            .bind(e.scores.get(1).copied().flatten())
            .bind(e.forfeited_by)
            .bind(&e.record)
            .fetch_one(&mut *tx)
            .await?;
            let scores: Vec<Option<i64>> = (0..g.bots.len())
                .map(|seat| e.scores.get(seat).copied().flatten())
                .collect();
            let ranks: Vec<Option<i64>> = (0..g.bots.len())
                .map(|seat| e.ranks.get(seat).map(|r| i64::from(*r)))
                .collect();
            sqlx::query(
                "INSERT INTO game_seats (game_id, seat, bot, score, rank, forfeited)
                 SELECT $1, u.seat - 1, u.bot, u.score, u.rank, u.bot IS NOT DISTINCT FROM $5
                 FROM UNNEST($2::BIGINT[], $3::BIGINT[], $4::BIGINT[]) WITH ORDINALITY
                      AS u(bot, score, rank, seat)",
            )
            .bind(id)
            .bind(&g.bots)
            .bind(&scores)
            .bind(&ranks)
            .bind(e.forfeited_by)
            .execute(&mut *tx)
            .await?;
            super::ratings::record_result(&mut tx, id, e).await?;
            ids.push(id);
        }
        tx.commit().await?;
        Ok(ids)
    }
}

#[async_trait]
impl WebReads for PgStore {
    async fn web_bot(&self, name: &str) -> Result<Option<WebBot>, StoreError> {
        let row = sqlx::query("SELECT id, name, game, kind FROM bots WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(WebBot::from_row).transpose()?)
    }

    async fn owner_name(&self, bot: BotId) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT o.name FROM bots b JOIN owners o ON o.id = b.owner WHERE b.id = $1",
        )
        .bind(bot)
        .fetch_optional(&self.pool)
        .await?)
    }

    async fn all_stats(&self) -> Result<Vec<BotStats>, StoreError> {
        let rows = sqlx::query(&format!(
            "{STATS} ORDER BY s.game, s.conservative DESC, b.name"
        ))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(BotStats::from_row)
            .collect::<Result<_, _>>()?)
    }

    async fn leaderboard(&self, game: &str) -> Result<Vec<BotStats>, StoreError> {
        let rows = sqlx::query(&format!(
            "{STATS} WHERE s.game = $1 ORDER BY s.conservative DESC, b.name"
        ))
        .bind(game)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(BotStats::from_row)
            .collect::<Result<_, _>>()?)
    }

    async fn bot_stats(&self, bot: BotId) -> Result<Vec<BotStats>, StoreError> {
        let rows = sqlx::query(&format!(
            "{STATS} WHERE s.bot = $1 ORDER BY s.games DESC, s.game"
        ))
        .bind(bot)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(BotStats::from_row)
            .collect::<Result<_, _>>()?)
    }

    async fn rating_history(
        &self,
        bot: BotId,
        game: &str,
        limit: i64,
    ) -> Result<Vec<HistoryPoint>, StoreError> {
        let rows = sqlx::query(
            "SELECT h.game_id, h.mu, h.sigma FROM rating_history h JOIN games g ON g.id = h.game_id
             WHERE h.bot = $1 AND g.game = $2 ORDER BY h.game_id DESC LIMIT $3",
        )
        .bind(bot)
        .bind(game)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        let mut points = rows
            .iter()
            .map(|r| {
                Ok(HistoryPoint {
                    game_id: r.try_get("game_id")?,
                    mu: r.try_get("mu")?,
                    sigma: r.try_get("sigma")?,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        points.reverse();
        Ok(points)
    }

    async fn opponents(&self, bot: BotId, limit: i64) -> Result<Vec<PairStats>, StoreError> {
        let rows = sqlx::query(&format!(
            "{PAIRS} WHERE p.bot = $1 ORDER BY p.games DESC, o.name LIMIT $2"
        ))
        .bind(bot)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(PairStats::from_row)
            .collect::<Result<_, _>>()?)
    }

    async fn pair(&self, a: BotId, b: BotId) -> Result<Vec<PairStats>, StoreError> {
        let rows = sqlx::query(&format!(
            "{PAIRS} WHERE p.bot = $1 AND p.opponent = $2 ORDER BY p.game"
        ))
        .bind(a)
        .bind(b)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(PairStats::from_row)
            .collect::<Result<_, _>>()?)
    }

    async fn pairs(&self, game: &str) -> Result<Vec<PairStats>, StoreError> {
        let rows = sqlx::query(&format!(
            "{PAIRS} WHERE p.game = $1 ORDER BY a.name, o.name"
        ))
        .bind(game)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(PairStats::from_row)
            .collect::<Result<_, _>>()?)
    }

    async fn games_page(
        &self,
        filter: &GameFilter,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        let rows = match (&filter.game, filter.bot) {
            (None, None) => {
                sqlx::query(&format!(
                    "{GAMES} WHERE status = 'finished'
                     ORDER BY finished DESC, id DESC LIMIT $1 OFFSET $2"
                ))
                .bind(limit)
                .bind(offset)
                .fetch_all(&self.pool)
                .await?
            }
            (Some(game), None) => {
                sqlx::query(&format!(
                    "{GAMES} WHERE game = $1 AND status = 'finished'
                     ORDER BY finished DESC, id DESC LIMIT $2 OFFSET $3"
                ))
                .bind(game)
                .bind(limit)
                .bind(offset)
                .fetch_all(&self.pool)
                .await?
            }
            (game, Some(bot)) => {
                sqlx::query(
                    "SELECT g.id, g.game, g.status, g.started, g.finished FROM game_seats s
                     JOIN games g ON g.id = s.game_id
                     WHERE s.bot = $1 AND s.rank IS NOT NULL AND g.status = 'finished'
                       AND ($2::TEXT IS NULL OR g.game = $2)
                     ORDER BY g.finished DESC, g.id DESC LIMIT $3 OFFSET $4",
                )
                .bind(bot)
                .bind(game)
                .bind(limit)
                .bind(offset)
                .fetch_all(&self.pool)
                .await?
            }
        };
        self.with_seats(rows).await
    }

    async fn count_finished(&self, filter: &GameFilter) -> Result<i64, StoreError> {
        let n: Option<i64> = match (&filter.game, filter.bot) {
            (game, Some(bot)) => {
                sqlx::query_scalar(
                    "SELECT SUM(games)::BIGINT FROM bot_stats WHERE bot = $1 AND ($2::TEXT IS NULL OR game = $2)",
                )
                .bind(bot)
                .bind(game)
                .fetch_one(&self.pool)
                .await?
            }
            (game, None) => {
                sqlx::query_scalar(
                    "SELECT SUM(games)::BIGINT FROM game_totals WHERE ($1::TEXT IS NULL OR game = $1)",
                )
                .bind(game)
                .fetch_one(&self.pool)
                .await?
            }
        };
        Ok(n.unwrap_or(0))
    }

    async fn versus_games(
        &self,
        a: BotId,
        b: BotId,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        let rows = sqlx::query(
            "SELECT g.id, g.game, g.status, g.started, g.finished FROM game_seats s
             JOIN game_seats t ON t.game_id = s.game_id AND t.bot = $2
             JOIN games g ON g.id = s.game_id
             WHERE s.bot = $1 AND g.status = 'finished' ORDER BY g.finished DESC, g.id DESC LIMIT $3",
        )
        .bind(a)
        .bind(b)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        self.with_seats(rows).await
    }

    async fn running_games(&self, limit: i64) -> Result<Vec<GameSummary>, StoreError> {
        let rows = sqlx::query(&format!(
            "{GAMES} WHERE status = 'running' ORDER BY id DESC LIMIT $1"
        ))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        self.with_seats(rows).await
    }

    async fn game_summary(&self, id: GameId) -> Result<Option<GameSummary>, StoreError> {
        let rows = sqlx::query(&format!("{GAMES} WHERE id = $1"))
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
        Ok(self.with_seats(rows).await?.into_iter().next())
    }

    async fn activity(&self, since: &str) -> Result<Vec<MinuteCount>, StoreError> {
        let rows = sqlx::query(
            "SELECT substr(finished, 1, 16) AS minute, game, COUNT(*) AS games
             FROM games WHERE status = 'finished' AND finished >= $1
             GROUP BY minute, game ORDER BY minute, game",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            out.push(MinuteCount {
                minute: r.try_get("minute")?,
                game: r.try_get("game")?,
                games: r.try_get("games")?,
            });
        }
        Ok(out)
    }

    async fn online_bots(&self, since: &str) -> Result<Vec<(WebBot, bool)>, StoreError> {
        let playing: Vec<BotId> = sqlx::query_scalar(
            "SELECT s.bot FROM games g JOIN game_seats s ON s.game_id = g.id
             WHERE g.status = 'running'",
        )
        .fetch_all(&self.pool)
        .await?;
        let rows = sqlx::query(
            "SELECT id, name, game, kind FROM bots WHERE id IN (
                SELECT s.bot FROM games g JOIN game_seats s ON s.game_id = g.id
                WHERE g.status = 'running'
                UNION SELECT bot FROM bot_stats WHERE last_played >= $1)
             ORDER BY game, name",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let bot = WebBot::from_row(r)?;
            let now = playing.contains(&bot.id);
            out.push((bot, now));
        }
        Ok(out)
    }
}
