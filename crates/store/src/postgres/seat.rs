//! One seat of a game in progress in the live tables (`hub_seats`, issue
//! 13): the row, how it is read, and how a game's seats are written in one
//! statement. Below `cluster` (which deals and seats games), `batch` (which
//! reads seats for many callers at once) and `notice` (which announces a
//! game dealt with its seats): all three use it, and it uses none of them.

use sqlx::{Postgres, Row};

use crate::{BotId, GameId};

/// One seat of a game in progress, as the tables hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatRow {
    /// The bot in the seat.
    pub bot: BotId,
    /// The game.
    pub game: GameId,
    /// The seat's index.
    pub seat: i32,
    /// The other bot.
    pub opponent: BotId,
    /// The cards dealt, as the server wrote them.
    pub hand: String,
    /// The `status` reply, as the home last wrote it.
    pub status: String,
    /// Whether the seat's bid stands.
    pub has_bid: bool,
    /// Whether the game is over (its record is being stored).
    pub over: bool,
    /// The instance that runs the game.
    pub home: i64,
}

/// Reads a seat from a row with the columns [`SEAT_COLUMNS`].
pub(super) fn seat_row(r: &sqlx::postgres::PgRow) -> Result<SeatRow, sqlx::Error> {
    Ok(SeatRow {
        bot: r.try_get("bot")?,
        game: r.try_get("game")?,
        seat: r.try_get("seat")?,
        opponent: r.try_get("opponent")?,
        hand: r.try_get("hand")?,
        status: r.try_get("status")?,
        has_bid: r.try_get("has_bid")?,
        over: r.try_get("over")?,
        home: r.try_get("home")?,
    })
}

/// The columns of a [`SeatRow`], in the table's order.
pub(super) const SEAT_COLUMNS: &str =
    "bot, game, seat, opponent, hand, status, has_bid, over, home";

/// The seats of a game, column by column (for `UNNEST`).
pub(super) struct SeatColumns<'a> {
    bot: Vec<BotId>,
    game: Vec<GameId>,
    seat: Vec<i32>,
    opponent: Vec<BotId>,
    hand: Vec<&'a str>,
    status: Vec<&'a str>,
    has_bid: Vec<bool>,
    over: Vec<bool>,
    home: Vec<i64>,
}

impl<'a> SeatColumns<'a> {
    pub(super) fn of(seats: &'a [SeatRow]) -> SeatColumns<'a> {
        SeatColumns {
            bot: seats.iter().map(|s| s.bot).collect(),
            game: seats.iter().map(|s| s.game).collect(),
            seat: seats.iter().map(|s| s.seat).collect(),
            opponent: seats.iter().map(|s| s.opponent).collect(),
            hand: seats.iter().map(|s| s.hand.as_str()).collect(),
            status: seats.iter().map(|s| s.status.as_str()).collect(),
            has_bid: seats.iter().map(|s| s.has_bid).collect(),
            over: seats.iter().map(|s| s.over).collect(),
            home: seats.iter().map(|s| s.home).collect(),
        }
    }

    /// Binds the columns as `$1`…`$9` of `q` (see [`INSERT_SEATS`]).
    pub(super) fn bind<'q>(self, q: PgQuery<'q>) -> PgQuery<'q>
    where
        'a: 'q,
    {
        q.bind(self.bot)
            .bind(self.game)
            .bind(self.seat)
            .bind(self.opponent)
            .bind(self.hand)
            .bind(self.status)
            .bind(self.has_bid)
            .bind(self.over)
            .bind(self.home)
    }
}

/// A PostgreSQL statement with its arguments.
pub(super) type PgQuery<'q> = sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>;

/// Inserts the seats `$1`…`$9` (the columns of [`SeatColumns`]).
pub(super) const INSERT_SEATS: &str =
    "INSERT INTO hub_seats (bot, game, seat, opponent, hand, status, has_bid, over, home)
     SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::INT[], $4::BIGINT[], $5::TEXT[],
                          $6::TEXT[], $7::BOOL[], $8::BOOL[], $9::BIGINT[])";
