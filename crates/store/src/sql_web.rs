//! [`WebReads`] once for both SQL backends: the reads whose SQL is the same
//! on SQLite and PostgreSQL (`$n` placeholders, which sqlx binds by number
//! on SQLite too) and the rows' mapping (`FromRow`). What each backend
//! reads its own way, to walk its own indexes, is its [`SqlWeb`] half: a
//! page of finished games, the seats of listed games, the activity per
//! minute, the leaderboard's trend lines.

use std::collections::HashMap;

use async_trait::async_trait;
use sqlx::{Database, Decode, Encode, Executor, FromRow, IntoArguments, Type};

use crate::sql_store::SqlStore;
use crate::web::{
    BotStats, GameFactsRow, GameFilter, GameSummary, HistoryPoint, MinuteCount, PageAt, PairStats,
    SeatSummary, WebBot, WebReads,
};
use crate::{BotId, GameId, StoreError};

/// A SQL store's website reads that differ by backend.
#[async_trait]
pub(crate) trait SqlWeb: SqlStore {
    /// The seats of games `ids` ([`SEATS`] with the backend's test of the
    /// id list), by game then seat.
    async fn seats_of(&self, ids: &[GameId]) -> Result<Vec<GameSeat>, StoreError>;

    /// One page of [`WebReads::games_at`], without the seats, in the
    /// order of `seek`'s walk.
    async fn finished_page(
        &self,
        filter: &GameFilter,
        seek: &Seek,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError>;

    /// [`WebReads::rating_points`] (`bot`'s history rows of games `ids`,
    /// by game).
    async fn points_of(&self, bot: BotId, ids: &[GameId]) -> Result<Vec<HistoryPoint>, StoreError>;

    /// [`WebReads::game_facts`] ([`FACTS`] with the backend's test of the
    /// id list).
    async fn facts_of(&self, ids: &[GameId]) -> Result<Vec<GameFactsRow>, StoreError>;

    /// [`WebReads::versus_games`], without the seats.
    async fn shared_games(
        &self,
        a: BotId,
        b: BotId,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError>;

    /// [`WebReads::activity`].
    async fn minutes(&self, since: &str) -> Result<Vec<MinuteCount>, StoreError>;

    /// [`WebReads::rating_histories`].
    async fn histories(
        &self,
        game: &str,
        limit: i64,
    ) -> Result<Vec<(BotId, Vec<HistoryPoint>)>, StoreError>;
}

/// How [`SqlWeb::finished_page`] walks the finish order (finish time, then
/// id) for a [`PageAt`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seek {
    /// Oldest first (the caller turns the page round).
    pub asc: bool,
    /// Only the games beyond this finish time and id, in the walk's
    /// direction.
    pub from: Option<(String, GameId)>,
    /// Games skipped first.
    pub skip: i64,
}

impl Seek {
    /// `ORDER BY` the finish time `f` and id `id` in the walk's direction.
    pub fn order(&self, f: &str, id: &str) -> String {
        let dir = if self.asc { "ASC" } else { "DESC" };
        format!("{f} {dir}, {id} {dir}")
    }

    /// The test of [`Seek::from`] (` AND …`, or nothing), with the finish
    /// time bound as placeholder `{mark}{n}` and the id as `{mark}{n+1}`:
    /// a range of the index on the time, then the id where times tie.
    pub fn beyond(&self, f: &str, id: &str, mark: char, n: usize) -> String {
        if self.from.is_none() {
            return String::new();
        }
        let (upto, past) = if self.asc { (">=", ">") } else { ("<=", "<") };
        let m = n + 1;
        format!(" AND {f} {upto} {mark}{n} AND ({f} {past} {mark}{n} OR {id} {past} {mark}{m})")
    }
}

/// From how many games skipped a page starts from the hour it falls in
/// (`finish_hours`) instead of skipping them all in an index: skipping a
/// thousand index entries costs about a tenth of a millisecond.
const HOURS_FROM: i64 = 1_000;

/// A list's finished games per hour (`finish_hours`, summed over game
/// kinds and writers), in the walk's order: `$1` the bot (0 for every
/// bot's list), `$2` the game kind or null for every kind. With `marked`,
/// a third column counts the tournament games among them (migration 0018
/// on SQLite, 0020 on PostgreSQL).
pub(crate) fn hours_sql(asc: bool, marked: bool) -> String {
    let dir = if asc { "ASC" } else { "DESC" };
    let marked = if marked {
        ", CAST(SUM(marked) AS BIGINT)"
    } else {
        ""
    };
    format!(
        "SELECT hour, CAST(SUM(games) AS BIGINT){marked} FROM finish_hours
         WHERE bot = $1 AND (CAST($2 AS TEXT) IS NULL OR game = $2)
         GROUP BY hour HAVING SUM(games) <> 0 ORDER BY hour {dir}"
    )
}

/// Whether `hour` is an hour as the store writes finish times
/// (`YYYY-MM-DDTHH`, RFC 3339 in UTC): only then do its games lie between
/// `hour` and `hour;` in the finish order.
pub(crate) fn is_hour(hour: &str) -> bool {
    let b = hour.as_bytes();
    b.len() == 13
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            _ => c.is_ascii_digit(),
        })
}

