//! PostgreSQL only (issue 13): a move relayed to its game's home and asked
//! again with the same request number (its answer was lost with the
//! asker's listener connection, or came late) gets the first answer — the
//! move is applied once and reported as applied — while a new request is
//! handled anew; an instance whose listener loses its connection while
//! a move waits for its answer sends the same request again at once; and
//! a move left unanswered whose game left the tables asks its home once
//! more before it says that the game ended; a re-login's abandon of the
//! bot's game elsewhere, and a pull bot's answer to a match another
//! process plays, waiting when the listener is lost, are sent again with
//! their numbers too. Without PostgreSQL's binaries the tests say so and
//! pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use std::sync::Arc;

use croupier_live::hub::{Hub, Refusal};
use croupier_live::mailbox::Mailboxes;
use croupier_store::postgres::cluster::{instance_channel, Notice};
use croupier_store::BotId;
use sqlx::postgres::PgListener;
use tokio::task::JoinHandle;

/// No process has this id: the test itself plays the asking instance.
const ASKER: i64 = 876_543_210;

/// No process has this id: the test itself plays a game's home.
const FAKE_HOME: i64 = 876_543_211;

/// The next notification `listener` hears (at most 10 s).
async fn next(listener: &mut PgListener, what: &str) -> String {
    let n = tokio::time::timeout(Duration::from_secs(10), listener.recv())
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within 10 s"))
        .unwrap();
    n.payload().to_string()
}

/// Sends request `id` with `line` for `seat` of `game` to `home`, as an
/// instance would relay it, and waits for its answer.
async fn ask(
    pool: &sqlx::PgPool,
    replies: &mut PgListener,
    home: i64,
    id: u64,
    game: i64,
    seat: i64,
    line: &str,
) -> String {
    notify(
        pool,
        &instance_channel(home),
        &format!("q {ASKER} {id} {game} {seat} {line}"),
    )
    .await;
    next(replies, "the home's answer").await
}

/// Sends `payload` on `channel`.
async fn notify(pool: &sqlx::PgPool, channel: &str, payload: &str) {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(channel)
        .bind(payload)
        .execute(pool)
        .await
        .unwrap();
}

/// The test plays the home of game `game` of `bots`, as every instance is
/// told: what is relayed to that home.
async fn fake_home(url: &str, pool: &sqlx::PgPool, game: i64, bots: [BotId; 2]) -> PgListener {
    let mut home = PgListener::connect(url).await.unwrap();
    home.listen(&instance_channel(FAKE_HOME)).await.unwrap();
    common::announce(
        pool,
        &Notice::Dealt {
            game,
            home: FAKE_HOME,
            bots: bots.to_vec(),
        }
        .payload(),
    )
    .await;
    home
}

/// The test plays a process registered as running (so no heartbeat or
/// sweep clears what the tables place there): what is relayed to it.
async fn registered_fake_home(url: &str, pool: &sqlx::PgPool) -> PgListener {
    let mut home = PgListener::connect(url).await.unwrap();
    home.listen(&instance_channel(FAKE_HOME)).await.unwrap();
    sqlx::query(
        "INSERT INTO ladder_processes (id, role, host, pid, started_ms, beat_ms, expires_ms) \
         VALUES ($1, 'serve', 'the test', 0, 0, 0, 9000000000000)",
    )
    .bind(FAKE_HOME)
    .execute(pool)
    .await
    .unwrap();
    home
}

/// `bot` bids 4 at `hub`, in a task.
fn bid_4(hub: &Arc<Hub>, bot: BotId) -> JoinHandle<Result<(), Refusal>> {
    let hub = Arc::clone(hub);
    tokio::spawn(async move { hub.bid(bot, 4).await })
}

/// Answers relayed request `request` ("q ORIGIN ID …") with `reply`, as its
/// home would.
async fn answer(pool: &sqlx::PgPool, request: &str, reply: &str) {
    let f: Vec<&str> = request.split(' ').collect();
    let channel = instance_channel(f[1].parse().unwrap());
    notify(pool, &channel, &format!("r {} {reply}", f[2])).await;
}

