//! The ladder list's page against a list in memory that counts its reads: the
//! right games, and the reads that make a page cheap at any depth.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use super::*;

/// A whole list, newest first: (finish time, id, a tournament's).
struct Fake {
    list: Vec<(String, GameId, bool)>,
    /// Whether its finish times have the store's shape, counted by hour.
    hourly: bool,
    hours: AtomicUsize,
    reads: AtomicUsize,
    seated: AtomicUsize,
    /// Places probed (reads of one game).
    probes: AtomicUsize,
    /// Tournament games walked by the counts between two places.
    walked: AtomicUsize,
    /// The most one of those counts walked.
    widest: AtomicUsize,
    /// Counts of the tournament games from the newest to a place.
    newer: AtomicUsize,
    /// Counts of every tournament game.
    totals: AtomicUsize,
}

impl Fake {
    /// `marks[i]`: whether the `i`-th newest is a tournament game.
    /// Neighbours share finish times, as ties do in the real list.
    /// Their finish times have no hours: counts walk the index alone.
    fn new(marks: impl IntoIterator<Item = bool>) -> Fake {
        Fake::timed(marks, |t| format!("t{t:08}"), false)
    }

    /// The same with finish times in hours of `per_hour` games (ties
    /// included) from 2026-01-01T00, counted by hour as `finish_hours`
    /// counts them.
    fn hourly(marks: impl IntoIterator<Item = bool>, per_hour: i64) -> Fake {
        // Two games a tick, as in `new`; a tick is 3,600 / per_hour * 2 s.
        let at = move |t: i64| {
            let s = t * 7_200 / per_hour;
            let (day, hour) = (s / 86_400, s / 3_600 % 24);
            let (month, dom) = (day / 28 + 1, day % 28 + 1);
            let (min, sec) = (s / 60 % 60, s % 60);
            format!("2026-{month:02}-{dom:02}T{hour:02}:{min:02}:{sec:02}.000Z")
        };
        Fake::timed(marks, at, true)
    }

    fn timed(
        marks: impl IntoIterator<Item = bool>,
        at: impl Fn(i64) -> String,
        hourly: bool,
    ) -> Fake {
        let marks: Vec<bool> = marks.into_iter().collect();
        let n = marks.len() as i64;
        let list = marks
            .into_iter()
            .enumerate()
            .map(|(i, m)| (at((n - i as i64) / 2), n - i as i64, m))
            .collect();
        Fake {
            list,
            hourly,
            hours: AtomicUsize::new(0),
            reads: AtomicUsize::new(0),
            seated: AtomicUsize::new(0),
            probes: AtomicUsize::new(0),
            walked: AtomicUsize::new(0),
            widest: AtomicUsize::new(0),
            newer: AtomicUsize::new(0),
            totals: AtomicUsize::new(0),
        }
    }

    /// What the ladder list holds: the games not marked, newest first.
    fn ladder(&self) -> Vec<GameId> {
        self.list.iter().filter(|g| !g.2).map(|g| g.1).collect()
    }

    /// The list's order as a key: newer first means greater.
    fn key(place: Place<'_>) -> (String, GameId) {
        (place.0.to_string(), place.1)
    }

    fn marked(&self) -> impl Iterator<Item = &(String, GameId, bool)> {
        self.list.iter().filter(|g| g.2)
    }
}

#[async_trait]
impl LadderReads for Fake {
    async fn newest_hours(&self, _: &GameFilter) -> Result<Vec<(String, i64, i64)>, StoreError> {
        self.hours.fetch_add(1, Relaxed);
        if !self.hourly {
            // Not the times' hours: seeks are not tested here, and the
            // counts must walk the index.
            return Ok(vec![("t".into(), self.list.len() as i64, 0)]);
        }
        let mut hours: Vec<(String, i64, i64)> = Vec::new();
        for (finished, _, marked) in &self.list {
            let hour = &finished[..13];
            match hours.last_mut() {
                Some(h) if h.0 == hour => {
                    h.1 += 1;
                    h.2 += i64::from(*marked);
                }
                _ => hours.push((hour.to_string(), 1, i64::from(*marked))),
            }
        }
        Ok(hours)
    }

    async fn totals(&self, _: &GameFilter) -> Result<(i64, i64), StoreError> {
        Ok((self.list.len() as i64, self.marked().count() as i64))
    }

