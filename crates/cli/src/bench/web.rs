//! `croupier bench web`: seeds a database (SQLite, or PostgreSQL with
//! `--postgres`) with finished games of all three games (real records
//! played by the built-in strategies), then times every data page kind of
//! the website in process (router and database, no socket) against a
//! trivial route, and prints a table.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use croupier_server::ServerConfig;
use croupier_store::scratch::ScratchCluster;
use croupier_store::web::GameFilter;
use croupier_store::Store;
use croupier_web::seed;
use tower::ServiceExt as _;

use crate::bench::proc::{percentile, rss_mib};

/// Requests timed per page.
const SAMPLES: usize = 30;

/// Passes over every page after the timed one, for the resident memory.
const MEMORY_PASSES: usize = 5;

/// The database the pages are read from.
#[derive(Debug, Clone)]
pub enum WebDb {
    /// A SQLite file (kept when given, else in a temporary folder).
    Sqlite(Option<PathBuf>),
    /// A PostgreSQL database: its URL, or `None` for a throw-away cluster.
    Postgres(Option<String>),
}

/// Seeds (unless the database already holds games; with `cups` among
/// them) and measures.
pub fn run(games: u64, db: WebDb, cups: Option<seed::Cups>) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    // A throw-away cluster outlives the runtime, so that the server's
    // background tasks never see their database go away.
    let mut cluster = None;
    let (url, shown) = match db {
        WebDb::Sqlite(path) => {
            let path = path.unwrap_or_else(|| dir.path().join("web.db"));
            (
                format!("sqlite://{}", path.display()),
                path.display().to_string(),
            )
        }
        WebDb::Postgres(Some(url)) => (url, "the PostgreSQL database given".into()),
        WebDb::Postgres(None) => {
            let c = ScratchCluster::start(false)
                .map_err(|e| anyhow::anyhow!("a throw-away PostgreSQL cluster: {e}"))?;
            let url = rt.block_on(c.create_database())?;
            cluster = Some(c);
            (url, "a throw-away PostgreSQL cluster".into())
        }
    };
    let result = rt.block_on(bench(games, cups, &url, &shown));
    rt.shutdown_timeout(Duration::from_secs(2));
    drop(cluster);
    result
}

