//! People rated apart from the bots (issue 48): the people-against-bots
//! leaderboard of each game (`/leaderboard/{game}/people`) and a person's
//! page (`/people/{name}`), each with its JSON twin. Every finished game a
//! person plays from the website rates the person and the bots at its table
//! in this pool only; the bots' ladder ratings never see those games.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use croupier_rules::GameKind;
use croupier_store::{PeopleRating, PersonGame};
use serde::Serialize;

use crate::html::{bot_link, game_title, html, layout, time, url, Markup};
use crate::page::{respond, Fmt, WebError};
use croupier_competition::services::Services;

/// Rows of a people's leaderboard.
const ROWS: i64 = 100;
/// Games on a person's page.
const GAMES: i64 = 50;

/// A person's or a bot's name in the people's pool, linked to its page.
fn who(r: &PeopleRating) -> Markup {
    html! {
        @if r.kind == "person" {
            a class="bot" href={ "/people/" (url(&r.name)) } { (r.name) } " " span class="tag" { "person" }
        } @else {
            (bot_link(&r.name))
        }
    }
}

fn wlt(r: &PeopleRating) -> Markup {
    crate::stats::wlt(r.wins, r.losses, r.ties)
}

#[derive(Debug, Serialize)]
pub struct Board {
    game: String,
    rows: Vec<PeopleRating>,
}

pub async fn leaderboard(
    State(state): State<Arc<Services>>,
    Path(game): Path<String>,
    fmt: Fmt,
) -> Response {
    let found = async {
        let kind = game
            .parse::<GameKind>()
            .map_err(|_| WebError::NotFound(format!("There is no game '{game}'.")))?;
        let rows = state
            .hub
            .store()
            .people_leaderboard(kind.name(), ROWS)
            .await?;
        Ok(Board {
            game: kind.name().to_string(),
            rows,
        })
    }
    .await;
    respond(fmt, found, |d| {
        let title = game_title(&d.game);
        let body = html! {
            h1 { (title) ": people against bots" }
            p class="lead" {
                "Every game a person plays from the website rates the person and the bots at the table here, \
        apart from the bots' own ratings (the ladder never sees these games). Ordered by μ − 3σ, as the "
                a href={ "/leaderboard/" (d.game) } { "bots' leaderboard" } " is. "
                a href={ "/play?game=" (d.game) } { "Play a bot" } " to enter."
            }
            @if d.rows.is_empty() {
                p class="empty" { "Nobody has finished a game against the bots yet." }
            } @else {
                div class="scroll" { table class="leaders" {
                    thead { tr {
                        th class="num" { "#" } th { "Who" } th class="num" { "μ − 3σ" } th class="num hide-phone" { "Rating" }
                        th class="num" { "Games" } th class="num" { "W–L–T" } th class="hide-phone" { "Last played" }
                    } }
                    tbody {
                        @for (i, r) in d.rows.iter().enumerate() {
                            tr {
                                td class="num" { (i + 1) }
                                td class="name" { (who(r)) }
                                td class="num" { (format!("{:.1}", r.conservative)) }
                                td class="num hide-phone" { (format!("{:.1}", r.mu)) " " small { (format!("± {:.1}", r.sigma)) } }
                                td class="num" { (r.games) }
                                td class="num" { (wlt(r)) }
                                td class="when hide-phone" { (r.last_played.as_deref().map(time).unwrap_or_default()) }
                            }
                        }
                    }
                } }
            }
        };
        layout(
            &format!("{title}: people against bots"),
            Some(&format!("/json/leaderboard/{}/people", d.game)),
            body,
        )
    })
}

#[derive(Debug, Serialize)]
pub struct Person {
    name: String,
    ratings: Vec<PeopleRating>,
    games: Vec<PersonGame>,
}

pub async fn person(
    State(state): State<Arc<Services>>,
    Path(name): Path<String>,
    fmt: Fmt,
) -> Response {
    let found = async {
        let store = state.hub.store();
        let ratings = store.person_ratings(&name).await?;
        let games = store.person_games(&name, GAMES).await?;
        if ratings.is_empty() && games.is_empty() {
            return Err(WebError::NotFound(format!(
                "Nobody named '{}' has played here.",
                name.chars().take(40).collect::<String>()
            )));
        }
        Ok(Person {
            name: name.clone(),
            ratings,
            games,
        })
    }
    .await;
    let move_time = state.people.limits().move_time;
    respond(fmt, found, |d| {
        let body = html! {
            h1 { (d.name) }
            p class="lead" {
                "A person, playing bots from the website, with "
                (crate::table::clock_text(move_time.as_millis() as u64)) " for each move. "
                a href="/play" { "Play a bot" }
            }
            h2 { "Ratings against bots" }
            @if d.ratings.is_empty() {
                p class="empty" { "No finished game yet." }
            } @else {
                div class="scroll" { table class="leaders" {
                    thead { tr {
                        th { "Game" } th class="num" { "μ − 3σ" } th class="num" { "Rating" } th class="num" { "Games" } th class="num" { "W–L–T" }
                    } }
                    tbody {
                        @for r in &d.ratings {
                            tr {
                                td { a href={ "/leaderboard/" (r.game) "/people" } { (game_title(&r.game)) } }
                                td class="num" { (format!("{:.1}", r.conservative)) }
                                td class="num" { (format!("{:.1}", r.mu)) " " small { (format!("± {:.1}", r.sigma)) } }
                                td class="num" { (r.games) }
                                td class="num" { (wlt(r)) }
                            }
                        }
                    }
                } }
            }
            h2 { "Last games" }
            div class="scroll" { table class="games" {
                thead { tr { th { "Game" } th { "Kind" } th { "Result" } th { "Finished" } } }
                tbody {
                    @for g in &d.games {
                        tr {
                            td { a href={ "/games/" (g.game_id) } { "#" (g.game_id) } }
                            td { (game_title(&g.game)) }
                            td {
                                @match (g.status.as_str(), g.rank) {
                                    ("finished", Some(1)) => { span class="w" { "first" } },
                                    ("finished", Some(r)) => { "rank " (r) },
                                    (s, _) => (s),
                                }
                                @if let Some(s) = g.score { " · " (s) }
                            }
                            td class="when" { (g.finished.as_deref().map(time).unwrap_or_default()) }
                        }
                    }
                }
            } }
        };
        layout(
            &d.name,
            Some(&format!("/json/people/{}", url(&d.name))),
            body,
        )
    })
}
