//! The games list: finished games, newest first, 50 a page, filtered by
//! game, bot and tournament.
//!
//! A page is read from the nearer end of its list: page numbers in the
//! older half walk the index from the oldest game, so the last page costs
//! what the first does. The `older` and `newer` links carry the game they
//! start from (`before=ID`, `after=ID`) with the page number they show, so
//! that paging through a list of a million games reads 50 games a page
//! and skips none (issue 53). Tournament lists page by number alone.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use croupier_rules::GameKind;
use croupier_store::tournaments::{GamesFilter, Marked};
use croupier_store::web::{GameFilter, GameSummary, PageAt};
use croupier_store::GameId;
use serde::Serialize;

use crate::html::{game_title, games_table, html, layout, url, Markup};
use crate::page::{respond, Fmt, WebError};
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
    /// The page's number: `null` for a page reached by `before` or
    /// `after` without one.
    page: Option<i64>,
    pages: i64,
    total: i64,
    /// The page's games are those finished before this game's end.
    before: Option<GameId>,
    /// The page's games are the 50 finished next after this game's end.
    after: Option<GameId>,
    /// The JSON twin of the next older page, if there is one.
    older: Option<String>,
    /// The JSON twin of the next newer page, if there is one.
    newer: Option<String>,
    games: Vec<GameSummary>,
}

impl ListData {
    /// A list of tournament games, which pages by number alone.
    fn numbers_only(&self) -> bool {
        self.tournament.is_some() || self.tournaments.is_some()
    }
}

pub(crate) fn param<'a>(q: &'a HashMap<String, String>, key: &str) -> Option<&'a str> {
    q.get(key).map(|s| s.trim()).filter(|s| !s.is_empty())
}

/// A positive number from the query, or a clear 400.
pub(crate) fn number(
    q: &HashMap<String, String>,
    key: &str,
    what: &str,
) -> Result<Option<i64>, WebError> {
    crate::page::positive_param(q, key)
        .map_err(|shown| WebError::BadRequest(format!("'{shown}' is not a {what}.")))
}

/// Where page `page` of `total` games lies: from the newest end in the
/// newer half, else from the oldest; and how many games it holds.
fn nearer_end(page: i64, total: i64) -> (PageAt, i64) {
    let offset = (page - 1) * PER_PAGE;
    let end = (offset + PER_PAGE).min(total);
    let from_oldest = total - end;
    if from_oldest < offset {
        (PageAt::Oldest(from_oldest), (end - offset).max(0))
    } else {
        (PageAt::Newest(offset), PER_PAGE)
    }
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
    let page = number(q, "page", "page number")?;
    let before = number(q, "before", "game id")?;
    let after = number(q, "after", "game id")?;
    if before.is_some() && after.is_some() {
        return Err(WebError::BadRequest(
            "A page is either before a game or after one, not both.".into(),
        ));
    }
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
    let cursor = before.or(after);
    if cursor.is_some() && by_tournament.is_some() {
        return Err(WebError::BadRequest(
            "Lists of tournament games page by number: use page=N.".into(),
        ));
    }
    let total = match &by_tournament {
        Some(f) => store.tournaments().count_filtered_games(f).await?,
        None => store.count_finished(&filter).await?,
    };
    let pages = ((total + PER_PAGE - 1) / PER_PAGE).max(1);
    let not_there =
        |p: i64| WebError::NotFound(format!("Page {p} does not exist: there are {pages} pages."));
    if let Some(p) = page.filter(|p| *p > pages) {
        return Err(not_there(p));
    }
    // Page 1 is the newest page: a cursor with it is read as the cursor's
    // page, without a number.
    let page = page.filter(|p| cursor.is_none() || *p != 1);
    let (page, games, cursor_kept) = match (&by_tournament, cursor) {
        (Some(f), _) => {
            let page = page.unwrap_or(1);
            let games = store
                .tournaments()
                .filtered_games(f, (page - 1) * PER_PAGE, PER_PAGE)
                .await?;
            (Some(page), games, false)
        }
        (None, None) => {
            let page = page.unwrap_or(1);
            let (at, limit) = nearer_end(page, total);
            (Some(page), store.games_at(&filter, at, limit).await?, false)
        }
        (None, Some(id)) => {
            let at = match before {
                Some(_) => PageAt::Before(id),
                None => PageAt::After(id),
            };
            let games = store.games_at(&filter, at, PER_PAGE).await?;
            if games.is_empty() && !finished(state, id).await? {
                return Err(WebError::NotFound(format!(
                    "There is no finished game #{id}."
                )));
            }
            if after.is_some() && (games.len() as i64) < PER_PAGE {
                // Fewer than a page newer than it: the newest page.
                let games = store.games_at(&filter, PageAt::Newest(0), PER_PAGE).await?;
                (Some(1), games, false)
            } else {
                (page, games, true)
            }
        }
    };
    let mut d = ListData {
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
        before: before.filter(|_| cursor_kept),
        after: after.filter(|_| cursor_kept),
        older: None,
        newer: None,
        games,
    };
    d.older = older(&d).map(|h| format!("/json{h}"));
    d.newer = newer(&d).map(|h| format!("/json{h}"));
    Ok(d)
}

