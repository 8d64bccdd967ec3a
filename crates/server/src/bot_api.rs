//! The `/v1` API: owners register push and pull bots (HTTP Basic auth with
//! the owner's name and password), and pull bots fetch their messages and
//! answer decisions (bearer token). JSON in and out; every failure is a 4xx
//! or 5xx status with `{"error": "<reason>"}`. See `/openapi.json` and
//! `docs/protocol/croupier-http.md`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use croupier_arena::transport::http::HttpEndpoint;
use croupier_dialects::DialectKind;
use croupier_rules::GameKind;
use croupier_store::{BotInfo, BotKind, NewBot, OwnerRow};
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::Digest as _;

use crate::api_error::ApiError;
use croupier_competition::services::Services;
use croupier_live::auth;

/// The `/v1` failure: the server's one [`ApiError`] (kept under this name
/// for code written against it).
pub type V1Error = ApiError;

type V1 = Result<Response, ApiError>;

/// The `/v1` routes and `/openapi.json`.
pub fn routes() -> Router<Arc<Services>> {
    Router::new()
        .route("/openapi.json", get(openapi))
        .route("/v1/owners", post(create_owner))
        .route("/v1/bots", post(create_bot).get(list_bots))
        .route("/v1/bots/{name}", get(show_bot).patch(update_bot))
        .route("/v1/bots/{name}/token", post(new_token))
        .route("/v1/messages", get(messages))
        .route("/v1/answer", post(answer))
        .route("/v1/me", get(me))
}

async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        croupier_web::openapi::OPENAPI,
    )
        .into_response()
}

fn body<T: for<'de> Deserialize<'de>>(bytes: &Bytes) -> Result<T, ApiError> {
    if bytes.len() > crate::shape::MAX_BODY {
        return Err(ApiError::TooLarge(format!(
            "the body is over {} bytes",
            crate::shape::MAX_BODY
        )));
    }
    serde_json::from_slice(bytes).map_err(|e| ApiError::BadRequest(format!("bad JSON body: {e}")))
}

/// SHA-256 of a token, as stored.
pub fn token_hash(token: &str) -> String {
    hex::encode(sha2::Sha256::digest(token.as_bytes()))
}

fn fresh_token() -> Result<String, ApiError> {
    auth::new_session()
        .map(|t| format!("crp_{t}"))
        .map_err(|e| ApiError::Internal(e.to_string()))
}

/// The owner named by the request's Basic credentials.
pub(crate) async fn owner(state: &Services, headers: &HeaderMap) -> Result<OwnerRow, ApiError> {
    let unauthorized = |why: &str| ApiError::Unauthorized(why.into());
    let value = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| unauthorized("owner credentials required (HTTP Basic auth)"))?;
    let encoded = value
        .strip_prefix("Basic ")
        .ok_or_else(|| unauthorized("use HTTP Basic auth with the owner's name and password"))?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| unauthorized("malformed Basic credentials"))?;
    let (name, password) = decoded
        .split_once(':')
        .ok_or_else(|| unauthorized("malformed Basic credentials"))?;
    let row = state.hub.store().owner_by_name(name).await?;
    // An unknown owner costs a hash check too (constant time).
    let hash = row.as_ref().map(|r| r.password_hash.clone());
    let password = password.to_string();
    match auth::hashing(move || auth::verify_or_dummy(&password, hash.as_deref())).await {
        Some(true) => {
            let row = row.ok_or_else(|| unauthorized("unknown owner or wrong password"))?;
            // Issue 49: a banned owner's credentials open nothing.
            match state.hub.store().admin().owner_ban(row.id).await? {
                Some(why) => Err(ApiError::Rejected {
                    status: axum::http::StatusCode::FORBIDDEN,
                    reason: format!("owner '{}' is banned: {why}", row.name),
                }),
                None => Ok(row),
            }
        }
        Some(false) => Err(unauthorized("unknown owner or wrong password")),
        None => Err(ApiError::Busy("the server is busy; try again".into())),
    }
}

