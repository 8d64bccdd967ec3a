//! The tournament pages: `/tournaments` (the list) and `/tournaments/{name}`
//! (progress, standings with tie-breaks, the crosstable, every game with a
//! link to its replay, [`GAMES_PER_PAGE`] a page), each with its JSON twin
//! under `/json`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::html::{bot_link, game_title, html, layout, url, Markup};
use crate::page::{respond, Fmt, WebError};
use croupier_competition::services::Services;
use croupier_competition::tournaments::kept::Kept;
use croupier_competition::tournaments::list::{self, ListPage};
use croupier_competition::tournaments::view::{self, Brief, TournamentView};

mod crosstable;

/// The pages and their twins (merged into the website's routes).
pub fn routes() -> Router<Arc<Services>> {
    let mut r = Router::new();
    for prefix in ["", "/json"] {
        r = r
            .route(&format!("{prefix}/tournaments"), get(list))
            .route(&format!("{prefix}/tournaments/{{name}}"), get(show));
    }
    r
}

/// A bot's page lists its newest tournaments, at most this many.
pub const OF_BOT: usize = 10;

/// A tournament's page lists its games this many at a time, by round,
/// table and game (`?games=N`; its JSON twin has every game).
pub const GAMES_PER_PAGE: usize = 200;

/// A page of the tournaments list, newest first (`?page=N`; the API's
/// list is the same page).
async fn list_data(state: &Services, q: &HashMap<String, String>) -> Result<ListPage, WebError> {
    let page = crate::games_list::number(q, "page", "page number")?.unwrap_or(1);
    let list = list::list_page(state.hub.store().as_ref(), &state.kept, page).await?;
    if list.past_the_end() {
        return Err(WebError::NotFound(list.past_the_end_why()));
    }
    Ok(list)
}

/// Links to the newer and older pages of the list, when there are more.
fn pager(d: &ListPage) -> Markup {
    let current = format!("page {} of {}", d.page, d.pages);
    page_links(
        "pages",
        (d.page, d.pages),
        |p| format!("/tournaments?page={p}"),
        ["‹ newer", "older ›"],
        &current,
    )
}

/// Links from page `page` of `pages` to the one before and the one after
/// (`labels`), around the text `current`; nothing when there is one page.
fn page_links(
    aria: &str,
    (page, pages): (i64, i64),
    href: impl Fn(i64) -> String,
    [back, forward]: [&str; 2],
    current: &str,
) -> Markup {
    if pages <= 1 {
        return html! {};
    }
    html! {
        nav class="pager" aria-label=(aria) {
            @if page > 1 {
                a href=(href(page - 1)) { (back) }
            }
            span class="current" { (current) }
            @if page < pages {
                a href=(href(page + 1)) { (forward) }
            }
        }
    }
}

fn when(unix: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// A table of tournaments (also on bot pages).
pub fn briefs_table(list: &[Brief]) -> Markup {
    if list.is_empty() {
        return html! { p class="empty" { "None yet." } };
    }
    html! {
        div class="scroll" { table class="briefs" {
            thead { tr {
                th { "Tournament" } th { "Game" } th class="hide-phone" { "Format" } th class="num hide-phone" { "Bots" }
                th { "Status" } th { "Winner" } th class="num hide-phone" { "Games" } th class="hide-phone" { "Starts" }
            } }
            tbody {
                @for b in list {
                    @let t = &b.tournament;
                    tr {
                        td class="name" { a href={ "/tournaments/" (url(&t.name)) } { (t.name) } }
                        td {
                            (game_title(&t.game))
                            @if let Some(v) = &t.variant { " " small { (v) } }
                        }
                        td class="hide-phone" { (t.format) }
                        td class="num hide-phone" { (b.entries) }
                        td { (t.status) }
                        td { @if let Some(w) = &b.winner { (bot_link(w)) } @else { "–" } }
                        td class="num hide-phone" { (b.progress.done) " / " (b.progress.total) }
                        td class="hide-phone" { (when(t.starts_at)) }
                    }
                }
            }
        } }
    }
}

async fn list(
    State(state): State<Arc<Services>>,
    Query(q): Query<HashMap<String, String>>,
    fmt: Fmt,
) -> Response {
    respond(fmt, list_data(&state, &q).await, |d| {
        let body = html! {
            h1 { "Tournaments" }
            p class="lead" {
                "Round-robins and Swiss tournaments over the registered bots, announced by an organiser, \
        frozen at the start and played beside the ladder. "
                a href="/docs/tournaments" { "How they work" } "."
            }
            (briefs_table(&d.tournaments))
            (pager(d))
        };
        let json = match d.page {
            1 => "/json/tournaments".to_string(),
            p => format!("/json/tournaments?page={p}"),
        };
        layout("Tournaments", Some(&json), body)
    })
}

async fn show_data(state: &Services, name: &str) -> Result<Arc<TournamentView>, WebError> {
    let store = state.hub.store();
    let t = store
        .tournaments()
        .tournament_by_name(name)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("There is no tournament '{name}'.")))?;
    Ok(state.kept.view(store.as_ref(), t).await?)
}

