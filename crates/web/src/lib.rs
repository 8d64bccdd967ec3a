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
//! | leaderboard and head-to-head matrix (a past season: `?season=N`) | `/leaderboard/{game}` |
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
pub mod events;
mod games;
mod games_list;
pub mod html;
pub mod live;
pub mod openapi;
mod openapi_examples;
pub mod page;
mod pages;
mod people;
pub mod play;
mod profile;
mod replay;
mod replay_games;
pub mod seed;
mod stats;
mod svg;
pub mod table;
pub mod tournaments;
mod versus;

use std::sync::Arc;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use croupier_competition::services::Services;

use crate::page::{Fmt, WebError};

/// The stylesheet, one for every page.
const CSS: &str = include_str!("croupier.css");

/// The website's routes (merged into the server's router).
pub fn routes() -> Router<Arc<Services>> {
    let mut r = Router::new()
        .route("/static/croupier.css", get(css))
        .route("/about", get(pages::about))
        .route("/rules", get(doc_pages::rules_index))
        .route("/rules/{game}", get(doc_pages::rules))
        .route("/docs", get(doc_pages::docs_index))
        .route("/docs/http-api", get(openapi::index))
        .route("/docs/http-api/{tag}", get(openapi::tag))
        .route("/start", get(doc_pages::start))
        .route("/start/examples/{*path}", get(doc_pages::example))
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
            .route(
                &format!("{prefix}/leaderboard/{{game}}/people"),
                get(people::leaderboard),
            )
            .route(&format!("{prefix}/people/{{name}}"), get(people::person))
            .route(&format!("{prefix}/bots/{{name}}"), get(bot::bot))
            .route(&format!("{prefix}/versus/{{a}}/{{b}}"), get(versus::versus))
            .route(&format!("{prefix}/games"), get(games_list::list))
            .route(&format!("{prefix}/games/{{id}}"), get(games::game));
    }
    // Tournaments (issue 15).
    r = r.merge(crate::tournaments::routes());
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
    // A JSON twin's path that names nothing is answered in JSON too.
    let fmt = if uri.path() == "/json" || uri.path().starts_with("/json/") {
        Fmt::Json
    } else {
        Fmt::Html
    };
    WebError::NotFound(format!("There is no page at {}.", uri.path())).page(fmt)
}
