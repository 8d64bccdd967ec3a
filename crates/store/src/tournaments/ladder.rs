//! The games list without tournament games ("ladder games only",
//! `/games?tournaments=hide`), read from the whole list and the tournament
//! games alone, so that it costs what the whole list does at any depth.
//!
//! The whole list (`WebReads::games_at`, newest first) reaches any page
//! through the finish-hour counts without walking the games before it.
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
/// hours are read once, by the first read deep enough to need them, and
/// the tournament games newer than the page's first place once.
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
            .map(|g| (g.finished.unwrap_or_default(), g.id)))
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
    let mut known = newer;
    if !found {
        known = store.marked_count(filter, None, None).await?;
        let mut high = known.max(low);
        while low < high {
            let mid = low + (high - low) / 2;
            if ahead(mid).await? <= 0 {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
    }
    // Read on from there, leaving out the tournament games; each read asks
    // for what is missing and as many more as tournament games may come
    // next (as many as are known of, up to as many again).
    let mut games = Vec::with_capacity(limit.min(1024) as usize);
    let mut from = offset.saturating_add(low);
    while (games.len() as i64) < limit {
        let want = limit - games.len() as i64;
        let ask = want.saturating_add(want.min(known));
        let batch = whole.read(from, ask).await?;
        let (Some(first), Some(last)) = (batch.first(), batch.last()) else {
            break;
        };
        let skip = store.marked_between(filter, at(first), at(last)).await?;
        let got = batch.len() as i64;
        games.extend(
            batch
                .into_iter()
                .filter(|g| !skip.contains(&g.id))
                .take(want as usize),
        );
        if got < ask {
            break;
        }
        from = from.saturating_add(got);
    }
    store.seated(games).await
}

/// A listed game's place in the list's order.
fn at(g: &GameSummary) -> Place<'_> {
    (g.finished.as_deref().unwrap_or(""), g.id)
}
