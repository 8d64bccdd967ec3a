//! Playing bots from the website (issue 16): `/play` chooses a game, its
//! variant, opponents and a seat; `/play/{id}` shows the person's own
//! observation, what their seat has seen happen, and the legal moves as
//! buttons. Plain forms and redirects (POST, then 303 to the page), so it
//! works without JavaScript (the page reloads itself while the bots
//! think); a small script listens to `/play/{id}/events` (Server-Sent
//! Events) and swaps the table in place when something happens.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, Extension, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Form, Router};
use croupier_rules::GameKind;
use croupier_store::{BotInfo, OwnerRow, StoreError};
use futures::stream;
use serde::Deserialize;

mod table;

use crate::events::client_ip;
use crate::html::{game_title, html, layout, url, Markup, PreEscaped};
use crate::page::{Fmt, WebError};
use croupier_competition::human::{
    guest_name, house_strategies, seat_range, NewGame, Opponent, StartError, Table,
};
use croupier_competition::services::Services;
use table::table_html;

/// The cookie that names a person's games.
pub const COOKIE: &str = "croupier_player";

/// The routes of the play pages.
pub fn routes() -> Router<Arc<Services>> {
    Router::new()
        .route("/play", get(form).post(start))
        .route("/play/{id}", get(page).post(act))
        .route("/play/{id}/events", get(updates))
}

/// The person's cookie, if the request has one.
fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, v)| *k == COOKIE && v.len() >= 16 && v.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|(_, v)| v.to_string())
}

fn page_error(status: StatusCode, title: &str, msg: &str) -> Response {
    let body = html! {
        section class="error" {
            h1 { (status.as_u16()) " · " (title) }
            p { (msg) }
            p { a href="/play" { "Play a bot" } " · " a href="/live" { "Live games" } }
        }
    };
    (status, Html(layout(title, None, body).into_string())).into_response()
}

#[derive(Debug, Deserialize)]
pub struct FormQuery {
    game: Option<String>,
    bot: Option<String>,
}

/// Bots of `game` that may be offered: those open to challenges, and `also`.
async fn offered(
    state: &Services,
    game: GameKind,
    also: Option<&str>,
) -> Result<Vec<BotInfo>, StoreError> {
    let store = state.hub.store();
    let open = store.challengeable_bots().await?;
    let bots = store.remote_bots().await?;
    Ok(bots
        .into_iter()
        .filter(|b| b.game == game.name())
        .filter(|b| open.contains(&b.id) || also == Some(b.name.as_str()))
        .collect())
}

/// The page of a store failure (logged; the person is told to try later).
fn store_failed(e: StoreError) -> Response {
    WebError::from(e).page(Fmt::Html)
}

fn options(game: GameKind, bots: &[BotInfo], chosen: Option<&str>, none: bool) -> Markup {
    html! {
        @if none { option value="" { "— nobody —" } }
        @for s in house_strategies(game) {
            option value={ "house:" (s) } { "house bot: " (s) }
        }
        @for b in bots {
            option value={ "bot:" (b.name) } selected[chosen == Some(b.name.as_str())] {
                (b.name) " (" (b.kind.name()) ")"
            }
        }
    }
}

async fn form(
    State(state): State<Arc<Services>>,
    Query(q): Query<FormQuery>,
    headers: HeaderMap,
) -> Response {
    let games: Vec<GameKind> = match q.game.as_deref().map(str::parse::<GameKind>) {
        Some(Ok(g)) => vec![g],
        Some(Err(_)) => {
            return page_error(
                StatusCode::BAD_REQUEST,
                "Bad request",
                "There is no such game.",
            )
        }
        None => GameKind::ALL.to_vec(),
    };
    let mine: Vec<Arc<Table>> = cookie(&headers)
        .map(|key| state.people.tables_of(&key))
        .unwrap_or_default();
    let mut offers = Vec::with_capacity(games.len());
    for game in games {
        match offered(&state, game, q.bot.as_deref()).await {
            Ok(bots) => offers.push((game, bots)),
            Err(e) => return store_failed(e),
        }
    }
    let body = html! {
        h1 { "Play a bot" }
        p class="lead" {
            "Choose a game, your opponents and your seat. You see only what your seat sees; you have 5 minutes for each move. \
    Games you play are stored with their replay. They rate you against the bots on each game's "
            a href="/leaderboard/goofspiel/people" { "people against bots" } " leaderboard, and never touch the bots' own ratings."
        }
        @if !mine.is_empty() {
            h2 { "Your games" }
            ul {
                @for t in &mine {
                    li {
                        a href={ "/play/" (t.id) } { (game_title(t.game.name())) " · game " (t.id) }
                        " (" (t.view().status) ")"
                    }
                }
            }
        }
        @for (game, bots) in &offers {
            @let seats = seat_range(*game);
            form class="panel play" method="post" action="/play" id={ "play-" (game.name()) } {
                h2 { (game_title(game.name())) }
                input type="hidden" name="game" value=(game.name());
                p { label { "Opponent " select name="opponent1" { (options(*game, bots, q.bot.as_deref(), false)) } } }
                @for i in 2..*seats.end() {
                    p { label { "Opponent " (i) " " select name={ "opponent" (i) } { (options(*game, bots, None, true)) } } }
                }
                p { label { "Your seat " select name="seat" {
                    option value="" { "at random" }
                    @for s in 0..*seats.end() { option value=(s) { "seat " (s) } }
                } } }
                p { label { "Variant " input name="variant" placeholder="default" size="24"; } }
                details {
                    summary { "Challenge your own bot" }
                    p { "Owners may play their own bot even if it is closed to challenges: give the owner's name and password." }
                    p {
                        label { "Owner " input name="owner" autocomplete="username"; } " "
                        label { "Password " input type="password" name="password" autocomplete="current-password"; }
                    }
                }
                p { button type="submit" { "Play " (game_title(game.name())) } }
            }
        }
        p {
            "Registered bots appear here when their owners allow challenges ("
            code { "PATCH /v1/bots/{name}" } " with " code { "{\"challenges\": true}" } "). See "
            a href="/docs/people" { "playing and watching" } "."
        }
    };
    Html(layout("Play a bot", None, body).into_string()).into_response()
}

