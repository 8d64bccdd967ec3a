//! The versus page: two bots' results against each other, their score
//! margins, their results by seat and (SkullWhist) by who led first, and
//! both ratings over their shared games.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use croupier_store::web::{GameSummary, HistoryPoint, WebBot};
use serde::Serialize;

use crate::html::{bot_link, esc, game_title, games_table, layout, versus_href};
use crate::page::{respond, Fmt, WebError};
use crate::profile::{split, Split, Tally};
use crate::stats::{find_bot, wlt, Pair, HISTORY};
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
        let shared: HashSet<i64> = last_games
            .iter()
            .filter(|g| &g.game == game)
            .map(|g| g.id)
            .collect();
        let ha = store.rating_history(a.id, game, HISTORY).await?;
        let hb = store.rating_history(b.id, game, HISTORY).await?;
        let both: HashSet<i64> = ha.iter().map(|p| p.game_id).collect();
        let keep = |p: &&HistoryPoint| shared.contains(&p.game_id);
        let hb: Vec<HistoryPoint> = hb
            .iter()
            .filter(keep)
            .filter(|p| both.contains(&p.game_id))
            .copied()
            .collect();
        let in_b: HashSet<i64> = hb.iter().map(|p| p.game_id).collect();
        let ha: Vec<HistoryPoint> = ha
            .iter()
            .filter(|p| in_b.contains(&p.game_id))
            .copied()
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

fn tally_row(label: &str, t: &Tally) -> String {
    let score = if t.games > 0 {
        format!(
            "{:.0}%",
            100.0 * (t.wins as f64 + 0.5 * t.ties as f64) / t.games as f64
        )
    } else {
        "–".into()
    };
    format!(
        "<tr><th scope=\"row\">{label}</th><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{score}</td></tr>",
        t.games,
        wlt(t.wins, t.losses, t.ties)
    )
}

fn split_html(d: &VersusData, s: &Split) -> String {
    let (a, b) = (esc(&d.a.name), esc(&d.b.name));
    let mut out = String::new();
    let n = s.a_first_seat.games + s.b_first_seat.games;
    let _ = write!(
        out,
        "<h3>Score margins</h3><p class=\"hint\">{a}'s score minus {b}'s, over their last {n} {} games \
(forfeits left out).</p>",
        game_title(&s.game)
    );
    match &s.margins {
        None => out.push_str("<p class=\"empty\">No scored games.</p>"),
        Some(m) => {
            let signed = |v: f64| {
                if v > 0.0 {
                    format!("+{v:.1}")
                } else if v == 0.0 {
                    "0".into()
                } else {
                    format!("−{:.1}", -v)
                }
            };
            let _ = write!(
                out,
                "<div class=\"grid small\"><div class=\"panel\"><div class=\"stat\">{}<small>mean margin</small></div></div>\
<div class=\"panel\"><div class=\"stat\">{}<small>median margin</small></div></div>\
<div class=\"panel\"><div class=\"stat w\">{}<small>{a}'s biggest win</small></div></div>\
<div class=\"panel\"><div class=\"stat l\">{}<small>{a}'s biggest loss</small></div></div></div>{}",
                signed(m.mean),
                signed(m.median),
                m.best.map(|v| format!("+{v}")).unwrap_or_else(|| "–".into()),
                m.worst
                    .map(|v| format!("−{}", -v))
                    .unwrap_or_else(|| "–".into()),
                svg::margin_strip(&m.all, &format!("score margins of {} against {}", d.a.name, d.b.name))
            );
        }
    }
    let _ = write!(
        out,
        "<h3>By seat</h3><div class=\"scroll\"><table class=\"split\"><thead><tr><th>{a}'s results</th>\
<th class=\"num\">Games</th><th class=\"num\">W–L–T</th><th class=\"num\">Score</th></tr></thead><tbody>{}{}</tbody></table></div>",
        tally_row(&format!("{a} seated first"), &s.a_first_seat),
        tally_row(&format!("{b} seated first"), &s.b_first_seat),
    );
    if let (Some(al), Some(bl)) = (&s.a_led_first, &s.b_led_first) {
        let _ = write!(
            out,
            "<h3>By who led the first trick</h3><div class=\"scroll\"><table class=\"split\"><thead><tr><th>{a}'s results</th>\
<th class=\"num\">Games</th><th class=\"num\">W–L–T</th><th class=\"num\">Score</th></tr></thead><tbody>{}{}</tbody></table></div>",
            tally_row(&format!("{a} led first"), al),
            tally_row(&format!("{b} led first"), bl),
        );
    }
    out
}

pub async fn versus(
    State(state): State<Arc<Services>>,
    Path((a, b)): Path<(String, String)>,
    fmt: Fmt,
) -> Response {
    respond(fmt, versus_data(&state, &a, &b).await, |d| {
        let mut body = format!(
            "<h1>{} <span class=\"vs\">vs</span> {}</h1><p class=\"lead\">Head to head, from {}'s side. \
<a href=\"{}\">Swap sides</a></p>",
            bot_link(&d.a.name),
            bot_link(&d.b.name),
            esc(&d.a.name),
            versus_href(&d.b.name, &d.a.name)
        );
        if d.results.is_empty() {
            body.push_str("<p class=\"empty\">These bots have not played each other yet.</p>");
        }
        for p in &d.results {
            let s = &p.stats;
            let _ = write!(
                body,
                "<h2>{}</h2><div class=\"grid\"><div class=\"panel\"><div class=\"stat\">{}<small>games together</small></div></div>\
<div class=\"panel\"><div class=\"stat\">{}<small>wins–losses–ties of {}</small></div></div>\
<div class=\"panel\"><div class=\"stat\">{:.1}%<small>score, 95 % interval {:.1}–{:.1}%</small></div></div></div>",
                game_title(&s.game),
                s.games,
                wlt(s.wins, s.losses, s.ties),
                esc(&s.bot_name),
                100.0 * p.score,
                100.0 * p.low,
                100.0 * p.high
            );
            if let Some(sp) = d.splits.iter().find(|x| x.game == s.game) {
                body.push_str(&split_html(d, sp));
            }
            if let Some(h) = d.history.iter().find(|h| h.game == s.game) {
                let _ = write!(
                    body,
                    "<h3>Ratings over their shared games</h3>{}\
<div class=\"legend\"><span><i style=\"background:{}\"></i>{} (μ)</span><span><i style=\"background:{}\"></i>{} (μ)</span>\
<span>bands: μ ± σ</span></div>",
                    svg::pair_chart(&h.a, &h.b, &format!("ratings of {} and {}", d.a.name, d.b.name)),
                    svg::PAIR_COLOURS[0],
                    esc(&d.a.name),
                    svg::PAIR_COLOURS[1],
                    esc(&d.b.name),
                );
            }
        }
        let _ = write!(body, "<h2>Their last {SHARED} games</h2>");
        body.push_str(&games_table(&d.last_games));
        let title = format!("{} vs {}", d.a.name, d.b.name);
        layout(
            &title,
            Some(&format!("/json{}", versus_href(&d.a.name, &d.b.name))),
            &body,
        )
    })
}
