//! The game page with its step-by-step replay (`?step=N`, no JavaScript).
//! The list of games is `games_list`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use croupier_rules::Record;
use croupier_store::web::GameSummary;
use serde::Serialize;

use crate::games_list::param;
use crate::html::Names;
use crate::html::{self, game_title, html, layout, seats_line, time, Markup};
use crate::page::{respond, Fmt, WebError};
use crate::replay::{replay, Replay};
use croupier_competition::services::Services;

#[derive(Serialize)]
pub struct GameData {
    game: GameSummary,
    /// Shown only once the deal is public (see [`croupier_live::visibility`]), as
    /// `croupier play --seed` takes it (unsigned), as a string of digits:
    /// JavaScript reads a number above 2^53 with digits lost.
    #[serde(serialize_with = "seed_text")]
    seed: Option<u64>,
    reason: Option<String>,
    record: Option<serde_json::Value>,
    replay: Option<Replay>,
    #[serde(skip)]
    step: usize,
}

async fn game_data(
    state: &Services,
    id: &str,
    q: &HashMap<String, String>,
) -> Result<GameData, WebError> {
    let missing = || WebError::NotFound(format!("There is no game '{id}'."));
    let id: i64 = id.parse().map_err(|_| missing())?;
    let store = state.hub.store();
    let summary = store.game_summary(id).await?.ok_or_else(missing)?;
    let row = store.game(id).await?.ok_or_else(missing)?;
    // Nothing derived from the deal is shown before its time.
    let public = croupier_live::visibility::game_is_public(&row.status)
        // Duplicate deals of a tournament (issue 15): every game sharing it.
        && !crate::tournaments::deal_secret(store, id).await?;
    let raw_record = row.record.as_deref().filter(|_| public);
    let record: Option<Record> = raw_record.and_then(|r| serde_json::from_str(r).ok());
    let step = match param(q, "step") {
        None => 0,
        Some(s) => s
            .parse::<usize>()
            .map_err(|_| WebError::BadRequest(format!("'{s}' is not a step number.")))?,
    };
    let names = Names(summary.seats.iter().map(|s| s.name.clone()).collect());
    let replay = record.as_ref().map(|r| replay(r, &names, step));
    if let Some(r) = &replay {
        if step > r.steps.len() {
            return Err(WebError::NotFound(format!(
                "Step {step} does not exist: the game has {} steps.",
                r.steps.len()
            )));
        }
    }
    Ok(GameData {
        game: summary,
        seed: public.then(|| html::seed(row.seed)),
        reason: row.reason,
        record: raw_record
            .and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok())
            .map(seed_as_text),
        replay,
        step,
    })
}

/// A seed as a string of digits (or `null`).
fn seed_text<S: serde::Serializer>(seed: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match seed {
        Some(v) => s.serialize_str(&v.to_string()),
        None => s.serialize_none(),
    }
}

/// A record for a JSON twin: its seed as a string of digits (a record read
/// back, by `croupier replay` say, takes either form).
fn seed_as_text(mut record: serde_json::Value) -> serde_json::Value {
    if let Some(n) = record.get("seed").and_then(serde_json::Value::as_u64) {
        record["seed"] = serde_json::Value::String(n.to_string());
    }
    record
}

fn game_html(d: &GameData) -> Markup {
    let g = &d.game;
    let id = g.id;
    let head = html! {
        h1 { (game_title(&g.game)) " game #" (id) }
        p class="lead" { (seats_line(&g.seats)) }
        p {
            (g.status) " · started " (time(&g.started)) " · "
            @if let Some(f) = &g.finished { "finished " (time(f)) }
            " · "
            @match d.seed {
                Some(seed) => { "seed " (seed) },
                None => "seed shown when the game is over",
            }
            " · " a href={ "/rules/" (g.game) } { "rules" }
        }
        @if let Some(r) = &d.reason { p class="empty" { (r) } }
    };
    let Some(replay) = &d.replay else {
        return html! {
            (head)
            @if g.status == "running" {
                p class="empty" { "No record yet: the replay appears when the game is over. " a href={ "/live/" (id) } { "Watch it live" } "." }
            } @else {
                p class="empty" { "This game has no record: it was " (g.status) " before it was played to its end." }
            }
        };
    };
    let n = replay.steps.len();
    // No fragment: the page opens at the top with the site's header, and
    // the step controls sit at the same place on every step.
    let step_href = |s: usize| format!("/games/{id}?step={s}");
    let nav = |ok: bool, s: usize, text: Markup, rel: &str| {
        html! {
            @if ok { a href=(step_href(s)) rel=(rel) { (text) } }
            @else { span class="off" { (text) } }
        }
    };
    let current = |index: usize| (index == d.step).then_some("current");
    html! {
        (head)
        @if let Some(e) = &replay.error {
            p class="tag fault" { "The record does not replay: " (e) }
        }
        h2 id="state" {
            @if d.step == 0 { "After the deal" } @else { "After step " (d.step) }
        }
        nav class="pager stepper" aria-label="steps" {
            (nav(d.step > 0, 0, html! { "« deal" }, "first"))
            (nav(d.step > 0, d.step.saturating_sub(1), html! { "‹ prev" span class="hide-phone" { "ious" } }, "prev"))
            span class="current" { span class="hide-phone" { "step " } (d.step) " of " (n) }
            (nav(d.step < n, d.step + 1, html! { "next ›" }, "next"))
            (nav(d.step < n, n, html! { "end »" }, "last"))
        }
        div class="state" { (replay.panel) }
        h2 { "Every step" }
        div class="scroll" { table class="steps" {
            thead { tr { th { "Step" } th { "Bot" } th { "Move" } th class="num" { "Time" } th { "What happened" } } }
            tbody {
                tr id="step-0" class=[current(0)] {
                    td { a href=(step_href(0)) { "deal" } }
                    td {} td {} td {}
                    td class="events" { @for e in &replay.deal_html { div { (e) } } }
                }
                @for s in &replay.steps {
                    tr id={ "step-" (s.index) } class=[current(s.index)] {
                        td { a href=(step_href(s.index)) { (s.index) } }
                        td {
                            span class="who" {
                                @match g.seats.get(s.seat.index()) {
                                    Some(x) => (x.name),
                                    None => { "seat " (s.seat) },
                                }
                            }
                        }
                        td { (s.action_html) }
                        td class="num" {
                            @match s.ms {
                                _ if s.builtin => span class="builtin" title="an in-process built-in strategy" { "built-in" },
                                Some(m) if s.polled => span class="polled" title="response time: this bot polls for its turn, so its polling delay is included" {
                                    (html::duration_ms(m)) "*"
                                },
                                Some(m) => (html::duration_ms(m)),
                                None => "–",
                            }
                            @if let (false, Some(c)) = (s.builtin, s.cpu_ms) {
                                br;
                                small class="muted" title="CPU time of the bot's processes, read from its cgroup" { "CPU " (html::duration_ms(c)) }
                            }
                        }
                        td class="events" {
                            @if let Some(f) = &s.fault {
                                div { span class="tag fault" { (f.kind) } " " (f.detail) }
                            }
                            @for e in &s.events_html { div { (e) } }
                        }
                    }
                }
            }
        } }
    }
}

pub async fn game(
    State(state): State<Arc<Services>>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    fmt: Fmt,
) -> Response {
    respond(fmt, game_data(&state, &id, &q).await, |d| {
        layout(
            &format!("{} #{}", game_title(&d.game.game), d.game.id),
            Some(&format!("/json/games/{}", d.game.id)),
            game_html(d),
        )
    })
}
