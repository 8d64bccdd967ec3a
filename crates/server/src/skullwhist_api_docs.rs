//! HTML documentation served on GET for each API method.

use crate::throttle::ThrottleConfig;
use croupier_web::html::{html, layout, Markup, PreEscaped};

struct Doc {
    method: &'static str,
    summary: &'static str,
    request: &'static [(&'static str, &'static str)],
    reply: &'static [(&'static str, &'static str)],
    example: &'static str,
}

const DOCS: &[Doc] = &[
    Doc {
        method: "register",
        summary: "Registers a new bot. Registration of a name that exists fails; that is harmless.",
        request: &[("name", "1 to 32 characters of letters, digits, '-' and '_'"), ("password", "1 to 255 characters")],
        reply: &[("id", "the bot's id (an integer)")],
        example: r#"{"name": "my-bot", "password": "s3cret"}  →  {"result": "success", "id": 12}"#,
    },
    Doc {
        method: "login",
        summary: "Logs a bot in. A bot has one session: logging in again replaces it and forfeits a game in progress. A session expires after 5 minutes without a request.",
        request: &[("name", "the bot's name"), ("password", "its password")],
        reply: &[("session", "32 hexadecimal characters, sent with every other request"), ("id", "the bot's id")],
        example: r#"{"name": "my-bot", "password": "s3cret"}  →  {"result": "success", "session": "9f86d081884c7d659a2feaa0c55ad015", "id": 12}"#,
    },
    Doc {
        method: "new-game",
        summary: "Joins a game. Waits (about 30 s) for an opponent; answers retry if none came, so call it again. Until this bot has bid, calling it again returns the same game and cards; after that, it fails while the game is not over.",
        request: &[("session", "the session")],
        reply: &[("game", "the game's id"), ("opponent", "the opponent's bot id"), ("cards", "this bot's 13 cards, sorted, e.g. \"C01\", \"H12\", \"S13\"")],
        example: r#"{"session": "…"}  →  {"result": "success", "game": 40, "opponent": 7, "cards": ["C02", "C09", …, "S13"]}"#,
    },
    Doc {
        method: "bid",
        summary: "Bids the number of tricks this bot expects to take, once per game. A bot that has not bid 120 s after the deal forfeits.",
        request: &[("session", "the session"), ("bid", "an integer from 1 to 13 (a numeric string is accepted)")],
        reply: &[],
        example: r#"{"session": "…", "bid": 4}  →  {"result": "success"}"#,
    },
    Doc {
        method: "status",
        summary: "The state of this bot's game. Outside a game every field is null: that is how a bot learns its game ended (or was forfeited).",
        request: &[("session", "the session")],
        reply: &[
            ("game", "the game's id"),
            ("round", "the current trick, 1 to 13"),
            ("your-turn", "true when this bot must play now (false before both bids are in)"),
            ("opponent", "the opponent's bot id"),
            ("opponent-bid", "the opponent's bid, null until this bot has bid"),
            ("opponent-previous-card", "the opponent's card in the previous trick"),
            ("opponent-current-card", "the opponent's card in the current trick, if it led"),
            ("you-won-previous-round", "null in the first trick; otherwise whether this bot took the previous trick (and so leads now)"),
        ],
        example: r#"{"session": "…"}  →  {"result": "success", "game": 40, "round": 3, "your-turn": true, "opponent": 7, "opponent-bid": 5, "opponent-previous-card": "D04", "opponent-current-card": "H09", "you-won-previous-round": false}"#,
    },
    Doc {
        method: "play",
        summary: "Plays a card to the current trick (alias: play-card). The follower must follow the led suit when it can; spades are trumps; 1 is the lowest value. A bot that has not played 120 s after its turn began forfeits.",
        request: &[("session", "the session"), ("card", "a card in this bot's hand, e.g. \"H05\"")],
        reply: &[],
        example: r#"{"session": "…", "card": "H05"}  →  {"result": "success"}"#,
    },
    Doc {
        method: "old-game",
        summary: "The record of a finished game: hands, bids, scores and every trick.",
        request: &[("session", "the session"), ("game", "the game's id")],
        reply: &[
            ("bot1, bot2", "the bots' ids"),
            ("bid1, bid2", "their bids"),
            ("score1, score2", "their scores (null after a forfeit)"),
            ("hand1, hand2", "the hands they were dealt"),
            ("started, finished", "times (RFC 3339)"),
            ("round", "tricks played"),
            ("tricks1, tricks2", "tricks taken"),
            ("forfeited_by", "the bot id that forfeited, or null"),
            ("rounds", "every trick: round, leader, follower, leader-card, follower-card, winner"),
        ],
        example: r#"{"session": "…", "game": 40}  →  {"result": "success", "bot1": 7, "bot2": 12, …, "rounds": [{"round": 1, "leader": 12, "follower": 7, "leader-card": "S13", "follower-card": "S02", "winner": 12}, …]}"#,
    },
    Doc {
        method: "jsonp",
        summary: "For browsers that cannot POST across sites. GET /api/jsonp?callback=F&method=M&key=value… calls M (register, login, new-game, bid, status or play) with the other parameters and answers with JavaScript that calls F with the reply object. The callback must be 1 to 64 letters, digits, '_', '.' or '$'.",
        request: &[("callback", "a JavaScript function name"), ("method", "the method to call"), ("…", "that method's keys")],
        reply: &[],
        example: r#"GET /api/jsonp?callback=cb&method=status&session=…  →  cb({"result": "success", …});"#,
    },
];

