//! Finished games stored in bulk on SQLite, through the writer's own
//! connection (`sqlite_raw::RawWriter`): imports ([`import_games`]: demo
//! data, benchmarks) and, once on open, the games finished before ratings
//! existed ([`rate_backlog`]).

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, OptionalExtension, TransactionBehavior};

use crate::sqlite_raw::RawWriter;
use crate::web::ImportGame;
use crate::{BotId, GameId, StoreError};

/// Rates the games finished before ratings existed (listed by migration
/// 0003 in `ratings_backlog`), oldest first, in transactions of
/// [`BACKLOG_CHUNK`] games.
pub(crate) async fn rate_backlog(raw: &RawWriter) -> Result<u64, StoreError> {
    let mut rated = 0;
    loop {
        let (done, whole) = raw.run(rate_some_of_the_backlog).await?;
        rated += done;
        if !whole {
            return Ok(rated);
        }
    }
}

/// Stores finished games in one transaction on the writer's own
/// connection, as `SqliteStore::import_games` says.
pub(crate) async fn import_games(
    raw: &RawWriter,
    games: Vec<ImportGame>,
) -> Result<Vec<GameId>, StoreError> {
    raw.run_blocking(move |db| {
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
                facts: None,
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
        "INSERT INTO games (game, status, bot1, bot2, seats, seed, started, finished, score1, score2, forfeited_by, record, facts,
                            tournament_id)
         VALUES (?, 'finished', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        e.record,
        e.facts,
        g.tournament
    ])?;
    let id = db.last_insert_rowid();
    let mut values: Vec<Value> = Vec::with_capacity(8 * g.bots.len());
    for (seat, bot) in g.bots.iter().enumerate() {
        let rank = e.ranks.get(seat).map(|r| i64::from(*r));
        values.extend([
            id.into(),
            (seat as i64).into(),
            (*bot).into(),
            e.scores.get(seat).copied().flatten().into(),
            rank.into(),
            (e.forfeited_by == Some(*bot)).into(),
            rank.map(|_| e.finished.clone()).into(),
            g.tournament.into(),
        ]);
    }
    db.prepare_cached(&format!(
        "INSERT INTO game_seats (game_id, seat, bot, score, rank, forfeited, finished, tournament_id) VALUES {}",
        crate::sqlite_raw::rows("(?, ?, ?, ?, ?, ?, ?, ?)", g.bots.len())
    ))?
    .execute(params_from_iter(values))?;
    if let Some(t) = g.tournament {
        let [seats, ranks, faults, scores] = g.plan_texts();
        db.prepare_cached(
            "INSERT INTO tournament_games (tournament_id, round, table_no, game_no, seats, seed, status,
                                           game_id, ranks, faults, scores)
             VALUES (?1, 1, (SELECT COALESCE(MAX(table_no), -1) + 1 FROM tournament_games
                             WHERE tournament_id = ?1 AND round = 1),
                     0, ?2, ?3, 'done', ?4, ?5, ?6, ?7)",
        )?
        .execute(params![t, seats, g.seed, id, ranks, faults, scores])?;
        // Its round 1 is under way (its games are counted in the standings).
        db.prepare_cached(
            "UPDATE tournaments SET current_round = 1 WHERE id = ? AND current_round < 1",
        )?
        .execute([t])?;
    }
    crate::sqlite_raw::count_listed(db, id)?;
    Ok(id)
}
