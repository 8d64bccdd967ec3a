//! The lease queries on SQLite: one process (no row locks), the clock from
//! `julianday('now')`; reads through the pool, writes through the one
//! writer connection.

lease_queries!(
    crate::SqliteStore,
    pool,
    writer,
    "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
    "",
    "",
    "",
    false,
    |_, _| {}
);