    async fn newest_page(
        &self,
        _: &GameFilter,
        hours: &[(String, i64)],
        skip: i64,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        assert!(
            !skips_by_hours(skip) || !hours.is_empty(),
            "{skip} without the hours"
        );
        let counter = if limit > 1 { &self.reads } else { &self.probes };
        counter.fetch_add(1, Relaxed);
        let from = (skip as usize).min(self.list.len());
        let to = (from + limit as usize).min(self.list.len());
        Ok(self.list[from..to]
            .iter()
            .map(|(finished, id, _)| GameSummary {
                id: *id,
                game: "goofspiel".into(),
                status: "finished".into(),
                started: String::new(),
                finished: Some(finished.clone()),
                seats: Vec::new(),
            })
            .collect())
    }

    async fn seated(&self, games: Vec<GameSummary>) -> Result<Vec<GameSummary>, StoreError> {
        self.seated.fetch_add(1, Relaxed);
        Ok(games)
    }

    async fn marked_count(
        &self,
        _: &GameFilter,
        upto: Option<Place<'_>>,
        below: Option<Place<'_>>,
    ) -> Result<i64, StoreError> {
        let (upto, below) = (upto.map(Fake::key), below.map(Fake::key));
        let n = self
            .marked()
            .filter(|g| {
                let k = (g.0.clone(), g.1);
                upto.as_ref().is_none_or(|u| k >= *u) && below.as_ref().is_none_or(|b| k < *b)
            })
            .count();
        match (&upto, &below) {
            (None, None) => self.totals.fetch_add(1, Relaxed),
            (Some(_), Some(_)) => {
                self.widest.fetch_max(n, Relaxed);
                self.walked.fetch_add(n, Relaxed)
            }
            (Some(_), None) => self.newer.fetch_add(1, Relaxed),
            (None, Some(_)) => unreachable!("no count is bounded only below"),
        };
        Ok(n as i64)
    }

    async fn marked_between(
        &self,
        _: &GameFilter,
        newest: Place<'_>,
        oldest: Place<'_>,
    ) -> Result<Vec<GameId>, StoreError> {
        let (newest, oldest) = (Fake::key(newest), Fake::key(oldest));
        Ok(self
            .marked()
            .filter(|g| (g.0.clone(), g.1) <= newest && (g.0.clone(), g.1) >= oldest)
            .map(|g| g.1)
            .collect())
    }
}

/// Reads every page of `limit` of the ladder list in `fake` and checks
/// it; returns the most reads of the whole list any page took.
async fn every_page(fake: &Fake, limit: usize) -> usize {
    let want = fake.ladder();
    let mut most = 0;
    for offset in (0..=want.len() + 1).step_by(limit.max(1)) {
        let (hours, reads, seated) = (&fake.hours, &fake.reads, &fake.seated);
        for counter in [
            hours,
            reads,
            seated,
            &fake.probes,
            &fake.walked,
            &fake.totals,
            &fake.newer,
        ] {
            counter.store(0, Relaxed);
        }
        let got: Vec<GameId> = page(fake, &GameFilter::default(), offset as i64, limit as i64)
            .await
            .unwrap()
            .iter()
            .map(|g| g.id)
            .collect();
        let to = (offset + limit).min(want.len());
        assert_eq!(
            got,
            want[offset.min(to)..to],
            "offset {offset} limit {limit}"
        );
        assert!(
            hours.load(Relaxed) <= 1,
            "offset {offset}: hours read more than once"
        );
        assert!(
            seated.load(Relaxed) <= 1,
            "offset {offset}: seats read more than once"
        );
        let totals = fake.totals.load(Relaxed);
        assert_eq!(totals, 0, "offset {offset}: every tournament game counted");
        let newer = fake.newer.load(Relaxed);
        assert!(
            newer <= 1,
            "offset {offset}: counted from the newest {newer} times"
        );
        most = most.max(reads.load(Relaxed));
    }
    most
}

#[tokio::test]
async fn a_page_reads_the_hours_once_and_the_list_once_or_twice() {
    let n = 5_000;
    // No tournament games: one read a page, as the whole list's.
    assert_eq!(every_page(&Fake::new((0..n).map(|_| false)), 50).await, 1);
    // Every other game a tournament's, from page 1 on.
    assert!(every_page(&Fake::new((0..n).map(|i| i % 2 == 1)), 50).await <= 2);
    // Sparse, and a run of 700: a page that meets the run reads 100,
    // then 400, then up to 1,000 games, and is past it.
    let sparse = Fake::new((0..n).map(|i| i % 9 == 2 || (2_000..2_700).contains(&i)));
    assert!(every_page(&sparse, 50).await <= 4);
    // Dense: two in three.
    assert!(every_page(&Fake::new((0..n).map(|i| i % 3 != 0)), 50).await <= 2);
}

