//! The 2014 SkullWhist SDK's JavaScript bot against a real `croupier serve`
//! on loopback: its exact request sequence, through `jsonp`, on the URL it
//! builds (the API base, which ends in `/api/`, plus `/jsonp/`, hence
//! `/api//jsonp/`), with jQuery's callback names and cache-busting `_`.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use crate::support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::Server;

/// `croupier serve` with a house bot to play against, and its directory.
fn serve() -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let srv = support::serve(dir.path(), &["--house-bots", "random", "--no-ladder"]);
    (srv, dir)
}

/// The SDK bot's requests: `$.getJSON(base + "/jsonp/?callback=?", data)`.
struct SdkBot {
    http: reqwest::blocking::Client,
    /// The API base as the SDK is configured with it, ending in `/api/`.
    base: String,
    calls: u32,
}

impl SdkBot {
    /// Calls `method` with `data` and returns the JSON inside the callback.
    fn call(&mut self, method: &str, data: &[(&str, String)]) -> Value {
        self.calls += 1;
        // jQuery names the callback and adds `_` to defeat caches.
        let callback = format!(
            "jQuery1102044_{}",
            1_400_000_000_000u64 + u64::from(self.calls)
        );
        let url = format!("{}/jsonp/", self.base);
        assert!(url.contains("/api//jsonp/"), "{url}");
        let mut query: Vec<(&str, String)> = vec![
            ("callback", callback.clone()),
            ("method", method.to_string()),
        ];
        query.extend(data.iter().cloned());
        query.push((
            "_",
            format!("{}", 1_400_000_000_000u64 + u64::from(self.calls)),
        ));
        let reply = self.http.get(&url).query(&query).send().unwrap();
        assert_eq!(reply.status().as_u16(), 200, "{method}: {url}");
        let kind = reply
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        // A <script> tag runs only JavaScript.
        assert!(
            kind.contains("javascript"),
            "{method}: content type '{kind}'"
        );
        let body = reply.text().unwrap();
        let inner = body
            .strip_prefix(&format!("{callback}("))
            .and_then(|b| b.strip_suffix(");"))
            .unwrap_or_else(|| panic!("{method}: not wrapped in {callback}(…);: {body}"));
        let v: Value = serde_json::from_str(inner).unwrap();
        assert!(
            ["success", "retry"].contains(&v["result"].as_str().unwrap_or("")),
            "{method}: {v}"
        );
        v
    }
}

#[test]
fn the_sdk_javascript_bot_plays_a_whole_game_through_jsonp() {
    let (srv, _dir) = serve();
    let mut bot = SdkBot {
        http: reqwest::blocking::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap(),
        base: format!("http://127.0.0.1:{}/api/", srv.port),
        calls: 0,
    };
    let name = ("name", "sdk-js-bot".to_string());
    let password = ("password", "pw".to_string());
    bot.call("register", &[name.clone(), password.clone()]);
    let login = bot.call("login", &[name, password]);
    let session = ("session", login["session"].as_str().unwrap().to_string());
    let mut game = bot.call("new-game", std::slice::from_ref(&session));
    while game["result"] == "retry" {
        game = bot.call("new-game", std::slice::from_ref(&session));
    }
    let mut hand: Vec<String> = game["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert_eq!(hand.len(), 13);
    bot.call("bid", &[session.clone(), ("bid", "3".to_string())]);
    let started = Instant::now();
    let mut played = 0;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the game stalls"
        );
        let status = bot.call("status", std::slice::from_ref(&session));
        if status["game"].is_null() {
            break; // the game is over
        }
        if status["your-turn"] != true {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        // Follow the suit the opponent led, if it can.
        let led = status["opponent-current-card"]
            .as_str()
            .map(|c| c[..1].to_string());
        let i = led
            .and_then(|suit| hand.iter().position(|c| c.starts_with(&suit)))
            .unwrap_or(0);
        let card = hand.remove(i);
        bot.call("play", &[session.clone(), ("card", card)]);
        played += 1;
    }
    assert_eq!(played, 13, "every card was played");
    assert!(hand.is_empty());
}

#[test]
fn every_endpoint_accepts_repeated_slashes() {
    let (srv, _dir) = serve();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let base = format!("http://127.0.0.1:{}", srv.port);
    for path in [
        "//api/status/",
        "/api//status/",
        "//api//status",
        "/api/status//",
    ] {
        let v: Value = http
            .post(format!("{base}{path}"))
            .header("Content-Type", "application/json")
            .body(r#"{"session":"nope"}"#)
            .send()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(v["result"], "failure", "{path}: {v}");
        assert!(
            v["reason"].as_str().unwrap().contains("session"),
            "{path}: {v}"
        );
    }
    for path in [
        "//api/",
        "/api//register/",
        "//games",
        "//leaderboard//loveletter",
    ] {
        let r = http.get(format!("{base}{path}")).send().unwrap();
        assert_eq!(r.status().as_u16(), 200, "GET {path}");
    }
    let r = http
        .get(format!("{base}/api//no-such-method/"))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
}
