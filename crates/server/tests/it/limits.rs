//! Issue 18, items 2, 3 and 6: connections are timed out and capped,
//! failed logins back off (`retry` in the 2014 API, HTTP 429 in `/v1`), and malformed or oversized requests to the JSON
//! APIs fail in each API's own shape.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{config, TestServer};
use croupier_server::net::NetConfig;
use futures::StreamExt as _;
use serde_json::{json, Value};

fn addr(srv: &TestServer) -> SocketAddr {
    srv.base.trim_start_matches("http://").parse().unwrap()
}

/// Reads until the server closes the connection (or `limit` passes);
/// returns what was read and how long it took.
fn read_to_close(s: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let start = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
        if start.elapsed() > limit {
            break;
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), start.elapsed())
}

/// A runtime for `net::serve`, and a loopback listener on it with its address.
fn runtime_and_listener() -> (tokio::runtime::Runtime, tokio::net::TcpListener, SocketAddr) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    (rt, listener, addr)
}

fn quick_net() -> NetConfig {
    NetConfig {
        header_timeout: Duration::from_secs(1),
        crowded_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(1),
        stream_timeout: Duration::from_secs(1),
        quiet_timeout: Duration::from_secs(6),
        max_connections: 64,
        max_per_address: 4,
    }
}

#[test]
fn idle_slow_head_and_stalled_body_connections_are_closed() {
    let srv = TestServer::with_net(config(), quick_net());
    // idle: nothing sent
    let mut idle = TcpStream::connect(addr(&srv)).unwrap();
    // a head that never ends
    let mut head = TcpStream::connect(addr(&srv)).unwrap();
    head.write_all(b"POST /api/status/ HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    // a body that stalls
    let mut body = TcpStream::connect(addr(&srv)).unwrap();
    body.write_all(b"POST /api/status/ HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"se")
        .unwrap();
    for (what, s) in [
        ("idle", &mut idle),
        ("head", &mut head),
        ("body", &mut body),
    ] {
        let (text, took) = read_to_close(s, Duration::from_secs(20));
        assert!(took < Duration::from_secs(10), "{what}: open for {took:?}");
        if what == "body" {
            assert!(text.contains("\"result\":\"failure\""), "{what}: {text}");
        }
    }
    // a kept-alive connection is closed once idle
    let mut kept = TcpStream::connect(addr(&srv)).unwrap();
    kept.write_all(b"GET /api/ HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (text, took) = read_to_close(&mut kept, Duration::from_secs(20));
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(took < Duration::from_secs(10), "kept alive for {took:?}");
    // and the server still answers
    assert_eq!(srv.get("/api/").status, 200);
}

/// A head sent a byte at a time gets no more time than the header timeout
/// (from the connection's start): bytes that trickle in are not activity.
#[test]
fn a_head_that_trickles_in_is_closed_at_the_header_timeout() {
    let srv = TestServer::with_net(config(), quick_net());
    let mut s = TcpStream::connect(addr(&srv)).unwrap();
    let mut writer = s.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        // 12 s of a head that never ends, a byte every 200 ms.
        for b in b"POST /api/status/ HTTP/1.1\r\nHost: x\r\nX-Slow: "
            .iter()
            .cycle()
            .take(60)
        {
            if writer.write_all(&[*b]).is_err() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        false
    });
    let (text, took) = read_to_close(&mut s, Duration::from_secs(20));
    assert!(
        took < Duration::from_secs(8),
        "a trickled head kept its connection {took:?}"
    );
    // Closed by the header timeout (1 s), not refused at once.
    assert!(took >= Duration::from_millis(900), "closed after {took:?}");
    assert!(text.is_empty(), "a head never finished got a reply: {text}");
    drop(s);
    let _ = trickle.join();
    assert_eq!(srv.get("/api/").status, 200);
}

/// Set when a stream is dropped: its reply has ended (sent whole, or its
/// connection closed).
struct Dropped(&'static AtomicBool);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A body that yields `tick 0`, then nothing for ever, setting `flag`
/// when dropped.
fn tick_then_nothing(flag: &'static AtomicBool) -> axum::body::Body {
    let tick = futures::stream::once(async {
        Ok::<_, std::convert::Infallible>(axum::body::Bytes::from("tick 0\n"))
    });
    // (Held by what follows the tick: `once` lets go of its future as
    // soon as it yields.)
    let rest = futures::stream::unfold(Dropped(flag), |g| async move {
        futures::future::pending::<()>().await;
        Some((Ok(axum::body::Bytes::new()), g))
    });
    axum::body::Body::from_stream(tick.chain(rest))
}

/// A body that yields `tick N` after waiting `pauses[N]` ms, then ends.
fn ticks(pauses: &'static [u64]) -> axum::body::Body {
    let ticks = futures::stream::unfold(0usize, move |n| async move {
        let pause = *pauses.get(n)?;
        tokio::time::sleep(Duration::from_millis(pause)).await;
        let tick = axum::body::Bytes::from(format!("tick {n}\n"));
        Some((Ok::<_, std::convert::Infallible>(tick), n + 1))
    });
    axum::body::Body::from_stream(ticks)
}

/// Whether `flag` is set within `limit`.
fn set_within(flag: &AtomicBool, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    flag.load(Ordering::SeqCst)
}

/// A reply whose body streams (as a game's events do) keeps its
/// connection for as long as it streams: the wait for the next request
/// head starts when the stream ends, not when its head went out. A stream
/// with nothing to send for a while is kept; one whose client does not
/// read is closed after the stream timeout, one whose client left with
/// it, and one with nothing to send for the quiet timeout after that.
#[test]
fn a_streamed_reply_outlives_the_header_timeout() {
    static FLOOD: AtomicBool = AtomicBool::new(false);
    static GONE: AtomicBool = AtomicBool::new(false);
    static HUSH: AtomicBool = AtomicBool::new(false);
    let (rt, listener, addr) = runtime_and_listener();
    let app = axum::Router::new()
        // Eight ticks 300 ms apart: 2.4 s, over the 1 s header timeout.
        .route("/stream", axum::routing::get(|| async { ticks(&[300; 8]) }))
        // A game that keeps its watchers waiting: 2.5 s with nothing to
        // send, over the 1 s stream timeout.
        .route("/quiet", axum::routing::get(|| async { ticks(&[0, 2500]) }))
        .route(
            "/flood",
            axum::routing::get(|| async {
                // Without end, as fast as it is asked for.
                let guard = Dropped(&FLOOD);
                let chunks = futures::stream::unfold(guard, |g| async move {
                    let chunk = axum::body::Bytes::from(vec![b'x'; 64 << 10]);
                    Some((Ok::<_, std::convert::Infallible>(chunk), g))
                });
                axum::body::Body::from_stream(chunks)
            }),
        )
        .route(
            "/gone",
            axum::routing::get(|| async { tick_then_nothing(&GONE) }),
        )
        .route(
            "/hush",
            axum::routing::get(|| async { tick_then_nothing(&HUSH) }),
        );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    rt.spawn(croupier_server::net::serve(
        listener,
        app,
        quick_net(),
        async {
            let _ = stopped.await;
        },
    ));
    let get = |path: &str| {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .unwrap();
        s
    };
    let (text, took) = read_to_close(&mut get("/stream"), Duration::from_secs(20));
    assert!(text.contains("tick 7"), "the stream was cut: {text}");
    // Then, with the stream over, the idle connection is closed.
    assert!(took < Duration::from_secs(10), "open for {took:?}");
    // A stream with nothing to send for longer than the stream timeout,
    // whose client reads, is not cut.
    let (text, _) = read_to_close(&mut get("/quiet"), Duration::from_secs(20));
    assert!(text.contains("tick 1"), "a quiet stream was cut: {text}");
    // A client that does not read: hyper holds a piece it cannot send and
    // asks for no more; the connection is closed after the stream timeout.
    let flood = get("/flood");
    assert!(
        set_within(&FLOOD, Duration::from_secs(10)),
        "a stream its client does not read kept its connection"
    );
    drop(flood);
    // A quiet stream whose client has gone ends with its connection (well
    // before the 6 s quiet timeout).
    let mut gone = get("/gone");
    let mut first = [0u8; 256];
    let n = gone.read(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).contains("200"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!GONE.load(Ordering::SeqCst), "ended with its client there");
    drop(gone);
    assert!(
        set_within(&GONE, Duration::from_secs(3)),
        "a quiet stream outlived its client"
    );
    // One whose client stays but that has nothing more to send is closed
    // after the quiet timeout (6 s), not the stream timeout (1 s).
    let (text, took) = read_to_close(&mut get("/hush"), Duration::from_secs(30));
    assert!(text.contains("tick 0"), "{text}");
    // (Its body is let go with the connection, as the socket closes.)
    assert!(
        set_within(&HUSH, Duration::from_secs(2)),
        "the stream lives on"
    );
    assert!(
        (Duration::from_secs(5)..Duration::from_secs(15)).contains(&took),
        "a quiet stream closed after {took:?}"
    );
    let _ = stop.send(());
}

#[test]
fn a_stopping_server_answers_the_request_in_hand_and_closes_idle_connections() {
    let (rt, listener, addr) = runtime_and_listener();
    let app = axum::Router::new()
        .route("/", axum::routing::get(|| async { "quick" }))
        .route(
            "/slow",
            axum::routing::get(|| async {
                tokio::time::sleep(Duration::from_millis(700)).await;
                "done"
            }),
        );
    let net = NetConfig {
        header_timeout: Duration::from_secs(30),
        ..quick_net()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = rt.spawn(croupier_server::net::serve(listener, app, net, async {
        let _ = stopped.await;
    }));
    let get = |s: &mut TcpStream, path: &str| {
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .unwrap();
    };
    // A kept-alive connection between requests.
    let mut idle = TcpStream::connect(addr).unwrap();
    get(&mut idle, "/");
    let mut buf = [0u8; 1024];
    let n = idle.read(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).contains("quick"));
    // A request being answered when the server is told to stop.
    let mut busy = TcpStream::connect(addr).unwrap();
    get(&mut busy, "/slow");
    std::thread::sleep(Duration::from_millis(200));
    let told = Instant::now();
    stop.send(()).unwrap();
    let (text, _) = read_to_close(&mut busy, Duration::from_secs(10));
    assert!(
        text.contains("200 OK") && text.ends_with("done"),
        "the request in hand was not answered: {text:?}"
    );
    let (text, _) = read_to_close(&mut idle, Duration::from_secs(10));
    assert!(text.is_empty(), "{text:?}");
    assert!(
        told.elapsed() < Duration::from_secs(5),
        "the idle connection was kept for {:?} (header timeout 30 s)",
        told.elapsed()
    );
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(5), served)
            .await
            .expect("serve returns once its connections are closed")
            .unwrap()
            .unwrap();
    });
    assert!(TcpStream::connect(addr).is_err(), "still listening");
}

