//! The one middleware in front of the router (issues 11 and 20): per
//! request, in this order,
//!
//! 1. a JSON API request's body is read whole, or refused when too large
//!    ([`shape::read_whole`]);
//! 2. the rate limits ([`throttle::admit`]): a throttled request is answered
//!    here;
//! 3. the handler runs; a plain-text failure under `/api` or `/v1` gets its
//!    API's JSON shape ([`shape::json_failures`]), and a login's outcome is
//!    counted ([`throttle::Throttle::settle`]).
//!
//! One layer instead of three: the path is looked at once, the body read
//! once (the throttle reads the 2014 API's session from the bytes already
//! read and hands the parsed JSON on), and the inner service is cloned and
//! boxed once per request rather than once per layer.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::api_error::Api;
use crate::shape;
use crate::throttle::{self, Seen, Throttle};

/// The middleware (`axum::middleware::from_fn_with_state`, with the
/// server's [`Throttle`]).
pub async fn front(State(t): State<Arc<Throttle>>, req: Request, next: Next) -> Response {
    let api = crate::api_error::api_of(req.uri().path().trim_end_matches('/'));
    // JSONP answers scripts, not JSON: its refusals stay as they are.
    let jsonp = req.uri().path().starts_with("/api/jsonp");
    // Hosted bot uploads stream to their handler, which bounds them itself.
    let whole = api.filter(|_| !crate::hosted_api::is_upload(req.method(), req.uri().path()));
    let (parts, body) = match whole {
        Some(api) => match shape::read_whole(req).await {
            Ok((parts, bytes)) => (parts, Ok(bytes)),
            Err(status) => return shape::closing(api, status),
        },
        None => {
            let (parts, body) = req.into_parts();
            (parts, Err(body))
        }
    };
    let path = parts.uri.path().trim_end_matches('/');
    let seen = Seen {
        parts: &parts,
        path,
        api,
        body: body.as_ref().ok(),
    };
    let (kind, parsed) = match throttle::admit(&t, &seen) {
        Ok(admitted) => admitted,
        Err(throttled) => return throttled.response(),
    };
    let ip = throttle::client_ip(&parts);
    let mut req = Request::from_parts(parts, body.map_or_else(|body| body, Body::from));
    if let Some(parsed) = parsed {
        req.extensions_mut().insert(parsed);
    }
    let response = next.run(req).await;
    let response = match api {
        Some(api) if !(jsonp && api == Api::Rest2014) => shape::json_failures(api, response).await,
        _ => response,
    };
    t.settle(kind, ip, api, response).await
}
