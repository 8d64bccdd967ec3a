//! The website in a real browser: Debian's headless Chromium driven through
//! chromedriver (WebDriver, fantoccini) against a server with seeded games.
//! Visits every page kind and saves a screenshot of each in
//! `target/screenshots/`, follows links leaderboard → bot → versus → replay,
//! steps through a replay, fails on browser console errors, and crawls every
//! same-site link for 4xx/5xx answers.
//!
//! Without chromedriver (`/usr/bin/chromedriver`, or `CHROMEDRIVER`) the test
//! prints a notice and passes, unless `CI=true`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly

use crate::{browser_support, demo_site};

use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use croupier_server::ServerConfig;
use croupier_store::web::GameFilter;
use croupier_store::{SqliteStore, Store, WebReads};
use croupier_web::seed;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

use browser_support::{screenshots_dir, Driver};

/// chromedriver's (legacy, still supported) command for the browser log.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }
    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(json!({"type": "browser"}).to_string()),
        )
    }
}

/// Severe entries of the browser console since the last call.
async fn console_errors(c: &Client) -> Vec<String> {
    let Ok(Value::Array(entries)) = c.issue_cmd(BrowserLog).await else {
        panic!("chromedriver did not return the browser log");
    };
    entries
        .iter()
        .filter(|e| e["level"] == "SEVERE")
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

struct Page<'a> {
    client: &'a Client,
    base: String,
    shots: PathBuf,
}