/// The walk that skips `skip` games of a list whose games per hour
/// (`YYYY-MM-DDTHH`, in the walk's order) are `hours`: from the edge of
/// the hour the skip ends in, skipping only that hour's games before it.
/// `None` when the list holds no more than `skip` games. A list with a
/// finish time of another shape (written by hand or imported) is walked
/// from its end, skipping every game.
pub(crate) fn seek_in_hours(asc: bool, skip: i64, hours: &[(String, i64)]) -> Option<Seek> {
    if !hours.iter().all(|(h, _)| is_hour(h)) {
        return Some(Seek {
            asc,
            from: None,
            skip,
        });
    }
    let mut passed = 0;
    for (hour, games) in hours {
        let games = *games;
        if passed + games > skip {
            // A finish time in hour `h` sorts after `h` itself and before
            // `h;` (';' follows ':', the character after the hour). Game
            // ids are positive, so an id of 0 makes the start key's range
            // a plain bound on the finish time.
            let edge = if asc {
                hour.clone()
            } else {
                format!("{hour};")
            };
            return Some(Seek {
                asc,
                from: Some((edge, 0)),
                skip: skip - passed,
            });
        }
        passed += games;
    }
    None
}

/// Whether a walk that skips `skip` games starts from the list's finish
/// hours ([`hours_sql`]): without them it skips every game in its index.
pub(crate) fn skips_by_hours(skip: i64) -> bool {
    skip >= HOURS_FROM
}

/// The walk that skips `skip` games (at least none), newest first or
/// oldest first (`asc`), given the list's `hours` in that order when
/// [`skips_by_hours`] (otherwise they are not looked at). `None` when the
/// list holds no more than `skip` games.
pub(crate) fn seek_skipping(asc: bool, skip: i64, hours: &[(String, i64)]) -> Option<Seek> {
    let skip = skip.max(0);
    if skips_by_hours(skip) {
        seek_in_hours(asc, skip, hours)
    } else {
        Some(Seek {
            asc,
            from: None,
            skip,
        })
    }
}

/// The arguments of a [`SqlWeb::finished_page`] query, numbered as both
/// backends' queries number them: the limit (1) and the skip (2), the
/// list's bot when it has one, its `scope` texts (the game), then the
/// start key of `seek` (its finish time and id).
pub(crate) fn page_args<'q, DB: Database>(
    limit: i64,
    filter: &GameFilter,
    scope: Vec<Option<String>>,
    seek: &Seek,
) -> Result<<DB as Database>::Arguments<'q>, StoreError>
where
    i64: Encode<'q, DB> + Type<DB>,
    String: Encode<'q, DB> + Type<DB>,
    Option<String>: Encode<'q, DB> + Type<DB>,
{
    use sqlx::Arguments as _;
    let mut args = <DB as Database>::Arguments::<'q>::default();
    let bad = |e: sqlx::error::BoxDynError| StoreError::from(sqlx::Error::Encode(e));
    args.add(limit).map_err(bad)?;
    args.add(seek.skip).map_err(bad)?;
    if let Some(bot) = filter.bot {
        args.add(bot).map_err(bad)?;
    }
    for text in scope {
        args.add(text).map_err(bad)?;
    }
    if let Some((finished, id)) = &seek.from {
        args.add(finished.clone()).map_err(bad)?;
        args.add(*id).map_err(bad)?;
    }
    Ok(args)
}

