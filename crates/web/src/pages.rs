//! Home, About, Bots online and Activity.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{Html, IntoResponse, Response};
use croupier_rules::GameKind;
use croupier_store::web::{BotStats, GameFilter, GameSummary, WebBot};
use serde::Serialize;

use crate::html::{bot_link, game_title, games_table, html, layout, pct, time, Markup};
use crate::page::{respond, rfc3339_ago, Fmt, WebError};
use crate::svg;
use croupier_competition::services::Services;

/// How recently a bot must have finished a game to count as online.
pub const ONLINE_SECS: u64 = 15 * 60;

/// News on the home page, newest first: (date, text). Plain text.
const NEWS: &[(&str, &str)] = &[
    (
        "2026-11",
        "Ratings and the website: every game now moves a Weng-Lin rating, and every game has a step-by-step replay.",
    ),
    (
        "2026-11",
        "Love Letter and Goofspiel join SkullWhist: bots of the HackSoc and GOPS competitions play unchanged.",
    ),
    (
        "2026-10",
        "The 2014 SkullSpace REST API is back: bots written for the hackathon connect without a change.",
    ),
];

/// Series colours of the three games, in `GameKind::ALL` order.
pub const GAME_COLOURS: [&str; 3] = ["#0f5132", "#8e3b6b", "#2f5ea8"];

#[derive(Serialize)]
pub struct Leaders {
    game: &'static str,
    bots: Vec<BotStats>,
}

#[derive(Serialize)]
pub struct HomeData {
    games_in_progress: i64,
    skullwhist_live: usize,
    skullwhist_waiting: usize,
    finished_games: i64,
    running: Vec<GameSummary>,
    recent: Vec<GameSummary>,
    leaders: Vec<Leaders>,
    news: Vec<(&'static str, &'static str)>,
    /// wf (issue 16): games to watch as they happen.
    watch: Vec<croupier_live::live_games::LiveSummary>,
}

async fn home_data(state: &Services) -> Result<HomeData, WebError> {
    let store = state.hub.store();
    let (live, waiting) = state.hub.counts();
    let mut leaders = Vec::new();
    for k in GameKind::ALL {
        let mut bots = store.leaderboard(k.name()).await?;
        bots.truncate(3);
        leaders.push(Leaders {
            game: k.name(),
            bots,
        });
    }
    Ok(HomeData {
        games_in_progress: store.count_games("running").await?,
        skullwhist_live: live,
        skullwhist_waiting: waiting,
        finished_games: store.count_finished(&GameFilter::default()).await?,
        running: store.running_games(10).await?,
        recent: store.games_page(&GameFilter::default(), 0, 12).await?,
        leaders,
        news: NEWS.to_vec(),
        watch: state.live.list(), // wf (issue 16)
    })
}