impl Page<'_> {
    /// Opens `path`, checks it is a Croupier page without console errors,
    /// and saves a screenshot as `name.png`.
    async fn visit(&self, name: &str, path: &str) {
        self.client
            .goto(&format!("{}{path}", self.base))
            .await
            .unwrap();
        self.check(name).await;
    }

    async fn check(&self, name: &str) {
        let url = self.client.current_url().await.unwrap();
        let brand = self.client.find(Locator::Css("header .brand")).await;
        assert!(brand.is_ok(), "{name}: {url} is not a Croupier page");
        // The 404 page itself is logged as a failed load; nothing else may be.
        let own_404 =
            format!("{url} - Failed to load resource: the server responded with a status of 404");
        let errors: Vec<String> = console_errors(self.client)
            .await
            .into_iter()
            .filter(|e| !(name.ends_with("not-found") && e.starts_with(&own_404)))
            .collect();
        assert!(
            errors.is_empty(),
            "{name}: console errors at {url}: {errors:?}"
        );
        let png = self.client.screenshot().await.unwrap();
        std::fs::write(self.shots.join(format!("{name}.png")), png).unwrap();
    }

    async fn click(&self, css: &str) -> url::Url {
        let from = self.client.current_url().await.unwrap();
        let link = self
            .client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("no link '{css}' on {from}"));
        link.click().await.unwrap();
        self.client.current_url().await.unwrap()
    }

    /// What is wrong with the page's layout at the current width: the page
    /// wider than the window, a list of games cut off (it must fit, not
    /// scroll), a table that scrolls without showing it, an unreadable
    /// chart label, a bot name broken over lines.
    async fn layout_problems(&self) -> Vec<String> {
        let v = self
            .client
            .execute(
                r#"
const out = [];
const w = window.innerWidth;
if (document.documentElement.scrollWidth > w + 1)
  out.push(`page is ${document.documentElement.scrollWidth}px wide in a ${w}px window`);
for (const a of document.querySelectorAll('a.bot, .who')) {
  // A crosstable's row names, and the names at a card table's half-width
  // seats, may break after a hyphen on a phone.
  const hyphenOk = a.matches('table.wide tbody th a.bot, .seat-box .who-line .who')
    && a.textContent.includes('-');
  if (a.getClientRects().length > 1 && !hyphenOk) out.push(`bot name broken over lines: ${a.textContent}`);
}
// Field names and paths of the HTTP API reference (issue 52), the names in
// the tournament tables, and code in the documents' tables are whole words
// too.
for (const c of document.querySelectorAll('table.fields td:first-child code, .op h2 code, td.name a, article.doc td > code')) {
  // Code in a document's table wraps between its words or after a hyphen,
  // never inside a word.
  const words = c.matches('article.doc td > code') && /[\s-]/.test(c.textContent);
  if (c.getClientRects().length > 1 && !words) out.push(`name broken over lines: ${c.textContent}`);
}
// No table is cut off silently (issue 52): the lists a person reads row by
// row fit the width; any other table that does not fit is a wide one, with
// its first column held in place, in a box that shows an edge shadow.
const mustFit = 'table.games, table.live-games, table.leaders, table.bots, table.opponents, ' +
  'table.tricks, table.turns, table.steps, table.round, table.briefs';
for (const t of document.querySelectorAll('main table')) {
  let box = t;
  while (box && box !== document.body && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX))
    box = box.parentElement;
  if (!box || box === document.body || box.scrollWidth <= box.clientWidth + 1) continue;
  const what = `table.${t.className.replace(/ /g, '.')} (${box.scrollWidth}px in ${box.clientWidth}px)`;
  if (t.matches(mustFit)) {
    out.push(`${what} cut off: columns ${[...t.rows[0].cells].map(c => c.offsetWidth)}`);
  } else if (box === t) {
    // A table in a document scrolls in its own box, shadowed the same way.
    if (!getComputedStyle(t).backgroundImage.includes('gradient'))
      out.push(`${what} scrolls without showing it`);
  } else if (!t.matches('.wide') || !box.matches('.scroll')
      || !getComputedStyle(box).backgroundImage.includes('gradient')
      || getComputedStyle(t.rows[t.rows.length - 1].cells[0]).position !== 'sticky') {
    out.push(`${what} scrolls without showing it`);
  }
}
// Chart labels are readable: at least 11 px tall on the screen, inside
// their chart, and clear of each other.
for (const svg of document.querySelectorAll('svg.chart')) {
  const box = svg.getBoundingClientRect();
  const labels = [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBoundingClientRect()]);
  for (const [text, r] of labels) {
    if (r.width === 0 && r.height === 0) continue; // not shown at this width
    if (r.height < 11) out.push(`chart label "${text}" is ${r.height.toFixed(1)}px tall`);
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
      out.push(`chart label "${text}" reaches outside its chart`);
  }
  for (let i = 0; i < labels.length; i++)
    for (let j = i + 1; j < labels.length; j++) {
      const [a, p] = labels[i], [b, q] = labels[j];
      if (p.width === 0 || q.width === 0) continue;
      if (p.left < q.right - 1 && q.left < p.right - 1 && p.top < q.bottom - 1 && q.top < p.bottom - 1)
        out.push(`chart labels "${a}" and "${b}" overlap`);
    }
}
// Inside a box that scrolls sideways (a wide table, code) is fine.
const scrolls = e => {
  for (let p = e.parentElement; p && p !== document.body; p = p.parentElement)
    if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return true;
  return false;
};
for (const e of document.querySelectorAll('main *')) {
  const r = e.getBoundingClientRect();
  if (r.width > 0 && r.right > w + 1 && !e.closest('svg') && !scrolls(e))
    out.push(`${e.tagName.toLowerCase()}.${e.className} reaches ${Math.round(r.right)}px`);
}
return out.slice(0, 5);
"#,
                Vec::new(),
            )
            .await
            .unwrap();
        serde_json::from_value(v).unwrap()
    }

    /// Opens `path`, checks it as [`Page::visit`] does and that its layout
    /// fits the window.
    async fn visit_fits(&self, name: &str, path: &str) {
        self.visit(name, path).await;
        let problems = self.layout_problems().await;
        assert!(problems.is_empty(), "{name} ({path}): {problems:?}");
    }

    /// Saves a screenshot of the whole page, top to bottom, as
    /// `name.png`: the window grows to the page's height for it, and gets
    /// its size back afterwards.
    async fn full_shot(&self, name: &str) {
        let (w, h) = self.client.get_window_size().await.unwrap();
        let tall = self
            .eval("document.documentElement.scrollHeight")
            .await
            .as_u64()
            .unwrap()
            .clamp(h, 12_000);
        // The window's outer height holds its frame as well as the page.
        let frame = h - self.eval("window.innerHeight").await.as_u64().unwrap();
        self.client
            .set_window_size(w as u32, (tall + frame) as u32)
            .await
            .unwrap();
        let png = self.client.screenshot().await.unwrap();
        std::fs::write(self.shots.join(format!("{name}.png")), png).unwrap();
        self.client
            .set_window_size(w as u32, h as u32)
            .await
            .unwrap();
    }

    /// Runs `js` (an expression) and returns its value.
    async fn eval(&self, js: &str) -> Value {
        self.client
            .execute(&format!("return {js};"), Vec::new())
            .await
            .unwrap()
    }

    async fn text(&self, css: &str) -> String {
        let e = self.client.find(Locator::Css(css)).await.unwrap();
        e.text().await.unwrap()
    }
}

