//! Why storage failed: [`StoreError`], the one error of the store's
//! operations.

/// Why storage failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A bot of that name exists.
    #[error("the name is taken")]
    NameTaken,
    /// A tournament's planned game is no longer pending (it was voided or
    /// dealt meanwhile); nothing changed.
    #[error("the planned game is no longer pending")]
    NotPending,
    /// The database URL is not supported.
    #[error("unsupported database URL '{0}' (use sqlite://FILE or postgres://USER@HOST/DB)")]
    Url(String),
    /// The database failed.
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    /// No connection to the database could be made while starting, for
    /// `seconds`; the last try failed with `last` (written in the message,
    /// so not also given as its source).
    #[error("no connection to the database in {seconds} s; the last try: {last}")]
    Unreachable {
        /// How long connections were tried.
        seconds: u64,
        /// Why the last try failed.
        last: String,
    },
    /// The database failed (SQLite, in the writer's batches).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Migrations failed.
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The store's writer task has stopped, or work for a read could not
    /// start: the runtime is shutting down.
    #[error("the store has stopped (or its runtime is shutting down)")]
    Closed,
    /// The store's writer thread could not be started.
    #[error("cannot start the store's writer thread: {0}")]
    Thread(#[source] std::io::Error),
}