/// `hub`'s listener loses its connection while `first`, a request the
/// test's `home` heard, waits for its answer: the same request must come
/// again, and the test answers it "ok".
async fn lost_and_sent_again(pool: &sqlx::PgPool, hub: &Hub, home: &mut PgListener, first: &str) {
    common::lose_listener(pool, hub.relay().unwrap()).await;
    let again = next(home, "the request sent again").await;
    assert_eq!(again, first, "not the same request");
    answer(pool, first, "ok").await;
}

/// What a move, login or answer in a task was told (at most 10 s).
async fn told<T>(task: JoinHandle<T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("not answered within 10 s")
        .unwrap()
}

#[test]
fn a_move_asked_again_gets_its_first_answer() {
    common::on_postgres(|url| async move {
        // `t` keeps every instance until the test ends.
        let t = common::two_instances(&url, "again", 2).await;
        let common::TwoInstances {
            two, pool, bots, ..
        } = &t;
        let [a, b] = bots[..] else { unreachable!() };
        let (game, _) = common::deal(two, a, b).await;
        // The game's home and `a`'s seat, as every instance reads them.
        let (home, seat): (i64, i32) = {
            let mut found = None;
            for _ in 0..200 {
                found = sqlx::query_as("SELECT home, seat FROM hub_seats WHERE bot = $1")
                    .bind(a)
                    .fetch_optional(pool)
                    .await
                    .unwrap();
                if found.is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            found.expect("the game's seats were never written")
        };
        let mut replies = PgListener::connect(&url).await.unwrap();
        replies.listen(&instance_channel(ASKER)).await.unwrap();
        let bid = croupier_dialects::skullwhist_rest::bid_line(4);
        let seat = i64::from(seat);

        let first = ask(pool, &mut replies, home, 1, game, seat, &bid).await;
        assert_eq!(first, "r 1 ok", "the first bid");
        // Asked again (the asker did not hear "ok"): the same answer, not
        // a refusal of a second bid.
        let again = ask(pool, &mut replies, home, 1, game, seat, &bid).await;
        assert_eq!(again, "r 1 ok", "the bid asked again");
        // A new request with the same line is a second bid, and refused:
        // what the bid asked again would have been told without the
        // home's memory.
        let second = ask(pool, &mut replies, home, 2, game, seat, &bid).await;
        assert!(
            second.starts_with("r 2 refused "),
            "a second bid was not refused: {second}"
        );
        // The bid counted once: `b` bids, and sees `a`'s bid.
        two.bid(b, 3).await.unwrap();
        let status: serde_json::Value =
            serde_json::from_str(&two.status(b).await.unwrap()).unwrap();
        assert_eq!(status["opponent-bid"], serde_json::json!(4), "{status}");
    });
}

#[test]
fn a_move_waiting_when_the_listener_is_lost_is_sent_again_with_its_number() {
    common::on_postgres(|url| async move {
        // `t` keeps every instance until the test ends.
        let t = common::two_instances(&url, "lost", 2).await;
        let common::TwoInstances {
            one,
            two,
            pool,
            bots,
            ..
        } = &t;
        let [a, b] = bots[..] else { unreachable!() };
        // The bots' game runs on `two`, but `one`'s cache places them in a
        // game whose home the test plays.
        let (game, _) = common::deal(two, a, b).await;
        let mut home = fake_home(&url, pool, game - 1_000, [a, b]).await;
        let bid = bid_4(one, a);
        let first = next(&mut home, "the relayed bid").await;
        assert!(first.starts_with("q "), "{first}");

        // `one`'s listener loses its connection before the answer: the
        // same request comes again, to the same home. (Without that, the
        // bid would wait 3 s, read the seat row and go to the game on
        // `two`: this home would hear nothing more.)
        lost_and_sent_again(pool, one, &mut home, &first).await;
        told(bid)
            .await
            .expect("the bid answered \"ok\" was refused");
    });
}

#[test]
fn a_move_whose_game_left_the_tables_unanswered_gets_its_homes_remembered_answer() {
    common::on_postgres(|url| async move {
        // `t` keeps every instance until the test ends.
        let t = common::two_instances(&url, "left", 2).await;
        let common::TwoInstances {
            one, pool, bots, ..
        } = &t;
        let [a, b] = bots[..] else { unreachable!() };
        // `one` places the bots in a game at a home the test plays; the
        // tables seat them nowhere (the game ended, as a home that stored
        // the game its last move ended leaves it).
        let mut home = fake_home(&url, pool, 9_999_999, [a, b]).await;
        let bid = bid_4(one, a);
        // The first asking goes unanswered (its answer was lost); after
        // 3 s the rows seat the bot nowhere, and the home is asked once
        // more, with the same number.
        let first = next(&mut home, "the relayed bid").await;
        let again = next(&mut home, "the bid asked once more").await;
        assert_eq!(again, first, "not the same request");
        let line = croupier_dialects::skullwhist_rest::bid_line(4);
        assert!(first.ends_with(&line), "{first}");
        answer(pool, &first, "ok").await;
        told(bid)
            .await
            .expect("the move the home remembers as applied was refused");
    });
}

#[test]
fn a_relogins_abandon_waiting_when_the_listener_is_lost_is_sent_again_with_its_number() {
    common::on_postgres(|url| async move {
        // `t` keeps every instance until the test ends.
        let t = common::two_instances(&url, "relogin", 2).await;
        let common::TwoInstances {
            one, pool, bots, ..
        } = &t;
        let [a, b] = bots[..] else { unreachable!() };
        // The tables seat `a` in a game at a home the test plays.
        let mut home = registered_fake_home(&url, pool).await;
        sqlx::query(
            "INSERT INTO hub_seats (bot, game, seat, opponent, hand, status, home) \
             VALUES ($1, 4242, 0, $2, '', '{}', $3)",
        )
        .bind(a)
        .bind(b)
        .bind(FAKE_HOME)
        .execute(pool)
        .await
        .unwrap();

        // `a` logs in again at `one`: its game there is abandoned.
        let login = {
            let one = Arc::clone(one);
            tokio::spawn(async move { one.login(a, "relogin-again".into()).await })
        };
        let first = next(&mut home, "the relayed abandon").await;
        assert!(
            first.starts_with("q ") && first.ends_with(" 4242 0 abandon"),
            "{first}"
        );
        // `one`'s listener loses its connection before the answer: the
        // same request comes again. (Without that, the login would wait
        // for the move timeout and 10 s: this home would hear nothing
        // more.)
        lost_and_sent_again(pool, one, &mut home, &first).await;
        told(login).await.expect("the login was refused");
    });
}

#[test]
fn a_pull_answer_waiting_when_the_listener_is_lost_is_sent_again_with_its_number() {
    common::on_postgres(|url| async move {
        // `t` keeps every instance until the test ends.
        let t = common::two_instances(&url, "pull", 1).await;
        let common::TwoInstances {
            one, pool, bots, ..
        } = &t;
        let [a] = bots[..] else { unreachable!() };
        // `a`'s match "m1" runs at a process the test plays.
        let mut home = registered_fake_home(&url, pool).await;
        sqlx::query("INSERT INTO pull_matches (bot, tag, home) VALUES ($1, 'm1', $2)")
            .bind(a)
            .bind(FAKE_HOME)
            .execute(pool)
            .await
            .unwrap();
        let mailboxes = Arc::new(Mailboxes::default());
        mailboxes.share(Arc::clone(one.relay().unwrap()));

        // `a` answers decision 7 at `one`: the answer goes to the match's
        // process.
        let answered = {
            let mailbox = mailboxes.get(a);
            tokio::spawn(async move { mailbox.answer_anywhere("m1", 7, "C03").await })
        };
        let first = next(&mut home, "the relayed answer").await;
        assert!(
            first.starts_with("a ") && first.contains("\"m1\"") && first.contains("C03"),
            "{first}"
        );
        // `one`'s listener loses its connection before the reply: the same
        // request comes again. (Without that, the answer would wait for
        // its reply until it gave up: this process would hear nothing
        // more.)
        lost_and_sent_again(pool, one, &mut home, &first).await;
        told(answered)
            .await
            .expect("an answer the match's process took was refused");
    });
}
