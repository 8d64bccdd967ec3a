//! The admin queries on PostgreSQL. A season's switch locks the standings
//! first: a game being rated holds its bots' `bot_stats` rows (`FOR
//! UPDATE`, `postgres::finish`), so it is rated wholly in the old season or
//! wholly in the new one.

use crate::PgStore;

admin_queries!(
    PgStore,
    sqlx::Postgres,
    pool,
    pool,
    "LOCK TABLE bot_stats, pair_stats IN EXCLUSIVE MODE"
);
