//! `/v1/admin` (issue 49 item 5): what owners with the admin flag (`croupier
//! serve --admin NAME`, the flag that also lets them organise tournaments)
//! may do: ban and unban bots and owners, reset a bot's rating, start a new
//! season, and read the bans, the seasons and the audit log. Credentials are
//! the owner's (HTTP Basic); a missing or wrong one is a 401, an owner
//! without the flag a 403. What each action means for the games is
//! `croupier_competition::admin`'s; docs/admin.md explains it all.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use croupier_competition::admin::{self, AdminError};
use croupier_competition::services::Services;
use croupier_store::admin::Target;
use croupier_store::OwnerRow;
use serde::Deserialize;
use serde_json::json;

use crate::api_error::ApiError;

type Reply = Result<Response, ApiError>;

/// The audit log's page size, unless `limit` says otherwise.
const AUDIT_PAGE: i64 = 100;
/// The largest page of the audit log.
const AUDIT_MAX: i64 = 1000;

/// The `/v1/admin` routes.
pub fn routes() -> Router<Arc<Services>> {
    Router::new()
        .route("/v1/admin/bots/{name}/ban", post(ban_bot))
        .route("/v1/admin/bots/{name}/unban", post(unban_bot))
        .route("/v1/admin/bots/{name}/reset-rating", post(reset_rating))
        .route("/v1/admin/owners/{name}/ban", post(ban_owner))
        .route("/v1/admin/owners/{name}/unban", post(unban_owner))
        .route("/v1/admin/bans", get(bans))
        .route("/v1/admin/seasons", get(seasons).post(new_season))
        .route("/v1/admin/audit", get(audit))
}

impl From<AdminError> for ApiError {
    fn from(e: AdminError) -> Self {
        match e {
            AdminError::Invalid(why) => ApiError::BadRequest(why),
            AdminError::NotFound(why) => ApiError::NotFound(why),
            AdminError::Conflict(why) => ApiError::Conflict(why),
            AdminError::Store(e) => ApiError::from(e),
        }
    }
}

/// The admin making the request: 401 without good owner credentials, 403
/// for an owner without the admin flag.
async fn admin(state: &Services, headers: &HeaderMap) -> Result<OwnerRow, ApiError> {
    let owner = crate::bot_api::owner(state, headers).await?;
    let named = state
        .tournaments
        .as_ref()
        .is_some_and(|t| t.named_admin(&owner.name));
    if named
        || state
            .hub
            .store()
            .tournaments()
            .owner_is_admin(owner.id)
            .await?
    {
        Ok(owner)
    } else {
        Err(ApiError::Rejected {
            status: StatusCode::FORBIDDEN,
            reason: format!(
                "owner '{}' is not an admin (an admin is named with croupier serve --admin NAME)",
                owner.name
            ),
        })
    }
}

