//! The SkullWhist REST API of 2014: POST JSON to `/api/<method>/`, get HTTP
//! 200 and a JSON object whose `result` is `success`, `failure` (with a
//! `reason`) or `retry`. GET on the same URL returns its documentation.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use croupier_dialects::skullwhist_rest::{
    failure, failure_text, int_field, new_game_text, old_game_reply, retry_text, str_field,
    success, BadBody, Fields, FinishedGame, Obj, SUCCESS_TEXT,
};
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Game, Record};
use serde_json::{json, Value};

use crate::api_error::Api;
use crate::api_error::ApiError;
use crate::skullwhist_api_docs as docs;
use croupier_competition::services::Services;
use croupier_live::auth;
use croupier_live::hub::{NewGame, Refusal};

/// The API methods.
pub const METHODS: [&str; 8] = [
    "register", "login", "new-game", "bid", "status", "play", "old-game", "jsonp",
];

/// A reply: built JSON, or JSON text (a `status` reply as the game's
/// runner last wrote it for the seat, or a reply written straight from its
/// wire struct: see `croupier_dialects::skullwhist_rest::replies`).
#[derive(Debug, Clone)]
pub enum Answer {
    /// Built per request.
    Json(Value),
    /// Written JSON text (always UTF-8), sent without a copy.
    Text(Bytes),
}

/// An `Arc<str>` as the owner of a response body's bytes.
struct SharedText(Arc<str>);

impl AsRef<[u8]> for SharedText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl Answer {
    /// Text written before and shared (a seat's `status` reply).
    pub fn shared(text: Arc<str>) -> Answer {
        Answer::Text(Bytes::from_owner(SharedText(text)))
    }

    /// Text written for this reply.
    pub fn owned(text: String) -> Answer {
        Answer::Text(Bytes::from(text))
    }

    /// A constant reply.
    pub fn constant(text: &'static str) -> Answer {
        Answer::Text(Bytes::from_static(text.as_bytes()))
    }
}

impl From<Value> for Answer {
    fn from(v: Value) -> Self {
        Answer::Json(v)
    }
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::Json(v) => v.fmt(f),
            // Only ever built from `str`s (see the constructors).
            Answer::Text(t) => f.write_str(&String::from_utf8_lossy(t)),
        }
    }
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        match self {
            Answer::Json(v) => Json(v).into_response(),
            // Built whole: `Bytes`' own response writes a content type
            // that the JSON one would then replace.
            Answer::Text(t) => {
                let mut r = Response::new(axum::body::Body::from(t));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    header::HeaderValue::from_static("application/json"),
                );
                r
            }
        }
    }
}

/// Runs one API method on a parsed body; the reply as JSON.
pub async fn call(state: &Services, method: &str, body: &Fields<'_>) -> Value {
    match answer(state, method, body).await {
        Answer::Json(v) => v,
        Answer::Text(t) => serde_json::from_slice(&t).unwrap_or_else(|e| {
            tracing::error!("a written reply is not JSON: {e}");
            failure("internal error")
        }),
    }
}

/// Runs one API method on a parsed body; the reply as the handlers send it.
pub async fn answer(state: &Services, method: &str, body: &Fields<'_>) -> Answer {
    match dispatch(state, method, body).await {
        Ok(v) => v,
        Err(Refusal(reason)) => Answer::owned(failure_text(&reason)),
    }
}

/// The methods of a game in progress answer with text written straight
/// from typed replies; the others build JSON.
async fn dispatch(state: &Services, method: &str, body: &Fields<'_>) -> Result<Answer, Refusal> {
    match method {
        "status" => {
            let bot = state.hub.session(&str_field(body, "session")?).await?;
            Ok(Answer::shared(state.hub.status(bot).await?))
        }
        "bid" => {
            let bot = state.hub.session(&str_field(body, "session")?).await?;
            let bid = int_field(body, "bid")?;
            state.hub.bid(bot, bid).await?;
            Ok(Answer::constant(SUCCESS_TEXT))
        }
        "play" | "play-card" => {
            let bot = state.hub.session(&str_field(body, "session")?).await?;
            let card = str_field(body, "card")?;
            state.hub.play(bot, &card).await?;
            Ok(Answer::constant(SUCCESS_TEXT))
        }
        "new-game" => {
            let bot = state.hub.session(&str_field(body, "session")?).await?;
            // Issue 49: a banned bot gets no new game (one in progress
            // finishes).
            if state.admin.is_banned(bot).await.unwrap_or(false) {
                return Err(Refusal("this bot is banned: see its page".into()));
            }
            Ok(Answer::owned(match state.hub.new_game(bot).await? {
                NewGame::Retry => retry_text(),
                NewGame::Game {
                    game,
                    opponent,
                    cards,
                } => new_game_text(game, opponent, &cards),
            }))
        }
        _ => dispatch_json(state, method, body).await.map(Answer::Json),
    }
}

