//! `/v1/tournaments`: organisers (owners with the organiser flag) create
//! tournaments; anyone reads them. JSON in and out; failures are
//! `{"error": "<reason>"}` with a 4xx/5xx status, as in the rest of `/v1`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{GameKind, SetupError};
use croupier_store::tournaments::{EntryRow, NewTournament};
use croupier_store::{BotKind, StoreError};
use serde::Deserialize;

use crate::api_error::ApiError;
use croupier_competition::services::Services;
use croupier_competition::tournaments::plan::Format;
use croupier_competition::tournaments::view;

/// The routes (merged into the `/v1` API).
pub fn routes() -> Router<Arc<Services>> {
    Router::new()
        .route("/v1/tournaments", get(list).post(create))
        .route("/v1/tournaments/{name}", get(show))
        .route("/v1/tournaments/{name}/cancel", post(cancel))
}

fn fail(status: StatusCode, why: impl Into<String>) -> Response {
    ApiError::from_status(status, why).into_response()
}

fn store_failed(e: StoreError) -> Response {
    ApiError::from(e).into_response()
}

/// A request the API refuses (400).
fn bad(why: impl Into<String>) -> ApiError {
    ApiError::BadRequest(why.into())
}

/// Entries: a list of bot names, or `"all"` (every active bot of the game).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Entries {
    All(String),
    Named(Vec<String>),
}

/// A start time: unix seconds or RFC 3339.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Start {
    Unix(i64),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateRequest {
    name: String,
    game: String,
    variant: Option<String>,
    #[serde(default = "round_robin")]
    format: String,
    rounds: Option<i64>,
    games_per_pairing: Option<i64>,
    #[serde(default = "yes")]
    duplicate: bool,
    seats: Option<i64>,
    move_time_ms: Option<i64>,
    budget_ms: Option<i64>,
    entries: Option<Entries>,
    start: Option<Start>,
}

fn round_robin() -> String {
    "round-robin".into()
}