/// A seat of a listed game.
#[derive(Debug, FromRow)]
pub(crate) struct GameSeat {
    /// The game.
    game_id: GameId,
    /// The seat.
    #[sqlx(flatten)]
    seat: SeatSummary,
}

/// The seats of listed games (rows of [`GameSeat`]), followed by the
/// backend's test of `s.game_id` and [`SEATS_ORDER`].
pub(crate) const SEATS: &str =
    "SELECT s.game_id, s.seat, s.bot, b.name, s.score, s.rank, s.forfeited
     FROM game_seats s JOIN bots b ON b.id = s.bot WHERE s.game_id";

/// The order of [`SEATS`].
pub(crate) const SEATS_ORDER: &str = "ORDER BY s.game_id, s.seat";

/// Listed games' facts (rows of [`GameFactsRow`]), followed by the
/// backend's test of `g.id`. `secret` is the test of
/// `TournamentStore::deal_pending`: a duplicate deal still to be played.
pub(crate) const FACTS: &str = "SELECT g.id, g.status, g.facts,
        EXISTS (SELECT 1 FROM tournament_games t
                WHERE g.tournament_id IS NOT NULL AND t.tournament_id = g.tournament_id
                  AND t.seed = g.seed AND t.status IN ('pending', 'running')) AS secret
     FROM games g WHERE g.id";

/// The columns of a listed game (a [`GameSummary`] without its seats).
pub(crate) const GAMES: &str = "SELECT id, game, status, started, finished FROM games";

const STATS: &str = "SELECT s.bot, b.name, b.kind, s.game, s.mu, s.sigma, s.conservative, s.games,
    s.wins, s.losses, s.ties, s.forfeits, s.last_played FROM bot_stats s JOIN bots b ON b.id = s.bot";

const PAIRS: &str = "SELECT p.bot, a.name AS bot_name, p.opponent, o.name AS opponent_name, p.game,
    p.games, p.wins, p.losses, p.ties FROM pair_stats p JOIN bots a ON a.id = p.bot
    JOIN bots o ON o.id = p.opponent";

/// Adds their seats to `games` (listed without), in one query.
pub(crate) async fn with_seats<S: SqlWeb + ?Sized>(
    store: &S,
    mut games: Vec<GameSummary>,
) -> Result<Vec<GameSummary>, StoreError> {
    if games.is_empty() {
        return Ok(games);
    }
    let ids: Vec<GameId> = games.iter().map(|g| g.id).collect();
    let mut by_game: HashMap<GameId, Vec<SeatSummary>> = HashMap::new();
    for s in store.seats_of(&ids).await? {
        by_game.entry(s.game_id).or_default().push(s.seat);
    }
    for g in &mut games {
        g.seats = by_game.remove(&g.id).unwrap_or_default();
    }
    Ok(games)
}

