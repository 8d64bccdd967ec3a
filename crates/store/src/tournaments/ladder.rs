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
//! one tournament game), so `m` is found by a few steps, then (when
//! tournament games are dense) a gallop and bisection, each a read of one
//! game of the whole list (a probe). The page is then read from there, the
//! tournament games among it left out. A page reads the whole list's
//! finish hours once, however many reads it makes, and counts the
//! tournament games newer than its first place once: each probe counts
//! only those between the place probed before and its own, and reads no
//! seats. It never counts every tournament game, nor does the list's
//! length for the page numbers ([`count`]), which takes their number from
//! the list's counts (`finish_totals.marked`).
//!
//! Once a page has read the finish hours, they count its tournament games
//! too (`finish_hours.marked`): a count between two places in different
//! hours walks the index only in the two hours they are in, and takes the
//! hours between from the counts, so that a deep page walks no more
//! tournament games than two hours hold, whatever their share.

use async_trait::async_trait;

use crate::sql_web::{is_hour, skips_by_hours};
use crate::web::{GameFilter, GameSummary};
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
    /// The whole list's finished games per finish hour, newest first, and
    /// the tournament games among them: (hour, games, tournament games),
    /// for [`Self::newest_page`] and the counts (read once for the several
    /// reads of a page).
    async fn newest_hours(
        &self,
        filter: &GameFilter,
    ) -> Result<Vec<(String, i64, i64)>, StoreError>;
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
    /// The whole list's length and how many tournament games it holds,
    /// from the list's counts (`finish_totals`), without walking them.
    async fn totals(&self, filter: &GameFilter) -> Result<(i64, i64), StoreError>;
    /// How many tournament games there are, walked in their index: all of
    /// them, or only those at or newer than `upto` and older than
    /// `below`, each if given.
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
    S: LadderReads + ?Sized,
{
    let (all, marked) = store.totals(filter).await?;
    Ok((all - marked).max(0))
}

/// The whole list as one page of the ladder list reads it: its finish
/// hours are read once, by the first read deep enough to need them.
struct Whole<'a, S: ?Sized> {
    store: &'a S,
    filter: &'a GameFilter,
    hours: Option<Hours>,
}

/// The whole list's finish hours, newest first.
struct Hours {
    /// Each hour's games, for the whole list's reads.
    games: Vec<(String, i64)>,
    /// The tournament games in the hours newer than each (one more: all),
    /// or none if an hour is not of the store's shape, when counts walk
    /// the index alone.
    newer: Option<Vec<i64>>,
}

impl Hours {
    fn new(hours: Vec<(String, i64, i64)>) -> Hours {
        let newer = hours.iter().all(|(h, ..)| is_hour(h)).then(|| {
            let mut sum = 0;
            let mut newer = vec![0];
            newer.extend(hours.iter().map(|(_, _, m)| {
                sum += m;
                sum
            }));
            newer
        });
        let games = hours.into_iter().map(|(h, g, _)| (h, g)).collect();
        Hours { games, newer }
    }

    /// Where `hour` is, or would be, among the hours: how many are newer.
    fn newer_than(&self, hour: &str) -> usize {
        self.games.partition_point(|(h, _)| h.as_str() > hour)
    }

    /// How many are `hour` or newer.
    fn upto(&self, hour: &str) -> usize {
        self.games.partition_point(|(h, _)| h.as_str() >= hour)
    }
}

/// The hour a place's finish time falls in, if it has the store's shape.
fn hour_of(place: Place<'_>) -> Option<&str> {
    place.0.get(..13).filter(|h| is_hour(h))
}

