//! The server's JSON APIs end to end, in process: the 2014 REST API
//! (`POST /api/<method>/`, whose lenient body parsing reads any JSON object,
//! numbers sent as strings, ...) and the owners' API `/v1`, through the whole
//! router (path collapsing, throttling, body limits, failure shapes).
//!
//! Checks issue 18's item 6 on every input: a `POST` to `/api` is answered
//! with a JSON object whose `result` is `success`, `failure` or `retry`, and
//! every `/v1` answer is JSON, with an `error` when it is not a success.
//! The text `SESSION` in a body is replaced by a logged-in bot's session so
//! that inputs reach past the session check.
#![no_main]
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{header, Method, Request};
use croupier_dialects::skullwhist_rest::Fields;
use croupier_fuzz::Input;
use croupier_live::hub::HubConfig;
use croupier_server::ServerConfig;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tower::ServiceExt as _;

struct Server {
    rt: tokio::runtime::Runtime,
    app: croupier_server::App,
    session: String,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let db = std::env::temp_dir().join(format!("croupier-fuzz-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&db);
        let config = ServerConfig {
            hub: HubConfig {
                session_idle: Duration::from_secs(3600),
                move_timeout: Duration::from_secs(3600),
                poll_timeout: Duration::from_millis(1),
                ..HubConfig::default()
            },
            house_bots: Vec::new(),
            house_pause: Duration::from_millis(1),
            ladder: None,
            allow_private_bot_urls: false,
            sandbox: croupier_arena::transport::process::Sandbox::Off,
        };
        let (app, session) = rt.block_on(async {
            let store = croupier_store::open(&format!("sqlite://{}", db.display()))
                .await
                .expect("a store");
            let (state, _) = croupier_server::prepare(store, &config)
                .await
                .expect("state");
            let creds = Fields::of_strings([("name", "fuzz"), ("password", "fuzz")]);
            croupier_server::skullwhist_api::call(&state, "register", &creds).await;
            let login = croupier_server::skullwhist_api::call(&state, "login", &creds).await;
            let session = login["session"].as_str().expect("logged in").to_string();
            (croupier_server::app(Arc::clone(&state)), session)
        });
        Server { rt, app, session }
    })
}

const API: [&str; 11] = [
    "register",
    "login",
    "new-game",
    "bid",
    "status",
    "play",
    "play-card",
    "old-game",
    "jsonp",
    "nosuch",
    "",
];
const V1: [(Method, &str); 8] = [
    (Method::POST, "/v1/owners"),
    (Method::POST, "/v1/bots"),
    (Method::GET, "/v1/bots"),
    (Method::PATCH, "/v1/bots/fuzz"),
    (Method::POST, "/v1/bots/fuzz/token"),
    (Method::GET, "/v1/messages"),
    (Method::POST, "/v1/answer"),
    (Method::GET, "/v1/me"),
];
const AUTH: [Option<&str>; 4] = [
    None,
    Some("Bearer 0123456789abcdef"),
    Some("Basic ZnV6ejpmdXp6"),
    Some("Basic !!"),
];

fuzz_target!(|data: &[u8]| {
    let srv = server();
    let mut input = Input::new(data);
    let route = input.byte();
    let auth = AUTH[usize::from(input.byte()) % AUTH.len()];
    let body = input.rest();
    let body = match std::str::from_utf8(body) {
        Ok(text) => text.replace("SESSION", &srv.session).into_bytes(),
        Err(_) => body.to_vec(),
    };
    let (method, path, v1) = if route % 2 == 0 {
        let m = API[usize::from(route / 2) % API.len()];
        (Method::POST, format!("/api/{m}/"), false)
    } else {
        let (m, p) = &V1[usize::from(route / 2) % V1.len()];
        (m.clone(), p.to_string(), true)
    };
    let mut req = Request::builder()
        .method(method.clone())
        .uri(&path)
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(a) = auth {
        req = req.header(header::AUTHORIZATION, a);
    }
    let mut req = req.body(Body::from(body)).expect("a request");
    req.extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
    let (status, text) = srv.rt.block_on(async {
        let res = srv
            .app
            .clone()
            .oneshot(req)
            .await
            .expect("the router answers");
        let status = res.status();
        let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
            .await
            .expect("a body");
        (status, bytes)
    });
    if path == "/api/jsonp/" {
        return;
    }
    let reply: Value = serde_json::from_slice(&text).unwrap_or_else(|e| {
        panic!(
            "{method} {path}: HTTP {status}, not JSON ({e}): {}",
            String::from_utf8_lossy(&text)
        )
    });
    if v1 {
        if !status.is_success() {
            assert!(
                reply.get("error").is_some(),
                "{method} {path}: HTTP {status}: {reply}"
            );
        }
    } else {
        let result = reply.get("result").and_then(Value::as_str);
        assert!(
            matches!(result, Some("success" | "failure" | "retry")),
            "{method} {path}: HTTP {status}: {reply}"
        );
    }
});
