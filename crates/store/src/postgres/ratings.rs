//! [`crate::ratings`] in PostgreSQL: the same updates, each table written
//! by one statement over arrays (a round trip per table, not per seat).
//!
//! A game finished live ([`finish_game`], issue 13, speed): its row, its
//! seats, ratings, counts, head-to-head and history in three statements
//! (they were eleven round trips, one after the other, in the writer that
//! every finished game waits for). Imported games use [`record_result`].

use std::collections::HashMap;

use sqlx::{PgConnection, Row};

use crate::ratings::{conservative, ratable, updates, START};
use crate::{BotId, GameEnd, GameId, StoreError};

crate::ratings::rated_game_fn!(PgConnection);

/// Updates ratings, counts, head-to-head and history for finished game
/// `id` (already marked finished in this transaction).
pub(crate) async fn record_result(
    tx: &mut PgConnection,
    id: GameId,
    end: &GameEnd,
) -> Result<(), sqlx::Error> {
    let Some((game, bots, ranks)) = rated_game(tx, id, end).await? else {
        return Ok(());
    };
    let rows: Vec<(BotId, f64, f64)> = sqlx::query_as(
        "SELECT bot, mu, sigma FROM bot_stats WHERE game = $1 AND bot = ANY($2) FOR UPDATE",
    )
    .bind(&game)
    .bind(&bots)
    .fetch_all(&mut *tx)
    .await?;
    let known: HashMap<BotId, (f64, f64)> = rows.into_iter().map(|(b, m, s)| (b, (m, s))).collect();
    let before: Vec<(f64, f64)> = bots
        .iter()
        .map(|b| known.get(b).copied().unwrap_or(START))
        .collect();
    write_rated(tx, &game, id, end, &bots, &ranks, &before, 0).await
}

/// Marks running game `id` finished and stores its scores; if it is rated
/// (not a tournament game, not a person's game, rankable, not rated
/// before), updates ratings, counts, head-to-head and history. A game
/// closed meanwhile (its process reaped as lost) stays as it is, unrated.
/// The game is counted in row `shard` of `game_totals` (the process's id;
/// migration 0011).
pub(crate) async fn finish_game(
    tx: &mut PgConnection,
    id: GameId,
    end: &GameEnd,
    shard: i64,
) -> Result<(), StoreError> {
    // The row, and what the rating needs, in one statement.
    let marked = sqlx::query(
        "WITH g AS (UPDATE games SET status = 'finished', finished = $1, score1 = $2, score2 = $3,
                           forfeited_by = $4, record = $5
                    WHERE id = $6 AND status = 'running'
                    RETURNING game, tournament_id IS NULL AS untoured)
         SELECT g.game, g.untoured,
                ARRAY(SELECT bot FROM game_seats WHERE game_id = $6 ORDER BY seat) AS bots,
                EXISTS (SELECT 1 FROM person_games WHERE game_id = $6) AS person,
                EXISTS (SELECT 1 FROM rating_history h JOIN game_seats s ON s.bot = h.bot
                        WHERE s.game_id = $6 AND s.seat = 0 AND h.game_id = $6) AS already
         FROM g",
    )
    .bind(&end.finished)
    .bind(end.scores.first().copied().flatten())
    .bind(end.scores.get(1).copied().flatten())
    .bind(end.forfeited_by)
    .bind(&end.record)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(marked) = marked else {
        return not_running(tx, id).await;
    };
    let game: String = marked.try_get("game")?;
    let bots: Vec<BotId> = marked.try_get("bots")?;
    let rated = marked.try_get::<bool, _>("untoured")?
        && !marked.try_get::<bool, _>("person")?
        && !marked.try_get::<bool, _>("already")?;
    let ranks = if rated { ratable(&bots, end) } else { None };
    // Every seat that has a rank; with the ratings before, locked.
    let scores: Vec<Option<i64>> = (0..end.ranks.len())
        .map(|seat| end.scores.get(seat).copied().flatten())
        .collect();
    let seat_ranks: Vec<i64> = end.ranks.iter().map(|r| i64::from(*r)).collect();
    let seats = sqlx::query(
        "WITH s AS (UPDATE game_seats s SET score = u.score, rank = u.rank,
                        forfeited = (s.bot IS NOT DISTINCT FROM $4)
                    FROM UNNEST($2::BIGINT[], $3::BIGINT[]) WITH ORDINALITY AS u(score, rank, seat)
                    WHERE s.game_id = $1 AND s.seat = u.seat - 1 RETURNING 1)
         SELECT bot, mu, sigma FROM bot_stats WHERE $5 AND game = $6 AND bot = ANY($7) FOR UPDATE",
    )
    .bind(id)
    .bind(&scores)
    .bind(&seat_ranks)
    .bind(end.forfeited_by)
    .bind(ranks.is_some())
    .bind(&game)
    .bind(&bots);
    let rows: Vec<(BotId, f64, f64)> = seats
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .collect::<Result<_, sqlx::Error>>()?;
    let Some(ranks) = ranks else {
        return Ok(());
    };
    let known: HashMap<BotId, (f64, f64)> = rows.into_iter().map(|(b, m, s)| (b, (m, s))).collect();
    let before: Vec<(f64, f64)> = bots
        .iter()
        .map(|b| known.get(b).copied().unwrap_or(START))
        .collect();
    write_rated(tx, &game, id, end, &bots, &ranks, &before, shard).await?;
    Ok(())
}

