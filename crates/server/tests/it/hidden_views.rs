//! Issue 18, item 1: no public view of a running game changes when its
//! hidden cards change. Two servers hold the same running game (same bots,
//! same start) dealt from different seeds, i.e. with different hidden
//! hands; every public page and JSON twin must be byte for byte the same.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use proptest::prelude::*;
use tower::ServiceExt as _;

const PATHS: &[&str] = &[
    "/",
    "/json/home",
    "/games",
    "/json/games",
    "/games/1",
    "/json/games/1",
    "/games/1?step=3",
    "/json/games/1?step=3",
    "/activity",
    "/json/activity",
    "/bots",
    "/json/bots",
    "/bots/north",
    "/json/bots/north",
    "/versus/north/south",
    "/json/versus/north/south",
    "/leaderboard/skullwhist",
    "/json/leaderboard/skullwhist",
];

/// Every public view of a server whose one game of `game` (running; the
/// ladder's games as well as the REST API's) was dealt from `seed`.
async fn views(game: &str, seed: i64) -> Vec<(u16, String)> {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("v.db").display());
    let store = croupier_store::open(&url).await.unwrap();
    let config = croupier_server::ServerConfig {
        house_bots: Vec::new(),
        ladder: None,
        ..croupier_server::ServerConfig::default()
    };
    let (state, _) = croupier_server::prepare(Arc::clone(&store), &config)
        .await
        .unwrap();
    let n = store.create_bot("north", "x", false).await.unwrap();
    let s = store.create_bot("south", "x", false).await.unwrap();
    store
        .start_game(game, &[n, s], seed, "2026-01-01T00:00:00.000Z")
        .await
        .unwrap();
    let app = croupier_server::app(state);
    let mut out = Vec::new();
    for path in PATHS {
        let r = app
            .clone()
            .oneshot(Request::get(*path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body = axum::body::to_bytes(r.into_body(), 1 << 24).await.unwrap();
        out.push((status, String::from_utf8_lossy(&body).into_owned()));
    }
    out
}

/// The current wall-clock minute (UTC, since the epoch).
fn this_minute() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        / 60
}

/// Seeds long enough that their digits do not occur by chance.
fn long() -> impl Strategy<Value = i64> {
    any::<i64>().prop_filter("a long seed", |v| v.unsigned_abs() > 1 << 40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn public_views_of_a_running_game_do_not_depend_on_its_deal(a in long(), b in long()) {
        prop_assume!(a != b);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        for game in ["skullwhist", "loveletter", "goofspiel"] {
            // `/activity` shows the 60 minutes ending with the current one:
            // both deals' views are taken within one wall-clock minute.
            let (va, vb) = loop {
                let minute = this_minute();
                let v = rt.block_on(async { (views(game, a).await, views(game, b).await) });
                if this_minute() == minute {
                    break v;
                }
            };
            for ((path, x), y) in PATHS.iter().zip(&va).zip(&vb) {
                prop_assert_eq!(x.0, y.0, "{} {}", game, path);
                prop_assert!(x.1 == y.1, "{} {} differs between two deals", game, path);
                prop_assert!(!x.1.contains(&a.to_string()), "{} {} shows the seed", game, path);
            }
            // The game page is there (not a 404 that would hide everything).
            prop_assert_eq!(va[4].0, 200);
        }
    }
}
