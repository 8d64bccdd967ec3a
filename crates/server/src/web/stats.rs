//! Leaderboards (with the head-to-head matrix), bot pages and versus pages.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use croupier_rules::GameKind;
use croupier_store::ratings::wilson;
use croupier_store::web::{BotStats, GameFilter, GameSummary, HistoryPoint, PairStats, WebBot};
use croupier_store::{BotKind, Store};
use serde::Serialize;

use super::html::{bot_link, esc, game_title, games_table, layout, pct, time, url, versus_href};
use super::{respond, svg, Fmt, WebError};
use crate::AppState;

/// Rating points shown on a bot's chart.
const HISTORY: i64 = 500;
/// Bots in the head-to-head matrix (the top of the leaderboard).
const MATRIX: usize = 12;

/// A pair's results with its score and 95 % confidence interval.
#[derive(Debug, Serialize)]
pub struct Pair {
    #[serde(flatten)]
    stats: PairStats,
    /// (wins + ties / 2) / games.
    score: f64,
    /// Wilson interval of the score.
    low: f64,
    high: f64,
}

impl From<PairStats> for Pair {
    fn from(stats: PairStats) -> Pair {
        let points = stats.wins as f64 + 0.5 * stats.ties as f64;
        let n = stats.games as f64;
        let (low, high) = wilson(points, n).unwrap_or((0.0, 1.0));
        Pair {
            score: if n > 0.0 { points / n } else { 0.0 },
            low,
            high,
            stats,
        }
    }
}

fn parse_game(game: &str) -> Result<GameKind, WebError> {
    game.parse::<GameKind>()
        .map_err(|_| WebError::NotFound(format!("There is no game '{game}'.")))
}

async fn find_bot(store: &Arc<dyn Store>, name: &str) -> Result<WebBot, WebError> {
    store
        .web_bot(name)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("There is no bot named '{name}'.")))
}

fn rating(b: &BotStats) -> String {
    format!(
        "<span class=\"rating\">{:.1} <small>± {:.1}</small></span>",
        b.mu, b.sigma
    )
}

fn wlt(w: i64, l: i64, t: i64) -> String {
    format!(
        "<span class=\"w\">{w}</span>–<span class=\"l\">{l}</span>–<span class=\"t\">{t}</span>"
    )
}

/// Games on a leaderboard row's sparkline.
const TREND: i64 = 30;
/// A bot that finished a game this recently is marked active.
const ACTIVE_SECS: u64 = 24 * 3600;

/// A leaderboard row: the bot's stats, whether it is active and its recent
/// rating trend.
#[derive(Serialize)]
pub struct LeaderRow {
    #[serde(flatten)]
    stats: BotStats,
    /// It finished a game in the last 24 hours.
    active: bool,
    /// Its rating over its last games (oldest first).
    trend: Vec<HistoryPoint>,
}

#[derive(Serialize)]
pub struct LeaderboardData {
    game: &'static str,
    bots: Vec<LeaderRow>,
    head_to_head: Vec<Pair>,
}

async fn leaderboard_data(state: &AppState, game: &str) -> Result<LeaderboardData, WebError> {
    let kind = parse_game(game)?;
    let store = state.hub.store();
    let since = super::rfc3339_ago(ACTIVE_SECS);
    let mut bots = Vec::new();
    for stats in store.leaderboard(kind.name()).await? {
        let trend = store.rating_history(stats.bot, kind.name(), TREND).await?;
        let active = stats
            .last_played
            .as_deref()
            .is_some_and(|t| t >= since.as_str());
        bots.push(LeaderRow {
            stats,
            active,
            trend,
        });
    }
    Ok(LeaderboardData {
        game: kind.name(),
        bots,
        head_to_head: store
            .pairs(kind.name())
            .await?
            .into_iter()
            .map(Pair::from)
            .collect(),
    })
}