impl<S: LadderReads + ?Sized> Whole<'_, S> {
    /// The whole list's games from the `skip`-th newest, without seats.
    async fn read(&mut self, skip: i64, limit: i64) -> Result<Vec<GameSummary>, StoreError> {
        if self.hours.is_none() && skips_by_hours(skip) {
            self.hours = Some(Hours::new(self.store.newest_hours(self.filter).await?));
        }
        let hours = self.hours.as_ref().map_or(&[][..], |h| &h.games[..]);
        self.store
            .newest_page(self.filter, hours, skip, limit)
            .await
    }

    /// The tournament games at or newer than `upto` and older than
    /// `below` (`below` unbounded if not given). Once the hours are read,
    /// a count spanning hours walks the index only in the hour of each
    /// end, and takes the whole hours between from their counts.
    async fn marked(&self, upto: Place<'_>, below: Option<Place<'_>>) -> Result<i64, StoreError> {
        let walk = |upto, below| self.store.marked_count(self.filter, Some(upto), below);
        let newer = self
            .hours
            .as_ref()
            .and_then(|h| Some((h, h.newer.as_ref()?)));
        let (Some((hours, newer)), Some(low)) = (newer, hour_of(upto)) else {
            return walk(upto, below).await;
        };
        // The tournament games of the hours newer than `upto`'s, up to
        // `below`'s (excluded), and those of `below`'s hour older than it.
        let above_low = hours.newer_than(low);
        let (whole, high) = match below {
            None => (newer[above_low], 0),
            Some(below) => match hour_of(below) {
                // With no whole hour between, the walk is the two ends'.
                Some(high) if high > low && hours.upto(high) < above_low => {
                    let between = newer[above_low] - newer[hours.upto(high)];
                    (between, walk((high, 0), Some(below)).await?)
                }
                _ => return walk(upto, Some(below)).await,
            },
        };
        // A finish time in hour `low` sorts before `low;` (';' follows
        // ':'), and an id of 0 makes the bound a plain one on the time.
        let end = format!("{low};");
        let low = walk(upto, Some((end.as_str(), 0))).await?;
        Ok(low + whole + high)
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

/// The places a page probes: the whole list's game at `offset + m`, and
/// how many tournament games are at or newer than it, counted from the
/// place probed last (a walk of the tournament games between the two).
struct Probes<'a, S: ?Sized> {
    whole: Whole<'a, S>,
    offset: i64,
    last: Probed,
}

/// A place probed: its `m` and the tournament games at or newer than it.
struct Probed {
    place: (String, GameId),
    m: i64,
    count: i64,
}

impl<S: LadderReads + ?Sized> Probes<'_, S> {
    /// The tournament games among the whole list's first `offset + m + 1`,
    /// less `m`; 0 past the list's end.
    async fn ahead(&mut self, m: i64) -> Result<i64, StoreError> {
        let Some(place) = self.whole.place(self.offset.saturating_add(m)).await? else {
            return Ok(0);
        };
        let last = &self.last;
        let here = (place.0.as_str(), place.1);
        let there = (last.place.0.as_str(), last.place.1);
        let whole = &self.whole;
        // The list's order is its places': a greater m is an older place.
        // (If games finish between two probes, the list moves under them
        // and a count may be off by the tournament games that moved, as
        // any read of a moving list may be; the search still ends.)
        let count = match m.cmp(&last.m) {
            std::cmp::Ordering::Equal => last.count,
            std::cmp::Ordering::Greater => last.count + whole.marked(here, Some(there)).await?,
            std::cmp::Ordering::Less => last.count - whole.marked(there, Some(here)).await?,
        };
        self.last = Probed { place, m, count };
        Ok(count - m)
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
    let newer = whole.marked(first, None).await?;
    // The smallest m with ahead(m) <= 0, where ahead(m) is the number of
    // tournament games among the whole list's first offset + m + 1, less
    // m; past the list's end counts as <= 0. Since ahead(m + j) >=
    // ahead(m) - j, no m below m + ahead(m) will do: such steps find m
    // when tournament games are sparse (each step's ahead is about the
    // share of tournament games times the last). When a step does not at
    // least halve it (tournament games dense, or in a run), a gallop
    // (strides doubling) finds an m that will do, and bisection the
    // smallest.
    let mut probes = Probes {
        whole,
        offset,
        last: Probed {
            place: (first.0.to_string(), first.1),
            m: 0,
            count: newer,
        },
    };
    let (mut low, mut a): (i64, i64) = (0, newer);
    for _ in 0..8 {
        if a <= 0 {
            break;
        }
        low = low.saturating_add(a);
        let next = probes.ahead(low).await?;
        let sparse = next <= a / 2;
        a = next;
        if !sparse {
            break;
        }
    }
    if a > 0 {
        low = low.saturating_add(a);
        let mut stride = a;
        let mut high = loop {
            let h = low.saturating_add(stride);
            let ah = probes.ahead(h).await?;
            if ah <= 0 {
                break h;
            }
            low = h.saturating_add(ah);
            stride = stride.saturating_mul(2);
        };
        while low < high {
            let mid = low + (high - low) / 2;
            if probes.ahead(mid).await? <= 0 {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
    }
    let mut whole = probes.whole;
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
mod tests;
