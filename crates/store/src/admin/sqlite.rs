//! The admin queries on SQLite (reads through the pool, writes through the
//! one writer connection, which the finished games' batches also hold: a
//! season's switch and a finished game never interleave).

use crate::SqliteStore;

admin_queries!(SqliteStore, sqlx::Sqlite, pool, writer, "");
