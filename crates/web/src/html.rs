//! HTML building blocks: the page layout, links, cards, numbers and times.
//! Pages are [maud](https://maud.lambda.xyz/) templates: `html!` checks
//! them when the crate compiles and escapes every value it is given, so that
//! text from outside (bot, owner and tournament names, fault details, record
//! text) cannot become markup. Only [`PreEscaped`] inserts markup as it is,
//! and only for markup this crate made (rendered Markdown, charts).

use std::fmt::Write as _;

pub use maud::{html, Markup, PreEscaped, Render};

use croupier_rules::{GameKind, Seat};
use croupier_store::web::{GameSummary, SeatSummary};

/// Escapes a path segment or query value (bot names are `[-_a-zA-Z0-9]`,
/// but a page must not break on anything else).
pub fn url(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A game's display name.
pub fn game_title(game: &str) -> &'static str {
    match game.parse::<GameKind>() {
        Ok(GameKind::SkullWhist) => "SkullWhist",
        Ok(GameKind::LoveLetter) => "Love Letter",
        Ok(GameKind::Goofspiel) => "Goofspiel",
        Err(_) => "Unknown game",
    }
}

/// The whole page around `body`. `json` is the page's JSON twin, if any.
pub fn layout(title: &str, json: Option<&str>, body: Markup) -> Markup {
    html! {
        (PreEscaped("<!doctype html>\n"))
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Croupier" }
                link rel="stylesheet" href="/static/croupier.css";
                link rel="icon" href="data:,";
                @if let Some(j) = json {
                    link rel="alternate" type="application/json" href=(j);
                }
            }
            body {
                header class="top" {
                    a class="brand" href="/" { span class="suit red" { "♥" } "Croupier" }
                    nav {
                        a href="/start" { "Start here" }
                        a href="/games" { "Games" }
                        a href="/bots" { "Bots" }
                        @for k in GameKind::ALL {
                            a href={ "/leaderboard/" (k.name()) } { (game_title(k.name())) }
                        }
                        a href="/tournaments" { "Tournaments" }
                        a href="/activity" { "Activity" }
                        a href="/rules" { "Rules" }
                        a href="/docs" { "API" }
                        a href="/about" { "About" }
                    }
                }
                main { (body) }
                footer {
                    "Croupier · card-game bot competitions"
                    @if let Some(j) = json {
                        " · " a href=(j) { "this page as JSON" }
                    }
                }
            }
        }
    }
}

/// Bot names by seat, for the replay's and the card table's text.
#[derive(Debug)]
pub struct Names(pub Vec<String>);

impl Names {
    /// The name of `seat`, in a span that never breaks it over lines.
    pub fn of(&self, seat: Seat) -> Markup {
        match self.0.get(seat.index()) {
            Some(name) => html! { span class="who" { (name) } },
            None => html! { span class="who" { "seat " (seat) } },
        }
    }
}

/// A link to a bot's page.
pub fn bot_link(name: &str) -> Markup {
    html! { a class="bot" href={ "/bots/" (url(name)) } { (name) } }
}

/// The head of a crosstable's column `i`: the bot's number, which its row's
/// head carries (see [`row_head`]), linking to the bot and naming it in its
/// title, as chess crosstables number their columns.
pub fn column_head(i: usize, name: &str) -> Markup {
    html! { th { a href={ "/bots/" (url(name)) } title=(name) { (i + 1) } } }
}

/// The head of a crosstable's row `i`: the bot's number and name.
pub fn row_head(i: usize, name: &str) -> Markup {
    html! { th { span class="no" { (i + 1) } (bot_link(name)) } }
}

/// A link to the versus page of two bots.
pub fn versus_href(a: &str, b: &str) -> String {
    format!("/versus/{}/{}", url(a), url(b))
}

/// An RFC 3339 time as `YYYY-MM-DD HH:MM:SS` (UTC), as text.
pub fn time(t: &str) -> String {
    let short: String = t.chars().take(19).collect();
    short.replace('T', " ")
}

/// [`time`] as markup whose date and time wrap between them on a phone,
/// never inside.
pub fn time_wrapping(t: &str) -> Markup {
    let text = time(t);
    let (date, clock) = text.split_once(' ').unwrap_or((&text, ""));
    html! { span { (date) } " " span { (clock) } }
}

/// A game's seed as the store keeps it (the 64 bits in an SQLite integer)
/// back as the unsigned number records hold and `croupier play --seed`
/// takes.
pub fn seed(stored: i64) -> u64 {
    u64::from_ne_bytes(stored.to_ne_bytes())
}

