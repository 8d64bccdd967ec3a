//! Leaderboards (with the head-to-head matrix) and what the bot and versus
//! pages share with them.

use std::sync::Arc;

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use croupier_rules::GameKind;
use croupier_store::admin::SeasonRow;
use croupier_store::ratings::wilson;
use croupier_store::web::{BotStats, HistoryPoint, PairStats, WebBot};
use croupier_store::Store;
use serde::Serialize;

use crate::html::{
    bot_link, column_head, game_title, html, layout, pct, row_head, time, versus_href, Markup,
};
use crate::page::{respond, Fmt, WebError};
use crate::svg;
use croupier_competition::services::Services;

/// Rating points shown on a bot's chart.
pub(super) const HISTORY: i64 = 500;
/// Bots in the head-to-head matrix (the top of the leaderboard).
const MATRIX: usize = 12;

/// A pair's results with its score and 95 % confidence interval.
#[derive(Debug, Serialize)]
pub struct Pair {
    #[serde(flatten)]
    pub stats: PairStats,
    /// (wins + ties / 2) / games.
    pub score: f64,
    /// Wilson interval of the score.
    pub low: f64,
    pub high: f64,
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

pub(super) async fn find_bot(store: &Arc<dyn Store>, name: &str) -> Result<WebBot, WebError> {
    store
        .web_bot(name)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("There is no bot named '{name}'.")))
}

pub(super) fn rating(b: &BotStats) -> Markup {
    html! { span class="rating" { (format!("{:.1}", b.mu)) " " small { (format!("± {:.1}", b.sigma)) } } }
}

pub(super) fn wlt(w: i64, l: i64, t: i64) -> Markup {
    html! { span class="w" { (w) } "–" span class="l" { (l) } "–" span class="t" { (t) } }
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
    /// The season shown (issue 49: seasons are numbered per game from 1).
    season: i64,
    /// The game's current season: a lower `season` is a past one, its
    /// standings as they were when it ended.
    current_season: i64,
    /// Every season of the game, oldest first.
    seasons: Vec<SeasonRow>,
    bots: Vec<LeaderRow>,
    head_to_head: Vec<Pair>,
}

/// The season a leaderboard's query asks for (`?season=N`), if any.
fn season_param(q: &HashMap<String, String>) -> Result<Option<i64>, WebError> {
    crate::page::positive_param(q, "season").map_err(|shown| {
        WebError::BadRequest(format!("season: a season number from 1 (got '{shown}')."))
    })
}

async fn leaderboard_data(
    state: &Services,
    game: &str,
    season: Option<i64>,
) -> Result<LeaderboardData, WebError> {
    let kind = parse_game(game)?;
    let store = state.hub.store();
    let seasons = store.admin().seasons(kind.name()).await?;
    let current = seasons.last().map_or(1, |s| s.season);
    match season {
        Some(n) if n > current => {
            return Err(WebError::NotFound(format!(
                "There is no season {n} of {}: the current season is {current}.",
                game_title(kind.name())
            )))
        }
        Some(n) if n < current => {
            let bots = store.admin().season_leaderboard(kind.name(), n).await?;
            let pairs = store.admin().season_pairs(kind.name(), n).await?;
            return Ok(LeaderboardData {
                game: kind.name(),
                season: n,
                current_season: current,
                seasons,
                bots: bots
                    .into_iter()
                    .map(|stats| LeaderRow {
                        stats,
                        active: false,
                        trend: Vec::new(),
                    })
                    .collect(),
                head_to_head: pairs.into_iter().map(Pair::from).collect(),
            });
        }
        _ => {}
    }
    let since = crate::page::rfc3339_ago(ACTIVE_SECS);
    let mut trends: std::collections::HashMap<_, _> = store
        .rating_histories(kind.name(), TREND)
        .await?
        .into_iter()
        .collect();
    let mut bots = Vec::new();
    for stats in store.leaderboard(kind.name()).await? {
        let trend = trends.remove(&stats.bot).unwrap_or_default();
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
        season: current,
        current_season: current,
        seasons,
        bots,
        head_to_head: store
            .pairs(kind.name())
            .await?
            .into_iter()
            .map(Pair::from)
            .collect(),
    })
}

fn matrix(bots: &[BotStats], pairs: &[Pair]) -> Markup {
    let top = &bots[..bots.len().min(MATRIX)];
    html! {
        div class="scroll" { table class="matrix wide" {
            thead { tr { th {} @for (i, b) in top.iter().enumerate() { (column_head(i, &b.name)) } } }
            tbody {
                @for (i, a) in top.iter().enumerate() {
                    tr {
                        (row_head(i, &a.name))
                        @for b in top {
                            @if a.bot == b.bot {
                                td class="self" { "·" }
                            } @else {
                                @match pairs.iter().find(|p| p.stats.bot == a.bot && p.stats.opponent == b.bot) {
                                    Some(p) => td style={ "background:hsl(" ((p.score * 120.0).round()) " 60% 50% / .16)" } {
                                        a href=(versus_href(&a.name, &b.name)) title={ (p.stats.games) " games" } {
                                            (format!("{:.0}%", 100.0 * p.score))
                                            small { (format!("{:.0}–{:.0}%", 100.0 * p.low, 100.0 * p.high)) }
                                        }
                                    },
                                    None => td { "–" },
                                }
                            }
                        }
                    }
                }
            }
        } }
    }
}

