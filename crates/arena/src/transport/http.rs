//! HTTP bots: Croupier POSTs each message to the bot's URL (with the basic
//! authentication its owner registered) and reads the answer from the reply
//! body.
//!
//! The client is hardened against slow, hostile or broken bot servers:
//! connections are reused and use TCP_NODELAY, connecting and every request
//! have time limits, reply bodies are capped, redirects are not followed, and
//! the number of requests in flight is bounded.
//!
//! Unless [`HttpLimits::allow_private`] is set, the client only connects to
//! public addresses (see [`crate::addr_guard`]), and its fault texts say
//! "unreachable" without echoing what answered, so a bot URL cannot be used
//! to scan the server's own network.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use futures::future::BoxFuture;
use tokio::sync::Semaphore;
use tokio::time::{timeout_at, Instant};

use super::conn::Conn;
use super::error::TransportError;
use crate::addr_guard::{self, PublicOnlyResolver};

/// Limits of the HTTP client.
#[derive(Clone, Debug)]
pub struct HttpLimits {
    /// Time to open a TCP connection.
    pub connect_timeout: Duration,
    /// Largest reply body read.
    pub max_body: usize,
    /// Requests in flight at once (others wait for a slot, within their
    /// own deadline).
    pub max_in_flight: usize,
    /// How long an idle kept-alive connection is kept.
    pub idle_timeout: Duration,
    /// Whether bot URLs may point at loopback, private, link-local and other
    /// non-public addresses. On by default (for `croupier play`, tests and
    /// bots on one's own machine); `croupier serve` turns it off unless the
    /// organiser passes `--allow-private-bot-urls`.
    pub allow_private: bool,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            connect_timeout: Duration::from_secs(3),
            max_body: 64 * 1024,
            // Above what the ladder can use at once (64 matches of up to 4
            // seats, one request each), so a slow bot never starves others.
            max_in_flight: 1024,
            idle_timeout: Duration::from_secs(60),
            allow_private: true,
        }
    }
}

/// Where an HTTP bot lives and how to authenticate to it.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpEndpoint {
    /// The URL POSTed to (http or https, no credentials in it).
    pub url: String,
    /// Basic-auth user name and password, if the bot wants them.
    pub auth: Option<(String, String)>,
}

impl std::fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the password.
        f.debug_struct("HttpEndpoint")
            .field("url", &self.url)
            .field("user", &self.auth.as_ref().map(|a| &a.0))
            .finish()
    }
}

/// Why a bot URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid bot URL '{url}': {why}")]
pub struct BadUrl {
    url: String,
    why: String,
}

impl HttpEndpoint {
    /// Checks a bot URL: http or https, with a host, at most 2,000 bytes.
    /// Credentials written in the URL (`http://user:pass@host/`) become the
    /// basic authentication, unless `auth` is given.
    pub fn parse(url: &str, auth: Option<(String, String)>) -> Result<HttpEndpoint, BadUrl> {
        let bad = |why: &str| BadUrl {
            url: url.chars().take(200).collect(),
            why: why.to_string(),
        };
        if url.len() > 2000 {
            return Err(bad("longer than 2000 bytes"));
        }
        let mut parsed = reqwest::Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("only http and https URLs can be called"));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(bad("no host"));
        }
        if parsed.fragment().is_some() {
            return Err(bad("a URL with a #fragment cannot be called"));
        }
        let in_url = (!parsed.username().is_empty()).then(|| {
            let decode = |s: &str| percent_decode(s).unwrap_or_else(|| s.to_string());
            (
                decode(parsed.username()),
                decode(parsed.password().unwrap_or("")),
            )
        });
        let _ = parsed.set_username("");
        let _ = parsed.set_password(None);
        Ok(HttpEndpoint {
            url: parsed.to_string(),
            auth: auth.or(in_url),
        })
    }

    /// The `Authorization` header value, if any.
    fn authorization(&self) -> Option<String> {
        self.auth.as_ref().map(|(u, p)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        })
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The shared HTTP client: one connection pool for every HTTP bot.
#[derive(Debug)]
pub struct HttpClient {
    client: reqwest::Client,
    slots: Semaphore,
    limits: HttpLimits,
}

impl HttpClient {
    /// A client with `limits`.
    pub fn new(limits: HttpLimits) -> Result<HttpClient, TransportError> {
        let mut builder = reqwest::Client::builder();
        if !limits.allow_private {
            // Every connection to a host name resolves through the guard.
            builder = builder.dns_resolver(Arc::new(PublicOnlyResolver));
        }
        let client = builder
            .tcp_nodelay(true)
            .connect_timeout(limits.connect_timeout)
            .pool_idle_timeout(limits.idle_timeout)
            .pool_max_idle_per_host(16)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .http1_only()
            .user_agent(concat!("croupier/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| TransportError::Io(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpClient {
            client,
            slots: Semaphore::new(limits.max_in_flight.max(1)),
            limits,
        })
    }

    /// A connection to `endpoint` for one match and seat (`tag` is sent as
    /// the `X-Croupier-Match` header).
    pub fn conn(self: &Arc<Self>, endpoint: &HttpEndpoint, tag: &str) -> HttpConn {
        HttpConn {
            client: Arc::clone(self),
            endpoint: endpoint.clone(),
            authorization: endpoint.authorization(),
            tag: tag.to_string(),
            answer: None,
        }
    }