/// A duration in milliseconds, short and in the unit that reads: µs under
/// 1 ms, ms up to 1 s, seconds above (`420 µs`, `3.2 ms`, `37 ms`,
/// `4.50 s`, `24.0 s`).
pub fn duration_ms(v: f64) -> String {
    if v < 1.0 {
        format!("{:.0} µs", v * 1000.0)
    } else if v < 10.0 {
        format!("{v:.1} ms")
    } else if v < 1000.0 {
        format!("{v:.0} ms")
    } else if v < 10_000.0 {
        format!("{:.2} s", v / 1000.0)
    } else {
        format!("{:.1} s", v / 1000.0)
    }
}

/// A percentage of `part` in `whole`.
pub fn pct(part: i64, whole: i64) -> String {
    if whole <= 0 {
        "–".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// A SkullWhist card from its text form (`H05`), drawn with its suit.
pub fn sw_card(text: &str) -> Markup {
    let mut chars = text.chars();
    let (suit, colour) = match chars.next() {
        Some('C') => ("♣", "black"),
        Some('D') => ("♦", "red"),
        Some('H') => ("♥", "red"),
        Some('S') => ("♠", "black"),
        _ => return html! { code { (text) } },
    };
    let value: u32 = chars.as_str().parse().unwrap_or(0);
    html! { span class={ "card " (colour) } title=(text) { (value) i { (suit) } } }
}

/// A Love Letter card with its value.
pub fn ll_card(card: croupier_rules::loveletter::Card) -> Markup {
    let (n, v) = (card.name(), card.value());
    html! { span class={ "card ll ll" (v) } title={ (n) " (" (v) ")" } { (n) i { (v) } } }
}

/// A Goofspiel card (a number).
pub fn gs_card(value: u8, class: &str) -> Markup {
    html! { span class={ "card gs " (class) } { (value) } }
}

/// Seats of a game as "a 20 · b −10", winners in bold, forfeits marked.
pub fn seats_line(seats: &[SeatSummary]) -> Markup {
    html! {
        @for (i, s) in seats.iter().enumerate() {
            @if i > 0 { " " span class="vs" { "vs" } " " }
            @let class = match (s.rank, s.forfeited) {
                (_, true) => "seat forfeit",
                (Some(1), false) => "seat win",
                _ => "seat",
            };
            span class=(class) {
                (bot_link(&s.name))
                // The score stays on the line of its bot's name.
                @if let Some(v) = s.score { "\u{a0}" b { (v) } }
                @if s.forfeited { " " em { "forfeit" } }
            }
        }
    }
}

/// A table of games (id, game, seats and result, finish time).
pub fn games_table(games: &[GameSummary]) -> Markup {
    if games.is_empty() {
        return html! { p class="empty" { "No games yet." } };
    }
    html! {
        div class="scroll" { table class="games" {
            thead { tr {
                th { "Game" } th class="hide-narrow" { "Kind" }
                th { "Bots and scores" } th { "Finished" }
            } }
            tbody {
                @for g in games {
                    tr {
                        td { a href={ "/games/" (g.id) } { "#" (g.id) } }
                        td class="hide-narrow" { (game_title(&g.game)) }
                        td { (seats_line(&g.seats)) }
                        td class="when" {
                            @match &g.finished {
                                Some(t) => (time_wrapping(t)),
                                None => (g.status),
                            }
                            // The game's kind, where its column is hidden.
                            small class="show-phone" { (game_title(&g.game)) }
                        }
                    }
                }
            }
        } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_neutralises_markup() {
        assert_eq!(
            bot_link("<a href='x'>&\"</a>").into_string(),
            "<a class=\"bot\" href=\"/bots/%3Ca%20href%3D%27x%27%3E%26%22%3C%2Fa%3E\">\
&lt;a href='x'&gt;&amp;&quot;&lt;/a&gt;</a>"
        );
        assert_eq!(url("a b/c"), "a%20b%2Fc");
        assert_eq!(url("bot-1_x"), "bot-1_x");
    }

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(duration_ms(0.0421), "42 µs");
        assert_eq!(duration_ms(0.42), "420 µs");
        assert_eq!(duration_ms(3.24), "3.2 ms");
        assert_eq!(duration_ms(37.2), "37 ms");
        assert_eq!(duration_ms(4500.0), "4.50 s");
        assert_eq!(duration_ms(24_034.8), "24.0 s");
    }

    #[test]
    fn seeds_read_unsigned_as_records_write_them() {
        let s: u64 = 0xDEAD_BEEF_0123_4567_u64 | (1 << 63);
        assert_eq!(seed(s as i64), s);
        assert_eq!(seed(-1), u64::MAX);
        assert_eq!(seed(42), 42);
    }

    #[test]
    fn cards_show_suit_symbols_and_colours() {
        let card = |t: &str| sw_card(t).into_string();
        assert!(card("H05").contains("red") && card("H05").contains("♥"));
        assert!(card("S13").contains("black") && card("S13").contains(">13<"));
        assert!(card("<x>").contains("&lt;x&gt;"));
    }
}
