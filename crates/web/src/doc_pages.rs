//! Rules and API documentation pages, rendered from the Markdown files in
//! `docs/` (compiled into the binary). To publish another document, add one
//! line to [`RULES`] or [`DOCS`].

use std::fmt::Write as _;

use axum::extract::Path;
use axum::http::{header, HeaderMap};
use axum::response::{Html, IntoResponse, Response};
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::html::{html, layout, Markup, PreEscaped};
use crate::page::{Fmt, WebError};

/// A published document: its URL name, title, one-line summary, folder in
/// `docs/` (for relative links) and Markdown text.
#[derive(Debug)]
pub struct Doc {
    /// The last segment of its URL.
    pub name: &'static str,
    /// Title in lists.
    pub title: &'static str,
    /// What it is for.
    pub summary: &'static str,
    /// Its folder under `docs/`.
    pub dir: &'static str,
    /// The Markdown.
    pub text: &'static str,
}

/// One rules page per game, for bot authors: `/rules/{name}`.
pub const RULES: &[Doc] = &[
    Doc {
        name: "skullwhist",
        title: "SkullWhist",
        summary: "Two players, bids and 13 tricks, spades are trumps.",
        dir: "rules",
        text: include_str!("../../../docs/rules/skullwhist.md"),
    },
    Doc {
        name: "loveletter",
        title: "Love Letter",
        summary: "Two to four players, sixteen cards, first to four rounds.",
        dir: "rules",
        text: include_str!("../../../docs/rules/loveletter.md"),
    },
    Doc {
        name: "goofspiel",
        title: "Goofspiel",
        summary: "Sealed bids for victory cards (GOPS, Psychological Jujitsu).",
        dir: "rules",
        text: include_str!("../../../docs/rules/goofspiel.md"),
    },
];

/// API documentation, one page per dialect (and the record format):
/// `/docs/{name}`. The SkullWhist REST API documents itself at `/api/`.
pub const DOCS: &[Doc] = &[
    Doc {
        name: "croupier",
        title: "Croupier JSON protocol",
        summary: "Every game over stdin/stdout, HTTP push or the pull API (croupier/1).",
        dir: "protocol",
        text: include_str!("../../../docs/protocol/croupier.md"),
    },
    Doc {
        name: "croupier-http",
        title: "Croupier protocol over HTTP",
        summary: "croupier/1 for HTTP bot servers (push) and clients of the pull API.",
        dir: "protocol",
        text: include_str!("../../../docs/protocol/croupier-http.md"),
    },
    Doc {
        name: "jujitsu",
        title: "Psychological Jujitsu",
        summary: "HTTP bot servers for Goofspiel: one JSON document per bid (seed 002).",
        dir: "protocol",
        text: include_str!("../../../docs/protocol/jujitsu.md"),
    },
    Doc {
        name: "ladder",
        title: "The ladder and HTTP bots",
        summary: "Registering owners and bots, how matches are formed, strikes and pauses.",
        dir: "",
        text: include_str!("../../../docs/ladder.md"),
    },
    Doc {
        name: "tournaments",
        title: "Tournaments",
        summary: "Round-robin and Swiss, in the command line and on the server (organisers).",
        dir: "",
        text: include_str!("../../../docs/tournaments.md"),
    },
    Doc {
        name: "admin",
        title: "Admin",
        summary: "Bans, rating resets, seasons and the audit log, for the server's admins.",
        dir: "",
        text: include_str!("../../../docs/admin.md"),
    },
    Doc {
        name: "gops",
        title: "GOPS runner protocol",
        summary: "The GOPS quiz's text protocol for Goofspiel bots.",
        dir: "protocol",
        text: include_str!("../../../docs/protocol/gops.md"),
    },
    Doc {
        name: "loveletter",
        title: "Love Letter manager protocol",
        summary: "The HackSoc manager's line protocol (and its postman revision).",
        dir: "protocol",
        text: include_str!("../../../docs/protocol/loveletter.md"),
    },
    Doc {
        name: "records",
        title: "Game records",
        summary: "The JSON record of every game (croupier-record/1), as the replays use it.",
        dir: "",
        text: include_str!("../../../docs/records.md"),
    },
    Doc {
        name: "hosted-bots",
        title: "Hosted bots",
        summary:
            "Uploading a bot program the server runs in its sandbox: versions, validation, stderr.",
        dir: "",
        text: include_str!("../../../docs/hosted-bots.md"),
    },
    Doc {
        name: "people",
        title: "Playing and watching",
        summary:
            "Play bots from the browser, allow challenges, watch games live, the event stream.",
        dir: "",
        text: include_str!("../../../docs/people.md"),
    },
];

