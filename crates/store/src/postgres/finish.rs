//! Finished games, a batch at a time (issue 13, speed): the games that one
//! group commit finishes, with their seats, ratings, counts, head-to-head,
//! history and totals, in three statements for the whole batch (they were
//! three per game, one after the other, while every later finishing move
//! waited for the batch).
//!
//! The ratings are computed and written by `super::ratings::write_rated`,
//! in the batch's order.

use std::collections::HashMap;
use std::sync::LazyLock;

use sqlx::{PgConnection, Row};

use super::ratings::{self, Before, ToRate};
use crate::ratings::ratable;
use crate::{BotId, GameEnd, GameId, StoreError};

/// A game of the batch as the first statement found it.
struct Marked {
    game: String,
    bots: Vec<BotId>,
    /// Not a tournament's or a person's game, not rated before.
    rateable: bool,
}

/// Marks each running game of `games` finished and stores its scores; each
/// that is rated (not a tournament's or a person's game, rankable, not
/// rated before) updates ratings, counts, head-to-head and history, in the
/// order given. A game closed meanwhile (its process reaped as lost) stays
/// as it is, unrated; a game that is not there at all is an error (its
/// start was lost), and the caller's transaction fails. The games are
/// counted in row `shard` of `game_totals`. The ids must be distinct.
pub(crate) async fn finish_games(
    tx: &mut PgConnection,
    games: &[(GameId, &GameEnd)],
    shard: i64,
) -> Result<(), StoreError> {
    let marked = mark(tx, games).await?;
    if marked.len() < games.len() {
        let missing: Vec<GameId> = games
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| !marked.contains_key(id))
            .collect();
        all_there(tx, &missing).await?;
    }
    // The games to rate, in the batch's order, with their ranks.
    let rated: Vec<ToRate> = games
        .iter()
        .filter_map(|(id, end)| {
            let m = marked.get(id).filter(|m| m.rateable)?;
            Some(ToRate {
                id: *id,
                end,
                game: &m.game,
                bots: &m.bots,
                ranks: ratable(&m.bots, end)?,
            })
        })
        .collect();
    let before = seats_and_ratings(tx, games, &marked, &rated).await?;
    ratings::write_rated(tx, &rated, before, shard).await?;
    let finished: Vec<GameId> = marked.keys().copied().collect();
    count_listed(tx, &finished, shard).await?;
    Ok(())
}

/// Counts finished games `ids` (their rows and ranked seats written) in
/// their lists' hours and lengths (`finish_hours`, `finish_totals`,
/// migration 0016), their tournament games too (`marked`, migration 0020),
/// in row `shard` of each: one statement for the whole
/// batch, so that a batch or an import updates each row once. The ids
/// must be distinct and not counted before.
pub(super) async fn count_listed(
    tx: &mut PgConnection,
    ids: &[GameId],
    shard: i64,
) -> Result<(), sqlx::Error> {
    if ids.is_empty() {
        return Ok(());
    }
    static COUNT: LazyLock<String> =
        LazyLock::new(|| count_sql(Some(("g.id = ANY($1)", "s.game_id = ANY($1)", "$2"))));
    sqlx::query(&COUNT)
        .bind(ids)
        .bind(shard)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// The statement that adds finished games to their lists' hours and
/// lengths: those that the tests `(game, seats, shard)` pick (the game's
/// row, its seats', and the shard to count in), or every game, in shard 0.
fn count_sql(only: Option<(&str, &str, &str)>) -> String {
    let (game, seats, shard) = only.unwrap_or(("TRUE", "TRUE", "0"));
    format!(
        "WITH c AS (
             SELECT 0 AS bot, g.game, substr(g.finished, 1, 13) AS hour,
                    (g.tournament_id IS NOT NULL)::INT AS marked FROM games g
             WHERE {game} AND g.status = 'finished' AND g.finished IS NOT NULL
             UNION ALL
             SELECT s.bot, g.game, substr(s.finished, 1, 13), (s.tournament_id IS NOT NULL)::INT
             FROM game_seats s
             JOIN games g ON g.id = s.game_id
             WHERE {seats} AND s.finished IS NOT NULL AND s.rank IS NOT NULL),
         hours AS (
             INSERT INTO finish_hours AS h (bot, game, hour, shard, games, marked)
             SELECT c.bot, c.game, c.hour, {shard}, COUNT(*), SUM(c.marked) FROM c
             GROUP BY c.bot, c.game, c.hour
             ON CONFLICT (bot, game, hour, shard)
             DO UPDATE SET games = h.games + EXCLUDED.games, marked = h.marked + EXCLUDED.marked
             RETURNING 1)
         INSERT INTO finish_totals AS t (bot, game, shard, games, marked)
         SELECT c.bot, c.game, {shard}, COUNT(*), SUM(c.marked) FROM c GROUP BY c.bot, c.game
         ON CONFLICT (bot, game, shard)
         DO UPDATE SET games = t.games + EXCLUDED.games, marked = t.marked + EXCLUDED.marked"
    )
}