async fn dispatch_json(
    state: &Services,
    method: &str,
    body: &Fields<'_>,
) -> Result<Value, Refusal> {
    match method {
        "register" => register(state, body).await,
        "login" => login(state, body).await,
        "old-game" => {
            state.hub.session(&str_field(body, "session")?).await?;
            let id = int_field(body, "game")?;
            old_game(state, id).await
        }
        other => Err(Refusal(format!("unknown method '{other}'"))),
    }
}

fn obj(v: Value) -> Obj {
    match v {
        Value::Object(m) => m,
        _ => Obj::new(),
    }
}

async fn register(state: &Services, body: &Fields<'_>) -> Result<Value, Refusal> {
    let name = str_field(body, "name")?;
    let password = str_field(body, "password")?;
    if !auth::valid_name(&name) {
        return Err(Refusal(
            "a name is 1 to 32 characters of letters, digits, '-' and '_'".into(),
        ));
    }
    if !auth::valid_password(&password) {
        return Err(Refusal("a password is 1 to 255 characters".into()));
    }
    let pw = password.to_string();
    let hash = auth::hashing(move || auth::hash_password(&pw))
        .await
        .ok_or_else(|| Refusal("the server is busy: try again".into()))?
        .map_err(|_| Refusal("internal error".into()))?;
    match state.hub.store().create_bot(&name, &hash, false).await {
        Ok(id) => Ok(success(obj(json!({"id": id})))),
        Err(croupier_store::StoreError::NameTaken) => {
            Err(Refusal(format!("the name '{name}' is taken")))
        }
        Err(e) => {
            tracing::error!("register: {e}");
            Err(Refusal("internal error".into()))
        }
    }
}

async fn login(state: &Services, body: &Fields<'_>) -> Result<Value, Refusal> {
    let name = str_field(body, "name")?;
    let password = str_field(body, "password")?.into_owned();
    let row = state.hub.store().bot_by_name(&name).await.map_err(|e| {
        tracing::error!("login: {e}");
        Refusal("internal error".into())
    })?;
    let wrong = || Refusal("wrong name or password".into());
    // An unknown name costs a hash check too (constant time).
    let hash = row.as_ref().map(|r| r.password_hash.clone());
    let ok = auth::hashing(move || auth::verify_or_dummy(&password, hash.as_deref()))
        .await
        .unwrap_or(false);
    let row = row.ok_or_else(wrong)?;
    if !ok || row.house {
        return Err(wrong());
    }
    if let Ok(Some(ban)) = state.hub.store().admin().bot_ban(row.id).await {
        return Err(Refusal(format!("this bot is banned: {}", ban.reason)));
    }
    let token = auth::new_session().map_err(|_| Refusal("internal error".into()))?;
    state.hub.login(row.id, token.clone()).await?;
    Ok(success(obj(json!({"session": token, "id": row.id}))))
}

/// The finished game's record in the 2014 shape, with every trick.
async fn old_game(state: &Services, id: i64) -> Result<Value, Refusal> {
    let row = state.hub.store().game(id).await.map_err(|e| {
        tracing::error!("old-game: {e}");
        Refusal("internal error".into())
    })?;
    let row = row.ok_or_else(|| Refusal(format!("no game {id}")))?;
    if row.game != SkullWhist::NAME {
        return Err(Refusal(format!(
            "game {id} is a {} game of the ladder, not SkullWhist",
            row.game
        )));
    }
    match row.status.as_str() {
        "finished" => {}
        "aborted" => {
            return Err(Refusal(format!(
                "game {id} was aborted: {}",
                row.reason.unwrap_or_else(|| "no reason given".into())
            )))
        }
        _ => return Err(Refusal(format!("game {id} is not over"))),
    }
    let record: Record = row
        .record
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
        .ok_or_else(|| Refusal("internal error: the record is unreadable".into()))?;
    let game = record
        .verify::<SkullWhist>()
        .map_err(|e| Refusal(format!("internal error: {e}")))?;
    let finished = FinishedGame {
        id,
        bots: [row.bot1, row.bot2],
        scores: [row.score1, row.score2],
        started: Some(row.started),
        finished: row.finished,
        forfeited_by: row.forfeited_by,
    };
    old_game_reply(&finished, &game)
}