async fn bench(games: u64, cups: Option<seed::Cups>, url: &str, shown: &str) -> anyhow::Result<()> {
    let store: Arc<dyn Store> = croupier_store::open(url)
        .await
        .with_context(|| format!("opening {shown}"))?;
    let have = store.count_games("finished").await?;
    if have == 0 {
        let t = Instant::now();
        let end = std::time::SystemTime::now();
        let n =
            seed::seed_with_cups(store.as_ref(), games, Duration::from_secs(1), end, cups).await?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "seeded {n} games in {s:.1} s ({:.0} games/s) into {shown}",
            n as f64 / s,
        );
    } else {
        println!("using the {have} finished games in {shown}");
    }
    let tournaments = store.tournaments();
    let marked = tournaments
        .count_filtered_games(&croupier_store::tournaments::GamesFilter {
            marked: croupier_store::tournaments::Marked::Only,
            ..Default::default()
        })
        .await?;
    let cups = tournaments.tournament_list().await?;
    println!(
        "of them {marked} tournament games, in {} tournament{}",
        cups.len(),
        if cups.len() == 1 { "" } else { "s" }
    );
    if croupier_store::Backend::of(url) == Some(croupier_store::Backend::Postgres) {
        // What autovacuum does to a table that has grown: statistics for
        // the planner, and a visibility map for index-only scans.
        let pool = sqlx::PgPool::connect(url).await?;
        let t = Instant::now();
        sqlx::query("VACUUM ANALYZE games, game_seats")
            .execute(&pool)
            .await?;
        pool.close().await;
        println!(
            "VACUUM ANALYZE games, game_seats (as autovacuum would): {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    let config = ServerConfig {
        house_bots: Vec::new(),
        ladder: None,
        ..ServerConfig::default()
    };
    let (state, _) = croupier_server::prepare(store.clone(), &config)
        .await
        .map_err(anyhow::Error::msg)?;
    let app = croupier_server::app(state);

    // Pick real targets: the busiest bots, a long game, the deepest pages.
    let sw = store.leaderboard("skullwhist").await?;
    let ll = store.leaderboard("loveletter").await?;
    let top = sw.first().context("no rated SkullWhist bot")?;
    let (a, b) = (
        ll.first().context("no Love Letter bot")?,
        ll.get(1).context("one Love Letter bot only")?,
    );
    let ll_filter = GameFilter {
        game: Some("loveletter".into()),
        bot: None,
    };
    let ll_game = store
        .games_page(&ll_filter, 0, 1)
        .await?
        .first()
        .map(|g| g.id)
        .context("no Love Letter game")?;
    // Step 20 of the replay, or its last step in a shorter game (a step
    // past the end is a 404, which would end the benchmark).
    let ll_steps = store
        .game(ll_game)
        .await?
        .and_then(|g| g.record)
        .and_then(|r| serde_json::from_str::<croupier_rules::Record>(&r).ok())
        .map_or(0, |r| r.steps.len());
    let ll_step = ll_steps.min(20);
    let pages = |n: i64| ((n + 49) / 50).max(1);
    let all_pages = pages(store.count_finished(&GameFilter::default()).await?);
    let bot_pages = pages(top.games);
    let ll_pages = pages(store.count_finished(&ll_filter).await?);
    // The middle page by its number, and as the `older` link of the page
    // before it reaches it (`before=` that page's last game), as a reader
    // paging on does. A list of one page has no such link.
    let ll_mid = format!("/games?game=loveletter&page={}", ll_pages / 2 + 1);
    let ll_older = if ll_pages < 2 {
        None
    } else {
        let from = format!("/json/games?game=loveletter&page={}", ll_pages / 2);
        let (_, body) = fetch(&app, &from).await?;
        let v: serde_json::Value = serde_json::from_slice(&body)?;
        let older = v["older"]
            .as_str()
            .and_then(|h| h.strip_prefix("/json"))
            .with_context(|| format!("{from} has no older link"))?;
        Some(older.to_string())
    };
    let mut targets: Vec<(&str, String)> = vec![
        ("baseline: stylesheet", "/static/croupier.css".into()),
        ("home", "/".into()),
        ("home JSON", "/json/home".into()),
        ("leaderboard skullwhist", "/leaderboard/skullwhist".into()),
        ("leaderboard loveletter", "/leaderboard/loveletter".into()),
        ("bots online", "/bots".into()),
        ("bot page", format!("/bots/{}", top.name)),
        ("bot JSON", format!("/json/bots/{}", top.name)),
        ("versus", format!("/versus/{}/{}", a.name, b.name)),
        ("games page 1", "/games".into()),
        ("games last page", format!("/games?page={all_pages}")),
        ("games loveletter mid page", ll_mid),
    ];
    targets.extend(ll_older.map(|uri| ("games loveletter mid by link", uri)));
    targets.extend([
        (
            "games of a bot, last page",
            format!("/games?bot={}&page={bot_pages}", top.name),
        ),
        (
            "game replay (love letter)",
            format!("/games/{ll_game}?step={ll_step}"),
        ),
        ("game JSON", format!("/json/games/{ll_game}")),
        // The lists the tournaments page links to ("ladder games only",
        // "every tournament's games"), and the same filter on a bot.
        ("ladder games", "/games?tournaments=hide".into()),
        (
            "ladder games, mid page",
            format!("/games?tournaments=hide&page={}", all_pages / 2 + 1),
        ),
        (
            "ladder games of a bot, mid",
            format!(
                "/games?tournaments=hide&bot={}&page={}",
                top.name,
                bot_pages / 2 + 1
            ),
        ),
        ("tournament games", "/games?tournaments=only".into()),
        (
            "tournament games of a bot",
            format!("/games?tournaments=only&bot={}", top.name),
        ),
        ("activity", "/activity".into()),
        ("rules page", "/rules/loveletter".into()),
        ("tournaments", "/tournaments".into()),
    ]);
    // One tournament's list, when the database has a tournament (the
    // newest: a seeded cup, or a copy's games marked by hand as a
    // tournament's, see docs/benchmarks.md), and of its first entrant (the
    // busiest bot when it has no entries).
    if let Some(cup) = cups.first() {
        let name = croupier_web::html::url(&cup.name);
        let entrant = store
            .tournaments()
            .tournament_entries(cup.id)
            .await?
            .first()
            .map_or_else(|| top.name.clone(), |e| e.name.clone());
        targets.extend([
            ("one tournament", format!("/tournaments/{name}")),
            (
                "one tournament's games",
                format!("/games?tournament={name}"),
            ),
            (
                "one tournament's games of a bot",
                format!(
                    "/games?tournament={name}&bot={}",
                    croupier_web::html::url(&entrant)
                ),
            ),
        ]);
    }
    // Each row asks for its one page again and again; this row asks for
    // a different finished tournament's page each time, so that every
    // sample makes the page (a finished tournament's page is kept once
    // made, and "one tournament" above times the kept one). A running
    // tournament's page is made at every request like this. (Its 32 pages
    // and the newest cup's are one more than the pages kept, so the memory
    // passes below make each again.)
    let mut rows: Vec<(&str, Vec<String>)> = targets
        .into_iter()
        .map(|(label, uri)| (label, vec![uri]))
        .collect();
    let others: Vec<String> = cups
        .iter()
        .skip(1)
        .filter(|c| c.status == "finished")
        .take(SAMPLES + 2)
        .map(|c| format!("/tournaments/{}", croupier_web::html::url(&c.name)))
        .collect();
    if others.len() == SAMPLES + 2 {
        rows.push(("one tournament, made", others));
    } else if !cups.is_empty() {
        println!(
            "(\"one tournament, made\" needs {} finished tournaments besides the newest; \
             this database has {}: not timed)",
            SAMPLES + 2,
            others.len()
        );
    }
    println!(
        "\n{:<32} {:>9} {:>9} {:>9} {:>9}   ({SAMPLES} samples, in process)",
        "page", "p50 ms", "p95 ms", "max ms", "KiB"
    );
    let mut worst = 0.0f64;
    for (label, uris) in &rows {
        let mut times = Vec::with_capacity(SAMPLES);
        let mut size = 0;
        for i in 0..SAMPLES + 2 {
            let (ms, body) = fetch(&app, &uris[i % uris.len()]).await?;
            size = body.len();
            times.push(ms);
        }
        // The first two requests warm the caches.
        let mut times = times.split_off(2);
        times.sort_by(f64::total_cmp);
        let (p50, p95, max) = (
            percentile(&times, 0.5),
            percentile(&times, 0.95),
            percentile(&times, 1.0),
        );
        if !label.starts_with("baseline") {
            worst = worst.max(p95);
        }
        let shown = match uris.as_slice() {
            [one] => one.clone(),
            [first, .., last] => format!("{first} … {last} ({} pages)", uris.len()),
            [] => String::new(),
        };
        println!(
            "{label:<32} {p50:>9.2} {p95:>9.2} {max:>9.2} {:>9.1}   {shown}",
            size as f64 / 1024.0
        );
    }
    // Issue 53: every data page at p95 within 20 ms, up to a million games.
    println!(
        "\nslowest data page p95: {worst:.2} ms (goal: 20 ms or less) - {}",
        if worst <= 20.0 { "met" } else { "NOT met" }
    );
    // Issue 53: memory stays flat while it serves. Every page kind again,
    // as often as the timed pass asked for it, a few times over, with the
    // process's resident memory after each pass.
    let me = std::process::id();
    let mut rss = vec![rss_mib(me)];
    for _ in 0..MEMORY_PASSES {
        for (_, uris) in &rows {
            for i in 0..SAMPLES + 2 {
                fetch(&app, &uris[i % uris.len()]).await?;
            }
        }
        rss.push(rss_mib(me));
    }
    let shown: Vec<String> = rss[1..].iter().map(|m| format!("{m:.1}")).collect();
    println!(
        "resident memory: {:.1} MiB after the timed pass; after {MEMORY_PASSES} more passes of \
         every page ({} requests each): {} MiB; {:+.1} MiB from the first of them to the last",
        rss[0],
        rows.len() * (SAMPLES + 2),
        shown.join(", "),
        rss[MEMORY_PASSES] - rss[1],
    );
    Ok(())
}

/// One request through the router: its time in ms and its body;
/// anything but 200 ends the benchmark.
async fn fetch(app: &croupier_server::App, uri: &str) -> anyhow::Result<(f64, axum::body::Bytes)> {
    let req = Request::get(uri).body(Body::empty())?;
    let t = Instant::now();
    let resp = app.clone().oneshot(req).await?;
    let status = resp.status();
    let body = axum::body::to_bytes(resp.into_body(), 64 << 20).await?;
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    anyhow::ensure!(status == StatusCode::OK, "{uri}: HTTP {status}");
    Ok((ms, body))
}
