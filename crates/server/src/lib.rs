//! The Croupier server's HTTP layer: the SkullWhist REST API of the 2014
//! SkullSpace event (bots unchanged but for the address) in
//! [`skullwhist_api`], the bot owners' `/v1` ([`bot_api`], [`hosted_api`],
//! [`tournaments_api`], [`admin_api`]), failures in each API's shape ([`api_error`],
//! [`shape`]), rate limits ([`throttle`]) and the accept loop ([`net`]).
//!
//! It is also the composition root: [`prepare`] wires live play
//! (`croupier-live`), the competition (`croupier-competition`) and the
//! website (`croupier-web`) into one `Services`; [`app`] builds the router
//! for socket-free tests; [`run`] serves it on a listener until a shutdown
//! signal.

pub mod admin_api;
pub mod announce;
pub mod api_error;
pub mod bot_api;
pub mod front;
pub mod hosted_api;
pub mod metrics;
pub mod net;
mod paths;
pub mod shape;
pub mod skullwhist_api;
mod skullwhist_api_docs;
pub mod throttle;
pub mod tournaments_api;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use croupier_competition::services::Services;
use croupier_competition::{hosted, house, human, ladder, tournaments};
use croupier_live::hub::{Hub, HubConfig};
use croupier_live::{live_games, mailbox};

/// The server's settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Clocks and limits.
    pub hub: HubConfig,
    /// House bot strategies to run (one bot each).
    pub house_bots: Vec<String>,
    /// Pause before each house bot move.
    pub house_pause: Duration,
    /// The ladder's settings; `None` runs no ladder.
    pub ladder: Option<ladder::LadderConfig>,
    /// Allow push-bot URLs on loopback, private, link-local and multicast
    /// addresses. Off by default: otherwise an owner could make the server
    /// probe its own network.
    pub allow_private_bot_urls: bool,
    /// How bot programs the server starts are confined (`croupier serve
    /// --sandbox`; strict unless turned off). The server starts none yet:
    /// hosted bots (issue 12) will run under it.
    pub sandbox: croupier_arena::transport::process::Sandbox,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            hub: HubConfig::default(),
            house_bots: vec!["random".into(), "heuristic".into(), "strong".into()],
            house_pause: Duration::from_millis(300),
            ladder: Some(ladder::LadderConfig::default()),
            allow_private_bot_urls: false,
            sandbox: croupier_arena::transport::process::Sandbox::Strict(Default::default()),
        }
    }
}

/// The server's service: the router behind the [`front::Front`] (repeated
/// slashes in a path collapsed before routing, as the 2014 server did, the
/// limits, the APIs' failure shapes, and the 2014 API's calls answered
/// without routing).
pub fn app(state: Arc<Services>) -> App {
    let routes = Router::new()
        .merge(croupier_web::routes())
        .route("/api", get(skullwhist_api::index))
        .route("/api/", get(skullwhist_api::index))
        .route(
            "/api/jsonp",
            get(skullwhist_api::jsonp).post(skullwhist_api::jsonp_post),
        )
        .route(
            "/api/jsonp/",
            get(skullwhist_api::jsonp).post(skullwhist_api::jsonp_post),
        )
        .route(
            "/api/{method}",
            get(skullwhist_api::get).post(skullwhist_api::post),
        )
        .route(
            "/api/{method}/",
            get(skullwhist_api::get).post(skullwhist_api::post),
        )
        .merge(bot_api::routes())
        .merge(tournaments_api::routes())
        .merge(admin_api::routes())
        .merge(hosted_api::routes())
        .merge(croupier_web::play::routes())
        .merge(croupier_web::live::routes());
    // Issue 49: requests are counted by route once metrics are on (the
    // front counts the 2014 API's calls it answers itself).
    let counted = metrics::enabled();
    let routes = if counted {
        routes.layer(axum::middleware::from_fn(metrics::track))
    } else {
        routes
    };
    let routes = routes
        // Bodies up to 1 MiB are read so that one over MAX_BODY gets the
        // API's own JSON failure; beyond that the connection gets HTTP 413.
        .layer(DefaultBodyLimit::max(shape::READ_LIMIT as usize))
        .with_state(Arc::clone(&state));
    let throttle = Arc::new(throttle::Throttle::new(throttle::ThrottleConfig::default()));
    front::Front::new(routes, state, throttle, counted)
}

