//! [`WebReads`] for SQLite, and bulk import of finished games.

use std::collections::HashMap;

use async_trait::async_trait;
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, Row};

use crate::web::{
    BotStats, GameFilter, GameSummary, HistoryPoint, ImportGame, MinuteCount, PairStats,
    SeatSummary, WebBot, WebReads,
};
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, OptionalExtension, TransactionBehavior};

use crate::{BotId, GameId, SqliteStore, StoreError};

const STATS: &str = "SELECT s.bot, b.name, b.kind, s.game, s.mu, s.sigma, s.conservative, s.games,
    s.wins, s.losses, s.ties, s.forfeits, s.last_played FROM bot_stats s JOIN bots b ON b.id = s.bot";

const PAIRS: &str = "SELECT p.bot, a.name AS bot_name, p.opponent, o.name AS opponent_name, p.game,
    p.games, p.wins, p.losses, p.ties FROM pair_stats p JOIN bots a ON a.id = p.bot
    JOIN bots o ON o.id = p.opponent";

const GAMES: &str = "SELECT id, game, status, started, finished FROM games";

impl SqliteStore {
    /// Adds the seats of `rows` (games without seats yet), in one query.
    pub(crate) async fn with_seats(
        &self,
        rows: Vec<SqliteRow>,
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
        let marks = vec!["?"; games.len()].join(",");
        let sql = format!(
            "SELECT s.game_id, s.seat, s.bot, b.name, s.score, s.rank, s.forfeited
             FROM game_seats s JOIN bots b ON b.id = s.bot WHERE s.game_id IN ({marks})
             ORDER BY s.game_id, s.seat"
        );
        let mut q = sqlx::query(&sql);
        for g in &games {
            q = q.bind(g.id);
        }
        let mut by_game: HashMap<GameId, Vec<SeatSummary>> = HashMap::new();
        for r in q.fetch_all(&self.pool).await? {
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

    /// Rates the games finished before ratings existed (listed by migration
    /// 0003 in `ratings_backlog`), oldest first, in transactions of
    /// [`BACKLOG_CHUNK`] games.
    pub(crate) async fn rate_backlog(&self) -> Result<u64, StoreError> {
        let mut rated = 0;
        loop {
            let (done, whole) = self.raw.run(rate_some_of_the_backlog).await?;
            rated += done;
            if !whole {
                return Ok(rated);
            }
        }
    }

    /// Stores finished games in one transaction, rating each in order, as
    /// `start_game` followed by `finish_game` would, except that every
    /// seat gets its score and forfeit flag (and its rank, if it has one),
    /// as on PostgreSQL. Returns their ids. The transaction runs on a
    /// thread for blocking work, which takes `games` with it.
    pub async fn import_games(&self, games: Vec<ImportGame>) -> Result<Vec<GameId>, StoreError> {
        self.raw
            .run_blocking(move |db| {
                let tx = rusqlite::Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
                let mut ids = Vec::with_capacity(games.len());
                for g in games.iter().filter(|g| g.bots.len() >= 2) {
                    let id = import_game(&tx, g)?;
                    crate::sqlite_ratings::rate_finished(&tx, id, &g.end)?;
                    ids.push(id);
                }
                tx.commit()?;
                Ok(ids)
            })
            .await
    }
}

/// How many games of the backlog one transaction rates.
const BACKLOG_CHUNK: usize = 1000;

/// Rates the oldest [`BACKLOG_CHUNK`] games of the backlog in one
/// transaction: how many it rated, and whether the chunk was whole (so
/// that more may wait; the backlog only shrinks).
fn rate_some_of_the_backlog(db: &rusqlite::Connection) -> Result<(u64, bool), StoreError> {
    let tx = rusqlite::Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
    let ids: Vec<GameId> = tx
        .prepare("SELECT game_id FROM ratings_backlog ORDER BY game_id LIMIT ?")?
        .query_map([BACKLOG_CHUNK as i64], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut rated = 0;
    for &id in &ids {
        let row: Option<(Option<String>, Option<BotId>)> = tx
            .prepare_cached("SELECT finished, forfeited_by FROM games WHERE id = ?")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let ranks: Vec<Option<i64>> = tx
            .prepare_cached("SELECT rank FROM game_seats WHERE game_id = ? ORDER BY seat")?
            .query_map([id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let ranks: Option<Vec<u8>> = ranks
            .into_iter()
            .map(|r| r.and_then(|r| u8::try_from(r).ok()))
            .collect();
        if let (Some((finished, forfeited_by)), Some(ranks)) = (row, ranks) {
            let end = crate::GameEnd {
                finished: finished.unwrap_or_default(),
                scores: Vec::new(),
                ranks,
                forfeited_by,
                record: String::new(),
            };
            crate::sqlite_ratings::rate_finished(&tx, id, &end)?;
            rated += 1;
        }
        tx.prepare_cached("DELETE FROM ratings_backlog WHERE game_id = ?")?
            .execute([id])?;
    }
    tx.commit()?;
    Ok((rated, ids.len() == BACKLOG_CHUNK))
}

/// Inserts finished game `g` (at least two bots) and all its seats; its id.
fn import_game(db: &rusqlite::Connection, g: &ImportGame) -> Result<GameId, StoreError> {
    let e = &g.end;
    db.prepare_cached(
        "INSERT INTO games (game, status, bot1, bot2, seats, seed, started, finished, score1, score2, forfeited_by, record)
         VALUES (?, 'finished', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )?
    .execute(params![
        g.game,
        g.bots[0],
        g.bots[1],
        g.bots.len() as i64,
        g.seed,
        g.started,
        e.finished,
        e.scores.first().copied().flatten(),
        e.scores.get(1).copied().flatten(),
        e.forfeited_by,
        e.record
    ])?;
    let id = db.last_insert_rowid();
    let mut values: Vec<Value> = Vec::with_capacity(6 * g.bots.len());
    for (seat, bot) in g.bots.iter().enumerate() {
        values.extend([
            id.into(),
            (seat as i64).into(),
            (*bot).into(),
            e.scores.get(seat).copied().flatten().into(),
            e.ranks.get(seat).map(|r| i64::from(*r)).into(),
            (e.forfeited_by == Some(*bot)).into(),
        ]);
    }
    db.prepare_cached(&format!(
        "INSERT INTO game_seats (game_id, seat, bot, score, rank, forfeited) VALUES {}",
        crate::sqlite_raw::rows("(?, ?, ?, ?, ?, ?)", g.bots.len())
    ))?
    .execute(params_from_iter(values))?;
    Ok(id)
}

#[async_trait]
impl WebReads for SqliteStore {
    async fn web_bot(&self, name: &str) -> Result<Option<WebBot>, StoreError> {
        let row = sqlx::query("SELECT id, name, game, kind FROM bots WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(WebBot::from_row).transpose()?)
    }

    async fn owner_name(&self, bot: BotId) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT o.name FROM bots b JOIN owners o ON o.id = b.owner WHERE b.id = ?",
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
            "{STATS} WHERE s.game = ? ORDER BY s.conservative DESC, b.name"
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
            "{STATS} WHERE s.bot = ? ORDER BY s.games DESC, s.game"
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
             WHERE h.bot = ? AND g.game = ? ORDER BY h.game_id DESC LIMIT ?",
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

    async fn rating_histories(
        &self,
        game: &str,
        limit: i64,
    ) -> Result<Vec<(BotId, Vec<HistoryPoint>)>, StoreError> {
        // Per bot, the correlated subquery walks its history backwards on
        // the primary key and stops after `limit` rows of this game.
        let rows = sqlx::query(
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
        for r in &rows {
            let bot: BotId = r.try_get("bot")?;
            let point = HistoryPoint {
                game_id: r.try_get("game_id")?,
                mu: r.try_get("mu")?,
                sigma: r.try_get("sigma")?,
            };
            match out.last_mut() {
                Some((b, points)) if *b == bot => points.push(point),
                _ => out.push((bot, vec![point])),
            }
        }
        Ok(out)
    }

    async fn opponents(&self, bot: BotId, limit: i64) -> Result<Vec<PairStats>, StoreError> {
        let rows = sqlx::query(&format!(
            "{PAIRS} WHERE p.bot = ? ORDER BY p.games DESC, o.name LIMIT ?"
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
            "{PAIRS} WHERE p.bot = ? AND p.opponent = ? ORDER BY p.game"
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
        let rows = sqlx::query(&format!("{PAIRS} WHERE p.game = ? ORDER BY a.name, o.name"))
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
        // A bot that played only the filtered game needs no game filter.
        let mut game = filter.game.clone();
        if let (Some(g), Some(bot)) = (&game, filter.bot) {
            let others: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM bot_stats WHERE bot = ? AND game != ?")
                    .bind(bot)
                    .bind(g)
                    .fetch_one(&self.pool)
                    .await?;
            if others == 0 {
                game = None;
            }
        }
        let rows = match (game, filter.bot) {
            (None, None) => {
                sqlx::query(&format!(
                    "{GAMES} INDEXED BY games_finished_order WHERE status = 'finished'
                     ORDER BY finished DESC, id DESC LIMIT ? OFFSET ?"
                ))
                .bind(limit)
                .bind(offset)
                .fetch_all(&self.pool)
                .await?
            }
            (Some(game), None) => {
                sqlx::query(&format!(
                "{GAMES} INDEXED BY games_finished_order_by_game WHERE game = ? AND status = 'finished'
                     ORDER BY finished DESC, id DESC LIMIT ? OFFSET ?"
            ))
                .bind(game)
                .bind(limit)
                .bind(offset)
                .fetch_all(&self.pool)
                .await?
            }
            (None, Some(bot)) => {
                // The bot's finished games from the covering index, sorted by
                // finish time: this reads one bot's games, not all games.
                sqlx::query(
                    "SELECT g.id, g.game, g.status, g.started, g.finished
                     FROM game_seats s INDEXED BY game_seats_finished_by_bot
                     JOIN games g ON g.id = s.game_id
                     WHERE s.bot = ? AND s.rank IS NOT NULL AND g.status = 'finished'
                     ORDER BY g.finished DESC, g.id DESC LIMIT ? OFFSET ?",
                )
                .bind(bot)
                .bind(limit)
                .bind(offset)
                .fetch_all(&self.pool)
                .await?
            }
            (Some(game), Some(bot)) => {
                sqlx::query(
                    "SELECT g.id, g.game, g.status, g.started, g.finished FROM game_seats s
                     JOIN games g ON g.id = s.game_id
                     WHERE s.bot = ? AND s.rank IS NOT NULL AND g.status = 'finished' AND g.game = ?
                     ORDER BY g.finished DESC, g.id DESC LIMIT ? OFFSET ?",
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
        let n: Option<i64> =
            match (&filter.game, filter.bot) {
                (game, Some(bot)) => sqlx::query_scalar(
                    "SELECT SUM(games) FROM bot_stats WHERE bot = ?1 AND (?2 IS NULL OR game = ?2)",
                )
                .bind(bot)
                .bind(game)
                .fetch_one(&self.pool)
                .await?,
                (game, None) => {
                    sqlx::query_scalar(
                        "SELECT SUM(games) FROM game_totals WHERE (?1 IS NULL OR game = ?1)",
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
             JOIN game_seats t ON t.game_id = s.game_id AND t.bot = ?2
             JOIN games g ON g.id = s.game_id
             WHERE s.bot = ?1 AND g.status = 'finished' ORDER BY g.finished DESC, g.id DESC LIMIT ?3",
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
            "{GAMES} WHERE status = 'running' ORDER BY id DESC LIMIT ?"
        ))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        self.with_seats(rows).await
    }

    async fn game_summary(&self, id: GameId) -> Result<Option<GameSummary>, StoreError> {
        let rows = sqlx::query(&format!("{GAMES} WHERE id = ?"))
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
        Ok(self.with_seats(rows).await?.into_iter().next())
    }

    async fn activity(&self, since: &str) -> Result<Vec<MinuteCount>, StoreError> {
        let rows = sqlx::query(
            "SELECT substr(finished, 1, 16) AS minute, game, COUNT(*) AS games
             FROM games INDEXED BY games_finished_at
             WHERE status = 'finished' AND finished >= ? GROUP BY minute, game ORDER BY minute",
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
                UNION SELECT bot FROM bot_stats WHERE last_played >= ?)
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
