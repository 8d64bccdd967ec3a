//! The HTTP side of hosted bots: `POST /v1/bots/{name}/versions` (the
//! program as the raw request body, read as it streams), the owner's lists
//! of versions and of per-game stderr (JSON), and the owner's HTML page
//! `/bots/{name}/versions` (HTTP Basic, like the API). Nothing here ever
//! sends a bot's files.

use std::path::{Component, Path as FsPath};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use croupier_dialects::DialectKind;
use croupier_rules::GameKind;
use croupier_store::hosted::{BotVersion, NewVersion};
use croupier_store::{BotInfo, BotKind, NewBot};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::api_error::ApiError;
use croupier_competition::hosted::files::{plain_name, FileError, Packing};
use croupier_competition::hosted::run::Runtime;
use croupier_competition::hosted::{Hosted, DIALECTS};
use croupier_competition::services::Services;
use croupier_web::html::{html, layout};

/// The routes of hosted bots.
pub fn routes() -> Router<Arc<Services>> {
    Router::new()
        .route("/v1/bots/{name}/versions", get(list).post(upload))
        .route("/v1/bots/{name}/stderr", get(stderr))
        .route("/bots/{name}/versions", get(page))
}

/// Whether `path` is an upload, whose body streams to the handler instead of
/// being read whole first (see `shape::whole_bodies`).
pub fn is_upload(method: &axum::http::Method, path: &str) -> bool {
    method == axum::http::Method::POST
        && path
            .strip_prefix("/v1/bots/")
            .and_then(|p| p.trim_end_matches('/').strip_suffix("/versions"))
            .is_some_and(|name| !name.is_empty() && !name.contains('/'))
}

type Answer = Result<Response, ApiError>;

fn hosted(state: &Services) -> Result<Arc<Hosted>, ApiError> {
    state.hosted.get().cloned().ok_or_else(|| {
        ApiError::from_status(
            StatusCode::SERVICE_UNAVAILABLE,
            "this server runs no hosted bots (start it with --bot-files)",
        )
    })
}

/// What an upload says about itself (query parameters).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UploadQuery {
    /// The uploaded file's name: `.tar.gz`, `.tgz` and `.zip` are unpacked.
    file: String,
    runtime: String,
    dialect: String,
    /// The file to run, inside an archive (default: the file itself).
    entry: Option<String>,
    /// The game, when the upload creates the bot.
    game: Option<String>,
}

fn bad(why: impl Into<String>) -> ApiError {
    ApiError::BadRequest(why.into())
}

fn file_error(e: FileError) -> ApiError {
    match e {
        FileError::TooLarge => ApiError::from_status(StatusCode::PAYLOAD_TOO_LARGE, e.to_string()),
        FileError::Io(io) => {
            tracing::error!("hosted bots: {io}");
            ApiError::from_status(StatusCode::INTERNAL_SERVER_ERROR, "cannot store the upload")
        }
        other => bad(other.to_string()),
    }
}

/// An entry path inside the bot's folder (no `..`, not absolute).
fn entry_path(entry: &str) -> Result<(), ApiError> {
    let p = FsPath::new(entry);
    let ok = !entry.is_empty()
        && entry.len() <= 1024
        && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok {
        Ok(())
    } else {
        Err(bad(format!(
            "entry {:?} must be a relative path inside the upload",
            entry.chars().take(80).collect::<String>()
        )))
    }
}

fn version_view(v: &BotVersion, active: Option<i64>, with_stderr: bool) -> Value {
    let mut out = json!({
        "version": v.version,
        "status": v.status,
        "active": active == Some(v.version),
        "reason": v.reason,
        "file": v.file_name,
        "sha256": v.file_hash,
        "runtime": v.runtime,
        "entry": v.entry,
        "dialect": v.dialect,
        "uploaded": v.created_at.parse::<i64>().ok().map(croupier_store::times::rfc3339),
    });
    if with_stderr {
        out["stderr"] = json!(v.stderr);
    }
    out
}

