//! A live game's public events over HTTP: Server-Sent Events (the live
//! page's script, and programs that ask for `text/event-stream`) or NDJSON
//! (one JSON object per line) at `GET /v1/games/{id}/events`.
//!
//! The stream starts with the game so far (a `start` message, then every
//! public event), follows the game, and ends after the `end` message. A
//! client that falls behind by more than the buffer gets a final `dropped`
//! message and the stream ends: it never slows the game.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Extension, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use croupier_competition::services::Services;
use croupier_live::live_games::{LiveMessage, Spectator, WatchError};

/// The client's address (loopback when the server runs without its accept
/// loop, as in router tests).
pub fn client_ip(conn: Option<Extension<ConnectInfo<SocketAddr>>>) -> IpAddr {
    conn.map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |c| c.0 .0.ip())
}

/// What a stream item is.
enum Item {
    Msg(Arc<LiveMessage>),
    Dropped,
}

/// The spectator's messages: history, then live ones, until the end.
fn messages(spectator: Spectator) -> impl Stream<Item = Item> + Send {
    let Spectator {
        history,
        rx,
        over,
        place,
    } = spectator;
    // The place (the bounds' count) lives as long as the stream.
    let state = (VecDeque::from(history), rx, over, false, place);
    stream::unfold(
        state,
        |(mut history, mut rx, over, done, place)| async move {
            if done {
                return None;
            }
            if let Some(m) = history.pop_front() {
                let end = matches!(*m, LiveMessage::End { .. });
                return Some((Item::Msg(m), (history, rx, over, end, place)));
            }
            if over {
                return None;
            }
            match rx.recv().await {
                Ok(m) => {
                    let end = matches!(*m, LiveMessage::End { .. });
                    Some((Item::Msg(m), (history, rx, over, end, place)))
                }
                Err(RecvError::Lagged(_)) => {
                    Some((Item::Dropped, (history, rx, over, true, place)))
                }
                Err(RecvError::Closed) => None,
            }
        },
    )
}

fn kind(m: &LiveMessage) -> &'static str {
    match m {
        LiveMessage::Start { .. } => "start",
        LiveMessage::Event(_) => "event",
        LiveMessage::End { .. } => "end",
    }
}

/// A message as JSON; one that does not serialise (a bug) is logged and
/// left out rather than sent empty. An event its rules cannot write is
/// left out without a word: it was reported once, when first read
/// (`watch::Told`), not for each spectator.
fn serialised(m: &LiveMessage) -> Option<String> {
    if matches!(m, LiveMessage::Event(e) if e.event.json().is_none()) {
        return None;
    }
    match serde_json::to_string(m) {
        Ok(text) => Some(text),
        Err(e) => {
            tracing::error!("live games: a message does not serialise: {e}");
            None
        }
    }
}

const DROPPED: &str = r#"{"type":"dropped","reason":"the client read too slowly and was dropped; reconnect to resume"}"#;

/// The messages as Server-Sent Events (`event:` start, event, end or
/// dropped; `data:` the JSON message; `id:` the event's index).
pub fn sse(spectator: Spectator) -> Response {
    let events = messages(spectator).filter_map(|item| {
        let event = match item {
            Item::Msg(m) => serialised(&m).map(|data| {
                let e = Event::default().event(kind(&m)).data(data);
                match &*m {
                    LiveMessage::Event(p) => e.id(p.index.to_string()),
                    LiveMessage::Start { .. } | LiveMessage::End { .. } => e,
                }
            }),
            Item::Dropped => Some(Event::default().event("dropped").data(DROPPED)),
        };
        std::future::ready(event.map(Ok::<Event, Infallible>))
    });
    let mut r = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    r
}

/// The messages as NDJSON.
pub fn ndjson(spectator: Spectator) -> Response {
    let lines = messages(spectator).filter_map(|item| {
        let line = match item {
            Item::Msg(m) => serialised(&m),
            Item::Dropped => Some(DROPPED.to_string()),
        };
        std::future::ready(line.map(|mut line| {
            line.push('\n');
            Ok::<Bytes, Infallible>(Bytes::from(line))
        }))
    });
    (
        [
            (header::CONTENT_TYPE, "application/x-ndjson"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(lines),
    )
        .into_response()
}

#[derive(Debug, Deserialize)]
pub struct StreamQuery {
    /// `sse` or `ndjson` (default: by the Accept header; NDJSON unless it
    /// names `text/event-stream`).
    format: Option<String>,
}

fn refusal(e: &WatchError) -> Response {
    let status = match e {
        WatchError::NotLive(_) => StatusCode::NOT_FOUND,
        WatchError::Full(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    (status, Json(serde_json::json!({ "error": e.to_string() }))).into_response()
}

/// `GET /v1/games/{id}/events`.
pub async fn events(
    State(state): State<Arc<Services>>,
    conn: Option<Extension<ConnectInfo<SocketAddr>>>,
    Path(id): Path<String>,
    Query(q): Query<StreamQuery>,
    headers: HeaderMap,
) -> Response {
    let Ok(id) = id.parse::<i64>() else {
        return (
            StatusCode::BAD_REQUEST,
            Json(serde_json::json!({"error": "the game id must be a number"})),
        )
            .into_response();
    };
    let want_sse = match q.format.as_deref() {
        Some("sse") => true,
        Some("ndjson") => false,
        Some(other) => {
            return (
                StatusCode::BAD_REQUEST,
                Json(serde_json::json!({
                    "error": format!("unknown format '{}': use sse or ndjson", other.chars().take(20).collect::<String>())
                })),
            )
                .into_response()
        }
        None => headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream")),
    };
    match state.live.watch(id, client_ip(conn)) {
        Err(e) => refusal(&e),
        Ok(s) if want_sse => sse(s),
        Ok(s) => ndjson(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_arena::watch::{PublicEvent, Told};

    /// An event whose rules cannot write it (a bug).
    struct Broken;

    impl serde::Serialize for Broken {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("broken"))
        }
    }

    impl std::fmt::Display for Broken {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("broken")
        }
    }

    fn event(told: Told) -> LiveMessage {
        LiveMessage::Event(PublicEvent {
            index: 4,
            event: told,
            to_act: vec![1],
            view: None,
            at_ms: 7,
            move_ms: None,
        })
    }

    /// What the test's code logs.
    #[derive(Clone, Default)]
    struct Said(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Said {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Both streams (SSE and NDJSON) send what `serialised` gives: an event
    /// that can be written, whole; one that cannot, nothing, and without a
    /// word for each spectator (its watch reported it once).
    #[test]
    fn an_event_its_rules_cannot_write_is_left_out_of_both_streams_quietly() {
        let said = Said::default();
        let writer = said.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let (sent, broken) = tracing::subscriber::with_default(subscriber, || {
            (
                serialised(&event(Told::of(5))),
                serialised(&event(Told::of(Broken))),
            )
        });
        let v: serde_json::Value = serde_json::from_str(&sent.expect("written")).unwrap();
        assert_eq!(v["type"], "event");
        assert_eq!(v["event"], 5);
        assert_eq!(v["text"], "5");
        assert_eq!(v["index"], 4);
        assert_eq!(broken, None);
        let text = String::from_utf8_lossy(&said.0.lock().unwrap()).into_owned();
        assert!(text.is_empty(), "{text}");
    }
}
