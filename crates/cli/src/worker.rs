//! `croupier worker --database postgres://…`: a process that only runs
//! ladder matches, leased from the database it shares with the `serve`
//! instances (docs/workers.md). It serves no HTTP: push HTTP bots, house
//! bots and hosted programs (in the sandbox, from `--bot-files`) play in
//! it, and pull bots, whose polls and answers reach the instances, through
//! their mailboxes shared in the database (answers relayed here by
//! `NOTIFY`).

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use croupier_arena::transport::http::{HttpClient, HttpLimits};
use croupier_competition::ladder::{Ladder, LadderConfig};
use croupier_live::hub::relay::{NoGames, Relay};
use croupier_live::mailbox::Mailboxes;
use croupier_store::Backend;

use crate::error::CliError;

/// Arguments of `croupier worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The PostgreSQL database the instances use:
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (also `postgresql://`;
    /// a Unix socket folder goes in `?host=/path`).
    #[arg(long, env = "CROUPIER_DATABASE", hide_env_values = true)]
    database: String,
    /// Ladder settings (TOML, as `croupier serve --ladder`; use the same
    /// file as the instances). Default: built-in settings.
    #[arg(long, value_name = "FILE")]
    ladder: Option<std::path::PathBuf>,
    /// Most matches this worker plays at once (default: the ladder's
    /// max_matches).
    #[arg(long, value_name = "N")]
    max_matches: Option<usize>,
    /// Call push bots on loopback, private, link-local or multicast
    /// addresses (as `croupier serve --allow-private-bot-urls`).
    #[arg(long)]
    allow_private_bot_urls: bool,
    /// How hosted bots' programs are confined (`strict` or `off`;
    /// docs/sandbox.md). Without a working sandbox the worker plays no
    /// hosted bots.
    #[arg(long, value_enum, default_value_t = crate::sandbox::SandboxMode::Strict)]
    sandbox: crate::sandbox::SandboxMode,
    /// CPU cores each hosted bot program may use (its cgroup's quota, its
    /// whole process tree; docs/sandbox.md).
    #[arg(
        long,
        value_name = "CORES",
        default_value = "1",
        env = "CROUPIER_BOT_CPUS"
    )]
    bot_cpus: croupier_arena::transport::process::cgroup::BotCpus,
    /// The folder of hosted bots' uploads, shared with the instances (the
    /// same path on this machine: a shared or copied folder). Without it
    /// the worker plays no hosted bots.
    #[arg(long, value_name = "DIR")]
    bot_files: Option<std::path::PathBuf>,
    #[command(flatten)]
    lease: crate::serve::LeaseArgs,
    #[command(flatten)]
    runtime: crate::start::RuntimeArgs,
    #[command(flatten)]
    metrics: crate::serve::MetricsArgs,
}

/// Checks the database URL: a worker shares a PostgreSQL database.
fn check_url(url: &str) -> Result<(), CliError> {
    let url = &croupier_store::without_password(url);
    match Backend::of(url) {
        Some(Backend::Postgres) => Ok(()),
        Some(Backend::Sqlite) => Err(CliError::Usage(format!(
            "--database {url}: a worker needs PostgreSQL (postgres://…), shared with the serve \
             instances; on SQLite, `croupier serve` runs the ladder itself in one process"
        ))),
        None => Err(CliError::Usage(format!(
            "--database {url}: not a database URL (use postgres://USER@HOST/DB)"
        ))),
    }
}

fn ladder_config(args: &WorkerArgs) -> Result<LadderConfig, CliError> {
    let mut config = match &args.ladder {
        None => LadderConfig::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
            croupier_competition::settings::parse_ladder(&text)
                .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?
        }
    };
    if let Some(n) = args.max_matches {
        if n == 0 {
            return Err(CliError::Usage("--max-matches must be at least 1".into()));
        }
        config.max_matches = n;
    }
    config.lease = args.lease.config("worker")?;
    crate::serve::house_threads_fit(&config, args.bot_cpus)?;
    Ok(config)
}

