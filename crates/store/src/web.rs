//! What the website reads: [`WebReads`], a supertrait of [`crate::Store`],
//! and the rows it returns. Every query reads precomputed statistics
//! (`bot_stats`, `pair_stats`, `game_totals`, kept by `finish_game`) or walks
//! an index for one page of games; none scans all games.

use async_trait::async_trait;
use serde::Serialize;

use crate::{BotId, GameEnd, GameId, StoreError};

/// A bot as the website names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct WebBot {
    /// Id.
    pub id: BotId,
    /// Unique name.
    pub name: String,
    /// The game it was registered for.
    pub game: String,
    /// `rest`, `house`, `push` or `pull`.
    pub kind: String,
}

/// A bot's rating and counts in one game.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct BotStats {
    /// The bot.
    pub bot: BotId,
    /// Its name.
    pub name: String,
    /// How it connects.
    pub kind: String,
    /// The game kind.
    pub game: String,
    /// Weng-Lin mean.
    pub mu: f64,
    /// Weng-Lin standard deviation.
    pub sigma: f64,
    /// `mu - 3 sigma`, the order of the leaderboard.
    pub conservative: f64,
    /// Finished games.
    pub games: i64,
    /// Sole first places.
    pub wins: i64,
    /// Games not in first place.
    pub losses: i64,
    /// Shared first places.
    pub ties: i64,
    /// Games it forfeited (also counted as losses).
    pub forfeits: i64,
    /// When it last finished a game (RFC 3339).
    pub last_played: Option<String>,
}

/// Head-to-head counts of `bot` against `opponent` in one game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct PairStats {
    /// The bot.
    pub bot: BotId,
    /// Its name.
    pub bot_name: String,
    /// The opponent.
    pub opponent: BotId,
    /// The opponent's name.
    pub opponent_name: String,
    /// The game kind.
    pub game: String,
    /// Games both played.
    pub games: i64,
    /// Games `bot` ranked better.
    pub wins: i64,
    /// Games `bot` ranked worse.
    pub losses: i64,
    /// Games they ranked equal.
    pub ties: i64,
}

/// One point of a rating history.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, sqlx::FromRow)]
pub struct HistoryPoint {
    /// The game after which the rating holds.
    pub game_id: GameId,
    /// Mean.
    pub mu: f64,
    /// Standard deviation.
    pub sigma: f64,
}

/// A seat of a listed game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct SeatSummary {
    /// Seat index from 0.
    pub seat: i64,
    /// The bot.
    pub bot: BotId,
    /// Its name.
    pub name: String,
    /// Its score, if any.
    pub score: Option<i64>,
    /// Its rank (1 = best), once finished.
    pub rank: Option<i64>,
    /// Whether it forfeited.
    pub forfeited: bool,
}

/// A game in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct GameSummary {
    /// Id.
    pub id: GameId,
    /// Game kind.
    pub game: String,
    /// `running`, `finished` or `aborted`.
    pub status: String,
    /// Start (RFC 3339).
    pub started: String,
    /// End (RFC 3339).
    pub finished: Option<String>,
    /// Seats in order.
    #[sqlx(skip)]
    pub seats: Vec<SeatSummary>,
}

/// Which games a list shows (finished games only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameFilter {
    /// Only this game kind.
    pub game: Option<String>,
    /// Only games this bot played.
    pub bot: Option<BotId>,
}

/// Where a page of finished games lies in their finish order (newest
/// first). Page numbers near either end and the `older` and `newer` links
/// each walk an index from a near point: a page number from the nearer
/// end, starting at the hour its games finished in when it skips a
/// thousand games or more (`finish_hours`), so that it skips no more than
/// an hour's games; a page reached by its links skips nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAt {
    /// After the newest `n` games (page numbers in the newer half).
    Newest(i64),
    /// Before the oldest `n` games (page numbers in the older half: the
    /// last page is `Oldest(0)` with a limit of the games it holds).
    Oldest(i64),
    /// The games finished before this one.
    Before(GameId),
    /// The games finished after this one (the page nearest it).
    After(GameId),
}

