//! The games list (50 per page, filters by game and bot) and the game page
//! with its step-by-step replay (`?step=N`, no JavaScript).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use croupier_rules::{GameKind, Record};
use croupier_store::tournaments::{GamesFilter, Marked};
use croupier_store::web::{GameFilter, GameSummary};
use serde::Serialize;

use crate::html::{self, esc, game_title, games_table, layout, seats_line, time, url};
use crate::page::{respond, Fmt, WebError};
use crate::replay::{replay, Names, Replay};
use croupier_competition::services::Services;

/// Games per page.
pub const PER_PAGE: i64 = 50;

#[derive(Serialize)]
pub struct ListData {
    game: Option<&'static str>,
    bot: Option<String>,
    /// Only the games of this tournament (issue 15).
    tournament: Option<String>,
    /// `only` (tournament games alone) or `hide` (none of them); `None`:
    /// ladder and tournament games alike.
    tournaments: Option<&'static str>,
    page: i64,
    pages: i64,
    total: i64,
    games: Vec<GameSummary>,
}

fn param<'a>(q: &'a HashMap<String, String>, key: &str) -> Option<&'a str> {
    q.get(key).map(|s| s.trim()).filter(|s| !s.is_empty())
}

async fn list_data(state: &Services, q: &HashMap<String, String>) -> Result<ListData, WebError> {
    let store = state.hub.store();
    let game = match param(q, "game") {
        None => None,
        Some(g) => Some(
            g.parse::<GameKind>()
                .map_err(|_| WebError::BadRequest(format!("There is no game '{g}'.")))?
                .name(),
        ),
    };
    let bot = match param(q, "bot") {
        None => None,
        Some(name) => Some(
            store
                .web_bot(name)
                .await?
                .ok_or_else(|| WebError::NotFound(format!("There is no bot named '{name}'.")))?,
        ),
    };
    let page: i64 = match param(q, "page") {
        None => 1,
        Some(p) => p
            .parse::<i64>()
            .ok()
            .filter(|p| *p >= 1)
            .ok_or_else(|| WebError::BadRequest(format!("'{p}' is not a page number.")))?,
    };
    // Issue 15: tournament games by tournament, alone, or hidden.
    let tournament = match param(q, "tournament") {
        None => None,
        Some(name) => Some(
            store
                .tournaments()
                .tournament_by_name(name)
                .await?
                .ok_or_else(|| {
                    WebError::NotFound(format!("There is no tournament named '{name}'."))
                })?,
        ),
    };
    let marked = match param(q, "tournaments") {
        None | Some("all") => Marked::All,
        Some("only") => Marked::Only,
        Some("hide") => Marked::Hide,
        Some(other) => {
            return Err(WebError::BadRequest(format!(
                "tournaments={other}: use all, only or hide."
            )))
        }
    };
    let filter = GameFilter {
        game: game.map(str::to_string),
        bot: bot.as_ref().map(|b| b.id),
    };
    let by_tournament = (tournament.is_some() || marked != Marked::All).then(|| GamesFilter {
        game: filter.game.clone(),
        bot: filter.bot,
        tournament: tournament.as_ref().map(|t| t.id),
        marked,
    });
    let total = match &by_tournament {
        Some(f) => store.tournaments().count_filtered_games(f).await?,
        None => store.count_finished(&filter).await?,
    };
    let pages = ((total + PER_PAGE - 1) / PER_PAGE).max(1);
    if page > pages {
        return Err(WebError::NotFound(format!(
            "Page {page} does not exist: there are {pages} pages."
        )));
    }
    let offset = (page - 1) * PER_PAGE;
    let games = match &by_tournament {
        Some(f) => {
            store
                .tournaments()
                .filtered_games(f, offset, PER_PAGE)
                .await?
        }
        None => store.games_page(&filter, offset, PER_PAGE).await?,
    };
    Ok(ListData {
        game,
        bot: bot.map(|b| b.name),
        tournament: tournament.map(|t| t.name),
        tournaments: match marked {
            Marked::All => None,
            Marked::Only => Some("only"),
            Marked::Hide => Some("hide"),
        },
        page,
        pages,
        total,
        games,
    })
}

