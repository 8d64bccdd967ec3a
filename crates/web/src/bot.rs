//! A bot's page: who owns it, its version and health, its ratings, how
//! long it thinks against the move time limit, its faults, its opponents
//! and its last games.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use croupier_rules::GameKind;
use croupier_store::web::{BotStats, GameFilter, GameSummary, HistoryPoint, WebBot};
use croupier_store::BotKind;
use serde::Serialize;

use crate::html::{bot_link, esc, game_title, games_table, layout, pct, time, url, versus_href};
use crate::page::{respond, Fmt, WebError};
use crate::profile::{profile, Profile};
use crate::stats::{find_bot, wlt, Pair, HISTORY};
use crate::svg;
use croupier_competition::services::Services;

/// Games whose records the page reads (its "last games").
const RECENT: i64 = 50;
/// A pull bot that polled this recently is shown as polling.
const POLLING_SECS: u64 = 60;

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
    /// Pull bots: it polled for messages in the last minute.
    polling: Option<bool>,
}

#[derive(Serialize)]
pub struct BotData {
    bot: WebBot,
    /// The owner's name (push and pull bots).
    owner: Option<String>,
    /// Push and pull bots only.
    health: Option<Health>,
    /// When it last finished a game (RFC 3339).
    last_seen: Option<String>,
    /// The time it has for each decision, in milliseconds (bots asked over
    /// a transport).
    move_limit_ms: Option<f64>,
    /// Thinking time, faults and version from its last games' records.
    profile: Profile,
    ratings: Vec<RatedGame>,
    opponents: Vec<Pair>,
    last_games: Vec<GameSummary>,
    /// Tournaments it is entered in (issue 15).
    tournaments: Vec<croupier_competition::tournaments::view::Brief>,
}

async fn bot_data(state: &Services, name: &str) -> Result<BotData, WebError> {
    let store = state.hub.store();
    let bot = find_bot(store, name).await?;
    let mut ratings = Vec::new();
    for stats in store.bot_stats(bot.id).await? {
        let history = store.rating_history(bot.id, &stats.game, HISTORY).await?;
        ratings.push(RatedGame { stats, history });
    }
    let last_seen = ratings
        .iter()
        .filter_map(|r| r.stats.last_played.clone())
        .max();
    let filter = GameFilter {
        game: None,
        bot: Some(bot.id),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let info = store.bot_info(bot.id).await?;
    let game = bot.game.parse::<GameKind>().ok();
    let move_limit = match info.as_ref().map(|b| b.kind) {
        // House bots that are timed (demo records) run under the ladder's
        // limit like any other.
        Some(BotKind::Push | BotKind::Pull | BotKind::House | BotKind::Hosted) => state
            .ladder
            .as_ref()
            .zip(game)
            .and_then(|(l, g)| l.move_time(g)),
        Some(BotKind::Rest) => Some(state.hub.config().move_timeout),
        None => None,
    };
    let health = match info {
        Some(b) if matches!(b.kind, BotKind::Push | BotKind::Pull) => Some(Health {
            enabled: b.enabled,
            strikes: b.strikes,
            paused_until: b.paused_until.filter(|t| *t > now),
            pause_reason: b
                .pause_reason
                .filter(|_| b.paused_until.is_some_and(|t| t > now)),
            in_match: state.ladder.as_ref().is_some_and(|l| l.is_busy(bot.id)),
            polling: (b.kind == BotKind::Pull).then(|| {
                state
                    .mailboxes
                    .peek(bot.id)
                    .is_some_and(|m| m.waiting(std::time::Duration::from_secs(POLLING_SECS)))
            }),
        }),
        _ => None,
    };
    let last_games = store.games_page(&filter, 0, RECENT).await?;
    let mut profile = profile(store, bot.id, &last_games).await?;
    // Issue 12 hook: a hosted bot's version is the one the ladder plays.
    if let Some(v) = state.hosted.get().and_then(|h| h.active_version(bot.id)) {
        profile.version = Some(format!(
            "{v} (hosted; its owner sees all versions at /bots/{}/versions)",
            bot.name
        ));
    }
    Ok(BotData {
        owner: store.owner_name(bot.id).await?,
        health,
        last_seen,
        move_limit_ms: move_limit.map(|d| d.as_secs_f64() * 1000.0),
        profile,
        opponents: store
            .opponents(bot.id, 10)
            .await?
            .into_iter()
            .map(Pair::from)
            .collect(),
        last_games,
        ratings,
        tournaments: crate::tournaments::of_bot(store, bot.id).await?,
        bot,
    })
}

fn health_note(h: &Health) -> String {
    if !h.enabled {
        return "Switched off by its owner: it plays no ladder matches.".into();
    }
    if let (Some(until), Some(why)) = (h.paused_until, &h.pause_reason) {
        let until = std::time::UNIX_EPOCH + std::time::Duration::from_secs(until.max(0) as u64);
        return format!(
            "Paused until {}: {}",
            humantime::format_rfc3339_seconds(until),
            esc(why)
        );
    }
    if h.in_match {
        "Playing a ladder match now.".into()
    } else if h.strikes > 0 {
        format!(
            "On the ladder, after {} faulty match(es) in a row.",
            h.strikes
        )
    } else {
        "On the ladder.".into()
    }
}

/// A time in milliseconds, short.
fn ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} s", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.1} ms")
    }
}

