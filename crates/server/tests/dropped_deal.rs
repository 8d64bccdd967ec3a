//! A `new-game` request dropped in the middle of its deal (its bot hung up,
//! or its client gave up) does not stop the deal halfway: the bot that
//! waited is told of the game, the game is played, and the bot that hung
//! up finds it with its next `new-game`. Before, the waiting bot was told
//! nothing and the game was left stored as running, with no runner.
//! On SQLite, and on PostgreSQL when its binaries are installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use croupier_server::hub::{Hub, NewGame};
use croupier_store::Store;
use futures::FutureExt;

/// A hub over the database at `url`, prepared as `serve` prepares it.
async fn hub_on(url: &str) -> (Arc<Hub>, Arc<dyn Store>) {
    let store = croupier_store::open(url).await.unwrap();
    let (state, _) = croupier_server::prepare(Arc::clone(&store), &common::config())
        .await
        .unwrap();
    (Arc::clone(&state.hub), store)
}

async fn a_dropped_dealer_deals_to_the_end(hub: Arc<Hub>, store: Arc<dyn Store>) {
    // The deal must be caught in the middle: its first poll stops at the
    // game's row being written. Should a deal ever end within that one
    // poll, nothing was dropped; try again with two new bots.
    for _ in 0..5 {
        let bot = || {
            let store = Arc::clone(&store);
            async move {
                store
                    .create_bot(&common::unique_name("dropped"), "x", false)
                    .await
                    .unwrap()
            }
        };
        let (a, b) = (bot().await, bot().await);
        let waiting = tokio::spawn({
            let hub = Arc::clone(&hub);
            async move { hub.new_game(a).await }
        });
        tokio::time::timeout(Duration::from_secs(10), async {
            while hub.counts().1 == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the first bot never started waiting");
        // One poll of the dealer's request, then it is dropped.
        if hub.new_game(b).now_or_never().is_some() {
            eprintln!("the deal ended within one poll; trying again");
            waiting.abort();
            continue;
        }
        let told = tokio::time::timeout(Duration::from_secs(15), waiting)
            .await
            .expect("the waiting bot's poll did not end")
            .unwrap()
            .unwrap();
        let NewGame::Game {
            game,
            opponent,
            cards,
        } = told
        else {
            panic!("the waiting bot was not told of the game its partner's dropped request dealt: {told:?}");
        };
        assert_eq!(opponent, b);
        assert_eq!(cards.len(), 13);
        // The bot that hung up asks again: the same game.
        match hub.new_game(b).await.unwrap() {
            NewGame::Game {
                game: again,
                opponent,
                ..
            } => {
                assert_eq!(again, game, "the dealer was given another game");
                assert_eq!(opponent, a);
            }
            NewGame::Retry => panic!("the dealer was not given the game dealt to it"),
        }
        // A runner plays it: both bids are taken.
        for bot in [a, b] {
            tokio::time::timeout(Duration::from_secs(10), hub.bid(bot, 1))
                .await
                .expect("no runner took the bid")
                .unwrap();
        }
        let row = store.game(game).await.unwrap().expect("the game's row");
        assert_eq!(row.status, "running");
        return;
    }
    panic!("every deal ended within one poll: the test could not drop one halfway");
}

#[test]
fn a_dealer_whose_request_is_dropped_still_deals_the_game_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("croupier.db").display());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (hub, store) = hub_on(&url).await;
        a_dropped_dealer_deals_to_the_end(hub, store).await;
    });
}

#[test]
fn a_dealer_whose_request_is_dropped_still_deals_the_game_on_postgres() {
    if croupier_store::scratch::find_bin().is_none() {
        eprintln!("skipped: PostgreSQL's binaries (initdb, pg_ctl) are not installed");
        return;
    }
    let cluster = croupier_store::scratch::ScratchCluster::start(false).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let url = cluster.create_database().await.unwrap();
        let (hub, store) = hub_on(&url).await;
        a_dropped_dealer_deals_to_the_end(hub, store).await;
    });
}
