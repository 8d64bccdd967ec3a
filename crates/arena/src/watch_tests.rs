//! The spectators' watch: what a match shows, and events written when
//! first read.

use super::*;
use crate::live::{play_live, LiveConfig, LiveSeat};
use croupier_bots::Builtins;
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::SeatInfo;

#[tokio::test]
async fn a_watched_match_shows_only_events_every_seat_sees() {
    let got: Arc<Mutex<Vec<PublicEvent>>> = Arc::default();
    let sink = Arc::clone(&got);
    let watch = Watch::new(
        Box::new(move |b| {
            sink.lock().unwrap().extend(b);
        }),
        Box::new(|e| panic!("{e}")),
    );
    let mut seats: Vec<LiveSeat<Goofspiel>> = (0..2)
        .map(|i| {
            LiveSeat::builtin(
                SeatInfo::named(format!("r{i}")),
                Goofspiel::builtin("random").unwrap(),
            )
        })
        .collect();
    let variant = GoofspielVariant::gops();
    let record = scope(
        watch,
        play_live::<Goofspiel>(&variant, 7, &mut seats, &LiveConfig::default()),
    )
    .await
    .unwrap();
    let got = got.lock().unwrap();
    // Replay the record and list the events visible to both seats, and
    // the public view after each step.
    let mut g = Goofspiel::new(&variant, 2, 7).unwrap();
    let mut views = vec![g.public_view()];
    for s in &record.steps {
        if let croupier_rules::StepKind::Action(a) = &s.kind {
            let a = g.validate(s.seat, a).unwrap();
            g.apply(s.seat, a).unwrap();
            views.push(g.public_view());
        }
    }
    // Spectators' tables are the replay's, step for step: every view
    // they were sent is the replay's view at a step, in order.
    let sent: Vec<croupier_rules::goofspiel::GoofspielObservation> = got
        .iter()
        .filter_map(|e| e.view.as_ref())
        .map(|v| serde_json::from_str(v.json().expect("written").get()).unwrap())
        .collect();
    assert!(sent.len() > 10, "a view with every batch: {}", sent.len());
    let mut at = 0;
    for v in &sent {
        at += views[at..]
            .iter()
            .position(|w| w == v)
            .unwrap_or_else(|| panic!("a view no step of the replay has: {v:?}"));
    }
    let public: Vec<String> = g
        .events()
        .iter()
        .filter(|e| e.visible_to(Seat(0)) && e.visible_to(Seat(1)))
        .map(ToString::to_string)
        .collect();
    let hidden = g.events().len() - public.len();
    assert!(hidden > 0, "sealed bids are hidden events");
    let texts: Vec<String> = got.iter().map(|e| e.event.text().to_string()).collect();
    assert_eq!(texts, public);
    assert!(got.last().unwrap().to_act.is_empty());
    // Each batch's last event carries the public view after it: the
    // last one is the finished game's.
    let view = got.last().unwrap().view.as_ref().expect("a view");
    let view: croupier_rules::goofspiel::GoofspielObservation =
        serde_json::from_str(view.json().expect("written").get()).unwrap();
    assert_eq!(view, g.public_view());
    assert!(got.iter().all(|e| e.at_ms > 0 && e.move_ms.is_some()));
}

/// An event whose even-numbered values cannot be written (as a rules
/// bug would make one), visible to both seats unless `hidden`.
#[derive(Debug, Clone, serde::Deserialize)]
struct Flaky {
    n: u32,
    hidden: bool,
}

impl Serialize for Flaky {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.n.is_multiple_of(2) {
            return Err(serde::ser::Error::custom(format!(
                "event {} is broken",
                self.n
            )));
        }
        s.serialize_u32(self.n)
    }
}

impl std::fmt::Display for Flaky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "flaky {}", self.n)
    }
}

impl croupier_rules::Event for Flaky {
    fn visible_to(&self, _seat: Seat) -> bool {
        !self.hidden
    }
}

