//! The games list without tournament games ("ladder games only",
//! `/games?tournaments=hide`), read from the whole list and the tournament
//! games alone, so that it costs what the whole list does at any depth.
//!
//! The whole list (newest first, read through [`LadderReads::newest_page`]
//! as `WebReads::games_at` reads it) reaches any page through the
//! finish-hour counts without walking the games before it.
//! Tournament games are few beside the ladder's and have an index of their
//! own (`games_tournament_finish_order`), and so do a bot's tournament
//! seats (`game_seats_tournament_finish_order_by_bot`), where those newer
//! than a game are counted without reading the games (unless a kind is
//! asked for). The ladder list's game at `offset` is the whole
//! list's at `offset + m`, where `m` is the number of tournament games
//! before it: the smallest `m` at which the whole list's first
//! `offset + m + 1` games hold exactly `m` tournament games. That count
//! minus `m` never grows as `m` grows (each step adds one game and at most
//! one tournament game), so `m` is found by a few steps and bisection, in
//! at most about log2(tournament games) reads of one game of the whole
//! list. The page is then read from there, the tournament games among it
//! left out. A page reads the whole list's finish hours once, however many
//! reads it makes, and counts the tournament games newer than its first
//! place once: each later probe counts only those between that place and
//! its own, and reads no seats.

use async_trait::async_trait;

use crate::sql_web::skips_by_hours;
use crate::web::{GameFilter, GameSummary, WebReads};
use crate::{GameId, StoreError};

/// A game's place in the list's order: its finish time and id.
type Place<'a> = (&'a str, GameId);

/// What the ladder list reads from a backend: the whole list in pieces,
/// and the tournament games in it. Those are the finished games with a
/// `tournament_id` that `filter` matches (its kind; its bot in a ranked
/// seat, as the whole list counts a bot's games), in the list's order
/// (finish time, then id, newest first), walked in their own index (a
/// bot's in its tournament seats'): a walk's cost grows with the
/// tournament games, not the ladder's.
#[async_trait]
pub(crate) trait LadderReads {
    /// The whole list's finished games per finish hour, newest first, for
    /// [`Self::newest_page`] (read once for the several reads of a page).
    async fn newest_hours(&self, filter: &GameFilter) -> Result<Vec<(String, i64)>, StoreError>;
    /// The whole list's games from the `skip`-th newest on, `limit` of
    /// them, without their seats; `hours` are [`Self::newest_hours`] when
    /// the skip is deep enough to start from them.
    async fn newest_page(
        &self,
        filter: &GameFilter,
        hours: &[(String, i64)],
        skip: i64,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError>;
    /// `games` with their seats.
    async fn seated(&self, games: Vec<GameSummary>) -> Result<Vec<GameSummary>, StoreError>;
    /// How many tournament games there are: all of them, or only those
    /// at or newer than `upto` and older than `below`, each if given.
    async fn marked_count(
        &self,
        filter: &GameFilter,
        upto: Option<Place<'_>>,
        below: Option<Place<'_>>,
    ) -> Result<i64, StoreError>;
    /// The tournament games from `newest` to `oldest`, both included.
    async fn marked_between(
        &self,
        filter: &GameFilter,
        newest: Place<'_>,
        oldest: Place<'_>,
    ) -> Result<Vec<GameId>, StoreError>;
}

/// How many finished games `filter` matches outside tournaments.
pub(crate) async fn count<S>(store: &S, filter: &GameFilter) -> Result<i64, StoreError>
where
    S: WebReads + LadderReads + ?Sized,
{
    let all = store.count_finished(filter).await?;
    let marked = store.marked_count(filter, None, None).await?;
    Ok((all - marked).max(0))
}

/// The whole list as one page of the ladder list reads it: its finish
/// hours are read once, by the first read deep enough to need them.
struct Whole<'a, S: ?Sized> {
    store: &'a S,
    filter: &'a GameFilter,
    hours: Option<Vec<(String, i64)>>,
}

impl<S: LadderReads + ?Sized> Whole<'_, S> {
    /// The whole list's games from the `skip`-th newest, without seats.
    async fn read(&mut self, skip: i64, limit: i64) -> Result<Vec<GameSummary>, StoreError> {
        if self.hours.is_none() && skips_by_hours(skip) {
            self.hours = Some(self.store.newest_hours(self.filter).await?);
        }
        let hours = self.hours.as_deref().unwrap_or_default();
        self.store
            .newest_page(self.filter, hours, skip, limit)
            .await
    }

    /// The place of the whole list's `skip`-th newest game, if it has one.
    async fn place(&mut self, skip: i64) -> Result<Option<(String, GameId)>, StoreError> {
        Ok(self
            .read(skip, 1)
            .await?
            .into_iter()
            .next()
            .map(|g| (at(&g).0.to_string(), g.id)))
    }
}