pub async fn home(State(state): State<Arc<Services>>, fmt: Fmt) -> Response {
    respond(fmt, home_data(&state).await, |d| {
        let body = html! {
            h1 { "Bots play cards here, around the clock" }
            p class="lead" { "SkullWhist, Love Letter and Goofspiel between programs: ratings, head-to-head records and a replay of every game." }
            p class="notice" {
                b { "New here?" } " " a href="/start" { "Start here" }
                ": a working bot to copy in Python or JavaScript for each way to connect, and the command that puts it in its first game on this site."
            }
            div class="grid stats" {
                div class="panel" { div class="stat" { (d.games_in_progress) small { "games in progress" } } }
                div class="panel" { div class="stat" { (d.skullwhist_waiting) small { "SkullWhist bots waiting for an opponent" } } }
                div class="panel" { div class="stat" { (d.finished_games) small { "games finished" } } }
            }
            h2 { "Leaders" }
            div class="grid" {
                @for l in &d.leaders {
                    div class="panel" {
                        h3 { a href={ "/leaderboard/" (l.game) } { (game_title(l.game)) } }
                        ol {
                            @for b in &l.bots {
                                // The number shown is the one they are ordered by.
                                li {
                                    (bot_link(&b.name)) " "
                                    span class="rating" title=(format!("μ {:.1} ± {:.1}", b.mu, b.sigma)) {
                                        (format!("{:.1}", b.conservative)) " " small { "μ − 3σ" }
                                    }
                                }
                            }
                            @if l.bots.is_empty() { li class="empty" { "No rated bots yet." } }
                        }
                    }
                }
            }
            h2 { "Live games" }
            (live_games(&d.running, &d.watch))
            p class="actions" { a class="button" href="/play" { "Play a bot yourself →" } " " a href="/live" { "All live games" } }
            h2 { "Recent results" }
            (games_table(&d.recent))
            p { a class="button" href="/games" { "All games →" } }
            h2 { "News" }
            ul class="news" {
                @for (date, text) in &d.news { li { b { (date) } " " (text) } }
            }
            h2 { "Bring your own bot" }
            div class="grid" {
                a class="panel" href="/start" { h3 { "Start here" } p { "A first bot in Python or JavaScript, from copying it to its first game here." } }
                a class="panel" href="/api/" { h3 { "SkullWhist REST API" } p { "The 2014 SkullSpace API: bots written for the hackathon play unchanged." } }
                a class="panel" href="/docs" { h3 { "Every dialect" } p { "Croupier JSON for any game, the GOPS runner, the Love Letter manager." } }
                a class="panel" href="/rules" { h3 { "Rules for bot authors" } p { "What a bot sees, what it may do, how it scores." } }
            }
        };
        layout("Home", Some("/json/home"), body)
    })
}

pub async fn about() -> Response {
    let twins: [(&str, &str, &str, bool); 11] = [
        ("Home", "/", "/json/home", true),
        (
            "Leaderboard",
            "/leaderboard/{game}",
            "/json/leaderboard/{game}",
            false,
        ),
        ("Bots online", "/bots", "/json/bots", true),
        ("Bot", "/bots/{name}", "/json/bots/{name}", false),
        ("Versus", "/versus/{a}/{b}", "/json/versus/{a}/{b}", false),
        ("Games", "/games", "/json/games", true),
        (
            "Game and replay",
            "/games/{id}?step=N",
            "/json/games/{id}",
            false,
        ),
        ("Activity", "/activity", "/json/activity", true),
        ("Tournaments", "/tournaments", "/json/tournaments", true),
        (
            "Tournament",
            "/tournaments/{name}",
            "/json/tournaments/{name}",
            false,
        ),
        ("Live games", "/live", "/json/live", true),
    ];
    let body = html! {
        article class="doc" {
            h1 { "About Croupier" }
            p {
                "Croupier runs competitions between card-game bots, in the spirit of the SkullSpace Game AI Hackathon (2014), \
    the HackSoc Love Letter AI competition, the Psychological Jujitsu challenge and the GOPS quiz. Bots written for those \
    events play here unchanged. See the " a href="/rules" { "rules" } " and the " a href="/docs" { "API documentation" } " to write one."
            }
            h2 { "Ratings" }
            p {
                "Every finished game updates a Weng-Lin rating (a Bayesian skill rating of the TrueSkill family that \
    handles 2 to 4 players) per bot and game: μ is the estimated skill, σ its uncertainty; bots start at 25 ± 8.3. \
    Leaderboards order bots by the conservative estimate μ − 3σ. A forfeit counts as a loss for the forfeiting bot only: \
    it ranks last and the other seats share first place. A win is a sole first place, a tie a shared one."
            }
            p {
                "Head to head, each pair of seats of a game counts once (the better rank wins the pair). The score is \
    (wins + ½ ties) / games, shown with its 95 % Wilson confidence interval."
            }
            h2 { "Bots online" }
            p { "A bot is online when it is seated in a game in progress or finished a game in the last " (ONLINE_SECS / 60) " minutes." }
            h2 { "Pages and their JSON twins" }
            p { "Every data page has a JSON twin at the same path under " code { "/json" } ":" }
            table {
                thead { tr { th { "Page" } th { "URL" } th { "JSON" } } }
                tbody {
                    @for (page, path, json, linked) in twins {
                        tr {
                            td { (page) }
                            td { code { (path) } }
                            td {
                                @if linked { a href=(json) { code { (json) } } } @else { code { (json) } }
                            }
                        }
                    }
                }
            }
            p {
                "The games list takes the filters " code { "game" } ", " code { "bot" } ", " code { "tournament" } ", "
                code { "tournaments" } " (" code { "hide" } " or " code { "only" } ") and " code { "page" } ", as in "
                code { "/games?game=goofspiel&page=2" } "; its twin takes the same. "
                "Games are " code { "skullwhist" } ", " code { "loveletter" } " and " code { "goofspiel" } ". "
                "Times are UTC; in JSON every time is RFC 3339 (" code { "2026-12-01T12:00:00Z" } "), and seeds are "
                "strings of digits, since a 64-bit seed above 2" sup { "53" } " loses digits as a JavaScript number. "
                "A JSON path that names nothing answers HTTP 404 with " code { "{\"error\": reason}" } "."
            }
        }
    };
    Html(layout("About", None, body).into_string()).into_response()
}

