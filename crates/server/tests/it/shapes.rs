//! Issue 18, item 6, over every route of both JSON APIs: an oversized,
//! malformed, mistyped or non-UTF-8 request to any `/api` method gets the
//! 2014 API's `{"result":"failure","reason":…}` (HTTP 200), and to any `/v1`
//! route `{"error":…}` with a 4xx status — never a plain-text page.
//! Item 4: a push bot's URL cannot be changed to a private address after
//! registration (`PATCH /v1/bots/{name}` takes only `enabled`).

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use common::{config, TestServer};
use reqwest::Method;
use serde_json::{json, Value};

/// What the tests send as a body, and what it is.
fn bad_bodies() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("3 MiB", vec![b'x'; 3 * 1024 * 1024]),
        ("just over 64 KiB", {
            let mut v = br#"{"name":""#.to_vec();
            v.extend(vec![b'a'; 64 * 1024]);
            v.extend(br#""}"#);
            v
        }),
        ("cut-off JSON", br#"{"session": "#.to_vec()),
        ("a JSON array", b"[1, 2, 3]".to_vec()),
        ("a JSON string", br#""hello""#.to_vec()),
        ("mistyped fields", br#"{"session": 5, "name": [], "password": {}, "bid": "x", "card": 7, "game": "y", "enabled": "yes", "match": 1, "decision": -1, "action": null, "kind": 3, "url": 4}"#.to_vec()),
        ("invalid UTF-8", vec![b'{', b'"', 0xff, 0xfe, b'"', b':', b'1', b'}']),
        ("deep nesting", {
            let mut v = vec![b'['; 100_000];
            v.extend(vec![b']'; 100_000]);
            v
        }),
    ]
}

fn send(
    srv: &TestServer,
    method: Method,
    path: &str,
    auth: &Auth,
    body: Vec<u8>,
) -> (u16, String, String) {
    let len = body.len();
    let mut req = srv
        .client
        .request(method, format!("{}{path}", srv.base))
        .header("Content-Type", "application/json")
        .body(body);
    req = match auth {
        Auth::None => req,
        Auth::Owner => req.basic_auth("shape-owner", Some("pw")),
        Auth::Bearer(t) => req.bearer_auth(t),
    };
    let r = req
        .send()
        .unwrap_or_else(|e| panic!("{path} with a body of {len} bytes: {e:?}"));
    let status = r.status().as_u16();
    let kind = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    (status, kind, r.text().unwrap())
}

enum Auth {
    None,
    Owner,
    Bearer(String),
}

#[test]
fn every_json_route_answers_bad_requests_in_its_apis_shape() {
    let srv = TestServer::start();
    let (s, _, text) = send(
        &srv,
        Method::POST,
        "/v1/owners",
        &Auth::None,
        json!({"name": "shape-owner", "password": "pw"})
            .to_string()
            .into_bytes(),
    );
    assert_eq!(s, 201, "{text}");
    let (s, _, text) = send(
        &srv,
        Method::POST,
        "/v1/bots",
        &Auth::Owner,
        json!({"name": "shape-pull", "game": "goofspiel", "kind": "pull"})
            .to_string()
            .into_bytes(),
    );
    assert_eq!(s, 201, "{text}");
    let token = serde_json::from_str::<Value>(&text).unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let bot = srv.bot("shape");

    // The 2014 API: every method, with and without a valid session.
    for method in [
        "register",
        "login",
        "new-game",
        "bid",
        "status",
        "play",
        "play-card",
        "old-game",
        "no-such-method",
    ] {
        for (what, body) in bad_bodies() {
            // With a valid session only where the method then reads
            // fields of its own (status and new-game need no more).
            let sessions: &[bool] = if ["bid", "play", "play-card", "old-game"].contains(&method) {
                &[false, true]
            } else {
                &[false]
            };
            for &with_session in sessions {
                let body = if with_session && what == "mistyped fields" {
                    // Past the session check, to the method's own fields.
                    let mut v: Value = serde_json::from_slice(&body).unwrap();
                    v["session"] = json!(bot.session);
                    v.to_string().into_bytes()
                } else {
                    body.clone()
                };
                let (status, kind, text) = send(
                    &srv,
                    Method::POST,
                    &format!("/api/{method}/"),
                    &Auth::None,
                    body,
                );
                let v: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|_| panic!("{method} ({what}): {status} {kind}: {text:.200}"));
                assert_eq!(status, 200, "{method} ({what}): {v}");
                assert!(kind.contains("json"), "{method} ({what}): {kind}");
                assert_eq!(v["result"], "failure", "{method} ({what}): {v}");
                assert!(
                    v["reason"].as_str().is_some_and(|r| !r.is_empty()),
                    "{method} ({what}): {v}"
                );
            }
        }
    }

    // /v1: every route, with credentials that get it to read the body.
    // (method, path, credentials, whether the route reads a body)
    let routes = [
        (Method::POST, "/v1/owners", Auth::None, true),
        (Method::POST, "/v1/bots", Auth::Owner, true),
        (Method::PATCH, "/v1/bots/shape-pull", Auth::Owner, true),
        (
            Method::POST,
            "/v1/answer",
            Auth::Bearer(token.clone()),
            true,
        ),
        // Routes without a body, and a route or method that does not exist.
        (Method::GET, "/v1/bots", Auth::Bearer("wrong".into()), false),
        (Method::GET, "/v1/bots/nobody", Auth::Owner, false),
        (Method::POST, "/v1/bots/nobody/token", Auth::Owner, false),
        (
            Method::GET,
            "/v1/messages?after=x",
            Auth::Bearer(token.clone()),
            false,
        ),
        (Method::GET, "/v1/me", Auth::None, false),
        (Method::DELETE, "/v1/bots/shape-pull", Auth::Owner, false),
        (Method::PUT, "/v1/answer", Auth::Bearer(token), false),
        (Method::POST, "/v1/no-such-route", Auth::None, false),
    ];
    for (method, path, auth, reads_body) in &routes {
        for (what, body) in bad_bodies() {
            if !reads_body && body.len() > 1024 * 1024 {
                continue;
            }
            let (status, kind, text) = send(&srv, method.clone(), path, auth, body);
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| {
                panic!("{method} {path} ({what}): {status} {kind}: {text:.200}")
            });
            assert!(
                (400..500).contains(&status),
                "{method} {path} ({what}): {status} {v}"
            );
            assert!(kind.contains("json"), "{method} {path} ({what}): {kind}");
            assert!(
                v["error"].as_str().is_some_and(|e| !e.is_empty()),
                "{method} {path} ({what}): {v}"
            );
        }
    }
}