#[derive(Debug, Deserialize)]
pub struct StartForm {
    game: Option<String>,
    variant: Option<String>,
    opponent1: Option<String>,
    opponent2: Option<String>,
    opponent3: Option<String>,
    seat: Option<String>,
    owner: Option<String>,
    password: Option<String>,
}

/// The owner `name` if `password` is theirs (`Ok(None)`: unknown owner or
/// wrong password); the page to answer when that cannot be checked now.
async fn owner_of(
    state: &Services,
    name: &str,
    password: &str,
) -> Result<Option<OwnerRow>, Response> {
    let row = state
        .hub
        .store()
        .owner_by_name(name)
        .await
        .map_err(store_failed)?;
    let hash = row.as_ref().map(|r| r.password_hash.clone());
    let password = password.to_string();
    let Some(ok) = croupier_live::auth::hashing(move || {
        croupier_live::auth::verify_or_dummy(&password, hash.as_deref())
    })
    .await
    else {
        return Err(page_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "Cannot start the game",
            "The server is busy checking passwords; try again in a moment.",
        ));
    };
    Ok(row.filter(|_| ok))
}

async fn start(
    State(state): State<Arc<Services>>,
    conn: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    Form(f): Form<StartForm>,
) -> Response {
    let bad = |m: &str| page_error(StatusCode::BAD_REQUEST, "Cannot start the game", m);
    let Some(Ok(game)) = f.game.as_deref().map(str::parse::<GameKind>) else {
        return bad("Choose a game: skullwhist, loveletter or goofspiel.");
    };
    let owner = match (f.owner.as_deref(), f.password.as_deref()) {
        (Some(o), Some(p)) if !o.trim().is_empty() => match owner_of(&state, o.trim(), p).await {
            Ok(Some(row)) => Some(row),
            Ok(None) => {
                return page_error(
                    StatusCode::UNAUTHORIZED,
                    "Cannot start the game",
                    "Unknown owner or wrong password.",
                )
            }
            Err(page) => return page,
        },
        _ => None,
    };
    let open = match state.hub.store().challengeable_bots().await {
        Ok(open) => open,
        Err(e) => return store_failed(e),
    };
    let remote = match state.hub.store().remote_bots().await {
        Ok(remote) => remote,
        Err(e) => return store_failed(e),
    };
    let mut opponents = Vec::new();
    for o in [&f.opponent1, &f.opponent2, &f.opponent3]
        .into_iter()
        .flatten()
        .filter(|o| !o.is_empty())
    {
        if let Some(s) = o.strip_prefix("house:") {
            opponents.push(Opponent::House(s.to_string()));
        } else if let Some(name) = o.strip_prefix("bot:") {
            let Some(b) = remote.iter().find(|b| b.name == name) else {
                return bad(&format!(
                    "There is no registered bot named '{}'.",
                    name.chars().take(40).collect::<String>()
                ));
            };
            let own = owner.as_ref().is_some_and(|r| b.owner == Some(r.id));
            if !own && !open.contains(&b.id) {
                return page_error(
                    StatusCode::FORBIDDEN,
                    "Cannot start the game",
                    &format!(
                        "{}'s owner does not allow challenges. Owners can play their own bot by giving their name and password.",
                        b.name
                    ),
                );
            }
            opponents.push(Opponent::Bot(Box::new(b.clone())));
        } else {
            return bad("An opponent is house:STRATEGY or bot:NAME.");
        }
    }
    let seat = match f.seat.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(s) => match s.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => return bad("The seat is a number."),
        },
    };
    let (key, new_cookie) = match cookie(&headers) {
        Some(k) => (k, false),
        None => match croupier_live::auth::new_session() {
            Ok(k) => (k, true),
            Err(_) => {
                return page_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Server error",
                    "No session.",
                )
            }
        },
    };
    let req = NewGame {
        game,
        variant: f.variant.filter(|v| !v.trim().is_empty()),
        opponents,
        seat,
        // An owner plays under their account's name; anyone else under a
        // name drawn from their cookie.
        player: owner.map_or_else(|| guest_name(&key), |o| o.name),
        key: key.clone(),
        client: client_ip(conn),
    };
    match state.people.start(req).await {
        Ok(id) => {
            let mut r = Redirect::to(&format!("/play/{id}")).into_response();
            if new_cookie {
                if let Ok(v) = HeaderValue::from_str(&format!(
                    "{COOKIE}={key}; Path=/; HttpOnly; SameSite=Lax; Max-Age=2592000"
                )) {
                    r.headers_mut().insert(header::SET_COOKIE, v);
                }
            }
            r
        }
        Err(StartError::Bad(m)) => bad(&m),
        Err(StartError::Busy(m)) => page_error(StatusCode::TOO_MANY_REQUESTS, "Not now", &m),
        Err(StartError::Store) => page_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Server error",
            "The game could not be stored; try again.",
        ),
    }
}