/// Every `href="…"` of a page.
fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(|h| h.replace("&amp;", "&"))
        .collect()
}

/// Crawls every same-site link from `/`; returns the number of URLs checked.
/// Replay steps (`?step=`) are checked but not expanded: they hold the
/// links of their game page.
/// `want`, or the game's last step if it has fewer (seeded games differ in
/// length).
async fn step_within(store: &SqliteStore, id: i64, want: usize) -> usize {
    let row = store.game(id).await.unwrap().unwrap();
    let record: Value = serde_json::from_str(row.record.as_deref().unwrap()).unwrap();
    want.min(record["steps"].as_array().unwrap().len())
}

async fn crawl(base: &str) -> usize {
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut seen = BTreeSet::from(["/".to_string()]);
    let mut queue = VecDeque::from([("/".to_string(), "(start)".to_string())]);
    let mut checked = 0;
    while let Some((path, from)) = queue.pop_front() {
        let resp = http.get(format!("{base}{path}")).send().await.unwrap();
        let status = resp.status();
        let kind = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = resp.text().await.unwrap();
        checked += 1;
        assert!(
            status.is_success(),
            "{path} (linked from {from}) answers {status}"
        );
        if !kind.starts_with("text/html") || path.contains("step=") {
            continue;
        }
        for h in hrefs(&body) {
            let h = h.split('#').next().unwrap_or_default().to_string();
            if h.is_empty() || h.starts_with("data:") || h.contains("://") {
                continue;
            }
            assert!(h.starts_with('/'), "relative link '{h}' on {path}");
            if seen.insert(h.clone()) {
                queue.push_back((h, path.clone()));
            }
        }
    }
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_kind_works_in_headless_chromium() {
    let Some(mut driver) = Driver::start() else {
        return;
    };

    // A server with 90 demo games and one game in progress.
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("web.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    let stored = seed::seed(store.as_ref(), 90, Duration::from_secs(20))
        .await
        .unwrap();
    assert!(stored >= 85, "only {stored} demo games");
    demo_site::tournaments(&store, SystemTime::now()).await;
    let ids = seed::demo_bots(store.as_ref()).await.unwrap();
    let running = store
        .start_game("skullwhist", &ids[..2], 1, "2026-01-01T00:00:00.000Z")
        .await
        .unwrap();
    let config = ServerConfig {
        house_bots: Vec::new(),
        ..ServerConfig::default()
    };
    let dyn_store: Arc<dyn Store> = store.clone();
    let (state, house) = croupier_server::prepare(dyn_store, &config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        croupier_server::run(listener, state, house, &config, async {
            let _ = stopped.await;
        })
        .await
    });

    let client = driver.session(true).await;
    let page = Page {
        client: &client,
        base: base.clone(),
        shots: screenshots_dir(),
    };

    // Every page kind.
    // Of each game's last 50 games, the one whose seats have the longest
    // names: the hardest for a phone's layout.
    let mut first = Vec::new();
    for game in ["skullwhist", "loveletter", "goofspiel"] {
        let filter = GameFilter {
            game: Some(game.into()),
            bot: None,
        };
        let games = store.games_page(&filter, 0, 50).await.unwrap();
        let longest = games
            .iter()
            .max_by_key(|g| g.seats.iter().map(|s| s.name.len()).sum::<usize>())
            .unwrap();
        first.push(longest.clone());
    }
    let steps = [
        step_within(&store, first[0].id, 14).await,
        step_within(&store, first[1].id, 12).await,
        step_within(&store, first[2].id, 10).await,
        step_within(&store, first[0].id, 20).await,
    ];
    let first_game = &first[0];
    let bot_a = first_game.seats[0].name.clone();
    let bot_b = first_game.seats[1].name.clone();
    let kinds: Vec<(&str, String)> = vec![
        ("home", "/".into()),
        ("start", "/start".into()),
        ("api", "/api/".into()),
        ("http-api", "/docs/http-api".into()),
        ("http-api-bots", "/docs/http-api/bots".into()),
        ("http-api-hosted", "/docs/http-api/hosted".into()),
        ("tournaments", "/tournaments".into()),
        ("about", "/about".into()),
        ("rules-index", "/rules".into()),
        ("rules-skullwhist", "/rules/skullwhist".into()),
        ("rules-loveletter", "/rules/loveletter".into()),
        ("rules-goofspiel", "/rules/goofspiel".into()),
        ("docs-index", "/docs".into()),
        ("docs-croupier", "/docs/croupier".into()),
        ("docs-gops", "/docs/gops".into()),
        ("docs-jujitsu", "/docs/jujitsu".into()),
        ("docs-croupier-http", "/docs/croupier-http".into()),
        ("docs-ladder", "/docs/ladder".into()),
        ("docs-loveletter", "/docs/loveletter".into()),
        ("docs-people", "/docs/people".into()),
        ("leaderboard-skullwhist", "/leaderboard/skullwhist".into()),
        ("leaderboard-loveletter", "/leaderboard/loveletter".into()),
        ("leaderboard-goofspiel", "/leaderboard/goofspiel".into()),
        ("bots", "/bots".into()),
        ("bot", format!("/bots/{bot_a}")),
        ("versus", format!("/versus/{bot_a}/{bot_b}")),
        ("games", "/games".into()),
        (
            "games-filtered",
            format!("/games?game=loveletter&bot={}", seed::BOTS[4].0),
        ),
        (
            "game-skullwhist",
            format!("/games/{}?step={}", first[0].id, steps[0]),
        ),
        (
            "game-loveletter",
            format!("/games/{}?step={}", first[1].id, steps[1]),
        ),
        (
            "game-goofspiel",
            format!("/games/{}?step={}", first[2].id, steps[2]),
        ),
        ("game-running", format!("/games/{running}")),
        ("activity", "/activity".into()),
        ("tournament-finished", "/tournaments/autumn-cup".into()),
        ("tournament-running", "/tournaments/spring-cup".into()),
        ("tournament-scheduled", "/tournaments/winter-cup".into()),
        ("not-found", "/games/999999".into()),
    ];
    for (name, path) in &kinds {
        page.visit_fits(name, path).await;
    }
    let title = client.title().await.unwrap();
    assert!(title.starts_with("Not found"), "the 404 page says: {title}");

    // Every page again on a phone: nothing wider than the window, lists of
    // games not cut off, names whole.
    client.set_window_size(390, 844).await.unwrap();
    let inner = page.eval("window.innerWidth").await;
    assert!(inner.as_i64().unwrap() <= 400, "window {inner} px wide");
    for (name, path) in &kinds {
        page.visit_fits(&format!("phone-{name}"), path).await;
        page.full_shot(&format!("phone-full-{name}")).await;
    }
    // Leaderboards keep games and W–L–T on a phone (issue 52).
    for game in ["skullwhist", "loveletter", "goofspiel"] {
        page.visit(
            &format!("phone-leaderboard-{game}"),
            &format!("/leaderboard/{game}"),
        )
        .await;
        let shown = page
            .eval(
                "[...document.querySelectorAll('table.leaders th')]
                  .filter(th => th.offsetWidth > 0 && th.getBoundingClientRect().right <= innerWidth)
                  .map(th => th.textContent)",
            )
            .await;
        for want in ["Games", "W–L–T", "μ − 3σ"] {
            assert!(
                shown.as_array().unwrap().iter().any(|h| h == want),
                "{game} leaderboard at 390 px shows {shown}, not {want}"
            );
        }
    }
    page.visit_fits(
        "phone-game",
        &format!("/games/{}?step={}", first[0].id, steps[3]),
    )
    .await;

    // A step link with the old fragment lands with the header in view, and
    // the step controls stay at hand while scrolling through the steps.
    for (width, height) in [(390, 844), (1280, 1000)] {
        client.set_window_size(width, height).await.unwrap();
        page.visit(
            &format!("step-link-{width}"),
            &format!("/games/{}?step={}#state", first[0].id, steps[3]),
        )
        .await;
        let header_top = page
            .eval("document.querySelector('header.top').getBoundingClientRect().top")
            .await;
        assert!(
            header_top.as_f64().unwrap() >= 0.0,
            "{width} px: #state scrolled the header away ({header_top})"
        );
        page.eval("document.querySelector('table.steps tbody tr:last-child').scrollIntoView()")
            .await;
        let stepper = page
            .eval("document.querySelector('.pager.stepper').getBoundingClientRect().top")
            .await
            .as_f64()
            .unwrap();
        assert!(
            (0.0..80.0).contains(&stepper),
            "{width} px: the step controls are not at hand at the last step ({stepper})"
        );
        page.check(&format!("step-controls-{width}")).await;
    }
    client.set_window_size(1280, 1000).await.unwrap();

    // Leaderboard → bot → versus → replay, then step through the replay.
    page.visit("flow-leaderboard", "/leaderboard/loveletter")
        .await;
    let at = page.click("table a.bot").await;
    assert!(at.path().starts_with("/bots/"), "{at}");
    page.check("flow-bot").await;
    page.eval("document.getElementById('thinking').scrollIntoView()")
        .await;
    page.check("flow-bot-thinking").await;
    let at = page.click("a[href^='/versus/']").await;
    assert!(at.path().starts_with("/versus/"), "{at}");
    page.check("flow-versus").await;
    page.eval("document.querySelector('svg.strip').scrollIntoView()")
        .await;
    page.check("flow-versus-margins").await;
    let at = page.click("table.games a[href^='/games/']").await;
    assert!(at.path().starts_with("/games/"), "{at}");
    page.check("flow-game").await;
    assert!(page.text(".pager .current").await.starts_with("step 0 of"));
    for n in 1..=3 {
        page.click("a[rel='next']").await;
        let step = page.text(".pager .current").await;
        assert!(
            step.starts_with(&format!("step {n} of")),
            "after {n} clicks: {step}"
        );
        let current = page.text("tr.current td").await;
        assert_eq!(
            current,
            n.to_string(),
            "the step list marks the current step"
        );
    }
    page.click("a[rel='prev']").await;
    assert!(page.text(".pager .current").await.starts_with("step 2 of"));
    page.check("flow-replay-step-2").await;

    client.close().await.unwrap();
    driver.stop().await;

    // Every same-site link answers.
    let checked = crawl(&base).await;
    assert!(checked > 200, "the crawl found only {checked} pages");
    eprintln!("browser test: crawled {checked} same-site URLs; screenshots in target/screenshots/");

    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
