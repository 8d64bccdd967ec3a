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
        None => Err(StoreError::Url(without_password(url))),
    }
}

/// `url` as it may be shown in a log line or an error: a password in it,
/// after the user name (`postgres://user:PASSWORD@host/db`) or as a
/// parameter whose name holds "pass" (`?password=…`, `?sslpassword=…`, in
/// any case or percent-encoding), is written `***`; anything else is kept
/// as it is. Where it cannot tell, it hides more: the user's part is
/// everything up to the last `@`, whatever characters it holds.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once(':') else {
        return url.to_string();
    };
    let slashes = &rest[..rest.len() - rest.trim_start_matches('/').len()];
    let rest = &rest[slashes.len()..];
    let (user, rest) = match rest.rsplit_once('@') {
        Some((user_info, after)) if user_info.contains(':') => {
            let user = user_info.split([':', '/', '?', '#']).next().unwrap_or("");
            (format!("{user}:***@"), after)
        }
        Some((user_info, after)) => (format!("{user_info}@"), after),
        None => (String::new(), rest),
    };
    let (place, query) = match rest.split_once('?') {
        Some((place, query)) => (place, Some(query)),
        None => (rest, None),
    };
    let mut out = format!("{scheme}:{slashes}{user}{place}");
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .map(|param| match param.split_once('=') {
                Some((key, _)) if names_a_password(key) => format!("{key}=***"),
                _ => param.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

/// Whether a URL parameter's name (percent-encoded or not) holds "pass",
/// read as a URL's query is (`url::form_urlencoded`).
fn names_a_password(key: &str) -> bool {
    url::form_urlencoded::parse(key.as_bytes())
        .any(|(name, _)| name.to_ascii_lowercase().contains("pass"))
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

    #[test]
    fn a_password_is_not_shown() {
        for (url, shown) in [
            (
                "postgres://croupier:s3cret@db.example:5432/croupier?sslmode=require",
                "postgres://croupier:***@db.example:5432/croupier?sslmode=require",
            ),
            // A password holding '@' or '/' is hidden whole.
            ("postgres://u:p@ss@h/db", "postgres://u:***@h/db"),
            (
                "postgresql://u:a/b@h:5432/db",
                "postgresql://u:***@h:5432/db",
            ),
            ("postgres://u:pw@h", "postgres://u:***@h"),
            (
                "postgres://u@h/db?host=/run/pg&password=s3cret",
                "postgres://u@h/db?host=/run/pg&password=***",
            ),
            (
                "postgres:///db?PASSWORD=s3cret",
                "postgres:///db?PASSWORD=***",
            ),
            (
                "postgres:///db?pass%77ord=s3cret",
                "postgres:///db?pass%77ord=***",
            ),
            (
                "postgres://u@h/db?sslpassword=s3cret&sslmode=verify-full",
                "postgres://u@h/db?sslpassword=***&sslmode=verify-full",
            ),
            // No '//', or a '?', '#' or '/' in the password.
            ("postgres:u:s3cret@h/db", "postgres:u:***@h/db"),
            ("postgres:/u:s3cret@h/db", "postgres:/u:***@h/db"),
            ("postgres://u:p?s3cret@h/db", "postgres://u:***@h/db"),
            ("postgres://u:p#s3cret@h/db", "postgres://u:***@h/db"),
            (
                "postgres://u:s3cret@[::1]:5432/db",
                "postgres://u:***@[::1]:5432/db",
            ),
            ("POSTGRES://u:s3cret@h", "POSTGRES://u:***@h"),
        ] {
            assert_eq!(without_password(url), shown, "{url}");
            assert!(!without_password(url).contains("s3cret"), "{url}");
        }
        for kept in [
            "sqlite://croupier.db",
            "sqlite:///srv/c.db?mode=rwc",
            "postgres://croupier@localhost/db",
            "postgres:///db?host=/run/pg",
            "croupier.db",
        ] {
            assert_eq!(without_password(kept), kept);
        }
    }

    #[tokio::test]
    async fn an_unknown_url_is_refused_without_its_password() {
        let Err(e) = open("mysql://u:s3cret@h/db").await else {
            panic!("a mysql URL opened");
        };
        assert!(!e.to_string().contains("s3cret"), "{e}");
        assert!(e.to_string().contains("mysql://u:***@h/db"), "{e}");
    }
}