#[test]
fn a_request_knows_its_clients_address() {
    let (rt, listener, addr) = runtime_and_listener();
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(|mut req: axum::extract::Request| async move {
            croupier_server::net::connect_info(&mut req);
            let info = req
                .extensions()
                .get::<axum::extract::ConnectInfo<SocketAddr>>()
                .map(|c| c.0);
            format!("{:?} {:?}", croupier_server::net::peer(), info)
        }),
    );
    rt.spawn(croupier_server::net::serve(
        listener,
        app,
        quick_net(),
        std::future::pending(),
    ));
    let mut s = TcpStream::connect(addr).unwrap();
    let me = s.local_addr().unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let (text, _) = read_to_close(&mut s, Duration::from_secs(10));
    assert!(
        text.ends_with(&format!("Some({me}) Some({me})")),
        "{text:?}"
    );
    // Outside a connection of `serve`, no address.
    assert_eq!(croupier_server::net::peer(), None);
}

#[test]
fn connections_are_capped_per_address_and_others_are_still_served() {
    let srv = TestServer::with_net(config(), quick_net());
    let a = addr(&srv);
    let held: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(a).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut refused = TcpStream::connect(a).unwrap();
    let (text, _) = read_to_close(&mut refused, Duration::from_secs(5));
    assert!(text.starts_with("HTTP/1.1 503"), "{text:?}");
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    let v: Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["result"], "retry", "{v}");
    // another loopback address is served meanwhile
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let reply = rt.block_on(async {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let sock = tokio::net::TcpSocket::new_v4().unwrap();
        sock.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        let mut s = sock.connect(a).await.unwrap();
        s.write_all(b"GET /api/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out).await;
        out
    });
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply:?}");
    drop(held);
}