/// What [`app`] builds: a `tower::Service` of requests (`oneshot` it in
/// tests).
pub type App = front::Front;

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] croupier_store::StoreError),
    /// The HTTP client for push bots cannot be built.
    #[error(transparent)]
    Http(#[from] croupier_arena::transport::TransportError),
    /// The ladder's settings cannot run.
    #[error(transparent)]
    Ladder(#[from] ladder::LadderError),
    /// A house bot's strategy does not exist.
    #[error("house bot: {0}")]
    House(#[from] croupier_bots::UnknownBot),
    /// Hosted bots cannot be loaded.
    #[error(transparent)]
    Hosted(#[from] hosted::HostedError),
    /// Hosted bots were enabled twice.
    #[error("hosted bots are already enabled")]
    HostedTwice,
    /// The process cannot register with the others on its database
    /// (issue 13).
    #[error("cannot register with the other instances: {0}")]
    Lease(#[from] croupier_live::lease::LeaseError),
    /// The hub cannot join the other instances (issue 13).
    #[error("cannot join the other instances: {0}")]
    Join(#[from] croupier_live::hub::JoinError),
}

/// Prepares the server state: closes games a previous run left in progress,
/// and registers the house bots.
pub async fn prepare(
    store: Arc<dyn croupier_store::Store>,
    config: &ServerConfig,
) -> Result<(Arc<Services>, Vec<(i64, String)>), StartError> {
    let now = croupier_arena::record::now_rfc3339();
    // wd (issue 13): on PostgreSQL other instances may be playing; the
    // games of an instance that stopped are closed when its lease runs out
    // (`croupier_live::lease`), not by whoever starts next.
    if store.cluster().is_none() {
        let aborted = store
            .abort_running("the server restarted while the game was in progress", &now)
            .await?;
        if aborted > 0 {
            tracing::warn!("closed {aborted} games left in progress as aborted");
        }
    }
    let hub = Arc::new(Hub::new(Arc::clone(&store), config.hub.clone()));
    // wg (issue 13): on PostgreSQL the process registers once, for its hub
    // and its ladder, and one task renews it (`croupier_live::lease`).
    let member = match store.cluster() {
        Some(_) => {
            let m = croupier_live::lease::Membership::join(
                Arc::clone(&store),
                config.hub.lease.clone(),
            )
            .await?;
            let m = Arc::new(m);
            tokio::spawn(Arc::clone(&m).run());
            hub.join_cluster(Arc::clone(&m)).await?;
            Some(m)
        }
        None => None,
    };
    let mailboxes = Arc::new(mailbox::Mailboxes::default());
    if let Some(relay) = hub.relay() {
        mailboxes.share(Arc::clone(relay)); // wg (issue 13): pull bots on any instance
    }
    let limits = croupier_arena::transport::http::HttpLimits {
        allow_private: config.allow_private_bot_urls,
        ..Default::default()
    };
    let http = Arc::new(croupier_arena::transport::http::HttpClient::new(limits)?);
    // wf (issue 16): spectators and people.
    let live = Arc::new(live_games::LiveGames::default());
    hub.watch_with(Arc::clone(&live)); // REST games are watched too
    let people = Arc::new(human::People::new(
        Arc::clone(&store),
        Arc::clone(&mailboxes),
        Some(Arc::clone(&http)),
        Arc::clone(&live),
    ));
    let ladder = match &config.ladder {
        None => None,
        Some(l) => {
            let ladder = Arc::new(
                ladder::Ladder::new(
                    Arc::clone(&store),
                    Arc::clone(&mailboxes),
                    Arc::clone(&http),
                    l.clone(),
                )
                .await?,
            );
            ladder.watch_with(Arc::clone(&live)); // wf (issue 16)
            if let Some(m) = &member {
                ladder.adopt(Arc::clone(m)); // wg (issue 13): one registration
            }
            // Tournaments share the ladder's capacity (issue 15).
            let capacity = Arc::new(croupier_competition::capacity::Capacity::new(
                l.max_matches,
                l.tournament_share,
            ));
            capacity.attach_ladder(&ladder);
            ladder.attach_capacity(Arc::clone(&capacity));
            Some((
                ladder,
                Arc::new(tournaments::Tournaments::new(
                    Arc::clone(&store),
                    Arc::clone(&mailboxes),
                    Arc::clone(&http),
                    l,
                    capacity,
                )),
            ))
        }
    };
    let (ladder, tournaments) = match ladder {
        Some((l, t)) => (Some(l), Some(t)),
        None => (None, None),
    };
    let mut house = Vec::new();
    for strategy in &config.house_bots {
        croupier_bots::Builtins::builtin(strategy).map(
            |_: Box<dyn croupier_bots::Strategy<croupier_rules::skullwhist::SkullWhist>>| (),
        )?;
        house.push((house::ensure_bot(&hub, strategy).await?, strategy.clone()));
    }
    let admin = Arc::new(croupier_competition::admin::Admin::new(Arc::clone(
        hub.store(),
    )));
    Ok((
        Arc::new(Services {
            hub,
            mailboxes,
            ladder,
            allow_private_bot_urls: config.allow_private_bot_urls,
            tournaments,
            hosted: std::sync::OnceLock::new(),
            live,
            people,
            admin,
            kept: Default::default(),
        }),
        house,
    ))
}

/// Turns hosted bots on (issue 12): uploads are kept in `config.dir`, and
/// the ladder plays their active versions. Call after [`prepare`].
pub async fn enable_hosted(
    state: &Services,
    mut config: hosted::HostedConfig,
) -> Result<(), StartError> {
    if let Some(l) = &state.ladder {
        for g in [
            croupier_rules::GameKind::Goofspiel,
            croupier_rules::GameKind::LoveLetter,
            croupier_rules::GameKind::SkullWhist,
        ] {
            if let Some(t) = l.move_time(g) {
                config.move_time.entry(g).or_insert(t);
            }
        }
        // Issue 51: the ladder's CPU quota for its bot programs.
        config.ladder_cpus = config.ladder_cpus.or(l.bot_cpus());
    }
    let h = Arc::new(hosted::Hosted::new(Arc::clone(state.hub.store()), config).await?);
    if let Some(l) = &state.ladder {
        l.play_hosted(Arc::clone(&h));
    }
    state.people.play_hosted(Arc::clone(&h));
    // Issue 15: tournaments play the hosted entries' frozen versions.
    if let Some(t) = &state.tournaments {
        t.enable_hosted(Arc::clone(&h));
    }
    state.hosted.set(h).map_err(|_| StartError::HostedTwice)
}

/// Serves the API on `listener` with the house bots playing, until
/// `shutdown` completes; then stops accepting and lets requests finish.
/// Connections get the default timeouts and caps ([`net::NetConfig`]),
/// the overall cap fitted under the open-file limit (raised at start).
pub async fn run(
    listener: TcpListener,
    state: Arc<Services>,
    house: Vec<(i64, String)>,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let net = net::NetConfig::default().fit_to_fd_limit(net::raise_fd_limit());
    run_on(listener, state, house, config, net, shutdown).await
}

/// [`run`] with the given connection timeouts and caps.
pub async fn run_on(
    listener: TcpListener,
    state: Arc<Services>,
    house: Vec<(i64, String)>,
    config: &ServerConfig,
    net: net::NetConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut tasks = JoinSet::new();
    let hub = Arc::clone(&state.hub);
    tasks.spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tick.tick().await;
            hub.sweep().await;
        }
    });
    if let Some(ladder) = &state.ladder {
        tasks.spawn(Arc::clone(ladder).run());
    }
    if let Some(t) = &state.tournaments {
        tasks.spawn(Arc::clone(t).run());
    }
    for (bot, strategy) in house {
        tasks.spawn(house::run(
            Arc::clone(&state.hub),
            bot,
            strategy,
            config.house_pause,
        ));
    }
    let result = net::serve(listener, app(state), net, shutdown).await;
    tasks.shutdown().await;
    result
}