/// The pull bot named by the request's bearer token.
async fn pull_bot(state: &Services, headers: &HeaderMap) -> Result<BotInfo, ApiError> {
    let unauthorized = |why: &str| ApiError::BadToken(why.into());
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| unauthorized("a bot token is required (Authorization: Bearer TOKEN)"))?;
    state
        .hub
        .store()
        .bot_by_token(&token_hash(token.trim()))
        .await?
        .ok_or_else(|| unauthorized("unknown bot token"))
}

pub(crate) fn view(b: &BotInfo) -> Value {
    json!({
        "id": b.id,
        "name": b.name,
        "game": b.game,
        "kind": b.kind,
        "url": b.endpoint,
        "dialect": b.dialect,
        "auth_user": b.auth_user,
        "enabled": b.enabled,
        "strikes": b.strikes,
        "paused_until": b.paused_until,
        "pause_reason": b.pause_reason,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Credentials {
    name: String,
    password: String,
}

async fn create_owner(State(state): State<Arc<Services>>, bytes: Bytes) -> V1 {
    let c: Credentials = body(&bytes)?;
    if !auth::valid_name(&c.name) {
        return Err(ApiError::BadRequest(
            "the name must be 1 to 32 characters of [-_a-zA-Z0-9]".into(),
        ));
    }
    if !auth::valid_password(&c.password) {
        return Err(ApiError::BadRequest(
            "the password must be 1 to 255 characters".into(),
        ));
    }
    let password = c.password;
    let hash = auth::hashing(move || auth::hash_password(&password))
        .await
        .ok_or_else(|| ApiError::Busy("the server is busy".into()))?
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let id = state.hub.store().create_owner(&c.name, &hash).await?;
    Ok((StatusCode::CREATED, Json(json!({"id": id, "name": c.name}))).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BotRequest {
    name: String,
    game: String,
    kind: String,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    dialect: Option<String>,
    #[serde(default)]
    auth_user: Option<String>,
    #[serde(default)]
    auth_password: Option<String>,
}

/// Checks a registration and turns it into a new bot (and a pull token).
fn check_bot(r: BotRequest, owner: i64) -> Result<(NewBot, Option<String>), ApiError> {
    if !auth::valid_name(&r.name) {
        return Err(ApiError::BadRequest(
            "the name must be 1 to 32 characters of [-_a-zA-Z0-9]".into(),
        ));
    }
    let game: GameKind = r
        .game
        .parse()
        .map_err(|e| ApiError::BadRequest(format!("{e}")))?;
    let kind = match r.kind.as_str() {
        "push" => BotKind::Push,
        "pull" => BotKind::Pull,
        other => {
            return Err(ApiError::BadRequest(format!(
                "kind must be \"push\" (Croupier calls your server) or \"pull\" (your bot polls /v1/messages), not \"{other}\""
            )))
        }
    };
    let dialect = match r.dialect.as_deref() {
        None if kind == BotKind::Push => DialectKind::default_for_http(game),
        None => DialectKind::Croupier,
        Some(d) => d
            .parse()
            .map_err(|e| ApiError::BadRequest(format!("{e}")))?,
    };
    if !matches!(dialect, DialectKind::Croupier | DialectKind::Jujitsu) {
        return Err(ApiError::BadRequest(format!(
            "HTTP bots speak croupier or jujitsu, not {dialect}"
        )));
    }
    if !dialect.supports(game) {
        return Err(ApiError::BadRequest(format!(
            "the {dialect} dialect cannot play {game}"
        )));
    }
    for (field, value) in [
        ("auth_user", &r.auth_user),
        ("auth_password", &r.auth_password),
    ] {
        if value.as_ref().is_some_and(|v| v.chars().count() > 255) {
            return Err(ApiError::BadRequest(format!(
                "{field} is longer than 255 characters"
            )));
        }
    }
    if r.auth_user.as_deref().is_some_and(|u| u.contains(':')) {
        return Err(ApiError::BadRequest("auth_user cannot contain ':'".into()));
    }
    let mut bot = NewBot {
        name: r.name,
        game: game.name().to_string(),
        kind,
        owner,
        endpoint: None,
        dialect: dialect.name().to_string(),
        auth_user: None,
        auth_password: None,
        token_hash: None,
    };
    match kind {
        BotKind::Push => {
            let url = r.url.ok_or_else(|| {
                ApiError::BadRequest("a push bot needs the url Croupier calls".into())
            })?;
            let given = r
                .auth_user
                .map(|u| (u, r.auth_password.unwrap_or_default()));
            let endpoint = HttpEndpoint::parse(&url, given)
                .map_err(|e| ApiError::BadRequest(e.to_string()))?;
            bot.endpoint = Some(endpoint.url);
            if let Some((u, p)) = endpoint.auth {
                bot.auth_user = Some(u);
                bot.auth_password = Some(p);
            }
            Ok((bot, None))
        }
        // Only push and pull bots are registered here (`kind` above).
        BotKind::Pull | BotKind::Rest | BotKind::House | BotKind::Hosted => {
            if r.url.is_some() || r.auth_user.is_some() || r.auth_password.is_some() {
                return Err(ApiError::BadRequest(
                    "a pull bot has no url or credentials: it calls the server with its token"
                        .into(),
                ));
            }
            if dialect != DialectKind::Croupier {
                return Err(ApiError::BadRequest(
                    "pull bots speak the croupier dialect".into(),
                ));
            }
            let token = fresh_token()?;
            bot.token_hash = Some(token_hash(&token));
            Ok((bot, Some(token)))
        }
    }
}

async fn create_bot(State(state): State<Arc<Services>>, headers: HeaderMap, bytes: Bytes) -> V1 {
    let owner = owner(&state, &headers).await?;
    let request: BotRequest = body(&bytes)?;
    let (bot, token) = check_bot(request, owner.id)?;
    if let (Some(url), false) = (&bot.endpoint, state.allow_private_bot_urls) {
        // Refused before the bot exists, and before any connection to it:
        // the ladder would only ever find it unreachable.
        croupier_arena::addr_guard::check_url_resolving(url)
            .await
            .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    }
    let id = state.hub.store().create_remote_bot(&bot).await?;
    let info = state
        .hub
        .store()
        .bot_info(id)
        .await?
        .ok_or_else(|| ApiError::Internal("the bot vanished".into()))?;
    let mut v = view(&info);
    if let Some(t) = token {
        v["token"] = Value::String(t);
    }
    Ok((StatusCode::CREATED, Json(v)).into_response())
}

pub(crate) async fn owned(
    state: &Services,
    owner: &OwnerRow,
    name: &str,
) -> Result<BotInfo, ApiError> {
    let bots = state.hub.store().remote_bots().await?;
    bots.into_iter()
        .find(|b| b.name == name && b.owner == Some(owner.id))
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "you have no bot named '{}'",
                name.chars().take(40).collect::<String>()
            ))
        })
}

async fn list_bots(State(state): State<Arc<Services>>, headers: HeaderMap) -> V1 {
    let owner = owner(&state, &headers).await?;
    let bots: Vec<Value> = state
        .hub
        .store()
        .remote_bots()
        .await?
        .iter()
        .filter(|b| b.owner == Some(owner.id))
        .map(view)
        .collect();
    Ok(Json(json!({ "bots": bots })).into_response())
}

async fn show_bot(
    State(state): State<Arc<Services>>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> V1 {
    let owner = owner(&state, &headers).await?;
    let b = owned(&state, &owner, &name).await?;
    let mut v = view(&b);
    v["challenges"] = json!(challenges_open(&state, b.id).await?); // wf (issue 16)
    Ok(Json(v).into_response())
}

/// wf (issue 16): whether others may challenge bot `id`.
async fn challenges_open(state: &Services, id: croupier_store::BotId) -> Result<bool, V1Error> {
    Ok(state.hub.store().challengeable_bots().await?.contains(&id))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BotUpdate {
    enabled: Option<bool>,
    /// wf (issue 16): whether others may challenge the bot from the website.
    challenges: Option<bool>,
}

async fn update_bot(
    State(state): State<Arc<Services>>,
    headers: HeaderMap,
    Path(name): Path<String>,
    bytes: Bytes,
) -> V1 {
    let owner = owner(&state, &headers).await?;
    let b = owned(&state, &owner, &name).await?;
    let update: BotUpdate = body(&bytes)?;
    if update.enabled.is_none() && update.challenges.is_none() {
        return Err(ApiError::BadRequest(
            "give 'enabled' or 'challenges' (or both)".into(),
        ));
    }
    if let Some(enabled) = update.enabled {
        state.hub.store().set_bot_enabled(b.id, enabled).await?;
    }
    if let Some(allow) = update.challenges {
        state.hub.store().set_bot_challenges(b.id, allow).await?;
    }
    let b = owned(&state, &owner, &name).await?;
    let mut v = view(&b);
    v["challenges"] = json!(challenges_open(&state, b.id).await?); // wf (issue 16)
    Ok(Json(v).into_response())
}

async fn new_token(
    State(state): State<Arc<Services>>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> V1 {
    let owner = owner(&state, &headers).await?;
    let b = owned(&state, &owner, &name).await?;
    if b.kind != BotKind::Pull {
        return Err(ApiError::Conflict("only pull bots have tokens".into()));
    }
    let token = fresh_token()?;
    state
        .hub
        .store()
        .set_bot_token(b.id, &token_hash(&token))
        .await?;
    let mut v = view(&b);
    v["token"] = Value::String(token);
    Ok(Json(v).into_response())
}

fn number<T: std::str::FromStr>(
    query: &HashMap<String, String>,
    key: &str,
    default: T,
) -> Result<T, ApiError> {
    match query.get(key) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| ApiError::BadRequest(format!("{key} must be a non-negative integer"))),
    }
}

async fn messages(
    State(state): State<Arc<Services>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> V1 {
    let bot = pull_bot(&state, &headers).await?;
    let after: u64 = number(&query, "after", 0)?;
    let wait: u64 = number(&query, "wait", 25)?;
    if wait > 30 {
        return Err(ApiError::BadRequest("wait is at most 30 seconds".into()));
    }
    let mailbox = state.mailboxes.get(bot.id);
    let messages = mailbox.fetch(after, Duration::from_secs(wait)).await;
    Ok(Json(json!({ "messages": messages })).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    #[serde(rename = "match")]
    tag: String,
    decision: u64,
    action: String,
}

async fn answer(State(state): State<Arc<Services>>, headers: HeaderMap, bytes: Bytes) -> V1 {
    let bot = pull_bot(&state, &headers).await?;
    let a: Answer = body(&bytes)?;
    if a.action.len() > 1024 {
        return Err(ApiError::BadRequest(
            "the action is longer than 1024 bytes".into(),
        ));
    }
    let mailbox = state.mailboxes.get(bot.id);
    // Issue 13 (wg): relayed to the process playing the match if elsewhere.
    match mailbox.answer_anywhere(&a.tag, a.decision, &a.action).await {
        Ok(()) => Ok(Json(json!({ "ok": true })).into_response()),
        Err(e @ croupier_live::mailbox::AnswerError::NoMatch(_)) => {
            Err(ApiError::NotFound(e.to_string()))
        }
        Err(e) => Err(ApiError::Conflict(e.to_string())),
    }
}

async fn me(State(state): State<Arc<Services>>, headers: HeaderMap) -> V1 {
    let bot = pull_bot(&state, &headers).await?;
    let mut v = view(&bot);
    v["in_match"] = Value::Bool(state.ladder.as_ref().is_some_and(|l| l.is_busy(bot.id)));
    Ok(Json(v).into_response())
}