/// The "Start here" page for bot authors: `docs/start-here.md`, with each
/// `{{include PATH}}` line replaced by the example bot at PATH (the same
/// files `crates/cli/tests/it/examples.rs` plays against a real server).
const START: &str = include_str!("../../../docs/start-here.md");

/// The example bots the start page shows, by path.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "examples/bots/skullwhist/random_bot.py",
        include_str!("../../../examples/bots/skullwhist/random_bot.py"),
    ),
    (
        "examples/bots/skullwhist/random_bot.js",
        include_str!("../../../examples/bots/skullwhist/random_bot.js"),
    ),
    (
        "examples/bots/croupier-http/pull_bot.py",
        include_str!("../../../examples/bots/croupier-http/pull_bot.py"),
    ),
    (
        "examples/bots/croupier-http/pull_bot.js",
        include_str!("../../../examples/bots/croupier-http/pull_bot.js"),
    ),
    (
        "examples/bots/croupier-http/push_bot.py",
        include_str!("../../../examples/bots/croupier-http/push_bot.py"),
    ),
    (
        "examples/bots/croupier-http/push_bot.js",
        include_str!("../../../examples/bots/croupier-http/push_bot.js"),
    ),
    (
        "examples/bots/croupier/random_bot.py",
        include_str!("../../../examples/bots/croupier/random_bot.py"),
    ),
    (
        "examples/bots/croupier/random_bot.js",
        include_str!("../../../examples/bots/croupier/random_bot.js"),
    ),
];

