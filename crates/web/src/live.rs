//! Live games on the website (issue 16): `/live` lists the games in
//! progress, `/live/{id}` shows one game at its card table as spectators
//! see it (issue 48: the rules' public view, drawn by the same renderer as
//! the replay and the play page), with whose turn it is, the move clock,
//! and the public events. With JavaScript the page follows the game
//! through Server-Sent Events (`/v1/games/{id}/events?format=sse`) and
//! redraws the table on each; without it, it reloads itself every few
//! seconds. `/json/live/{id}` is its JSON twin. Once the game is over the
//! page links to its replay, which shows every card.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use croupier_rules::{GameKind, Seat};
use serde::Serialize;

use crate::html::Names;
use crate::html::{bot_link, game_title, html, layout, time, Markup, PreEscaped};
use crate::page::{respond, Fmt, WebError};
use crate::replay::Show;
use crate::table::{self, Ctx, Over};
use croupier_competition::services::Services;
use croupier_live::live_games::{LiveMessage, LiveSummary};
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::skullwhist::SkullWhist;

/// The routes of live pages and the event stream.
pub fn routes() -> Router<Arc<Services>> {
    Router::new()
        .route("/live", get(list))
        .route("/json/live", get(list))
        .route("/live/{id}", get(page))
        .route("/json/live/{id}", get(page))
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

/// The page's script: on every message of the game's event stream, draws
/// the page again from the server (one renderer, no second one in the
/// browser) and swaps the table and the events in place; stops at the end.
const SCRIPT: &str = r#"
(function () {
  var box = document.getElementById('live');
  if (!box || !window.EventSource || box.dataset.over) return;
  var es = new EventSource(box.dataset.stream);
  var busy = false, again = false;
  function redraw() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.pathname, {cache: 'no-store'}).then(function (r) { return r.text(); }).then(function (html) {
      var next = new DOMParser().parseFromString(html, 'text/html').getElementById('live');
      var now = document.getElementById('live');
      if (next && now) {
        next.dataset.js = 'on';
        now.replaceWith(next);
        if (next.dataset.over) es.close();
      }
    }).finally(function () { busy = false; if (again) { again = false; redraw(); } });
  }
  es.addEventListener('event', redraw);
  es.addEventListener('end', function () { es.close(); redraw(); });
  es.addEventListener('dropped', function () { es.close(); location.reload(); });
  es.onerror = function () { if (document.getElementById('live').dataset.over) es.close(); };
  box.dataset.js = 'on';
})();
"#;

/// One public event, as the page lists it.
#[derive(Debug, Serialize)]
pub struct LiveEvent {
    /// Its position in the game's whole log (hidden events count too).
    pub index: usize,
    /// Its transcript line.
    pub text: String,
    /// The event as the game writes it (croupier/1's `event`).
    pub event: serde_json::Value,
}

/// A public event drawn as the replay draws it (names, card glyphs), or
/// its transcript line if it does not read.
fn event_html(kind: Option<GameKind>, e: &LiveEvent, names: &Names) -> Markup {
    fn drawn<G: Show>(e: &LiveEvent, names: &Names) -> Option<Markup> {
        let ev: G::Event = serde_json::from_value(e.event.clone()).ok()?;
        Some(G::event_html(&ev, names))
    }
    let html = match kind {
        Some(GameKind::SkullWhist) => drawn::<SkullWhist>(e, names),
        Some(GameKind::LoveLetter) => drawn::<LoveLetter>(e, names),
        Some(GameKind::Goofspiel) => drawn::<Goofspiel>(e, names),
        None => None,
    };
    html.unwrap_or_else(|| html! { (e.text) })
}

/// A live game as spectators see it: the page and its JSON twin.
#[derive(Debug, Serialize)]
pub struct LiveView {
    /// The stored game's id.
    pub id: i64,
    /// The game's name.
    pub game: String,
    /// Seat names; a person's seat is named by [`LiveView::person_seat`].
    pub seats: Vec<String>,
    /// The seat a person plays, if any.
    pub person_seat: Option<usize>,
    /// When it started (RFC 3339).
    pub started: String,
    /// `running`, `finished` or `aborted`.
    pub status: String,
    /// The seats whose turn it is.
    pub to_act: Vec<u8>,
    /// Milliseconds the seats to act have left (when the server gave
    /// them a clock).
    pub left_ms: Option<u64>,
    /// The public view: the rules' observation of the game without any
    /// seat's hidden cards (seat 0's shape).
    pub view: Option<serde_json::Value>,
    /// Scores by seat once finished.
    pub scores: Vec<Option<i64>>,
    /// The public events so far.
    pub events: Vec<LiveEvent>,
}

