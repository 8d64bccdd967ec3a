//! HTML building blocks: escaping, the page layout, links, cards, numbers
//! and times. Pages are plain strings built with `format!`; everything that
//! comes from outside (bot names, fault details, record text) goes through
//! [`esc`].

use std::fmt::Write as _;

use croupier_rules::GameKind;
use croupier_store::web::{GameSummary, SeatSummary};

/// Escapes text for HTML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

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
pub fn layout(title: &str, json: Option<&str>, body: &str) -> String {
    let twin = json
        .map(|j| {
            format!(
                "<link rel=\"alternate\" type=\"application/json\" href=\"{}\">",
                esc(j)
            )
        })
        .unwrap_or_default();
    let twin_link = json
        .map(|j| format!(" · <a href=\"{}\">this page as JSON</a>", esc(j)))
        .unwrap_or_default();
    let mut games = String::new();
    for k in GameKind::ALL {
        let _ = write!(
            games,
            "<a href=\"/leaderboard/{}\">{}</a>",
            k.name(),
            game_title(k.name())
        );
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title} · Croupier</title><link rel=\"stylesheet\" href=\"/static/croupier.css\">\
<link rel=\"icon\" href=\"data:,\">{twin}</head><body>\
<header class=\"top\"><a class=\"brand\" href=\"/\"><span class=\"suit red\">♥</span>Croupier</a>\
<nav><a href=\"/start\">Start here</a><a href=\"/games\">Games</a><a href=\"/bots\">Bots</a>{games}<a href=\"/tournaments\">Tournaments</a><a href=\"/activity\">Activity</a>\
<a href=\"/rules\">Rules</a><a href=\"/docs\">API</a><a href=\"/about\">About</a></nav></header>\
<main>{body}</main><footer>Croupier · card-game bot competitions{twin_link}</footer></body></html>",
        title = esc(title),
    )
}

/// A link to a bot's page.
pub fn bot_link(name: &str) -> String {
    format!(
        "<a class=\"bot\" href=\"/bots/{}\">{}</a>",
        url(name),
        esc(name)
    )
}

/// A link to the versus page of two bots.
pub fn versus_href(a: &str, b: &str) -> String {
    format!("/versus/{}/{}", url(a), url(b))
}

/// An RFC 3339 time as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn time(t: &str) -> String {
    let short: String = t.chars().take(19).collect();
    esc(&short.replace('T', " "))
}

/// A game's seed as the store keeps it (the 64 bits in an SQLite integer)
/// back as the unsigned number records hold and `croupier play --seed`
/// takes.
pub fn seed(stored: i64) -> u64 {
    u64::from_ne_bytes(stored.to_ne_bytes())
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
pub fn sw_card(text: &str) -> String {
    let mut chars = text.chars();
    let (suit, colour) = match chars.next() {
        Some('C') => ("♣", "black"),
        Some('D') => ("♦", "red"),
        Some('H') => ("♥", "red"),
        Some('S') => ("♠", "black"),
        _ => return format!("<code>{}</code>", esc(text)),
    };
    let value: u32 = chars.as_str().parse().unwrap_or(0);
    format!(
        "<span class=\"card {colour}\" title=\"{}\">{value}<i>{suit}</i></span>",
        esc(text)
    )
}

/// A Love Letter card with its value.
pub fn ll_card(card: croupier_rules::loveletter::Card) -> String {
    format!(
        "<span class=\"card ll ll{v}\" title=\"{n} ({v})\">{n}<i>{v}</i></span>",
        n = card.name(),
        v = card.value()
    )
}

/// A Goofspiel card (a number).
pub fn gs_card(value: u8, class: &str) -> String {
    format!("<span class=\"card gs {class}\">{value}</span>")
}

/// Seats of a game as "a 20 · b −10", winners in bold, forfeits marked.
pub fn seats_line(seats: &[SeatSummary]) -> String {
    let mut out = String::new();
    for (i, s) in seats.iter().enumerate() {
        if i > 0 {
            out.push_str(" <span class=\"vs\">vs</span> ");
        }
        let class = match (s.rank, s.forfeited) {
            (_, true) => "seat forfeit",
            (Some(1), false) => "seat win",
            _ => "seat",
        };
        let score = s.score.map(|v| format!(" <b>{v}</b>")).unwrap_or_default();
        let flag = if s.forfeited { " <em>forfeit</em>" } else { "" };
        let _ = write!(
            out,
            "<span class=\"{class}\">{}{score}{flag}</span>",
            bot_link(&s.name)
        );
    }
    out
}

/// A table of games (id, game, seats and result, finish time).
pub fn games_table(games: &[GameSummary]) -> String {
    if games.is_empty() {
        return "<p class=\"empty\">No games yet.</p>".into();
    }
    let mut out = String::from(
        "<div class=\"scroll\"><table class=\"games\"><thead><tr><th>Game</th><th class=\"hide-narrow\">Kind</th>\
<th>Bots and scores</th><th>Finished</th></tr></thead><tbody>",
    );
    for g in games {
        // Date and time wrap between them on a phone, never inside.
        let when = g
            .finished
            .as_deref()
            .map(|t| time(t).replacen(' ', "</span> <span>", 1))
            .map(|t| format!("<span>{t}</span>"))
            .unwrap_or_else(|| esc(&g.status));
        let _ = write!(
            out,
            "<tr><td><a href=\"/games/{id}\">#{id}</a></td><td class=\"hide-narrow\">{kind}</td><td>{seats}</td>\
<td class=\"when\">{when}</td></tr>",
            id = g.id,
            kind = game_title(&g.game),
            seats = seats_line(&g.seats),
        );
    }
    out.push_str("</tbody></table></div>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_neutralises_markup() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(url("a b/c"), "a%20b%2Fc");
        assert_eq!(url("bot-1_x"), "bot-1_x");
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
        assert!(sw_card("H05").contains("red") && sw_card("H05").contains("♥"));
        assert!(sw_card("S13").contains("black") && sw_card("S13").contains(">13<"));
        assert!(sw_card("<x>").contains("&lt;x&gt;"));
    }
}
