//! The tournament queries on SQLite (reads through the pool, writes through
//! the one writer connection).

use crate::SqliteStore;

tournament_queries!(
    SqliteStore,
    sqlx::Sqlite,
    pool,
    writer,
    crate::tournaments::ListHints {
        every: "INDEXED BY games_tournament_finish_order",
        one: "INDEXED BY games_tournament_finish_order_by_tournament",
        seats: "INDEXED BY game_seats_tournament_finish_order_by_bot",
    }
);
