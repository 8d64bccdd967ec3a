//! A bot's page: who owns it, its version and health, its ratings, how
//! long it thinks against the move time limit, its faults, its opponents
//! and its last games.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use croupier_rules::GameKind;
use croupier_store::web::{BotStats, GameFilter, GameSummary, HistoryPoint, WebBot};
use croupier_store::BotKind;
use serde::Serialize;

use crate::html::{
    bot_link, game_title, games_table, html, layout, pct, time, url, versus_href, Markup,
};
use crate::page::{respond, Fmt, WebError};
use crate::profile::{profile, Profile, Thinking};
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
    #[serde(serialize_with = "croupier_store::times::unix_opt")]
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
    /// The newest tournaments it is entered in (issue 15), at most
    /// [`crate::tournaments::OF_BOT`].
    tournaments: Vec<croupier_competition::tournaments::view::Brief>,
    /// How many tournaments it is entered in.
    tournaments_entered: usize,
    /// The seat people play from the website under (issue 48): its games
    /// are people's, rated apart from the bots.
    person: bool,
    /// Why it is banned, when it is (issue 49): it gets no new games.
    #[serde(skip_serializing_if = "Option::is_none")]
    banned: Option<croupier_store::admin::BotBan>,
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
    let person = game.is_some_and(|g| croupier_competition::human::person_bot_name(g) == bot.name);
    let move_limit = match info.as_ref().map(|b| b.kind) {
        // People have their own, longer, limit.
        _ if person => Some(state.people.limits().move_time),
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
    let (tournaments, tournaments_entered) =
        crate::tournaments::of_bot(store, &state.kept, bot.id).await?;
    Ok(BotData {
        banned: store.admin().bot_ban(bot.id).await?,
        person,
        owner: store.owner_name(bot.id).await?,
        health,
        // A seat that is never rated (people's) was last seen in its games.
        last_seen: last_seen.or_else(|| last_games.iter().find_map(|g| g.finished.clone())),
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
        tournaments,
        tournaments_entered,
        bot,
    })
}

