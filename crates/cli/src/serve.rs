//! `croupier serve`: the server, on an embedded SQLite file by default or
//! on PostgreSQL (`--database postgres://…`).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use croupier_live::hub::HubConfig;
use croupier_server::ServerConfig;

use crate::error::CliError;

/// Arguments of `croupier serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "CROUPIER_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Database URL: `sqlite://FILE` (created if missing) or
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (also `postgresql://`;
    /// the database must exist; a Unix socket folder goes in `?host=/path`).
    #[arg(
        long,
        env = "CROUPIER_DATABASE",
        hide_env_values = true,
        default_value = "sqlite://croupier.db"
    )]
    database: String,
    /// House bot strategies, comma-separated (empty for none).
    #[arg(long, default_value = "random,heuristic,strong")]
    house_bots: String,
    /// Milliseconds a house bot waits before each move.
    #[arg(long, default_value_t = 300)]
    house_pause_ms: u64,
    /// Seconds a due bot may stay silent before it forfeits.
    #[arg(long, default_value_t = 120.0)]
    move_timeout: f64,
    /// Seconds without a request after which a session expires.
    #[arg(long, default_value_t = 300.0)]
    session_idle: f64,
    /// Seconds new-game waits for an opponent before answering retry.
    #[arg(long, default_value_t = 30.0)]
    poll_timeout: f64,
    /// Ladder settings (TOML: per-game variant, move time, time budget,
    /// house bots; see docs/ladder.md). Default: built-in settings.
    #[arg(long, value_name = "FILE")]
    ladder: Option<std::path::PathBuf>,
    /// Run no ladder (only SkullWhist REST games and their house bots).
    #[arg(long, conflicts_with = "ladder")]
    no_ladder: bool,
    /// Let owners register push bots on loopback, private, link-local or
    /// multicast addresses, and call them there. Off by default, so that
    /// the server cannot be made to probe its own network; turn it on for
    /// a private event whose bots run beside the server.
    #[arg(long)]
    allow_private_bot_urls: bool,
    /// How bot programs the server starts are confined (`strict` or `off`;
    /// docs/sandbox.md).
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
    /// An admin: an owner who may organise tournaments and use `croupier
    /// admin` (repeatable; also sets the owner's admin flag in the database
    /// if the owner exists).
    #[arg(long, value_name = "OWNER")]
    admin: Vec<String>,
    /// The share of the ladder's max_matches that tournaments may use while
    /// one runs (0.05-1; the ladder keeps the rest). Default: the ladder
    /// file's tournament_share, else 0.75.
    #[arg(long, value_name = "SHARE")]
    tournament_share: Option<f64>,
    /// Folder for the programs owners upload as hosted bots (docs/hosted-bots.md).
    /// Default: `NAME-bot-files` beside a SQLite database `NAME.db`, or
    /// `croupier-bot-files` in the working folder for PostgreSQL.
    #[arg(long, value_name = "DIR")]
    bot_files: Option<std::path::PathBuf>,
    #[command(flatten)]
    lease: LeaseArgs,
    #[command(flatten)]
    runtime: crate::start::RuntimeArgs,
    #[command(flatten)]
    metrics: MetricsArgs,
}

/// Where `/metrics` is served (`serve` and `worker`; docs/deploy.md).
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Serve metrics in the Prometheus text format at
    /// `http://ADDR/metrics`, on this address of their own (off by
    /// default; keep it private, e.g. 127.0.0.1:9464).
    #[arg(long, env = "CROUPIER_METRICS_LISTEN", value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
}

impl MetricsArgs {
    /// Installs the recorder and binds the address, if metrics are wanted:
    /// before anything starts, so that every count is kept.
    pub async fn start(
        &self,
    ) -> Result<
        Option<(
            tokio::net::TcpListener,
            metrics_exporter_prometheus::PrometheusHandle,
        )>,
        CliError,
    > {
        let Some(addr) = self.metrics_listen else {
            return Ok(None);
        };
        let listener = croupier_server::metrics::bind(addr)
            .await
            .map_err(CliError::Usage)?;
        let handle = croupier_server::metrics::install()
            .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot start the metrics: {e}")))?;
        Ok(Some((listener, handle)))
    }
}

/// Serves `/metrics` in the background (until the process ends), with
/// `observe` setting the gauges at each scrape.
pub fn spawn_metrics(
    metrics: Option<(
        tokio::net::TcpListener,
        metrics_exporter_prometheus::PrometheusHandle,
    )>,
    observe: croupier_server::metrics::Observe,
) {
    if let Some((listener, handle)) = metrics {
        if let Ok(addr) = listener.local_addr() {
            tracing::info!("metrics on http://{addr}/metrics");
        }
        // Histograms are drained at each scrape, and here too, so that they
        // stay small while nothing scrapes.
        let upkeep = handle.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
            loop {
                tick.tick().await;
                upkeep.run_upkeep();
            }
        });
        tokio::spawn(async move {
            let stop = std::future::pending();
            if let Err(e) = croupier_server::metrics::serve(listener, handle, observe, stop).await {
                tracing::warn!("metrics: {e}");
            }
        });
    }
}

