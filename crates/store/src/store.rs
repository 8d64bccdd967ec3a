//! [`Store`], the storage behind the server: what handlers call, whichever
//! database is behind it (both SQL backends implement it once, in
//! `sql_store`).

use async_trait::async_trait;

use crate::admin::AdminStore;

use crate::hosted::{BotVersion, MatchStderr, NewVersion};
use crate::postgres::cluster::Cluster;
use crate::web::{ImportGame, ListCounts, WebReads};
use crate::{
    BotId, BotInfo, BotRow, GameEnd, GameId, GameRow, LeaseStore, NewBot, OwnerId, OwnerRow,
    PeopleRating, PersonGame, PersonSeat, StoreError, TournamentStore,
};

/// Storage behind the server (the website's reads are in [`WebReads`]).
#[async_trait]
pub trait Store: WebReads + Send + Sync + 'static {
    /// Registers a bot; fails with [`StoreError::NameTaken`] if the name exists.
    async fn create_bot(
        &self,
        name: &str,
        password_hash: &str,
        house: bool,
    ) -> Result<BotId, StoreError>;
    /// Finds a bot by name.
    async fn bot_by_name(&self, name: &str) -> Result<Option<BotRow>, StoreError>;
    /// Records a game that has just been dealt, with its bots by seat (at
    /// least two); returns its id.
    async fn start_game(
        &self,
        game: &str,
        bots: &[BotId],
        seed: i64,
        started: &str,
    ) -> Result<GameId, StoreError>;
    /// Stores a finished game and its record, durably, before returning
    /// (with its seats, ratings and statistics, in one transaction shared
    /// with the other games that finish at the same time: see [`crate::group`]).
    async fn finish_game(&self, id: GameId, end: &GameEnd) -> Result<(), StoreError>;
    /// Marks a running game aborted.
    async fn abort_game(&self, id: GameId, reason: &str, at: &str) -> Result<(), StoreError>;
    /// Marks every running game aborted (after a restart); returns how many.
    /// On PostgreSQL, only those no registered process plays (the games of
    /// a registration, expired or not, are its reaper's).
    async fn abort_running(&self, reason: &str, at: &str) -> Result<u64, StoreError>;
    /// A game by id.
    async fn game(&self, id: GameId) -> Result<Option<GameRow>, StoreError>;
    /// Number of games by status.
    async fn count_games(&self, status: &str) -> Result<i64, StoreError>;
    /// The bots of a game, by seat.
    async fn game_bots(&self, id: GameId) -> Result<Vec<BotId>, StoreError>;

    /// Registers (or finds) the house bot `name` of `game`.
    async fn ensure_house_bot(&self, name: &str, game: &str) -> Result<BotId, StoreError>;
    /// Creates an owner; fails with [`StoreError::NameTaken`] if the name exists.
    async fn create_owner(&self, name: &str, password_hash: &str) -> Result<OwnerId, StoreError>;
    /// Finds an owner by name.
    async fn owner_by_name(&self, name: &str) -> Result<Option<OwnerRow>, StoreError>;
    /// Registers a push or pull bot; fails with [`StoreError::NameTaken`] if
    /// a bot of that name exists.
    async fn create_remote_bot(&self, bot: &NewBot) -> Result<BotId, StoreError>;
    /// Every push, pull and hosted bot.
    async fn remote_bots(&self) -> Result<Vec<BotInfo>, StoreError>;
    /// A bot by id.
    async fn bot_info(&self, id: BotId) -> Result<Option<BotInfo>, StoreError>;
    /// The pull bot whose token hashes to `token_hash`.
    async fn bot_by_token(&self, token_hash: &str) -> Result<Option<BotInfo>, StoreError>;
    /// Records a bot's strikes and pause.
    async fn set_bot_health(
        &self,
        id: BotId,
        strikes: i64,
        paused_until: Option<i64>,
        pause_reason: Option<&str>,
    ) -> Result<(), StoreError>;
    /// Switches a bot on or off; switching it on also clears its strikes
    /// and pause (its owner says it is fixed).
    async fn set_bot_enabled(&self, id: BotId, enabled: bool) -> Result<(), StoreError>;
    /// Replaces a pull bot's token hash.
    async fn set_bot_token(&self, id: BotId, token_hash: &str) -> Result<(), StoreError>;

    /// Stores finished games in one transaction, rating each in order, as
    /// `start_game` followed by `finish_game` would (demo data, benchmarks);
    /// games with fewer than two bots are skipped. Returns the ids stored.
    /// Takes the games (SQLite moves them to a thread for blocking work).
    async fn import_games(&self, games: Vec<ImportGame>) -> Result<Vec<GameId>, StoreError>;

    /// Counts every games list's finished games, and the tournament games
    /// among them, per hour of their finish and in all again, from the
    /// games (`finish_hours`, `finish_totals`), which the statements that
    /// finish and import games keep up to date: after games were marked or
    /// changed by hand, or finished by an instance of a version before the
    /// counts (docs/deploy.md). First gives every seat its game's
    /// tournament where it does not carry it (a game started by an
    /// instance of a version before the seats carried it). Returns what the
    /// list of every game holds, and the seats mended.
    async fn recount_lists(&self) -> Result<ListCounts, StoreError>;

    /// Tournaments (issue 15): their entries, planned games and results.
    fn tournaments(&self) -> &dyn TournamentStore;
    /// Admin (issue 49): bans, rating resets, seasons, the audit log.
    fn admin(&self) -> &dyn AdminStore;
    // Hosted bots (issue 12).
    /// Records a new version of a hosted bot (numbered after its newest)
    /// and its file, in `validating` state.
    async fn add_bot_version(&self, v: &NewVersion) -> Result<BotVersion, StoreError>;
    /// Sets a version's state, with why it failed and its stderr tail.
    async fn set_version_status(
        &self,
        id: i64,
        status: &str,
        reason: Option<&str>,
        stderr: Option<&str>,
    ) -> Result<(), StoreError>;
    /// A bot's versions, newest first.
    async fn bot_versions(&self, bot: BotId) -> Result<Vec<BotVersion>, StoreError>;
    /// A bot's newest active version.
    async fn active_version(&self, bot: BotId) -> Result<Option<BotVersion>, StoreError>;
    /// Records which version of a hosted bot played a game, and its stderr.
    async fn add_hosted_match(
        &self,
        game: GameId,
        bot: BotId,
        version: i64,
        stderr: &str,
    ) -> Result<(), StoreError>;
    /// A hosted bot's most recent games with their stderr, newest first.
    async fn hosted_matches(&self, bot: BotId, limit: i64) -> Result<Vec<MatchStderr>, StoreError>;
    /// The hosted bots of a game and the versions that played it.
    async fn game_versions(&self, game: GameId) -> Result<Vec<(BotId, i64)>, StoreError>;
    // People in the loop (issue 16; `people.rs`).
    /// Marks running game `id` as played by a person (`player`) in `seat`,
    /// before it finishes: such a game is stored and listed but rates no bot.
    async fn mark_person_game(
        &self,
        id: GameId,
        seat: usize,
        player: &str,
    ) -> Result<(), StoreError>;
    /// The person's seat in game `id`, if a person played it.
    async fn person_game(&self, id: GameId) -> Result<Option<PersonSeat>, StoreError>;
    /// Rates finished person game `id` in the people's pool (issue 48):
    /// the person and the bots at its table, apart from the bots' ladder
    /// ratings. Once per game: `false` if it was rated before, is not a
    /// finished person game, or has a seat without a rank.
    async fn rate_person_game(&self, id: GameId) -> Result<bool, StoreError>;
    /// The people's pool of `game` (people and the bots they played), best
    /// μ − 3σ first, at most `limit`.
    async fn people_leaderboard(
        &self,
        game: &str,
        limit: i64,
    ) -> Result<Vec<PeopleRating>, StoreError>;
    /// A person's ratings, one per game they played.
    async fn person_ratings(&self, player: &str) -> Result<Vec<PeopleRating>, StoreError>;
    /// A person's last `limit` games, newest first.
    async fn person_games(&self, player: &str, limit: i64) -> Result<Vec<PersonGame>, StoreError>;
    /// Lets others challenge `bot` from the website, or not (the default).
    async fn set_bot_challenges(&self, bot: BotId, allow: bool) -> Result<(), StoreError>;
    /// The bots whose owners let others challenge them.
    async fn challengeable_bots(&self) -> Result<Vec<BotId>, StoreError>;
    /// Issue 13 (wc): the ladder's leases between processes ([`crate::leases`]).
    fn leases(&self) -> &dyn LeaseStore;

    /// What several server instances on this database share (issue 13):
    /// `Some` on PostgreSQL; `None` on SQLite, where one process keeps its
    /// live state in memory.
    fn cluster(&self) -> Option<Cluster> {
        None
    }
}