/// Gives the seats of a tournament game that do not carry its tournament
/// (started by an instance older than migration 0019) their game's.
pub(crate) const MEND_SEATS: &str = "UPDATE game_seats s SET tournament_id = g.tournament_id
     FROM games g WHERE g.id = s.game_id AND s.tournament_id IS DISTINCT FROM g.tournament_id";

/// The statements that count every list's games per hour and in all again
/// from the games, into shard 0 (every shard's rows emptied first), in one
/// transaction. The count tables are locked against writes first, so that
/// a batch of finished games that commits meanwhile adds its counts after
/// these, to games they did not see finished.
pub(crate) fn recount_statements() -> Vec<String> {
    vec![
        "LOCK TABLE finish_hours, finish_totals IN EXCLUSIVE MODE".into(),
        "DELETE FROM finish_hours".into(),
        "DELETE FROM finish_totals".into(),
        count_sql(None),
    ]
}

/// The first statement: every running game of `games` marked finished,
/// with what its rating needs. Games not running are left out.
async fn mark(
    tx: &mut PgConnection,
    games: &[(GameId, &GameEnd)],
) -> Result<HashMap<GameId, Marked>, StoreError> {
    let ids: Vec<GameId> = games.iter().map(|(id, _)| *id).collect();
    let finished: Vec<&str> = games.iter().map(|(_, e)| e.finished.as_str()).collect();
    let score = |seat: usize| -> Vec<Option<i64>> {
        games
            .iter()
            .map(|(_, e)| e.scores.get(seat).copied().flatten())
            .collect()
    };
    let forfeited: Vec<Option<BotId>> = games.iter().map(|(_, e)| e.forfeited_by).collect();
    let records: Vec<&str> = games.iter().map(|(_, e)| e.record.as_str()).collect();
    let facts: Vec<Option<&str>> = games.iter().map(|(_, e)| e.facts.as_deref()).collect();
    let rows = sqlx::query(
        "WITH u AS (SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[],
                                         $5::BIGINT[], $6::TEXT[], $7::TEXT[])
                    AS u(id, finished, score1, score2, forfeited_by, record, facts)),
              g AS (UPDATE games SET status = 'finished', finished = u.finished,
                           score1 = u.score1, score2 = u.score2,
                           forfeited_by = u.forfeited_by, record = u.record, facts = u.facts
                    FROM u WHERE games.id = u.id AND games.status = 'running'
                    RETURNING games.id, games.game, games.tournament_id IS NULL AS untoured)
         SELECT g.id, g.game, g.untoured,
                ARRAY(SELECT bot FROM game_seats WHERE game_id = g.id ORDER BY seat) AS bots,
                EXISTS (SELECT 1 FROM person_games WHERE game_id = g.id) AS person,
                EXISTS (SELECT 1 FROM rating_history h JOIN game_seats s ON s.bot = h.bot
                        WHERE s.game_id = g.id AND s.seat = 0 AND h.game_id = g.id) AS already
         FROM g",
    )
    .bind(&ids)
    .bind(&finished)
    .bind(score(0))
    .bind(score(1))
    .bind(&forfeited)
    .bind(&records)
    .bind(&facts)
    .fetch_all(&mut *tx)
    .await?;
    let mut marked = HashMap::with_capacity(rows.len());
    for row in rows {
        let untoured: bool = row.try_get("untoured")?;
        let person: bool = row.try_get("person")?;
        let already: bool = row.try_get("already")?;
        marked.insert(
            row.try_get::<GameId, _>("id")?,
            Marked {
                game: row.try_get("game")?,
                bots: row.try_get("bots")?,
                rateable: untoured && !person && !already,
            },
        );
    }
    Ok(marked)
}