#[test]
fn oversized_and_malformed_requests_fail_in_the_apis_own_shape() {
    let srv = TestServer::start();
    let big = "x".repeat(3 * 1024 * 1024);
    // the 2014 API: HTTP 200 and a failure with a reason
    let r = srv
        .client
        .post(format!("{}/api/status/", srv.base))
        .body(big.clone())
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let v: Value = r.json().unwrap();
    assert_eq!(v["result"], "failure", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("too large"), "{v}");
    // /v1: its own {"error": …}, with the status
    let r = srv
        .client
        .post(format!("{}/v1/bots", srv.base))
        .body(big)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 413);
    let v: Value = r.json().unwrap();
    assert!(v["error"].as_str().is_some(), "{v}");
    for (method, path) in [("DELETE", "/v1/bots"), ("GET", "/v1/nothing-here")] {
        let r = srv
            .client
            .request(method.parse().unwrap(), format!("{}{path}", srv.base))
            .send()
            .unwrap();
        let status = r.status().as_u16();
        let text = r.text().unwrap();
        let v: Value =
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("{method} {path}: {text}"));
        assert!(
            v["error"].as_str().is_some(),
            "{method} {path}: {status} {v}"
        );
    }
    let r = srv
        .client
        .delete(format!("{}/api/status/", srv.base))
        .send()
        .unwrap();
    let v: Value = r.json().unwrap();
    assert_eq!(v["result"], "failure", "{v}");
}

