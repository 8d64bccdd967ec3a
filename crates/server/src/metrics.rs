//! Metrics at `/metrics` in the Prometheus text format (issue 49), on an
//! address of their own (`croupier serve --metrics-listen`), off by default.
//!
//! Counters and histograms are counted where things happen, through the
//! `metrics` facade (games in `croupier_live::metrics`, bot program starts
//! in the arena, group commits in the store, the ladder's queue and
//! tournaments' progress in the competition, HTTP requests here); until
//! [`install`] sets the recorder they cost next to nothing. Gauges of what
//! is in progress (games, sessions, bots online, the ladder's matches) are
//! read from the server's state at each scrape ([`observe`]).
//! `metrics-exporter-prometheus` writes the text.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request};
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use croupier_competition::services::Services;
use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};

/// HTTP requests answered, by route, method and status.
pub const HTTP_REQUESTS: &str = "croupier_http_requests_total";
/// Time to answer an HTTP request (until its headers), by route and method.
pub const HTTP_SECONDS: &str = "croupier_http_request_duration_seconds";

/// Buckets of every histogram in seconds: 100 µs to 60 s (`new-game` is a
/// long poll of up to 30 s by default).
const SECONDS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];
/// Buckets of the group commit's batch sizes.
const WRITES: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];
/// A pull bot that polled within this long counts as online.
const PULL_ONLINE: Duration = Duration::from_secs(60);

static ON: AtomicBool = AtomicBool::new(false);

/// Installs the process's metrics recorder; its handle writes `/metrics`.
/// Once per process.
pub fn install() -> Result<PrometheusHandle, BuildError> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)?
        .set_buckets_for_metric(
            Matcher::Full(croupier_store::group::BATCH_WRITES.into()),
            WRITES,
        )?
        .install_recorder()?;
    ON.store(true, Ordering::Relaxed);
    describe();
    Ok(handle)
}

/// Whether [`install`] ran: the HTTP layer counts requests only then.
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

fn describe() {
    use croupier_live::metrics as games;
    describe_counter!(
        games::GAMES_STARTED,
        "Games dealt, by game and kind (rest, ladder, tournament, people)."
    );
    describe_counter!(
        games::GAMES_FINISHED,
        "Games finished and stored, by game and kind."
    );
    describe_counter!(
        games::GAMES_ABORTED,
        "Games aborted (stored without a result), by game and kind."
    );
    describe_counter!(
        games::FAULTS,
        "Faults ruled in finished games, by game and fault kind."
    );
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by route, method and status."
    );
    describe_histogram!(
        HTTP_SECONDS,
        Unit::Seconds,
        "Time to answer an HTTP request (from the router on: not throttled requests), by route and method."
    );
    describe_histogram!(
        croupier_store::group::BATCH_WRITES,
        Unit::Count,
        "Writes per group-commit batch."
    );
    describe_histogram!(
        croupier_store::group::COMMIT_SECONDS,
        Unit::Seconds,
        "Time to commit a group-commit batch."
    );
    describe_counter!(
        croupier_store::group::FAILED_BATCHES,
        "Group-commit batches that failed whole and were retried one write at a time."
    );
    use croupier_arena::transport::process;
    describe_counter!(
        process::PROCESS_STARTS,
        "Bot programs started, by sandbox (strict, off) and result."
    );
    describe_histogram!(
        process::PROCESS_START_SECONDS,
        Unit::Seconds,
        "Time to start a bot program, by sandbox."
    );
    use croupier_competition::ladder;
    describe_gauge!(
        ladder::LADDER_READY,
        "Registered bots free for a ladder match of a game at the last tick."
    );
    describe_gauge!(
        ladder::LADDER_WAITING,
        "Of those, bots no table took at the last tick: the ladder's queue."
    );
    use croupier_competition::tournaments as t;
    describe_gauge!(t::TOURNAMENTS, "Tournaments by status.");
    describe_gauge!(
        t::TOURNAMENT_GAMES,
        "A tournament's planned games by status (pending, running, done, void)."
    );
    describe_gauge!(t::TOURNAMENT_ROUND, "A tournament's current round.");
    describe_gauge!(t::TOURNAMENT_ROUNDS, "A tournament's number of rounds.");
    describe_gauge!(
        games::GAMES_ACTIVE,
        "Games in progress in this process (dealt, not yet finished or aborted), by game and kind."
    );
    describe_gauge!(SPECTATORS, "Spectators watching games of this process.");
    describe_gauge!(
        SESSIONS,
        "Sessions of the 2014 REST API open on this process."
    );
    describe_gauge!(
        REST_WAITING,
        "REST bots waiting for an opponent on this process."
    );
    describe_gauge!(
        BOTS_ONLINE,
        "Bots online on this process: rest (a session), pull (polled within 60 s)."
    );
    describe_gauge!(LADDER_RUNNING, "Ladder matches this process is playing.");
    describe_gauge!(
        LADDER_BUSY,
        "Registered bots in a ladder match of this process."
    );
}

