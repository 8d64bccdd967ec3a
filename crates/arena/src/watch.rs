//! Watching a live match from outside: the public events of a game as they
//! happen, for spectators (issue 16).
//!
//! A caller that wants to watch runs [`play_live`](crate::live::play_live)
//! inside [`scope`] with a [`Watch`]; the runner calls [`publish`] after it
//! has told the seats what happened (one marked line in `live.rs`), and the
//! watch's sink receives every new event that **every** seat may see, in
//! order. An event some seat may not see (a card dealt to one hand, a sealed
//! bid, what a Priest shows one player) never reaches the sink: a sealed bid
//! reaches spectators only with the reveal that follows the last bid.
//!
//! The sink must not block: it runs on the match's task (the server's sink
//! pushes onto a bounded broadcast channel, which drops slow readers).
//! Without a scope, [`publish`] does nothing.

use std::sync::{Arc, Mutex, OnceLock};

use croupier_rules::{Event, Game, Seat};
use serde::Serialize;
use serde_json::value::RawValue;

/// One public event of a live match.
#[derive(Debug, Clone)]
pub struct PublicEvent {
    /// Position of the event in the game's whole log (hidden events
    /// included, so numbers may skip).
    pub index: usize,
    /// The event, written as JSON (the `event` of croupier/1) and as its
    /// transcript line when first read ([`Told`]).
    pub event: Told,
    /// Seats that must act after this batch of events (empty when the game
    /// is over).
    pub to_act: Vec<u8>,
    /// The game's public view after this batch (its rules' `public_view`:
    /// seat 0's observation without anything only seat 0 knows), on the
    /// last event of each batch. Written when first read ([`View`]).
    pub view: Option<View>,
    /// When the batch was published, in Unix milliseconds.
    pub at_ms: u64,
    /// How long the seats to act have to answer, in milliseconds.
    pub move_ms: Option<u64>,
}

/// Written as `{"index", "event", "text", "to_act", "view"?, "at_ms",
/// "move_ms"?}`. An event that cannot be written is an error, never a
/// `null`: whoever sends it leaves it out ([`Told::json`]).
impl Serialize for PublicEvent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeStruct};
        let event = self
            .event
            .json()
            .ok_or_else(|| S::Error::custom(format!("event {} cannot be written", self.index)))?;
        let view = self.view.as_ref().and_then(View::json);
        let mut out = s.serialize_struct("PublicEvent", 7)?;
        out.serialize_field("index", &self.index)?;
        out.serialize_field("event", event)?;
        out.serialize_field("text", self.event.text())?;
        out.serialize_field("to_act", &self.to_act)?;
        match view {
            Some(v) => out.serialize_field("view", v)?,
            None => out.skip_field("view")?,
        }
        out.serialize_field("at_ms", &self.at_ms)?;
        match self.move_ms {
            Some(ms) => out.serialize_field("move_ms", &ms)?,
            None => out.skip_field("move_ms")?,
        }
        out.end()
    }
}

/// A public event, kept as the rules gave it and written (as JSON and as
/// its transcript line) when first read, once however many spectators read
/// it. Most games are never watched: writing both for every public event
/// as it happened was about 1.3% of a busy server's CPU (issue 53). An
/// event that cannot be written (a bug in its rules) is reported to the
/// watch's failures when first read, once, and is then left out by every
/// reader.
#[derive(Clone)]
pub struct Told(Arc<dyn Said>);

trait Said: Send + Sync {
    fn json(&self) -> Option<&RawValue>;
    fn text(&self) -> &str;
}

/// Where the failure of an event to be written goes, once.
type Report = Arc<dyn Fn(PublishError) + Send + Sync>;

/// An event and what it is written as, once asked for.
struct LazyEvent<E> {
    event: Lazy<E>,
    index: usize,
    text: OnceLock<String>,
    failures: Option<Report>,
}

impl<E: Serialize + std::fmt::Display + Send + Sync> Said for LazyEvent<E> {
    fn json(&self) -> Option<&RawValue> {
        self.event.json_or(|source| {
            if let Some(report) = &self.failures {
                report(PublishError {
                    index: self.index,
                    source,
                });
            }
        })
    }

    fn text(&self) -> &str {
        self.text.get_or_init(|| self.event.value.to_string())
    }
}

impl Told {
    /// `event`, to be written when first read.
    pub fn of<E: Serialize + std::fmt::Display + Send + Sync + 'static>(event: E) -> Told {
        Told::reported(event, 0, None)
    }

    /// `event` (at `index` of its game's log), whose failure to be written
    /// goes to `failures`.
    fn reported<E: Serialize + std::fmt::Display + Send + Sync + 'static>(
        event: E,
        index: usize,
        failures: Option<Report>,
    ) -> Told {
        Told(Arc::new(LazyEvent {
            event: Lazy::new(event),
            index,
            text: OnceLock::new(),
            failures,
        }))
    }

    /// The event as JSON; `None` if it cannot be written (a bug in its
    /// rules: readers leave such an event out).
    pub fn json(&self) -> Option<&RawValue> {
        self.0.json()
    }

    /// The event's transcript line.
    pub fn text(&self) -> &str {
        self.0.text()
    }
}

impl std::fmt::Debug for Told {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Told").field(&self.text()).finish()
    }
}

/// A game's public view after a batch of events, kept as the rules gave
/// it and written as JSON when it is first read, once however many
/// spectators read it. Most games are never watched, and a page draws only
/// the latest view: writing every step's view as it happened was about 5%
/// of a busy server's CPU (issue 53).
#[derive(Clone)]
pub struct View(Arc<dyn Written>);

