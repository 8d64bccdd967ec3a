//! Home, About, Bots online and Activity.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::State;
use axum::response::{Html, IntoResponse, Response};
use croupier_rules::GameKind;
use croupier_store::web::{BotStats, GameFilter, GameSummary, WebBot};
use serde::Serialize;

use crate::html::{bot_link, esc, game_title, games_table, layout, pct};
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
        let mut body = format!(
            "<h1>Bots play cards here, around the clock</h1>\
<p class=\"lead\">SkullWhist, Love Letter and Goofspiel between programs: ratings, head-to-head records and a replay of every game.</p>\
<p class=\"notice\"><b>New here?</b> <a href=\"/start\">Start here</a>: a working bot to copy in Python or JavaScript \
for each way to connect, and the command that puts it in its first game on this site.</p>\
<div class=\"grid\"><div class=\"panel\"><div class=\"stat\">{}<small>games in progress</small></div></div>\
<div class=\"panel\"><div class=\"stat\">{}<small>SkullWhist bots waiting for an opponent</small></div></div>\
<div class=\"panel\"><div class=\"stat\">{}<small>games finished</small></div></div></div>",
            d.games_in_progress,
            d.skullwhist_waiting,
            d.finished_games
        );
        body.push_str("<h2>Leaders</h2><div class=\"grid\">");
        for l in &d.leaders {
            let _ = write!(
                body,
                "<div class=\"panel\"><h3><a href=\"/leaderboard/{}\">{}</a></h3><ol>",
                l.game,
                game_title(l.game)
            );
            for b in &l.bots {
                let _ = write!(
                    body,
                    "<li>{} <span class=\"rating\">{:.1} <small>± {:.1}</small></span></li>",
                    bot_link(&b.name),
                    b.mu,
                    b.sigma
                );
            }
            if l.bots.is_empty() {
                body.push_str("<li class=\"empty\">No rated bots yet.</li>");
            }
            body.push_str("</ol></div>");
        }
        body.push_str("</div><h2>Live games</h2>");
        body.push_str(&games_table(&d.running));
        // wf (issue 16): watch live, or play.
        body.push_str("<h3>Watch as they happen</h3>");
        body.push_str(&crate::live::live_table(&d.watch));
        body.push_str("<p><a class=\"button\" href=\"/play\">Play a bot yourself →</a> <a href=\"/live\">All live games</a></p>");
        body.push_str("<h2>Recent results</h2>");
        body.push_str(&games_table(&d.recent));
        body.push_str("<p><a class=\"button\" href=\"/games\">All games →</a></p><h2>News</h2><ul class=\"news\">");
        for (date, text) in &d.news {
            let _ = write!(body, "<li><b>{}</b> {}</li>", esc(date), esc(text));
        }
        body.push_str("</ul><h2>Bring your own bot</h2><div class=\"grid\">\
<a class=\"panel\" href=\"/start\"><h3>Start here</h3><p>A first bot in Python or JavaScript, from copying it to its first game here.</p></a>\
<a class=\"panel\" href=\"/api/\"><h3>SkullWhist REST API</h3><p>The 2014 SkullSpace API: bots written for the hackathon play unchanged.</p></a>\
<a class=\"panel\" href=\"/docs\"><h3>Every dialect</h3><p>Croupier JSON for any game, the GOPS runner, the Love Letter manager.</p></a>\
<a class=\"panel\" href=\"/rules\"><h3>Rules for bot authors</h3><p>What a bot sees, what it may do, how it scores.</p></a></div>");
        layout("Home", Some("/json/home"), &body)
    })
}