/// Runs the worker until Ctrl-C or SIGTERM.
pub fn run(args: WorkerArgs) -> Result<ExitCode, CliError> {
    check_url(&args.database)?;
    let config = ladder_config(&args)?;
    let sandbox = match (&args.bot_files, crate::sandbox::resolve(args.sandbox)) {
        (Some(dir), Ok(sandbox)) => {
            // Hosted programs get their cgroups from this process's setting.
            let cgroups = crate::sandbox::resolve_cgroups(args.bot_cpus, &sandbox);
            croupier_arena::transport::process::cgroup::configure(cgroups);
            Some((dir.clone(), sandbox))
        }
        (Some(_), Err(e)) => {
            eprintln!("warning: {e}; this worker plays no hosted bots");
            None
        }
        (None, _) => None,
    };
    let rt = crate::start::runtime(&args.runtime)?;
    rt.block_on(async move {
        tracing::info!(
            "{} runtime threads run matches (--threads)",
            tokio::runtime::Handle::current().metrics().num_workers()
        );
        let metrics = args.metrics.start().await?;
        let store = crate::start::open_store(&args.database).await?;
        let http = HttpClient::new(HttpLimits {
            allow_private: args.allow_private_bot_urls,
            ..Default::default()
        })
        .map_err(|e| CliError::Failed(anyhow::anyhow!("{e}")))?;
        // Pull bots poll the instances: their mailboxes are shared through
        // the database (messages as rows, answers relayed here).
        let mailboxes = Arc::new(Mailboxes::default());
        let ladder = Arc::new(
            Ladder::new(
                Arc::clone(&store),
                Arc::clone(&mailboxes),
                Arc::new(http),
                config.clone(),
            )
            .await
            .map_err(|e| CliError::Usage(e.to_string()))?,
        );
        if let Some((dir, sandbox)) = sandbox {
            let move_time = config.games.iter().map(|g| (g.game, g.move_time)).collect();
            let hosted = croupier_competition::hosted::Hosted::new(
                Arc::clone(&store),
                croupier_competition::hosted::HostedConfig {
                    dir: dir.clone(),
                    sandbox,
                    move_time,
                    ladder_cpus: config.bot_cpus,
                },
            )
            .await
            .map_err(|e| CliError::Usage(e.to_string()))?;
            ladder.play_hosted(Arc::new(hosted));
            tracing::info!("hosted bots: programs from {}", dir.display());
        }
        let observed = Arc::clone(&ladder);
        crate::serve::spawn_metrics(
            metrics,
            Arc::new(move || croupier_server::metrics::observe_ladder(&observed)),
        );
        let member = ladder.join().await;
        if let Some(db) = store.cluster() {
            let relay = Relay::start(db, Arc::clone(&member), Arc::new(NoGames))
                .await
                .map_err(|e| CliError::Failed(anyhow::anyhow!("{e}")))?;
            mailboxes.share(relay);
        }
        tracing::info!(
            "croupier worker: process {} on {}, up to {} matches at once",
            member.id(),
            croupier_store::without_password(&args.database),
            config.max_matches
        );
        let mut signals = crate::interrupt::Signals::install()
            .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot watch for signals: {e}")))?;
        let running = tokio::spawn(Arc::clone(&ladder).run());
        let stop = signals.recv().await;
        tracing::info!("{stop:?}: stopping");
        running.abort();
        ladder.leave().await;
        let bots = tokio::task::spawn_blocking(crate::interrupt::stop_bots)
            .await
            .unwrap_or(0);
        tracing::info!("stopped ({bots} bot programs ended)");
        Ok(ExitCode::SUCCESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_refuses_sqlite_and_other_urls_with_a_reason() {
        let msg = |r: Result<(), CliError>| match r {
            Err(CliError::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        };
        assert!(msg(check_url("sqlite://x.db")).contains("a worker needs PostgreSQL"));
        assert!(msg(check_url("mysql://u@h/d")).contains("not a database URL"));
        assert!(check_url("postgres://u@h/d").is_ok());
        assert!(check_url("postgresql://u@h/d").is_ok());
    }
}