/// The probes and the tournament games walked to find each deep page
/// of `fake`'s ladder list (50 a page), at most.
async fn search_cost(fake: &Fake, offsets: impl Iterator<Item = usize>) -> (usize, usize) {
    let (mut probes, mut walked) = (0, 0);
    for offset in offsets {
        fake.probes.store(0, Relaxed);
        fake.walked.store(0, Relaxed);
        page(fake, &GameFilter::default(), offset as i64, 50)
            .await
            .unwrap();
        probes = probes.max(fake.probes.load(Relaxed));
        walked = walked.max(fake.walked.load(Relaxed));
    }
    (probes, walked)
}

#[tokio::test]
async fn a_deep_page_walks_the_tournament_games_before_it_about_once() {
    let n = 40_000;
    // One in nine: steps find the place, and the counts walk about the
    // tournament games among the games skipped past the page's first
    // (measured: 7 probes, 180 walked; counting each probe from the
    // newest game fails here).
    let deep = || (1_000..n as usize / 3).step_by(997);
    let (probes, walked) = search_cost(&Fake::new((0..n).map(|i| i % 9 == 2)), deep()).await;
    assert!(
        probes <= 8 && walked <= 1_000,
        "{probes} probes, {walked} walked"
    );
    // Two in three: a gallop and bisection, each count from the place
    // probed before (measured: 18 probes, 25,462 walked).
    let (probes, walked) = search_cost(&Fake::new((0..n).map(|i| i % 3 != 0)), deep()).await;
    assert!(
        probes <= 30 && walked <= 30_000,
        "{probes} probes, {walked} walked"
    );
}

#[tokio::test]
async fn a_page_past_a_long_run_of_tournament_games_gallops() {
    // One ladder game, a run of 30,000 tournament games, then ladder
    // games: the second page's place is past the run. Steps that do not
    // shrink give way to the gallop at once (measured: 31 probes; 38 with
    // eight steps first, 15,003 without strides doubling).
    let fake = Fake::new((0..32_000).map(|i| (1..=30_000).contains(&i)));
    let (probes, walked) = search_cost(&fake, [1, 2, 1_000].into_iter()).await;
    assert!(
        probes <= 36 && walked <= 70_000,
        "{probes} probes, {walked} walked"
    );
}

#[tokio::test]
async fn every_offset_of_small_lists_at_any_mix() {
    for n in 0..40 {
        for pattern in 0..6u64 {
            let fake = Fake::new((0..n).map(|i| match pattern {
                0 => false,
                1 => true,
                2 => i % 2 == 0,
                3 => i % 5 < 3,
                4 => (5..25).contains(&i),
                _ => (i * 7 + 3) % 11 < 4,
            }));
            for limit in [1, 2, 5, 50] {
                every_page(&fake, limit).await;
            }
        }
    }
}

#[tokio::test]
async fn with_hours_every_page_holds_the_ladder_games() {
    let n = 5_000;
    for per_hour in [37, 1_000] {
        let mixes: [&dyn Fn(i64) -> bool; 4] = [
            &|i| i % 2 == 1,
            &|i| i % 9 == 2 || (2_000..2_700).contains(&i),
            &|i| i % 3 != 0,
            &|i| (1_200..4_990).contains(&i),
        ];
        for mix in mixes {
            let fake = Fake::hourly((0..n).map(mix), per_hour);
            for limit in [7, 50] {
                every_page(&fake, limit).await;
            }
        }
    }
}

#[tokio::test]
async fn with_hours_a_deep_page_walks_two_hours_at_most_a_count() {
    let n = 40_000;
    let deep = || (1_000..n as usize / 3).step_by(997);
    // Two in three, 1,000 games an hour: a count walks the tournament
    // games of at most two hours, about 667 each, and takes the hours
    // between from their counts (measured: 18 probes, 5,800 walked;
    // 25,462 without the hours, above).
    let fake = Fake::hourly((0..n).map(|i| i % 3 != 0), 1_000);
    let (probes, walked) = search_cost(&fake, deep()).await;
    let widest = fake.widest.load(Relaxed);
    assert!(
        probes <= 30 && walked <= 10_000 && widest <= 2 * 667,
        "{probes} probes, {walked} walked, {widest} at most at once"
    );
    // Past a run of 30,000 tournament games (measured: 31 probes, 8,639
    // walked, 1,026 at most at once, against 30,639 and 9,000
    // without the hours).
    let fake = Fake::hourly((0..32_000).map(|i| (1..=30_000).contains(&i)), 1_000);
    let (probes, walked) = search_cost(&fake, [1, 2, 1_000].into_iter()).await;
    let widest = fake.widest.load(Relaxed);
    assert!(
        probes <= 36 && walked <= 15_000 && widest <= 2 * 1_000,
        "{probes} probes, {walked} walked, {widest} at most at once"
    );
}
