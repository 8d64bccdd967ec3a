//! Finished games stored in bulk on PostgreSQL (demo data, benchmarks):
//! the games, their seats, their ratings and their counts, each in one
//! statement for the whole batch, in one transaction.

use sqlx::{PgConnection, PgPool};

use super::ratings::{self, Before, ToRate};
use crate::ratings::ratable;
use crate::web::ImportGame;
use crate::{BotId, GameId, StoreError};

/// Stores finished games in one transaction, as `PgStore::import_games`
/// says: their ids first (in the order given, ascending), then every game,
/// every seat, the ratings of those rated (in the order given, as one game
/// after another would be) and the lists' counts, a statement each. It
/// used to take three statements and six queries per game, one after the
/// other (about 600 games a second here).
pub(crate) async fn import_games(
    pool: &PgPool,
    games: &[ImportGame],
) -> Result<Vec<GameId>, StoreError> {
    let games: Vec<&ImportGame> = games.iter().filter(|g| g.bots.len() >= 2).collect();
    if games.is_empty() {
        return Ok(Vec::new());
    }
    let mut tx = pool.begin().await?;
    let ids = new_ids(&mut tx, games.len()).await?;
    hold_tournaments(&mut tx, &games).await?;
    insert_games(&mut tx, &ids, &games).await?;
    insert_seats(&mut tx, &ids, &games).await?;
    insert_plans(&mut tx, &ids, &games).await?;
    // Tournament games are not rated, as a finished one is not; a fresh
    // import holds no person's game and no game rated before. (The rule of
    // `super::finish::mark`, which finds those in the tables.)
    let rated: Vec<ToRate> = ids
        .iter()
        .zip(&games)
        .filter(|(_, g)| g.tournament.is_none())
        .filter_map(|(id, g)| {
            Some(ToRate {
                id: *id,
                end: &g.end,
                game: &g.game,
                bots: &g.bots,
                ranks: ratable(&g.bots, &g.end)?,
            })
        })
        .collect();
    let before = ratings_before(&mut tx, &rated).await?;
    ratings::write_rated(&mut tx, &rated, before, 0).await?;
    // Imports count in row 0, as `game_totals` does.
    super::finish::count_listed(&mut tx, &ids, 0).await?;
    tx.commit().await?;
    Ok(ids)
}

/// `n` new game ids from the games' own sequence, ascending, so that the
/// games keep the order given (lists break ties of finish time by id).
async fn new_ids(tx: &mut PgConnection, n: usize) -> Result<Vec<GameId>, sqlx::Error> {
    let mut ids: Vec<GameId> = sqlx::query_scalar(
        "SELECT nextval(pg_get_serial_sequence('games', 'id')) FROM generate_series(1, $1)",
    )
    .bind(n as i64)
    .fetch_all(&mut *tx)
    .await?;
    ids.sort_unstable();
    Ok(ids)
}

