//! Finished games stored in bulk on PostgreSQL (demo data, benchmarks):
//! each game's row, its seats from arrays, and its ratings, all in one
//! transaction.

use sqlx::PgPool;

use crate::web::ImportGame;
use crate::{GameId, StoreError};

/// Stores finished games in one transaction, as `PgStore::import_games`
/// says: each game and its seats in two statements, then its ratings; at
/// the end, the games counted in their lists in one statement.
pub(crate) async fn import_games(
    pool: &PgPool,
    games: &[ImportGame],
) -> Result<Vec<GameId>, StoreError> {
    let mut tx = pool.begin().await?;
    let mut ids = Vec::with_capacity(games.len());
    for g in games {
        if g.bots.len() < 2 {
            continue;
        }
        let e = &g.end;
        let id: GameId = sqlx::query_scalar(
            "INSERT INTO games (game, status, bot1, bot2, seats, seed, started, finished, score1, score2, forfeited_by, record, facts,
                                tournament_id)
             VALUES ($1, 'finished', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id",
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
        .bind(&e.facts)
        .bind(g.tournament)
        .fetch_one(&mut *tx)
        .await?;
        let scores: Vec<Option<i64>> = (0..g.bots.len())
            .map(|seat| e.scores.get(seat).copied().flatten())
            .collect();
        let ranks: Vec<Option<i64>> = (0..g.bots.len())
            .map(|seat| e.ranks.get(seat).map(|r| i64::from(*r)))
            .collect();
        sqlx::query(
            "INSERT INTO game_seats (game_id, seat, bot, score, rank, forfeited, finished, tournament_id)
             SELECT $1, u.seat - 1, u.bot, u.score, u.rank, u.bot IS NOT DISTINCT FROM $5,
                    CASE WHEN u.rank IS NOT NULL THEN $6 END, $7
             FROM UNNEST($2::BIGINT[], $3::BIGINT[], $4::BIGINT[]) WITH ORDINALITY
                  AS u(bot, score, rank, seat)",
        )
        .bind(id)
        .bind(&g.bots)
        .bind(&scores)
        .bind(&ranks)
        .bind(e.forfeited_by)
        .bind(&e.finished)
        .bind(g.tournament)
        .execute(&mut *tx)
        .await?;
        super::ratings::record_result(&mut tx, id, e).await?;
        ids.push(id);
    }
    // Imports count in row 0, as `game_totals` does.
    super::finish::count_listed(&mut tx, &ids, 0).await?;
    tx.commit().await?;
    Ok(ids)
}
