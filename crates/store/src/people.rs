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
