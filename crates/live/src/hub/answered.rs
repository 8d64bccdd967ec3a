//! A home's memory of the requests relayed to it (issue 13): an asker
//! whose answer was lost (its listener's connection dropped) or late sends
//! the request again with the same number, and gets the first answer
//! instead of the move being handled twice — a second handling would
//! refuse a move that was applied ("not your turn"), or say "gone" for the
//! move that ended the game.
//!
//! A request being handled is remembered until it is answered, however
//! long that takes; an answer is kept for [`KEEP`] after it was given (at
//! most [`CAP`] answers).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::lock::lock;

/// A request: the asking instance and its number there.
pub(in crate::hub) type Key = (i64, u64);

/// What the home knows of a request as it arrives.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::hub) enum Seen {
    /// Not seen before (or its answer was forgotten): handle it, then
    /// record its answer with [`Answered::answered`] (or drop the
    /// [`Handling`] guard unanswered).
    New(Handling),
    /// Being handled: its answer goes out again once it is recorded (the
    /// first may have gone before this asking arrived).
    Handling,
    /// Answered with this text: send it again.
    Answered(String),
}

#[derive(Debug)]
enum Entry {
    /// Being handled; whether it was asked again meanwhile.
    Handling { asked_again: bool },
    /// Answered at `at` (tells its own record in `order` from an older
    /// one of the same key).
    Answered { text: String, at: Instant },
}

/// The requests being handled and the answers given in the last `keep`
/// (at most `cap` answers).
#[derive(Debug)]
pub(in crate::hub) struct Answered {
    keep: Duration,
    cap: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_key: HashMap<Key, Entry>,
    /// Answered keys in the order they were answered.
    order: VecDeque<(Key, Instant)>,
}

/// How long an answer is kept after it was given: an asker sends a
/// request again once its listener listens again after a loss, or every
/// 3 s while no answer comes (`cluster::relay_line`), so an answer is
/// asked for again within seconds of being given, if at all.
pub(in crate::hub) const KEEP: Duration = Duration::from_secs(30);

/// At most this many answers are kept (about 200 bytes each with the
/// maps' overhead, 12 MiB in all): at two thousand relayed requests a
/// second, thirty seconds' worth.
pub(in crate::hub) const CAP: usize = 60_000;

/// A request noted as being handled; dropped without an answer (the
/// handling panicked or was dropped), it is forgotten, so that asking
/// again handles it anew rather than waiting for an answer that never
/// comes.
#[derive(Debug)]
pub(in crate::hub) struct Handling {
    key: Key,
    memory: std::sync::Weak<Answered>,
}

impl PartialEq for Handling {
    fn eq(&self, other: &Handling) -> bool {
        self.key == other.key
    }
}

impl Eq for Handling {}

impl Drop for Handling {
    fn drop(&mut self) {
        if let Some(memory) = self.memory.upgrade() {
            let mut inner = lock(&memory.inner);
            if matches!(inner.by_key.get(&self.key), Some(Entry::Handling { .. })) {
                inner.by_key.remove(&self.key);
            }
        }
    }
}

impl Answered {
    pub(in crate::hub) fn new(keep: Duration, cap: usize) -> Answered {
        Answered {
            keep,
            cap: cap.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Request `key` arrived at `now`: what is known of it. A new one is
    /// noted as being handled.
    pub(in crate::hub) fn arrived(self: &std::sync::Arc<Self>, key: Key, now: Instant) -> Seen {
        let mut inner = lock(&self.inner);
        inner.forget_older(now.checked_sub(self.keep), self.cap);
        match inner.by_key.get_mut(&key) {
            Some(Entry::Answered { text, .. }) => Seen::Answered(text.clone()),
            Some(Entry::Handling { asked_again }) => {
                *asked_again = true;
                Seen::Handling
            }
            None => {
                inner
                    .by_key
                    .insert(key, Entry::Handling { asked_again: false });
                Seen::New(Handling {
                    key,
                    memory: std::sync::Arc::downgrade(self),
                })
            }
        }
    }

    /// The request of `handling` was answered with `text` at `now`;
    /// whether it was asked again meanwhile (the answer must then be sent
    /// again: the first may have gone before that asking arrived).
    pub(in crate::hub) fn answered(&self, handling: Handling, text: &str, now: Instant) -> bool {
        let mut inner = lock(&self.inner);
        let again = matches!(
            inner.by_key.get(&handling.key),
            Some(Entry::Handling { asked_again: true })
        );
        inner.by_key.insert(
            handling.key,
            Entry::Answered {
                text: text.to_string(),
                at: now,
            },
        );
        inner.order.push_back((handling.key, now));
        again
    }

    /// How many requests are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.inner).by_key.len()
    }
}

impl Inner {
    /// Forgets the answers given before `before`, and the oldest beyond
    /// `cap - 1` (room for one more).
    fn forget_older(&mut self, before: Option<Instant>, cap: usize) {
        while let Some(&(key, at)) = self.order.front() {
            let old = before.is_some_and(|b| at < b);
            if !old && self.order.len() < cap {
                break;
            }
            self.order.pop_front();
            if matches!(self.by_key.get(&key), Some(Entry::Answered { at: a, .. }) if *a == at) {
                self.by_key.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn new_one(memory: &Arc<Answered>, key: Key, now: Instant) -> Handling {
        match memory.arrived(key, now) {
            Seen::New(h) => h,
            other => panic!("{key:?} is not new: {other:?}"),
        }
    }

    #[test]
    fn a_request_asked_again_gets_its_first_answer_and_is_handled_once() {
        let memory = Arc::new(Answered::new(KEEP, CAP));
        let t = Instant::now();
        let h = new_one(&memory, (1, 7), t);
        assert_eq!(memory.arrived((1, 7), t), Seen::Handling);
        assert!(memory.answered(h, "ok", t), "asked again while handled");
        assert_eq!(memory.arrived((1, 7), t), Seen::Answered("ok".into()));
        // Another asker's request of the same number is another request.
        let other = new_one(&memory, (2, 7), t);
        assert!(!memory.answered(other, "ok", t), "nobody asked again");
    }

    #[test]
    fn a_request_is_remembered_while_it_is_handled_and_its_answer_for_keep() {
        let memory = Arc::new(Answered::new(Duration::from_secs(10), 3));
        let t = Instant::now();
        let slow = new_one(&memory, (1, 1), t);
        // Still being handled long after it came: not handled again.
        assert_eq!(
            memory.arrived((1, 1), t + Duration::from_secs(60)),
            Seen::Handling
        );
        let answered_at = t + Duration::from_secs(61);
        memory.answered(slow, "ok", answered_at);
        assert_eq!(
            memory.arrived((1, 1), answered_at + Duration::from_secs(9)),
            Seen::Answered("ok".into())
        );
        // Eleven seconds after its answer it is forgotten.
        let later = answered_at + Duration::from_secs(11);
        let h = new_one(&memory, (1, 1), later);
        drop(h);
        assert_eq!(memory.len(), 0, "a guard dropped unanswered is forgotten");
        // The cap drops the oldest answers first.
        for id in 2..=5 {
            let h = new_one(&memory, (1, id), later);
            memory.answered(h, "ok", later);
        }
        assert_eq!(memory.len(), 3);
        assert!(
            matches!(memory.arrived((1, 2), later), Seen::New(_)),
            "the oldest stayed"
        );
        assert_eq!(memory.arrived((1, 5), later), Seen::Answered("ok".into()));
    }
}
