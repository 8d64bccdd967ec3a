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
//! list. The page is then read
//! from there, the tournament games among it left out.

use async_trait::async_trait;

use crate::web::{GameFilter, GameSummary, PageAt, WebReads};
use crate::{GameId, StoreError};

/// The tournament games a backend finds for [`page`] and [`count`]: the
/// finished games with a `tournament_id` that `filter` matches (its kind;
/// its bot in a ranked seat, as the whole list counts a bot's games), in
/// the list's order (finish time, then id, newest first), walked in their
/// own index (a bot's in its tournament seats'): a walk's cost grows with
/// the tournament games, not the ladder's.
#[async_trait]
pub(crate) trait TournamentGames {
    /// How many there are, all of them or only those at or newer than
    /// `upto` (its finish time and id).
    async fn marked_count(
        &self,
        filter: &GameFilter,
        upto: Option<(&str, GameId)>,
    ) -> Result<i64, StoreError>;
    /// Those from `newest` to `oldest`, both included (finish time and id).
    async fn marked_between(
        &self,
        filter: &GameFilter,
        newest: (&str, GameId),
        oldest: (&str, GameId),
    ) -> Result<Vec<GameId>, StoreError>;
}

/// How many finished games `filter` matches outside tournaments.
pub(crate) async fn count<S>(store: &S, filter: &GameFilter) -> Result<i64, StoreError>
where
    S: WebReads + TournamentGames + ?Sized,
{
    let all = store.count_finished(filter).await?;
    let marked = store.marked_count(filter, None).await?;
    Ok((all - marked).max(0))
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
    S: WebReads + TournamentGames + ?Sized,
{
    let (offset, limit) = (offset.max(0), limit.max(0));
    if limit == 0 {
        return Ok(Vec::new());
    }
    let marked = store.marked_count(filter, None).await?;
    if marked == 0 {
        return store.games_at(filter, PageAt::Newest(offset), limit).await;
    }
    // The smallest m in 0..=marked with ahead(m) <= 0, where ahead(m) is
    // the number of tournament games among the whole list's first
    // offset + m + 1, less m; past the list's end counts as <= 0. Since
    // ahead(m + j) >= ahead(m) - j, no m below m + ahead(m) will do: a few
    // such steps find m when tournament games are sparse, and bisection
    // finishes when they are not.
    let ahead = |m: i64| async move {
        Ok::<i64, StoreError>(
            match store
                .games_at(filter, PageAt::Newest(offset.saturating_add(m)), 1)
                .await?
                .first()
            {
                Some(g) => store.marked_count(filter, Some(at(g))).await? - m,
                None => 0,
            },
        )
    };
    let (mut low, mut high) = (0, marked);
    for _ in 0..4 {
        let a = ahead(low).await?;
        if a <= 0 {
            high = low;
            break;
        }
        low = (low + a).min(marked);
    }
    while low < high {
        let mid = low + (high - low) / 2;
        if ahead(mid).await? <= 0 {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    // Read on from there, leaving out the tournament games; each read asks
    // for what is missing and as many more, in case tournament games come
    // next.
    let mut games = Vec::with_capacity(limit.min(1024) as usize);
    let mut from = offset.saturating_add(low);
    while (games.len() as i64) < limit {
        let want = limit - games.len() as i64;
        let ask = want.saturating_add(want.min(marked));
        let batch = store.games_at(filter, PageAt::Newest(from), ask).await?;
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
    Ok(games)
}

/// A listed game's place in the list's order.
fn at(g: &GameSummary) -> (&str, GameId) {
    (g.finished.as_deref().unwrap_or(""), g.id)
}