/// Every game's row, finished, in one statement.
async fn insert_games(
    tx: &mut PgConnection,
    ids: &[GameId],
    games: &[&ImportGame],
) -> Result<(), sqlx::Error> {
    let column = |f: &dyn Fn(&ImportGame) -> Option<i64>| -> Vec<Option<i64>> {
        games.iter().map(|g| f(g)).collect()
    };
    let kinds: Vec<&str> = games.iter().map(|g| g.game.as_str()).collect();
    let started: Vec<&str> = games.iter().map(|g| g.started.as_str()).collect();
    let finished: Vec<&str> = games.iter().map(|g| g.end.finished.as_str()).collect();
    let records: Vec<&str> = games.iter().map(|g| g.end.record.as_str()).collect();
    let facts: Vec<Option<&str>> = games.iter().map(|g| g.end.facts.as_deref()).collect();
    let seats: Vec<i64> = games.iter().map(|g| g.bots.len() as i64).collect();
    let seeds: Vec<i64> = games.iter().map(|g| g.seed).collect();
    sqlx::query(
        "INSERT INTO games (id, game, status, bot1, bot2, seats, seed, started, finished,
                            score1, score2, forfeited_by, record, facts, tournament_id)
         SELECT u.id, u.game, 'finished', u.bot1, u.bot2, u.seats, u.seed, u.started, u.finished,
                u.score1, u.score2, u.forfeited_by, u.record, u.facts, u.tournament_id
         FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[], $5::BIGINT[],
                     $6::BIGINT[], $7::TEXT[], $8::TEXT[], $9::BIGINT[], $10::BIGINT[],
                     $11::BIGINT[], $12::TEXT[], $13::TEXT[], $14::BIGINT[])
              AS u(id, game, bot1, bot2, seats, seed, started, finished, score1, score2,
                   forfeited_by, record, facts, tournament_id)",
    )
    .bind(ids)
    .bind(&kinds)
    .bind(column(&|g| g.bots.first().copied()))
    .bind(column(&|g| g.bots.get(1).copied()))
    .bind(&seats)
    .bind(&seeds)
    .bind(&started)
    .bind(&finished)
    .bind(column(&|g| g.end.scores.first().copied().flatten()))
    .bind(column(&|g| g.end.scores.get(1).copied().flatten()))
    .bind(column(&|g| g.end.forfeited_by))
    .bind(&records)
    .bind(&facts)
    .bind(column(&|g| g.tournament))
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Every game's seats in one statement: each with its score, and its rank
/// and finish time where the game ranks it; a seat is forfeited when its
/// bot is the one that forfeited.
async fn insert_seats(
    tx: &mut PgConnection,
    ids: &[GameId],
    games: &[&ImportGame],
) -> Result<(), sqlx::Error> {
    let mut game_id = Vec::new();
    let mut seat_no = Vec::new();
    let mut bot = Vec::new();
    let mut score = Vec::new();
    let mut rank = Vec::new();
    let mut forfeited = Vec::new();
    let mut finished: Vec<Option<&str>> = Vec::new();
    let mut tournament = Vec::new();
    for (id, g) in ids.iter().zip(games) {
        let e = &g.end;
        for (seat, b) in g.bots.iter().enumerate() {
            let r = e.ranks.get(seat).map(|r| i64::from(*r));
            game_id.push(*id);
            seat_no.push(seat as i64);
            bot.push(*b);
            score.push(e.scores.get(seat).copied().flatten());
            rank.push(r);
            forfeited.push(e.forfeited_by == Some(*b));
            finished.push(r.map(|_| e.finished.as_str()));
            tournament.push(g.tournament);
        }
    }
    sqlx::query(
        "INSERT INTO game_seats (game_id, seat, bot, score, rank, forfeited, finished, tournament_id)
         SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::BIGINT[], $4::BIGINT[],
                              $5::BIGINT[], $6::BOOLEAN[], $7::TEXT[], $8::BIGINT[])",
    )
    .bind(&game_id)
    .bind(&seat_no)
    .bind(&bot)
    .bind(&score)
    .bind(&rank)
    .bind(&forfeited)
    .bind(&finished)
    .bind(&tournament)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The tournaments the games were played in, held (in one order, before
/// any game names them: the games' foreign key would share their rows
/// first) so that an import beside another into the same tournament waits
/// for it instead of taking the same table numbers; their round 1 is under
/// way (its games count in the standings).
async fn hold_tournaments(tx: &mut PgConnection, games: &[&ImportGame]) -> Result<(), sqlx::Error> {
    let mut tournaments: Vec<i64> = games.iter().filter_map(|g| g.tournament).collect();
    if tournaments.is_empty() {
        return Ok(());
    }
    tournaments.sort_unstable();
    tournaments.dedup();
    sqlx::query("SELECT id FROM tournaments WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE")
        .bind(&tournaments)
        .fetch_all(&mut *tx)
        .await?;
    sqlx::query(
        "UPDATE tournaments SET current_round = GREATEST(current_round, 1) WHERE id = ANY($1)",
    )
    .bind(&tournaments)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Every tournament game's planned game, done, in round 1 at the
/// tournament's next tables in the order given (see
/// [`ImportGame::tournament`]), in one statement.
async fn insert_plans(
    tx: &mut PgConnection,
    ids: &[GameId],
    games: &[&ImportGame],
) -> Result<(), sqlx::Error> {
    let (mut tournament, mut game_id, mut seed) = (Vec::new(), Vec::new(), Vec::new());
    let (mut seats, mut ranks, mut faults, mut scores) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (id, g) in ids.iter().zip(games) {
        let Some(t) = g.tournament else { continue };
        let [s, r, f, sc] = g.plan_texts();
        tournament.push(t);
        game_id.push(*id);
        seed.push(g.seed);
        seats.push(s);
        ranks.push(r);
        faults.push(f);
        scores.push(sc);
    }
    if tournament.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO tournament_games (tournament_id, round, table_no, game_no, seats, seed, status,
                                       game_id, ranks, faults, scores)
         SELECT u.t, 1,
                COALESCE((SELECT MAX(x.table_no) FROM tournament_games x
                          WHERE x.tournament_id = u.t AND x.round = 1), -1)
                  + ROW_NUMBER() OVER (PARTITION BY u.t ORDER BY u.n),
                0, u.seats, u.seed, 'done', u.game_id, u.ranks, u.faults, u.scores
         FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[], $5::TEXT[], $6::TEXT[],
                     $7::TEXT[])
              WITH ORDINALITY AS u(t, seats, seed, game_id, ranks, faults, scores, n)",
    )
    .bind(&tournament)
    .bind(&seats)
    .bind(&seed)
    .bind(&game_id)
    .bind(&ranks)
    .bind(&faults)
    .bind(&scores)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The ratings before the import of every bot in a rated game, read and
/// locked in one order (as a batch of finished games locks them).
async fn ratings_before(
    tx: &mut PgConnection,
    rated: &[ToRate<'_>],
) -> Result<Before, sqlx::Error> {
    let (mut kinds, mut bots): (Vec<&str>, Vec<BotId>) = (Vec::new(), Vec::new());
    for g in rated {
        for b in g.bots {
            kinds.push(g.game);
            bots.push(*b);
        }
    }
    let rows: Vec<(BotId, String, f64, f64)> = sqlx::query_as(
        "SELECT bot, game, mu, sigma FROM bot_stats
         WHERE (game, bot) IN (SELECT * FROM UNNEST($1::TEXT[], $2::BIGINT[]))
         ORDER BY game, bot FOR UPDATE",
    )
    .bind(&kinds)
    .bind(&bots)
    .fetch_all(&mut *tx)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(bot, game, mu, sigma)| ((bot, game), (mu, sigma)))
        .collect())
}
