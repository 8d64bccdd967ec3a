//! The versus page: two bots' results against each other, their score
//! margins, their results by seat and (SkullWhist) by who led first, and
//! both ratings over their shared games.

use std::collections::HashSet;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use croupier_store::web::{GameSummary, HistoryPoint, WebBot};
use serde::Serialize;

use crate::html::{bot_link, game_title, games_table, html, layout, versus_href, Markup};
use crate::page::{respond, Fmt, WebError};
use crate::profile::{split, Split, Tally};
use crate::stats::{find_bot, wlt, Pair};
use crate::svg;
use croupier_competition::services::Services;

/// Shared games the page reads.
const SHARED: i64 = 50;

/// Both bots' ratings after each of their shared games of one kind.
#[derive(Serialize)]
pub struct SharedHistory {
    game: String,
    a: Vec<HistoryPoint>,
    b: Vec<HistoryPoint>,
}

#[derive(Serialize)]
pub struct VersusData {
    a: WebBot,
    b: WebBot,
    results: Vec<Pair>,
    /// Over their last shared games, per game kind.
    splits: Vec<Split>,
    history: Vec<SharedHistory>,
    last_games: Vec<GameSummary>,
}

async fn versus_data(state: &Services, a: &str, b: &str) -> Result<VersusData, WebError> {
    let store = state.hub.store();
    let (a, b) = (find_bot(store, a).await?, find_bot(store, b).await?);
    if a.id == b.id {
        return Err(WebError::BadRequest(
            "A versus page needs two different bots.".into(),
        ));
    }
    let results: Vec<Pair> = store
        .pair(a.id, b.id)
        .await?
        .into_iter()
        .map(Pair::from)
        .collect();
    let last_games = if results.is_empty() {
        Vec::new()
    } else {
        store.versus_games(a.id, b.id, SHARED).await?
    };
    let mut history = Vec::new();
    for p in &results {
        let game = &p.stats.game;
        // Both ratings after each shared game of this kind: the points
        // of those games alone, not the bots' whole histories.
        let shared: Vec<i64> = last_games
            .iter()
            .filter(|g| &g.game == game)
            .map(|g| g.id)
            .collect();
        let ha = store.rating_points(a.id, &shared).await?;
        let hb = store.rating_points(b.id, &shared).await?;
        let in_a: HashSet<i64> = ha.iter().map(|p| p.game_id).collect();
        let hb: Vec<HistoryPoint> = hb
            .into_iter()
            .filter(|p| in_a.contains(&p.game_id))
            .collect();
        let in_b: HashSet<i64> = hb.iter().map(|p| p.game_id).collect();
        let ha: Vec<HistoryPoint> = ha
            .into_iter()
            .filter(|p| in_b.contains(&p.game_id))
            .collect();
        history.push(SharedHistory {
            game: game.clone(),
            a: ha,
            b: hb,
        });
    }
    Ok(VersusData {
        splits: split(store, a.id, b.id, &last_games).await?,
        a,
        b,
        results,
        history,
        last_games,
    })
}

fn tally_row(label: &str, t: &Tally) -> Markup {
    let score = if t.games > 0 {
        format!(
            "{:.0}%",
            100.0 * (t.wins as f64 + 0.5 * t.ties as f64) / t.games as f64
        )
    } else {
        "–".into()
    };
    html! {
        tr {
            th scope="row" { (label) }
            td class="num" { (t.games) }
            td class="num" { (wlt(t.wins, t.losses, t.ties)) }
            td class="num" { (score) }
        }
    }
}

/// A split table: `a`'s results in two rows.
fn split_table(heading: &str, a: &str, rows: [Markup; 2]) -> Markup {
    html! {
        h3 { (heading) }
        div class="scroll" { table class="split" {
            thead { tr {
                th { (a) "'s results" } th class="num" { "Games" } th class="num" { "W–L–T" } th class="num" { "Score" }
            } }
            tbody { @for r in rows { (r) } }
        } }
    }
}

