//! Rate limits (issue 18, item 3), in the Lichess manner.
//!
//! - Every request of a bot (by its 2014 session or `/v1` bearer token)
//!   counts against that bot's budget: generous, an honest bot polling
//!   `status` in a loop stays below it.
//! - Every request from a non-loopback address counts against that
//!   address's budget (many bots behind one address stay below it; local
//!   clients are the operator's own and are not counted).
//! - Registrations have their own, smaller budget per address.
//! - Failed logins (`/api/login`, HTTP Basic auth of `/v1`) back off
//!   exponentially, per client address and per account name: a few free
//!   failures, then 1 s, 2 s, 4 s … (at most 5 minutes) before the next try;
//!   a success clears the account's count.
//!
//! A throttled request gets `Retry-After` (seconds) and: in the 2014 API,
//! whose every answer is HTTP 200, `{"result":"retry","reason":…}` so that
//! its bots wait and try again; elsewhere HTTP 429, in `/v1` with
//! `{"error":…}`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::{json, Value};

use crate::api_error::Api;
use croupier_dialects::skullwhist_rest::{BadBody, Fields};

/// The limits.
#[derive(Debug, Clone)]
pub struct ThrottleConfig {
    /// Requests per second per bot (sustained).
    pub bot_requests_per_second: u32,
    /// Requests one bot may send at once above the rate.
    pub bot_requests_burst: u32,
    /// Requests per second per client address (sustained).
    pub requests_per_second: u32,
    /// Requests one address may send at once above the rate.
    pub requests_burst: u32,
    /// Registrations per minute per client address (sustained).
    pub registrations_per_minute: u32,
    /// Registrations one address may make at once.
    pub registrations_burst: u32,
    /// Failed logins before the back-off starts, per account.
    pub free_failures_per_name: u32,
    /// Failed logins before the back-off starts, per client address.
    pub free_failures_per_address: u32,
    /// The longest back-off.
    pub max_backoff: Duration,
}

impl Default for ThrottleConfig {
    fn default() -> Self {
        ThrottleConfig {
            bot_requests_per_second: 500,
            bot_requests_burst: 1000,
            requests_per_second: 2000,
            requests_burst: 4000,
            registrations_per_minute: 60,
            registrations_burst: 200,
            free_failures_per_name: 5,
            free_failures_per_address: 20,
            max_backoff: Duration::from_secs(300),
        }
    }
}

/// Consecutive failures per key, and when the last one was.
#[derive(Debug, Default)]
struct Failures(Mutex<HashMap<String, (u32, Instant)>>);

impl Failures {
    /// How long `key` must still wait, after `free` failures are spent.
    fn wait(&self, key: &str, free: u32, max: Duration, now: Instant) -> Option<Duration> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (n, last) = *map.get(key)?;
        if n < free {
            return None;
        }
        let backoff = backoff(n - free, max);
        (last + backoff).checked_duration_since(now)
    }

    fn fail(&self, key: String, now: Instant, max: Duration) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() > 100_000 {
            map.retain(|_, (_, last)| now.duration_since(*last) < max);
        }
        let e = map.entry(key).or_insert((0, now));
        e.0 = e.0.saturating_add(1);
        e.1 = now;
    }

    fn clear(&self, key: &str) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
    }
}

/// The back-off after `extra` failures beyond the free ones: 1 s doubling.
pub fn backoff(extra: u32, max: Duration) -> Duration {
    Duration::from_secs(1u64 << extra.min(30)).min(max)
}

/// The limiters of one server.
#[derive(Debug)]
pub struct Throttle {
    config: ThrottleConfig,
    requests: DefaultKeyedRateLimiter<IpAddr>,
    bots: DefaultKeyedRateLimiter<String>,
    registrations: DefaultKeyedRateLimiter<IpAddr>,
    failures: Failures,
    seen: AtomicU64,
}

fn nz(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n.max(1)).unwrap_or(NonZeroU32::MIN)
}

