//! Decisions on arrival, with the 2014 REST dialect over in-memory
//! connections that speak out of turn: refusals keep the decision open,
//! success is told after the events, a seat may leave at any time.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::sync::{Arc, Mutex};
use std::time::Duration;

use croupier_dialects::skullwhist_rest::{dealt_hand, SkullWhistRest};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
use croupier_rules::{Game, Record, Seat, SeatInfo, StepKind};
use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{timeout, timeout_at, Instant};

use crate::live::{play_on_arrival, LiveConfig, LiveSeat};
use crate::record::MatchError;
use crate::transport::{Conn, Connector, Link, TransportError};

struct TestConn {
    rx: mpsc::UnboundedReceiver<Result<String, TransportError>>,
    tx: mpsc::UnboundedSender<String>,
}

impl Conn for TestConn {
    fn send<'a>(
        &'a mut self,
        lines: &'a [String],
        _deadline: Instant,
    ) -> BoxFuture<'a, Result<(), TransportError>> {
        for l in lines {
            let _ = self.tx.send(l.clone());
        }
        Box::pin(async { Ok(()) })
    }

    fn recv(&mut self, deadline: Instant) -> BoxFuture<'_, Result<String, TransportError>> {
        Box::pin(async move {
            match timeout_at(deadline, self.rx.recv()).await {
                Err(_) => Err(TransportError::Timeout),
                Ok(Some(r)) => r,
                Ok(None) => Err(TransportError::Disconnected("gone".into())),
            }
        })
    }

    fn speaks_out_of_turn(&self) -> bool {
        true
    }

    fn survives_faults(&self) -> bool {
        true
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

struct OneConn(Mutex<Option<TestConn>>);

impl Connector for OneConn {
    fn connect(&self, _tag: &str) -> Result<Box<dyn Conn>, TransportError> {
        let c = self.0.lock().unwrap().take();
        c.map(|c| Box::new(c) as Box<dyn Conn>)
            .ok_or_else(|| TransportError::Io("connected twice".into()))
    }
}

/// The bot's side: what it says, and every line the runner wrote to it.
struct Bot {
    to: mpsc::UnboundedSender<Result<String, TransportError>>,
    from: mpsc::UnboundedReceiver<String>,
    /// The last `view` line seen.
    view: String,
}

impl Bot {
    /// Sends a request (lost if the match is over).
    fn say(&self, line: &str) {
        let _ = self.to.send(Ok(line.to_string()));
    }

    /// The next line that is not a view (the reply to a request, or
    /// `over`); views on the way are kept.
    async fn reply(&mut self) -> String {
        loop {
            let l = timeout(Duration::from_secs(5), self.from.recv())
                .await
                .expect("a reply within 5 s")
                .expect("the runner is still there");
            if l.starts_with("view ") {
                self.view = l;
            } else {
                return l;
            }
        }
    }

    /// Views written so far, without waiting.
    fn drain_views(&mut self) {
        while let Ok(l) = self.from.try_recv() {
            if l.starts_with("view ") {
                self.view = l;
            }
        }
    }
}

const SEED: u64 = 11;

fn start(move_time: Duration) -> (JoinHandle<Result<Record, MatchError>>, Vec<Bot>) {
    let mut bots = Vec::new();
    let mut seats = Vec::new();
    for i in 0..2 {
        let (to, rx) = mpsc::unbounded_channel();
        let (tx, from) = mpsc::unbounded_channel();
        let conn = Arc::new(OneConn(Mutex::new(Some(TestConn { rx, tx }))));
        bots.push(Bot {
            to,
            from,
            view: String::new(),
        });
        seats.push(LiveSeat::remote(
            SeatInfo::named(format!("t{i}")),
            Link::Custom(conn),
            Box::new(SkullWhistRest::new(7, 2 - i as i64)),
        ));
    }
    let config = LiveConfig {
        move_time,
        ..LiveConfig::default()
    };
    let task = tokio::spawn(async move {
        play_on_arrival::<SkullWhist>(&SkullWhistVariant {}, SEED, &mut seats, &config).await
    });
    (task, bots)
}

/// The game the runner plays, to know hands and the leader.
fn game() -> SkullWhist {
    SkullWhist::new(&SkullWhistVariant {}, 2, SEED).unwrap()
}

fn leader_after_bids() -> usize {
    let mut g = game();
    g.apply(Seat(0), "bid 3".parse().unwrap()).unwrap();
    g.apply(Seat(1), "bid 3".parse().unwrap()).unwrap();
    g.to_act().first().unwrap().index()
}

#[tokio::test]
async fn a_sealed_bid_stands_at_once_after_its_view_and_refusals_keep_it_open() {
    let (task, mut bots) = start(Duration::from_secs(10));
    bots[0].say("bid 0");
    assert_eq!(
        bots[0].reply().await,
        "refused bid 0 is out of range (1 to 13)"
    );
    bots[0].say("bid 3");
    // Accepted while seat 1 has not bid: the reply does not wait for it,
    // and the view that says the bid stands came first.
    assert_eq!(bots[0].reply().await, "ok");
    assert!(bots[0].view.starts_with("view b "), "{}", bots[0].view);
    bots[0].say("bid 4");
    assert_eq!(bots[0].reply().await, "refused you have already bid");
    bots[1].say("bid 5");
    assert_eq!(bots[1].reply().await, "ok");
    bots[0].drain_views();
    assert!(
        bots[0].view.contains("\"opponent-bid\":5"),
        "{}",
        bots[0].view
    );
    task.abort();
}

#[tokio::test]
async fn refusals_do_not_move_the_deadline() {
    let (task, mut bots) = start(Duration::from_millis(600));
    bots[0].say("bid 3");
    assert_eq!(bots[0].reply().await, "ok");
    // Seat 1 is refused every 100 ms: were each refusal to restart its
    // clock, it would never run out.
    let mut refused = 0;
    let over = loop {
        bots[1].say("bid 99");
        let r = bots[1].reply().await;
        if r == "over" {
            break true;
        }
        assert!(r.starts_with("refused "), "{r}");
        refused += 1;
        if refused > 30 {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(over, "still running after {refused} refusals");
    let record = task.await.unwrap().unwrap();
    let last = record.steps.last().unwrap();
    assert_eq!((last.seat, &last.kind), (Seat(1), &StepKind::Forfeit));
    assert_eq!(last.fault.as_ref().unwrap().kind, "timeout");
}

#[tokio::test]
async fn a_play_is_accepted_once_both_seats_see_it_and_out_of_turn_is_refused() {
    let (task, mut bots) = start(Duration::from_secs(10));
    for b in bots.iter_mut() {
        b.say("bid 3");
        assert_eq!(b.reply().await, "ok");
    }
    let l = leader_after_bids();
    let f = 1 - l;
    let g = game();
    let follower_card = dealt_hand(g.events(), Seat(f as u8)).unwrap()[0];
    bots[f].say(&format!("play {follower_card}"));
    assert_eq!(bots[f].reply().await, "refused not your turn");
    let lead = dealt_hand(g.events(), Seat(l as u8)).unwrap()[0];
    bots[l].say(&format!("play {lead}"));
    assert_eq!(bots[l].reply().await, "ok");
    // By the time the leader hears "ok", the follower's view shows the card.
    bots[f].drain_views();
    assert!(
        bots[f]
            .view
            .contains(&format!("\"opponent-current-card\":\"{lead}\"")),
        "{}",
        bots[f].view
    );
    task.abort();
}

#[tokio::test]
async fn a_seat_that_abandons_out_of_turn_is_ruled_at_once() {
    let (task, mut bots) = start(Duration::from_secs(30));
    for b in bots.iter_mut() {
        b.say("bid 2");
        assert_eq!(b.reply().await, "ok");
    }
    let f = 1 - leader_after_bids();
    // Not its turn: the leader is due (30 s), yet the game ends now.
    bots[f]
        .to
        .send(Err(TransportError::Abandoned {
            kind: "relogin",
            detail: "logged in again".into(),
        }))
        .unwrap();
    let record = timeout(Duration::from_secs(5), task)
        .await
        .expect("ruled at once, not at the leader's deadline")
        .unwrap()
        .unwrap();
    let last = record.steps.last().unwrap();
    assert_eq!((last.seat.index(), &last.kind), (f, &StepKind::Forfeit));
    let fault = last.fault.as_ref().unwrap();
    assert_eq!(
        (fault.kind.as_str(), fault.detail.as_str()),
        ("relogin", "logged in again")
    );
    assert_eq!(record.outcome.forfeited_by, Some(Seat(f as u8)));
    assert_eq!(bots[1 - f].reply().await, "over");
}