/// The person's table, if the request's cookie owns game `id`.
fn own_table(state: &Services, id: &str, headers: &HeaderMap) -> Result<Arc<Table>, Box<Response>> {
    let Ok(id) = id.parse::<i64>() else {
        return Err(Box::new(page_error(
            StatusCode::BAD_REQUEST,
            "Bad request",
            "A game id is a number.",
        )));
    };
    let Some(t) = state.people.table(id) else {
        return Err(Box::new(
            Redirect::to(&format!("/games/{id}")).into_response(),
        ));
    };
    if !cookie(headers).is_some_and(|k| t.belongs_to(&k)) {
        return Err(Box::new(page_error(
            StatusCode::FORBIDDEN,
            "Someone else's game",
            &format!("Game {id} is someone else's: you can watch it at /live/{id}."),
        )));
    }
    Ok(t)
}

/// The play page's script: listens for changes and swaps the table.
const SCRIPT: &str = r#"
(function () {
  if (!window.EventSource) return;
  var id = document.getElementById('table');
  var es = new EventSource(location.pathname + '/events');
  es.addEventListener('update', function (m) {
    var cur = document.getElementById('table');
    if (cur && cur.dataset.version === m.data) return;
    fetch(location.pathname, {credentials: 'same-origin'}).then(function (r) { return r.text(); }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, 'text/html');
      var next = doc.getElementById('table');
      var now = document.getElementById('table');
      if (next && now) { now.replaceWith(next); }
      if (next && next.dataset.status !== 'running') es.close();
    });
  });
  document.body.dataset.js = 'on';
})();
"#;

async fn page(
    State(state): State<Arc<Services>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let t = match own_table(&state, &id, &headers) {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let v = t.view();
    let body = html! {
        // Without JavaScript, the page reloads while others think.
        @if v.status == "running" && v.decision.is_none() {
            noscript { meta http-equiv="refresh" content="2"; }
        }
        (table_html(&t, &v))
        p { a href={ "/live/" (t.id) } { "The spectators' view" } " · " a href={ "/rules/" (t.game.name()) } { "Rules" } }
        script { (PreEscaped(SCRIPT)) }
        (crate::table::clock_script())
    };
    let mut r = Html(
        layout(
            &format!("{} game {}", game_title(t.game.name()), t.id),
            None,
            body,
        )
        .into_string(),
    )
    .into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[derive(Debug, Deserialize)]
pub struct MoveForm {
    decision: Option<String>,
    action: Option<String>,
}

async fn act(
    State(state): State<Arc<Services>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(f): Form<MoveForm>,
) -> Response {
    let t = match own_table(&state, &id, &headers) {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let back = Redirect::to(&format!("/play/{}", t.id)).into_response();
    let (Some(Ok(decision)), Some(action)) =
        (f.decision.as_deref().map(str::parse::<u64>), f.action)
    else {
        t.update(|v| v.notice = Some("Choose one of the moves.".into()));
        return back;
    };
    if let Err(e) = t.answer(decision, &action) {
        t.update(|v| v.notice = Some(e.to_string()));
    }
    back
}

/// `GET /play/{id}/events`: an `update` event (the view's version) every
/// time the person's view changes; ends when the game is over.
async fn updates(
    State(state): State<Arc<Services>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let t = match own_table(&state, &id, &headers) {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let rx = t.subscribe();
    // The first event is the version now: a change between the page and
    // this stream is not missed.
    let events = stream::unfold(
        (rx, t, false, true),
        |(mut rx, t, done, first)| async move {
            if done {
                return None;
            }
            let closed = if first {
                false
            } else {
                rx.changed().await.is_err()
            };
            let v = t.view();
            let over = closed || v.status != "running";
            let e = Event::default().event("update").data(v.version.to_string());
            Some((Ok::<Event, Infallible>(e), (rx, t, over, false)))
        },
    );
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// The bot page's invitation to play it (a link to `/play`).
pub fn challenge_html(name: &str, game: &str, open: bool) -> Markup {
    html! {
        p class="challenge" {
            a class="button" href={ "/play?game=" (url(game)) "&bot=" (url(name)) } { "Play " (name) " yourself" }
            " "
            @if open { "Its owner allows challenges." }
            @else { "Only its owner may challenge it (with the owner's name and password)." }
        }
    }
}