/// Games that were not running when their end came: closed meanwhile
/// (they stay as they are), or not there at all — their start was lost (a
/// PostgreSQL crash took the last commits that did not wait for the disk,
/// see `PgStore`): an error, so that no bot is told its game is stored.
async fn all_there(tx: &mut PgConnection, ids: &[GameId]) -> Result<(), StoreError> {
    let there: i64 = sqlx::query_scalar("SELECT count(*) FROM games WHERE id = ANY($1)")
        .bind(ids)
        .fetch_one(&mut *tx)
        .await?;
    if there == ids.len() as i64 {
        Ok(())
    } else {
        Err(StoreError::Db(sqlx::Error::RowNotFound))
    }
}

/// The second statement: every finished game's seats get their scores and
/// ranks, and the ratings before the batch of every bot in a rated game
/// are read and locked (in one order, so that two batches never wait for
/// each other in a circle).
async fn seats_and_ratings(
    tx: &mut PgConnection,
    games: &[(GameId, &GameEnd)],
    marked: &HashMap<GameId, Marked>,
    rated: &[ToRate<'_>],
) -> Result<Before, StoreError> {
    let (mut seat_game, mut seat_no, mut seat_score, mut seat_rank, mut seat_forfeit) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut seat_finished: Vec<&str> = Vec::new();
    for (id, end) in games {
        if !marked.contains_key(id) {
            continue;
        }
        for (seat, rank) in end.ranks.iter().enumerate() {
            seat_game.push(*id);
            seat_no.push(seat as i64);
            seat_score.push(end.scores.get(seat).copied().flatten());
            seat_rank.push(i64::from(*rank));
            seat_forfeit.push(end.forfeited_by);
            seat_finished.push(end.finished.as_str());
        }
    }
    let (mut kinds, mut bots) = (Vec::new(), Vec::new());
    for g in rated {
        for b in g.bots {
            kinds.push(g.game);
            bots.push(*b);
        }
    }
    let rows = sqlx::query(
        "WITH s AS (UPDATE game_seats s SET score = u.score, rank = u.rank,
                        forfeited = (s.bot IS NOT DISTINCT FROM u.forfeited_by),
                        finished = u.finished
                    FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::BIGINT[], $4::BIGINT[], $5::BIGINT[],
                                $8::TEXT[])
                         AS u(game_id, seat, score, rank, forfeited_by, finished)
                    WHERE s.game_id = u.game_id AND s.seat = u.seat RETURNING 1)
         SELECT bot, game, mu, sigma FROM bot_stats
         WHERE (game, bot) IN (SELECT * FROM UNNEST($6::TEXT[], $7::BIGINT[]))
         ORDER BY game, bot FOR UPDATE",
    )
    .bind(&seat_game)
    .bind(&seat_no)
    .bind(&seat_score)
    .bind(&seat_rank)
    .bind(&seat_forfeit)
    .bind(&kinds)
    .bind(&bots)
    .bind(&seat_finished)
    .fetch_all(&mut *tx)
    .await?;
    let mut before = HashMap::with_capacity(rows.len());
    for row in rows {
        before.insert(
            (row.try_get("bot")?, row.try_get("game")?),
            (row.try_get("mu")?, row.try_get("sigma")?),
        );
    }
    Ok(before)
}
