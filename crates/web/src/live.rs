//! Live games on the website (issue 16): `/live` lists the games in
//! progress, `/live/{id}` shows one game's public events as they happen.
//! With JavaScript the page follows the game through Server-Sent Events
//! (`/v1/games/{id}/events?format=sse`); without it, it reloads itself every
//! few seconds. Once the game is over the page links to its replay, which
//! shows every card.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::html::{bot_link, game_title, html, layout, time, Markup, PreEscaped};
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

/// A live game's seats: its bots' names, "a person" for a person's seat.
pub fn live_seats(g: &LiveSummary) -> Markup {
    html! {
        @for (i, s) in g.seats.iter().enumerate() {
            @if i > 0 { " · " }
            @if g.person_seat == Some(i) { span class="who" { "a person" } }
            @else { (bot_link(s)) }
        }
    }
}

/// A table of live games with links to watch them (home and bot pages).
pub fn live_table(games: &[LiveSummary]) -> Markup {
    if games.is_empty() {
        return html! { p class="empty" { "No game to watch right now." } };
    }
    html! {
        div class="scroll" { table class="live-games" {
            thead { tr {
                th { "Game" } th { "Seats" } th class="hide-narrow" { "Started" } th class="num" { "Watching" } th {}
            } }
            tbody {
                @for g in games {
                    tr {
                        td { (game_title(&g.game)) }
                        td { (live_seats(g)) }
                        td class="hide-narrow" { (time(&g.started)) }
                        td class="num" { (g.spectators) }
                        td { a class="watch" href={ "/live/" (g.id) } { "watch" } }
                    }
                }
            }
        } }
    }
}

async fn list(State(state): State<Arc<Services>>, fmt: Fmt) -> Response {
    let games = state.live.list();
    respond(fmt, Ok::<_, WebError>(games), |g| {
        let body = html! {
            h1 { "Live games" }
            p class="lead" {
                "Games in progress, as they happen. Hidden cards stay hidden until the game is over. "
                a href="/play" { "Play a bot yourself" } "."
            }
            (live_table(g))
        };
        layout("Live games", Some("/json/live"), body)
    })
}

/// The page's script: follows the event stream, appends each event, and
/// links the replay at the end. Without JavaScript the page refreshes.
const SCRIPT: &str = r#"
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
"#;

async fn page(State(state): State<Arc<Services>>, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<i64>() else {
        return WebError::BadRequest("A game id is a number.".into()).page(Fmt::Html);
    };
    let Some(game) = state.live.get(id) else {
        // Over (or never live): the replay tells the rest.
        return Redirect::to(&format!("/games/{id}")).into_response();
    };
    let mut events = Vec::new();
    let mut over = None;
    let mut to_act = String::new();
    for m in game.history() {
        match &*m {
            LiveMessage::Start { .. } => {}
            LiveMessage::Event(e) => {
                events.push((e.index, e.text.clone()));
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
    let body = html! {
        @if over.is_none() {
            noscript { meta http-equiv="refresh" content="3"; }
        }
        section id="live" data-game=(id) data-stream={ "/v1/games/" (id) "/events?format=sse" } data-over=[over.as_deref()] {
            h1 { (game_title(kind)) " · game " (id) " " small class="live-badge" { "live" } }
            ul class="seats" {
                @for (i, s) in seats.iter().enumerate() {
                    li {
                        "seat " (i) ": "
                        @if *person_seat == Some(i) { "a person" } @else { (bot_link(s)) }
                    }
                }
            }
            p id="live-status" {
                @match &over {
                    Some(s) => {
                        "The game is over (" (s) "). "
                        a href={ "/games/" (id) } { "See the replay with every card" } "."
                    },
                    None => {
                        "In progress since " (time(started)) ". Only what every player sees is shown: hands and sealed bids stay hidden until they are public."
                    },
                }
            }
            p id="live-to-act" { (to_act) }
            h2 { "Events" }
            ol id="live-events" class="events" {
                @for (index, text) in &events { li data-index=(index) { (text) } }
            }
        }
        @if over.is_none() { script { (PreEscaped(SCRIPT)) } }
    };
    Html(layout(&format!("{} game {id}, live", game_title(kind)), None, body).into_string())
        .into_response()
}