impl Throttle {
    /// Limiters with `config`.
    pub fn new(config: ThrottleConfig) -> Self {
        let requests = Quota::per_second(nz(config.requests_per_second))
            .allow_burst(nz(config.requests_burst));
        let registrations = Quota::per_minute(nz(config.registrations_per_minute))
            .allow_burst(nz(config.registrations_burst));
        let bots = Quota::per_second(nz(config.bot_requests_per_second))
            .allow_burst(nz(config.bot_requests_burst));
        Throttle {
            requests: RateLimiter::keyed(requests),
            bots: RateLimiter::keyed(bots),
            registrations: RateLimiter::keyed(registrations),
            failures: Failures::default(),
            seen: AtomicU64::new(0),
            config,
        }
    }

    fn check<K: std::hash::Hash + Eq + Clone>(
        limiter: &DefaultKeyedRateLimiter<K>,
        key: &K,
    ) -> Result<(), Duration> {
        // The limiter's own clock: a new `DefaultClock` checks the CPU's
        // timer support with CPUID, which a virtual machine traps, so
        // building one per refusal made a throttled request cost about
        // twice an admitted one.
        limiter
            .check_key(key)
            .map_err(|e| e.wait_time_from(limiter.clock().now()))
    }

    /// Checks the budget of the bot `kind token` names (`session S` or
    /// `bearer T`). The key is written into a buffer of the thread's own,
    /// and copied only when the bot has no budget yet: a string made per
    /// request was an allocation on every call (issue 53).
    fn check_bot(&self, kind: &str, token: &str) -> Result<(), Duration> {
        thread_local! {
            static KEY: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        KEY.with_borrow_mut(|key| {
            key.clear();
            key.push_str(kind);
            key.push(' ');
            key.push_str(token);
            Throttle::check(&self.bots, key)
        })
    }

    fn login_wait(&self, ip: IpAddr, name: Option<&str>) -> Option<Duration> {
        let now = Instant::now();
        let c = &self.config;
        let by_ip = self.failures.wait(
            &format!("ip {ip}"),
            c.free_failures_per_address,
            c.max_backoff,
            now,
        );
        let by_name = name.and_then(|n| {
            self.failures.wait(
                &format!("name {n}"),
                c.free_failures_per_name,
                c.max_backoff,
                now,
            )
        });
        by_ip.max(by_name)
    }

    fn login_result(&self, ip: IpAddr, name: Option<&str>, ok: bool) {
        let now = Instant::now();
        let max = self.config.max_backoff;
        if ok {
            if let Some(n) = name {
                self.failures.clear(&format!("name {n}"));
            }
        } else {
            self.failures.fail(format!("ip {ip}"), now, max);
            if let Some(n) = name {
                self.failures.fail(format!("name {n}"), now, max);
            }
        }
    }
}

/// A throttled request's answer.
pub fn too_many(api: Option<Api>, wait: Duration, what: &str) -> Response {
    let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
    let reason = format!("{what}: wait {secs} s and try again");
    let mut r = match api {
        // The 2014 API answers everything with HTTP 200 (its bots treat
        // any other status as fatal): `retry` says wait and ask again.
        Some(Api::Rest2014) => {
            axum::Json(json!({"result": "retry", "reason": reason})).into_response()
        }
        Some(Api::V1) => (
            StatusCode::TOO_MANY_REQUESTS,
            axum::Json(json!({ "error": reason })),
        )
            .into_response(),
        None => (StatusCode::TOO_MANY_REQUESTS, reason).into_response(),
    };
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    r
}

/// A 2014 request's body as the throttle parsed it.
pub type Parsed<'a> = Result<Fields<'a>, BadBody>;

/// What kind of request, for the limits.
#[derive(Debug)]
pub enum Kind {
    /// Any other request.
    Other,
    /// A registration.
    Register,
    /// A login by `name` (when it could be read).
    Login(Option<String>),
}

fn basic_name(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = v.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    Some(text.split_once(':')?.0.to_string())
}

/// A throttled request: its API, how long it must wait, and why.
#[derive(Debug, Clone, Copy)]
pub struct Throttled {
    api: Option<Api>,
    wait: Duration,
    what: &'static str,
}

impl Throttled {
    /// Its answer ([`too_many`]).
    pub fn response(&self) -> Response {
        too_many(self.api, self.wait, self.what)
    }
}

/// A request as the throttle sees it (run by [`crate::front`]).
#[derive(Debug)]
pub struct Seen<'a> {
    /// The request line and headers.
    pub parts: &'a Parts,
    /// Its path without trailing slashes.
    pub path: &'a str,
    /// Its API.
    pub api: Option<Api>,
    /// Its body, when it was read whole (every JSON API request but a
    /// hosted bot upload).
    pub body: Option<&'a Bytes>,
}

