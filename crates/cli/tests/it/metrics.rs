//! Metrics (issue 49): `croupier serve --metrics-listen` serves `/metrics`
//! in the Prometheus text format on an address of its own, and a scrape
//! while ladder games run parses with a Prometheus text parser
//! (`prometheus-parse`) and holds each family the docs promise: games
//! started and finished per game and kind, faults per kind, HTTP requests
//! and their latency per route, group-commit batches and commit latency,
//! sandboxed process starts and their latency, and the gauges of what is in
//! progress (games, sessions, bots online, the ladder's queue, tournaments).
//!
//! A hosted GOPS program (the example random bot, in the strict sandbox)
//! and a push bot that answers every call with garbage (a listener of the
//! test's own on loopback) play the Goofspiel ladder.

#![allow(clippy::unwrap_used)] // a test fails loudly

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use prometheus_parse::{Sample, Scrape, Value};

use crate::support::{self, serve};

const LADDER: &str = r#"
rest = "100ms"
[goofspiel]
variant = "gops"
move_time = "300ms"
house = ["random"]
[loveletter]
enabled = false
[skullwhist]
enabled = false
"#;

/// A push bot on loopback that answers every request with `garbage`;
/// returns its URL.
fn garbage_bot() -> String {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
            // The request: its headers, then as much body as they announce.
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            while let Ok(n) = conn.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_lowercase();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                  content-length: 7\r\nconnection: close\r\n\r\ngarbage",
            );
        }
    });
    url
}

fn scrape(port: u16) -> Scrape {
    let r = reqwest::blocking::get(format!("http://127.0.0.1:{port}/metrics")).unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let kind = r.headers()["content-type"].to_str().unwrap().to_string();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    let text = r.text().unwrap();
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap()
}

/// The samples of `name` whose labels include `labels`.
fn samples<'a>(s: &'a Scrape, name: &str, labels: &[(&str, &str)]) -> Vec<&'a Sample> {
    s.samples
        .iter()
        .filter(|x| x.metric == name)
        .filter(|x| labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .collect()
}

/// The value of a counter or gauge (the sum over matching samples).
fn value(s: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    samples(s, name, labels)
        .iter()
        .map(|x| match &x.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
            other => panic!("{name} is not a number: {other:?}"),
        })
        .sum()
}

/// `n` requests of `route` by `method` were answered with 200 and timed.
fn answered(m: &Scrape, route: &str, method: &str, n: f64) {
    let labels = [("route", route), ("method", method)];
    let ok = [labels[0], labels[1], ("status", "200")];
    assert_eq!(value(m, "croupier_http_requests_total", &ok), n, "{route}");
    assert_eq!(
        observations(m, "croupier_http_request_duration_seconds", &labels),
        n,
        "{route}"
    );
}

/// The observations of a histogram (its `+Inf` bucket).
fn observations(s: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    samples(s, name, labels)
        .iter()
        .map(|x| match &x.value {
            Value::Histogram(buckets) => {
                assert!(buckets.len() > 5, "{name} has buckets: {buckets:?}");
                buckets.iter().map(|b| b.count).fold(0.0, f64::max)
            }
            other => panic!("{name} is not a histogram: {other:?}"),
        })
        .sum()
}