fn render(d: &TournamentView, page: i64) -> Markup {
    let t = &d.tournament;
    let json = format!("/json/tournaments/{}", url(&t.name));
    let shown = GamesPage::of(&d.games, page);
    let games = shown.games;
    let p = &d.progress;
    let withdrawn: Vec<_> = d.entries.iter().filter(|e| e.withdrawn.is_some()).collect();
    let hosted: Vec<_> = d
        .entries
        .iter()
        .filter_map(|e| e.version.map(|v| (e.name.as_str(), v)))
        .collect();
    let body = html! {
        // A tournament in progress refreshes itself (no script needed).
        @if t.status == "running" {
            meta http-equiv="refresh" content="30";
        }
        h1 { (t.name) }
        p class="lead" {
            (game_title(&t.game)) " " (t.variant.as_deref().unwrap_or_default()) " · " (t.format) " · "
            @if t.format == "swiss" { (t.rounds) " rounds, " }
            (t.deals) " deal" @if t.deals != 1 { "s" } " per pairing" @if t.duplicate { ", duplicate" }
            " · " (t.move_ms) " ms per move"
            @if let Some(b) = t.budget_ms { ", " (b) " ms per game" }
            " · starts " span class="nowrap" { (crate::html::time(&when(t.starts_at))) }
        }
        p {
            strong { (t.status) } ": " (p.done) " of " (p.total) " games played"
            @if p.running > 0 { " (" (p.running) " in progress)" }
            ", round " (p.current_round) " of " (p.rounds) "."
        }
        @if let Some(r) = &t.reason { p class="empty" { (r) } }
        @if t.status == "scheduled" {
            h2 { "Entrants" }
            @if t.all_bots {
                p { "Every active bot of the game when it starts: their entries are frozen then." }
            } @else {
                p { (d.entries.len()) " bots entered; entries are frozen at the start." }
                ul class="entrants" { @for e in &d.entries { li { (bot_link(&e.name)) } } }
            }
        }
        h2 { "Standings" }
        p { "After round " (d.standings_after_round) ". Ties are broken by Buchholz, then the points among the tied bots, then a rating from this tournament's games, then the pairing number." }
        div class="scroll" { table class="standings wide" {
            thead { tr {
                th class="num" { "#" } th { "Bot" } th class="num" { "Points" } th class="num" { "Buchholz" }
                th class="num" { span class="col-name" { "Head-to-head" } abbr class="col-no" title="head-to-head" { "H2H" } } th class="num" { "Rating" } th class="num" { "Byes" }
                th class="num" { "Games" } th class="num" { "Faulty" }
            } }
            tbody {
                @for s in &d.standings {
                    tr {
                        td class="num" { (s.rank) }
                        td class="name" { (bot_link(&s.name)) }
                        td class="num" { (s.points) }
                        td class="num" { (s.buchholz) }
                        td class="num" { (s.head_to_head) }
                        td class="num" { (format!("{:.1}", s.rating)) }
                        td class="num" { (s.byes) }
                        td class="num" { (s.games) }
                        td class="num" { (s.faulty) }
                    }
                }
            }
        } }
        @if !withdrawn.is_empty() {
            h3 { "Withdrawn" }
            ul {
                @for e in &withdrawn {
                    li { (bot_link(&e.name)) ": " (e.withdrawn.as_deref().unwrap_or_default()) }
                }
            }
        }
        @if !hosted.is_empty() {
            p {
                "Hosted programs play the version that was active at the start: "
                @for (i, (name, v)) in hosted.iter().enumerate() {
                    @if i > 0 { ", " }
                    (bot_link(name)) " version " (v)
                }
                "."
            }
        }
        (crosstable::section(&d.crosstable, &json))
        h2 id="games" { "Games" }
        p {
            a href={ "/games?tournament=" (url(&t.name)) } { "Its finished games in the games list" } " ("
            a href="/games?tournaments=hide" { "ladder games only" } ", "
            a href="/games?tournaments=only" { "every tournament's games" } ")."
        }
        @if d.games.is_empty() {
            p class="empty" { "None yet." }
        }
        (shown.pager(&t.name))
        @for round in rounds(games) {
            h3 { "Round " (round) @if shown.began == Some(round) { " (continued)" } }
            div class="scroll" { table class="round" {
                thead { tr {
                    th class="num" { "Table" } th class="num" { "Game" } th { "Seats and scores" } th { "Status" }
                } }
                tbody {
                    @for g in games.iter().filter(|g| g.round == round) {
                        tr {
                            td class="num" { (g.table + 1) }
                            td class="num" { (g.game + 1) }
                            td { (game_seats(g)) }
                            td {
                                @match g.id {
                                    Some(id) if g.status == "running" => {
                                        a href={ "/games/" (id) } { (g.status) } " · "
                                        a class="watch" href={ "/live/" (id) } { "watch" }
                                    },
                                    Some(id) => a href={ "/games/" (id) } { (g.status) },
                                    None => (g.status),
                                }
                            }
                        }
                    }
                }
            } }
            // A round's byes follow its last game.
            @if let Some(b) = d.byes.iter().find(|b| b.round == round && shown.goes_on != Some(round)) {
                p class="byes" {
                    "Bye: "
                    @for (i, name) in b.bots.iter().enumerate() { @if i > 0 { ", " } (bot_link(name)) }
                }
            }
        }
        (shown.pager(&t.name))
    };
    layout(&t.name, Some(&json), body)
}