/// Checks a request against the limits, before it runs: its kind (to
/// count a login's outcome in [`Throttle::settle`]) and, for a 2014 POST,
/// its body parsed into fields, or why it could not be (read for the
/// session or name, and handed on so that the handler does not parse the
/// body again); or the answer of a throttled request.
pub fn admit<'a>(t: &Throttle, req: &Seen<'a>) -> Result<(Kind, Option<Parsed<'a>>), Throttled> {
    if t.seen.fetch_add(1, Ordering::Relaxed) % 4096 == 4095 {
        t.requests.retain_recent();
        t.bots.retain_recent();
        t.registrations.retain_recent();
    }
    let (parts, path, api) = (req.parts, req.path, req.api);
    let ip = client_ip(parts);
    if !ip.is_loopback() {
        if let Err(wait) = Throttle::check(&t.requests, &ip) {
            return Err(Throttled {
                api,
                wait,
                what: "too many requests from your address",
            });
        }
    }
    if let Some(bearer) = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        if let Err(wait) = t.check_bot("bearer", bearer.trim()) {
            return Err(Throttled {
                api,
                wait,
                what: "too many requests from this bot",
            });
        }
    }
    let post = parts.method == Method::POST;
    let mut parsed = None;
    let kind = match (path, req.body) {
        ("/api/register" | "/v1/owners", _) if post => Kind::Register,
        (p, Some(bytes)) if post && api == Some(Api::Rest2014) && !p.starts_with("/api/jsonp") => {
            let v = Fields::parse(bytes);
            let field = |k: &str| v.as_ref().ok().and_then(|v| v.str(k));
            if let Some(session) = field("session") {
                if let Err(wait) = t.check_bot("session", &session) {
                    return Err(Throttled {
                        api,
                        wait,
                        what: "too many requests from this bot",
                    });
                }
            }
            let kind = if p == "/api/login" {
                Kind::Login(field("name").map(Cow::into_owned))
            } else {
                Kind::Other
            };
            parsed = Some(v);
            kind
        }
        _ if api == Some(Api::V1) && parts.headers.contains_key(header::AUTHORIZATION) => {
            match basic_name(&parts.headers) {
                Some(name) => Kind::Login(Some(name)),
                None => Kind::Other,
            }
        }
        _ => Kind::Other,
    };
    match &kind {
        Kind::Other => {}
        Kind::Register => {
            if let Err(wait) = Throttle::check(&t.registrations, &ip) {
                return Err(Throttled {
                    api,
                    wait,
                    what: "too many registrations from your address",
                });
            }
        }
        Kind::Login(name) => {
            if let Some(wait) = t.login_wait(ip, name.as_deref()) {
                return Err(Throttled {
                    api,
                    wait,
                    what: "too many failed logins",
                });
            }
        }
    }
    Ok((kind, parsed))
}