/// A body: empty (every field absent) or a JSON object with only known fields.
fn body<T: Default + for<'de> Deserialize<'de>>(bytes: &Bytes) -> Result<T, ApiError> {
    if bytes.len() > crate::shape::MAX_BODY {
        return Err(ApiError::TooLarge(format!(
            "the body is over {} bytes",
            crate::shape::MAX_BODY
        )));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(bytes).map_err(|e| ApiError::BadRequest(format!("bad JSON body: {e}")))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Why {
    reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ForGame {
    game: Option<String>,
    reason: Option<String>,
}

async fn ban(state: &Services, headers: &HeaderMap, target: Target<'_>, bytes: &Bytes) -> Reply {
    let me = admin(state, headers).await?;
    let why: Why = body(bytes)?;
    state
        .admin
        .ban(target, &me.name, why.reason.as_deref())
        .await?;
    Ok(Json(json!({
        target.kind(): target.name(),
        "banned": true,
        "reason": why.reason.as_deref().map(str::trim),
    }))
    .into_response())
}

async fn unban(state: &Services, headers: &HeaderMap, target: Target<'_>, bytes: &Bytes) -> Reply {
    let me = admin(state, headers).await?;
    let why: Why = body(bytes)?;
    state
        .admin
        .unban(target, &me.name, why.reason.as_deref())
        .await?;
    Ok(Json(json!({ target.kind(): target.name(), "banned": false })).into_response())
}

/// `POST /v1/admin/bots/{name}/ban` `{"reason": "..."}`.
async fn ban_bot(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Reply {
    ban(&state, &headers, Target::Bot(&name), &bytes).await
}

/// `POST /v1/admin/bots/{name}/unban`.
async fn unban_bot(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Reply {
    unban(&state, &headers, Target::Bot(&name), &bytes).await
}

/// `POST /v1/admin/owners/{name}/ban` `{"reason": "..."}`.
async fn ban_owner(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Reply {
    ban(&state, &headers, Target::Owner(&name), &bytes).await
}

/// `POST /v1/admin/owners/{name}/unban`.
async fn unban_owner(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Reply {
    unban(&state, &headers, Target::Owner(&name), &bytes).await
}

/// `POST /v1/admin/bots/{name}/reset-rating` `{"game": "...", "reason": "..."}`.
async fn reset_rating(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Reply {
    let me = admin(&state, &headers).await?;
    let r: ForGame = body(&bytes)?;
    let game = r.game.as_deref().map(admin::game).transpose()?;
    let games = state
        .admin
        .reset_rating(&name, game, &me.name, r.reason.as_deref())
        .await?;
    let (mu, sigma) = croupier_store::ratings::START;
    Ok(Json(json!({ "bot": name, "games": games, "mu": mu, "sigma": sigma })).into_response())
}

/// `POST /v1/admin/seasons` `{"game": "...", "reason": "..."}`: a new
/// season of one game, or of every game without `game`.
async fn new_season(State(state): State<Arc<Services>>, headers: HeaderMap, bytes: Bytes) -> Reply {
    let me = admin(&state, &headers).await?;
    let r: ForGame = body(&bytes)?;
    let game = r.game.as_deref().map(admin::game).transpose()?;
    let started = state
        .admin
        .new_season(game, &me.name, r.reason.as_deref())
        .await?;
    Ok((StatusCode::CREATED, Json(json!({ "started": started }))).into_response())
}

/// `GET /v1/admin/seasons`: every game's seasons, oldest first.
async fn seasons(State(state): State<Arc<Services>>, headers: HeaderMap) -> Reply {
    admin(&state, &headers).await?;
    Ok(Json(json!({ "seasons": state.admin.seasons().await? })).into_response())
}

/// `GET /v1/admin/bans`: the bans in force.
async fn bans(State(state): State<Arc<Services>>, headers: HeaderMap) -> Reply {
    admin(&state, &headers).await?;
    Ok(Json(json!({ "bans": state.admin.bans().await? })).into_response())
}

/// A positive whole number from the query, or a clear 400.
fn positive(q: &HashMap<String, String>, key: &str) -> Result<Option<i64>, ApiError> {
    croupier_web::page::positive_param(q, key).map_err(|shown| {
        ApiError::BadRequest(format!("{key}: a whole number from 1 (got '{shown}')"))
    })
}

/// `GET /v1/admin/audit?before=ID&limit=N`: the audit log, newest first.
async fn audit(
    State(state): State<Arc<Services>>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Reply {
    admin(&state, &headers).await?;
    if let Some(k) = q.keys().find(|k| *k != "before" && *k != "limit") {
        return Err(ApiError::BadRequest(format!(
            "unknown parameter '{k}' (before, limit)"
        )));
    }
    let before = positive(&q, "before")?;
    let limit = positive(&q, "limit")?.unwrap_or(AUDIT_PAGE);
    if limit > AUDIT_MAX {
        return Err(ApiError::BadRequest(format!("limit: at most {AUDIT_MAX}")));
    }
    let entries = state.admin.audit(before, limit).await?;
    Ok(Json(json!({ "entries": entries })).into_response())
}