pub async fn about() -> Response {
    let body = format!(
        "<article class=\"doc\"><h1>About Croupier</h1>\
<p>Croupier runs competitions between card-game bots, in the spirit of the SkullSpace Game AI Hackathon (2014), \
the HackSoc Love Letter AI competition, the Psychological Jujitsu challenge and the GOPS quiz. Bots written for those \
events play here unchanged. See the <a href=\"/rules\">rules</a> and the <a href=\"/docs\">API documentation</a> to write one.</p>\
<h2>Ratings</h2><p>Every finished game updates a Weng-Lin rating (a Bayesian skill rating of the TrueSkill family that \
handles 2 to 4 players) per bot and game: μ is the estimated skill, σ its uncertainty; bots start at 25 ± 8.3. \
Leaderboards order bots by the conservative estimate μ − 3σ. A forfeit counts as a loss for the forfeiting bot only: \
it ranks last and the other seats share first place. A win is a sole first place, a tie a shared one.</p>\
<p>Head to head, each pair of seats of a game counts once (the better rank wins the pair). The score is \
(wins + ½ ties) / games, shown with its 95 % Wilson confidence interval.</p>\
<h2>Bots online</h2><p>A bot is online when it is seated in a game in progress or finished a game in the last {} minutes.</p>\
<h2>Pages and their JSON twins</h2><p>Every data page has a JSON twin at the same path under <code>/json</code>:</p>\
<table><thead><tr><th>Page</th><th>URL</th><th>JSON</th></tr></thead><tbody>\
<tr><td>Home</td><td><code>/</code></td><td><a href=\"/json/home\"><code>/json/home</code></a></td></tr>\
<tr><td>Leaderboard</td><td><code>/leaderboard/{{game}}</code></td><td><code>/json/leaderboard/{{game}}</code></td></tr>\
<tr><td>Bots online</td><td><code>/bots</code></td><td><a href=\"/json/bots\"><code>/json/bots</code></a></td></tr>\
<tr><td>Bot</td><td><code>/bots/{{name}}</code></td><td><code>/json/bots/{{name}}</code></td></tr>\
<tr><td>Versus</td><td><code>/versus/{{a}}/{{b}}</code></td><td><code>/json/versus/{{a}}/{{b}}</code></td></tr>\
<tr><td>Games</td><td><code>/games?game=&amp;bot=&amp;page=</code></td><td><a href=\"/json/games\"><code>/json/games</code></a></td></tr>\
<tr><td>Game and replay</td><td><code>/games/{{id}}?step=N</code></td><td><code>/json/games/{{id}}</code></td></tr>\
<tr><td>Activity</td><td><code>/activity</code></td><td><a href=\"/json/activity\"><code>/json/activity</code></a></td></tr>\
</tbody></table><p>Games are <code>skullwhist</code>, <code>loveletter</code> and <code>goofspiel</code>. Times are UTC.</p></article>",
        ONLINE_SECS / 60
    );
    Html(layout("About", None, &body)).into_response()
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
        let mut body = format!(
            "<h1>Bots</h1><p class=\"lead\">Online: {}. {} SkullWhist bots are waiting for an opponent.</p>",
            esc(&d.definition),
            d.skullwhist_waiting
        );
        body.push_str("<h2>Online now</h2>");
        if d.online.is_empty() {
            body.push_str("<p class=\"empty\">No bot is online.</p>");
        } else {
            body.push_str("<div class=\"scroll\"><table><thead><tr><th>Bot</th><th>Game</th><th>Kind</th><th>Now</th></tr></thead><tbody>");
            for o in &d.online {
                let now = if o.in_game {
                    "<span class=\"tag live\">playing</span>"
                } else {
                    "<span class=\"tag\">recently played</span>"
                };
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{now}</td></tr>",
                    bot_link(&o.bot.name),
                    game_title(&o.bot.game),
                    esc(&o.bot.kind)
                );
            }
            body.push_str("</tbody></table></div>");
        }
        body.push_str("<h2>Every rated bot</h2><div class=\"scroll\"><table><thead><tr><th>Bot</th><th>Game</th><th class=\"num\">Rating</th><th class=\"num\">Games</th><th class=\"num\">Won</th><th>Last game</th></tr></thead><tbody>");
        for b in &d.rated {
            let _ = write!(
                body,
                "<tr><td>{}</td><td><a href=\"/leaderboard/{}\">{}</a></td><td class=\"num rating\">{:.1} <small>± {:.1}</small></td>\
<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"when\">{}</td></tr>",
                bot_link(&b.name),
                esc(&b.game),
                game_title(&b.game),
                b.mu,
                b.sigma,
                b.games,
                pct(b.wins, b.games),
                b.last_played.as_deref().map(crate::html::time).unwrap_or_default()
            );
        }
        body.push_str("</tbody></table></div>");
        layout("Bots", Some("/json/bots"), &body)
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
        let mut legend = String::from("<div class=\"legend\">");
        for (k, c) in GameKind::ALL.iter().zip(GAME_COLOURS) {
            let _ = write!(
                legend,
                "<span><i style=\"background:{c}\"></i>{}</span>",
                game_title(k.name())
            );
        }
        legend.push_str("</div>");
        let body = format!(
            "<h1>Activity</h1><p class=\"lead\">Games finished per minute over the last hour (UTC): {} in all.</p>{}{legend}",
            d.total,
            svg::bar_chart(&bars, &GAME_COLOURS, &labels)
        );
        layout("Activity", Some("/json/activity"), &body)
    })
}
