//! The bookkeeping of spare sandboxes ([`super::spare`]), apart from what
//! a spare is: which are ready for each kind of sandbox, how many are
//! being set up, which kinds are kept, and which spares are let go. Pure
//! (the clock and the spares' liveness come from the caller), so that its
//! rules are tested without a sandbox.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The spares of one kind of sandbox.
struct Spares<T> {
    /// Ready, oldest first, with when each became ready.
    ready: Vec<(T, Instant)>,
    /// Setups begun and not yet done.
    making: usize,
    /// When a start last looked for one of this kind.
    used: Instant,
    /// Which keeping of this kind it is: a setup begun for a kind since
    /// forgotten does not count in a new keeping of it.
    generation: u64,
}

/// What a start's look for a spare comes to.
pub(super) struct Look<T> {
    /// The oldest spare of its kind that was ready, if any.
    pub(super) found: Option<T>,
    /// How many setups to begin for its kind, each to be reported with
    /// [`Pool::made`] and [`Pool::done`] under `generation`.
    pub(super) make: usize,
    pub(super) generation: u64,
    /// Spares let go (idle or dead ones of every kind, those of kinds past
    /// the pool's number): to be dropped once the pool is no longer locked.
    pub(super) gone: Vec<T>,
}

/// Spares of at most `kinds` kinds, `keep` of each ready or being set up,
/// none kept ready longer than `idle`.
pub(super) struct Pool<T> {
    kinds: HashMap<String, Spares<T>>,
    next_generation: u64,
    keep: usize,
    max_kinds: usize,
    idle: Duration,
}

impl<T> Pool<T> {
    pub(super) fn new(keep: usize, max_kinds: usize, idle: Duration) -> Self {
        Pool {
            kinds: HashMap::new(),
            next_generation: 0,
            keep,
            max_kinds,
            idle,
        }
    }

    /// A start of `kind` looks for a spare at `now`: every kind's spares
    /// that are dead (`alive` says no) or ready for `idle` or longer are
    /// let go; the oldest ready spare of `kind` is taken; setups are begun
    /// so that `keep` of it are ready or being set up; and the kinds used
    /// longest ago are forgotten while there are more than `max_kinds`.
    pub(super) fn look(&mut self, kind: &str, now: Instant, alive: impl Fn(&T) -> bool) -> Look<T> {
        let mut gone = Vec::new();
        let idle = self.idle;
        for spares in self.kinds.values_mut() {
            let (keep, go): (Vec<_>, Vec<_>) = std::mem::take(&mut spares.ready)
                .into_iter()
                .partition(|(t, made)| alive(t) && now.saturating_duration_since(*made) < idle);
            spares.ready = keep;
            gone.extend(go.into_iter().map(|(t, _)| t));
        }
        let next_generation = &mut self.next_generation;
        let spares = self.kinds.entry(kind.to_string()).or_insert_with(|| {
            *next_generation += 1;
            Spares {
                ready: Vec::new(),
                making: 0,
                used: now,
                generation: *next_generation,
            }
        });
        spares.used = now;
        let found = (!spares.ready.is_empty()).then(|| spares.ready.remove(0).0);
        let make = self.keep.saturating_sub(spares.ready.len() + spares.making);
        spares.making += make;
        let generation = spares.generation;
        while self.kinds.len() > self.max_kinds {
            let oldest = self
                .kinds
                .iter()
                .filter(|(k, _)| k.as_str() != kind)
                .min_by_key(|(_, s)| s.used)
                .map(|(k, _)| k.clone());
            match oldest.and_then(|k| self.kinds.remove(&k)) {
                Some(s) => gone.extend(s.ready.into_iter().map(|(t, _)| t)),
                None => break,
            }
        }
        Look {
            found,
            make,
            generation,
            gone,
        }
    }

    /// A spare of `kind` taken but not used after all goes back, ready
    /// since `now`, unless its kind has `keep` ready or was forgotten: then
    /// it is handed back, to be let go.
    pub(super) fn put_back(&mut self, kind: &str, t: T, now: Instant) -> Option<T> {
        match self.kinds.get_mut(kind) {
            Some(spares) if spares.ready.len() < self.keep => {
                spares.ready.push((t, now));
                None
            }
            _ => Some(t),
        }
    }

    /// A setup of `kind` begun under `generation` made a spare, ready at
    /// `now`: kept, unless its kind was forgotten since (a new keeping of
    /// it has a new generation); then it is handed back, to be let go.
    pub(super) fn made(&mut self, kind: &str, generation: u64, t: T, now: Instant) -> Option<T> {
        match self.kinds.get_mut(kind) {
            Some(spares) if spares.generation == generation => {
                spares.ready.push((t, now));
                None
            }
            _ => Some(t),
        }
    }

    /// A setup of `kind` begun under `generation` is over, whether it made
    /// a spare or not.
    pub(super) fn done(&mut self, kind: &str, generation: u64) {
        if let Some(spares) = self.kinds.get_mut(kind) {
            if spares.generation == generation {
                spares.making = spares.making.saturating_sub(1);
            }
        }
    }

    /// The spares of `kind` ready now, oldest first.
    #[cfg(test)]
    pub(super) fn ready_mut(&mut self, kind: &str) -> impl Iterator<Item = &mut T> {
        self.kinds
            .get_mut(kind)
            .into_iter()
            .flat_map(|s| s.ready.iter_mut().map(|(t, _)| t))
    }
}

#[cfg(test)]
#[path = "spare_pool_tests.rs"]
mod tests;
