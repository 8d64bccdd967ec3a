//! The tournament pages: `/tournaments` (the list) and `/tournaments/{name}`
//! (progress, standings with tie-breaks, the crosstable, every game with a
//! link to its replay), each with its JSON twin under `/json`.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use serde::Serialize;

use crate::html::{bot_link, esc, game_title, layout, url};
use crate::page::{respond, Fmt, WebError};
use croupier_competition::services::Services;
use croupier_competition::tournaments::view::{self, Brief, TournamentView};

/// The pages and their twins (merged into the website's routes).
pub fn routes() -> Router<Arc<Services>> {
    let mut r = Router::new();
    for prefix in ["", "/json"] {
        r = r
            .route(&format!("{prefix}/tournaments"), get(list))
            .route(&format!("{prefix}/tournaments/{{name}}"), get(show));
    }
    r
}

/// The tournaments list.
#[derive(Debug, Serialize)]
pub struct ListData {
    tournaments: Vec<Brief>,
}

async fn list_data(state: &Services) -> Result<ListData, WebError> {
    let store = state.hub.store();
    let mut tournaments = Vec::new();
    for t in store.tournaments().tournament_list().await? {
        tournaments.push(view::brief(store, t).await?);
    }
    Ok(ListData { tournaments })
}

fn when(unix: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// A table of tournaments (also on bot pages).
pub fn briefs_table(list: &[Brief]) -> String {
    if list.is_empty() {
        return "<p class=\"empty\">None yet.</p>".into();
    }
    let mut body = String::from(
        "<div class=\"scroll\"><table><thead><tr><th>Tournament</th><th>Game</th><th>Format</th>\
<th class=\"num\">Bots</th><th>Status</th><th class=\"num\">Games</th><th>Starts</th></tr></thead><tbody>",
    );
    for b in list {
        let t = &b.tournament;
        let _ = write!(
            body,
            "<tr><td class=\"name\"><a href=\"/tournaments/{}\">{}</a></td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
<td>{}</td><td class=\"num\">{} / {}</td><td>{}</td></tr>",
            url(&t.name),
            esc(&t.name),
            game_title(&t.game),
            esc(&t.format),
            b.entries,
            esc(&t.status),
            b.progress.done,
            b.progress.total,
            when(t.starts_at)
        );
    }
    body.push_str("</tbody></table></div>");
    body
}

async fn list(State(state): State<Arc<Services>>, fmt: Fmt) -> Response {
    respond(fmt, list_data(&state).await, |d| {
        let body = format!(
            "<h1>Tournaments</h1><p class=\"lead\">Round-robins and Swiss tournaments over the registered bots, \
announced by an organiser, frozen at the start and played beside the ladder. \
<a href=\"/docs/tournaments\">How they work</a>.</p>{}",
            briefs_table(&d.tournaments)
        );
        layout("Tournaments", Some("/json/tournaments"), &body)
    })
}

async fn show_data(state: &Services, name: &str) -> Result<TournamentView, WebError> {
    let store = state.hub.store();
    let t = store
        .tournaments()
        .tournament_by_name(name)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("There is no tournament '{name}'.")))?;
    Ok(view::view(store, t).await?)
}

/// Background of a crosstable cell: green when the row bot is significantly
/// better, red when significantly worse (ACPC's crosstable), plain else.
fn shade(significant: i8) -> &'static str {
    match significant {
        1 => " style=\"background:#cfe8d6\"",
        -1 => " style=\"background:#f3d0cc\"",
        _ => "",
    }
}