fn yes() -> bool {
    true
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn check_variant(game: GameKind, variant: Option<&str>) -> Result<(), SetupError> {
    match game {
        GameKind::Goofspiel => parse_variant::<Goofspiel>(variant).map(|_| ()),
        GameKind::LoveLetter => parse_variant::<LoveLetter>(variant).map(|_| ()),
        GameKind::SkullWhist => parse_variant::<SkullWhist>(variant).map(|_| ()),
    }
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Checks a request; returns the tournament without its entries, and the
/// entries' names (`None`: every active bot).
fn check(r: CreateRequest) -> Result<(NewTournament, Option<Vec<String>>), ApiError> {
    if !valid_name(&r.name) {
        return Err(bad("name: 1-64 of [-_a-zA-Z0-9]"));
    }
    let game: GameKind = r
        .game
        .parse()
        .map_err(|_| bad(format!("game: unknown game '{}'", r.game)))?;
    let variant = r.variant.filter(|v| !v.trim().is_empty());
    check_variant(game, variant.as_deref()).map_err(|e| bad(format!("variant: {e}")))?;
    let format = Format::parse(&r.format).ok_or_else(|| {
        bad(format!(
            "format: '{}' is not round-robin or swiss",
            r.format
        ))
    })?;
    let rounds = match format {
        Format::Swiss => {
            let n = r
                .rounds
                .ok_or_else(|| bad("rounds: a Swiss needs its number of rounds"))?;
            if !(1..=64).contains(&n) {
                return Err(bad("rounds: 1 to 64"));
            }
            n
        }
        Format::RoundRobin => {
            if r.rounds.is_some() {
                return Err(bad(
                    "rounds: a round-robin has one round per opponent; use games_per_pairing",
                ));
            }
            0
        }
    };
    let deals = r.games_per_pairing.unwrap_or(1);
    if !(1..=1000).contains(&deals) {
        return Err(bad("games_per_pairing: 1 to 1000"));
    }
    let max_seats = if game == GameKind::LoveLetter { 4 } else { 2 };
    let seats = r.seats.unwrap_or(2);
    if !(2..=max_seats).contains(&seats) || (format == Format::RoundRobin && seats != 2) {
        return Err(bad(format!(
            "seats: 2{} (a round-robin is played in pairs)",
            if max_seats > 2 {
                " to 4 for a Love Letter Swiss"
            } else {
                ""
            }
        )));
    }
    let move_ms = r.move_time_ms.unwrap_or(5000);
    if !(1..=600_000).contains(&move_ms) {
        return Err(bad("move_time_ms: 1 to 600000"));
    }
    if let Some(b) = r.budget_ms {
        if !(1..=86_400_000).contains(&b) {
            return Err(bad("budget_ms: 1 to 86400000"));
        }
    }
    let starts_at = match r.start {
        None => unix_now(),
        Some(Start::Unix(t)) => t,
        Some(Start::Text(s)) => humantime::parse_rfc3339_weak(&s)
            .map_err(|e| bad(format!("start: '{s}': {e}")))?
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
    };
    let named = match r.entries {
        None => None,
        Some(Entries::All(s)) if s == "all" => None,
        Some(Entries::All(s)) => {
            return Err(bad(format!(
                "entries: a list of bot names or \"all\", not '{s}'"
            )))
        }
        Some(Entries::Named(list)) => {
            let mut seen = std::collections::HashSet::new();
            if let Some(dup) = list.iter().find(|n| !seen.insert(n.as_str())) {
                return Err(bad(format!("entries: '{dup}' is listed twice")));
            }
            if list.len() < 2 {
                return Err(bad("entries: at least two bots"));
            }
            if list.len() > 256 {
                return Err(bad("entries: at most 256 bots"));
            }
            Some(list)
        }
    };
    let seed = croupier_live::visibility::fresh_seed().map_err(|e| {
        tracing::error!("v1 tournaments: {e}");
        ApiError::Internal(e.to_string())
    })? as i64;
    Ok((
        NewTournament {
            name: r.name,
            game: game.name().into(),
            variant,
            format: format.name().into(),
            rounds,
            deals,
            duplicate: r.duplicate,
            seats,
            move_ms,
            budget_ms: r.budget_ms,
            starts_at,
            seed,
            all_bots: named.is_none(),
            created_by: None,
            entries: Vec::new(),
        },
        named,
    ))
}

/// The organiser making the request, or the failure to answer.
async fn organiser(
    state: &Services,
    headers: &HeaderMap,
    what: &str,
) -> Result<croupier_store::OwnerRow, Response> {
    let owner = crate::bot_api::owner(state, headers)
        .await
        .map_err(IntoResponse::into_response)?;
    let named = state
        .tournaments
        .as_ref()
        .is_some_and(|t| t.named_admin(&owner.name));
    match state
        .hub
        .store()
        .tournaments()
        .owner_is_admin(owner.id)
        .await
    {
        Ok(true) => Ok(owner),
        Ok(false) if named => Ok(owner),
        Ok(false) => Err(fail(
            StatusCode::FORBIDDEN,
            format!("only organisers may {what} tournaments (croupier serve --admin NAME)"),
        )),
        Err(e) => Err(store_failed(e)),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelRequest {
    reason: Option<String>,
}

/// `POST /v1/tournaments/{name}/cancel`: an organiser ends a scheduled or
/// running tournament. Games not yet started are never played (void);
/// games in progress finish and keep their result.
async fn cancel(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let owner = match organiser(&state, &headers, "cancel").await {
        Ok(o) => o,
        Err(r) => return r,
    };
    if bytes.len() > crate::shape::MAX_BODY {
        return fail(StatusCode::PAYLOAD_TOO_LARGE, "the body is too large");
    }
    let request: CancelRequest = if bytes.iter().all(u8::is_ascii_whitespace) {
        CancelRequest::default()
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(r) => r,
            Err(e) => return fail(StatusCode::BAD_REQUEST, format!("bad JSON body: {e}")),
        }
    };
    let reason = match request.reason.as_deref().map(str::trim) {
        Some(r) if r.chars().count() > 500 => {
            return fail(StatusCode::BAD_REQUEST, "reason: at most 500 characters")
        }
        Some(r) if !r.is_empty() => format!("cancelled by {}: {r}", owner.name),
        _ => format!("cancelled by {}", owner.name),
    };
    let store = state.hub.store();
    let t = match store.tournaments().tournament_by_name(&name).await {
        Ok(Some(t)) => t,
        Ok(None) => return fail(StatusCode::NOT_FOUND, format!("no tournament '{name}'")),
        Err(e) => return store_failed(e),
    };
    let now = croupier_arena::record::now_rfc3339();
    match store
        .tournaments()
        .end_tournament(t.id, "cancelled", &now, Some(&reason))
        .await
    {
        Ok(true) => tracing::info!("tournament {name} {reason}"),
        Ok(false) => {
            return fail(
                StatusCode::CONFLICT,
                format!("tournament '{name}' is already {}", t.status),
            )
        }
        Err(e) => return store_failed(e),
    }
    match store.tournaments().tournament(t.id).await {
        Ok(Some(row)) => match view::brief(store.as_ref(), row).await {
            Ok(b) => Json(b).into_response(),
            Err(e) => store_failed(e),
        },
        Ok(None) => fail(StatusCode::INTERNAL_SERVER_ERROR, "the tournament vanished"),
        Err(e) => store_failed(e),
    }
}

async fn create(State(state): State<Arc<Services>>, headers: HeaderMap, bytes: Bytes) -> Response {
    let owner = match organiser(&state, &headers, "create").await {
        Ok(o) => o,
        Err(r) => return r,
    };
    let store = state.hub.store();
    let Some(runner) = state.tournaments.as_ref() else {
        return fail(
            StatusCode::SERVICE_UNAVAILABLE,
            "this server runs no tournaments",
        );
    };
    if bytes.len() > crate::shape::MAX_BODY {
        return fail(StatusCode::PAYLOAD_TOO_LARGE, "the body is too large");
    }
    let request: CreateRequest = match serde_json::from_slice(&bytes) {
        Ok(r) => r,
        Err(e) => return fail(StatusCode::BAD_REQUEST, format!("bad JSON body: {e}")),
    };
    let (mut t, named) = match check(request) {
        Ok(x) => x,
        Err(e) => return e.into_response(),
    };
    t.created_by = Some(owner.id);
    let game: GameKind = match t.game.parse() {
        Ok(g) => g,
        Err(_) => return fail(StatusCode::BAD_REQUEST, "game: unknown"),
    };
    for (seq, name) in named.unwrap_or_default().iter().enumerate() {
        let info = match store.bot_by_name(name).await {
            Ok(Some(row)) => match store.bot_info(row.id).await {
                Ok(Some(info)) => info,
                Ok(None) => {
                    return fail(StatusCode::BAD_REQUEST, format!("entries: no bot '{name}'"))
                }
                Err(e) => return store_failed(e),
            },
            Ok(None) => return fail(StatusCode::BAD_REQUEST, format!("entries: no bot '{name}'")),
            Err(e) => return store_failed(e),
        };
        if info.game != t.game {
            return fail(
                StatusCode::BAD_REQUEST,
                format!("entries: '{name}' plays {}, not {}", info.game, t.game),
            );
        }
        let playable = match info.kind {
            BotKind::Push | BotKind::Pull => true,
            BotKind::House => runner.house_strategy(game, name).is_some(),
            // Hosted programs play the version active at the start.
            BotKind::Hosted => runner.hosted_on(),
            // REST clients are not seats of a runner.
            BotKind::Rest => false,
        };
        if !playable {
            return fail(
                StatusCode::BAD_REQUEST,
                format!("entries: '{name}' cannot play here (push, pull and hosted bots and this server's house bots can{})",
                    if runner.hosted_on() { "" } else { "; hosted bots are off on this server" }),
            );
        }
        t.entries
            .push(EntryRow::new(info.id, seq as i64, info.name, info.kind));
    }
    let id = match store.tournaments().create_tournament(&t).await {
        Ok(id) => id,
        Err(e) => return store_failed(e),
    };
    match store.tournaments().tournament(id).await {
        Ok(Some(row)) => match view::brief(store.as_ref(), row).await {
            Ok(b) => (StatusCode::CREATED, Json(b)).into_response(),
            Err(e) => store_failed(e),
        },
        Ok(None) => fail(StatusCode::INTERNAL_SERVER_ERROR, "the tournament vanished"),
        Err(e) => store_failed(e),
    }
}

/// A page of the tournament list, 25 a page, the last announced first
/// (`?page=N`, from 1): `{"tournaments": [...], "page", "pages", "total"}`.
async fn list(
    State(state): State<Arc<Services>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let page = match croupier_web::page::positive_param(&q, "page") {
        Ok(page) => page.unwrap_or(1),
        Err(shown) => {
            return bad(format!("'{shown}' is not a page number (1 or more)")).into_response()
        }
    };
    match croupier_competition::tournaments::list::list_page(
        state.hub.store().as_ref(),
        &state.kept,
        page,
    )
    .await
    {
        Ok(list) if list.past_the_end() => fail(StatusCode::NOT_FOUND, list.past_the_end_why()),
        Ok(list) => Json(list).into_response(),
        Err(e) => store_failed(e),
    }
}

async fn show(State(state): State<Arc<Services>>, Path(name): Path<String>) -> Response {
    let store = state.hub.store();
    match store.tournaments().tournament_by_name(&name).await {
        Ok(Some(t)) => match state.kept.view(store.as_ref(), t).await {
            Ok(v) => croupier_web::tournaments::json_twin(&v)
                .await
                .unwrap_or_else(|| {
                    fail(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "the tournament cannot be written as JSON",
                    )
                }),
            Err(e) => store_failed(e),
        },
        Ok(None) => fail(StatusCode::NOT_FOUND, format!("no tournament '{name}'")),
        Err(e) => store_failed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(extra: serde_json::Value) -> Result<CreateRequest, serde_json::Error> {
        let mut base = json!({"name": "cup", "game": "goofspiel"});
        if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        serde_json::from_value(base)
    }

    #[test]
    fn requests_are_checked_with_reasons() {
        let ok =
            check(request(json!({"format": "swiss", "rounds": 3, "entries": ["a", "b"]})).unwrap());
        let (t, named) = ok.unwrap();
        assert_eq!((t.format.as_str(), t.rounds, t.deals), ("swiss", 3, 1));
        assert_eq!(named, Some(vec!["a".to_string(), "b".to_string()]));
        let all = check(request(json!({"entries": "all"})).unwrap()).unwrap();
        assert!(all.0.all_bots && all.1.is_none());
        for (extra, needle) in [
            (json!({"format": "swiss"}), "rounds"),
            (json!({"format": "knockout"}), "format"),
            (json!({"rounds": 3}), "round-robin"),
            (json!({"game": "chess"}), "game"),
            (json!({"variant": "rounds=0"}), "variant"),
            (json!({"entries": ["a", "a"]}), "twice"),
            (json!({"entries": ["a"]}), "two"),
            (json!({"entries": "some"}), "all"),
            (json!({"move_time_ms": 0}), "move_time_ms"),
            (json!({"seats": 3}), "seats"),
            (json!({"name": "no spaces"}), "name"),
            (json!({"start": "tomorrow"}), "start"),
        ] {
            let e = check(request(extra.clone()).unwrap()).expect_err("refused");
            assert_eq!(e.status(), StatusCode::BAD_REQUEST, "{extra}: {e}");
            assert!(e.to_string().contains(needle), "{extra}: {e}");
        }
        assert!(request(json!({"colour": "red"})).is_err());
    }
}