/// `POST /api/<method>/` as the router serves it: a path with `%` escapes
/// (the front answers every other call itself, [`post_whole`]).
pub async fn post(
    State(state): State<Arc<Services>>,
    Path(method): Path<String>,
    body: Bytes,
) -> Response {
    post_whole(&state, &method, &body, None).await
}

/// `POST /api/<method>/` with its body read whole. The body is parsed once:
/// by the throttle in front (`parsed`), or here when it did not.
pub async fn post_whole(
    state: &Services,
    method: &str,
    body: &[u8],
    parsed: Option<crate::throttle::Parsed<'_>>,
) -> Response {
    let method = method.trim_end_matches('/');
    let refuse = |e: ApiError| e.respond(Api::Rest2014);
    if !(METHODS.contains(&method) || method == "play-card") {
        return refuse(ApiError::NotFound(format!("unknown method '{method}'")));
    }
    if body.len() > crate::shape::MAX_BODY {
        return refuse(ApiError::TooLarge(format!(
            "the request body is larger than {} bytes",
            crate::shape::MAX_BODY
        )));
    }
    let parsed = parsed.unwrap_or_else(|| Fields::parse(body));
    match parsed {
        _ if body.iter().all(u8::is_ascii_whitespace) => refuse(ApiError::BadRequest(
            "empty request body: send a JSON object".into(),
        )),
        Err(BadBody::Json(e)) => refuse(ApiError::BadRequest(format!("bad JSON: {e}"))),
        Ok(fields) => answer(state, method, &fields).await.into_response(),
        Err(BadBody::NotAnObject) => refuse(ApiError::BadRequest(
            "the request body must be a JSON object".into(),
        )),
    }
}

/// `GET /api/<method>/`: the method's documentation.
pub async fn get(Path(method): Path<String>) -> Response {
    let method = method.trim_end_matches('/');
    match docs::page(method) {
        Some(html) => Html(html).into_response(),
        None => (StatusCode::NOT_FOUND, Html(docs::not_found(method))).into_response(),
    }
}

/// `GET /api/`: the index of the API documentation.
pub async fn index() -> Html<String> {
    Html(docs::index())
}

/// `GET /api/jsonp?callback=F&method=M&key=value...`.
pub async fn jsonp(
    State(state): State<Arc<Services>>,
    Query(params): Query<Vec<(String, String)>>,
) -> Response {
    let get = |k: &str| {
        params
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    if params.is_empty() {
        // A plain visit: the documentation, like every other method.
        return Html(docs::page("jsonp").unwrap_or_default()).into_response();
    }
    let callback = get("callback").unwrap_or_default();
    let valid_callback = !callback.is_empty()
        && callback.len() <= 64
        && callback
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'$');
    if !valid_callback {
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "text/plain")],
            "callback must be 1 to 64 characters of letters, digits, '_', '.' or '$'",
        )
            .into_response();
    }
    let method = get("method").unwrap_or_default();
    let reply = if [
        "register",
        "login",
        "new-game",
        "bid",
        "status",
        "play",
        "play-card",
    ]
    .contains(&method.as_str())
    {
        let body = Fields::of_strings(
            params
                .iter()
                .filter(|(k, _)| k != "callback" && k != "method")
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
        answer(&state, &method, &body).await
    } else {
        failure(format!(
            "jsonp cannot call '{method}' (register, login, new-game, bid, status, play)"
        ))
        .into()
    };
    (
        [(header::CONTENT_TYPE, "application/javascript")],
        format!("{callback}({reply});"),
    )
        .into_response()
}

/// `POST /api/jsonp/`: jsonp is for GET only.
pub async fn jsonp_post() -> Response {
    ApiError::NotFound(
        "unknown method 'jsonp' for POST: call GET /api/jsonp?callback=F&method=M&...".into(),
    )
    .respond(Api::Rest2014)
}
