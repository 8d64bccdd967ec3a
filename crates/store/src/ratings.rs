//! Ratings and statistics kept beside every finished game: a Weng-Lin
//! (Bayesian, TrueSkill-like) rating per bot and game kind, W/L/T/forfeit
//! counts, head-to-head counts per pair, and a rating history.
//!
//! A game is rated inside the transaction that marks it finished, so a
//! stored game and its effect on the ratings are never apart: on SQLite by
//! `sqlite_batch::finish_game` (or [`record_result`] for the backlog and
//! imports), both writing through [`write_rated`]; on PostgreSQL by
//! `postgres::finish`.
//!
//! How a game counts:
//! - ranks come from [`GameEnd::ranks`] (1 = best, equal ranks tie); each seat
//!   is a one-player team of `weng_lin_multi_team`, so 2 to 4 seats work;
//! - a forfeit: the forfeiting bot ranks last and every other seat ties for
//!   first, whatever ranks the game reported (the rules already say so for
//!   SkullWhist and Goofspiel: `Outcome::forfeit`), so it is a loss for the
//!   forfeiting bot only;
//! - win = sole first place; tie = first place shared; loss = otherwise;
//! - head to head, every pair of seats counts once: the better rank wins.
//!
//! A game with the same bot in two seats, or with ranks that do not match
//! its seats, is stored but not rated (a rating against oneself means
//! nothing).

use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::MultiTeamOutcome;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use crate::{BotId, GameEnd, GameId};

/// The rating a bot starts with.
pub const START: (f64, f64) = (25.0, 25.0 / 3.0);

/// The rank each seat counts with: a forfeit puts the forfeiting seat last
/// and the others first together.
pub fn effective_ranks(bots: &[BotId], end: &GameEnd) -> Vec<u8> {
    match end.forfeited_by {
        Some(f) if bots.contains(&f) => bots.iter().map(|b| if *b == f { 2 } else { 1 }).collect(),
        _ => end.ranks.clone(),
    }
}

/// New (mu, sigma) for every seat after a game with `ranks`.
pub fn rate(before: &[(f64, f64)], ranks: &[u8]) -> Vec<(f64, f64)> {
    let teams: Vec<[WengLinRating; 1]> = before
        .iter()
        .map(|(mu, sigma)| {
            [WengLinRating {
                rating: *mu,
                uncertainty: *sigma,
            }]
        })
        .collect();
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(ranks)
        .map(|(t, r)| (&t[..], MultiTeamOutcome::new(usize::from(*r))))
        .collect();
    weng_lin_multi_team(&input, &WengLinConfig::new())
        .iter()
        .map(|t| t.first().map_or(START, |r| (r.rating, r.uncertainty)))
        .collect()
}

/// The conservative estimate leaderboards order by.
pub fn conservative(mu: f64, sigma: f64) -> f64 {
    mu - 3.0 * sigma
}

/// Wilson score interval (95 %) of a score fraction `score / n`, where a
/// win counts 1 and a tie one half. `None` without games.
pub fn wilson(score: f64, n: f64) -> Option<(f64, f64)> {
    if n <= 0.0 {
        return None;
    }
    let z = 1.959_964f64;
    let p = (score / n).clamp(0.0, 1.0);
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let margin = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let denom = 1.0 + z2 / n;
    Some(((centre - margin) / denom, (centre + margin) / denom))
}

/// A seat's new rating and the counts it adds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SeatUpdate {
    pub bot: BotId,
    pub mu: f64,
    pub sigma: f64,
    pub win: i64,
    pub loss: i64,
    pub tie: i64,
    pub forfeit: i64,
}

/// The head-to-head counts one ordered pair of seats adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PairUpdate {
    pub bot: BotId,
    pub opponent: BotId,
    pub win: i64,
    pub loss: i64,
    pub tie: i64,
}

/// The ranks a game with `bots` by seat counts with, or `None` if it is
/// not rated (fewer than two seats, ranks that do not match, a bot twice).
pub(crate) fn ratable(bots: &[BotId], end: &GameEnd) -> Option<Vec<u8>> {
    let ranks = effective_ranks(bots, end);
    let distinct = bots.iter().enumerate().all(|(i, b)| !bots[..i].contains(b));
    (bots.len() >= 2 && ranks.len() == bots.len() && distinct).then_some(ranks)
}

