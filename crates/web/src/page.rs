//! How a page answers: as HTML or as its JSON twin ([`Fmt`]), with one
//! error type for both ([`WebError`]) and one way to send either
//! ([`respond`]).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::html::{self, html, Markup};

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
            // The `/v1` API's failure shape: the status, with `{"error": reason}`.
            Fmt::Json => (status, axum::Json(serde_json::json!({ "error": msg }))).into_response(),
            Fmt::Html => {
                let body = html! {
                    section class="error" {
                        h1 { (status.as_u16()) " · " (title) }
                        p { (msg) }
                        p { a href="/" { "Home" } " · " a href="/games" { "Games" } " · " a href="/bots" { "Bots" } }
                    }
                };
                (
                    status,
                    axum::response::Html(html::layout(title, None, body).into_string()),
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
    render: impl FnOnce(&D) -> Markup,
) -> Response {
    match result {
        Err(e) => e.page(fmt),
        Ok(d) => match fmt {
            Fmt::Json => axum::Json(d).into_response(),
            Fmt::Html => axum::response::Html(render(&d).into_string()).into_response(),
        },
    }
}

/// The current time as RFC 3339 (what the store's times look like), moved
/// back by `secs`.
pub fn rfc3339_ago(secs: u64) -> String {
    let t = std::time::SystemTime::now()
        .checked_sub(std::time::Duration::from_secs(secs))
        .unwrap_or(std::time::UNIX_EPOCH);
    croupier_arena::record::rfc3339(t)
}

/// Parameter `key` of a query as a number of 1 or more (a page, an id, a
/// season, a limit): `None` when it is absent or blank, else the number,
/// or the text to echo in the refusal ([`positive_number`]). The website's
/// lists and leaderboards and the API's `?page=` and audit log read their
/// numbers so.
pub fn positive_param(
    q: &std::collections::HashMap<String, String>,
    key: &str,
) -> Result<Option<i64>, String> {
    q.get(key)
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .map(positive_number)
        .transpose()
}

/// A number of 1 or more, or the text to echo in the refusal: what was
/// sent, cut to 24 characters, so that a long parameter is not sent back
/// whole.
pub fn positive_number(text: &str) -> Result<i64, String> {
    text.parse::<i64>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| text.chars().take(24).collect())
}

#[cfg(test)]
mod number_tests {
    use super::positive_number;

    #[test]
    fn a_positive_number_or_the_text_cut_to_24_characters() {
        assert_eq!(positive_number("7"), Ok(7));
        assert_eq!(positive_number(&i64::MAX.to_string()), Ok(i64::MAX));
        assert_eq!(positive_number("0"), Err("0".to_string()));
        assert_eq!(positive_number("-3"), Err("-3".to_string()));
        assert_eq!(
            positive_number("x".repeat(100).as_str()),
            Err("x".repeat(24))
        );
        assert_eq!(
            positive_number("é".repeat(30).as_str()),
            Err("é".repeat(24))
        );
        assert_eq!(
            positive_number("99999999999999999999"),
            Err("99999999999999999999".to_string())
        );
        let q: std::collections::HashMap<String, String> =
            [("page", " 3 "), ("blank", " "), ("bad", "x")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(super::positive_param(&q, "page"), Ok(Some(3)));
        assert_eq!(super::positive_param(&q, "blank"), Ok(None));
        assert_eq!(super::positive_param(&q, "none"), Ok(None));
        assert_eq!(super::positive_param(&q, "bad"), Err("x".to_string()));
    }
}
