//! [`open`]: the store a URL names, by its scheme ([`Backend`]).

use std::sync::Arc;

use crate::{PgStore, SqliteStore, Store, StoreError};

/// Opens the store a URL names: `sqlite://FILE` (created if missing), or
/// `postgres://…` / `postgresql://…` (the database must exist; its tables
/// are created or migrated).
pub async fn open(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    match Backend::of(url) {
        Some(Backend::Sqlite) => Ok(Arc::new(SqliteStore::open(url).await?)),
        Some(Backend::Postgres) => Ok(Arc::new(PgStore::open(url).await?)),
        None => Err(StoreError::Url(url.to_string())),
    }
}

/// The database a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite file (`sqlite:`).
    Sqlite,
    /// A PostgreSQL server (`postgres:` or `postgresql:`).
    Postgres,
}

impl Backend {
    /// The backend of `url`, by its scheme (case-insensitive), if supported.
    pub fn of(url: &str) -> Option<Backend> {
        let scheme = url.split_once(':')?.0.to_ascii_lowercase();
        match scheme.as_str() {
            "sqlite" => Some(Backend::Sqlite),
            "postgres" | "postgresql" => Some(Backend::Postgres),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_pick_their_backend() {
        assert_eq!(Backend::of("sqlite://x.db"), Some(Backend::Sqlite));
        assert_eq!(Backend::of("sqlite::memory:"), Some(Backend::Sqlite));
        assert_eq!(Backend::of("postgres://u@h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of("PostgreSQL://u@h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of("mysql://u@h/db"), None);
        assert_eq!(Backend::of("croupier.db"), None);
    }
}