/// Whether game `id` is a finished game.
async fn finished(state: &Services, id: GameId) -> Result<bool, WebError> {
    let game = state.hub.store().game_summary(id).await?;
    Ok(game.is_some_and(|g| g.status == "finished"))
}

/// The list's address with `extra` query parts (`page=…`, `before=…`).
fn list_href(d: &ListData, extra: &[String]) -> String {
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
    q.extend(extra.iter().cloned());
    if q.is_empty() {
        "/games".into()
    } else {
        format!("/games?{}", q.join("&"))
    }
}

/// Page `page` by its number (page 1 has none).
fn page_href(d: &ListData, page: i64) -> String {
    if page == 1 {
        list_href(d, &[])
    } else {
        list_href(d, &[format!("page={page}")])
    }
}

/// This page's own address.
fn self_href(d: &ListData) -> String {
    let mut extra = Vec::new();
    if let Some(p) = d.page.filter(|p| *p != 1) {
        extra.push(format!("page={p}"));
    }
    if let Some(id) = d.before {
        extra.push(format!("before={id}"));
    }
    if let Some(id) = d.after {
        extra.push(format!("after={id}"));
    }
    list_href(d, &extra)
}

/// The next older page: the games before this page's last.
fn older(d: &ListData) -> Option<String> {
    let more = match d.page {
        Some(p) => p < d.pages,
        None => d.games.len() as i64 == PER_PAGE,
    };
    if !more {
        return None;
    }
    if d.numbers_only() {
        return d.page.map(|p| page_href(d, p + 1));
    }
    let last = d.games.last()?.id;
    let mut extra = Vec::new();
    if let Some(p) = d.page {
        extra.push(format!("page={}", p + 1));
    }
    extra.push(format!("before={last}"));
    Some(list_href(d, &extra))
}

/// The next newer page: the games after this page's first.
fn newer(d: &ListData) -> Option<String> {
    match d.page {
        Some(1) => None,
        Some(2) => Some(page_href(d, 1)),
        Some(p) if d.numbers_only() => Some(page_href(d, p - 1)),
        page => {
            let first = d.games.first()?.id;
            let mut extra = Vec::new();
            if let Some(p) = page {
                extra.push(format!("page={}", p - 1));
            }
            extra.push(format!("after={first}"));
            Some(list_href(d, &extra))
        }
    }
}

/// Page `p`'s link from page `page`: the next ones either way are the
/// `older` and `newer` links (from a game), the others by number.
fn neighbour_href(d: &ListData, page: i64, p: i64) -> String {
    let near = if p == page + 1 {
        older(d)
    } else if p + 1 == page {
        newer(d)
    } else {
        None
    };
    near.unwrap_or_else(|| page_href(d, p))
}