#[test]
fn a_scrape_while_games_run_parses_and_holds_every_family() {
    assert!(support::have("python3"), "python3 is needed");
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let ladder = dir.path().join("ladder.toml");
    std::fs::write(&ladder, LADDER).unwrap();
    let bot = support::root().join("examples/bots/gops/random_bot.py");
    let port = crate::support::free_port();
    let listen = format!("127.0.0.1:{port}");
    let s = serve(
        dir.path(),
        &[
            "--sandbox",
            "strict",
            "--house-bots",
            "",
            "--ladder",
            ladder.to_str().unwrap(),
            "--metrics-listen",
            &listen,
            "--allow-private-bot-urls",
        ],
    );
    // Not on the server's own address.
    let own = reqwest::blocking::get(format!("{}/metrics", s.url)).unwrap();
    assert_eq!(own.status().as_u16(), 404);

    let c = reqwest::blocking::Client::new();
    support::register_owner(&s.url, "alice");
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["bots", "upload", "randy"])
        .arg(&bot)
        .args(["--runtime", "python3", "--dialect", "gops"])
        .args(["--game", "goofspiel", "--wait", "--server", &s.url])
        .args(["--owner", "alice", "--password", "secret-pw"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let push = format!(
        r#"{{"name": "garbler", "game": "goofspiel", "kind": "push", "url": "{}"}}"#,
        garbage_bot()
    );
    let r = c
        .post(format!("{}/v1/bots", s.url))
        .basic_auth("alice", Some("secret-pw"))
        .body(push)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 201, "{}", r.text().unwrap());
    for _ in 0..3 {
        let r = c
            .get(format!("{}/leaderboard/goofspiel", s.url))
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }

    // The 2014 API's calls (answered by the front without the router) are
    // counted by method, an unknown one under the route's pattern (with
    // its slash, as the router's route labelled it).
    for _ in 0..2 {
        let r = c
            .post(format!("{}/api/status/", s.url))
            .body(r#"{"session": "nobody's"}"#)
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    let r = c
        .post(format!("{}//api//x9z/", s.url))
        .body("{}")
        .send()
        .unwrap();
    // The 2014 API's failures are HTTP 200.
    assert_eq!(r.status().as_u16(), 200);
    assert!(r.text().unwrap().contains("unknown method 'x9z'"));

    // Wait for the push bot's ladder games to have faulted.
    let goofspiel = [("game", "goofspiel")];
    let start = Instant::now();
    let m = loop {
        let m = scrape(port);
        if value(&m, "croupier_faults_total", &goofspiel) > 0.0 {
            break m;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no fault counted"
        );
        std::thread::sleep(Duration::from_millis(500));
    };

    let ladder = [("game", "goofspiel"), ("kind", "ladder")];
    let started = value(&m, "croupier_games_started_total", &ladder);
    let finished = value(&m, "croupier_games_finished_total", &ladder);
    assert!(
        finished >= 1.0 && started >= finished,
        "{started} {finished}"
    );
    answered(&m, "/leaderboard/:game", "GET", 3.0);
    answered(&m, "/api/status", "POST", 2.0);
    let unknown = [
        ("route", "/api/:method/"),
        ("method", "POST"),
        ("status", "200"),
    ];
    assert_eq!(value(&m, "croupier_http_requests_total", &unknown), 1.0);
    assert!(observations(&m, "croupier_commit_batch_writes", &[]) >= 2.0);
    assert!(observations(&m, "croupier_commit_seconds", &[]) >= 2.0);
    let strict = [("sandbox", "strict")];
    let starts = value(
        &m,
        "croupier_bot_process_starts_total",
        &[strict[0], ("result", "ok")],
    );
    assert!(starts >= 2.0, "validation and a ladder game: {starts}");
    assert_eq!(
        observations(&m, "croupier_bot_process_start_seconds", &strict),
        starts
    );
    // The gauges are there, whatever they read at this moment.
    for gauge in [
        "croupier_games_active",
        "croupier_sessions",
        "croupier_bots_online",
        "croupier_ladder_matches_running",
        "croupier_ladder_waiting_bots",
        "croupier_ladder_ready_bots",
        "croupier_tournaments",
    ] {
        let found = samples(&m, gauge, &[]);
        assert!(!found.is_empty(), "{gauge} is missing");
        assert!(
            found.iter().all(|x| matches!(x.value, Value::Gauge(_))),
            "{gauge} is a gauge"
        );
    }
    // Dealt, less finished and aborted: what is in progress (a game may
    // end while the scrape is written, between two of its lines).
    let aborted = value(&m, "croupier_games_aborted_total", &ladder);
    let active = value(&m, "croupier_games_active", &ladder);
    assert!(active >= 0.0, "{active}");
    assert!(
        (active - (started - finished - aborted)).abs() <= 2.0,
        "{active} active, {started} started, {finished} finished, {aborted} aborted"
    );
    // Counters only grow.
    let later = scrape(port);
    assert!(value(&later, "croupier_games_started_total", &ladder) >= started);
}
