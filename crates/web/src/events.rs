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
/// left out rather than sent empty.
fn serialised(m: &LiveMessage) -> Option<String> {
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
            // An event its rules cannot write is left out (reported once,
            // when first read), not logged again for each spectator.
            Item::Msg(m) if matches!(&*m, LiveMessage::Event(e) if e.event.json().is_none()) => {
                None
            }
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