/// Finished games in one minute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct MinuteCount {
    /// The minute, `YYYY-MM-DDTHH:MM`.
    pub minute: String,
    /// Game kind.
    pub game: String,
    /// Games finished in it.
    pub games: i64,
}

/// What a page may read of a listed game's record ([`WebReads::game_facts`]).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct GameFactsRow {
    /// The game.
    pub id: GameId,
    /// Its status.
    pub status: String,
    /// Its deal is still to be played in a tournament (duplicate deals,
    /// issue 15): nothing of it may be shown yet.
    pub secret: bool,
    /// [`crate::facts::GameFacts`] as JSON, when stored with the record.
    pub facts: Option<String>,
}

/// A finished game to import in bulk (benchmarks, demos, tests).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportGame {
    /// Game kind.
    pub game: String,
    /// Bots by seat.
    pub bots: Vec<BotId>,
    /// The deal's seed.
    pub seed: i64,
    /// Start (RFC 3339).
    pub started: String,
    /// The result and record.
    pub end: GameEnd,
    /// The id of the tournament the game was played in, if any (it must
    /// exist): the game and its seats carry it, it counts among the
    /// tournament games, and it is not rated, as a tournament game that
    /// finished is not. It is the tournament's planned game too, done, in
    /// round 1, at the next table (an import knows no rounds; the
    /// tournament's current round becomes at least 1), with its ranks and
    /// its forfeiting seat as the seat that faulted, so that the
    /// tournament's standings, progress and crosstable count it as a game
    /// played in it. (An `i64`, as a tournament's id is: this file is below
    /// the tournaments' module.)
    pub tournament: Option<i64>,
}

impl ImportGame {
    /// The planned game's bots, ranks, faulted seats and scores, as the
    /// tournament's games are written (comma-separated).
    pub(crate) fn plan_texts(&self) -> [String; 4] {
        let join = |v: Vec<String>| v.join(",");
        let e = &self.end;
        [
            join(self.bots.iter().map(ToString::to_string).collect()),
            join(e.ranks.iter().map(ToString::to_string).collect()),
            join(
                (self.bots.iter().enumerate())
                    .filter(|(_, b)| e.forfeited_by == Some(**b))
                    .map(|(seat, _)| seat.to_string())
                    .collect(),
            ),
            // As `SCORES_OF_GAME` reads them from the seats: one per bot,
            // empty where it has none.
            join(
                (0..self.bots.len())
                    .map(|seat| e.scores.get(seat).copied().flatten())
                    .map(|s| s.map(|s| s.to_string()).unwrap_or_default())
                    .collect(),
            ),
        ]
    }
}

/// A list's length and the tournament games in it (`finish_totals`,
/// summed over game kinds and writers; 0 for a list with none): `$1` the
/// bot (0 for every bot's list), `$2` the game kind or null for every kind.
pub(crate) const TOTALS_SQL: &str =
    "SELECT CAST(COALESCE(SUM(games), 0) AS BIGINT), CAST(COALESCE(SUM(marked), 0) AS BIGINT)
     FROM finish_totals WHERE bot = $1 AND (CAST($2 AS TEXT) IS NULL OR game = $2)";

/// What [`crate::Store::recount_lists`] counted in the list of every game,
/// and mended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCounts {
    /// Finished games.
    pub games: i64,
    /// Of them, tournament games.
    pub marked: i64,
    /// Seats given their game's tournament, which they did not carry.
    pub mended_seats: u64,
    /// Done tournament games given their game's scores, which they did
    /// not keep (finished by an instance older than the migration that
    /// keeps them).
    pub mended_scores: u64,
}