fn render(d: &TournamentView) -> String {
    let t = &d.tournament;
    let p = &d.progress;
    let mut body = format!(
        "<h1>{}</h1><p class=\"lead\">{} {} · {} · {}{} · {} ms per move{} · starts {}</p>\
<p><strong>{}</strong>: {} of {} games played{}, round {} of {}.</p>",
        esc(&t.name),
        game_title(&t.game),
        t.variant.as_deref().map(esc).unwrap_or_default(),
        esc(&t.format),
        if t.format == "swiss" {
            format!("{} rounds, ", t.rounds)
        } else {
            String::new()
        },
        format_args!(
            "{} deal{} per pairing{}",
            t.deals,
            if t.deals == 1 { "" } else { "s" },
            if t.duplicate { ", duplicate" } else { "" }
        ),
        t.move_ms,
        t.budget_ms
            .map(|b| format!(", {b} ms per game"))
            .unwrap_or_default(),
        when(t.starts_at),
        esc(&t.status),
        p.done,
        p.total,
        if p.running > 0 {
            format!(" ({} in progress)", p.running)
        } else {
            String::new()
        },
        p.current_round,
        p.rounds
    );
    if let Some(r) = &t.reason {
        let _ = write!(body, "<p class=\"empty\">{}</p>", esc(r));
    }
    let _ = write!(
        body,
        "<h2>Standings</h2><p>After round {}. Ties are broken by Buchholz, then the points among the tied bots, then the ladder rating, then the pairing number.</p>",
        d.standings_after_round
    );
    body.push_str(
        "<div class=\"scroll\"><table><thead><tr><th class=\"num\">#</th><th>Bot</th><th class=\"num\">Points</th>\
<th class=\"num\">Buchholz</th><th class=\"num\">Head-to-head</th><th class=\"num\">Rating</th><th class=\"num\">Byes</th>\
<th class=\"num\">Games</th><th class=\"num\">Faulty</th></tr></thead><tbody>",
    );
    for s in &d.standings {
        let _ = write!(
            body,
            "<tr><td class=\"num\">{}</td><td class=\"name\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
<td class=\"num\">{}</td><td class=\"num\">{:.1}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            s.rank,
            bot_link(&s.name),
            s.points,
            s.buchholz,
            s.head_to_head,
            s.rating,
            s.byes,
            s.games,
            s.faulty
        );
    }
    body.push_str("</tbody></table></div>");
    let withdrawn: Vec<_> = d.entries.iter().filter(|e| e.withdrawn.is_some()).collect();
    if !withdrawn.is_empty() {
        body.push_str("<h3>Withdrawn</h3><ul>");
        for e in withdrawn {
            let _ = write!(
                body,
                "<li>{}: {}</li>",
                bot_link(&e.name),
                esc(e.withdrawn.as_deref().unwrap_or_default())
            );
        }
        body.push_str("</ul>");
    }
    let hosted: Vec<String> = d
        .entries
        .iter()
        .filter_map(|e| {
            e.version
                .map(|v| format!("{} version {v}", bot_link(&e.name)))
        })
        .collect();
    if !hosted.is_empty() {
        let _ = write!(
            body,
            "<p>Hosted programs play the version that was active at the start: {}.</p>",
            hosted.join(", ")
        );
    }
    body.push_str(
        "<h2>Crosstable</h2><p>The row bot's mean score per game against the column bot (a win 1, a tie ½), \
with its 95% confidence interval; green: significantly better, red: significantly worse.</p>\
<div class=\"scroll\"><table class=\"crosstable\"><thead><tr><th></th>",
    );
    for b in &d.crosstable.bots {
        let _ = write!(body, "<th>{}</th>", bot_link(b));
    }
    body.push_str("</tr></thead><tbody>");
    for (b, row) in d.crosstable.bots.iter().zip(&d.crosstable.cells) {
        let _ = write!(body, "<tr><th>{}</th>", bot_link(b));
        for cell in row {
            match cell {
                None => body.push_str("<td></td>"),
                Some(c) => {
                    let _ = write!(
                        body,
                        "<td class=\"num\"{} title=\"{} games\">{:.2}<br><small>{:.2}–{:.2}</small></td>",
                        shade(c.significant),
                        c.games,
                        c.score,
                        c.low,
                        c.high
                    );
                }
            }
        }
        body.push_str("</tr>");
    }
    let _ = write!(
        body,
        "</tbody></table></div><h2>Games</h2><p><a href=\"/games?tournament={}\">Its finished games in the games list</a> \
(<a href=\"/games?tournaments=hide\">ladder games only</a>, <a href=\"/games?tournaments=only\">every tournament's games</a>).</p>",
        url(&t.name)
    );
    if d.games.is_empty() {
        body.push_str("<p class=\"empty\">None yet.</p>");
    } else {
        body.push_str(
            "<div class=\"scroll\"><table><thead><tr><th class=\"num\">Round</th><th class=\"num\">Table</th>\
<th class=\"num\">Game</th><th>Seats</th><th>Ranks</th><th>Status</th></tr></thead><tbody>",
        );
        for g in &d.games {
            let seats: Vec<String> = g.seats.iter().map(|s| bot_link(s)).collect();
            let ranks: Vec<String> = g.ranks.iter().map(i64::to_string).collect();
            let status = match g.id {
                Some(id) => format!("<a href=\"/games/{id}\">{}</a>", esc(&g.status)),
                None => esc(&g.status),
            };
            let _ = write!(
                body,
                "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                g.round,
                g.table + 1,
                g.game + 1,
                seats.join(" · "),
                ranks.join(" · "),
                status
            );
        }
        body.push_str("</tbody></table></div>");
    }
    layout(
        &t.name,
        Some(&format!("/json/tournaments/{}", url(&t.name))),
        &body,
    )
}

async fn show(State(state): State<Arc<Services>>, Path(name): Path<String>, fmt: Fmt) -> Response {
    respond(fmt, show_data(&state, &name).await, render)
}

/// The tournaments a bot is entered in (for its page).
pub async fn of_bot(
    store: &Arc<dyn croupier_store::Store>,
    bot: croupier_store::BotId,
) -> Result<Vec<Brief>, WebError> {
    let mut out = Vec::new();
    for t in store.tournaments().bot_tournaments(bot).await? {
        out.push(view::brief(store, t).await?);
    }
    Ok(out)
}

/// Whether a game's deal must stay secret although the game itself is
/// over: another game of its tournament plays the same deal and is not over
/// (duplicate deals). The one rule of `visibility`, fed every game sharing
/// the deal.
pub async fn deal_secret(
    store: &Arc<dyn croupier_store::Store>,
    game: i64,
) -> Result<bool, WebError> {
    Ok(store.tournaments().deal_pending(game).await?)
}
