//! One failure type for the server's JSON APIs. Each API keeps its own wire
//! shape ([`ApiError::respond`]):
//!
//! - `/v1`: the status, with `{"error": reason}` (the website's JSON twins
//!   answer in the same shape, `croupier_web::page::WebError`);
//!   a 401 names the scheme to use in `WWW-Authenticate`;
//! - `/api` (2014 SkullWhist API): HTTP 200 (its bots treat any other status
//!   as fatal) with `{"result": "failure", "reason": reason}`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use croupier_store::StoreError;
use serde_json::json;

/// Which JSON API a path belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// The 2014 SkullWhist API under `/api`.
    Rest2014,
    /// The bot owners' API under `/v1`.
    V1,
}

/// The API of `path`, if any.
pub fn api_of(path: &str) -> Option<Api> {
    let under = |p: &str| {
        path.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    if under("/api") {
        Some(Api::Rest2014)
    } else if under("/v1") {
        Some(Api::V1)
    } else {
        None
    }
}

/// A refused or failed request of a JSON API; the text is the reason sent.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed or asks for something impossible.
    #[error("{0}")]
    BadRequest(String),
    /// 401: owner credentials (HTTP Basic) missing or wrong.
    #[error("{0}")]
    Unauthorized(String),
    /// 401: a bot token (`Authorization: Bearer`) missing or unknown.
    #[error("{0}")]
    BadToken(String),
    /// 404: no such thing.
    #[error("{0}")]
    NotFound(String),
    /// 409: the request conflicts with the current state (a taken name).
    #[error("{0}")]
    Conflict(String),
    /// 413: the body is too large.
    #[error("{0}")]
    TooLarge(String),
    /// 503: the server is overloaded; try again.
    #[error("{0}")]
    Busy(String),
    /// 500: our fault (details go to the log).
    #[error("{0}")]
    Internal(String),
    /// Any other status, as axum's extractors and router reject requests
    /// (a stalled body, a wrong method, an unknown path, ...).
    #[error("{reason}")]
    Rejected {
        /// The status sent.
        status: StatusCode,
        /// Why.
        reason: String,
    },
}

impl ApiError {
    /// The failure for `status` with `reason` (a rejection's status).
    pub fn from_status(status: StatusCode, reason: impl Into<String>) -> ApiError {
        let reason = reason.into();
        match status {
            StatusCode::BAD_REQUEST => ApiError::BadRequest(reason),
            StatusCode::NOT_FOUND => ApiError::NotFound(reason),
            StatusCode::CONFLICT => ApiError::Conflict(reason),
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::TooLarge(reason),
            StatusCode::SERVICE_UNAVAILABLE => ApiError::Busy(reason),
            StatusCode::INTERNAL_SERVER_ERROR => ApiError::Internal(reason),
            // A 401 without a scheme to name stays a plain rejection.
            status => ApiError::Rejected { status, reason },
        }
    }

    /// The HTTP status of the failure (in `/v1`).
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) | ApiError::BadToken(_) => StatusCode::UNAUTHORIZED,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Rejected { status, .. } => *status,
        }
    }

    /// The `WWW-Authenticate` challenge of a 401.
    fn challenge(&self) -> Option<&'static str> {
        match self {
            ApiError::Unauthorized(_) => Some("Basic realm=\"croupier\""),
            ApiError::BadToken(_) => Some("Bearer realm=\"croupier\""),
            ApiError::BadRequest(_)
            | ApiError::NotFound(_)
            | ApiError::Conflict(_)
            | ApiError::TooLarge(_)
            | ApiError::Busy(_)
            | ApiError::Internal(_)
            | ApiError::Rejected { .. } => None,
        }
    }

    /// The failure in `api`'s shape.
    pub fn respond(self, api: Api) -> Response {
        match api {
            Api::Rest2014 => {
                Json(json!({"result": "failure", "reason": self.to_string()})).into_response()
            }
            Api::V1 => {
                let challenge = self.challenge();
                let mut r =
                    (self.status(), Json(json!({ "error": self.to_string() }))).into_response();
                if let Some(c) = challenge {
                    r.headers_mut()
                        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(c));
                }
                r
            }
        }
    }
}

impl IntoResponse for ApiError {
    /// The `/v1` shape.
    fn into_response(self) -> Response {
        self.respond(Api::V1)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NameTaken => ApiError::Conflict("the name is taken".into()),
            other => {
                tracing::error!("api: {other}");
                ApiError::Internal("storage failed".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn parts(r: Response) -> (StatusCode, Option<String>, serde_json::Value) {
        let status = r.status();
        let auth = r
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = axum::body::to_bytes(r.into_body(), 4096).await.unwrap();
        (status, auth, serde_json::from_slice(&body).unwrap())
    }

    #[tokio::test]
    async fn v1_failures_carry_their_status_and_challenge() {
        let (s, auth, body) =
            parts(ApiError::BadToken("unknown bot token".into()).into_response()).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED);
        assert_eq!(auth.as_deref(), Some("Bearer realm=\"croupier\""));
        assert_eq!(body, json!({"error": "unknown bot token"}));
        let (s, auth, _) = parts(ApiError::Unauthorized("no".into()).into_response()).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED);
        assert_eq!(auth.as_deref(), Some("Basic realm=\"croupier\""));
        let (s, auth, body) = parts(ApiError::Conflict("taken".into()).into_response()).await;
        assert_eq!((s, auth), (StatusCode::CONFLICT, None));
        assert_eq!(body, json!({"error": "taken"}));
    }

    #[tokio::test]
    async fn the_2014_api_fails_with_200_and_a_reason() {
        let e = ApiError::from_status(StatusCode::PAYLOAD_TOO_LARGE, "too large");
        let (s, auth, body) = parts(e.respond(Api::Rest2014)).await;
        assert_eq!((s, auth), (StatusCode::OK, None));
        assert_eq!(body, json!({"result": "failure", "reason": "too large"}));
    }

    #[test]
    fn statuses_round_trip() {
        for s in [400, 404, 405, 408, 409, 413, 415, 500, 503] {
            let status = StatusCode::from_u16(s).unwrap();
            assert_eq!(ApiError::from_status(status, "x").status(), status);
        }
        // A bare 401 names no scheme.
        let e = ApiError::from_status(StatusCode::UNAUTHORIZED, "x");
        assert!(e.challenge().is_none());
    }

    #[test]
    fn paths_map_to_their_api() {
        assert_eq!(api_of("/api"), Some(Api::Rest2014));
        assert_eq!(api_of("/api/login/"), Some(Api::Rest2014));
        assert_eq!(api_of("/v1/bots"), Some(Api::V1));
        assert_eq!(api_of("/apix"), None);
        assert_eq!(api_of("/v1"), Some(Api::V1));
        assert_eq!(api_of("/v1x/a"), None);
        assert_eq!(api_of("/"), None);
        assert_eq!(api_of("/games/1"), None);
    }
}
