//! The server's own accept loop: every connection is timed out and counted.
//!
//! `axum::serve` keeps a connection for as long as the client likes; here
//! (issues 18 and 53) a connection is closed when its client has not sent
//! its next request's whole head within the header timeout of its last
//! reply (an idle keep-alive connection, a head half sent or trickled, a
//! connection that never speaks), when a request body stalls (HTTP 408 in
//! the API's shape), when a streamed reply's piece has waited for the
//! stream timeout for its client to take it (it does not read), and when a
//! streamed reply has had nothing to send for the (long) quiet timeout.
//! While three quarters of the overall cap are open, these limits shrink
//! to a second. Connections are capped overall and per client address. A
//! refused connection gets a short JSON HTTP 503 and is closed at once.
//! Long polls are unaffected: while a request is being answered no head is
//! awaited, and the poll bounds itself.

mod closing;
mod fdlimit;
mod idle;
mod limits;
mod stall;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::task::AbortOnDropHandle;

use std::convert::Infallible;

use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::{Service, ServiceExt as _};

pub use fdlimit::raise_fd_limit;
pub use limits::{ConnectionLimits, Slot};
pub use stall::{StallBody, Stalled};

/// Timeouts and caps of connections.
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// Time for a request head to arrive, counted from the end of the
    /// previous reply on a kept-alive connection (so also the idle timeout).
    pub header_timeout: Duration,
    /// The header timeout while three quarters of `max_connections` are
    /// open: a slow-connection flood is shed quickly.
    pub crowded_timeout: Duration,
    /// Longest pause between two pieces of a request body.
    pub body_timeout: Duration,
    /// Longest time a streamed reply's piece may wait for its client to
    /// take it (hyper's buffer is full, 16 pieces or about 400 KiB, and it
    /// asks for no more until all of it is in the socket: the client does
    /// not read); then the connection is closed.
    pub stream_timeout: Duration,
    /// Longest a streamed reply may have nothing to send (a game waiting
    /// for a bot: newline-delimited events have no keep-alive). Not for a
    /// client that reads, which hyper sees leave; a backstop for one that
    /// left unseen (no FIN, or with bytes pipelined that hyper does not
    /// read until the reply is done).
    pub quiet_timeout: Duration,
    /// Open connections at most.
    pub max_connections: usize,
    /// Open connections at most from one client address.
    pub max_per_address: usize,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            header_timeout: Duration::from_secs(20),
            crowded_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(10),
            stream_timeout: Duration::from_secs(60),
            quiet_timeout: Duration::from_secs(600),
            max_connections: 8192,
            max_per_address: 256,
        }
    }
}

impl NetConfig {
    /// Fits the overall cap under the open-file limit `nofile` (with room
    /// for the database, bot processes and logs).
    pub fn fit_to_fd_limit(mut self, nofile: u64) -> Self {
        let room = nofile.saturating_sub(256).max(64);
        self.max_connections = self.max_connections.min(room as usize);
        self
    }
}

tokio::task_local! {
    static PEER: SocketAddr;
}

/// The client's address of the connection whose request is being answered
/// (`None` outside [`serve`]'s connections, as in tests that call a router
/// directly). A request's service runs on its connection's task, where the
/// accept loop keeps the address: adding it to every request as an axum
/// `ConnectInfo` extension allocated the request's map of extensions, and
/// freed it, on every call (issue 53). A request that goes to the router
/// gets the extension from the front ([`connect_info`]).
pub fn peer() -> Option<SocketAddr> {
    PEER.try_with(|p| *p).ok()
}

/// Adds the client's address to `req` as axum's `ConnectInfo` (for the
/// router's handlers), unless it has one.
pub fn connect_info<B>(req: &mut axum::http::Request<B>) {
    if req.extensions().get::<ConnectInfo<SocketAddr>>().is_none() {
        if let Some(p) = peer() {
            req.extensions_mut().insert(ConnectInfo(p));
        }
    }
}

/// What a refused connection is told before it is closed.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: 69\r\n\r\n{\"result\":\"retry\",\"reason\":\"too many connections: try again shortly\"}";