/// What every method page says about throttling.
const THROTTLED: &str = "<p class=\"note\"><strong>Throttling.</strong> Any method may answer \
<code>{\"result\": \"retry\", \"reason\": …}</code> with a <code>Retry-After</code> header when this \
bot or its address sends too much, or after failed logins: wait that many seconds and send the same \
request again. The limits are on <a href=\"/api/#limits\">the API's index</a>; an honest bot never \
meets the request limit.</p>";

/// The index's section on rate limits, from the limits the server applies.
fn limits(t: &ThrottleConfig) -> String {
    format!(
        "<section id=\"limits\"><h2>Limits and <code>retry</code></h2>\
<p>A throttled request is answered, still with HTTP 200, by \
<code>{{\"result\": \"retry\", \"reason\": \"too many failed logins: wait 2 s and try again\"}}</code> \
and a <code>Retry-After</code> header (seconds): wait that long and send the same request again. \
<code>new-game</code> also answers <code>retry</code>, without the header, when no opponent came: call it \
again at once. While the server is crowded a new connection may be refused with HTTP 503, \
<code>{{\"result\": \"retry\", …}}</code> and <code>Retry-After</code>: the same applies.</p>\
<table><thead><tr><th>What</th><th>Limit</th><th>Per</th></tr></thead><tbody>\
<tr><td>requests</td><td>{bot} a second, bursts of {bot_burst}</td><td>bot (its session)</td></tr>\
<tr><td>requests</td><td>{addr} a second, bursts of {addr_burst}</td><td>client address (not loopback)</td></tr>\
<tr><td><code>register</code></td><td>{reg} a minute, bursts of {reg_burst}</td><td>client address</td></tr>\
<tr><td>failed <code>login</code>s</td><td>{free_name} free, then 1 s, 2 s, 4 s … up to {max} s between tries; \
a success clears it</td><td>bot name</td></tr>\
<tr><td>failed <code>login</code>s</td><td>{free_addr} free, then the same back-off</td><td>client address</td></tr>\
</tbody></table></section>",
        bot = t.bot_requests_per_second,
        bot_burst = t.bot_requests_burst,
        addr = t.requests_per_second,
        addr_burst = t.requests_burst,
        reg = t.registrations_per_minute,
        reg_burst = t.registrations_burst,
        free_name = t.free_failures_per_name,
        free_addr = t.free_failures_per_address,
        max = t.max_backoff.as_secs(),
    )
}

