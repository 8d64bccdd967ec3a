//! A person's game as the card table: their observation drawn by the one
//! table renderer, the legal moves as the cards themselves (buttons of a
//! plain form), the clock of their move, the result, and what their seat
//! has seen happen.

use std::str::FromStr;

use croupier_competition::human::{unix_ms, Table, View};
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{GameKind, Seat};

use crate::html::Names;
use crate::html::{game_title, html, Markup};
use crate::replay::Show;
use crate::table::{render, Ctx, Over};

/// The names at the person's table: theirs reads "you".
fn names(t: &Table) -> Names {
    let mut names = t.seats.clone();
    if let Some(me) = names.get_mut(t.seat) {
        "you".clone_into(me);
    }
    Names(names)
}

/// The result of a game that is over, from the view's outcome.
fn over(v: &View) -> Option<Over> {
    (v.status != "running").then(|| Over {
        status: v.status.clone(),
        scores: v
            .outcome
            .as_ref()
            .and_then(|o| o["scores"].as_array())
            .map(|a| a.iter().map(serde_json::Value::as_i64).collect())
            .unwrap_or_default(),
    })
}

fn game_table<G: Show>(t: &Table, v: &View) -> Markup {
    let names = names(t);
    let you = Seat(t.seat as u8);
    let obs = v
        .observation
        .clone()
        .and_then(|o| serde_json::from_value::<G::Observation>(o).ok());
    let legal: Vec<(G::Action, String)> = v
        .legal
        .iter()
        .filter_map(|text| Some((G::Action::from_str(text).ok()?, text.clone())))
        .collect();
    let deciding = v.status == "running" && v.decision.is_some() && !legal.is_empty();
    let left_ms = match (v.asked_at, v.deadline_ms) {
        (Some(at), Some(limit)) if deciding => Some((at + limit).saturating_sub(unix_ms())),
        _ => None,
    };
    let over = over(v);
    let events: Vec<Markup> = v
        .events
        .iter()
        .filter_map(|e| serde_json::from_str::<G::Event>(e).ok())
        .map(|e| G::event_html(&e, &names))
        .collect();
    // The person's own hand shows in their seat unless it is their move:
    // then it is the buttons of the form below (`hand_below`).
    let drawn = obs.as_ref().map(|o| {
        let mut hands: Vec<Option<Vec<Markup>>> = vec![None; names.0.len()];
        if let Some(h) = hands.get_mut(t.seat) {
            *h = Some(G::own_hand(o));
        }
        render::<G>(
            o,
            &Ctx {
                names: &names,
                you: Some(you),
                to_act: if deciding { vec![you] } else { Vec::new() },
                left_ms,
                hands,
                over: over.clone(),
                hand_below: deciding,
            },
        )
    });
    html! {
        @match &obs {
            Some(o) => {
                @if let Some(d) = &drawn { (d) }
                @if deciding {
                    @if let Some(d) = v.decision {
                        form method="post" action={ "/play/" (t.id) } class="moves" {
                            input type="hidden" name="decision" value=(d);
                            (G::moves(o, &legal, &names))
                        }
                    }
                }
            },
            None if over.is_none() => p id="turn" class="waiting" { "The cards are being dealt…" },
            None => {},
        }
        @if over.is_some() {
            // Who won is said once, under the table (`render`).
            p class="over" {
                a href={ "/games/" (t.id) } { "See the replay with every card" } " · "
                a href={ "/play?game=" (t.game.name()) } { "play again" }
            }
        }
        @if !events.is_empty() {
            details class="seen" open {
                summary { "What you have seen happen, newest first (" (events.len()) " events)" }
                ol id="seen" class="events" { @for e in events.iter().rev() { li { (e) } } }
            }
        }
    }
}

pub(super) fn table_html(t: &Table, v: &View) -> Markup {
    let table = match t.game {
        GameKind::SkullWhist => game_table::<SkullWhist>(t, v),
        GameKind::LoveLetter => game_table::<LoveLetter>(t, v),
        GameKind::Goofspiel => game_table::<Goofspiel>(t, v),
    };
    html! {
        div id="table" data-version=(v.version) data-status=(v.status) {
            h1 { (game_title(t.game.name())) " · game " (t.id) }
            p class="hint" {
                "You play as " a href={ "/people/" (crate::html::url(&t.player)) } { (t.player) }
                ": your rating against the bots is on "
                a href={ "/leaderboard/" (t.game.name()) "/people" } { "the people's leaderboard" } "."
            }
            @if let Some(n) = &v.notice { p class="notice" { (n) } }
            (table)
        }
    }
}