/// What a rated game changes, given each seat's rating `before` (the
/// same for every backend; each writes it in its own SQL).
pub(crate) fn updates(
    bots: &[BotId],
    ranks: &[u8],
    forfeited_by: Option<BotId>,
    before: &[(f64, f64)],
) -> (Vec<SeatUpdate>, Vec<PairUpdate>) {
    let after = rate(before, ranks);
    let firsts = ranks.iter().filter(|r| **r == 1).count();
    let mut seats = Vec::with_capacity(bots.len());
    let mut pairs = Vec::with_capacity(bots.len() * bots.len());
    for (i, bot) in bots.iter().enumerate() {
        let (mu, sigma) = after.get(i).copied().unwrap_or(START);
        let (win, tie) = match ranks[i] {
            1 if firsts == 1 => (1, 0),
            1 => (0, 1),
            _ => (0, 0),
        };
        seats.push(SeatUpdate {
            bot: *bot,
            mu,
            sigma,
            win,
            loss: 1 - win - tie,
            tie,
            forfeit: i64::from(forfeited_by == Some(*bot)),
        });
        for (j, opponent) in bots.iter().enumerate() {
            if i == j {
                continue;
            }
            let (win, loss, tie) = match ranks[i].cmp(&ranks[j]) {
                std::cmp::Ordering::Less => (1, 0, 0),
                std::cmp::Ordering::Greater => (0, 1, 0),
                std::cmp::Ordering::Equal => (0, 0, 1),
            };
            pairs.push(PairUpdate {
                bot: *bot,
                opponent: *opponent,
                win,
                loss,
                tie,
            });
        }
    }
    (seats, pairs)
}

/// `rated_game(tx, id, end)`: whether finished game `id` changes ratings,
/// and if so its game kind, its bots by seat and the rank each counts with.
/// Not rated: tournament games (ratings stay the ladder's), games a person
/// played, games with fewer than two distinct bots, and a game already
/// rated (a repeated finish). Written once over `$n` placeholders (which
/// sqlx binds by number on SQLite too) for each backend's connection type.
/// The same rule is written again in the `RETURNING` clause of
/// `sqlite_batch::finish_game` and in `postgres::finish::mark`, which decide
/// it in the statement that marks the game finished: change all three.
macro_rules! rated_game_fn {
    ($conn:ty) => {
        async fn rated_game(
            tx: &mut $conn,
            id: GameId,
            end: &GameEnd,
        ) -> Result<Option<(String, Vec<BotId>, Vec<u8>)>, sqlx::Error> {
            let game: Option<String> = sqlx::query_scalar(
                "SELECT game FROM games WHERE id = $1 AND tournament_id IS NULL",
            )
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(game) = game else { return Ok(None) };
            let bots: Vec<BotId> =
                sqlx::query_scalar("SELECT bot FROM game_seats WHERE game_id = $1 ORDER BY seat")
                    .bind(id)
                    .fetch_all(&mut *tx)
                    .await?;
            let Some(ranks) = crate::ratings::ratable(&bots, end) else {
                return Ok(None);
            };
            let person = sqlx::query("SELECT seat FROM person_games WHERE game_id = $1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            let already =
                sqlx::query("SELECT 1 FROM rating_history WHERE bot = $1 AND game_id = $2")
                    .bind(bots[0])
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await?;
            if person.is_some() || already.is_some() {
                return Ok(None);
            }
            Ok(Some((game, bots, ranks)))
        }
    };
}
pub(crate) use rated_game_fn;

rated_game_fn!(SqliteConnection);

/// Updates ratings, counts, head-to-head and history for finished game
/// `id` (already marked finished in this transaction), in SQLite.
pub(crate) async fn record_result(
    tx: &mut SqliteConnection,
    id: GameId,
    end: &GameEnd,
) -> Result<(), sqlx::Error> {
    let Some((game, bots, ranks)) = rated_game(tx, id, end).await? else {
        return Ok(());
    };
    let before: Vec<(f64, f64)> = seats_before(tx, &game, id)
        .await?
        .into_iter()
        .map(|s| s.1)
        .collect();
    write_rated(tx, id, end, &game, &bots, &ranks, &before).await
}

/// Every seat's bot of game `id`, in seat order, with its rating in game
/// kind `game` before this game ([`START`] if it has none), in SQLite:
/// one statement.
pub(crate) async fn seats_before(
    tx: &mut SqliteConnection,
    game: &str,
    id: GameId,
) -> Result<Vec<(BotId, (f64, f64))>, sqlx::Error> {
    let rows: Vec<(BotId, Option<f64>, Option<f64>)> = sqlx::query_as(
        "SELECT s.bot, b.mu, b.sigma FROM game_seats s
         LEFT JOIN bot_stats b ON b.bot = s.bot AND b.game = ?
         WHERE s.game_id = ? ORDER BY s.seat",
    )
    .bind(game)
    .bind(id)
    .fetch_all(&mut *tx)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(bot, mu, sigma)| (bot, mu.zip(sigma).unwrap_or(START)))
        .collect())
}