fn matrix(bots: &[BotStats], pairs: &[Pair]) -> String {
    let top = &bots[..bots.len().min(MATRIX)];
    let mut out =
        String::from("<div class=\"scroll\"><table class=\"matrix\"><thead><tr><th></th>");
    for b in top {
        let _ = write!(out, "<th>{}</th>", bot_link(&b.name));
    }
    out.push_str("</tr></thead><tbody>");
    for a in top {
        let _ = write!(out, "<tr><th>{}</th>", bot_link(&a.name));
        for b in top {
            if a.bot == b.bot {
                out.push_str("<td class=\"self\">·</td>");
                continue;
            }
            match pairs
                .iter()
                .find(|p| p.stats.bot == a.bot && p.stats.opponent == b.bot)
            {
                Some(p) => {
                    let hue = (p.score * 120.0).round();
                    let _ = write!(
                        out,
                        "<td style=\"background:hsl({hue} 60% 92%)\"><a href=\"{}\" title=\"{} games\">{:.0}%<small>{:.0}–{:.0}%</small></a></td>",
                        versus_href(&a.name, &b.name),
                        p.stats.games,
                        100.0 * p.score,
                        100.0 * p.low,
                        100.0 * p.high
                    );
                }
                None => out.push_str("<td>–</td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    out
}

pub async fn leaderboard(
    State(state): State<Arc<AppState>>,
    Path(game): Path<String>,
    fmt: Fmt,
) -> Response {
    respond(fmt, leaderboard_data(&state, &game).await, |d| {
        let title = game_title(d.game);
        let mut body = format!(
            "<h1>{title} leaderboard</h1><p class=\"lead\">Ordered by μ − 3σ: μ is a bot's estimated skill, \
σ how unsure that estimate still is, so μ − 3σ is a skill it almost surely has (it rises as a bot plays \
and wins). <a href=\"/docs/ladder#ratings\">How ratings work</a> · <a href=\"/rules/{g}\">Rules</a> · \
<a href=\"/games?game={g}\">Games</a></p>",
            g = d.game
        );
        if d.bots.is_empty() {
            body.push_str("<p class=\"empty\">No rated bots yet.</p>");
        } else {
            body.push_str("<div class=\"scroll\"><table><thead><tr><th class=\"num\">#</th><th>Bot</th>\
<th class=\"num\">Rating</th><th class=\"num\">μ − 3σ</th><th class=\"num\">Games</th><th class=\"num\">W–L–T</th>\
<th class=\"num\">Won</th><th class=\"num hide-narrow\">Forfeits</th><th class=\"hide-narrow\">Trend</th>\
<th class=\"hide-narrow\">Last played</th></tr></thead><tbody>");
            for (i, row) in d.bots.iter().enumerate() {
                let b = &row.stats;
                let active = if row.active {
                    " <span class=\"tag live\" title=\"finished a game in the last 24 hours\">active</span>"
                } else {
                    ""
                };
                let _ = write!(
                    body,
                    "<tr><td class=\"num\">{}</td><td class=\"name\">{}{active}</td><td class=\"num\">{}</td><td class=\"num\">{:.1}</td>\
<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num hide-narrow\">{}</td>\
<td class=\"hide-narrow\">{}</td><td class=\"when hide-narrow\">{}</td></tr>",
                    i + 1,
                    bot_link(&b.name),
                    rating(b),
                    b.conservative,
                    b.games,
                    wlt(b.wins, b.losses, b.ties),
                    pct(b.wins, b.games),
                    b.forfeits,
                    svg::sparkline(&row.trend),
                    b.last_played.as_deref().map(time).unwrap_or_default(),
                );
            }
            body.push_str("</tbody></table></div>");
            body.push_str(
                "<h2>Head to head</h2><p>Score of the row bot against the column bot \
((wins + ½ ties) / games) with its 95 % confidence interval. Open a cell for the versus page.</p>",
            );
            let stats: Vec<BotStats> = d.bots.iter().map(|r| r.stats.clone()).collect();
            body.push_str(&matrix(&stats, &d.head_to_head));
        }
        layout(
            &format!("{title} leaderboard"),
            Some(&format!("/json/leaderboard/{}", d.game)),
            &body,
        )
    })
}

#[derive(Serialize)]
pub struct RatedGame {
    #[serde(flatten)]
    stats: BotStats,
    history: Vec<HistoryPoint>,
}

/// How a push or pull bot fares on the ladder.
#[derive(Serialize)]
pub struct Health {
    enabled: bool,
    strikes: i64,
    paused_until: Option<i64>,
    pause_reason: Option<String>,
    in_match: bool,
}

#[derive(Serialize)]
pub struct BotData {
    bot: WebBot,
    /// Push and pull bots only.
    health: Option<Health>,
    ratings: Vec<RatedGame>,
    opponents: Vec<Pair>,
    last_games: Vec<GameSummary>,
}

async fn bot_data(state: &AppState, name: &str) -> Result<BotData, WebError> {
    let store = state.hub.store();
    let bot = find_bot(store, name).await?;
    let mut ratings = Vec::new();
    for stats in store.bot_stats(bot.id).await? {
        let history = store.rating_history(bot.id, &stats.game, HISTORY).await?;
        ratings.push(RatedGame { stats, history });
    }
    let filter = GameFilter {
        game: None,
        bot: Some(bot.id),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let health = match store.bot_info(bot.id).await? {
        Some(b) if matches!(b.kind, BotKind::Push | BotKind::Pull) => Some(Health {
            enabled: b.enabled,
            strikes: b.strikes,
            paused_until: b.paused_until.filter(|t| *t > now),
            pause_reason: b
                .pause_reason
                .filter(|_| b.paused_until.is_some_and(|t| t > now)),
            in_match: state.ladder.as_ref().is_some_and(|l| l.is_busy(bot.id)),
        }),
        _ => None,
    };
    Ok(BotData {
        health,
        opponents: store
            .opponents(bot.id, 10)
            .await?
            .into_iter()
            .map(Pair::from)
            .collect(),
        last_games: store.games_page(&filter, 0, 50).await?,
        ratings,
        bot,
    })
}

pub async fn bot(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    fmt: Fmt,
) -> Response {
    respond(fmt, bot_data(&state, &name).await, |d| {
        let mut body = format!(
            "<h1>{}</h1><p class=\"lead\">A {} bot ({}). <a href=\"/games?bot={}\">All its games</a></p>",
            esc(&d.bot.name),
            game_title(&d.bot.game),
            esc(&d.bot.kind),
            url(&d.bot.name)
        );
        if let Some(h) = &d.health {
            let note = if !h.enabled {
                "Switched off by its owner: it plays no ladder matches.".to_string()
            } else if let (Some(until), Some(why)) = (h.paused_until, &h.pause_reason) {
                let until =
                    std::time::UNIX_EPOCH + std::time::Duration::from_secs(until.max(0) as u64);
                format!(
                    "Paused until {}: {}",
                    humantime::format_rfc3339_seconds(until),
                    esc(why)
                )
            } else if h.in_match {
                "Playing a ladder match now.".to_string()
            } else if h.strikes > 0 {
                format!("{} faulty match(es) in a row.", h.strikes)
            } else {
                "On the ladder.".to_string()
            };
            let _ = write!(body, "<p class=\"notice\">{note}</p>");
        }
        if d.ratings.is_empty() {
            body.push_str("<p class=\"empty\">No finished games yet.</p>");
        }
        for r in &d.ratings {
            let s = &r.stats;
            let _ = write!(
                body,
                "<h2><a href=\"/leaderboard/{}\">{}</a></h2><div class=\"grid\">\
<div class=\"panel\"><div class=\"stat\">{:.1} ± {:.1}<small>rating μ ± σ (μ − 3σ = {:.1})</small></div></div>\
<div class=\"panel\"><div class=\"stat\">{}<small>games</small></div></div>\
<div class=\"panel\"><div class=\"stat\"><span class=\"w\">{}</span><small>won ({})</small></div></div>\
<div class=\"panel\"><div class=\"stat\"><span class=\"l\">{}</span><small>lost ({})</small></div></div>\
<div class=\"panel\"><div class=\"stat\"><span class=\"t\">{}</span><small>tied ({})</small></div></div>\
<div class=\"panel\"><div class=\"stat\">{}<small>forfeited ({}; counted as losses)</small></div></div></div>\
<h3>Rating over its last {} games</h3>{}\
<div class=\"legend\"><span><i style=\"background:#0f5132\"></i>μ</span><span><i style=\"background:#cfe0d6\"></i>μ ± σ</span><span><i style=\"background:#b3261e\"></i>μ − 3σ</span></div>",
                esc(&s.game),
                game_title(&s.game),
                s.mu,
                s.sigma,
                s.conservative,
                s.games,
                s.wins,
                pct(s.wins, s.games),
                s.losses,
                pct(s.losses, s.games),
                s.ties,
                pct(s.ties, s.games),
                s.forfeits,
                pct(s.forfeits, s.games),
                r.history.len(),
                svg::rating_chart(&r.history, &format!("rating of {}", s.name))
            );
        }
        body.push_str("<h2>Most frequent opponents</h2>");
        if d.opponents.is_empty() {
            body.push_str("<p class=\"empty\">None yet.</p>");
        } else {
            body.push_str("<div class=\"scroll\"><table><thead><tr><th>Opponent</th><th>Game</th><th class=\"num\">Games</th>\
<th class=\"num\">W–L–T</th><th class=\"num\">Score</th><th></th></tr></thead><tbody>");
            for p in &d.opponents {
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
<td class=\"num\">{:.0}% <small>({:.0}–{:.0}%)</small></td><td><a href=\"{}\">versus</a></td></tr>",
                    bot_link(&p.stats.opponent_name),
                    game_title(&p.stats.game),
                    p.stats.games,
                    wlt(p.stats.wins, p.stats.losses, p.stats.ties),
                    100.0 * p.score,
                    100.0 * p.low,
                    100.0 * p.high,
                    versus_href(&d.bot.name, &p.stats.opponent_name)
                );
            }
            body.push_str("</tbody></table></div>");
        }
        body.push_str("<h2>Last 50 games</h2>");
        body.push_str(&games_table(&d.last_games));
        layout(
            &d.bot.name,
            Some(&format!("/json/bots/{}", url(&d.bot.name))),
            &body,
        )
    })
}

#[derive(Serialize)]
pub struct VersusData {
    a: WebBot,
    b: WebBot,
    results: Vec<Pair>,
    last_games: Vec<GameSummary>,
}

async fn versus_data(state: &AppState, a: &str, b: &str) -> Result<VersusData, WebError> {
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
        store.versus_games(a.id, b.id, 50).await?
    };
    Ok(VersusData {
        a,
        b,
        results,
        last_games,
    })
}

pub async fn versus(
    State(state): State<Arc<AppState>>,
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
        }
        body.push_str("<h2>Their last 50 games</h2>");
        body.push_str(&games_table(&d.last_games));
        let title = format!("{} vs {}", d.a.name, d.b.name);
        layout(
            &title,
            Some(&format!("/json{}", versus_href(&d.a.name, &d.b.name))),
            &body,
        )
    })
}
