//! Live games on the website (issue 16): `/live` lists the games in
//! progress, `/live/{id}` shows one game's public events as they happen.
//! With JavaScript the page follows the game through Server-Sent Events
//! (`/v1/games/{id}/events?format=sse`); without it, it reloads itself every
//! few seconds. Once the game is over the page links to its replay, which
//! shows every card.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::html::{bot_link, esc, game_title, layout, time};
use crate::page::{respond, Fmt, WebError};
use croupier_competition::services::Services;
use croupier_live::live_games::{LiveMessage, LiveSummary};

/// The routes of live pages and the event stream.
pub fn routes() -> Router<Arc<Services>> {
    Router::new()
        .route("/live", get(list))
        .route("/json/live", get(list))
        .route("/live/{id}", get(page))
        .route("/v1/games/{id}/events", get(crate::events::events))
}

/// A table of live games with links to watch them (home and bot pages).
pub fn live_table(games: &[LiveSummary]) -> String {
    if games.is_empty() {
        return "<p class=\"empty\">No game to watch right now.</p>".into();
    }
    let mut out = String::from(
        "<div class=\"scroll\"><table class=\"live-games\"><thead><tr><th>Game</th><th>Seats</th>\
<th class=\"hide-narrow\">Started</th><th class=\"num\">Watching</th><th></th></tr></thead><tbody>",
    );
    for g in games {
        let seats: Vec<String> = g
            .seats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if g.person_seat == Some(i) {
                    "<span class=\"who\">a person</span>".to_string()
                } else {
                    bot_link(s)
                }
            })
            .collect();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"hide-narrow\">{}</td><td class=\"num\">{}</td>\
<td><a class=\"watch\" href=\"/live/{}\">watch</a></td></tr>",
            game_title(&g.game),
            seats.join(" · "),
            time(&g.started),
            g.spectators,
            g.id
        );
    }
    out.push_str("</tbody></table></div>");
    out
}

async fn list(State(state): State<Arc<Services>>, fmt: Fmt) -> Response {
    let games = state.live.list();
    respond(fmt, Ok::<_, WebError>(games), |g| {
        let body = format!(
            "<h1>Live games</h1><p class=\"lead\">Games in progress, as they happen. \
Hidden cards stay hidden until the game is over. <a href=\"/play\">Play a bot yourself</a>.</p>{}",
            live_table(g)
        );
        layout("Live games", Some("/json/live"), &body)
    })
}

/// The page's script: follows the event stream, appends each event, and
/// links the replay at the end. Without JavaScript the page refreshes.
const SCRIPT: &str = r#"<script>
(function () {
  var box = document.getElementById('live');
  if (!box || !window.EventSource) return;
  var list = document.getElementById('live-events');
  var status = document.getElementById('live-status');
  var seen = {};
  list.querySelectorAll('li[data-index]').forEach(function (li) { seen[li.dataset.index] = true; });
  var es = new EventSource(box.dataset.stream);
  es.addEventListener('event', function (m) {
    var e = JSON.parse(m.data);
    if (seen[e.index]) return;
    seen[e.index] = true;
    var li = document.createElement('li');
    li.dataset.index = e.index;
    li.textContent = e.text;
    list.appendChild(li);
    var act = document.getElementById('live-to-act');
    if (act) act.textContent = e.to_act.length ? 'To act: seat ' + e.to_act.join(', seat ') : '';
  });
  es.addEventListener('end', function (m) {
    var e = JSON.parse(m.data);
    es.close();
    box.dataset.over = e.status;
    status.textContent = 'The game is over (' + e.status + '). ';
    var link = document.createElement('a');
    link.href = '/games/' + box.dataset.game;
    link.textContent = 'See the replay with every card';
    status.appendChild(link);
    status.appendChild(document.createTextNode('.'));
  });
  es.addEventListener('dropped', function () { es.close(); location.reload(); });
  es.onerror = function () { if (box.dataset.over) es.close(); };
  box.dataset.js = 'on';
})();
</script>"#;

async fn page(State(state): State<Arc<Services>>, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<i64>() else {
        return WebError::BadRequest("A game id is a number.".into()).page(Fmt::Html);
    };
    let Some(game) = state.live.get(id) else {
        // Over (or never live): the replay tells the rest.
        return Redirect::to(&format!("/games/{id}")).into_response();
    };
    let mut events = String::new();
    let mut over = None;
    let mut to_act = String::new();
    for m in game.history() {
        match &*m {
            LiveMessage::Start { .. } => {}
            LiveMessage::Event(e) => {
                let _ = write!(
                    events,
                    "<li data-index=\"{}\">{}</li>",
                    e.index,
                    esc(&e.text)
                );
                to_act = if e.to_act.is_empty() {
                    String::new()
                } else {
                    format!(
                        "To act: seat {}",
                        e.to_act
                            .iter()
                            .map(u8::to_string)
                            .collect::<Vec<_>>()
                            .join(", seat ")
                    )
                };
            }
            LiveMessage::End { status, .. } => over = Some(status.clone()),
        }
    }
    let LiveMessage::Start {
        game: kind,
        seats,
        started,
        person_seat,
        ..
    } = &game.start
    else {
        return WebError::Internal.page(Fmt::Html);
    };
    let seats: String = seats
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let who = if *person_seat == Some(i) {
                "a person".to_string()
            } else {
                bot_link(s)
            };
            format!("<li>seat {i}: {who}</li>")
        })
        .collect();
    let status = match &over {
        Some(s) => format!(
            "The game is over ({}). <a href=\"/games/{id}\">See the replay with every card</a>.",
            esc(s)
        ),
        None => format!(
            "In progress since {}. Only what every player sees is shown: hands and sealed bids stay hidden until they are public.",
            time(started)
        ),
    };
    let refresh = if over.is_none() {
        "<noscript><meta http-equiv=\"refresh\" content=\"3\"></noscript>"
    } else {
        ""
    };
    let body = format!(
        "{refresh}<section id=\"live\" data-game=\"{id}\" data-stream=\"/v1/games/{id}/events?format=sse\"{over_attr}>\
<h1>{title} · game {id} <small class=\"live-badge\">live</small></h1><ul class=\"seats\">{seats}</ul>\
<p id=\"live-status\">{status}</p><p id=\"live-to-act\">{to_act}</p>\
<h2>Events</h2><ol id=\"live-events\" class=\"events\">{events}</ol></section>{script}",
        title = game_title(kind),
        over_attr = over
            .as_ref()
            .map(|s| format!(" data-over=\"{}\"", esc(s)))
            .unwrap_or_default(),
        script = if over.is_none() { SCRIPT } else { "" },
    );
    Html(layout(
        &format!("{} game {id}, live", game_title(kind)),
        None,
        &body,
    ))
    .into_response()
}
