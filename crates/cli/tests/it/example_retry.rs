//! Issue 18, item 3: the SkullWhist example bots (`examples/bots/skullwhist/`)
//! wait and send again when the server throttles them with
//! `{"result":"retry"}` and `Retry-After`, on any method — not only on
//! `new-game`'s "no opponent yet". Here the bot's account has just had
//! failed logins, so its own (right) login is first answered `retry`.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use crate::support;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::Command;

use serde_json::{json, Value};
use support::{have, root, serve};

/// One `POST /api/<method>/` on its own connection: the reply's JSON.
fn post(port: u16, method: &str, body: &Value) -> Value {
    let body = body.to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST /api/{method}/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, json) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    serde_json::from_str(json).unwrap()
}

#[test]
fn skullwhist_example_bots_wait_out_a_throttled_login() {
    let dir = tempfile::tempdir().unwrap();
    let srv = serve(dir.path(), &[]);
    let mut ran = 0;
    for (interp, file) in [
        ("python3", "random_bot.py"),
        ("node", "random_bot.js"),
        ("ruby", "random_bot.rb"),
    ] {
        if !have(interp) {
            continue;
        }
        let name = format!("throttled-{interp}");
        let reply = post(
            srv.port,
            "register",
            &json!({"name": name, "password": "pw"}),
        );
        assert_eq!(reply["result"], "success", "{reply}");
        // Wrong passwords until the account is throttled.
        let wrong = json!({"name": name, "password": "wrong"});
        let mut throttled = false;
        for _ in 0..10 {
            let reply = post(srv.port, "login", &wrong);
            if reply["result"] == "retry" {
                throttled = true;
                break;
            }
            assert_eq!(reply["result"], "failure", "{reply}");
        }
        assert!(throttled, "failed logins were never throttled");
        let o = Command::new(interp)
            .current_dir(root())
            .arg(format!("examples/bots/skullwhist/{file}"))
            .args([srv.url.as_str(), &name, "pw", "--games", "1"])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && out.contains(&format!("logged in as {name}")),
            "{file}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        ran += 1;
    }
    assert!(
        ran > 0 || std::env::var("CI").is_err(),
        "no interpreter ran"
    );
}