#[test]
fn a_push_bots_url_cannot_be_changed_to_a_private_address() {
    let mut config = config();
    config.allow_private_bot_urls = false;
    let srv = TestServer::with_config(config);
    let (s, _, text) = send(
        &srv,
        Method::POST,
        "/v1/owners",
        &Auth::None,
        json!({"name": "shape-owner", "password": "pw"})
            .to_string()
            .into_bytes(),
    );
    assert_eq!(s, 201, "{text}");
    // A public IP literal: checked without a name lookup, and this server
    // runs no ladder, so nothing ever connects to it.
    let public = "http://203.0.114.7/bot";
    let (s, _, text) = send(
        &srv,
        Method::POST,
        "/v1/bots",
        &Auth::Owner,
        json!({"name": "pushy", "game": "goofspiel", "kind": "push", "url": public})
            .to_string()
            .into_bytes(),
    );
    assert_eq!(s, 201, "{text}");
    for body in [
        json!({"url": "http://127.0.0.1:9/"}),
        json!({"enabled": true, "url": "http://169.254.169.254/"}),
        json!({"enabled": false, "endpoint": "http://10.0.0.1/"}),
    ] {
        let (s, _, text) = send(
            &srv,
            Method::PATCH,
            "/v1/bots/pushy",
            &Auth::Owner,
            body.to_string().into_bytes(),
        );
        assert_eq!(s, 400, "{body}: {text}");
    }
    let (s, _, text) = send(
        &srv,
        Method::GET,
        "/v1/bots/pushy",
        &Auth::Owner,
        Vec::new(),
    );
    assert_eq!(s, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["url"], public, "{v}");
}