/// Serves `app` (the server's `crate::App`) on `listener` until `shutdown`
/// completes, then lets the open connections finish their requests (for at
/// most 5 s) and returns.
pub async fn serve<S>(
    listener: TcpListener,
    app: S,
    config: NetConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
    S::Future: Send,
{
    let limits = Arc::new(ConnectionLimits::new(
        config.max_connections,
        config.max_per_address,
    ));
    // HTTP/1.1 only: detecting HTTP/2 would wait for a first byte without
    // a timeout (and bots speak HTTP/1.1). No timer for hyper: the time a
    // request head may take is kept by the connection's idle watch below
    // (hyper's own header timeout set a timer for every request, issue 53).
    let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
    builder.http1().keep_alive(true);
    let builder = Arc::new(builder);
    let closing = closing::Closing::new();
    tokio::pin!(shutdown);
    let mut last_warning: Option<tokio::time::Instant> = None;
    loop {
        let (tcp, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and the like: wait for connections to close.
                    let now = tokio::time::Instant::now();
                    if last_warning.is_none_or(|t| now - t > Duration::from_secs(10)) {
                        tracing::warn!("accept error: {e}");
                        last_warning = Some(now);
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let Some(slot) = limits.admit(peer.ip()) else {
            // Non-blocking: a refused client that does not read gets nothing.
            let _ = tcp.try_write(REFUSED);
            drop(tcp);
            continue;
        };
        // Replies go out at once, not after Nagle's 40 ms.
        let _ = tcp.set_nodelay(true);
        let activity = idle::Activity::new();
        let body_timeout = config.body_timeout;
        let (on_request, on_reply) = (Arc::clone(&activity), Arc::clone(&activity));
        let service = app
            .clone()
            .map_request(move |r: hyper::Request<hyper::body::Incoming>| {
                on_request.begin();
                r.map(|body| axum::body::Body::new(StallBody::new(body, body_timeout)))
            })
            .map_response(move |r: Response| {
                if hyper::body::Body::size_hint(r.body()).exact().is_some() {
                    on_reply.end();
                    r
                } else {
                    // A streamed body (server-sent events): the connection
                    // is answering until the stream ends.
                    let activity = Arc::clone(&on_reply);
                    r.map(|body| axum::body::Body::new(idle::BusyBody::new(body, activity)))
                }
            });
        let service = TowerToHyperService::new(service);
        let builder = Arc::clone(&builder);
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(tcp), service)
            .into_owned();
        let (mut told, idle) = closing.watch();
        let (calm, crowded) = (config.header_timeout, config.crowded_timeout);
        let (stream, quiet) = (config.stream_timeout, config.quiet_timeout);
        let limits = Arc::clone(&limits);
        let limit = move || {
            if limits.crowded() {
                idle::Limits {
                    head: crowded.min(calm),
                    stream: crowded.min(stream),
                    quiet: crowded.min(quiet),
                }
            } else {
                idle::Limits {
                    head: calm,
                    stream,
                    quiet,
                }
            }
        };
        // Closed when its client keeps it waiting for a request head
        // (idle, or a head half sent) for the header timeout, counted from
        // the end of its last reply; never while a request is answered (its
        // body has the body timeout, `StallBody`). The watch is a task of
        // its own: beside the connection, its timer was polled every time
        // the connection's task woke.
        let watch = tokio::spawn(async move {
            activity.idle_for(limit).await;
            idle.close();
        });
        // The client's address, for the requests answered on this task
        // ([`peer`]).
        tokio::spawn(PEER.scope(peer, async move {
            let _slot: Slot = slot;
            let _watch = AbortOnDropHandle::new(watch);
            tokio::pin!(conn);
            loop {
                tokio::select! {
                    biased;
                    r = conn.as_mut() => {
                        if let Err(e) = r {
                            tracing::debug!("connection from {peer}: {e}");
                        }
                        break;
                    }
                    why = &mut told => match why {
                        closing::Why::Idle => {
                            tracing::debug!("connection from {peer}: idle, closed");
                            break;
                        }
                        // The server stops (told once): the request in
                        // hand gets its reply, and no other is read.
                        closing::Why::Stopping => conn.as_mut().graceful_shutdown(),
                    }
                }
            }
            // The connection counts as open until here.
            drop(told);
        }));
    }
    drop(listener);
    tokio::select! {
        () = closing.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(5)) => {
            tracing::warn!("connections still open 5 s after shutdown; closing them");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_well_formed() {
        let text = std::str::from_utf8(REFUSED).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["result"], "retry");
    }

    #[test]
    fn the_cap_fits_under_the_file_limit() {
        assert_eq!(
            NetConfig::default().fit_to_fd_limit(1024).max_connections,
            768
        );
        assert_eq!(
            NetConfig::default()
                .fit_to_fd_limit(1 << 20)
                .max_connections,
            8192
        );
        assert_eq!(NetConfig::default().fit_to_fd_limit(10).max_connections, 64);
    }
}