#[test]
fn an_event_that_cannot_be_written_is_reported_once_when_read_and_never_sent() {
    let got: Arc<Mutex<Vec<PublicEvent>>> = Arc::default();
    let failures: Arc<Mutex<Vec<(usize, String)>>> = Arc::default();
    let (sink, failed) = (Arc::clone(&got), Arc::clone(&failures));
    let watch = Watch::new(
        Box::new(move |b| sink.lock().unwrap().extend(b)),
        Box::new(move |e| failed.lock().unwrap().push((e.index, e.to_string()))),
    );
    let ev = |n, hidden| Flaky { n, hidden };
    let mut log = vec![ev(1, false), ev(2, false), ev(3, true), ev(4, true)];
    let batch = |to_act: Vec<u8>| {
        move || Batch {
            to_act,
            view: None,
            move_ms: None,
        }
    };
    watch.hand_over(&log, 2, batch(vec![1]));
    // Later events go out in a later step.
    log.extend([ev(5, false), ev(6, false)]);
    watch.hand_over(&log, 2, batch(Vec::new()));
    let got = got.lock().unwrap();
    let public: Vec<usize> = got.iter().map(|e| e.index).collect();
    assert_eq!(public, [0, 1, 4, 5]);
    assert!(
        failures.lock().unwrap().is_empty(),
        "nothing is written before it is read"
    );
    let texts: Vec<&str> = got.iter().map(|e| e.event.text()).collect();
    assert_eq!(texts, ["flaky 1", "flaky 2", "flaky 5", "flaky 6"]);
    // What spectators are sent, read twice: the events that can be
    // written, and never a `null` for the others.
    for _ in 0..2 {
        let sent: Vec<serde_json::Value> = got
            .iter()
            .filter_map(|e| serde_json::to_value(e).ok())
            .collect();
        let sent: Vec<(u64, u64)> = sent
            .iter()
            .map(|v| (v["index"].as_u64().unwrap(), v["event"].as_u64().unwrap()))
            .collect();
        assert_eq!(sent, [(0, 1), (4, 5)]);
    }
    assert_eq!(got[0].event.json().map(RawValue::get), Some("1"));
    assert!(got[1].event.json().is_none());
    assert_eq!(got[0].to_act, [1]);
    assert!(got[2].to_act.is_empty());
    // Each broken one is reported once, however often it is read; the
    // hidden broken one (index 3) is never even kept.
    let failures = failures.lock().unwrap();
    let indices: Vec<usize> = failures.iter().map(|f| f.0).collect();
    assert_eq!(indices, [1, 5]);
    assert!(
        failures[0]
            .1
            .contains("event 1 of the match cannot be shown")
            && failures[0].1.contains("event 2 is broken"),
        "{failures:?}"
    );
}

#[test]
fn without_a_scope_publish_does_nothing() {
    let g = Goofspiel::new(&GoofspielVariant::gops(), 2, 1).unwrap();
    publish(&g, None);
}

/// Counts how often it is written; fails when `fail`.
struct Counted {
    writes: Arc<std::sync::atomic::AtomicUsize>,
    fail: bool,
}

impl Serialize for Counted {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if self.fail {
            return Err(serde::ser::Error::custom("cannot be written"));
        }
        s.serialize_str("the view")
    }
}

fn event_with(view: View) -> PublicEvent {
    PublicEvent {
        index: 3,
        event: Told::of(1),
        to_act: vec![1],
        view: Some(view),
        at_ms: 1,
        move_ms: None,
    }
}

#[test]
fn a_view_is_written_when_first_read_and_only_once() {
    let writes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let view = View::of(Counted {
        writes: Arc::clone(&writes),
        fail: false,
    });
    let e = event_with(view.clone());
    assert_eq!(writes.load(std::sync::atomic::Ordering::SeqCst), 0);
    for _ in 0..3 {
        let v: serde_json::Value = serde_json::to_value(&e).unwrap();
        assert_eq!(v["view"], "the view");
    }
    assert_eq!(view.json().unwrap().get(), "\"the view\"");
    assert_eq!(writes.load(std::sync::atomic::Ordering::SeqCst), 1);
}

impl std::fmt::Display for Counted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("counted")
    }
}

#[test]
fn an_event_is_written_when_first_read_and_only_once() {
    let writes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut e = event_with(View::of(1));
    e.event = Told::of(Counted {
        writes: Arc::clone(&writes),
        fail: false,
    });
    assert_eq!(writes.load(std::sync::atomic::Ordering::SeqCst), 0);
    for _ in 0..3 {
        let v: serde_json::Value = serde_json::to_value(&e).unwrap();
        assert_eq!(v["event"], "the view");
        assert_eq!(v["text"], "counted");
    }
    assert_eq!(writes.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn a_view_that_cannot_be_written_is_left_out() {
    let writes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let e = event_with(View::of(Counted {
        writes: Arc::clone(&writes),
        fail: true,
    }));
    let v: serde_json::Value = serde_json::to_value(&e).unwrap();
    assert!(v.get("view").is_none(), "{v}");
    assert_eq!(v["index"], 3);
    assert!(e.view.as_ref().unwrap().json().is_none());
}