/// The API's pages inside the site's layout, with a trail back to the API
/// index and the documentation.
fn shell(title: &str, body: Markup) -> String {
    layout(title, None, html! { article class="doc api" { (body) } }).into_string()
}

/// The documentation page of a method.
pub fn page(method: &str) -> Option<String> {
    let d = DOCS
        .iter()
        .find(|d| d.method == method || (method == "play-card" && d.method == "play"))?;
    let rows = |fields: &[(&str, &str)]| {
        html! { @for (k, v) in fields { tr { td { code { (k) } } td { (v) } } } }
    };
    let m = d.method;
    let body = html! {
        p { a href="/docs" { "API documentation" } " › " a href="/api/" { "SkullWhist REST API" } }
        h1 { (m) }
        p { (d.summary) }
        p {
            "POST a JSON object to " code { "/api/" (m) "/" } ". Every reply is HTTP 200 with a JSON object whose "
            code { "result" } " is " code { "success" } ", " code { "failure" } " (with a " code { "reason" } ") or "
            code { "retry" } "."
        }
        // Our own text, without anything from a request in it.
        (PreEscaped(THROTTLED))
        h2 { "Request" }
        table {
            thead { tr { th { "Key" } th { "Meaning" } } }
            tbody { (rows(d.request)) }
        }
        h2 { "Reply" }
        table {
            thead { tr { th { "Key" } th { "Meaning" } } }
            tbody {
                @if d.reply.is_empty() {
                    tr { td colspan="2" { "only " code { "result" } } }
                } @else {
                    (rows(d.reply))
                }
            }
        }
        h2 { "Example" }
        pre { (d.example) }
    };
    Some(shell(&format!("{} — SkullWhist API", d.method), body))
}

/// The API index page.
pub fn index() -> String {
    shell(
        "SkullWhist REST API",
        html! {
            p { a href="/docs" { "API documentation" } }
            h1 { "SkullWhist REST API" }
            p class="lead" {
                "The 2014 SkullWhist API: a bot is a client that POSTs JSON to " code { "/api/<method>/" } "."
            }
            p {
                "Register once, log in, then loop: " code { "new-game" } ", " code { "bid" } ", poll " code { "status" } ", "
                code { "play" } " when it is your turn, until " code { "status" } " shows no game. "
                "A complete bot to copy is on " a href="/start#skullwhist-rest" { "Start here" } "; the game itself is on "
                a href="/rules/skullwhist" { "the SkullWhist rules page" } ". Bots for the other games use the "
                a href="/docs/http-api" { "HTTP API" } " instead."
            }
            div class="grid" {
                @for d in DOCS {
                    a class="panel" href={ "/api/" (d.method) "/" } { h3 { (d.method) } p { (d.summary) } }
                }
            }
            // Our own text with the server's figures in it.
            (PreEscaped(limits(&ThrottleConfig::default())))
        },
    )
}

/// The page for an unknown method.
pub fn not_found(method: &str) -> String {
    shell(
        "Not found",
        html! {
            section class="error" {
                h1 { "404 · No method '" (method) "'" }
                p { "See " a href="/api/" { "the SkullWhist REST API" } "." }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_page_tells_how_to_wait_out_a_retry() {
        for d in DOCS {
            let html = page(d.method).expect("a page");
            assert!(html.contains("Retry-After"), "{}", d.method);
            assert!(html.contains("href=\"/api/#limits\""), "{}", d.method);
        }
    }

    #[test]
    fn the_index_lists_the_limits_the_server_applies() {
        let html = index();
        let t = ThrottleConfig::default();
        assert!(html.contains("id=\"limits\""));
        for figure in [
            format!(
                "{} a second, bursts of {}",
                t.bot_requests_per_second, t.bot_requests_burst
            ),
            format!("{} a minute", t.registrations_per_minute),
            format!("up to {} s", t.max_backoff.as_secs()),
        ] {
            assert!(html.contains(&figure), "{figure}");
        }
    }
}