fn thinking_html(p: &Profile, limit: Option<f64>) -> String {
    let mut out = String::from("<h2 id=\"thinking\">Thinking time</h2>");
    let Some(t) = &p.thinking else {
        out.push_str(if p.builtin {
            "<p class=\"empty\">A built-in strategy: it runs inside the server, so its moves are not timed.</p>"
        } else {
            "<p class=\"empty\">No timed moves in its recent games.</p>"
        });
        return out;
    };
    let _ = write!(
        out,
        "<p>{} moves over its last {} games{}.</p><div class=\"scroll\"><table class=\"think\"><thead><tr>\
<th></th><th class=\"num\">time</th>{}</tr></thead><tbody>",
        t.moves,
        p.games,
        limit
            .map(|l| format!(", against a limit of {} per move", ms(l)))
            .unwrap_or_default(),
        if limit.is_some() {
            "<th class=\"bar\">share of the limit</th>"
        } else {
            ""
        }
    );
    let rows: [(&str, f64); 5] = [
        ("median (p50)", t.p50),
        ("p90", t.p90),
        ("p95", t.p95),
        ("p99", t.p99),
        ("slowest", t.max),
    ];
    for (label, v) in rows {
        let bar = limit
            .map(|l| {
                let share = (v / l).clamp(0.0, 1.0);
                let class = if share >= 0.8 { " hot" } else { "" };
                format!(
                    "<td class=\"bar\"><span class=\"meter{class}\"><i style=\"width:{:.1}%\"></i></span> {:.0}%</td>",
                    100.0 * share,
                    100.0 * v / l
                )
            })
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{label}</th><td class=\"num\">{}</td>{bar}</tr>",
            ms(v)
        );
    }
    out.push_str("</tbody></table></div>");
    out
}

fn faults_html(d: &BotData) -> String {
    let p = &d.profile;
    let mut out = String::from("<h2 id=\"faults\">Faults</h2>");
    if p.faults.is_empty() {
        let _ = write!(
            out,
            "<p class=\"empty\">No faults in its last {} games.</p>",
            p.games
        );
        return out;
    }
    let total: usize = p.faults.values().sum();
    let _ = write!(
        out,
        "<p>{total} in its last {} games: {}. <a href=\"/docs/ladder#faults-strikes-and-pauses\">What faults mean</a></p>",
        p.games,
        p.faults
            .iter()
            .map(|(k, n)| format!("<span class=\"tag fault\">{}</span> {n}", esc(k)))
            .collect::<Vec<_>>()
            .join(" · ")
    );
    out.push_str(
        "<div class=\"scroll\"><table class=\"faults\"><thead><tr><th>Game</th><th>Kind</th>\
<th>What happened</th></tr></thead><tbody>",
    );
    for f in &p.recent_faults {
        let _ = write!(
            out,
            "<tr><td class=\"name\"><a href=\"/games/{g}?step={s}\">#{g} step {s}</a></td>\
<td><span class=\"tag fault\">{}</span></td><td class=\"detail\">{}</td></tr>",
            esc(&f.kind),
            esc(&f.detail),
            g = f.game_id,
            s = f.step
        );
    }
    out.push_str("</tbody></table></div>");
    out
}

fn about_html(d: &BotData) -> String {
    let mut facts = Vec::new();
    facts.push(format!(
        "<div><dt>Game</dt><dd>{}</dd></div>",
        game_title(&d.bot.game)
    ));
    facts.push(format!(
        "<div><dt>Connects</dt><dd>{}</dd></div>",
        esc(&d.bot.kind)
    ));
    if let Some(o) = &d.owner {
        facts.push(format!("<div><dt>Owner</dt><dd>{}</dd></div>", esc(o)));
    }
    facts.push(format!(
        "<div><dt>Version</dt><dd>{}</dd></div>",
        d.profile
            .version
            .as_deref()
            .map(esc)
            .unwrap_or_else(|| "<span class=\"muted\">not given</span>".into())
    ));
    facts.push(format!(
        "<div><dt>Last seen</dt><dd>{}</dd></div>",
        d.last_seen
            .as_deref()
            .map(|t| {
                let (day, at) = time(t).split_once(' ').map_or((String::new(), String::new()), |(d, a)| (d.to_string(), a.to_string()));
                format!("finished a game <span class=\"nowrap\">{day}</span> <span class=\"nowrap\">{at}</span>")
            })
            .unwrap_or_else(|| "no finished game yet".into())
    ));
    if let Some(h) = &d.health {
        facts.push(format!(
            "<div><dt>Health</dt><dd>{}</dd></div>",
            health_note(h)
        ));
        facts.push(format!("<div><dt>Strikes</dt><dd>{}</dd></div>", h.strikes));
        if let Some(polling) = h.polling {
            facts.push(format!(
                "<div><dt>Polling</dt><dd>{}</dd></div>",
                if polling {
                    "yes, in the last minute"
                } else {
                    "not in the last minute"
                }
            ));
        }
    }
    format!("<dl class=\"facts\">{}</dl>", facts.concat())
}

