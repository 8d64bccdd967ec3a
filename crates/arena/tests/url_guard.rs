//! The push-bot address guard in the HTTP client: with private targets not
//! allowed, a bot URL on loopback (as an IP literal in any spelling, or as a
//! host name that resolves there) is refused before any connection is
//! opened, and the fault says "unreachable" without echoing what answered.
//! Only loopback listeners are used; no packet leaves the machine.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use croupier_arena::transport::http::{HttpClient, HttpEndpoint, HttpLimits};
use croupier_arena::transport::TransportError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::time::Instant;

/// A loopback HTTP server that counts accepted connections and answers
/// every request with `status`.
async fn counting_server(status: &'static str) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepts = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&accepts);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, accepts)
}

fn client(allow_private: bool) -> HttpClient {
    HttpClient::new(HttpLimits {
        allow_private,
        ..HttpLimits::default()
    })
    .unwrap()
}

async fn post(client: &HttpClient, url: &str) -> Result<String, TransportError> {
    let endpoint = HttpEndpoint::parse(url, None).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    client
        .post(&endpoint, None, "t", "{}".into(), deadline)
        .await
}

#[tokio::test]
async fn loopback_bots_are_refused_before_any_connection() {
    let (port, accepts) = counting_server("200 OK").await;
    let guarded = client(false);
    for url in [
        format!("http://127.0.0.1:{port}/bot"),
        format!("http://127.1:{port}/bot"),
        format!("http://2130706433:{port}/bot"),
        format!("http://0x7f000001:{port}/bot"),
        format!("http://[::ffff:127.0.0.1]:{port}/bot"),
        format!("http://localhost:{port}/bot"),
        format!("http://LocalHost.:{port}/bot"),
    ] {
        let err = post(&guarded, &url).await.unwrap_err();
        assert_eq!(
            err,
            TransportError::Disconnected("the bot is unreachable".into()),
            "{url}"
        );
        assert_eq!(err.fault_kind(), "disconnect");
    }
    assert_eq!(
        accepts.load(Ordering::SeqCst),
        0,
        "no connection was opened"
    );

    // The same listener is reachable when private targets are allowed, so
    // the zero above is the guard's doing.
    let open = client(true);
    let reply = post(&open, &format!("http://127.0.0.1:{port}/bot")).await;
    assert_eq!(reply, Ok("ok".to_string()));
    assert_eq!(accepts.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn faults_do_not_echo_what_answered_when_guarded() {
    // A closed loopback port: allowed, the fault names the cause ...
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let open = client(true);
    let err = post(&open, &format!("http://127.0.0.1:{closed}/"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("cannot connect"), "{err}");
    // ... guarded, the fault says only "unreachable".
    let guarded = client(false);
    let err = post(&guarded, &format!("http://127.0.0.1:{closed}/"))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "the bot is unreachable");
    assert!(!err.to_string().to_lowercase().contains("refused"));

    // An error status is echoed only when private targets are allowed.
    let (port, _) = counting_server("403 Forbidden").await;
    let err = post(&open, &format!("http://127.0.0.1:{port}/"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("403"), "{err}");
}

/// A loopback HTTP server that answers every request with a redirect to
/// `location`, counting accepted connections.
async fn redirecting_server(location: String) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepts = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&accepts);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            let location = location.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let reply = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\n\
                     content-length: 0\r\nconnection: close\r\n\r\n"
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, accepts)
}

/// A bot that answers with a redirect does not lead the client anywhere:
/// redirects are never followed, guarded or not, so a public bot cannot
/// bounce the server to a private address. (Both ends are on loopback here,
/// which only the unguarded client may call; the guarded client's refusal
/// of the first hop is shown above.)
#[tokio::test]
async fn redirects_are_never_followed() {
    let (target, target_accepts) = counting_server("200 OK").await;
    let (port, accepts) = redirecting_server(format!("http://127.0.0.1:{target}/")).await;
    let open = client(true);
    let err = post(&open, &format!("http://127.0.0.1:{port}/bot"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("307"), "{err}");
    assert_eq!(accepts.load(Ordering::SeqCst), 1, "the bot was called");
    assert_eq!(
        target_accepts.load(Ordering::SeqCst),
        0,
        "the redirect was not followed"
    );
    // Guarded, the redirect's status is not echoed either.
    let guarded = client(false);
    let err = post(&guarded, &format!("http://localhost:{port}/bot"))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "the bot is unreachable");
    assert_eq!(accepts.load(Ordering::SeqCst), 1);
}
