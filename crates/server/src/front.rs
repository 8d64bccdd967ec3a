//! The one service in front of the router (issues 11, 20 and 53): per
//! request, in this order,
//!
//! 1. each run of slashes in its path is made one ([`paths`], as the 2014
//!    server did);
//! 2. a JSON API request's body is read whole, or refused when too large
//!    ([`shape::read_whole`]);
//! 3. the rate limits ([`throttle::admit`]): a throttled request is answered
//!    here;
//! 4. the handler runs; a plain-text failure under `/api` or `/v1` gets its
//!    API's JSON shape ([`shape::json_failures`]), and a login's outcome is
//!    counted ([`throttle::Throttle::settle`]).
//!
//! The path is looked at once, the body read once (the throttle reads the
//! 2014 API's session from the bytes already read and hands the parsed
//! fields on). A call of the 2014 API (`POST /api/<method>/`, most of a busy
//! server's requests) goes straight to its handler
//! ([`skullwhist_api::post_whole`]) rather than through the router: routing
//! among the site's routes, the route's boxed service and its extractors
//! cost about as much CPU as the call itself (issue 53). Every other
//! request is routed.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use axum::Router;
use tower::{Service, ServiceExt as _};

use crate::api_error::Api;
use crate::throttle::{self, Seen, Throttle};
use crate::{metrics, paths, shape, skullwhist_api};
use croupier_competition::services::Services;

/// The server's service: the router behind the front's checks. Cheap to
/// clone (three `Arc`s).
#[derive(Clone)]
pub struct Front {
    throttle: Arc<Throttle>,
    state: Arc<Services>,
    router: Router,
    /// Whether the calls answered here are counted (metrics were on when
    /// the router's own counting layer was chosen).
    counted: bool,
}

impl std::fmt::Debug for Front {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Front").finish_non_exhaustive()
    }
}

impl Front {
    /// `router` behind the checks, with the 2014 API's calls answered from
    /// `state` (and counted when `counted`, as the router counts its own).
    pub fn new(
        router: Router,
        state: Arc<Services>,
        throttle: Arc<Throttle>,
        counted: bool,
    ) -> Self {
        Front {
            throttle,
            state,
            router,
            counted,
        }
    }

    async fn answer(self, mut req: Request) -> Response {
        paths::collapse_in_place(&mut req);
        let t = &self.throttle;
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
        let (kind, parsed) = match throttle::admit(t, &seen) {
            Ok(admitted) => admitted,
            Err(throttled) => return throttled.response(),
        };
        let ip = throttle::client_ip(&parts);
        let response = match api_call(&parts.method, parts.uri.path()).zip(body.as_ref().ok()) {
            Some((method, bytes)) => {
                let since = self.counted.then(std::time::Instant::now);
                let response = skullwhist_api::post_whole(&self.state, method, bytes, parsed).await;
                if let Some(since) = since {
                    metrics::count_api_call(parts.uri.path(), since, &response);
                }
                response
            }
            None => {
                // (A 2014 call routed here, its path escaped, parses its
                // body again: rare, and a parsed body borrows the bytes.)
                drop(parsed);
                let mut req = Request::from_parts(parts, body.map_or_else(|b| b, Body::from));
                crate::net::connect_info(&mut req);
                match self.router.oneshot(req).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                }
            }
        };
        let response = match api {
            Some(api) if !(jsonp && api == Api::Rest2014) => {
                shape::json_failures(api, response).await
            }
            _ => response,
        };
        t.settle(kind, ip, api, response).await
    }
}

/// The method of a 2014 API call the front answers itself: `POST
/// /api/<method>` or `/api/<method>/` (slashes already collapsed), one
/// plain segment (one with `%` escapes is routed, for the router to
/// decode), not `jsonp` (GET only: the router refuses a POST in its shape).
fn api_call<'a>(method: &Method, path: &'a str) -> Option<&'a str> {
    if method != Method::POST {
        return None;
    }
    let rest = path.strip_prefix("/api/")?;
    let name = rest.strip_suffix('/').unwrap_or(rest);
    let plain = !name.is_empty() && !name.contains(['/', '%']);
    (plain && name != "jsonp").then_some(name)
}

impl Service<Request> for Front {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let front = self.clone();
        Box::pin(async move { Ok(front.answer(req).await) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_api_posts_skip_the_router() {
        let post = Method::POST;
        assert_eq!(api_call(&post, "/api/status/"), Some("status"));
        assert_eq!(api_call(&post, "/api/status"), Some("status"));
        assert_eq!(api_call(&post, "/api/no-such/"), Some("no-such"));
        assert_eq!(api_call(&Method::GET, "/api/status/"), None);
        assert_eq!(api_call(&post, "/api/"), None);
        assert_eq!(api_call(&post, "/api"), None);
        assert_eq!(api_call(&post, "/api/jsonp/"), None);
        assert_eq!(api_call(&post, "/api/st%61tus/"), None);
        assert_eq!(api_call(&post, "/api/status/more"), None);
        assert_eq!(api_call(&post, "/v1/bots"), None);
        assert_eq!(api_call(&post, "/apiary/status"), None);
    }
}
