//! The table of a person's game as HTML: their observation, the legal
//! moves as buttons, the outcome, and what their seat has seen happen.

use crate::html::{bot_link, game_title, html, Markup};
use croupier_competition::human::{Table, View};

/// A value of an observation, readably.
fn value_html(v: &serde_json::Value) -> Markup {
    use serde_json::Value as V;
    match v {
        V::Null => html! { "–" },
        V::Bool(b) => html! { (if *b { "yes" } else { "no" }) },
        V::Number(n) => html! { (n) },
        V::String(s) => html! { (s) },
        V::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => html! {
            @if a.is_empty() { span class="empty" { "none" } }
            @for (i, x) in a.iter().enumerate() {
                @if i > 0 { " " }
                span class="chip" { (value_html(x)) }
            }
        },
        V::Array(a) => html! {
            ol start="0" { @for x in a { li { (value_html(x)) } } }
        },
        V::Object(m) => html! {
            dl class="obs" {
                @for (k, x) in m { dt { (k.replace('_', " ")) } dd { (value_html(x)) } }
            }
        },
    }
}

pub(super) fn table_html(t: &Table, v: &View) -> Markup {
    html! {
        div id="table" data-version=(v.version) data-status=(v.status) {
            h1 { (game_title(t.game.name())) " · game " (t.id) " " small { "you are seat " (t.seat) } }
            ul class="seats" {
                @for (i, s) in t.seats.iter().enumerate() {
                    li { "seat " (i) ": " @if i == t.seat { b { "you" } } @else { (bot_link(s)) } }
                }
            }
            @if let Some(n) = &v.notice { p class="notice" { (n) } }
            @match (v.status.as_str(), v.decision) {
                ("running", Some(d)) => {
                    @let secs = v.deadline_ms.unwrap_or(0) / 1000;
                    p id="turn" class="turn" {
                        b { "Your move." } " You have " (secs / 60) " min " (secs % 60) " s from when you were asked."
                    }
                    form method="post" action={ "/play/" (t.id) } class="moves" {
                        input type="hidden" name="decision" value=(d);
                        @for a in &v.legal {
                            button type="submit" name="action" value=(a) class="move" { (a) } " "
                        }
                    }
                },
                ("running", None) => {
                    p id="turn" class="waiting" { "Waiting for the other players…" }
                },
                (status, _) => {
                    p id="turn" class="over" {
                        "The game is over (" (status) "). "
                        @if let Some(o) = &v.outcome {
                            "Scores: "
                            @if let Some(a) = o["scores"].as_array() {
                                @for (i, s) in a.iter().enumerate() {
                                    @if i > 0 { ", " }
                                    @if i == t.seat { "you" } @else { (t.seats[i]) }
                                    " " (s)
                                }
                            }
                            ". "
                        }
                        a href={ "/games/" (t.id) } { "See the replay with every card" } " · "
                        a href={ "/play?game=" (t.game.name()) } { "play again" }
                    }
                },
            }
            @if let Some(obs) = &v.observation {
                h2 { "What you see" }
                @if v.decision.is_none() && v.status == "running" {
                    p class="hint" { "As of your last move; the events below are newer." }
                }
                (value_html(obs))
            }
            h2 { "What has happened" }
            ol id="seen" class="events" { @for e in &v.events { li { (e) } } }
        }
    }
}