/// Writes what rated game `id` of kind `game` changes, given its bots by
/// seat, the ranks they count with and their ratings `before`: ratings and
/// counts, history, head-to-head and the total, in SQLite. Each table is
/// one statement whatever the number of seats (every statement is a round
/// trip to sqlx's connection thread).
pub(crate) async fn write_rated(
    tx: &mut SqliteConnection,
    id: GameId,
    end: &GameEnd,
    game: &str,
    bots: &[BotId],
    ranks: &[u8],
    before: &[(f64, f64)],
) -> Result<(), sqlx::Error> {
    let (seats, pairs) = updates(bots, ranks, end.forfeited_by, before);
    QueryBuilder::<Sqlite>::new(
        "INSERT INTO bot_stats (bot, game, mu, sigma, conservative, games, wins, losses, ties, forfeits, last_game, last_played) ",
    )
    .push_values(&seats, |mut row, s| {
        row.push_bind(s.bot)
            .push_bind(game)
            .push_bind(s.mu)
            .push_bind(s.sigma)
            .push_bind(conservative(s.mu, s.sigma))
            .push("1")
            .push_bind(s.win)
            .push_bind(s.loss)
            .push_bind(s.tie)
            .push_bind(s.forfeit)
            .push_bind(id)
            .push_bind(&end.finished);
    })
    .push(
        " ON CONFLICT (bot, game) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma,
            conservative = excluded.conservative, games = games + 1,
            wins = wins + excluded.wins, losses = losses + excluded.losses,
            ties = ties + excluded.ties, forfeits = forfeits + excluded.forfeits,
            last_game = excluded.last_game, last_played = excluded.last_played",
    )
    .build()
    .execute(&mut *tx)
    .await?;
    QueryBuilder::<Sqlite>::new("INSERT INTO rating_history (bot, game_id, mu, sigma) ")
        .push_values(&seats, |mut row, s| {
            row.push_bind(s.bot)
                .push_bind(id)
                .push_bind(s.mu)
                .push_bind(s.sigma);
        })
        .build()
        .execute(&mut *tx)
        .await?;
    QueryBuilder::<Sqlite>::new(
        "INSERT INTO pair_stats (bot, opponent, game, games, wins, losses, ties) ",
    )
    .push_values(&pairs, |mut row, p| {
        row.push_bind(p.bot)
            .push_bind(p.opponent)
            .push_bind(game)
            .push("1")
            .push_bind(p.win)
            .push_bind(p.loss)
            .push_bind(p.tie);
    })
    .push(
        " ON CONFLICT (bot, opponent, game) DO UPDATE SET games = games + 1,
                wins = wins + excluded.wins, losses = losses + excluded.losses,
                ties = ties + excluded.ties",
    )
    .build()
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO game_totals (game, games) VALUES (?, 1)
         ON CONFLICT (game) DO UPDATE SET games = games + 1",
    )
    .bind(game)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(ranks: Vec<u8>, forfeited_by: Option<BotId>) -> GameEnd {
        GameEnd {
            finished: "t".into(),
            scores: vec![None; ranks.len()],
            ranks,
            forfeited_by,
            record: "{}".into(),
        }
    }

    #[test]
    fn the_winner_gains_and_the_loser_drops() {
        let after = rate(&[START, START], &[1, 2]);
        assert!(after[0].0 > START.0 && after[1].0 < START.0);
        assert!(after[0].1 < START.1 && after[1].1 < START.1);
    }

    #[test]
    fn four_seats_are_ordered_by_rank() {
        let after = rate(&[START; 4], &[3, 1, 4, 2]);
        let order: Vec<usize> = {
            let mut idx: Vec<usize> = (0..4).collect();
            idx.sort_by(|a, b| after[*b].0.total_cmp(&after[*a].0));
            idx
        };
        assert_eq!(order, vec![1, 3, 0, 2]);
    }

    #[test]
    fn a_tie_between_equals_keeps_their_means() {
        let after = rate(&[START, START], &[1, 1]);
        assert!((after[0].0 - START.0).abs() < 1e-9);
        assert!((after[1].0 - START.0).abs() < 1e-9);
    }

    #[test]
    fn a_forfeit_is_a_loss_for_the_forfeiting_bot_only() {
        assert_eq!(
            effective_ranks(&[7, 8, 9], &end(vec![1, 2, 3], Some(8))),
            [1, 2, 1]
        );
        assert_eq!(effective_ranks(&[7, 8], &end(vec![2, 1], None)), [2, 1]);
        // A forfeiting bot that is not seated changes nothing.
        assert_eq!(effective_ranks(&[7, 8], &end(vec![2, 1], Some(3))), [2, 1]);
    }

    #[test]
    fn wilson_interval_contains_the_fraction_and_narrows() {
        let (lo, hi) = wilson(7.0, 10.0).unwrap();
        assert!(lo < 0.7 && 0.7 < hi && lo > 0.3 && hi < 0.95);
        let (lo2, hi2) = wilson(700.0, 1000.0).unwrap();
        assert!(hi2 - lo2 < hi - lo);
        assert_eq!(wilson(0.0, 0.0), None);
        let (lo0, _) = wilson(0.0, 5.0).unwrap();
        assert!(lo0.abs() < 1e-12);
    }
}
