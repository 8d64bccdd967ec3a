//! How the SQLite linked in is built: with its count of memory off.
//!
//! SQLite counts every allocation it makes for `sqlite3_status()` by
//! default, under one mutex that every thread using SQLite shares: the
//! group commit's writer, sqlx's connection threads, and the Tokio workers
//! that drop the values sqlx copied out of each row (`sqlite3_value_free`).
//! Croupier never reads those counts. With them on, making a tournament's
//! page, which reads its thousand games, spent a third of its time
//! dropping the rows' values, mostly waiting for that mutex (a profile of
//! `bench web` at a million games, 7 Dec 2026). SQLite's own advice for
//! speed is to build it with the count off, which `.cargo/config.toml`
//! does (`LIBSQLITE3_FLAGS`, read by libsqlite3-sys's build of the bundled
//! SQLite that sqlx and rusqlite share); this workspace forbids the
//! `unsafe` call that would turn it off at run time.

#[cfg(test)]
mod tests {
    /// The compile option that turns SQLite's count of memory off, as
    /// `PRAGMA compile_options` lists it.
    const MEMSTATUS_OFF: &str = "DEFAULT_MEMSTATUS=0";

    #[tokio::test]
    async fn the_sqlite_linked_in_does_not_count_its_memory() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("c.db").display());
        let store = crate::SqliteStore::open(&url).await.unwrap();
        let options: Vec<String> = sqlx::query_scalar("PRAGMA compile_options")
            .fetch_all(&store.pool)
            .await
            .unwrap();
        assert!(
            options.iter().any(|o| o == MEMSTATUS_OFF),
            "SQLite was built without {MEMSTATUS_OFF} (LIBSQLITE3_FLAGS in .cargo/config.toml): {options:?}"
        );
    }
}