/// Ratings and counts, history, head-to-head and the game's total for rated
/// game `id` of kind `game` (seats `bots` with `ranks`, their ratings
/// `before`): one statement, each table once; counted in row `shard` of
/// `game_totals`.
#[allow(clippy::too_many_arguments)]
async fn write_rated(
    tx: &mut PgConnection,
    game: &str,
    id: GameId,
    end: &GameEnd,
    bots: &[BotId],
    ranks: &[u8],
    before: &[(f64, f64)],
    shard: i64,
) -> Result<(), sqlx::Error> {
    let (seats, pairs) = updates(bots, ranks, end.forfeited_by, before);
    let col = |f: fn(&crate::ratings::SeatUpdate) -> i64| seats.iter().map(f).collect::<Vec<_>>();
    let pcol = |f: fn(&crate::ratings::PairUpdate) -> i64| pairs.iter().map(f).collect::<Vec<_>>();
    let mus: Vec<f64> = seats.iter().map(|s| s.mu).collect();
    let sigmas: Vec<f64> = seats.iter().map(|s| s.sigma).collect();
    let cons: Vec<f64> = seats.iter().map(|s| conservative(s.mu, s.sigma)).collect();
    // Ratings and counts, history, head-to-head and the total: one
    // statement (each table once).
    sqlx::query(
        "WITH stats AS (
            INSERT INTO bot_stats AS s (bot, game, mu, sigma, conservative, games, wins, losses, ties, forfeits, last_game, last_played)
            SELECT u.bot, $1, u.mu, u.sigma, u.cons, 1, u.win, u.loss, u.tie, u.forfeit, $2, $3
            FROM UNNEST($4::BIGINT[], $5::FLOAT8[], $6::FLOAT8[], $7::FLOAT8[], $8::BIGINT[], $9::BIGINT[], $10::BIGINT[], $11::BIGINT[])
                 AS u(bot, mu, sigma, cons, win, loss, tie, forfeit)
            ON CONFLICT (bot, game) DO UPDATE SET mu = EXCLUDED.mu, sigma = EXCLUDED.sigma,
               conservative = EXCLUDED.conservative, games = s.games + 1,
               wins = s.wins + EXCLUDED.wins, losses = s.losses + EXCLUDED.losses,
               ties = s.ties + EXCLUDED.ties, forfeits = s.forfeits + EXCLUDED.forfeits,
               last_game = EXCLUDED.last_game, last_played = EXCLUDED.last_played
            RETURNING 1),
          history AS (
            INSERT INTO rating_history (bot, game_id, mu, sigma)
            SELECT u.bot, $2, u.mu, u.sigma FROM UNNEST($4::BIGINT[], $5::FLOAT8[], $6::FLOAT8[]) AS u(bot, mu, sigma)
            RETURNING 1),
          pairs AS (
            INSERT INTO pair_stats AS p (bot, opponent, game, games, wins, losses, ties)
            SELECT u.bot, u.opponent, $1, 1, u.win, u.loss, u.tie
            FROM UNNEST($12::BIGINT[], $13::BIGINT[], $14::BIGINT[], $15::BIGINT[], $16::BIGINT[])
                 AS u(bot, opponent, win, loss, tie)
            ON CONFLICT (bot, opponent, game) DO UPDATE SET games = p.games + 1,
               wins = p.wins + EXCLUDED.wins, losses = p.losses + EXCLUDED.losses,
               ties = p.ties + EXCLUDED.ties
            RETURNING 1)
         INSERT INTO game_totals AS t (game, shard, games) VALUES ($1, $17, 1)
         ON CONFLICT (game, shard) DO UPDATE SET games = t.games + 1",
    )
    .bind(game)
    .bind(id)
    .bind(&end.finished)
    .bind(col(|s| s.bot))
    .bind(&mus)
    .bind(&sigmas)
    .bind(&cons)
    .bind(col(|s| s.win))
    .bind(col(|s| s.loss))
    .bind(col(|s| s.tie))
    .bind(col(|s| s.forfeit))
    .bind(pcol(|p| p.bot))
    .bind(pcol(|p| p.opponent))
    .bind(pcol(|p| p.win))
    .bind(pcol(|p| p.loss))
    .bind(pcol(|p| p.tie))
    .bind(shard)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// A game that was not running when its end came: closed meanwhile (it
/// stays as it is), or not there at all — its start was lost (a
/// PostgreSQL crash took the last commits that did not wait for the
/// disk, see `PgStore`): an error, so that no bot is told its game is
/// stored.
async fn not_running(tx: &mut PgConnection, id: GameId) -> Result<(), StoreError> {
    let there: Option<i64> = sqlx::query_scalar("SELECT id FROM games WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    match there {
        Some(_) => Ok(()),
        None => Err(StoreError::Db(sqlx::Error::RowNotFound)),
    }
}