fn split_html(d: &VersusData, s: &Split) -> Markup {
    let (a, b) = (d.a.name.as_str(), d.b.name.as_str());
    let n = s.a_first_seat.games + s.b_first_seat.games;
    let signed = |v: f64| {
        if v > 0.0 {
            format!("+{v:.1}")
        } else if v == 0.0 {
            "0".into()
        } else {
            format!("−{:.1}", -v)
        }
    };
    html! {
        h3 { "Score margins" }
        p class="hint" { (a) "'s score minus " (b) "'s, over their last " (n) " " (game_title(&s.game)) " games (forfeits left out)." }
        @match &s.margins {
            None => p class="empty" { "No scored games." },
            Some(m) => {
                div class="grid small" {
                    div class="panel" { div class="stat" { (signed(m.mean)) small { "mean margin" } } }
                    div class="panel" { div class="stat" { (signed(m.median)) small { "median margin" } } }
                    div class="panel" { div class="stat w" {
                        (m.best.map(|v| format!("+{v}")).unwrap_or_else(|| "–".into()))
                        small { (a) "'s biggest win" }
                    } }
                    div class="panel" { div class="stat l" {
                        (m.worst.map(|v| format!("−{}", -v)).unwrap_or_else(|| "–".into()))
                        small { (a) "'s biggest loss" }
                    } }
                }
                (svg::margin_strip(&m.all, &format!("score margins of {a} against {b}")))
            },
        }
        (split_table("By seat", a, [
            tally_row(&format!("{a} seated first"), &s.a_first_seat),
            tally_row(&format!("{b} seated first"), &s.b_first_seat),
        ]))
        @if let (Some(al), Some(bl)) = (&s.a_led_first, &s.b_led_first) {
            (split_table("By who led the first trick", a, [
                tally_row(&format!("{a} led first"), al),
                tally_row(&format!("{b} led first"), bl),
            ]))
        }
    }
}

pub async fn versus(
    State(state): State<Arc<Services>>,
    Path((a, b)): Path<(String, String)>,
    fmt: Fmt,
) -> Response {
    respond(fmt, versus_data(&state, &a, &b).await, |d| {
        let body = html! {
            h1 { (bot_link(&d.a.name)) " " span class="vs" { "vs" } " " (bot_link(&d.b.name)) }
            p class="lead" {
                "Head to head, from " (d.a.name) "'s side. "
                a href=(versus_href(&d.b.name, &d.a.name)) { "Swap sides" }
            }
            @if d.results.is_empty() {
                p class="empty" { "These bots have not played each other yet." }
            }
            @for p in &d.results {
                @let s = &p.stats;
                h2 { (game_title(&s.game)) }
                div class="grid stats" {
                    div class="panel" { div class="stat" { (s.games) small { "games together" } } }
                    div class="panel" { div class="stat" { (wlt(s.wins, s.losses, s.ties)) small { "wins–losses–ties of " (s.bot_name) } } }
                    div class="panel" { div class="stat" {
                        (format!("{:.1}%", 100.0 * p.score))
                        small { (format!("score, 95 % interval {:.1}–{:.1}%", 100.0 * p.low, 100.0 * p.high)) }
                    } }
                }
                @if let Some(sp) = d.splits.iter().find(|x| x.game == s.game) {
                    (split_html(d, sp))
                }
                @if let Some(h) = d.history.iter().find(|h| h.game == s.game) {
                    h3 { "Ratings over their shared games" }
                    (svg::pair_chart(&h.a, &h.b, &format!("ratings of {} and {}", d.a.name, d.b.name)))
                    div class="legend" {
                        span { i style={ "background:" (svg::PAIR_COLOURS[0]) } {} (d.a.name) " (μ)" }
                        span { i style={ "background:" (svg::PAIR_COLOURS[1]) } {} (d.b.name) " (μ)" }
                        span { "bands: μ ± σ" }
                    }
                }
            }
            h2 { "Their last " (SHARED) " games" }
            (games_table(&d.last_games))
        };
        let title = format!("{} vs {}", d.a.name, d.b.name);
        layout(
            &title,
            Some(&format!("/json{}", versus_href(&d.a.name, &d.b.name))),
            body,
        )
    })
}
