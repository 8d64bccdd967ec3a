//! Failures in each JSON API's own shape (issue 18, item 6).
//!
//! Extractor and router rejections (a body over the limit, a stalled body,
//! a wrong method, an unknown path) come out of axum as plain text. Under
//! `/api` they become the 2014 API's `{"result":"failure","reason":…}`
//! (HTTP 200, as all its answers); under `/v1` the `{"error":…}` of `/v1`,
//! keeping the status. HTML documentation pages are left as they are.

use axum::body::Bytes;
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use futures::StreamExt;

use crate::api_error::{Api, ApiError};

/// Largest request body accepted.
pub const MAX_BODY: usize = 64 * 1024;

/// The largest body any JSON route reads (the router's body limit).
pub const READ_LIMIT: u64 = 1024 * 1024;

/// How much of a declared-oversized body is read and thrown away before the
/// failure is sent, so that the client, still writing, sees the answer
/// instead of a reset connection. Beyond it the connection just closes.
const DRAIN_LIMIT: u64 = 16 * 1024 * 1024;

/// A failure of `api` with `status` (the 2014 API always answers HTTP 200):
/// [`ApiError::respond`].
pub fn failure(api: Api, status: StatusCode, reason: &str) -> Response {
    ApiError::from_status(status, reason).respond(api)
}

/// For the JSON APIs (run first by [`crate::front`]): every request body
/// is read whole before any handler runs, so that an answer never goes out
/// while the client is still writing (closing a socket with unread data
/// resets it, and the client loses the answer). A body declared or found
/// over [`READ_LIMIT`] gets its API's failure after the rest is drained (up
/// to [`DRAIN_LIMIT`]; the server's body-read timeout bounds a slow
/// sender), and the connection closes: the error is that status, for
/// [`closing`]. A body that comes in one piece (as
/// small ones do) is kept as it came, without a copy.
pub async fn read_whole(req: Request) -> Result<(Parts, Bytes), StatusCode> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let (parts, body) = req.into_parts();
    let mut stream = body.into_data_stream();
    let mut first: Option<Bytes> = None;
    let mut more: Vec<u8> = Vec::new();
    let mut read: u64 = 0;
    let mut too_large = declared.is_some_and(|l| l > READ_LIMIT);
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            return Err(StatusCode::REQUEST_TIMEOUT);
        };
        read += chunk.len() as u64;
        if read > DRAIN_LIMIT {
            break;
        }
        too_large |= read > READ_LIMIT;
        if too_large {
            continue;
        }
        match first.take() {
            None if more.is_empty() => first = Some(chunk),
            held => {
                if let Some(held) = held {
                    more.extend_from_slice(&held);
                }
                more.extend_from_slice(&chunk);
            }
        }
    }
    if too_large {
        return Err(StatusCode::PAYLOAD_TOO_LARGE);
    }
    Ok((parts, first.unwrap_or_else(|| Bytes::from(more))))
}

/// `api`'s failure for `status`, on a connection that then closes.
pub fn closing(api: Api, status: StatusCode) -> Response {
    let mut out = failure(api, status, &reason(status, ""));
    out.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    out
}

/// What a plain rejection means, in words a bot author can act on.
fn reason(status: StatusCode, text: &str) -> String {
    let text = text.trim();
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => {
            format!("the request body is too large (at most {} bytes)", MAX_BODY)
        }
        StatusCode::REQUEST_TIMEOUT => "the request body stalled: send it whole".into(),
        StatusCode::METHOD_NOT_ALLOWED => "this method is not allowed here".into(),
        StatusCode::NOT_FOUND => "no such endpoint".into(),
        _ if text.is_empty() => status
            .canonical_reason()
            .unwrap_or("bad request")
            .to_lowercase(),
        _ => text.chars().take(300).collect(),
    }
}

/// Rewrites a plain-text failure of `api` into its JSON shape (run last by
/// [`crate::front`]; JSONP's answers are scripts and are not passed here).
/// Answers that are not failures, and failures already in JSON (or an
/// `/api` documentation page), pass unchanged.
pub async fn json_failures(api: Api, response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let kind = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    // `/api` has HTML documentation pages; `/v1` has none.
    let html = kind.contains("html") && api == Api::Rest2014;
    if kind.contains("json") || kind.contains("javascript") || html {
        return response;
    }
    let retry_after = response.headers().get(header::RETRY_AFTER).cloned();
    let text = match axum::body::to_bytes(response.into_body(), 4096).await {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(_) => String::new(),
    };
    let mut out = failure(api, status, &reason(status, &text));
    if let Some(v) = retry_after {
        out.headers_mut().insert(header::RETRY_AFTER, v);
    }
    // A partly read body is not read further: the connection closes.
    if status == StatusCode::PAYLOAD_TOO_LARGE || status == StatusCode::REQUEST_TIMEOUT {
        out.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    out
}
