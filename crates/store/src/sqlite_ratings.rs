//! SQLite's side of the ratings (`crate::ratings` computes them): what a
//! rated game writes, through rusqlite on the writer's own connection
//! (`sqlite_raw::RawWriter`). Each table is one statement whatever the
//! number of seats.
//!
//! Used by the group-commit writer's finish (`sqlite_batch::finish_game`),
//! by the backlog of games finished before ratings existed and by the
//! import (`sqlite_web`), so a game is rated the same way whichever way it
//! was stored.

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, OptionalExtension};

use crate::ratings::{conservative, ratable, updates, START};
use crate::sqlite_raw::rows;
use crate::{BotId, GameEnd, GameId, StoreError};

/// Rates game `id` of kind `game`, just marked finished in this
/// transaction and found rateable (see `sqlite_batch::finish_game`), if
/// its ranks match its seats and no bot sits twice.
pub(crate) fn rate(
    db: &rusqlite::Connection,
    id: GameId,
    end: &GameEnd,
    game: &str,
) -> Result<(), StoreError> {
    let seated = seats_before(db, game, id)?;
    let bots: Vec<BotId> = seated.iter().map(|s| s.0).collect();
    let Some(ranks) = ratable(&bots, end) else {
        return Ok(());
    };
    let before: Vec<(f64, f64)> = seated.iter().map(|s| s.1).collect();
    write_rated(db, id, end, game, &bots, &ranks, &before)
}

/// Rates finished game `id` (the backlog, an import) unless it does not
/// count: a tournament's game (ratings stay the ladder's), a game a person
/// played, or one rated before (the history row of seat 0's bot). The same
/// rule as the `RETURNING` clause of `sqlite_batch::finish_game` and
/// `postgres::finish::mark`: change all three.
pub(crate) fn rate_finished(
    db: &rusqlite::Connection,
    id: GameId,
    end: &GameEnd,
) -> Result<(), StoreError> {
    let game: Option<String> = db
        .prepare_cached(
            "SELECT game FROM games
             WHERE id = ? AND tournament_id IS NULL
             AND NOT EXISTS (SELECT 1 FROM person_games WHERE game_id = games.id)
             AND NOT EXISTS (SELECT 1 FROM rating_history h JOIN game_seats s ON s.bot = h.bot
                             WHERE s.game_id = games.id AND s.seat = 0 AND h.game_id = games.id)",
        )?
        .query_row(params![id], |r| r.get(0))
        .optional()?;
    match game {
        Some(game) => rate(db, id, end, &game),
        None => Ok(()),
    }
}

/// A seat's bot and its rating (mu, sigma) before a game.
type Seated = (BotId, (f64, f64));

/// Every seat's bot of game `id`, in seat order, with its rating in game
/// kind `game` before this game ([`START`] if it has none): one statement.
fn seats_before(
    db: &rusqlite::Connection,
    game: &str,
    id: GameId,
) -> Result<Vec<Seated>, StoreError> {
    let mut q = db.prepare_cached(
        "SELECT s.bot, b.mu, b.sigma FROM game_seats s
         LEFT JOIN bot_stats b ON b.bot = s.bot AND b.game = ?
         WHERE s.game_id = ? ORDER BY s.seat",
    )?;
    let rows = q.query_map(params![game, id], |r| {
        let (bot, mu, sigma): (BotId, Option<f64>, Option<f64>) = (r.get(0)?, r.get(1)?, r.get(2)?);
        Ok((bot, mu.zip(sigma).unwrap_or(START)))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Writes what rated game `id` of kind `game` changes, given its bots by
/// seat, the ranks they count with and their ratings `before`: ratings and
/// counts, history, head-to-head and the total.
fn write_rated(
    db: &rusqlite::Connection,
    id: GameId,
    end: &GameEnd,
    game: &str,
    bots: &[BotId],
    ranks: &[u8],
    before: &[(f64, f64)],
) -> Result<(), StoreError> {
    let (seats, pairs) = updates(bots, ranks, end.forfeited_by, before);
    let mut values: Vec<Value> = Vec::with_capacity(11 * seats.len());
    for s in &seats {
        values.extend([
            s.bot.into(),
            game.to_owned().into(),
            s.mu.into(),
            s.sigma.into(),
            conservative(s.mu, s.sigma).into(),
            s.win.into(),
            s.loss.into(),
            s.tie.into(),
            s.forfeit.into(),
            id.into(),
            end.finished.clone().into(),
        ]);
    }
    db.prepare_cached(&format!(
        "INSERT INTO bot_stats (bot, game, mu, sigma, conservative, games, wins, losses, ties, forfeits, last_game, last_played)
         VALUES {}
         ON CONFLICT (bot, game) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma,
            conservative = excluded.conservative, games = games + 1,
            wins = wins + excluded.wins, losses = losses + excluded.losses,
            ties = ties + excluded.ties, forfeits = forfeits + excluded.forfeits,
            last_game = excluded.last_game, last_played = excluded.last_played",
        rows("(?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)", seats.len())
    ))?
    .execute(params_from_iter(values))?;
    let values = seats
        .iter()
        .flat_map(|s| [s.bot.into(), id.into(), s.mu.into(), s.sigma.into()])
        .collect::<Vec<Value>>();
    db.prepare_cached(&format!(
        "INSERT INTO rating_history (bot, game_id, mu, sigma) VALUES {}",
        rows("(?, ?, ?, ?)", seats.len())
    ))?
    .execute(params_from_iter(values))?;
    let values = pairs
        .iter()
        .flat_map(|p| {
            [
                p.bot.into(),
                p.opponent.into(),
                game.to_owned().into(),
                p.win.into(),
                p.loss.into(),
                p.tie.into(),
            ]
        })
        .collect::<Vec<Value>>();
    db.prepare_cached(&format!(
        "INSERT INTO pair_stats (bot, opponent, game, games, wins, losses, ties)
         VALUES {}
         ON CONFLICT (bot, opponent, game) DO UPDATE SET games = games + 1,
            wins = wins + excluded.wins, losses = losses + excluded.losses,
            ties = ties + excluded.ties",
        rows("(?, ?, ?, 1, ?, ?, ?)", pairs.len())
    ))?
    .execute(params_from_iter(values))?;
    db.prepare_cached(
        "INSERT INTO game_totals (game, games) VALUES (?, 1)
         ON CONFLICT (game) DO UPDATE SET games = games + 1",
    )?
    .execute(params![game])?;
    Ok(())
}
