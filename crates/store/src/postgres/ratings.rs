//! [`crate::ratings`] in PostgreSQL: the same updates, each table written
//! by one statement over arrays (a round trip per table, not per seat).
//!
//! Imported games ([`record_result`]); games finished live go a batch at
//! a time through `super::finish`.

use std::collections::HashMap;

use sqlx::PgConnection;

use crate::ratings::{conservative, updates, START};
use crate::{BotId, GameEnd, GameId};

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