#[derive(Serialize)]
pub struct OnlineBot {
    #[serde(flatten)]
    bot: WebBot,
    in_game: bool,
}

#[derive(Serialize)]
pub struct BotsData {
    definition: String,
    skullwhist_waiting: usize,
    online: Vec<OnlineBot>,
    rated: Vec<BotStats>,
}

async fn bots_data(state: &Services) -> Result<BotsData, WebError> {
    let store = state.hub.store();
    let online = store
        .online_bots(&rfc3339_ago(ONLINE_SECS))
        .await?
        .into_iter()
        .map(|(bot, in_game)| OnlineBot { bot, in_game })
        .collect();
    Ok(BotsData {
        definition: format!(
            "in a game in progress, or finished a game in the last {} minutes",
            ONLINE_SECS / 60
        ),
        skullwhist_waiting: state.hub.counts().1,
        online,
        rated: store.all_stats().await?,
    })
}

pub async fn bots(State(state): State<Arc<Services>>, fmt: Fmt) -> Response {
    respond(fmt, bots_data(&state).await, |d| {
        let body = html! {
            h1 { "Bots" }
            p class="lead" { "Online: " (d.definition) ". " (d.skullwhist_waiting) " SkullWhist bots are waiting for an opponent." }
            h2 { "Online now" }
            @if d.online.is_empty() {
                p class="empty" { "No bot is online." }
            } @else {
                div class="scroll" { table class="bots" {
                    thead { tr { th { "Bot" } th { "Game" } th class="hide-phone" { "Kind" } th { "Now" } } }
                    tbody {
                        @for o in &d.online {
                            tr {
                                td class="name" { (bot_link(&o.bot.name)) }
                                td { (game_title(&o.bot.game)) }
                                td class="hide-phone" { (o.bot.kind) }
                                td {
                                    @if o.in_game { span class="tag live" { "playing" } }
                                    @else { span class="tag" { "recently played" } }
                                }
                            }
                        }
                    }
                } }
            }
            h2 { "Every rated bot" }
            div class="scroll" { table class="bots" {
                thead { tr {
                    th { "Bot" } th { "Game" } th class="num" { "Rating" } th class="num" { "Games" }
                    th class="num hide-phone" { "Won" } th class="hide-phone" { "Last game" }
                } }
                tbody {
                    @for b in &d.rated {
                        tr {
                            td class="name" { (bot_link(&b.name)) }
                            td { a href={ "/leaderboard/" (b.game) } { (game_title(&b.game)) } }
                            td class="num rating" { (format!("{:.1}", b.mu)) " " small class="hide-phone" { (format!("± {:.1}", b.sigma)) } }
                            td class="num" { (b.games) }
                            td class="num hide-phone" { (pct(b.wins, b.games)) }
                            td class="when hide-phone" { (b.last_played.as_deref().map(time).unwrap_or_default()) }
                        }
                    }
                }
            } }
        };
        layout("Bots", Some("/json/bots"), body)
    })
}

