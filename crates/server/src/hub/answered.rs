//! A home's memory of the requests relayed to it (issue 13): an asker
//! whose answer was lost (its listener's connection dropped) or late asks
//! again with the same number, and gets the first answer instead of the
//! move being handled twice — a second handling would refuse a move that
//! was applied ("not your turn"), or say "gone" for the move that ended
//! the game.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A request: the asking instance and its number there.
pub(in crate::hub) type Key = (i64, u64);

/// What the home knows of a request as it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::hub) enum Seen {
    /// Not seen before (or forgotten): handle it.
    New,
    /// Being handled: its answer goes out when it is ready.
    Handling,
    /// Answered with this text: send it again.
    Answered(String),
}

#[derive(Debug)]
struct Entry {
    /// When it was first asked (tells a key's own record in `order` from
    /// an older one of the same key).
    at: Instant,
    answer: Option<String>,
}

/// The requests taken in the last `keep`, at most `cap` of them.
#[derive(Debug)]
pub(in crate::hub) struct Answered {
    keep: Duration,
    cap: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_key: HashMap<Key, Entry>,
    /// Keys in the order they were first asked.
    order: VecDeque<(Key, Instant)>,
}

/// How long an answer is kept: an asker sends a request again when its
/// listener was lost (at once) or after 3 s without an answer
/// (`cluster::relay_line`), so a request is rarely asked again later than
/// this; one that is is handled anew (a move applied then is refused as a
/// second move).
pub(in crate::hub) const KEEP: Duration = Duration::from_secs(30);

/// At most this many answers are kept (about 100 bytes each): at two
/// thousand relayed requests a second, thirty seconds' worth.
pub(in crate::hub) const CAP: usize = 60_000;

impl Answered {
    pub(in crate::hub) fn new(keep: Duration, cap: usize) -> Answered {
        Answered {
            keep,
            cap: cap.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Request `key` arrived at `now`: what is known of it. A new one is
    /// noted as being handled.
    pub(in crate::hub) fn arrived(&self, key: Key, now: Instant) -> Seen {
        let mut inner = self.inner();
        inner.forget_older(now.checked_sub(self.keep), self.cap);
        if let Some(e) = inner.by_key.get(&key) {
            return match &e.answer {
                Some(a) => Seen::Answered(a.clone()),
                None => Seen::Handling,
            };
        }
        inner.by_key.insert(
            key,
            Entry {
                at: now,
                answer: None,
            },
        );
        inner.order.push_back((key, now));
        Seen::New
    }

    /// Request `key` was answered with `answer` (kept while the request
    /// is remembered).
    pub(in crate::hub) fn answered(&self, key: Key, answer: &str) {
        if let Some(e) = self.inner().by_key.get_mut(&key) {
            e.answer = Some(answer.to_string());
        }
    }

    /// How many requests are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner().by_key.len()
    }
}

impl Inner {
    /// Forgets the requests first asked before `before`, and the oldest
    /// beyond `cap - 1` (room for one more).
    fn forget_older(&mut self, before: Option<Instant>, cap: usize) {
        while let Some(&(key, at)) = self.order.front() {
            let old = before.is_some_and(|b| at < b);
            if !old && self.order.len() < cap {
                break;
            }
            self.order.pop_front();
            if self.by_key.get(&key).is_some_and(|e| e.at == at) {
                self.by_key.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_asked_again_gets_its_first_answer_and_is_handled_once() {
        let memory = Answered::new(KEEP, CAP);
        let t = Instant::now();
        assert_eq!(memory.arrived((1, 7), t), Seen::New);
        assert_eq!(memory.arrived((1, 7), t), Seen::Handling);
        memory.answered((1, 7), "ok");
        assert_eq!(memory.arrived((1, 7), t), Seen::Answered("ok".into()));
        // Another asker's request of the same number is another request.
        assert_eq!(memory.arrived((2, 7), t), Seen::New);
    }

    #[test]
    fn answers_are_forgotten_after_keep_and_beyond_the_cap() {
        let memory = Answered::new(Duration::from_secs(10), 3);
        let t = Instant::now();
        memory.arrived((1, 1), t);
        memory.answered((1, 1), "ok");
        memory.arrived((1, 2), t + Duration::from_secs(5));
        assert_eq!(
            memory.arrived((1, 1), t + Duration::from_secs(9)),
            Seen::Answered("ok".into())
        );
        // Eleven seconds on, the first is forgotten: asked again, it is new.
        assert_eq!(
            memory.arrived((1, 1), t + Duration::from_secs(11)),
            Seen::New
        );
        assert_eq!(memory.len(), 2);
        // The cap drops the oldest first.
        let later = t + Duration::from_secs(12);
        memory.arrived((1, 3), later);
        memory.arrived((1, 4), later);
        assert_eq!(memory.len(), 3);
        assert_eq!(
            memory.arrived((1, 2), later),
            Seen::New,
            "the oldest stayed"
        );
    }

    #[test]
    fn a_request_asked_again_after_it_was_forgotten_is_remembered_anew() {
        let memory = Answered::new(Duration::from_secs(10), CAP);
        let t = Instant::now();
        memory.arrived((1, 1), t);
        // Forgotten, then asked again: handled anew, and its new answer
        // is kept.
        let again = t + Duration::from_secs(11);
        assert_eq!(memory.arrived((1, 1), again), Seen::New);
        memory.answered((1, 1), "refused not your turn");
        assert_eq!(
            memory.arrived((1, 1), again + Duration::from_secs(1)),
            Seen::Answered("refused not your turn".into())
        );
    }
}
