//! The backends the store suite runs against: a fresh SQLite file, or a
//! fresh database in one throw-away PostgreSQL cluster per test binary.
#![allow(clippy::unwrap_used, dead_code)] // helpers of tests fail loudly by design

use std::io::Write;
use std::sync::{Arc, OnceLock};

use croupier_store::scratch::{ScratchCluster, ScratchError};
use croupier_store::tournaments::{EntryRow, NewTournament};
use croupier_store::Store;

/// A fresh, empty database of one backend.
pub struct Db {
    /// Its URL (`sqlite://…` or `postgres://…`).
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

impl Db {
    /// Opens the store (again: a second open sees what the first stored).
    pub async fn open(&self) -> Arc<dyn Store> {
        croupier_store::open(&self.url).await.unwrap()
    }
}

/// The list of finished games of `game` (every kind if `None`) that
/// `bot` played (every bot's if `None`).
pub fn list(
    game: Option<&str>,
    bot: Option<croupier_store::BotId>,
) -> croupier_store::web::GameFilter {
    croupier_store::web::GameFilter {
        game: game.map(str::to_owned),
        bot,
    }
}

/// A house bot's entry in a tournament, not frozen and without a
/// strategy: a test sets what it needs on it
/// (`EntryRow { frozen: true, ..entry(bot, 0, "ha") }`).
pub fn entry(bot: croupier_store::BotId, seq: i64, name: &str) -> EntryRow {
    EntryRow::new(bot, seq, name, croupier_store::BotKind::House)
}

/// A two-seat Goofspiel round-robin named `name` with `entries` (one deal,
/// 1 s a move, seed 7, no owner, not of every bot): a test sets what it
/// needs on it, as for [`entry`].
pub fn tournament(name: &str, entries: Vec<EntryRow>) -> NewTournament {
    NewTournament {
        starts_at: 5,
        seed: 7,
        ..NewTournament::round_robin(name, "goofspiel", entries)
    }
}

/// A started [`tournament`] named `name` of `entries` (one round): its id.
pub async fn running_cup(
    t: &dyn croupier_store::tournaments::TournamentStore,
    name: &str,
    entries: Vec<EntryRow>,
) -> croupier_store::tournaments::TournamentId {
    started(t, name, entries, 1).await
}

/// A tournament of `rounds` rounds, started.
pub async fn started(
    t: &dyn croupier_store::tournaments::TournamentStore,
    name: &str,
    entries: Vec<EntryRow>,
    rounds: i64,
) -> croupier_store::tournaments::TournamentId {
    let cup = t
        .create_tournament(&tournament(name, entries.clone()))
        .await
        .unwrap();
    t.start_tournament(cup, &entries, rounds, "t0")
        .await
        .unwrap();
    cup
}

/// A planned game of round 1's first table: game `game_no` of `seats`,
/// dealt from `seed`.
pub fn plan(
    game_no: i64,
    seats: Vec<croupier_store::BotId>,
    seed: i64,
) -> croupier_store::tournaments::NewTournamentGame {
    croupier_store::tournaments::NewTournamentGame {
        table_no: 0,
        game_no,
        seats,
        seed,
    }
}

/// A process to register (`croupier_store::leases`) on host `h`.
pub fn process(role: &str, pid: i64, ttl_ms: i64) -> croupier_store::leases::NewProcess {
    croupier_store::leases::NewProcess {
        role: role.into(),
        host: "h".into(),
        pid,
        ttl_ms,
    }
}

/// A fresh SQLite file.
pub async fn sqlite() -> Option<Db> {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    Some(Db {
        url,
        _dir: Some(dir),
    })
}

/// The binary's cluster, started by the first test that needs it; `None`
/// if PostgreSQL is not installed and we are not under CI.
fn cluster() -> Option<&'static ScratchCluster> {
    static CLUSTER: OnceLock<Option<ScratchCluster>> = OnceLock::new();
    CLUSTER
        .get_or_init(|| match ScratchCluster::start(false) {
            Ok(c) => Some(c),
            Err(ScratchError::NotInstalled) if std::env::var("CI").as_deref() != Ok("true") => {
                // Straight to stderr, past the test harness's capture.
                let _ = writeln!(
                    std::io::stderr(),
                    "PostgreSQL is not installed: skipping the PostgreSQL tests (they fail under CI=true)"
                );
                None
            }
            Err(e) => panic!("cannot start a PostgreSQL cluster: {e}"),
        })
        .as_ref()
}

/// A fresh PostgreSQL database, or `None` (the test then passes, having
/// said it skipped) when PostgreSQL is not installed outside CI.
pub async fn postgres() -> Option<Db> {
    let cluster = tokio::task::spawn_blocking(cluster).await.unwrap()?;
    let url = cluster.create_database().await.unwrap();
    Some(Db { url, _dir: None })
}

/// Runs `$body` with `$pool` connected to `$db`'s database, a SQLite or a
/// PostgreSQL pool.
macro_rules! with_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        if $db.url.starts_with("sqlite:") {
            let $pool = sqlx::SqlitePool::connect(&$db.url).await.unwrap();
            let out = $body;
            $pool.close().await;
            out
        } else {
            let $pool = sqlx::PgPool::connect(&$db.url).await.unwrap();
            let out = $body;
            $pool.close().await;
            out
        }
    };
}

/// Runs `undo` (statements that take a migration's work away) on `db`,
/// then forgets migration `description` (as sqlx names it from its file),
/// as in a database written before it: the next open runs it again.
pub async fn forget_migration(db: &Db, undo: &[&str], description: &str) {
    const FORGET: &str = "DELETE FROM _sqlx_migrations WHERE description = $1";
    with_pool!(db, |pool| {
        for sql in undo {
            sqlx::query(sql).execute(&pool).await.unwrap();
        }
        let forgot = sqlx::query(FORGET)
            .bind(description)
            .execute(&pool)
            .await
            .unwrap();
        assert_eq!(forgot.rows_affected(), 1, "no migration {description}");
    })
}

/// Runs each named `async fn(Db)` of the calling file once per backend, as
/// `sqlite::name` and `postgres::name`.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let db = $crate::common::sqlite().await.unwrap();
                    super::$name(db).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(db) = $crate::common::postgres().await else {
                        eprintln!("skipped: no PostgreSQL");
                        return;
                    };
                    super::$name(db).await;
                }
            )*
        }
    };
}