#[derive(Serialize)]
pub struct Minute {
    minute: String,
    games: Vec<(&'static str, i64)>,
}

#[derive(Serialize)]
pub struct ActivityData {
    since: String,
    total: i64,
    minutes: Vec<Minute>,
}

async fn activity_data(state: &Services) -> Result<ActivityData, WebError> {
    // 60 whole minutes ending with the current one.
    let minutes: Vec<String> = (0..60u64)
        .rev()
        .map(|k| rfc3339_ago(k * 60).chars().take(16).collect())
        .collect();
    let since = format!("{}:00", minutes.first().cloned().unwrap_or_default());
    let counts = state.hub.store().activity(&since).await?;
    let mut out: Vec<Minute> = minutes
        .into_iter()
        .map(|minute| Minute {
            minute,
            games: GameKind::ALL.iter().map(|k| (k.name(), 0)).collect(),
        })
        .collect();
    let mut total = 0;
    for c in counts {
        if let Some(m) = out.iter_mut().find(|m| m.minute == c.minute) {
            if let Some(slot) = m.games.iter_mut().find(|(g, _)| *g == c.game) {
                slot.1 += c.games;
                total += c.games;
            }
        }
    }
    Ok(ActivityData {
        since,
        total,
        minutes: out,
    })
}

pub async fn activity(State(state): State<Arc<Services>>, fmt: Fmt) -> Response {
    respond(fmt, activity_data(&state).await, |d| {
        let bars: Vec<Vec<i64>> = d
            .minutes
            .iter()
            .map(|m| m.games.iter().map(|(_, n)| *n).collect())
            .collect();
        let labels: Vec<(usize, String)> = d
            .minutes
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 10 == 0 || *i == d.minutes.len() - 1)
            .map(|(i, m)| (i, m.minute.chars().skip(11).collect()))
            .collect();
        let body = html! {
            h1 { "Activity" }
            p class="lead" { "Games finished per minute over the last hour (UTC): " (d.total) " in all." }
            (svg::bar_chart(&bars, &GAME_COLOURS, &labels))
            (legend())
        };
        layout("Activity", Some("/json/activity"), body)
    })
}

/// One table of the games in progress: those the store knows (every
/// instance's), each with a link to watch it where this instance can show
/// it, and games only this instance knows of yet.
fn live_games(running: &[GameSummary], watch: &[croupier_live::live_games::LiveSummary]) -> Markup {
    let stored: std::collections::HashSet<i64> = running.iter().map(|g| g.id).collect();
    let watched = |id: i64| watch.iter().find(|w| w.id == id);
    let only_live: Vec<_> = watch.iter().filter(|w| !stored.contains(&w.id)).collect();
    if running.is_empty() && only_live.is_empty() {
        return html! { p class="empty" { "No game in progress right now." } };
    }
    html! {
        div class="scroll" { table class="live-games" {
            thead { tr {
                th { "Game" } th class="hide-narrow" { "Kind" } th { "Seats" }
                th class="hide-narrow" { "Started" } th class="num" { "Watching" } th {}
            } }
            tbody {
                @for g in running {
                    @let w = watched(g.id);
                    tr {
                        td { a href={ "/games/" (g.id) } { "#" (g.id) } }
                        td class="hide-narrow" { (game_title(&g.game)) }
                        td { (crate::html::seats_line(&g.seats)) }
                        td class="hide-narrow when" { (time(&g.started)) }
                        td class="num" { (w.map_or(0, |w| w.spectators)) }
                        td { @if w.is_some() { a class="watch" href={ "/live/" (g.id) } { "watch" } } }
                    }
                }
                @for w in &only_live {
                    tr {
                        td { a href={ "/games/" (w.id) } { "#" (w.id) } }
                        td class="hide-narrow" { (game_title(&w.game)) }
                        td { (crate::live::live_seats(w)) }
                        td class="hide-narrow when" { (time(&w.started)) }
                        td class="num" { (w.spectators) }
                        td { a class="watch" href={ "/live/" (w.id) } { "watch" } }
                    }
                }
            }
        } }
    }
}

/// The colours of the three games' series, named.
pub fn legend() -> Markup {
    html! {
        div class="legend" {
            @for (k, c) in GameKind::ALL.iter().zip(GAME_COLOURS) {
                span { i style={ "background:" (c) } {} (game_title(k.name())) }
            }
        }
    }
}
