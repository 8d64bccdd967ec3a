//! PostgreSQL only (issue 13): a move that reaches an instance whose cache
//! places the bot in a game that is not its game any more, at a home that
//! never answers (an instance killed before the cache heard the end), is
//! relayed to the bot's game as its seat row says, instead of failing with
//! "try again"; and a move whose game left the tables unanswered says that
//! the game ended and where its result is. Without PostgreSQL's binaries
//! the test says so and passes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use croupier_store::postgres::cluster::Notice;

/// No process has this id: a home that never answers.
const GONE_HOME: i64 = 987_654_321;

#[test]
fn a_move_placed_in_a_stale_game_reaches_the_bots_game() {
    common::on_postgres(|url| async move {
        // Every instance lives until the test ends.
        let common::TwoInstances {
            one,
            two,
            store,
            pool,
            bots,
        } = common::two_instances(&url, "stale", 2).await;
        let [a, b] = bots[..] else { unreachable!() };

        // The bots play on `two`; `one` is told (late, as it may hear a
        // notice under load) of an older game of theirs at a home that
        // is gone.
        let (game, _) = common::deal(&two, a, b).await;
        common::announce(
            &pool,
            &Notice::Dealt {
                game: game - 1_000,
                home: GONE_HOME,
                bots: vec![a, b],
            }
            .payload(),
        )
        .await;
        // A bid at `one` reaches the game on `two` after the gone home's
        // silence.
        one.bid(a, 4)
            .await
            .expect("the bid placed in the stale game failed");
        // Bids show once both are in.
        two.bid(b, 3).await.unwrap();
        let status: serde_json::Value =
            serde_json::from_str(&two.status(b).await.unwrap()).unwrap();
        assert_eq!(status["game"], serde_json::json!(game), "{status}");
        assert_eq!(
            status["opponent-bid"],
            serde_json::json!(4),
            "the bid did not reach the bot's game: {status}"
        );

        // The game ends (a re-login forfeits it). A move placed in it at
        // a home that never answers is told that the game ended, and
        // where its result is.
        two.login(a, "a again".into()).await.unwrap();
        let row = store.game(game).await.unwrap().unwrap();
        assert_eq!(row.status, "finished");
        common::announce(
            &pool,
            &Notice::Dealt {
                game,
                home: GONE_HOME,
                bots: vec![a, b],
            }
            .payload(),
        )
        .await;
        let refused = one.bid(b, 4).await.expect_err("a bid in an ended game");
        assert!(
            refused.0.contains(&format!("game {game} ended")) && refused.0.contains("old-game"),
            "the refusal does not say that the game ended: {}",
            refused.0
        );
    });
}