/// A value and its JSON, written once when first asked for.
struct Lazy<T> {
    value: T,
    json: OnceLock<Option<Box<RawValue>>>,
}

impl<T: Serialize> Lazy<T> {
    fn new(value: T) -> Self {
        Lazy {
            value,
            json: OnceLock::new(),
        }
    }

    /// Its JSON, written when first asked for; `None` if it cannot be
    /// written, which `failed` hears once, with why.
    fn json_or(&self, failed: impl FnOnce(serde_json::Error)) -> Option<&RawValue> {
        self.json
            .get_or_init(|| {
                serde_json::value::to_raw_value(&self.value)
                    .map_err(failed)
                    .ok()
            })
            .as_deref()
    }
}

trait Written: Send + Sync {
    fn json(&self) -> Option<&RawValue>;
}

impl<T: Serialize + Send + Sync> Written for Lazy<T> {
    fn json(&self) -> Option<&RawValue> {
        self.json_or(|_| ())
    }
}

impl View {
    /// `view`, to be written when first read.
    pub fn of<T: Serialize + Send + Sync + 'static>(view: T) -> View {
        View(Arc::new(Lazy::new(view)))
    }

    /// The view as JSON; `None` if it cannot be written (a bug in its
    /// rules: the event then goes without a view, as it did when views were
    /// written at once).
    pub fn json(&self) -> Option<&RawValue> {
        self.0.json()
    }
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("View").field(&self.json()).finish()
    }
}

impl Serialize for View {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.json().serialize(s)
    }
}

/// Where a watched match's public events go.
pub type Sink = Box<dyn Fn(Vec<PublicEvent>) + Send + Sync>;

/// Where a watch's failures go (the server logs them): the match goes on,
/// and its spectators get every other event.
pub type Failures = Box<dyn Fn(PublishError) + Send + Sync>;

/// A public event that could not be written for spectators (a game whose
/// event does not serialise: a bug in its rules). Spectators do not get it;
/// they get every other event.
#[derive(Debug, thiserror::Error)]
#[error("event {index} of the match cannot be shown to spectators: {source}")]
pub struct PublishError {
    /// The event's position in the game's log.
    pub index: usize,
    /// Why it could not be written.
    #[source]
    pub source: serde_json::Error,
}

/// A watch on one match.
pub struct Watch {
    seen: Mutex<usize>,
    sink: Sink,
    failures: Report,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").finish_non_exhaustive()
    }
}

impl Watch {
    /// A watch that hands each batch of new public events to `sink`, and
    /// each event that cannot be written to `failures`.
    pub fn new(sink: Sink, failures: Failures) -> Arc<Watch> {
        Arc::new(Watch {
            seen: Mutex::new(0),
            sink,
            failures: Arc::from(failures),
        })
    }

    /// Hands `batch` to the sink as if the runner had published it.
    pub fn emit(&self, batch: Vec<PublicEvent>) {
        (self.sink)(batch);
    }

    /// Hands the sink the public events of `game` it has not had yet, and
    /// its public view; the seats to act have `move_time` to answer.
    pub fn step<G: Game>(&self, game: &G, move_time: Option<std::time::Duration>) {
        let n = game.num_seats();
        self.hand_over(game.events(), n, || Batch {
            to_act: (0..n as u8)
                .filter(|s| game.to_act().contains(Seat(*s)))
                .collect(),
            view: Some(View::of(game.public_view())),
            move_ms: move_time.map(|t| t.as_millis() as u64),
        });
    }

    /// Hands the sink the events of `events` (a log of `n` seats) past
    /// those it has had that every seat may see, each with the seats
    /// `to_act` gives, to be written when first read ([`Told`]: one that
    /// cannot be written goes to the failures then, and is never sent).
    fn hand_over<E: Event>(&self, events: &[E], n: usize, batch_of: impl FnOnce() -> Batch) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if *seen >= events.len() {
            return;
        }
        let Batch {
            to_act,
            view,
            move_ms,
        } = batch_of();
        let at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut batch: Vec<PublicEvent> = events
            .iter()
            .enumerate()
            .skip(*seen)
            .filter(|(_, e)| (0..n as u8).all(|s| e.visible_to(Seat(s))))
            .map(|(index, e)| PublicEvent {
                index,
                event: Told::reported(e.clone(), index, Some(Arc::clone(&self.failures))),
                to_act: to_act.clone(),
                view: None,
                at_ms,
                move_ms,
            })
            .collect();
        *seen = events.len();
        drop(seen);
        if let Some(last) = batch.last_mut() {
            last.view = view;
        }
        if !batch.is_empty() {
            (self.sink)(batch);
        }
    }
}

/// What goes with a batch of public events besides the events.
struct Batch {
    to_act: Vec<u8>,
    view: Option<View>,
    move_ms: Option<u64>,
}

tokio::task_local! {
    static WATCH: Arc<Watch>;
}

/// Runs `fut` (a [`play_live`](crate::live::play_live)) with `watch`
/// receiving its public events.
pub async fn scope<F: std::future::Future>(watch: Arc<Watch>, fut: F) -> F::Output {
    WATCH.scope(watch, fut).await
}

/// Hands the watch of the current match, if any, the new public events of
/// `game` and its public view (called by the live runner after every step);
/// the seats to act have `move_time` to answer.
pub fn publish<G: Game>(game: &G, move_time: Option<std::time::Duration>) {
    let _ = WATCH.try_with(|w| w.step(game, move_time));
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