/// The rounds that have games among `games`, in order.
fn rounds(games: &[view::Game]) -> Vec<i64> {
    let mut rounds: Vec<i64> = games.iter().map(|g| g.round).collect();
    rounds.sort_unstable();
    rounds.dedup();
    rounds
}

/// A game's seats, each with its score once the game is done, the winner
/// in bold ("a 20 vs b −10"); ranks when no score was kept.
fn game_seats(g: &view::Game) -> Markup {
    html! {
        @for (i, name) in g.seats.iter().enumerate() {
            @if i > 0 { " " span class="vs" { "vs" } " " }
            @let won = g.ranks.get(i) == Some(&1);
            span class=(if won { "seat win" } else { "seat" }) {
                (bot_link(name))
                @if let Some(Some(score)) = g.scores.get(i) {
                    " " b { (score) }
                } @else if let Some(rank) = g.ranks.get(i) {
                    " " small { "rank " (rank) }
                }
            }
        }
    }
}

async fn show(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    fmt: Fmt,
) -> Response {
    let view = match show_data(&state, &name).await {
        Ok(view) => view,
        Err(e) => return e.page(fmt),
    };
    // The JSON twin has every game (and every pair), written once per page
    // kept: the page is the HTML page's.
    if fmt == Fmt::Json {
        return json_twin(&view)
            .await
            .unwrap_or_else(|| WebError::Internal.page(fmt));
    }
    let page = || {
        let page = crate::games_list::number(&q, "games", "page of games")?.unwrap_or(1);
        let pages = games_pages(view.games.len());
        if page > pages {
            return Err(WebError::NotFound(format!(
                "Tournament '{name}' has {pages} page{} of games.",
                if pages == 1 { "" } else { "s" }
            )));
        }
        Ok(page)
    };
    match page() {
        Ok(page) => respond(fmt, Ok(view), |v| render(v, page)),
        Err(e) => e.page(fmt),
    }
}

