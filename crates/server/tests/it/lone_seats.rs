//! PostgreSQL only (issue 13): an instance alone writes no seats for a game
//! between two of its own bots (nobody else reads them). A re-login there
//! forfeits such a game all the same. When another instance comes, the
//! games under way get their seats (with their views and their home)
//! before the newcomer serves, so it answers for them; the end of such a
//! game removes its seats. Without PostgreSQL's binaries the test says so
//! and passes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

#[test]
fn a_lone_instance_writes_its_seats_only_once_another_instance_comes() {
    common::on_postgres(|url| async move {
        let (one, store) = common::hub_on(&url).await;
        let db = store.cluster().unwrap();
        let relay = Arc::clone(one.relay().unwrap());
        assert!(relay.crowd().alone(), "the first instance is alone");
        let [a, b, c, d] = common::logged_in(&*store, &one, "lone", 4).await[..] else {
            unreachable!()
        };

        // Alone: a game between its bots has no seats in the table. (A
        // heartbeat late by more than half a beat ends "alone" for a
        // moment; a deal then writes its seats, which is right.)
        let (first, _) = common::deal(&one, a, b).await;
        let written = [db.seat_of(a).await.unwrap(), db.seat_of(b).await.unwrap()];
        if relay.crowd().alone() {
            assert_eq!(written, [None, None], "a seat was written");
        } else {
            eprintln!("'alone' lapsed (a late heartbeat): the first deal is not checked");
        }
        // A re-login forfeits it all the same.
        one.login(a, "a again".into()).await.unwrap();
        let row = store.game(first).await.unwrap().unwrap();
        assert_eq!(
            (row.status.as_str(), row.forfeited_by),
            ("finished", Some(a)),
            "the re-login did not forfeit the game"
        );

        let (second, _) = common::deal(&one, c, d).await;
        one.bid(c, 4).await.ok();
        let written = db.seat_of(c).await.unwrap();
        if relay.crowd().alone() {
            assert_eq!(written, None, "a seat was written");
        } else {
            eprintln!("'alone' lapsed (a late heartbeat): the second deal is not checked");
        }
        // Another instance: once it serves, the game's seats are there.
        let (two, _) = common::hub_on(&url).await;
        assert!(!relay.crowd().alone(), "the first instance is still alone");
        for (bot, seat_of_other) in [(c, d), (d, c)] {
            let row = db
                .seat_of(bot)
                .await
                .unwrap()
                .expect("no seat written before the newcomer served");
            assert_eq!((row.game, row.home), (second, relay.instance()));
            assert_eq!(row.opponent, seat_of_other);
            assert_eq!(row.hand.split_whitespace().count(), 13);
            assert_eq!(
                row.status,
                *one.status(bot).await.unwrap(),
                "the row has not the view as it is now"
            );
        }
        // The game that ended gets no seats.
        assert_eq!(
            db.seat_of(a).await.unwrap(),
            None,
            "an ended game got seats"
        );
        assert_eq!(
            db.seat_of(b).await.unwrap(),
            None,
            "an ended game got seats"
        );
        // The newcomer answers for the game as its home does.
        assert_eq!(*two.status(d).await.unwrap(), *one.status(d).await.unwrap());
        // Its end (a re-login at the newcomer) removes the seats.
        two.login(c, "c again".into()).await.unwrap();
        let row = store.game(second).await.unwrap().unwrap();
        assert_eq!(
            (row.status.as_str(), row.forfeited_by),
            ("finished", Some(c))
        );
        assert!(db.seat_of(c).await.unwrap().is_none(), "the seats stayed");
        assert!(db.seat_of(d).await.unwrap().is_none(), "the seats stayed");
    });
}
