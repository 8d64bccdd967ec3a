//! The website: server-rendered HTML pages that work without JavaScript,
//! each data page with a JSON twin at the same path under `/json`
//! (`/bots/alice` → `/json/bots/alice`).
//!
//! | page | URL |
//! |---|---|
//! | home (live games, recent results, news) | `/` |
//! | about | `/about` |
//! | rules per game | `/rules`, `/rules/{game}` |
//! | start here (a first bot per way to connect) | `/start` |
//! | API docs per dialect | `/docs`, `/docs/{dialect}` |
//! | HTTP API reference (from `/openapi.json`) | `/docs/http-api`, `/docs/http-api/{tag}` |
//! | leaderboard and head-to-head matrix | `/leaderboard/{game}` |
//! | bots online and every rated bot | `/bots` |
//! | bot | `/bots/{name}` |
//! | versus | `/versus/{a}/{b}` |
//! | games list | `/games?game=&bot=&page=` |
//! | game replay | `/games/{id}?step=N` |
//! | activity chart | `/activity` |
//!
//! Pages read the store through [`croupier_store::WebReads`]; no query
//! scans all games (see `bench web`).

mod bot;
mod doc_pages;
mod games;
pub mod html;
pub mod live;
mod openapi;
mod pages;
pub mod play;
mod profile;
mod replay;
mod replay_games;
pub mod seed;
mod stats;
mod svg;
mod versus;

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Serialize;

use crate::AppState;

/// The stylesheet, one for every page.
const CSS: &str = include_str!("croupier.css");

/// The website's routes (merged into [`crate::app`]).
pub fn routes() -> Router<Arc<AppState>> {
    let mut r = Router::new()
        .route("/static/croupier.css", get(css))
        .route("/about", get(pages::about))
        .route("/rules", get(doc_pages::rules_index))
        .route("/rules/{game}", get(doc_pages::rules))
        .route("/docs", get(doc_pages::docs_index))
        .route("/docs/http-api", get(openapi::index))
        .route("/docs/http-api/{tag}", get(openapi::tag))
        .route("/start", get(doc_pages::start))
        .route("/docs/{dialect}", get(doc_pages::docs));
    // Data pages and their JSON twins.
    for prefix in ["", "/json"] {
        let root = if prefix.is_empty() { "/" } else { "/json/home" };
        r = r
            .route(root, get(pages::home))
            .route(&format!("{prefix}/bots"), get(pages::bots))
            .route(&format!("{prefix}/activity"), get(pages::activity))
            .route(
                &format!("{prefix}/leaderboard/{{game}}"),
                get(stats::leaderboard),
            )
            .route(&format!("{prefix}/bots/{{name}}"), get(bot::bot))
            .route(&format!("{prefix}/versus/{{a}}/{{b}}"), get(versus::versus))
            .route(&format!("{prefix}/games"), get(games::list))
            .route(&format!("{prefix}/games/{{id}}"), get(games::game));
    }
    // Tournaments (issue 15).
    r = r.merge(crate::tournaments::pages::routes());
    r.fallback(not_found)
}

async fn css() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        CSS,
    )
        .into_response()
}

async fn not_found(uri: axum::http::Uri) -> Response {
    WebError::NotFound(format!("There is no page at {}.", uri.path())).page(Fmt::Html)
}

/// Whether a request asked for the HTML page or its JSON twin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// The page.
    Html,
    /// The JSON twin (paths under `/json`).
    Json,
}

impl<S: Send + Sync> FromRequestParts<S> for Fmt {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(if parts.uri.path().starts_with("/json/") {
            Fmt::Json
        } else {
            Fmt::Html
        })
    }
}

/// Why a page cannot be shown.
#[derive(Debug)]
pub enum WebError {
    /// No such thing (HTTP 404); the message says what.
    NotFound(String),
    /// A malformed parameter (HTTP 400).
    BadRequest(String),
    /// The store failed (HTTP 500; details go to the log only).
    Internal,
}

impl From<croupier_store::StoreError> for WebError {
    fn from(e: croupier_store::StoreError) -> Self {
        tracing::error!("website: store error: {e}");
        WebError::Internal
    }
}

impl WebError {
    /// The error as a page (or JSON) with its status.
    pub fn page(&self, fmt: Fmt) -> Response {
        let (status, title, msg) = match self {
            WebError::NotFound(m) => (StatusCode::NOT_FOUND, "Not found", m.as_str()),
            WebError::BadRequest(m) => (StatusCode::BAD_REQUEST, "Bad request", m.as_str()),
            WebError::Internal => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Server error",
                "Something went wrong on our side; it has been logged.",
            ),
        };
        match fmt {
            Fmt::Json => crate::api_error::ApiError::from_status(status, msg).into_response(),
            Fmt::Html => {
                let body = format!(
                    "<section class=\"error\"><h1>{status_code} · {title}</h1><p>{}</p>\
<p><a href=\"/\">Home</a> · <a href=\"/games\">Games</a> · <a href=\"/bots\">Bots</a></p></section>",
                    html::esc(msg),
                    status_code = status.as_u16()
                );
                (
                    status,
                    axum::response::Html(html::layout(title, None, &body)),
                )
                    .into_response()
            }
        }
    }
}

/// Sends `data` as JSON, or as the page `render` builds from it.
pub fn respond<D: Serialize>(
    fmt: Fmt,
    result: Result<D, WebError>,
    render: impl FnOnce(&D) -> String,
) -> Response {
    match result {
        Err(e) => e.page(fmt),
        Ok(d) => match fmt {
            Fmt::Json => axum::Json(d).into_response(),
            Fmt::Html => axum::response::Html(render(&d)).into_response(),
        },
    }
}

/// The current time as RFC 3339 (what the store's times look like), moved
/// back by `secs`.
pub fn rfc3339_ago(secs: u64) -> String {
    let t = std::time::SystemTime::now()
        .checked_sub(std::time::Duration::from_secs(secs))
        .unwrap_or(std::time::UNIX_EPOCH);
    croupier_arena::runner::rfc3339(t)
}