/// The registration of a process among the others on one PostgreSQL
/// database (`serve` and `worker`; docs/deploy.md).
#[derive(Debug, Args)]
pub struct LeaseArgs {
    /// Seconds between this process's heartbeats (its registration's
    /// renewal, the search for lost processes).
    #[arg(
        long,
        env = "CROUPIER_LEASE_HEARTBEAT",
        value_name = "SECS",
        default_value_t = 2.0
    )]
    lease_heartbeat: f64,
    /// Seconds a registration lasts without a heartbeat: then the process
    /// counts as lost and the others close its games. More than twice the
    /// heartbeat.
    #[arg(
        long,
        env = "CROUPIER_LEASE_EXPIRY",
        value_name = "SECS",
        default_value_t = 10.0
    )]
    lease_expiry: f64,
}

impl LeaseArgs {
    /// The lease settings for a process of `role`.
    pub fn config(&self, role: &str) -> Result<croupier_live::lease::LeaseConfig, CliError> {
        let beat = seconds("lease-heartbeat", self.lease_heartbeat)?;
        let ttl = seconds("lease-expiry", self.lease_expiry)?;
        if ttl < beat * 2 {
            return Err(CliError::Usage(format!(
                "--lease-expiry ({} s) must be at least twice --lease-heartbeat ({} s): \
                 a registration must outlive a late heartbeat",
                self.lease_expiry, self.lease_heartbeat
            )));
        }
        Ok(croupier_live::lease::LeaseConfig {
            role: role.into(),
            ttl,
            beat,
        })
    }
}

/// The bot-files folder: given, or beside the database.
fn bot_files(args: &ServeArgs) -> std::path::PathBuf {
    if let Some(dir) = &args.bot_files {
        return dir.clone();
    }
    let file = args
        .database
        .strip_prefix("sqlite://")
        .or_else(|| args.database.strip_prefix("sqlite:"))
        .filter(|f| !f.starts_with(':') && !f.is_empty())
        .map(|f| std::path::Path::new(f.split('?').next().unwrap_or(f)));
    match file {
        Some(f) => {
            let stem = f
                .file_stem()
                .map_or("croupier".into(), |s| s.to_string_lossy().into_owned());
            f.with_file_name(format!("{stem}-bot-files"))
        }
        None => std::path::PathBuf::from("croupier-bot-files"),
    }
}

fn ladder_config(
    args: &ServeArgs,
) -> Result<Option<croupier_competition::ladder::LadderConfig>, CliError> {
    if args.no_ladder {
        return Ok(None);
    }
    let mut config = match &args.ladder {
        None => Default::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
            croupier_competition::settings::parse_ladder(&text)
                .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?
        }
    };
    config.lease = args.lease.config("serve")?;
    house_threads_fit(&config, args.bot_cpus)?;
    if let Some(share) = args.tournament_share {
        if !(0.05..=1.0).contains(&share) {
            return Err(CliError::Usage(
                "--tournament-share must be between 0.05 and 1".into(),
            ));
        }
        config.tournament_share = share;
    }
    Ok(Some(config))
}

/// Issue 51: a `strong` house bot of the ladder searches on no more
/// threads than a bot program of the same match may use (the ladder's
/// `bot_cpus`, else `--bot-cpus`); one that asks for more is refused at
/// start (of `serve` and of `worker`), with the fix, as `play` refuses
/// such a seat.
pub(crate) fn house_threads_fit(
    ladder: &croupier_competition::ladder::LadderConfig,
    bot_cpus: croupier_arena::transport::process::cgroup::BotCpus,
) -> Result<(), CliError> {
    let (cpus, key, raise) = match ladder.bot_cpus {
        Some(cpus) => (cpus, "the ladder's bot_cpus =", "bot_cpus"),
        None => (bot_cpus, "--bot-cpus", "--bot-cpus"),
    };
    for game in &ladder.games {
        for house in &game.house {
            let Ok(spec) = format!("builtin:{house}").parse::<croupier_arena::spec::BotSpec>()
            else {
                continue;
            };
            if croupier_arena::fair_threads::fit_threads(&spec, cpus).is_err() {
                let most = cpus.threads();
                return Err(CliError::Usage(format!(
                    "ladder settings, game {}: house bot '{house}' asks for more search \
                     threads than a bot program of its matches may use ({key} {cpus}: at \
                     most {most}); give it threads={most} or fewer, or raise {raise}",
                    game.game
                )));
            }
        }
    }
    Ok(())
}

pub(crate) fn seconds(name: &str, v: f64) -> Result<Duration, CliError> {
    if v > 0.0 && v <= 86_400.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(CliError::Usage(format!(
            "--{name} must be between 0 and 86400 seconds"
        )))
    }
}

