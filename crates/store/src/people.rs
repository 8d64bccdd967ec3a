//! People in the loop (issue 16): games a person played (stored and
//! listed, but rating no bot) and which bots their owners let others
//! challenge. Migrations: SQLite 0007, PostgreSQL 0004; the queries, the
//! same on both backends, are in `sql_store`, but for the rating of a
//! person's game ([`rate_game`]), here.

use sqlx::{Database, Encode, Executor, FromRow, IntoArguments, Pool, Type};

use crate::{GameId, StoreError};

/// A game a person played: the person's seat and label.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct PersonSeat {
    /// The person's seat.
    pub seat: i64,
    /// Who played (`guest`, or an owner's name).
    pub player: String,
}

/// A rating in the people's pool (issue 48): a person's, or a bot's in its
/// games against people. Apart from the bots' ladder ratings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, sqlx::FromRow)]
pub struct PeopleRating {
    /// `person` or `bot`.
    pub kind: String,
    /// The person's name (`guest-…` or an owner's name), or the bot's.
    pub name: String,
    /// The game.
    pub game: String,
    /// Estimated skill.
    pub mu: f64,
    /// Its uncertainty.
    pub sigma: f64,
    /// μ − 3σ, the order of the leaderboard.
    pub conservative: f64,
    /// Rated games.
    pub games: i64,
    /// Sole first places.
    pub wins: i64,
    /// Games not in first place.
    pub losses: i64,
    /// Shared first places.
    pub ties: i64,
    /// When the last rated game finished (RFC 3339).
    pub last_played: Option<String>,
}

/// A game a person played, for their page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct PersonGame {
    /// The game's id.
    pub game_id: i64,
    /// Which game.
    pub game: String,
    /// `running`, `finished` or `aborted`.
    pub status: String,
    /// When it finished.
    pub finished: Option<String>,
    /// The person's seat.
    pub seat: i64,
    /// The person's rank, once finished.
    pub rank: Option<i64>,
    /// The person's score, once finished.
    pub score: Option<i64>,
}

/// One seat of a finished person game, as its rating needs it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct RatedSeat {
    pub seat: i64,
    pub name: String,
    pub rank: Option<i64>,
    pub forfeited: bool,
    pub player: String,
    pub person_seat: i64,
    pub game: String,
    pub finished: Option<String>,
}

/// Ranks, wins, losses and ties of a person game's seats, the ranks as the
/// ratings count them (a forfeit puts its seat last, the others first);
/// `None` if a seat has no rank.
pub(crate) fn people_ranks(seats: &[RatedSeat]) -> Option<Vec<u8>> {
    if seats.iter().any(|s| s.forfeited) {
        return Some(
            seats
                .iter()
                .map(|s| if s.forfeited { 2 } else { 1 })
                .collect(),
        );
    }
    seats
        .iter()
        .map(|s| s.rank.and_then(|r| u8::try_from(r).ok()))
        .collect()
}

/// Rates game `id` in the people's pool, once, in one transaction on
/// `writes`: each seat's player (the person, or the bot) is rated from its
/// rating in the game's pool, and its games, wins, losses and ties are
/// counted. False if the game was rated before, is not finished, no person
/// played it, or its ranks cannot be rated ([`people_ranks`]). The same
/// SQL on both backends.
pub(crate) async fn rate_game<DB>(writes: &Pool<DB>, id: GameId) -> Result<bool, StoreError>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> f64: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    for<'r> (i64,): FromRow<'r, DB::Row>,
    for<'r> (f64, f64): FromRow<'r, DB::Row>,
    for<'r> RatedSeat: FromRow<'r, DB::Row>,
{
    let mut tx = writes.begin().await?;
    let claimed: Option<(i64,)> = sqlx::query_as(
        "INSERT INTO people_rated (game_id)
         SELECT id FROM games WHERE id = $1 AND status = 'finished'
            AND EXISTS (SELECT 1 FROM person_games WHERE game_id = $1)
         ON CONFLICT (game_id) DO NOTHING RETURNING game_id",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    if claimed.is_none() {
        return Ok(false);
    }
    let seats: Vec<RatedSeat> = sqlx::query_as(
        "SELECT s.seat, b.name, s.rank, s.forfeited, p.player, p.seat AS person_seat, g.game, g.finished
         FROM game_seats s JOIN bots b ON b.id = s.bot
         JOIN person_games p ON p.game_id = s.game_id JOIN games g ON g.id = s.game_id
         WHERE s.game_id = $1 ORDER BY s.seat",
    )
    .bind(id)
    .fetch_all(&mut *tx)
    .await?;
    let Some(ranks) = people_ranks(&seats) else {
        tx.commit().await?;
        return Ok(false);
    };
    let who = |s: &RatedSeat| {
        if s.seat == s.person_seat {
            ("person", s.player.clone())
        } else {
            ("bot", s.name.clone())
        }
    };
    let mut before = Vec::with_capacity(seats.len());
    for s in &seats {
        let (kind, name) = who(s);
        let row: Option<(f64, f64)> = sqlx::query_as(
            "SELECT mu, sigma FROM people_ratings WHERE kind = $1 AND name = $2 AND game = $3",
        )
        .bind(kind)
        .bind(name.as_str())
        .bind(s.game.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        before.push(row.unwrap_or(crate::ratings::START));
    }
    let after = crate::ratings::rate(&before, &ranks);
    let firsts = ranks.iter().filter(|r| **r == 1).count();
    for (i, s) in seats.iter().enumerate() {
        let (kind, name) = who(s);
        let (mu, sigma) = after.get(i).copied().unwrap_or(crate::ratings::START);
        let (win, tie) = match ranks[i] {
            1 if firsts == 1 => (1, 0),
            1 => (0, 1),
            _ => (0, 0),
        };
        sqlx::query(
            "INSERT INTO people_ratings (kind, name, game, mu, sigma, conservative, games, wins, losses, ties, last_played)
             VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $9, $10)
             ON CONFLICT (kind, name, game) DO UPDATE SET mu = EXCLUDED.mu, sigma = EXCLUDED.sigma,
                conservative = EXCLUDED.conservative, games = people_ratings.games + 1,
                wins = people_ratings.wins + EXCLUDED.wins, losses = people_ratings.losses + EXCLUDED.losses,
                ties = people_ratings.ties + EXCLUDED.ties, last_played = EXCLUDED.last_played",
        )
        .bind(kind)
        .bind(name.as_str())
        .bind(s.game.as_str())
        .bind(mu)
        .bind(sigma)
        .bind(crate::ratings::conservative(mu, sigma))
        .bind(win as i64)
        .bind(i64::from(win == 0 && tie == 0))
        .bind(tie as i64)
        .bind(s.finished.as_deref())
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(true)
}