#[test]
fn failed_logins_back_off_with_retry_and_retry_after() {
    let srv = TestServer::start();
    let bot = srv.bot("guessed");
    let mut accepted = 0;
    let mut throttled = None;
    for i in 0..30 {
        let r = srv
            .client
            .post(format!("{}/api/login/", srv.base))
            .body(json!({"name": bot.name, "password": format!("guess {i}")}).to_string())
            .send()
            .unwrap();
        let status = r.status().as_u16();
        let retry_after = r.headers().get("retry-after").cloned();
        let v: Value = r.json().unwrap();
        assert_eq!(status, 200, "the 2014 API answers HTTP 200: {v}");
        if v["result"] == "retry" {
            let secs: u64 = retry_after.unwrap().to_str().unwrap().parse().unwrap();
            assert!(secs >= 1);
            throttled = Some(i);
            break;
        }
        assert_eq!(v["result"], "failure", "{v}");
        accepted += 1;
    }
    assert!(throttled.is_some(), "30 wrong guesses, none throttled");
    assert!(accepted <= 6, "{accepted} guesses before throttling");
    // the right password of another bot still logs in
    let other = srv.bot("honest");
    srv.login(&other.name, &other.password);
    // /v1 Basic auth: HTTP 429 and {"error": …} once throttled
    let mut last = 0;
    for i in 0..30 {
        let r = srv
            .client
            .get(format!("{}/v1/bots", srv.base))
            .basic_auth("some-owner", Some(format!("guess {i}")))
            .send()
            .unwrap();
        last = r.status().as_u16();
        if last == 429 {
            assert!(r.headers().get("retry-after").is_some());
            let v: Value = r.json().unwrap();
            assert!(v["error"].as_str().unwrap().contains("wait"), "{v}");
            break;
        }
        assert_eq!(last, 401);
    }
    assert_eq!(last, 429, "30 wrong owner passwords, none throttled");
}

/// Opens `GET path` from `from` (a loopback address) to `to`, and returns
/// the response's status line with the connection, left open (a stream
/// keeps its place while it is).
async fn open_from(
    from: &str,
    to: SocketAddr,
    path: &str,
) -> (String, tokio::io::BufReader<tokio::net::TcpStream>) {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut s = sock.connect(to).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut s = tokio::io::BufReader::new(s);
    let mut line = String::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_line(&mut line))
        .await
        .expect("a status line within 10 s")
        .unwrap();
    (line.trim_end().to_string(), s)
}

/// The website's handlers behind the front (the 2014 API's dispatcher)
/// get the client's own address: spectators are counted per address, so
/// a second loopback address still gets a stream when the first has as
/// many as it may open. (Without the address, every client would count as
/// one.)
#[test]
fn spectators_are_counted_by_the_address_the_front_hands_on() {
    let srv = TestServer::start();
    let bots = [srv.bot("addr-a"), srv.bot("addr-b")];
    let (ra, _) = srv.pair(&bots[0], &bots[1]);
    let game = ra["game"].as_i64().unwrap();
    let path = format!("/v1/games/{game}/events");
    let to = addr(&srv);
    let per_client = croupier_live::live_games::LiveLimits::default().per_client;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // The game's live entry opens right after the deal.
        let mut first = open_from("127.0.0.1", to, &path).await;
        for _ in 0..50 {
            if !first.0.contains(" 404 ") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            first = open_from("127.0.0.1", to, &path).await;
        }
        assert!(first.0.starts_with("HTTP/1.1 200"), "{}", first.0);
        let mut held = vec![first];
        for _ in 1..per_client {
            let (status, s) = open_from("127.0.0.1", to, &path).await;
            assert!(status.starts_with("HTTP/1.1 200"), "{status}");
            held.push((status, s));
        }
        let (over, mut s) = open_from("127.0.0.1", to, &path).await;
        assert!(over.starts_with("HTTP/1.1 503"), "{over}");
        // Its headers, then its JSON body (the connection stays open).
        let mut body = Vec::new();
        let mut chunk = [0u8; 1024];
        let said = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        while !said(&body).contains('}') {
            match tokio::time::timeout(
                Duration::from_secs(5),
                tokio::io::AsyncReadExt::read(&mut s, &mut chunk),
            )
            .await
            {
                Ok(Ok(n)) if n > 0 => body.extend_from_slice(&chunk[..n]),
                _ => break,
            }
        }
        let body = said(&body);
        assert!(
            body.contains("too many streams from your address"),
            "{body}"
        );
        let (other, _s) = open_from("127.0.0.2", to, &path).await;
        assert!(other.starts_with("HTTP/1.1 200"), "{other}");
        drop(held);
    });
}