/// Links to a game's seasons (none while it has had only one).
fn seasons_nav(d: &LeaderboardData) -> Markup {
    let g = d.game;
    html! {
        @if d.current_season > 1 {
            p class="seasons" {
                "Seasons: "
                @for (i, s) in d.seasons.iter().enumerate() {
                    @if i > 0 { " · " }
                    @if s.season == d.season {
                        strong { (s.season) }
                    } @else if s.season == d.current_season {
                        a href={ "/leaderboard/" (g) } { (s.season) " (current)" }
                    } @else {
                        a href={ "/leaderboard/" (g) "?season=" (s.season) } { (s.season) }
                    }
                }
                @if d.season < d.current_season {
                    @if let Some(s) = d.seasons.iter().find(|s| s.season == d.season) {
                        br;
                        "Season " (d.season) ", a past season"
                        @if let Some(end) = &s.ended_at { " (it ended " (time(end)) ")" }
                        ": its standings as they were when it ended."
                    }
                }
            }
        }
    }
}

pub async fn leaderboard(
    State(state): State<Arc<Services>>,
    Path(game): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    fmt: Fmt,
) -> Response {
    let data = match season_param(&q) {
        Ok(season) => leaderboard_data(&state, &game, season).await,
        Err(e) => Err(e),
    };
    respond(fmt, data, |d| {
        let title = game_title(d.game);
        let g = d.game;
        let past = d.season < d.current_season;
        let json = if past {
            format!("/json/leaderboard/{}?season={}", d.game, d.season)
        } else {
            format!("/json/leaderboard/{}", d.game)
        };
        let body = html! {
            h1 {
                (title) " leaderboard"
                @if past { " · season " (d.season) }
            }
            (seasons_nav(d))
            p class="lead" {
                "Ordered by μ − 3σ: μ is a bot's estimated skill, σ how unsure that estimate still is, so μ − 3σ is a skill it almost surely has (it rises as a bot plays and wins). "
                a href="/docs/ladder#ratings" { "How ratings work" } " · "
                a href={ "/rules/" (g) } { "Rules" } " · "
                a href={ "/games?game=" (g) } { "Games" } " · "
                a href={ "/leaderboard/" (g) "/people" } { "People against bots" }
            }
            @if d.bots.is_empty() {
                p class="empty" { "No rated bots yet." }
            } @else {
                div class="scroll" { table class="leaders" {
                    thead { tr {
                        th class="num" { "#" } th { "Bot" } th class="num hide-phone" { "Rating" } th class="num" { "μ − 3σ" }
                        th class="num" { "Games" } th class="num" { "W–L–T" } th class="num hide-phone" { "Won" }
                        th class="num hide-narrow" { "Forfeits" } th class="hide-narrow" { "Trend" }
                        th class="hide-narrow" { "Last played" }
                    } }
                    tbody {
                        @for (i, row) in d.bots.iter().enumerate() {
                            @let b = &row.stats;
                            tr {
                                td class="num" { (i + 1) }
                                td class="name" {
                                    (bot_link(&b.name))
                                    @if row.active {
                                        " " span class="tag live" title="finished a game in the last 24 hours" { "active" }
                                    }
                                }
                                td class="num hide-phone" { (rating(b)) }
                                td class="num" { (format!("{:.1}", b.conservative)) }
                                td class="num" { (b.games) }
                                td class="num" { (wlt(b.wins, b.losses, b.ties)) }
                                td class="num hide-phone" { (pct(b.wins, b.games)) }
                                td class="num hide-narrow" { (b.forfeits) }
                                td class="hide-narrow" { (svg::sparkline(&row.trend)) }
                                td class="when hide-narrow" { (b.last_played.as_deref().map(time).unwrap_or_default()) }
                            }
                        }
                    }
                } }
                h2 { "Head to head" }
                p { "Score of the row bot against the column bot ((wins + ½ ties) / games) with its 95 % confidence interval. Open a cell for the versus page." }
                (matrix(&d.bots.iter().map(|r| r.stats.clone()).collect::<Vec<_>>(), &d.head_to_head))
            }
        };
        let heading = if past {
            format!("{title} leaderboard, season {}", d.season)
        } else {
            format!("{title} leaderboard")
        };
        layout(&heading, Some(&json), body)
    })
}