#[async_trait]
impl<S> WebReads for S
where
    S: SqlWeb,
    for<'c> &'c mut <S::Db as Database>::Connection: Executor<'c, Database = S::Db>,
    for<'q> <S::Db as Database>::Arguments<'q>: IntoArguments<'q, S::Db>,
    for<'q> i64: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> &'q str: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> Option<&'q str>: Encode<'q, S::Db> + Type<S::Db>,
    for<'r> i64: Decode<'r, S::Db>,
    for<'r> (i64,): FromRow<'r, <S::Db as Database>::Row>,
    for<'r> (Option<i64>,): FromRow<'r, <S::Db as Database>::Row>,
    for<'r> (String,): FromRow<'r, <S::Db as Database>::Row>,
    for<'r> (String, i64): FromRow<'r, <S::Db as Database>::Row>,
    for<'r> WebBot: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> BotStats: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> PairStats: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> HistoryPoint: FromRow<'r, <S::Db as Database>::Row>,
    for<'r> GameSummary: FromRow<'r, <S::Db as Database>::Row>,
{
    async fn web_bot(&self, name: &str) -> Result<Option<WebBot>, StoreError> {
        Ok(
            sqlx::query_as("SELECT id, name, game, kind FROM bots WHERE name = $1")
                .bind(name)
                .fetch_optional(self.reads())
                .await?,
        )
    }

    async fn owner_name(&self, bot: BotId) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT o.name FROM bots b JOIN owners o ON o.id = b.owner WHERE b.id = $1",
        )
        .bind(bot)
        .fetch_optional(self.reads())
        .await?)
    }

    async fn all_stats(&self) -> Result<Vec<BotStats>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "{STATS} ORDER BY s.game, s.conservative DESC, b.name"
        ))
        .fetch_all(self.reads())
        .await?)
    }

    async fn leaderboard(&self, game: &str) -> Result<Vec<BotStats>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "{STATS} WHERE s.game = $1 ORDER BY s.conservative DESC, b.name"
        ))
        .bind(game)
        .fetch_all(self.reads())
        .await?)
    }

    async fn bot_stats(&self, bot: BotId) -> Result<Vec<BotStats>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "{STATS} WHERE s.bot = $1 ORDER BY s.games DESC, s.game"
        ))
        .bind(bot)
        .fetch_all(self.reads())
        .await?)
    }

    async fn rating_history(
        &self,
        bot: BotId,
        game: &str,
        limit: i64,
    ) -> Result<Vec<HistoryPoint>, StoreError> {
        let mut points: Vec<HistoryPoint> = sqlx::query_as(
            "SELECT h.game_id, h.mu, h.sigma FROM rating_history h JOIN games g ON g.id = h.game_id
             WHERE h.bot = $1 AND g.game = $2 ORDER BY h.game_id DESC LIMIT $3",
        )
        .bind(bot)
        .bind(game)
        .bind(limit)
        .fetch_all(self.reads())
        .await?;
        points.reverse();
        Ok(points)
    }

    async fn rating_histories(
        &self,
        game: &str,
        limit: i64,
    ) -> Result<Vec<(BotId, Vec<HistoryPoint>)>, StoreError> {
        self.histories(game, limit).await
    }

    async fn opponents(&self, bot: BotId, limit: i64) -> Result<Vec<PairStats>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "{PAIRS} WHERE p.bot = $1 ORDER BY p.games DESC, o.name LIMIT $2"
        ))
        .bind(bot)
        .bind(limit)
        .fetch_all(self.reads())
        .await?)
    }

    async fn pair(&self, a: BotId, b: BotId) -> Result<Vec<PairStats>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "{PAIRS} WHERE p.bot = $1 AND p.opponent = $2 ORDER BY p.game"
        ))
        .bind(a)
        .bind(b)
        .fetch_all(self.reads())
        .await?)
    }

    async fn pairs(&self, game: &str) -> Result<Vec<PairStats>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "{PAIRS} WHERE p.game = $1 ORDER BY a.name, o.name"
        ))
        .bind(game)
        .fetch_all(self.reads())
        .await?)
    }

    async fn games_at(
        &self,
        filter: &GameFilter,
        at: PageAt,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        let seek = match at {
            PageAt::Newest(skip) | PageAt::Oldest(skip) => {
                let asc = matches!(at, PageAt::Oldest(_));
                let hours: Vec<(String, i64)> = if skips_by_hours(skip) {
                    sqlx::query_as(&hours_sql(asc, false))
                        .bind(filter.bot.unwrap_or(0))
                        .bind(filter.game.as_deref())
                        .fetch_all(self.reads())
                        .await?
                } else {
                    Vec::new()
                };
                match seek_skipping(asc, skip, &hours) {
                    Some(seek) => seek,
                    None => return Ok(Vec::new()),
                }
            }
            PageAt::Before(id) | PageAt::After(id) => {
                let finished: Option<(String,)> = sqlx::query_as(
                    "SELECT finished FROM games
                     WHERE id = $1 AND status = 'finished' AND finished IS NOT NULL",
                )
                .bind(id)
                .fetch_optional(self.reads())
                .await?;
                let Some((finished,)) = finished else {
                    return Ok(Vec::new());
                };
                Seek {
                    asc: matches!(at, PageAt::After(_)),
                    from: Some((finished, id)),
                    skip: 0,
                }
            }
        };
        let mut games = self.finished_page(filter, &seek, limit.max(0)).await?;
        if seek.asc {
            games.reverse();
        }
        with_seats(self, games).await
    }

    async fn rating_points(
        &self,
        bot: BotId,
        ids: &[GameId],
    ) -> Result<Vec<HistoryPoint>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.points_of(bot, ids).await
    }

    async fn count_finished(&self, filter: &GameFilter) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(crate::web::TOTALS_SQL)
            .bind(filter.bot.unwrap_or(0))
            .bind(filter.game.as_deref())
            .fetch_one(self.reads())
            .await?)
    }

    async fn versus_games(
        &self,
        a: BotId,
        b: BotId,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        let games = self.shared_games(a, b, limit).await?;
        with_seats(self, games).await
    }

    async fn running_games(&self, limit: i64) -> Result<Vec<GameSummary>, StoreError> {
        let games = sqlx::query_as(&format!(
            "{GAMES} WHERE status = 'running' ORDER BY id DESC LIMIT $1"
        ))
        .bind(limit)
        .fetch_all(self.reads())
        .await?;
        with_seats(self, games).await
    }

    async fn game_summary(&self, id: GameId) -> Result<Option<GameSummary>, StoreError> {
        let games = sqlx::query_as(&format!("{GAMES} WHERE id = $1"))
            .bind(id)
            .fetch_all(self.reads())
            .await?;
        Ok(with_seats(self, games).await?.into_iter().next())
    }

    async fn activity(&self, since: &str) -> Result<Vec<MinuteCount>, StoreError> {
        self.minutes(since).await
    }

    async fn game_facts(&self, ids: &[GameId]) -> Result<Vec<GameFactsRow>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.facts_of(ids).await
    }

    async fn online_bots(&self, since: &str) -> Result<Vec<(WebBot, bool)>, StoreError> {
        let playing: Vec<BotId> = sqlx::query_scalar(
            "SELECT s.bot FROM games g JOIN game_seats s ON s.game_id = g.id
             WHERE g.status = 'running'",
        )
        .fetch_all(self.reads())
        .await?;
        let bots: Vec<WebBot> = sqlx::query_as(
            "SELECT id, name, game, kind FROM bots WHERE id IN (
                SELECT s.bot FROM games g JOIN game_seats s ON s.game_id = g.id
                WHERE g.status = 'running'
                UNION SELECT bot FROM bot_stats WHERE last_played >= $1)
             ORDER BY game, name",
        )
        .bind(since)
        .fetch_all(self.reads())
        .await?;
        Ok(bots
            .into_iter()
            .map(|bot| {
                let now = playing.contains(&bot.id);
                (bot, now)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H1: &str = "2026-01-01T01";
    const H2: &str = "2026-01-01T02";
    const H3: &str = "2026-01-01T03";

    fn hours() -> Vec<(String, i64)> {
        vec![(H3.into(), 10), (H2.into(), 5), (H1.into(), 20)]
    }

    fn edge(h: &str) -> Option<(String, i64)> {
        Some((format!("{h};"), 0))
    }

    #[test]
    fn a_skip_starts_at_the_edge_of_its_hour() {
        let at = |skip| seek_in_hours(false, skip, &hours()).map(|s| (s.from, s.skip));
        assert_eq!(at(0), Some((edge(H3), 0)));
        assert_eq!(at(9), Some((edge(H3), 9)));
        assert_eq!(at(10), Some((edge(H2), 0)));
        assert_eq!(at(16), Some((edge(H1), 1)));
        assert_eq!(at(34), Some((edge(H1), 19)));
        assert_eq!(at(35), None);
        let up = seek_in_hours(true, 12, &hours()).unwrap();
        assert_eq!((up.asc, up.from, up.skip), (true, Some((H2.into(), 0)), 2));
    }

    #[test]
    fn finish_times_of_another_shape_are_walked_from_the_end() {
        for odd in ["", "t1", "2026-01-01 01", "2026-01-01T1", "2026-01-01T01:"] {
            let mut h = hours();
            h.push((odd.into(), 3));
            let s = seek_in_hours(false, 12, &h).unwrap();
            assert_eq!((s.from, s.skip), (None, 12), "{odd:?}");
        }
        assert!(is_hour("2026-12-03T23"));
    }

    #[test]
    fn short_skips_walk_without_the_hours() {
        let s = seek_skipping(false, HOURS_FROM - 1, &[]).unwrap();
        assert_eq!((s.from, s.skip), (None, HOURS_FROM - 1));
        assert_eq!(seek_skipping(true, -5, &[]).unwrap().skip, 0);
        // From HOURS_FROM on, the hours decide: none means an empty list.
        assert_eq!(seek_skipping(false, HOURS_FROM, &[]), None);
        let many = vec![(H2.to_string(), 2 * HOURS_FROM), (H1.to_string(), 1)];
        let s = seek_skipping(false, HOURS_FROM + 1, &many).unwrap();
        assert_eq!((s.from, s.skip), (edge(H2), HOURS_FROM + 1));
    }
}