impl Throttle {
    /// Counts a login's outcome from its answer (a failed one backs off the
    /// next); other answers pass unchanged. `ip` is the client's address.
    pub async fn settle(
        &self,
        kind: Kind,
        ip: IpAddr,
        api: Option<Api>,
        response: Response,
    ) -> Response {
        let Kind::Login(name) = kind else {
            return response;
        };
        let ok = match api {
            Some(Api::V1) => {
                if response.status() == StatusCode::UNAUTHORIZED {
                    Some(false)
                } else if response.status().is_success() {
                    Some(true)
                } else {
                    None
                }
            }
            _ => {
                // The 2014 API answers HTTP 200 either way: read the result.
                let (parts, body) = response.into_parts();
                let bytes = match axum::body::to_bytes(body, 64 * 1024).await {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        // Not counted: the answer could not be read.
                        tracing::error!("login: its answer could not be read: {e}");
                        return crate::shape::failure(
                            Api::Rest2014,
                            StatusCode::INTERNAL_SERVER_ERROR,
                            "internal error: the answer could not be read",
                        );
                    }
                };
                let result = serde_json::from_slice::<Value>(&bytes)
                    .ok()
                    .and_then(|v| v.get("result").and_then(Value::as_str).map(str::to_string));
                let ok = match result.as_deref() {
                    Some("success") => Some(true),
                    Some("failure") => Some(false),
                    _ => None,
                };
                if let Some(ok) = ok {
                    self.login_result(ip, name.as_deref(), ok);
                }
                return Response::from_parts(parts, Body::from(bytes));
            }
        };
        if let Some(ok) = ok {
            self.login_result(ip, name.as_deref(), ok);
        }
        response
    }
}

/// The client's address of a request: its `ConnectInfo`, else its
/// connection's ([`crate::net::peer`]); unspecified when the server runs
/// without its accept loop, as in router tests.
pub fn client_ip(parts: &Parts) -> IpAddr {
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0)
        .or_else(crate::net::peer)
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bot_over_its_budget_waits() {
        let t = Throttle::new(ThrottleConfig {
            bot_requests_per_second: 1,
            bot_requests_burst: 3,
            ..ThrottleConfig::default()
        });
        for _ in 0..3 {
            assert!(t.check_bot("session", "a").is_ok());
        }
        let wait = t.check_bot("session", "a").unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(1));
        // Each key its own budget, and the keys are whole: "session" with
        // token "a" is not "bearer" with "a", nor "session a" with "b".
        assert!(t.check_bot("session", "b").is_ok());
        assert!(t.check_bot("bearer", "a").is_ok());
        assert!(t.check_bot("session", "ab").is_ok());
        assert!(t.check_bot("session", "a").is_err());
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let max = Duration::from_secs(300);
        assert_eq!(backoff(0, max), Duration::from_secs(1));
        assert_eq!(backoff(3, max), Duration::from_secs(8));
        assert_eq!(backoff(20, max), max);
        assert_eq!(backoff(u32::MAX, max), max);
    }

    #[test]
    fn failures_wait_after_the_free_ones_and_clear_on_success() {
        let t = Throttle::new(ThrottleConfig {
            free_failures_per_name: 2,
            free_failures_per_address: 100,
            ..ThrottleConfig::default()
        });
        let ip: IpAddr = "127.0.0.9".parse().unwrap();
        assert!(t.login_wait(ip, Some("a")).is_none());
        t.login_result(ip, Some("a"), false);
        t.login_result(ip, Some("a"), false);
        assert!(t.login_wait(ip, Some("a")).is_some(), "third try waits");
        assert!(
            t.login_wait(ip, Some("b")).is_none(),
            "another name does not"
        );
        t.login_result(ip, Some("a"), true);
        assert!(t.login_wait(ip, Some("a")).is_none(), "a success clears");
    }

    #[test]
    fn an_address_guessing_many_names_waits_too() {
        let t = Throttle::new(ThrottleConfig {
            free_failures_per_address: 3,
            ..ThrottleConfig::default()
        });
        let ip: IpAddr = "127.0.0.9".parse().unwrap();
        for i in 0..3 {
            t.login_result(ip, Some(&format!("n{i}")), false);
        }
        assert!(t.login_wait(ip, Some("fresh")).is_some());
        let other: IpAddr = "127.0.0.10".parse().unwrap();
        assert!(t.login_wait(other, Some("fresh")).is_none());
    }
}