fn live_view(state: &Services, id: &str) -> Result<LiveView, WebError> {
    let id = id
        .parse::<i64>()
        .map_err(|_| WebError::BadRequest("A game id is a number.".into()))?;
    let game = state.live.get(id).ok_or_else(|| {
        WebError::NotFound(format!(
            "Game {id} is not in progress; its replay is at /games/{id}."
        ))
    })?;
    let LiveMessage::Start {
        game: kind,
        seats,
        started,
        person_seat,
        ..
    } = &game.start
    else {
        return Err(WebError::Internal);
    };
    let mut out = LiveView {
        id,
        game: kind.clone(),
        seats: seats.clone(),
        person_seat: *person_seat,
        started: started.clone(),
        status: "running".into(),
        to_act: Vec::new(),
        left_ms: None,
        view: None,
        scores: Vec::new(),
        events: Vec::new(),
    };
    let mut clock = None;
    let history = game.history();
    // Only the latest view is drawn: that one is read below, not every
    // batch's.
    for m in &history {
        match &**m {
            LiveMessage::Start { .. } => {}
            LiveMessage::Event(e) => {
                // An event its rules cannot write is left out (reported
                // when first read: `Told`).
                if let Some(json) = e.event.json() {
                    out.events.push(LiveEvent {
                        index: e.index,
                        text: e.event.text().to_string(),
                        event: serde_json::from_str(json.get()).unwrap_or_default(),
                    });
                }
                out.to_act.clone_from(&e.to_act);
                clock = e.move_ms.map(|ms| e.at_ms + ms);
            }
            LiveMessage::End { status, scores } => {
                out.status.clone_from(status);
                out.scores.clone_from(scores);
                out.to_act.clear();
            }
        }
    }
    // The latest view that can be written, read from the end: the others
    // are never written (a `View` is written when first read).
    out.view = history
        .iter()
        .rev()
        .find_map(|m| match &**m {
            LiveMessage::Event(e) => e.view.as_ref().and_then(|v| v.json()),
            _ => None,
        })
        .and_then(|v| serde_json::from_str(v.get()).ok());
    if out.status == "running" && !out.to_act.is_empty() {
        out.left_ms = clock.map(|due| due.saturating_sub(croupier_competition::human::unix_ms()));
    }
    Ok(out)
}

async fn page(State(state): State<Arc<Services>>, fmt: Fmt, Path(id): Path<String>) -> Response {
    let found = live_view(&state, &id);
    if fmt == Fmt::Html {
        if let (Err(WebError::NotFound(_)), Ok(n)) = (&found, id.parse::<i64>()) {
            // Over (or never live): the replay tells the rest.
            return Redirect::to(&format!("/games/{n}")).into_response();
        }
    }
    respond(fmt, found, |d| {
        let kind = d.game.parse::<GameKind>().ok();
        let mut names = d.seats.clone();
        if let Some(p) = d.person_seat.and_then(|p| names.get_mut(p)) {
            "a person".clone_into(p);
        }
        let names = Names(names);
        let over = (d.status != "running").then(|| Over {
            status: d.status.clone(),
            scores: d.scores.clone(),
        });
        let ctx = Ctx {
            names: &names,
            you: None,
            to_act: d.to_act.iter().map(|s| Seat(*s)).collect(),
            left_ms: d.left_ms,
            hands: Vec::new(),
            over: over.clone(),
            hand_below: false,
        };
        let drawn = match (kind, &d.view) {
            (Some(k), Some(v)) => table::render_json(k, v, &ctx),
            _ => None,
        };
        let id = d.id;
        let body = html! {
            @if over.is_none() {
                noscript { meta http-equiv="refresh" content="3"; }
            }
            section id="live" data-game=(id) data-stream={ "/v1/games/" (id) "/events?format=sse" } data-over=[over.as_ref().map(|o| o.status.as_str())] data-events=(d.events.len()) {
                h1 { (game_title(&d.game)) " · game " (id) " " small class="live-badge" { @if over.is_none() { "live" } @else { "over" } } }
                p id="live-status" {
                    @match &over {
                        Some(o) => {
                            "The game is over (" (o.status) "). "
                            a href={ "/games/" (id) } { "See the replay with every card" } "."
                        },
                        None => {
                            "In progress since " (time(&d.started)) ". Spectators see what every player sees: hands and sealed bids stay hidden until they are public. "
                            a href={ "/json/live/" (id) } { "As JSON" } "."
                        },
                    }
                }
                @match drawn {
                    Some(t) => (t),
                    None => p class="empty" { "The cards are being dealt…" },
                }
                details class="seen" open {
                    summary { "Public events (" (d.events.len()) ")" }
                    ol id="live-events" class="events" {
                        @for e in &d.events { li data-index=(e.index) { (event_html(kind, e, &names)) } }
                    }
                }
            }
            @if over.is_none() { script { (PreEscaped(SCRIPT)) } }
            (table::clock_script())
        };
        layout(
            &format!("{} game {id}, live", game_title(&d.game)),
            Some(&format!("/json/live/{id}")),
            body,
        )
    })
}