fn list_href(d: &ListData, page: i64) -> String {
    let mut q = Vec::new();
    if let Some(g) = d.game {
        q.push(format!("game={g}"));
    }
    if let Some(b) = &d.bot {
        q.push(format!("bot={}", url(b)));
    }
    if let Some(t) = &d.tournament {
        q.push(format!("tournament={}", url(t)));
    }
    if let Some(m) = d.tournaments {
        q.push(format!("tournaments={m}"));
    }
    if page != 1 {
        q.push(format!("page={page}"));
    }
    if q.is_empty() {
        "/games".into()
    } else {
        format!("/games?{}", q.join("&amp;"))
    }
}

fn pager(d: &ListData) -> String {
    if d.pages <= 1 {
        return String::new();
    }
    let mut out = String::from("<nav class=\"pager\" aria-label=\"pages\">");
    let link = |p: i64, text: &str| format!("<a href=\"{}\">{text}</a>", list_href(d, p));
    if d.page > 1 {
        out.push_str(&link(1, "« first"));
        out.push_str(&link(d.page - 1, "‹ newer"));
    }
    for p in (d.page - 2).max(1)..=(d.page + 2).min(d.pages) {
        if p == d.page {
            let _ = write!(out, "<span class=\"current\">{p}</span>");
        } else {
            out.push_str(&link(p, &p.to_string()));
        }
    }
    if d.page < d.pages {
        out.push_str(&link(d.page + 1, "older ›"));
        out.push_str(&link(d.pages, &format!("last ({}) »", d.pages)));
    }
    out.push_str("</nav>");
    out
}

pub async fn list(
    State(state): State<Arc<Services>>,
    Query(q): Query<HashMap<String, String>>,
    fmt: Fmt,
) -> Response {
    respond(fmt, list_data(&state, &q).await, |d| {
        let mut options = String::from("<option value=\"\">all games</option>");
        for k in GameKind::ALL {
            let sel = if d.game == Some(k.name()) {
                " selected"
            } else {
                ""
            };
            let _ = write!(
                options,
                "<option value=\"{}\"{sel}>{}</option>",
                k.name(),
                game_title(k.name())
            );
        }
        let mut marked = String::new();
        for (value, text) in [("", "shown"), ("only", "only"), ("hide", "hidden")] {
            let sel = if d.tournaments.unwrap_or("") == value {
                " selected"
            } else {
                ""
            };
            let _ = write!(marked, "<option value=\"{value}\"{sel}>{text}</option>");
        }
        let mut body = format!(
            "<h1>Games</h1><p class=\"lead\">{} finished {}games{}{}{}, newest first. Page {} of {}.</p>\
<form class=\"filters\" method=\"get\" action=\"/games\"><label>Game <select name=\"game\">{options}</select></label>\
<label>Bot <input name=\"bot\" value=\"{}\" placeholder=\"any bot\" size=\"14\"></label>\
<label>Tournament <input name=\"tournament\" value=\"{}\" placeholder=\"any\" size=\"12\"></label>\
<label>Tournament games <select name=\"tournaments\">{marked}</select></label><button type=\"submit\">Show</button></form>",
            d.total,
            match d.tournaments {
                Some("only") => "tournament ",
                Some("hide") => "ladder ",
                _ => "",
            },
            d.game.map(|g| format!(" of {}", game_title(g))).unwrap_or_default(),
            d.bot.as_deref().map(|b| format!(" with {}", esc(b))).unwrap_or_default(),
            d.tournament
                .as_deref()
                .map(|t| format!(" of tournament <a href=\"/tournaments/{}\">{}</a>", url(t), esc(t)))
                .unwrap_or_default(),
            d.page,
            d.pages,
            esc(d.bot.as_deref().unwrap_or("")),
            esc(d.tournament.as_deref().unwrap_or(""))
        );
        body.push_str(&games_table(&d.games));
        body.push_str(&pager(d));
        let json = list_href(d, d.page).replace("&amp;", "&");
        layout("Games", Some(&format!("/json{json}")), &body)
    })
}

#[derive(Serialize)]
pub struct GameData {
    game: GameSummary,
    /// Shown only once the deal is public (see [`croupier_live::visibility`]), as
    /// `croupier play --seed` and records write it (unsigned).
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
        record: raw_record.and_then(|r| serde_json::from_str(r).ok()),
        replay,
        step,
    })
}

