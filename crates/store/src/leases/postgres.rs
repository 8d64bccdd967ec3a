//! The lease queries on PostgreSQL: several processes (the reaper skips the
//! registrations another reaper holds, a claim shares its own), the clock
//! from `clock_timestamp()`; the games dealt name the process.

lease_queries!(
    crate::PgStore,
    pool,
    pool,
    "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
    " FOR UPDATE SKIP LOCKED",
    " FOR UPDATE",
    " FOR SHARE",
    true,
    crate::PgStore::lease_games_to
);
