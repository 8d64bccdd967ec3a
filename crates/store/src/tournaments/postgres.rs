//! The tournament queries on PostgreSQL.

use crate::PgStore;

tournament_queries!(
    PgStore,
    sqlx::Postgres,
    pool,
    pool,
    crate::tournaments::ListHints {
        every: "",
        one: "",
        seats: "",
    }
);