/// Spectators now.
pub const SPECTATORS: &str = "croupier_spectators";
/// Sessions of the 2014 REST API.
pub const SESSIONS: &str = "croupier_sessions";
/// REST bots waiting for an opponent.
pub const REST_WAITING: &str = "croupier_rest_waiting_bots";
/// Bots online, by kind.
pub const BOTS_ONLINE: &str = "croupier_bots_online";
/// Ladder matches in progress.
pub const LADDER_RUNNING: &str = "croupier_ladder_matches_running";
/// Bots in a ladder match.
pub const LADDER_BUSY: &str = "croupier_ladder_busy_bots";

/// Sets the gauges of what the server is doing now.
pub fn observe(state: &Services) {
    let live = state.live.list();
    let spectators: usize = live.iter().map(|g| g.spectators).sum();
    metrics::gauge!(SPECTATORS).set(spectators as f64);
    let sessions = state.hub.sessions();
    metrics::gauge!(SESSIONS).set(sessions as f64);
    metrics::gauge!(REST_WAITING).set(state.hub.counts().1 as f64);
    metrics::gauge!(BOTS_ONLINE, "kind" => "rest").set(sessions as f64);
    metrics::gauge!(BOTS_ONLINE, "kind" => "pull").set(state.mailboxes.online(PULL_ONLINE) as f64);
    if let Some(ladder) = &state.ladder {
        observe_ladder(ladder);
    }
}

/// Sets the gauges of a ladder (a server's, or a worker's).
pub fn observe_ladder(ladder: &croupier_competition::ladder::Ladder) {
    let status = ladder.status();
    metrics::gauge!(LADDER_RUNNING).set(status.running as f64);
    metrics::gauge!(LADDER_BUSY).set(status.busy.len() as f64);
}

/// A route's label: the router's pattern with `:name` for each parameter
/// (`/leaderboard/:game`), which every text parser reads (braces inside a
/// label value trip some); the 2014 API's calls by their method
/// (`/api/status`, one of a known few), so that `new-game`'s long polls do
/// not hide how fast `status` and `play` answer.
fn route_label(pattern: &str, path: &str) -> String {
    if pattern.starts_with("/api/{method}") {
        let method = path.trim_start_matches("/api/").trim_end_matches('/');
        if crate::skullwhist_api::METHODS.contains(&method) {
            return format!("/api/{method}");
        }
    }
    pattern.replace('{', ":").replace('}', "")
}

/// Counts an HTTP request: its route (the router's pattern, such as
/// `/bots/:name`, or `unmatched`), method and status, and its time.
pub async fn track(req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map_or_else(
        || "unmatched".to_string(),
        |p| route_label(p.as_str(), req.uri().path()),
    );
    let method = req.method().as_str().to_string();
    let since = Instant::now();
    let response = next.run(req).await;
    record(route, method, since, &response);
    response
}

/// Records one answered request: its time and its count, by route, method
/// and status.
fn record(route: String, method: String, since: Instant, response: &Response) {
    let status = response.status().as_u16().to_string();
    metrics::histogram!(HTTP_SECONDS, "route" => route.clone(), "method" => method.clone())
        .record(since.elapsed().as_secs_f64());
    metrics::counter!(HTTP_REQUESTS, "route" => route, "method" => method, "status" => status)
        .increment(1);
}

/// Counts a call of the 2014 API that the front answered without the
/// router (`crate::front`), as [`track`] counts a routed one.
pub fn count_api_call(path: &str, since: Instant, response: &Response) {
    // The router's two routes, with and without the slash.
    let pattern = if path.ends_with('/') {
        "/api/{method}/"
    } else {
        "/api/{method}"
    };
    record(route_label(pattern, path), "POST".into(), since, response);
}

/// What sets the gauges before each scrape.
pub type Observe = Arc<dyn Fn() + Send + Sync>;

/// The `/metrics` router: the gauges are read, then everything written.
pub fn router(handle: PrometheusHandle, observe: Observe) -> Router {
    Router::new().route(
        "/metrics",
        get(move || {
            let handle = handle.clone();
            let observe = Arc::clone(&observe);
            async move {
                observe();
                handle.run_upkeep();
                (
                    [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
                    handle.render(),
                )
                    .into_response()
            }
        }),
    )
}

/// Serves `/metrics` on `listener` until `shutdown`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    handle: PrometheusHandle,
    observe: Observe,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(handle, observe))
        .with_graceful_shutdown(shutdown)
        .await
}

/// Binds the metrics address, with a clear error.
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, String> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for metrics on {addr}: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn route_labels_name_parameters_with_colons() {
        use super::route_label;
        let label = |pattern, path| route_label(pattern, path);
        assert_eq!(
            label("/leaderboard/{game}", "/leaderboard/x"),
            "/leaderboard/:game"
        );
        assert_eq!(label("/json/live/{id}", "/json/live/3"), "/json/live/:id");
        assert_eq!(label("/api/", "/api/"), "/api/");
        assert_eq!(label("/api/{method}/", "/api/status/"), "/api/status");
        assert_eq!(label("/api/{method}", "/api/new-game"), "/api/new-game");
        // Not one of the API's methods: no label of its own.
        assert_eq!(label("/api/{method}", "/api/x9z"), "/api/:method");
    }
}