/// The finished games `filter` matches outside tournaments, newest first,
/// `limit` of them from `offset`.
pub(crate) async fn page<S>(
    store: &S,
    filter: &GameFilter,
    offset: i64,
    limit: i64,
) -> Result<Vec<GameSummary>, StoreError>
where
    S: LadderReads + ?Sized,
{
    let (offset, limit) = (offset.max(0), limit.max(0));
    if limit == 0 {
        return Ok(Vec::new());
    }
    let mut whole = Whole {
        store,
        filter,
        hours: None,
    };
    // The ladder list's game at `offset` is at or after the whole list's.
    let Some(first) = whole.place(offset).await? else {
        return Ok(Vec::new());
    };
    let first = (first.0.as_str(), first.1);
    // The tournament games at or newer than it.
    let newer = store.marked_count(filter, Some(first), None).await?;
    // The smallest m with ahead(m) <= 0, where ahead(m) is the number of
    // tournament games among the whole list's first offset + m + 1, less
    // m; past the list's end counts as <= 0. It is at most the number of
    // tournament games. Since ahead(m + j) >= ahead(m) - j, no m below
    // m + ahead(m) will do: a few such steps find m when tournament games
    // are sparse, and bisection finishes when they are not. Each count
    // after the first walks only the tournament games between `first` and
    // the place probed.
    let mut ahead = async |m: i64| -> Result<i64, StoreError> {
        if m == 0 {
            return Ok(newer);
        }
        Ok(match whole.place(offset.saturating_add(m)).await? {
            Some((finished, id)) => {
                let between = store
                    .marked_count(filter, Some((&finished, id)), Some(first))
                    .await?;
                newer + between - m
            }
            None => 0,
        })
    };
    let mut low = 0;
    let mut found = false;
    for _ in 0..4 {
        let a = ahead(low).await?;
        if a <= 0 {
            found = true;
            break;
        }
        low += a;
    }
    if !found {
        let total = store.marked_count(filter, None, None).await?;
        let mut high = total.max(low);
        while low < high {
            let mid = low + (high - low) / 2;
            if ahead(mid).await? <= 0 {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
    }
    // Read on from there, leaving out the tournament games. The first read
    // asks for the page and as many more as tournament games came before
    // it (up to as many again); each later one for what is still missing,
    // scaled by the share of ladder games in the read before (up to four
    // times that read, and at most a thousand), so that a page takes one
    // or two reads whatever the mix.
    let mut games = Vec::with_capacity(limit.min(1024) as usize);
    let mut from = offset.saturating_add(low);
    let mut ask = limit.saturating_add(limit.min(newer));
    while (games.len() as i64) < limit {
        let want = limit - games.len() as i64;
        let batch = whole.read(from, ask).await?;
        let (Some(top), Some(bottom)) = (batch.first(), batch.last()) else {
            break;
        };
        let skip = store.marked_between(filter, at(top), at(bottom)).await?;
        let got = batch.len() as i64;
        let before = games.len();
        games.extend(batch.into_iter().filter(|g| !skip.contains(&g.id)));
        let kept = (games.len() - before) as i64;
        games.truncate(limit as usize);
        if got < ask {
            break;
        }
        from = from.saturating_add(got);
        let missing = want - kept;
        let scaled = if kept == 0 {
            ask.saturating_mul(4)
        } else {
            (missing.saturating_mul(got) + kept - 1) / kept
        };
        ask = scaled.min(ask.saturating_mul(4)).min(1_000).max(missing);
    }
    store.seated(games).await
}

/// A listed game's place in the list's order.
fn at(g: &GameSummary) -> Place<'_> {
    (g.finished.as_deref().unwrap_or(""), g.id)
}

#[cfg(test)]
mod tests {
    //! The page against a list in memory that counts its reads: the
    //! right games, and the reads that make a page cheap at any depth.
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    use super::*;

    /// A whole list, newest first: (finish time, id, a tournament's).
    struct Fake {
        list: Vec<(String, GameId, bool)>,
        hours: AtomicUsize,
        reads: AtomicUsize,
        seated: AtomicUsize,
    }

    impl Fake {
        /// `marks[i]`: whether the `i`-th newest is a tournament game.
        /// Neighbours share finish times, as ties do in the real list.
        fn new(marks: impl IntoIterator<Item = bool>) -> Fake {
            let marks: Vec<bool> = marks.into_iter().collect();
            let n = marks.len() as i64;
            let list = marks
                .into_iter()
                .enumerate()
                .map(|(i, m)| (format!("t{:08}", (n - i as i64) / 2), n - i as i64, m))
                .collect();
            Fake {
                list,
                hours: AtomicUsize::new(0),
                reads: AtomicUsize::new(0),
                seated: AtomicUsize::new(0),
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
        async fn newest_hours(&self, _: &GameFilter) -> Result<Vec<(String, i64)>, StoreError> {
            self.hours.fetch_add(1, Relaxed);
            Ok(vec![("2026-01-01T00".into(), self.list.len() as i64)])
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
            if limit > 1 {
                self.reads.fetch_add(1, Relaxed);
            }
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
            Ok(self
                .marked()
                .filter(|g| {
                    let k = (g.0.clone(), g.1);
                    upto.as_ref().is_none_or(|u| k >= *u) && below.as_ref().is_none_or(|b| k < *b)
                })
                .count() as i64)
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
            for counter in [hours, reads, seated] {
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
}