/// What a bot's health means, as text.
fn health_note(h: &Health) -> String {
    if !h.enabled {
        return "Switched off by its owner: it plays no ladder matches.".into();
    }
    if let (Some(until), Some(why)) = (h.paused_until, &h.pause_reason) {
        let until = std::time::UNIX_EPOCH + std::time::Duration::from_secs(until.max(0) as u64);
        return format!(
            "Paused until {}: {why}",
            humantime::format_rfc3339_seconds(until),
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

use crate::html::duration_ms as ms;

fn thinking_html(p: &Profile, limit: Option<f64>, polls: bool) -> Markup {
    // A REST bot asks for its turn: what is measured runs from when its
    // move was due to when it came, its polling delay included.
    let heading = if polls {
        "Response time"
    } else {
        "Thinking time"
    };
    let Some(t) = &p.thinking else {
        return html! {
            h2 id="thinking" { (heading) }
            @if p.builtin {
                p class="empty" { "A built-in strategy: it runs inside the server, so its moves are not timed." }
            } @else {
                p class="empty" { "No timed moves in its recent games." }
            }
        };
    };
    let pick = |t: &Thinking| -> [f64; 5] { [t.p50, t.p90, t.p95, t.p99, t.max] };
    let labels = ["median (p50)", "p90", "p95", "p99", "slowest"];
    let wall = pick(t);
    let cpu = p.cpu.as_ref().map(|c| pick(&c.thinking));
    html! {
        h2 id="thinking" { (heading) }
        @if polls {
            p class="hint" {
                "This bot polls the 2014 REST API for its turn, so each time runs from when its move was due "
                "to when it arrived: its polling delay is included, and its thinking time is not known."
            }
        }
        p {
            (t.moves) " moves over its last " (p.games) " games"
            @if let Some(l) = limit { ", against a limit of " (ms(l)) " per move" }
            "."
        }
        div class="scroll" { table class="think" {
            thead { tr {
                th {} th class="num" { "wall" }
                th class="num" { abbr title="CPU time of the bot's processes, read from its cgroup" { "CPU" } }
                @if limit.is_some() { th class="bar" { "wall, share of the limit" } }
            } }
            tbody {
                @for (i, (label, v)) in labels.iter().zip(wall).enumerate() {
                    tr {
                        th scope="row" { (label) }
                        td class="num" { (ms(v)) }
                        td class="num cpu" {
                            @match cpu {
                                Some(c) => (ms(c[i])),
                                None => span class="muted" title="not measured" { "—" },
                            }
                        }
                        @if let Some(l) = limit {
                            @let share = (v / l).clamp(0.0, 1.0);
                            td class="bar" {
                                span class=(if share >= 0.8 { "meter hot" } else { "meter" }) {
                                    i style=(format!("width:{:.1}%", 100.0 * share)) {}
                                }
                                (format!(" {:.0}%", 100.0 * v / l))
                            }
                        }
                    }
                }
            }
        } }
        (cpu_note(p, t.moves))
    }
}

/// What the CPU column says: CPU against wall time over the moves where
/// both are known, or why there is no CPU time.
fn cpu_note(p: &Profile, moves: usize) -> Markup {
    let Some(c) = &p.cpu else {
        return html! {
            p class="hint" {
                "CPU time: not measured. It is read from the cgroup of a bot program the server starts "
                "(hosted bots, where the server can make cgroups); bots reached over HTTP and older records have none. "
                a href="/docs/records#steps" { "About the records" }
            }
        };
    };
    let waited = (c.wall_mean_ms - c.mean_ms).max(0.0);
    html! {
        p class="hint cpu" {
            @if c.thinking.moves < moves {
                "CPU time is measured for " (c.thinking.moves) " of these " (moves) " moves (the CPU column is over those). "
            }
            "Per move, on average: " strong { (ms(c.mean_ms)) " of CPU" } " in " strong { (ms(c.wall_mean_ms)) " of wall time" }
            "; the other " (ms(waited)) " it was waiting (for a loaded machine, for input or output, or asleep)."
        }
    }
}

fn faults_html(d: &BotData) -> Markup {
    let p = &d.profile;
    let total: usize = p.faults.values().sum();
    html! {
        h2 id="faults" { "Faults" }
        @if p.faults.is_empty() {
            p class="empty" { "No faults in its last " (p.games) " games." }
        } @else {
            p {
                (total) " in its last " (p.games) " games: "
                @for (i, (k, n)) in p.faults.iter().enumerate() {
                    @if i > 0 { " · " }
                    span class="tag fault" { (k) } " " (n)
                }
                ". " a href="/docs/ladder#faults-strikes-and-pauses" { "What faults mean" }
            }
            div class="scroll" { table class="faults" {
                thead { tr { th { "Game" } th { "Kind" } th { "What happened" } } }
                tbody {
                    @for f in &p.recent_faults {
                        tr {
                            td class="name" {
                                a href={ "/games/" (f.game_id) "?step=" (f.step) } { "#" (f.game_id) " step " (f.step) }
                            }
                            td { span class="tag fault" { (f.kind) } }
                            td class="detail" { (f.detail) }
                        }
                    }
                }
            } }
        }
    }
}

fn about_html(d: &BotData) -> Markup {
    let fact = |term: &str, value: Markup| html! { div { dt { (term) } dd { (value) } } };
    html! {
        dl class="facts" {
            (fact("Game", html! { (game_title(&d.bot.game)) }))
            (fact("Connects", html! {
                @if d.person { "people, from the website" } @else { (d.bot.kind) }
            }))
            @if let Some(o) = &d.owner { (fact("Owner", html! { (o) })) }
            (fact("Version", html! {
                @match &d.profile.version {
                    Some(v) => (v),
                    None => span class="muted" { "not given" },
                }
            }))
            (fact("Last seen", html! {
                @match &d.last_seen {
                    Some(t) => {
                        @let text = time(t);
                        @let (day, at) = text.split_once(' ').unwrap_or(("", ""));
                        "finished a game " span class="nowrap" { (day) } " " span class="nowrap" { (at) }
                    },
                    None => "no finished game yet",
                }
            }))
            @if let Some(h) = &d.health {
                @if d.banned.is_some() {
                    (fact("Health", html! { "Banned: it gets no new games." }))
                } @else {
                    (fact("Health", html! { (health_note(h)) }))
                }
                (fact("Strikes", html! { (h.strikes) }))
                @if let Some(polling) = h.polling {
                    (fact("Polling", html! {
                        @if polling { "yes, in the last minute" } @else { "not in the last minute" }
                    }))
                }
            }
        }
    }
}

fn ratings_html(d: &BotData) -> Markup {
    html! {
        @if d.person {
            p {
                "Every game a person plays from the website sits at this seat. People are rated apart from the bots: see "
                a href={ "/leaderboard/" (d.bot.game) "/people" } { "people against bots" } ", and each person's own page there."
            }
        } @else if d.ratings.is_empty() {
            p class="empty" { "No finished games yet." }
        }
        @for r in &d.ratings {
            @let s = &r.stats;
            h2 { a href={ "/leaderboard/" (s.game) } { (game_title(&s.game)) } }
            div class="grid stats" {
                div class="panel" { div class="stat" {
                    (format!("{:.1} ± {:.1}", s.mu, s.sigma))
                    small { (format!("rating μ ± σ (μ − 3σ = {:.1})", s.conservative)) }
                } }
                div class="panel" { div class="stat" { (s.games) small { "games" } } }
                div class="panel" { div class="stat" { span class="w" { (s.wins) } small { "won (" (pct(s.wins, s.games)) ")" } } }
                div class="panel" { div class="stat" { span class="l" { (s.losses) } small { "lost (" (pct(s.losses, s.games)) ")" } } }
                div class="panel" { div class="stat" { span class="t" { (s.ties) } small { "tied (" (pct(s.ties, s.games)) ")" } } }
                div class="panel" { div class="stat" { (s.forfeits) small { "forfeited (" (pct(s.forfeits, s.games)) span class="hide-phone" { "; counted as losses" } ")" } } }
            }
            h3 { "Rating over its last " (r.history.len()) " games" }
            (svg::rating_chart(&r.history, &format!("rating of {}", s.name)))
            div class="legend" {
                span { i style="background:#0f5132" {} "μ" }
                span { i style="background:#cfe0d6" {} "μ ± σ" }
                span { i style="background:#b3261e" {} "μ − 3σ" }
            }
        }
    }
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
        let body = html! {
            h1 { (d.bot.name) }
            p class="lead" {
                "A " (game_title(&d.bot.game)) " bot. "
                a href={ "/games?bot=" (url(&d.bot.name)) } { "All its games" }
            }
            @if let Some(b) = &d.banned {
                p class="notice banned" {
                    strong { "Banned" }
                    @if let Some(owner) = &b.owner { " (its owner " (owner) " is banned)" }
                    ": " (b.reason) " "
                    small { "(by " (b.banned_by) ", " (time(&b.banned_at)) ")" }
                    br;
                    "It gets no new ladder or tournament games; its past games and ratings stay. "
                    a href="/docs/admin" { "About bans" }
                }
            }
            (about_html(d))
            // wf (issue 16): play it, and its games in progress.
            (live_and_play(&state, &d.bot, open.contains(&d.bot.id)))
            (ratings_html(d))
            (thinking_html(&d.profile, d.move_limit_ms, d.bot.kind == "rest"))
            (faults_html(d))
            h2 { "Most frequent opponents" }
            @if d.opponents.is_empty() {
                p class="empty" { "None yet." }
            } @else {
                div class="scroll" { table class="opponents" {
                    thead { tr {
                        th { "Opponent" } th class="hide-narrow" { "Game" } th class="num" { "Games" }
                        th class="num" { "W–L–T" } th class="num" { "Score" } th {}
                    } }
                    tbody {
                        @for p in &d.opponents {
                            tr {
                                td class="name" { (bot_link(&p.stats.opponent_name)) }
                                td class="hide-narrow" { (game_title(&p.stats.game)) }
                                td class="num" { (p.stats.games) }
                                td class="num" { (wlt(p.stats.wins, p.stats.losses, p.stats.ties)) }
                                td class="num" {
                                    (format!("{:.0}%", 100.0 * p.score)) " "
                                    small class="hide-narrow" { (format!("({:.0}–{:.0}%)", 100.0 * p.low, 100.0 * p.high)) }
                                }
                                td { a href=(versus_href(&d.bot.name, &p.stats.opponent_name)) { "versus" } }
                            }
                        }
                    }
                } }
            }
            h2 { "Last " (RECENT) " games" }
            (games_table(&d.last_games))
            h2 { "Tournaments" }
            @if d.tournaments_entered > d.tournaments.len() {
                p { "The newest " (d.tournaments.len()) " of the " (d.tournaments_entered)
                    " it entered; the others are on the "
                    a href="/tournaments" { "tournaments pages" } "." }
            }
            (crate::tournaments::briefs_table(&d.tournaments))
        };
        layout(
            &d.bot.name,
            Some(&format!("/json/bots/{}", url(&d.bot.name))),
            body,
        )
    })
}

/// wf (issue 16): the bot's games in progress and an invitation to play it.
fn live_and_play(state: &Services, bot: &WebBot, open: bool) -> Markup {
    let name = bot.name.as_str();
    let live: Vec<croupier_live::live_games::LiveSummary> = state
        .live
        .list()
        .into_iter()
        .filter(|g| g.seats.iter().any(|s| s == name))
        .collect();
    html! {
        @if !live.is_empty() {
            h2 { "Playing now" }
            (crate::live::live_table(&live))
        }
        @match bot.kind.as_str() {
            "push" | "pull" | "hosted" => (crate::play::challenge_html(name, &bot.game, open)),
            "house" if !name.starts_with("person-") => {
                p class="challenge" {
                    a class="button" href={ "/play?game=" (url(&bot.game)) } { "Play " (name) " yourself" }
                }
            },
            _ => {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Cpu;

    #[test]
    fn times_read_in_sensible_units() {
        assert_eq!(ms(0.42), "420 µs");
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
        assert!(note.starts_with("Paused until 2033") && note.contains("3 <faulty> matches"));
    }

    #[test]
    fn thinking_rows_compare_with_the_limit() {
        let p = Profile {
            games: 3,
            thinking: Thinking::of(vec![100.0, 200.0, 4500.0]),
            ..Profile::default()
        };
        let html = thinking_html(&p, Some(5000.0), false).into_string();
        assert!(html.contains("3 moves over its last 3 games, against a limit of 5.00 s"));
        assert!(html.contains("<td class=\"num\">4.50 s</td>"), "{html}");
        assert!(html.contains("CPU time: not measured"), "{html}");
        assert!(
            html.contains("meter hot") && html.contains(" 90%</td>"),
            "{html}"
        );
        let builtin = Profile {
            builtin: true,
            ..Profile::default()
        };
        assert!(thinking_html(&builtin, None, false)
            .into_string()
            .contains("built-in strategy"));
        // Issue 52: a REST bot's times are responses, polling included.
        let rest = thinking_html(&p, Some(5000.0), true).into_string();
        assert!(rest.contains("Response time") && !rest.contains("Thinking time"));
        assert!(rest.contains("polling delay is included"));
    }

    #[test]
    fn cpu_stands_beside_the_wall_time() {
        let p = Profile {
            games: 2,
            thinking: Thinking::of(vec![400.0, 400.0, 10.0]),
            cpu: Cpu::of(&[(400.0, 40.0), (400.0, 40.0)]),
            ..Profile::default()
        };
        let html = thinking_html(&p, Some(5000.0), false).into_string();
        assert!(html.contains("<td class=\"num cpu\">40 ms</td>"), "{html}");
        assert!(html.contains("measured for 2 of these 3 moves"), "{html}");
        assert!(
            html.contains("<strong>40 ms of CPU</strong> in <strong>400 ms of wall time</strong>"),
            "{html}"
        );
        assert!(html.contains("the other 360 ms it was waiting"), "{html}");
    }
}
