//! What the commands that serve or open a server's database share at
//! their start: the runtime and the store (below `serve`, `worker`, `db`
//! and `tournaments admin`, which all use them).

use std::sync::Arc;

use croupier_store::Store;

use crate::error::CliError;

/// The runtime's threads (`serve` and `worker`; docs/deploy.md).
#[derive(Debug, Default, clap::Args)]
pub struct RuntimeArgs {
    /// Threads of the async runtime, which runs requests and games
    /// (1-1024; wins over tokio's TOKIO_WORKER_THREADS). Default: one per
    /// CPU core this process may use. Fewer
    /// leave cores to what runs beside them (the SQLite commit thread,
    /// house bots' moves, bot programs, a database on the same machine)
    /// and cost less CPU per request where cores are shared
    /// (docs/deploy.md).
    #[arg(
        long,
        env = "CROUPIER_THREADS",
        value_name = "N",
        value_parser = clap::value_parser!(u16).range(1..=1024)
    )]
    threads: Option<u16>,
}

/// Children of a crashed predecessor reaped, and the runtime: the start of
/// every long-running command (`serve`, `worker`; `main` has installed the
/// logger, `logging`), with the threads `args` asks for (default: one
/// per core, or tokio's `TOKIO_WORKER_THREADS`).
pub(crate) fn runtime(args: &RuntimeArgs) -> Result<tokio::runtime::Runtime, CliError> {
    croupier_arena::transport::process::adopt_orphans();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.threads {
        builder.worker_threads(usize::from(n));
    }
    builder
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