/// Runs the server until Ctrl-C or SIGTERM.
pub fn run(args: ServeArgs) -> Result<ExitCode, CliError> {
    let mut hosted_ok = false;
    let config = ServerConfig {
        hub: HubConfig {
            session_idle: seconds("session-idle", args.session_idle)?,
            move_timeout: seconds("move-timeout", args.move_timeout)?,
            poll_timeout: seconds("poll-timeout", args.poll_timeout)?,
            lease: args.lease.config("serve")?,
        },
        house_bots: args
            .house_bots
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
        house_pause: Duration::from_millis(args.house_pause_ms),
        ladder: ladder_config(&args)?,
        allow_private_bot_urls: args.allow_private_bot_urls,
        // Only hosted bots are programs the server starts, so where the
        // sandbox cannot work the server still runs without them: the
        // README's first command must work on a machine without bubblewrap.
        sandbox: match crate::sandbox::resolve(args.sandbox) {
            Ok(sandbox) => {
                hosted_ok = true;
                // Hosted programs get their cgroups from this process's
                // setting.
                let cgroups = crate::sandbox::resolve_cgroups(args.bot_cpus, &sandbox);
                croupier_arena::transport::process::cgroup::configure(cgroups);
                sandbox
            }
            Err(e) => {
                eprintln!("warning: {e}; the server runs on without hosted bots");
                croupier_arena::transport::process::Sandbox::Off
            }
        },
    };
    let bot_files = bot_files(&args);
    let rt = crate::start::runtime(&args.runtime)?;
    rt.block_on(async move {
        let metrics = args.metrics.start().await?;
        let store = crate::start::open_store(&args.database).await?;
        let (state, house) = croupier_server::prepare(Arc::clone(&store), &config)
            .await
            .map_err(|e| CliError::Usage(e.to_string()))?;
        let observed = Arc::clone(&state);
        spawn_metrics(
            metrics,
            Arc::new(move || croupier_server::metrics::observe(&observed)),
        );
        if !args.admin.is_empty() {
            match &state.tournaments {
                Some(t) => t.set_admins(args.admin.clone()),
                None => tracing::warn!("--admin: this server runs no ladder, so no tournaments"),
            }
            for name in &args.admin {
                match store.tournaments().set_owner_admin(name, true).await {
                    Ok(true) => tracing::info!("owner {name} may organise tournaments"),
                    Ok(false) => tracing::info!(
                        "owner {name} may organise tournaments once registered (croupier owner register)"
                    ),
                    Err(e) => return Err(CliError::Failed(e.into())),
                }
            }
        }
        if hosted_ok {
            croupier_server::enable_hosted(
                &state,
                croupier_competition::hosted::HostedConfig {
                    dir: bot_files.clone(),
                    sandbox: config.sandbox.clone(),
                    move_time: Default::default(),
                    // The ladder settings' `bot_cpus`, if any (filled in
                    // by `enable_hosted`).
                    ladder_cpus: None,
                },
            )
            .await
            .map_err(|e| CliError::Usage(e.to_string()))?;
            tracing::info!("hosted bots: uploads kept in {}", bot_files.display());
        }
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|e| CliError::Usage(format!("cannot listen on {}: {e}", args.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::Failed(e.into()))?;
        tracing::info!(
            "{}",
            croupier_server::announce::serving_line(addr, &args.database)
        );
        tracing::info!(
            "{} runtime threads answer requests (--threads)",
            tokio::runtime::Handle::current().metrics().num_workers()
        );
        if !config.house_bots.is_empty() {
            tracing::info!("house bots playing: {}", config.house_bots.join(", "));
        }
        let mut signals = crate::interrupt::Signals::install()
            .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot watch for signals: {e}")))?;
        // Issue 13: leave in order (the ladder's registration is the hub's).
        let ladder = state.ladder.clone();
        let member = state.hub.relay().map(|r| Arc::clone(r.member()));
        croupier_server::run(listener, state, house, &config, async move {
            let stop = signals.recv().await;
            tracing::info!("{stop:?}: stopping");
        })
        .await
        .map_err(|e| CliError::Failed(e.into()))?;
        // Its games closed, its bots freed, its registration removed; the
        // ladder first lets its matches wind down (a deal in flight
        // included), then leaves with the registration it shares.
        if let Some(l) = ladder.filter(|l| l.membership().is_some()) {
            l.leave().await;
        } else if let Some(m) = member {
            match m.leave().await {
                Ok(r) => {
                    let games: usize = r.iter().map(|r| r.games.len()).sum();
                    tracing::info!("left the other processes; closed {games} games in progress");
                }
                Err(e) => tracing::warn!("cannot leave in order: {e}"),
            }
        }
        // Bot programs get SIGTERM, a grace, then SIGKILL; a server stopped
        // by a signal has ended normally (exit 0).
        let bots = tokio::task::spawn_blocking(crate::interrupt::stop_bots)
            .await
            .unwrap_or(0);
        tracing::info!("stopped ({bots} bot programs ended)");
        Ok(ExitCode::SUCCESS)
    })
}