fn ratings_html(d: &BotData) -> String {
    let mut body = String::new();
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
    body
}

pub async fn bot(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    fmt: Fmt,
) -> Response {
    // wf (issue 16): whether others may challenge it.
    let open = match state.hub.store().challengeable_bots().await {
        Ok(open) => open,
        Err(e) => return WebError::from(e).page(fmt),
    };
    respond(fmt, bot_data(&state, &name).await, |d| {
        let mut body = format!(
            "<h1>{}</h1><p class=\"lead\">A {} bot. <a href=\"/games?bot={}\">All its games</a></p>",
            esc(&d.bot.name),
            game_title(&d.bot.game),
            url(&d.bot.name)
        );
        body.push_str(&about_html(d));
        // wf (issue 16): play it, and its games in progress.
        body.push_str(&live_and_play(&state, &d.bot, open.contains(&d.bot.id)));
        body.push_str(&ratings_html(d));
        body.push_str(&thinking_html(&d.profile, d.move_limit_ms));
        body.push_str(&faults_html(d));
        body.push_str("<h2>Most frequent opponents</h2>");
        if d.opponents.is_empty() {
            body.push_str("<p class=\"empty\">None yet.</p>");
        } else {
            body.push_str("<div class=\"scroll\"><table><thead><tr><th>Opponent</th><th class=\"hide-narrow\">Game</th><th class=\"num\">Games</th>\
<th class=\"num\">W–L–T</th><th class=\"num\">Score</th><th></th></tr></thead><tbody>");
            for p in &d.opponents {
                let _ = write!(
                    body,
                    "<tr><td class=\"name\">{}</td><td class=\"hide-narrow\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
<td class=\"num\">{:.0}% <small class=\"hide-narrow\">({:.0}–{:.0}%)</small></td><td><a href=\"{}\">versus</a></td></tr>",
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
        let _ = write!(body, "<h2>Last {RECENT} games</h2>");
        body.push_str(&games_table(&d.last_games));
        body.push_str("<h2>Tournaments</h2>");
        body.push_str(&crate::tournaments::briefs_table(&d.tournaments));
        layout(
            &d.bot.name,
            Some(&format!("/json/bots/{}", url(&d.bot.name))),
            &body,
        )
    })
}

/// wf (issue 16): the bot's games in progress and an invitation to play it.
fn live_and_play(state: &Services, bot: &WebBot, open: bool) -> String {
    let name = bot.name.as_str();
    let live: Vec<croupier_live::live_games::LiveSummary> = state
        .live
        .list()
        .into_iter()
        .filter(|g| g.seats.iter().any(|s| s == name))
        .collect();
    let mut out = String::new();
    if !live.is_empty() {
        out.push_str("<h2>Playing now</h2>");
        out.push_str(&crate::live::live_table(&live));
    }
    match bot.kind.as_str() {
        "push" | "pull" | "hosted" => {
            out.push_str(&crate::play::challenge_html(name, &bot.game, open))
        }
        "house" if !name.starts_with("person-") => {
            let _ = write!(
                out,
                "<p class=\"challenge\"><a class=\"button\" href=\"/play?game={}\">Play {} yourself</a></p>",
                url(&bot.game),
                esc(name)
            );
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Thinking;

    #[test]
    fn times_read_in_sensible_units() {
        assert_eq!(ms(0.42), "0.4 ms");
        assert_eq!(ms(37.2), "37 ms");
        assert_eq!(ms(5000.0), "5.00 s");
    }

    #[test]
    fn health_says_why_a_bot_does_not_play() {
        let h = Health {
            enabled: true,
            strikes: 2,
            paused_until: None,
            pause_reason: None,
            in_match: false,
            polling: None,
        };
        assert!(health_note(&h).contains("2 faulty"));
        let off = Health {
            enabled: false,
            ..h
        };
        assert!(health_note(&off).starts_with("Switched off"));
        let paused = Health {
            enabled: true,
            strikes: 3,
            paused_until: Some(2_000_000_000),
            pause_reason: Some("3 <faulty> matches".into()),
            in_match: false,
            polling: Some(false),
        };
        let note = health_note(&paused);
        assert!(note.starts_with("Paused until 2033") && note.contains("&lt;faulty&gt;"));
    }

    #[test]
    fn thinking_rows_compare_with_the_limit() {
        let p = Profile {
            games: 3,
            thinking: Thinking::of(vec![100.0, 200.0, 4500.0]),
            ..Profile::default()
        };
        let html = thinking_html(&p, Some(5000.0));
        assert!(html.contains("3 moves over its last 3 games, against a limit of 5.00 s"));
        assert!(html.contains("<td class=\"num\">4.50 s</td>"), "{html}");
        assert!(
            html.contains("meter hot") && html.contains(" 90%</td>"),
            "{html}"
        );
        let builtin = Profile {
            builtin: true,
            ..Profile::default()
        };
        assert!(thinking_html(&builtin, None).contains("built-in strategy"));
    }
}