fn pager(d: &ListData) -> Markup {
    if d.pages <= 1 {
        return html! {};
    }
    let link = |href: String, text: &str| html! { a href=(href) { (text) } };
    let at_first = d.page == Some(1);
    let at_last = d.page == Some(d.pages);
    html! {
        nav class="pager" aria-label="pages" {
            @if !at_first {
                (link(page_href(d, 1), "« first"))
            }
            @if let Some(href) = newer(d) {
                (link(href, "‹ newer"))
            }
            @if let Some(page) = d.page {
                @for p in (page - 2).max(1)..=(page + 2).min(d.pages) {
                    @if p == page {
                        span class="current" { (p) }
                    } @else {
                        (link(neighbour_href(d, page, p), &p.to_string()))
                    }
                }
            }
            @if let Some(href) = older(d) {
                (link(href, "older ›"))
            }
            @if !at_last {
                (link(page_href(d, d.pages), &format!("last ({}) »", d.pages)))
            }
        }
    }
}

/// Where the page lies, in words.
fn position(d: &ListData) -> String {
    match (d.page, d.before, d.after) {
        (Some(p), _, _) => format!("Page {p} of {}.", d.pages),
        (None, Some(id), _) => format!("Finished before game #{id}."),
        (None, _, Some(id)) => format!("Finished after game #{id}."),
        (None, None, None) => String::new(),
    }
}

pub async fn list(
    State(state): State<Arc<Services>>,
    Query(q): Query<HashMap<String, String>>,
    fmt: Fmt,
) -> Response {
    respond(fmt, list_data(&state, &q).await, |d| {
        let marked = d.tournaments.unwrap_or("");
        let body = html! {
            h1 { "Games" }
            p class="lead" {
                (d.total) " finished "
                (match d.tournaments {
                    Some("only") => "tournament ",
                    Some("hide") => "ladder ",
                    _ => "",
                })
                "games"
                @if let Some(g) = d.game { " of " (game_title(g)) }
                @if let Some(b) = &d.bot { " with " (b) }
                @if let Some(t) = &d.tournament {
                    " of tournament " a href={ "/tournaments/" (url(t)) } { (t) }
                }
                ", newest first. " (position(d))
            }
            form class="filters" method="get" action="/games" {
                label { "Game " select name="game" {
                    option value="" { "all games" }
                    @for k in GameKind::ALL {
                        option value=(k.name()) selected[d.game == Some(k.name())] { (game_title(k.name())) }
                    }
                } }
                label { "Bot " input name="bot" value=(d.bot.as_deref().unwrap_or("")) placeholder="any bot" size="14"; }
                label { "Tournament " input name="tournament" value=(d.tournament.as_deref().unwrap_or("")) placeholder="any" size="12"; }
                label { "Tournament games " select name="tournaments" {
                    @for (value, text) in [("", "shown"), ("only", "only"), ("hide", "hidden")] {
                        option value=(value) selected[marked == value] { (text) }
                    }
                } }
                button type="submit" { "Show" }
            }
            (games_table(&d.games))
            (pager(d))
        };
        let json = self_href(d);
        layout("Games", Some(&format!("/json{json}")), body)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_read_from_the_nearer_end() {
        // 1,000 games: 20 pages of 50.
        assert_eq!(nearer_end(1, 1000), (PageAt::Newest(0), 50));
        assert_eq!(nearer_end(10, 1000), (PageAt::Newest(450), 50));
        assert_eq!(nearer_end(11, 1000), (PageAt::Oldest(450), 50));
        assert_eq!(nearer_end(20, 1000), (PageAt::Oldest(0), 50));
        // 1,020 games: the last page holds 20.
        assert_eq!(nearer_end(21, 1020), (PageAt::Oldest(0), 20));
        assert_eq!(nearer_end(20, 1020), (PageAt::Oldest(20), 50));
        // Fewer than a page.
        assert_eq!(nearer_end(1, 7), (PageAt::Newest(0), 50));
        assert_eq!(nearer_end(1, 0), (PageAt::Newest(0), 50));
    }
}