/// A tournament's page as JSON (the twin, and the API's
/// `GET /v1/tournaments/{name}`): written once per page kept, a big
/// tournament's off the runtime's threads ([`view::json::json_of`]); `None` if it
/// cannot be written (logged) or the runtime is shutting down.
pub async fn json_twin(view: &Arc<TournamentView>) -> Option<Response> {
    let json = view::json::json_of(view).await?;
    Some(([(header::CONTENT_TYPE, "application/json")], json).into_response())
}

/// How many pages of [`GAMES_PER_PAGE`] games `games` make (one, when
/// there are none).
fn games_pages(games: usize) -> i64 {
    i64::try_from(games.div_ceil(GAMES_PER_PAGE).max(1)).unwrap_or(i64::MAX)
}

/// Page `page` (from 1) of a tournament's games, as its page shows them.
struct GamesPage<'a> {
    /// Its games.
    games: &'a [view::Game],
    /// How many games come before them.
    before: usize,
    /// Every game of the tournament.
    total: usize,
    page: i64,
    /// Its first round, if that round began on an earlier page.
    began: Option<i64>,
    /// Its last round, if that round goes on on a later page.
    goes_on: Option<i64>,
}

impl<'a> GamesPage<'a> {
    fn of(all: &'a [view::Game], page: i64) -> Self {
        let before = usize::try_from(page - 1)
            .unwrap_or(0)
            .saturating_mul(GAMES_PER_PAGE)
            .min(all.len());
        let games = &all[before..(before + GAMES_PER_PAGE).min(all.len())];
        // The round of the game next to this page's `edge` game, if the
        // same.
        let shared = |edge: Option<&view::Game>, next: Option<&view::Game>| {
            edge.zip(next)
                .and_then(|(e, n)| (e.round == n.round).then_some(e.round))
        };
        GamesPage {
            games,
            before,
            total: all.len(),
            page,
            began: shared(
                games.first(),
                before.checked_sub(1).and_then(|i| all.get(i)),
            ),
            goes_on: shared(games.last(), all.get(before + games.len())),
        }
    }

    /// Links to the earlier and later games, when they do not fit on one
    /// page.
    fn pager(&self, name: &str) -> Markup {
        let current = format!(
            "games {}–{} of {}",
            self.before + 1,
            self.before + self.games.len(),
            self.total
        );
        page_links(
            "pages of games",
            (self.page, games_pages(self.total)),
            |p| format!("/tournaments/{}?games={p}#games", url(name)),
            ["‹ earlier", "later ›"],
            &current,
        )
    }
}

/// The newest [`OF_BOT`] tournaments a bot is entered in (for its page),
/// and how many it is entered in.
pub async fn of_bot(
    store: &Arc<dyn croupier_store::Store>,
    kept: &Kept,
    bot: croupier_store::BotId,
) -> Result<(Vec<Brief>, usize), WebError> {
    let all = store.tournaments().bot_tournaments(bot).await?;
    let entered = all.len();
    Ok((
        list::briefs(store.as_ref(), kept, all.into_iter().take(OF_BOT)).await?,
        entered,
    ))
}

/// Whether a game's deal must stay secret although the game itself is
/// over: another game of its tournament plays the same deal and is not over
/// (duplicate deals). The one rule of `visibility`, fed every game sharing
/// the deal.
pub async fn deal_secret(
    store: &Arc<dyn croupier_store::Store>,
    game: i64,
) -> Result<bool, WebError> {
    Ok(store.tournaments().deal_pending(game).await?)
}

#[cfg(test)]
mod tests;
