//! What the commands that serve or open a server's database share at
//! their start: the runtime and the store (below `serve`, `worker`, `db`
//! and `tournaments admin`, which all use them).

use std::sync::Arc;

use croupier_store::Store;

use crate::error::CliError;

/// Children of a crashed predecessor reaped, and the runtime: the start of
/// every long-running command (`serve`, `worker`; `main` has installed the
/// logger, `logging`).
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    croupier_arena::transport::process::adopt_orphans();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(e.into()))
}

/// Opens (and migrates) the store at `url` for a command: a failure is a
/// usage error that names the database without its password.
pub async fn open_store(url: &str) -> Result<Arc<dyn Store>, CliError> {
    croupier_store::open(url).await.map_err(|e| {
        CliError::Usage(format!(
            "database {}: {e}",
            croupier_store::without_password(url)
        ))
    })
}
