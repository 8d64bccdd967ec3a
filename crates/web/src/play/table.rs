//! The table of a person's game as HTML: their observation, the legal
//! moves as buttons, the outcome, and what their seat has seen happen.

use std::fmt::Write as _;

use crate::html::{bot_link, esc, game_title};
use croupier_competition::human::{Table, View};

/// A value of an observation, readably.
fn value_html(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value as V;
    match v {
        V::Null => out.push('–'),
        V::Bool(b) => out.push_str(if *b { "yes" } else { "no" }),
        V::Number(n) => out.push_str(&n.to_string()),
        V::String(s) => out.push_str(&esc(s)),
        V::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            if a.is_empty() {
                out.push_str("<span class=\"empty\">none</span>");
            }
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str("<span class=\"chip\">");
                value_html(x, out);
                out.push_str("</span>");
            }
        }
        V::Array(a) => {
            out.push_str("<ol start=\"0\">");
            for x in a {
                out.push_str("<li>");
                value_html(x, out);
                out.push_str("</li>");
            }
            out.push_str("</ol>");
        }
        V::Object(m) => {
            out.push_str("<dl class=\"obs\">");
            for (k, x) in m {
                let _ = write!(out, "<dt>{}</dt><dd>", esc(&k.replace('_', " ")));
                value_html(x, out);
                out.push_str("</dd>");
            }
            out.push_str("</dl>");
        }
    }
}

pub(super) fn table_html(t: &Table, v: &View) -> String {
    let mut out = format!(
        "<div id=\"table\" data-version=\"{}\" data-status=\"{}\"><h1>{} · game {} <small>you are seat {}</small></h1>",
        v.version,
        esc(&v.status),
        game_title(t.game.name()),
        t.id,
        t.seat
    );
    out.push_str("<ul class=\"seats\">");
    for (i, s) in t.seats.iter().enumerate() {
        let who = if i == t.seat {
            "<b>you</b>".to_string()
        } else {
            bot_link(s)
        };
        let _ = write!(out, "<li>seat {i}: {who}</li>");
    }
    out.push_str("</ul>");
    if let Some(n) = &v.notice {
        let _ = write!(out, "<p class=\"notice\">{}</p>", esc(n));
    }
    match (v.status.as_str(), v.decision) {
        ("running", Some(d)) => {
            let secs = v.deadline_ms.unwrap_or(0) / 1000;
            let _ = write!(
                out,
                "<p id=\"turn\" class=\"turn\"><b>Your move.</b> You have {} min {} s from when you were asked.</p>\
<form method=\"post\" action=\"/play/{}\" class=\"moves\"><input type=\"hidden\" name=\"decision\" value=\"{d}\">",
                secs / 60,
                secs % 60,
                t.id
            );
            for a in &v.legal {
                let _ = write!(
                    out,
                    "<button type=\"submit\" name=\"action\" value=\"{a}\" class=\"move\">{a}</button> ",
                    a = esc(a)
                );
            }
            out.push_str("</form>");
        }
        ("running", None) => {
            out.push_str("<p id=\"turn\" class=\"waiting\">Waiting for the other players…</p>");
        }
        (status, _) => {
            let _ = write!(
                out,
                "<p id=\"turn\" class=\"over\">The game is over ({}). ",
                esc(status)
            );
            if let Some(o) = &v.outcome {
                let scores = o["scores"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .enumerate()
                            .map(|(i, s)| {
                                let who = if i == t.seat {
                                    "you".to_string()
                                } else {
                                    esc(&t.seats[i])
                                };
                                format!("{who} {s}")
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                let _ = write!(out, "Scores: {scores}. ");
            }
            let _ = write!(
                out,
                "<a href=\"/games/{}\">See the replay with every card</a> · <a href=\"/play?game={}\">play again</a></p>",
                t.id,
                t.game.name()
            );
        }
    }
    if let Some(obs) = &v.observation {
        out.push_str("<h2>What you see</h2>");
        if v.decision.is_none() && v.status == "running" {
            out.push_str("<p class=\"hint\">As of your last move; the events below are newer.</p>");
        }
        value_html(obs, &mut out);
    }
    out.push_str("<h2>What has happened</h2><ol id=\"seen\" class=\"events\">");
    for e in &v.events {
        let _ = write!(out, "<li>{}</li>", esc(e));
    }
    out.push_str("</ol></div>");
    out
}