fn game_html(d: &GameData) -> String {
    let g = &d.game;
    let id = g.id;
    let mut body = format!(
        "<h1>{} game #{id}</h1><p class=\"lead\">{}</p><p>{} · started {} · {} · {} · <a href=\"/rules/{}\">rules</a></p>",
        game_title(&g.game),
        seats_line(&g.seats),
        esc(&g.status),
        time(&g.started),
        g.finished.as_deref().map(|f| format!("finished {}", time(f))).unwrap_or_default(),
        match d.seed {
            Some(seed) => format!("seed {seed}"),
            None => "seed shown when the game is over".into(),
        },
        esc(&g.game)
    );
    if let Some(r) = &d.reason {
        let _ = write!(body, "<p class=\"empty\">{}</p>", esc(r));
    }
    let Some(replay) = &d.replay else {
        body.push_str(
            "<p class=\"empty\">No record yet: the replay appears when the game is over.</p>",
        );
        return body;
    };
    if let Some(e) = &replay.error {
        let _ = write!(
            body,
            "<p class=\"tag fault\">The record does not replay: {}</p>",
            esc(e)
        );
    }
    let n = replay.steps.len();
    // No fragment: the page opens at the top with the site's header, and
    // the step controls sit at the same place on every step.
    let step_href = |s: usize| format!("/games/{id}?step={s}");
    let mut pager = String::from("<nav class=\"pager stepper\" aria-label=\"steps\">");
    let nav = |out: &mut String, ok: bool, s: usize, text: &str, rel: &str| {
        if ok {
            let _ = write!(out, "<a href=\"{}\" rel=\"{rel}\">{text}</a>", step_href(s));
        } else {
            let _ = write!(out, "<span class=\"off\">{text}</span>");
        }
    };
    nav(&mut pager, d.step > 0, 0, "« deal", "first");
    nav(
        &mut pager,
        d.step > 0,
        d.step.saturating_sub(1),
        "‹ previous",
        "prev",
    );
    let _ = write!(
        pager,
        "<span class=\"current\">step {} of {n}</span>",
        d.step
    );
    nav(&mut pager, d.step < n, d.step + 1, "next ›", "next");
    nav(&mut pager, d.step < n, n, "end »", "last");
    pager.push_str("</nav>");
    let title = if d.step == 0 {
        "After the deal".to_string()
    } else {
        format!("After step {}", d.step)
    };
    let _ = write!(
        body,
        "<h2 id=\"state\">{title}</h2>{pager}<div class=\"state\">{}</div>",
        replay.panel
    );
    body.push_str("<h2>Every step</h2><div class=\"scroll\"><table class=\"steps\"><thead><tr><th>Step</th><th>Bot</th><th>Move</th><th class=\"num\">Time</th><th>What happened</th></tr></thead><tbody>");
    let _ = write!(
        body,
        "<tr id=\"step-0\"{}><td><a href=\"{}\">deal</a></td><td></td><td></td><td></td><td class=\"events\">{}</td></tr>",
        if d.step == 0 { " class=\"current\"" } else { "" },
        step_href(0),
        replay.deal_html.iter().map(|e| format!("<div>{e}</div>")).collect::<String>()
    );
    for s in &replay.steps {
        let name = g
            .seats
            .get(s.seat.index())
            .map(|x| esc(&x.name))
            .unwrap_or_else(|| format!("seat {}", s.seat));
        let fault = s
            .fault
            .as_ref()
            .map(|f| {
                format!(
                    "<div><span class=\"tag fault\">{}</span> {}</div>",
                    esc(&f.kind),
                    esc(&f.detail)
                )
            })
            .unwrap_or_default();
        let ms = match s.ms {
            _ if s.builtin => {
                "<span class=\"builtin\" title=\"an in-process built-in strategy\">built-in</span>"
                    .into()
            }
            Some(m) => format!("{m:.1} ms"),
            None => "–".into(),
        };
        let _ = write!(
            body,
            "<tr id=\"step-{i}\"{cur}><td><a href=\"{href}\">{i}</a></td><td>{name}</td><td>{}</td><td class=\"num\">{ms}</td><td class=\"events\">{fault}{}</td></tr>",
            s.action_html,
            s.events_html.iter().map(|e| format!("<div>{e}</div>")).collect::<String>(),
            i = s.index,
            cur = if s.index == d.step { " class=\"current\"" } else { "" },
            href = step_href(s.index),
        );
    }
    body.push_str("</tbody></table></div>");
    body
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
            &game_html(d),
        )
    })
}