    /// POSTs `body` (JSON) and returns the reply body, within `deadline`.
    pub async fn post(
        &self,
        endpoint: &HttpEndpoint,
        authorization: Option<&str>,
        tag: &str,
        body: String,
        deadline: Instant,
    ) -> Result<String, TransportError> {
        let guarded = !self.limits.allow_private;
        if guarded && addr_guard::check_url(&endpoint.url).is_err() {
            // Refused before any connection is opened.
            return Err(unreachable());
        }
        let work = async {
            let _slot = self
                .slots
                .acquire()
                .await
                .map_err(|_| TransportError::Io("the HTTP client is shut down".into()))?;
            let mut req = self
                .client
                .post(&endpoint.url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(reqwest::header::ACCEPT, "text/plain, application/json")
                .header("X-Croupier-Match", tag)
                .body(body);
            if let Some(a) = authorization {
                req = req.header(reqwest::header::AUTHORIZATION, a);
            }
            let mut resp = req.send().await.map_err(|e| request_error(e, guarded))?;
            let status = resp.status();
            if !status.is_success() {
                return Err(TransportError::Status(if guarded {
                    "error status".to_string()
                } else {
                    status.to_string()
                }));
            }
            let max = self.limits.max_body;
            if resp.content_length().is_some_and(|n| n > max as u64) {
                return Err(TransportError::TooLarge(max));
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(|e| request_error(e, guarded))? {
                if body.len() + chunk.len() > max {
                    return Err(TransportError::TooLarge(max));
                }
                body.extend_from_slice(&chunk);
            }
            String::from_utf8(body)
                .map_err(|_| TransportError::Garbled("the reply body is not UTF-8 text".into()))
        };
        match timeout_at(deadline, work).await {
            Err(_) => Err(TransportError::Timeout),
            Ok(r) => r,
        }
    }
}

/// The fault of a bot that cannot be called, saying nothing of what (if
/// anything) answered at its address.
fn unreachable() -> TransportError {
    TransportError::Disconnected("the bot is unreachable".into())
}

fn request_error(e: reqwest::Error, guarded: bool) -> TransportError {
    if e.is_timeout() {
        return TransportError::Timeout;
    }
    if guarded {
        return if e.is_connect() {
            unreachable()
        } else {
            TransportError::Disconnected("the bot's server dropped the request".into())
        };
    }
    let what = if e.is_connect() {
        "cannot connect to the bot"
    } else {
        "the bot's server dropped the request"
    };
    // The innermost cause says what happened (refused, reset, ...).
    let mut cause: &dyn std::error::Error = &e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    TransportError::Disconnected(format!("{what}: {cause}"))
}

/// One match's connection to an HTTP bot: every line is one POST, and the
/// reply to the last POST of a batch is the bot's answer.
#[derive(Debug)]
pub struct HttpConn {
    client: Arc<HttpClient>,
    endpoint: HttpEndpoint,
    authorization: Option<String>,
    tag: String,
    answer: Option<String>,
}

impl Conn for HttpConn {
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(async move {
            self.answer = None;
            for line in lines {
                let reply = self
                    .client
                    .post(
                        &self.endpoint,
                        self.authorization.as_deref(),
                        &self.tag,
                        line.clone(),
                        deadline,
                    )
                    .await?;
                self.answer = Some(reply);
            }
            Ok(())
        })
    }

    fn recv(&mut self, _deadline: Instant) -> BoxFuture<'_, Result<String, TransportError>> {
        let answer = self.answer.take();
        Box::pin(async move {
            answer.ok_or_else(|| TransportError::Garbled("no answer in the reply".into()))
        })
    }

    fn survives_faults(&self) -> bool {
        true
    }

    fn answers_in_reply(&self) -> bool {
        true
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        let e = HttpEndpoint::parse("http://127.0.0.1:8080/bot", None).unwrap();
        assert_eq!(e.url, "http://127.0.0.1:8080/bot");
        assert_eq!(e.auth, None);
        for bad in [
            "ftp://example.org/",
            "file:///etc/passwd",
            "not a url",
            "http://",
            "http://host/#frag",
            "javascript:alert(1)",
        ] {
            assert!(HttpEndpoint::parse(bad, None).is_err(), "{bad}");
        }
        let long = format!("http://h/{}", "a".repeat(3000));
        assert!(HttpEndpoint::parse(&long, None).is_err());
    }

    #[test]
    fn credentials_in_the_url_become_basic_auth() {
        let e = HttpEndpoint::parse("https://me:s%40cret@bots.example/play", None).unwrap();
        assert_eq!(e.url, "https://bots.example/play");
        assert_eq!(e.auth, Some(("me".into(), "s@cret".into())));
        assert_eq!(
            e.authorization().unwrap(),
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode("me:s@cret")
            )
        );
        let given = Some(("a".to_string(), "b".to_string()));
        let e = HttpEndpoint::parse("http://x:y@h/", given.clone()).unwrap();
        assert_eq!(e.auth, given);
        assert!(!format!("{e:?}").contains("\"b\""), "{e:?}");
    }
}
