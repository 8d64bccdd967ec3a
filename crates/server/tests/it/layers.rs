//! The layers of the workspace (ARCHITECTURE.md, "Layers"): every crate's
//! manifest names only the crates of ours it may use, and the layers that
//! must not know an HTTP framework (live play, competition) do not depend
//! on one. Cargo already refuses a circle between crates; this keeps a
//! crate from reaching up past its layer, or sideways into the HTTP stack.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What each crate of ours may use (its `[dependencies]`, ours only).
const MAY_USE: &[(&str, &[&str])] = &[
    ("rules", &[]),
    ("dialects", &["rules"]),
    ("bots", &["rules"]),
    ("arena", &["rules", "dialects", "bots"]),
    ("store", &["rules"]),
    ("live", &["rules", "dialects", "arena", "store"]),
    (
        "competition",
        &["rules", "dialects", "bots", "arena", "store", "live"],
    ),
    (
        "web",
        &["rules", "bots", "arena", "store", "live", "competition"],
    ),
    (
        "server",
        &[
            "rules",
            "dialects",
            "bots",
            "arena",
            "store",
            "live",
            "competition",
            "web",
        ],
    ),
    (
        "cli",
        &[
            "rules",
            "dialects",
            "bots",
            "arena",
            "store",
            "live",
            "competition",
            "web",
            "server",
        ],
    ),
];

/// Crates that only the HTTP layer (and above) may use.
const HTTP_STACK: &[&str] = &[
    "axum",
    "hyper",
    "hyper-util",
    "tower",
    "tower-http",
    "http",
    "governor",
];

/// Which layers may not use which of [`HTTP_STACK`].
const NO_HTTP: &[(&str, &[&str])] = &[
    ("rules", HTTP_STACK),
    ("dialects", HTTP_STACK),
    ("bots", HTTP_STACK),
    ("store", HTTP_STACK),
    ("live", HTTP_STACK),
    ("competition", HTTP_STACK),
    // The website answers requests with axum, but never runs the accept
    // loop or the rate limits.
    ("web", &["hyper-util", "tower-http", "governor"]),
];

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/")
        .to_path_buf()
}

/// The names of `crate_dir`'s normal dependencies (not dev- or build-).
fn dependencies(name: &str) -> BTreeSet<String> {
    let path = crates_dir().join(name).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let manifest: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeSet::new();
    if let Some(deps) = manifest.get("dependencies").and_then(|d| d.as_table()) {
        out.extend(deps.keys().cloned());
    }
    out
}

#[test]
fn every_crate_of_ours_is_in_the_layer_table() {
    let mut on_disk: BTreeSet<String> = std::fs::read_dir(crates_dir())
        .expect("crates/")
        .filter_map(Result::ok)
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = MAY_USE.iter().map(|(c, _)| c.to_string()).collect();
    on_disk.retain(|c| !listed.contains(c));
    assert!(
        on_disk.is_empty(),
        "crates missing from the layer table (tests/it/layers.rs and ARCHITECTURE.md): {on_disk:?}"
    );
}

#[test]
fn crates_use_only_the_layers_below_them() {
    let mut wrong = Vec::new();
    for (name, allowed) in MAY_USE {
        for dep in dependencies(name) {
            let Some(ours) = dep.strip_prefix("croupier-") else {
                continue;
            };
            if !allowed.contains(&ours) {
                wrong.push(format!("croupier-{name} uses croupier-{ours}"));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layers: {wrong:?}");
}

#[test]
fn live_play_and_competition_know_no_http_framework() {
    let mut wrong = Vec::new();
    for (name, banned) in NO_HTTP {
        for dep in dependencies(name) {
            if banned.contains(&dep.as_str()) {
                wrong.push(format!("croupier-{name} uses {dep}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "HTTP stack below the HTTP layer: {wrong:?}"
    );
}