/// Reads for the website.
#[async_trait]
pub trait WebReads: Send + Sync {
    /// A bot by name.
    async fn web_bot(&self, name: &str) -> Result<Option<WebBot>, StoreError>;
    /// The name of a bot's owner (push and pull bots have one).
    async fn owner_name(&self, bot: BotId) -> Result<Option<String>, StoreError>;
    /// Every bot with its ratings, by game then conservative rating.
    async fn all_stats(&self) -> Result<Vec<BotStats>, StoreError>;
    /// The rated bots of one game, best conservative rating first.
    async fn leaderboard(&self, game: &str) -> Result<Vec<BotStats>, StoreError>;
    /// A bot's ratings and counts (one row per game it played).
    async fn bot_stats(&self, bot: BotId) -> Result<Vec<BotStats>, StoreError>;
    /// A bot's last `limit` ratings in `game`, oldest first.
    async fn rating_history(
        &self,
        bot: BotId,
        game: &str,
        limit: i64,
    ) -> Result<Vec<HistoryPoint>, StoreError>;
    /// The last `limit` ratings in `game` of every bot rated in it (one
    /// query where the backend can; oldest first per bot), for the
    /// leaderboard's trend lines.
    async fn rating_histories(
        &self,
        game: &str,
        limit: i64,
    ) -> Result<Vec<(BotId, Vec<HistoryPoint>)>, StoreError> {
        histories_one_by_one(self, game, limit).await
    }
    /// A bot's opponents, most frequent first.
    async fn opponents(&self, bot: BotId, limit: i64) -> Result<Vec<PairStats>, StoreError>;
    /// `a` against `b`, one row per game kind.
    async fn pair(&self, a: BotId, b: BotId) -> Result<Vec<PairStats>, StoreError>;
    /// Every pair of one game kind (the head-to-head matrix).
    async fn pairs(&self, game: &str) -> Result<Vec<PairStats>, StoreError>;
    /// Finished games, newest first, after the newest `offset`.
    async fn games_page(
        &self,
        filter: &GameFilter,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        self.games_at(filter, PageAt::Newest(offset), limit).await
    }
    /// Up to `limit` finished games at `at`, newest first. A game named
    /// by `Before` or `After` that is not finished (or not there) gives an
    /// empty page.
    async fn games_at(
        &self,
        filter: &GameFilter,
        at: PageAt,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError>;
    /// `bot`'s ratings after games `ids` (those it was rated in), oldest
    /// first: the points a versus page draws, without the rest of its
    /// history.
    async fn rating_points(
        &self,
        bot: BotId,
        ids: &[GameId],
    ) -> Result<Vec<HistoryPoint>, StoreError>;
    /// How many finished games `filter`'s list holds, unrated games
    /// included (from the counters of `finish_totals`).
    async fn count_finished(&self, filter: &GameFilter) -> Result<i64, StoreError>;
    /// The last `limit` finished games both bots played, newest first.
    async fn versus_games(
        &self,
        a: BotId,
        b: BotId,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError>;
    /// Games in progress, newest first.
    async fn running_games(&self, limit: i64) -> Result<Vec<GameSummary>, StoreError>;
    /// One game with its seats, any status.
    async fn game_summary(&self, id: GameId) -> Result<Option<GameSummary>, StoreError>;
    /// Finished games per minute and game kind since `since` (RFC 3339).
    async fn activity(&self, since: &str) -> Result<Vec<MinuteCount>, StoreError>;
    /// Bots in a game now or that finished one since `since` (RFC 3339).
    async fn online_bots(&self, since: &str) -> Result<Vec<(WebBot, bool)>, StoreError>;
    /// The facts of games `ids` (those that exist, in any order): what a
    /// bot's page and a versus page read instead of whole records.
    async fn game_facts(&self, ids: &[GameId]) -> Result<Vec<GameFactsRow>, StoreError>;
}

/// [`WebReads::rating_histories`] a bot at a time: the leaderboard, then
/// each bot's [`WebReads::rating_history`].
pub(crate) async fn histories_one_by_one<W: WebReads + ?Sized>(
    reads: &W,
    game: &str,
    limit: i64,
) -> Result<Vec<(BotId, Vec<HistoryPoint>)>, StoreError> {
    let mut out = Vec::new();
    for s in reads.leaderboard(game).await? {
        out.push((s.bot, reads.rating_history(s.bot, game, limit).await?));
    }
    Ok(out)
}
