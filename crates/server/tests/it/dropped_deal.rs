//! A `new-game` request dropped in the middle of its deal (its bot hung up,
//! or its client gave up) does not stop the deal halfway: the bot that
//! waited is told of the game, the game is played, and the bot that hung
//! up finds it with its next `new-game`, even one sent at once, while
//! the deal is still under way (not a second game with another bot).
//! Before, the waiting bot was told nothing and the game was left stored
//! as running, with no runner.
//! On SQLite, and on PostgreSQL when its binaries are installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use croupier_live::hub::{Hub, NewGame};
use croupier_store::{BotId, Store};
use tokio::task::JoinHandle;

async fn a_dropped_dealer_deals_to_the_end(hub: Arc<Hub>, store: Arc<dyn Store>) {
    // The deal must be caught in the middle: the dealer's request is
    // polled until it has taken its partner from the list, then dropped.
    // Should a deal ever end within one poll, nothing was dropped; try
    // again with new bots.
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
        let (a, b, c) = (bot().await, bot().await, bot().await);
        let waits = |w: BotId| {
            let hub = Arc::clone(&hub);
            Box::pin(async move { hub.new_game(w).await })
        };
        // `a` waits; the dealer `b` takes it.
        let mut waiting: HashMap<BotId, JoinHandle<_>> = HashMap::new();
        waiting.insert(a, tokio::spawn(waits(a)));
        tokio::time::timeout(Duration::from_secs(10), async {
            while hub.counts().1 == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the first bot never started waiting");
        let mut dealer = Box::pin(hub.new_game(b));
        let caught = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if futures::poll!(dealer.as_mut()).is_ready() {
                    return false;
                }
                if hub.counts().1 == 0 {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await
        .expect("the dealer took no partner");
        drop(dealer);
        if !caught {
            eprintln!("the deal ended within one poll; trying again");
            waiting.values().for_each(JoinHandle::abort);
            continue;
        }
        // `c` starts waiting (its first poll lists it), and the dealer
        // asks again at once, while its deal is still under way: it is
        // given that game, not a second one with `c`.
        let mut third = waits(c);
        assert!(
            futures::poll!(third.as_mut()).is_pending(),
            "the third bot was not listed"
        );
        waiting.insert(c, tokio::spawn(third));
        let again = tokio::time::timeout(Duration::from_secs(15), hub.new_game(b))
            .await
            .expect("the dealer's second new-game did not end")
            .unwrap();
        let NewGame::Game { game, opponent, .. } = again else {
            panic!("the dealer was not given the game dealt to it: {again:?}");
        };
        let (partner, other) = (a, c);
        let partner = waiting.remove(&partner).unwrap();
        let told = tokio::time::timeout(Duration::from_secs(15), partner)
            .await
            .expect("the partner's poll did not end")
            .unwrap()
            .unwrap();
        match told {
            NewGame::Game {
                game: g,
                opponent: o,
                cards,
            } => {
                assert_eq!(
                    g, game,
                    "the dealer's second new-game dealt it a second game"
                );
                assert_eq!(o, b);
                assert_eq!(opponent, a);
                assert_eq!(cards.len(), 13);
            }
            NewGame::Retry => panic!(
                "the waiting bot was not told of the game its partner's dropped request dealt"
            ),
        }
        // The other bot still waits, dealt nothing.
        let still = waiting.remove(&other).unwrap();
        assert!(!still.is_finished(), "the other waiting bot's poll ended");
        assert_eq!(hub.counts().1, 1);
        still.abort();
        // A runner plays the game: both bids are taken.
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
        let (hub, store) = common::hub_on(&url).await;
        a_dropped_dealer_deals_to_the_end(hub, store).await;
    });
}

#[test]
fn a_dealer_whose_request_is_dropped_still_deals_the_game_on_postgres() {
    common::on_postgres(|url| async move {
        let (hub, store) = common::hub_on(&url).await;
        a_dropped_dealer_deals_to_the_end(hub, store).await;
    });
}