/// The start page's Markdown with the examples in place (an unknown include
/// stays visible as text, so a test catches it), and `SERVER` replaced by
/// `server`, this site's address, when it is known.
fn start_markdown(server: Option<&str>) -> String {
    let mut out = String::with_capacity(START.len() + 40_000);
    for line in START.lines() {
        let line = match server {
            Some(addr) if line.starts_with("Throughout, `SERVER`") => {
                let _ = writeln!(
                    out,
                    "Throughout, `{addr}` is this site's address (for your own server,"
                );
                continue;
            }
            Some(addr) => line.replace("SERVER", addr),
            None => line.to_string(),
        };
        let line = line.as_str();
        let found = line
            .strip_prefix("{{include ")
            .and_then(|l| l.strip_suffix("}}"))
            .and_then(|path| EXAMPLES.iter().find(|(p, _)| *p == path));
        match found {
            Some((path, code)) => {
                let lang = if path.ends_with(".py") {
                    "python"
                } else {
                    "javascript"
                };
                let file = path.rsplit('/').next().unwrap_or(path);
                let _ = write!(
                    out,
                    "`{file}` (in the repository as `{path}`; [download]({EXAMPLES_AT}{path})):\n\n````{lang}\n{}\n````\n",
                    code.trim_end()
                );
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Where the start page's example bots can be downloaded, followed by their
/// path in the repository.
pub const EXAMPLES_AT: &str = "/start/";

/// `GET /start/examples/...`: an example bot of the start page as a file.
pub async fn example(Path(path): Path<String>) -> Response {
    let path = format!("examples/{path}");
    match EXAMPLES.iter().find(|(p, _)| *p == path) {
        Some((p, code)) => {
            let file = p.rsplit('/').next().unwrap_or(p);
            (
                [
                    (
                        header::CONTENT_TYPE,
                        "text/plain; charset=utf-8".to_string(),
                    ),
                    (
                        header::CONTENT_DISPOSITION,
                        format!("inline; filename=\"{file}\""),
                    ),
                ],
                *code,
            )
                .into_response()
        }
        None => {
            WebError::NotFound(format!("There is no example bot at /start/{path}.")).page(Fmt::Html)
        }
    }
}

/// This site's address as the request names it (`Host`, and
/// `X-Forwarded-Proto` from a proxy), if it is a plain host name or
/// address with an optional port: anything else is not written into the
/// page.
pub fn site_address(headers: &HeaderMap) -> Option<String> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let plain = !host.is_empty()
        && host.len() <= 255
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
    if !plain {
        return None;
    }
    let scheme = match headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
    {
        Some("https") => "https",
        _ => "http",
    };
    Some(format!("{scheme}://{host}"))
}

pub async fn start(headers: HeaderMap) -> Response {
    let text = start_markdown(site_address(&headers).as_deref());
    let body = html! { article class="doc start" { (render("", &text)) } };
    Html(layout("Start here", None, body).into_string()).into_response()
}

fn index(title: &str, intro: &str, base: &str, docs: &[Doc], extra: Markup) -> Response {
    let body = html! {
        h1 { (title) }
        p class="lead" { (intro) }
        div class="grid" {
            @for d in docs {
                a class="panel" href={ (base) "/" (d.name) } { h3 { (d.title) } p { (d.summary) } }
            }
            (extra)
        }
    };
    Html(layout(title, None, body).into_string()).into_response()
}

pub async fn rules_index() -> Response {
    index(
        "Rules",
        "The rules of every game, written for bot authors: what a bot sees, what it may do, how games are scored.",
        "/rules",
        RULES,
        html! {},
    )
}

pub async fn docs_index() -> Response {
    index(
        "API documentation",
        "How a bot talks to Croupier, for every dialect.",
        "/docs",
        DOCS,
        html! {
            a class="panel" href="/start" {
                h3 { "Start here" }
                p { "A first bot for each way to connect, from copying it to its first game on this site." }
            }
            a class="panel" href="/docs/http-api" {
                h3 { "HTTP API reference" }
                p { "Every /v1 endpoint and webhook: parameters, bodies, answers and schemas, from /openapi.json." }
            }
            a class="panel" href="/api/" {
                h3 { "SkullWhist REST API (2014)" }
                p { "Bots call the server: register, login, new-game, bid, status, play, old-game." }
            }
        },
    )
}

fn page(list: &[Doc], name: &str, what: &str) -> Response {
    match list.iter().find(|d| d.name == name) {
        Some(d) => {
            let body = html! { article class="doc" { (markdown(d)) } };
            Html(layout(d.title, None, body).into_string()).into_response()
        }
        None => WebError::NotFound(format!("There is no {what} page '{name}'.")).page(Fmt::Html),
    }
}

pub async fn rules(Path(game): Path<String>) -> Response {
    page(RULES, &game, "rules")
}

pub async fn docs(Path(name): Path<String>) -> Response {
    page(DOCS, &name, "documentation")
}

/// GitHub-style anchor of a heading.
fn slug(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Where a relative link of a document in `dir` points on this site, if
/// anywhere (links to files outside the published documents are dropped).
fn site_link(dir: &str, dest: &str) -> Option<String> {
    if dest.starts_with('#')
        || dest.starts_with('/')
        || dest.contains("://")
        || dest.starts_with("mailto:")
    {
        return Some(dest.to_string());
    }
    let (path, fragment) = match dest.split_once('#') {
        Some((p, f)) => (p, format!("#{f}")),
        None => (dest, String::new()),
    };
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    let stem = parts.last()?.strip_suffix(".md")?;
    let folder = parts[..parts.len() - 1].join("/");
    let (list, base) = match folder.as_str() {
        "rules" => (RULES, "/rules"),
        "protocol" | "" => (DOCS, "/docs"),
        _ => return None,
    };
    list.iter()
        .find(|d| d.name == stem && d.dir == folder)
        .map(|d| format!("{base}/{}{fragment}", d.name))
}

/// Renders a document: heading anchors, links rewritten to this site.
pub fn markdown(doc: &Doc) -> Markup {
    render(doc.dir, doc.text)
}

/// Renders Markdown from a document in `dir` under `docs/`. The result is
/// markup made here: pulldown-cmark escapes the text, and raw HTML in a
/// document is shown as text, not passed through.
fn render(dir: &str, text: &str) -> Markup {
    let mut events: Vec<Event> = Parser::new_ext(text, Options::all()).collect();
    // Heading ids, from each heading's text.
    let mut i = 0;
    while i < events.len() {
        if let Event::Start(Tag::Heading { .. }) = &events[i] {
            let mut text = String::new();
            let mut j = i + 1;
            while j < events.len() && !matches!(events[j], Event::End(TagEnd::Heading(_))) {
                if let Event::Text(t) | Event::Code(t) = &events[j] {
                    text.push_str(t);
                }
                j += 1;
            }
            if let Event::Start(Tag::Heading { id, .. }) = &mut events[i] {
                if id.is_none() {
                    *id = Some(CowStr::from(slug(&text)));
                }
            }
            i = j;
        }
        i += 1;
    }
    // Links: to this site, or dropped (their text stays).
    let mut dropped = 0usize;
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        match e {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => match site_link(dir, &dest_url) {
                Some(to) => out.push(Event::Start(Tag::Link {
                    link_type,
                    dest_url: CowStr::from(to),
                    title,
                    id,
                })),
                None => dropped += 1,
            },
            Event::End(TagEnd::Link) if dropped > 0 => dropped -= 1,
            Event::Html(h) | Event::InlineHtml(h) => out.push(Event::Text(h)),
            other => out.push(other),
        }
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, out.into_iter());
    PreEscaped(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_point_to_site_pages_or_are_dropped() {
        assert_eq!(
            site_link("protocol", "../rules/skullwhist.md#events").as_deref(),
            Some("/rules/skullwhist#events")
        );
        assert_eq!(
            site_link("protocol", "gops.md").as_deref(),
            Some("/docs/gops")
        );
        assert_eq!(
            site_link("rules", "../records.md").as_deref(),
            Some("/docs/records")
        );
        assert_eq!(
            site_link("protocol", "../../examples/bots/gops/planner.rb"),
            None
        );
        assert_eq!(site_link("", "../../../etc/passwd"), None);
        assert_eq!(
            site_link("rules", "#variants").as_deref(),
            Some("#variants")
        );
    }

    #[test]
    fn every_document_renders_with_anchors_and_no_file_links() {
        for d in RULES.iter().chain(DOCS) {
            let html = markdown(d).into_string();
            assert!(html.contains("<h1") || html.contains("<h2"), "{}", d.name);
            assert!(
                !html.contains(".md\""),
                "{} keeps a link to a .md file",
                d.name
            );
        }
        assert_eq!(slug("Faults and rulings"), "faults-and-rulings");
    }

    #[test]
    fn the_start_page_shows_every_example_it_names() {
        let text = start_markdown(None);
        assert!(!text.contains("{{include"), "an include names no example");
        for (path, code) in EXAMPLES {
            assert!(
                START.contains(&format!("{{{{include {path}}}}}")),
                "{path} unused"
            );
            let first = code
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default();
            assert!(text.contains(first), "{path} not on the page");
        }
        let html = render("", &text).into_string();
        for anchor in [
            "skullwhist-rest",
            "pull-http",
            "push-http",
            "program-over-stdinstdout",
            "hosted-program",
        ] {
            assert!(html.contains(&format!("id=\"{anchor}\"")), "{anchor}");
        }
        assert!(html.contains("href=\"/docs/http-api\""));
        // Issue 52: every example has its download link, and a local push
        // bot's way out is named.
        for (path, _) in EXAMPLES {
            assert!(html.contains(&format!("href=\"/start/{path}\"")), "{path}");
        }
        assert!(html.contains("--allow-private-bot-urls"));
        assert!(include_str!("../../../README.md").contains("--allow-private-bot-urls"));
    }

    #[test]
    fn the_start_page_fills_in_its_own_address_and_nothing_else() {
        let headers = |host: &str, proto: Option<&str>| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, host.parse().expect("a header value"));
            if let Some(p) = proto {
                h.insert("x-forwarded-proto", p.parse().expect("a header value"));
            }
            h
        };
        assert_eq!(
            site_address(&headers("cards.example:8080", None)).as_deref(),
            Some("http://cards.example:8080")
        );
        assert_eq!(
            site_address(&headers("[::1]:80", Some("https"))).as_deref(),
            Some("https://[::1]:80")
        );
        for hostile in ["a b", "x\"><script>", "x/y", "a`b", ""] {
            assert_eq!(site_address(&headers(hostile, None)), None, "{hostile}");
        }
        let text = start_markdown(Some("http://cards.example"));
        assert!(!text.contains("SERVER"), "every SERVER is filled in");
        assert!(text.contains("curl -X POST http://cards.example/v1/owners"));
        assert!(start_markdown(None).contains("SERVER/v1/owners"));
    }
}
