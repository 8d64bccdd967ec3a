//! Every page kind's HTML, kept as it was (issue 52): the pages moved from
//! strings built with `format!` to templates, and each page's output had to
//! stay the same apart from whitespace. The site is seeded the same way on
//! every run (demo games that finish at a fixed time, with thinking times
//! drawn from their seeds, and a tournament), every page is fetched through
//! the router, and each is compared with its file under `tests/golden/`.
//!
//! When a page changes on purpose, write the files again and read the diff:
//!
//! ```text
//! CROUPIER_BLESS=1 cargo test -p croupier-server --test it web_golden
//! git diff crates/server/tests/golden
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use croupier_server::App;
use croupier_server::ServerConfig;
use croupier_store::{SqliteStore, Store};
use croupier_web::seed;

use crate::demo_site;
use tower::ServiceExt as _;

/// When the last demo game finished (2026-10-01T12:00:00Z): long enough
/// ago that no bot counts as online or active, whenever the test runs.
const END: u64 = 1_790_856_000;

struct Site {
    _dir: tempfile::TempDir,
    app: App,
}

async fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("golden.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    let end = UNIX_EPOCH + Duration::from_secs(END);
    seed::seed_until(store.as_ref(), 30, Duration::from_secs(30), end)
        .await
        .unwrap();
    demo_site::tournaments(&store, end).await;
    let config = ServerConfig {
        house_bots: Vec::new(),
        ..ServerConfig::default()
    };
    let dyn_store: Arc<dyn Store> = store.clone();
    let (state, _) = croupier_server::prepare(dyn_store, &config).await.unwrap();
    Site {
        _dir: dir,
        app: croupier_server::app(state),
    }
}

async fn get(app: &App, uri: &str) -> (StatusCode, String) {
    let resp = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let body = axum::body::to_bytes(resp.into_body(), 1 << 24)
        .await
        .unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

/// A page without the differences that do not show: runs of whitespace
/// are one space, none is kept next to a tag's `<` or `>`, `'` may be
/// written as itself or as `&#39;` (attributes are double-quoted), `"`
/// between tags as itself or as `&quot;`, and an SVG shape as
/// `<line .../>` or `<line ...></line>`.
fn normalise(html: &str) -> String {
    let html = close_shapes(&text_quotes(&html.replace("&#39;", "'")));
    let mut out = String::with_capacity(html.len());
    let mut space = false;
    for c in html.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && c != '<' && !out.ends_with('>') && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    // One element per line, so that a difference reads as a diff.
    out.replace("><", ">\n<")
}

/// `&quot;` between tags written as `"` (inside a tag it must stay).
fn text_quotes(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    for (i, part) in html.split('<').enumerate() {
        if i > 0 {
            out.push('<');
        }
        match part.split_once('>') {
            Some((tag, text)) => {
                out.push_str(tag);
                out.push('>');
                out.push_str(&text.replace("&quot;", "\""));
            }
            None => out.push_str(&part.replace("&quot;", "\"")),
        }
    }
    out
}

/// `<name attrs/>` written as `<name attrs></name>`.
fn close_shapes(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(end) = rest.find("/>") {
        let open = rest[..end].rfind('<');
        match open {
            Some(open) if !rest[open..end].contains('>') => {
                let name: String = rest[open + 1..end]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                out.push_str(rest[..end].trim_end());
                out.push_str("></");
                out.push_str(&name);
                out.push('>');
            }
            _ => out.push_str(&rest[..end + 2]),
        }
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The golden file's name for a page's path.
fn file_name(uri: &str) -> String {
    let name: String = uri
        .trim_start_matches('/')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "home.html".into()
    } else {
        format!("{name}.html")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_kind_keeps_its_html() {
    let s = site().await;
    let mut pages: Vec<String> = [
        "/",
        "/about",
        "/start",
        "/rules",
        "/rules/skullwhist",
        "/rules/loveletter",
        "/rules/goofspiel",
        "/docs",
        "/docs/croupier",
        "/docs/http-api",
        "/leaderboard/skullwhist",
        "/leaderboard/loveletter",
        "/leaderboard/goofspiel",
        "/bots",
        "/bots/ace-of-spades",
        "/bots/countess",
        "/bots/gops-planner",
        "/versus/countess/baroness",
        "/versus/gops-planner/lot-lizard",
        "/games",
        "/games?page=2",
        "/games?game=loveletter&bot=countess",
        "/games/1",
        "/games/1?step=7",
        "/games/2",
        "/games/2?step=30",
        "/games/3",
        "/games/3?step=3",
        "/activity",
        "/tournaments",
        "/tournaments/autumn-cup",
        "/tournaments/winter-cup",
        "/tournaments/spring-cup",
        "/play",
        "/live",
        "/api/",
        "/api/bid/",
        "/api/new-game/",
        "/api/no-such-method/",
        "/no/such/page",
        "/bots/nobody",
        "/games/999999",
    ]
    .map(String::from)
    .to_vec();
    for tag in [
        "owners",
        "bots",
        "pull",
        "push",
        "meta",
        "tournaments",
        "hosted",
        "live",
        "admin",
    ] {
        pages.push(format!("/docs/http-api/{tag}"));
    }
    for name in [
        "croupier",
        "croupier-http",
        "jujitsu",
        "ladder",
        "tournaments",
        "gops",
        "loveletter",
        "records",
        "hosted-bots",
        "people",
        "admin",
    ] {
        pages.push(format!("/docs/{name}"));
    }
    pages.sort();
    pages.dedup();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/pages");
    let bless = std::env::var_os("CROUPIER_BLESS").is_some();
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut differ = Vec::new();
    for uri in &pages {
        let (status, body) = get(&s.app, uri).await;
        let mut page = format!("{status}\n{}\n", normalise(&body));
        if uri == "/activity" {
            // Its chart is the last hour's, labelled with the clock.
            page = page.replace(|c: char| c.is_ascii_digit(), "0");
        }
        let path = dir.join(file_name(uri));
        if bless {
            std::fs::write(&path, &page).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (CROUPIER_BLESS=1 writes it)", path.display()));
        if want != page {
            let at = want
                .lines()
                .zip(page.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(want.lines().count().min(page.lines().count()));
            let line = |t: &str| t.lines().nth(at).unwrap_or("(end)").to_string();
            differ.push(format!(
                "{uri} (line {}):\n  was: {}\n  now: {}",
                at + 1,
                line(&want),
                line(&page)
            ));
        }
    }
    // Issue 52: the list names each finished tournament's winner, and a
    // tournament under way refreshes and links its running game's live view.
    let (_, list) = get(&s.app, "/tournaments").await;
    let row = &list[list.find("/tournaments/autumn-cup").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains("class=\"bot\""), "a winner: {row}");
    // Its games by round, with each seat's score.
    let (_, autumn) = get(&s.app, "/tournaments/autumn-cup").await;
    let round = &autumn[autumn.find("<h3>Round 1</h3>").expect("round 1")..];
    assert!(
        round.contains("class=\"seat win\"") && round.contains("</a> <b>"),
        "{round}"
    );
    let (_, spring) = get(&s.app, "/tournaments/spring-cup").await;
    assert!(spring.contains("http-equiv=\"refresh\""));
    assert!(spring.contains("class=\"watch\" href=\"/live/"), "{spring}");
    assert!(
        differ.is_empty(),
        "{} of {} pages changed:\n{}",
        differ.len(),
        pages.len(),
        differ.join("\n")
    );
}