/// `POST /v1/bots/{name}/versions`: a new version of a hosted bot (made on
/// its first upload), validated in the background.
async fn upload(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    Query(q): Query<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> Answer {
    let owner = crate::bot_api::owner(&state, &headers).await?;
    let hosted = hosted(&state)?;
    let store = state.hub.store();
    plain_name(&q.file).map_err(|e| bad(e.to_string()))?;
    let runtime = Runtime::parse(&q.runtime).map_err(|e| bad(e.to_string()))?;
    let dialect: DialectKind = q.dialect.parse().map_err(|e| bad(format!("{e}")))?;
    if !DIALECTS.contains(&dialect) {
        return Err(bad(format!(
            "hosted bots speak {}, not {dialect}",
            DIALECTS.map(DialectKind::name).join(", ")
        )));
    }
    let packing = Packing::of(&q.file);
    let entry = match (packing, &q.entry) {
        (Packing::Single, None) => q.file.clone(),
        (Packing::Single, Some(e)) if *e == q.file => q.file.clone(),
        (Packing::Single, Some(_)) => {
            return Err(bad("a single-file upload runs that file: leave entry out"))
        }
        (_, None) => return Err(bad("an archive needs entry: the file to run inside it")),
        (_, Some(e)) => e.clone(),
    };
    entry_path(&entry)?;
    let existing = store
        .remote_bots()
        .await?
        .into_iter()
        .find(|b| b.name == name);
    let game: GameKind = match (&existing, &q.game) {
        (Some(b), _) if b.owner != Some(owner.id) => {
            return Err(ApiError::from_status(
                StatusCode::CONFLICT,
                "the name is taken by another owner's bot",
            ))
        }
        (Some(b), _) if b.kind != BotKind::Hosted => {
            return Err(ApiError::from_status(
                StatusCode::CONFLICT,
                format!("{name} is a {} bot, not a hosted one", b.kind.name()),
            ))
        }
        (Some(b), Some(g)) if *g != b.game => {
            return Err(bad(format!("{name} plays {}, not {g}", b.game)))
        }
        (Some(b), _) => b.game.parse().map_err(|e| bad(format!("{e}")))?,
        (None, None) => return Err(bad("the first upload of a bot names its game")),
        (None, Some(g)) => {
            if !croupier_live::auth::valid_name(&name) {
                return Err(bad("the name must be 1 to 32 characters of [-_a-zA-Z0-9]"));
            }
            if store.bot_by_name(&name).await?.is_some() {
                return Err(ApiError::from_status(
                    StatusCode::CONFLICT,
                    "the name is taken",
                ));
            }
            g.parse().map_err(|e| bad(format!("{e}")))?
        }
    };
    if !dialect.supports(game) {
        return Err(bad(format!("the {dialect} dialect cannot play {game}")));
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let received = match hosted
        .files()
        .receive(declared, body.into_data_stream())
        .await
    {
        Ok(r) => r,
        Err(e) => {
            let mut r = file_error(e).into_response();
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return Ok(r);
        }
    };
    let (hash, size) = (received.hash.clone(), received.size);
    let files = hosted.files().clone();
    let file_name = q.file.clone();
    let dir = tokio::task::spawn_blocking(move || files.store(received, &file_name))
        .await
        .map_err(|e| ApiError::from_status(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(file_error)?;
    let main = dir.join(&entry);
    if !std::fs::symlink_metadata(&main).is_ok_and(|m| m.is_file()) {
        return Err(bad(format!(
            "the upload has no file {:?} to run",
            entry.chars().take(80).collect::<String>()
        )));
    }
    let bot: BotInfo = match existing {
        Some(b) => b,
        None => {
            let id = store
                .create_remote_bot(&NewBot {
                    name: name.clone(),
                    game: game.name().to_string(),
                    kind: BotKind::Hosted,
                    owner: owner.id,
                    endpoint: None,
                    dialect: dialect.name().to_string(),
                    auth_user: None,
                    auth_password: None,
                    token_hash: None,
                })
                .await?;
            store.bot_info(id).await?.ok_or_else(|| {
                ApiError::from_status(StatusCode::INTERNAL_SERVER_ERROR, "bot vanished")
            })?
        }
    };
    let v = store
        .add_bot_version(&NewVersion {
            bot: bot.id,
            file_hash: hash,
            file_size: size as i64,
            file_name: q.file.clone(),
            runtime: runtime.name().to_string(),
            entry,
            dialect: dialect.name().to_string(),
        })
        .await?;
    let view = version_view(&v, hosted.active_version(bot.id), false);
    tokio::spawn(Arc::clone(&hosted).validate(bot.clone(), v));
    let mut out = json!({ "bot": bot.name, "game": bot.game });
    if let (Value::Object(o), Value::Object(v)) = (&mut out, view) {
        o.extend(v);
    }
    Ok((StatusCode::ACCEPTED, Json(out)).into_response())
}

/// The owner's hosted bot `name`.
async fn mine(state: &Services, headers: &HeaderMap, name: &str) -> Result<BotInfo, ApiError> {
    let owner = crate::bot_api::owner(state, headers).await?;
    let b = crate::bot_api::owned(state, &owner, name).await?;
    if b.kind != BotKind::Hosted {
        return Err(ApiError::from_status(
            StatusCode::CONFLICT,
            format!("{name} is a {} bot, not a hosted one", b.kind.name()),
        ));
    }
    Ok(b)
}

/// `GET /v1/bots/{name}/versions`: every version, newest first, with why it
/// failed and its validation stderr (owner only).
async fn list(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Answer {
    let b = mine(&state, &headers, &name).await?;
    let active = state.hosted.get().and_then(|h| h.active_version(b.id));
    let versions = state.hub.store().bot_versions(b.id).await?;
    let list: Vec<Value> = versions
        .iter()
        .map(|v| version_view(v, active, true))
        .collect();
    Ok(Json(json!({ "bot": b.name, "active": active, "versions": list })).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Limit {
    limit: Option<i64>,
}

/// `GET /v1/bots/{name}/stderr`: the bot's stderr in its recent ladder
/// games, newest first (owner only).
async fn stderr(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    Query(q): Query<Limit>,
    headers: HeaderMap,
) -> Answer {
    let b = mine(&state, &headers, &name).await?;
    let limit = q.limit.unwrap_or(20).clamp(1, 100);
    let games = state.hub.store().hosted_matches(b.id, limit).await?;
    Ok(Json(json!({ "bot": b.name, "games": games })).into_response())
}

/// `/bots/{name}/versions`: the owner's page of versions and stderr.
async fn page(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Answer {
    let b = mine(&state, &headers, &name).await?;
    let store = state.hub.store();
    let active = state.hosted.get().and_then(|h| h.active_version(b.id));
    let versions = store.bot_versions(b.id).await?;
    let games = store.hosted_matches(b.id, 20).await?;
    let body = html! {
        h1 { (b.name) " " span class="muted" { "versions" } }
        p {
            "Only you, its owner, see this page. The ladder plays the newest active version"
            @if let Some(v) = active { " (now version " (v) ")" }
            "."
        }
        table {
            thead { tr {
                th { "Version" } th { "Status" } th { "File" } th { "Runtime" } th { "Dialect" } th { "Why" }
            } }
            tbody {
                @for v in &versions {
                    tr {
                        td { (v.version) @if active == Some(v.version) { " (playing)" } }
                        td { (v.status) }
                        td { (v.file_name) " " span class="muted" { (&v.file_hash[..v.file_hash.len().min(12)]) } }
                        td { (v.runtime) }
                        td { (v.dialect) }
                        td { (v.reason.as_deref().unwrap_or("")) }
                    }
                }
            }
        }
        @for v in versions.iter().filter(|v| v.stderr.as_deref().is_some_and(|s| !s.is_empty())) {
            h2 { "Version " (v.version) " validation stderr" }
            pre { (v.stderr.as_deref().unwrap_or("")) }
        }
        h2 { "Recent ladder games" }
        @for g in &games {
            h3 { a href={ "/games/" (g.game_id) } { "Game " (g.game_id) } ", version " (g.version) }
            pre { @if g.stderr.is_empty() { "(no stderr)" } @else { (g.stderr) } }
        }
    };
    let html = layout(&format!("{} versions", b.name), None, body).into_string();
    let mut r = Html(html).into_response();
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    Ok(r)
}
