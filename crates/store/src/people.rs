//! People in the loop (issue 16): games a person played (stored and
//! listed, but rating no bot) and which bots their owners let others
//! challenge. Migrations: SQLite 0007, PostgreSQL 0004; the queries, the
//! same on both backends, are in `sql_store`.

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
