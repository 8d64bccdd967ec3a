//! Tournaments on the server (issue 15): the tournament, its entries (frozen
//! at the start), and every planned game of every round with its result, so
//! that a restarted server resumes where it stopped.
//!
//! The SQL is written once ([`tournament_queries`], `$n` placeholders, which
//! both SQLite and PostgreSQL accept through sqlx) and instantiated for each
//! backend. Games of a tournament are stored as every game is (`start_game`
//! rows, `finish_game` records) but carry `games.tournament_id`: they are not
//! rated (see `sqlite_ratings::rate_finished` and `postgres::finish::mark`) and pages can list them apart.
//! Their seats carry the same tournament (`game_seats.tournament_id`,
//! written with the game's row by `start_tournament_game`, the one place a
//! tournament game is created, and never changed), so that a bot's
//! tournament games are found among its own seats; the two must agree.

use async_trait::async_trait;
use serde::Serialize;

use crate::web::GameSummary;
use crate::{BotId, BotKind, GameId, OwnerId, StoreError};

#[macro_use]
mod marked;
#[macro_use]
mod queries;
pub(crate) mod ladder;
pub(crate) mod postgres;
pub(crate) mod sqlite;

/// A tournament's id.
pub type TournamentId = i64;

/// What goes after a table's name where a tournament games list walks an
/// index of its own in finish order: SQLite's `INDEXED BY`, so that its
/// planner never reads every game, or all of a bot's seats, instead; empty
/// on PostgreSQL, whose planner picks among them by its statistics (one
/// tournament's list may walk every tournament's games instead, when one
/// tournament holds most of them).
pub(crate) struct ListHints {
    /// Every tournament's games (`games_tournament_finish_order`).
    pub every: &'static str,
    /// One tournament's (`games_tournament_finish_order_by_tournament`).
    pub one: &'static str,
    /// A bot's tournament seats (`game_seats_tournament_finish_order_by_bot`).
    pub seats: &'static str,
}

/// A stored tournament.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct TournamentRow {
    /// Id.
    pub id: TournamentId,
    /// Unique name.
    pub name: String,
    /// Game name.
    pub game: String,
    /// Rules variant text (`None`: the game's default).
    pub variant: Option<String>,
    /// `round-robin` or `swiss`.
    pub format: String,
    /// Rounds (a round-robin's are set at the start from its entries).
    pub rounds: i64,
    /// Deals per table and round.
    pub deals: i64,
    /// Whether each deal is played under every seating.
    pub duplicate: bool,
    /// Largest table (2 but for Love Letter Swiss, up to 4).
    pub seats: i64,
    /// Time per decision, milliseconds.
    pub move_ms: i64,
    /// Thinking time per bot per game, milliseconds.
    pub budget_ms: Option<i64>,
    /// When it starts (unix seconds; RFC 3339 in JSON).
    #[serde(serialize_with = "crate::times::unix")]
    pub starts_at: i64,
    /// The tournament's seed (deals and pairing numbers derive from it).
    #[serde(skip)]
    pub seed: i64,
    /// `scheduled`, `running`, `finished` or `cancelled`.
    pub status: String,
    /// The round being played (0 before the start).
    pub current_round: i64,
    /// Whether the entries are every active bot of the game at the start.
    pub all_bots: bool,
    /// The organiser.
    pub created_by: Option<OwnerId>,
    /// Creation time (unix seconds; RFC 3339 in JSON).
    #[serde(serialize_with = "crate::times::unix_text")]
    pub created_at: String,
    /// Start time (RFC 3339).
    pub started_at: Option<String>,
    /// End time (RFC 3339).
    pub finished_at: Option<String>,
    /// Why it was cancelled, if it was.
    pub reason: Option<String>,
    /// The winner of a finished tournament, as its standings said at its
    /// end (written with its status, `finish_tournament`; none for one
    /// finished before winners were kept, or ended by `end_tournament`:
    /// its standings say).
    pub winner: Option<String>,
}

/// A tournament's planned games counted (what its progress needs, without
/// reading them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct PlanCounts {
    /// Games done.
    pub done: i64,
    /// Games being played.
    pub running: i64,
    /// Games planned and not void (done, running or pending).
    pub not_void: i64,
    /// The last round planned (0 before the first).
    pub planned_rounds: i64,
}

impl PlanCounts {
    /// The counts of `games`, as the store counts them.
    pub fn of(games: &[TournamentGameRow]) -> PlanCounts {
        let count =
            |f: &dyn Fn(&TournamentGameRow) -> bool| games.iter().filter(|g| f(g)).count() as i64;
        PlanCounts {
            done: count(&|g| g.status == "done"),
            running: count(&|g| g.status == "running"),
            not_void: count(&|g| g.status != "void"),
            planned_rounds: games.iter().map(|g| g.round).max().unwrap_or(0),
        }
    }
}

/// A tournament to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTournament {
    /// Unique name.
    pub name: String,
    /// Game name.
    pub game: String,
    /// Rules variant text.
    pub variant: Option<String>,
    /// `round-robin` or `swiss`.
    pub format: String,
    /// Swiss rounds (ignored for a round-robin).
    pub rounds: i64,
    /// Deals per table and round.
    pub deals: i64,
    /// Duplicate deals.
    pub duplicate: bool,
    /// Largest table.
    pub seats: i64,
    /// Time per decision, milliseconds.
    pub move_ms: i64,
    /// Thinking time per bot per game, milliseconds.
    pub budget_ms: Option<i64>,
    /// Start time (unix seconds).
    pub starts_at: i64,
    /// Seed.
    pub seed: i64,
    /// Every active bot of the game (then `entries` is empty).
    pub all_bots: bool,
    /// The organiser.
    pub created_by: Option<OwnerId>,
    /// The named entries (not yet frozen).
    pub entries: Vec<EntryRow>,
}

/// An entry: a bot, and once the tournament has started, how it is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct EntryRow {
    /// The tournament.
    pub tournament_id: TournamentId,
    /// The bot.
    pub bot: BotId,
    /// Order of entry (the pairing numbers are drawn from the seed).
    pub seq: i64,
    /// The bot's name.
    pub name: String,
    /// How it connects.
    #[sqlx(try_from = "String")]
    pub kind: BotKind,
    /// A push bot's URL, frozen at the start.
    pub endpoint: Option<String>,
    /// Its dialect, frozen at the start.
    pub dialect: Option<String>,
    /// Basic-auth user Croupier sends to a push bot.
    #[serde(skip)]
    pub auth_user: Option<String>,
    /// Basic-auth password Croupier sends to a push bot.
    #[serde(skip)]
    pub auth_password: Option<String>,
    /// A house bot's strategy.
    pub strategy: Option<String>,
    /// Whether the fields above were frozen at the start.
    pub frozen: bool,
    /// Why it was withdrawn, if it was.
    pub withdrawn: Option<String>,
    /// The round after which it was withdrawn.
    pub withdrawn_round: Option<i64>,
    /// A hosted entry's version, frozen at the start (`bot_versions.id`).
    #[serde(skip)]
    pub version_id: Option<i64>,
    /// That version's number (1, 2, ...).
    pub version: Option<i64>,
}

impl NewTournament {
    /// A round-robin of `game` named `name` with `entries`: two seats, one
    /// deal without duplicates, 1 s a move and no thinking budget, the
    /// default variant, starting at once (`starts_at` 0), seed 0, no
    /// organiser. Set what differs on it
    /// (`NewTournament { seed: 7, ..NewTournament::round_robin(…) }`).
    pub fn round_robin(name: &str, game: &str, entries: Vec<EntryRow>) -> NewTournament {
        NewTournament {
            name: name.into(),
            game: game.into(),
            variant: None,
            format: "round-robin".into(),
            rounds: 0,
            deals: 1,
            duplicate: false,
            seats: 2,
            move_ms: 1000,
            budget_ms: None,
            starts_at: 0,
            seed: 0,
            all_bots: false,
            created_by: None,
            entries,
        }
    }
}

impl EntryRow {
    /// An entry as a tournament is created with it: bot `bot`, named
    /// `name`, of `kind`, entered `seq`-th; its tournament is set when it
    /// is stored, how the bot is reached when the tournament starts
    /// (frozen), and it is not withdrawn.
    pub fn new(bot: BotId, seq: i64, name: impl Into<String>, kind: BotKind) -> EntryRow {
        EntryRow {
            tournament_id: 0,
            bot,
            seq,
            name: name.into(),
            kind,
            endpoint: None,
            dialect: None,
            auth_user: None,
            auth_password: None,
            strategy: None,
            frozen: false,
            withdrawn: None,
            withdrawn_round: None,
            version_id: None,
            version: None,
        }
    }
}

/// A game planned when its round was paired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTournamentGame {
    /// Table number within the round, from 0.
    pub table_no: i64,
    /// Game number within the table, from 0.
    pub game_no: i64,
    /// Bots by seat.
    pub seats: Vec<BotId>,
    /// The deal's seed.
    pub seed: i64,
}

/// A planned game and its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct TournamentGameRow {
    /// Id (of the plan, not the game).
    pub id: i64,
    /// The tournament.
    pub tournament_id: TournamentId,
    /// Round, from 1.
    pub round: i64,
    /// Table within the round, from 0.
    pub table_no: i64,
    /// Game within the table, from 0.
    pub game_no: i64,
    /// Bot ids by seat, comma-separated.
    pub seats: String,
    /// The deal's seed.
    #[serde(skip)]
    pub seed: i64,
    /// `pending`, `running`, `done` or `void`.
    pub status: String,
    /// The stored game, once dealt.
    pub game_id: Option<GameId>,
    /// Ranks by seat, comma-separated, once done.
    pub ranks: Option<String>,
    /// Seats that faulted, comma-separated, once done.
    pub faults: Option<String>,
    /// Its game's scores by seat, comma-separated (a seat without one
    /// empty: `,3`), once done: what its tournament's page shows, kept
    /// here so that the page reads no game or seat of the cup (issue 53).
    pub scores: Option<String>,
}

impl TournamentGameRow {
    /// The bots by seat.
    pub fn bots(&self) -> Vec<BotId> {
        split(&self.seats)
    }

    /// Ranks by seat (empty until done).
    pub fn rank_list(&self) -> Vec<i64> {
        self.ranks.as_deref().map(split).unwrap_or_default()
    }

    /// Seats that faulted (empty until done).
    pub fn fault_list(&self) -> Vec<i64> {
        self.faults.as_deref().map(split).unwrap_or_default()
    }

    /// Its game's score of each seat, `None` for a seat without one
    /// (empty until done, and when no seat has a score).
    pub fn score_by_seat(&self) -> Vec<Option<i64>> {
        let by_seat: Vec<Option<i64>> = self
            .scores
            .as_deref()
            .map(|s| s.split(',').map(|p| p.trim().parse().ok()).collect())
            .unwrap_or_default();
        if by_seat.iter().all(Option::is_none) {
            return Vec::new();
        }
        by_seat
    }
}

fn split(s: &str) -> Vec<i64> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .filter_map(|p| p.trim().parse().ok())
        .collect()
}

/// Rows of a tournament's planned games read between two yields to the
/// runtime ([`TournamentStore::tournament_games`]).
pub(crate) const ROWS_BETWEEN_YIELDS: usize = 128;

/// The scores of a planned game's game as stored in its seats, as
/// [`TournamentGameRow::scores`] keeps them: an SQL expression of the
/// row's `game_id` (in an `UPDATE tournament_games`; the migration that
/// added the column filled it the same way, and `db recount` fills a
/// done game's that lacks it). `string_agg … ORDER BY` is SQLite's since
/// 3.44 (sqlx bundles a newer one) and PostgreSQL's.
pub(crate) const SCORES_OF_GAME: &str =
    "(SELECT string_agg(COALESCE(CAST(s.score AS TEXT), ''), ',' ORDER BY s.seat)
      FROM game_seats s WHERE s.game_id = tournament_games.game_id)";

/// A list of numbers as stored (`1,2,3`).
pub fn join(values: &[i64]) -> String {
    values
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Which tournament games a games list shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Marked {
    /// Ladder and tournament games alike.
    #[default]
    All,
    /// Only games of tournaments.
    Only,
    /// Only games outside tournaments.
    Hide,
}

/// A games list filtered by tournament (finished games only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GamesFilter {
    /// Only this game kind.
    pub game: Option<String>,
    /// Only games this bot played.
    pub bot: Option<BotId>,
    /// Only the games of this tournament.
    pub tournament: Option<TournamentId>,
    /// Tournament games shown, alone, or hidden.
    pub marked: Marked,
}

impl GamesFilter {
    /// The whole games list's filter (kind and bot) that this one narrows.
    pub(crate) fn listed(&self) -> crate::web::GameFilter {
        crate::web::GameFilter {
            game: self.game.clone(),
            bot: self.bot,
        }
    }
}

/// Tournament storage (reached through [`crate::Store::tournaments`]).
#[async_trait]
pub trait TournamentStore: Send + Sync {
    /// Sets or clears an owner's organiser flag; false if there is no such owner.
    async fn set_owner_admin(&self, name: &str, admin: bool) -> Result<bool, StoreError>;
    /// Whether an owner may organise tournaments.
    async fn owner_is_admin(&self, owner: OwnerId) -> Result<bool, StoreError>;
    /// Creates a tournament and its (unfrozen) entries; fails with
    /// [`StoreError::NameTaken`] if the name exists.
    async fn create_tournament(&self, t: &NewTournament) -> Result<TournamentId, StoreError>;
    /// Every tournament, newest first.
    async fn tournament_list(&self) -> Result<Vec<TournamentRow>, StoreError>;
    /// How many tournaments there are, of every status.
    async fn tournament_count(&self) -> Result<i64, StoreError>;
    /// At most `limit` tournaments, newest first, after skipping the
    /// `offset` newest (a page of the list).
    async fn tournament_page(
        &self,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<TournamentRow>, StoreError>;
    /// The tournaments still to start or running, newest first (what the
    /// driver looks at; finished and cancelled ones are not read).
    async fn open_tournaments(&self) -> Result<Vec<TournamentRow>, StoreError>;
    /// How many tournaments have each status (statuses without one are
    /// not listed), in order of status.
    async fn tournament_counts(&self) -> Result<Vec<(String, i64)>, StoreError>;
    /// A tournament by id.
    async fn tournament(&self, id: TournamentId) -> Result<Option<TournamentRow>, StoreError>;
    /// A tournament by name.
    async fn tournament_by_name(&self, name: &str) -> Result<Option<TournamentRow>, StoreError>;
    /// Its entries, in order of entry.
    async fn tournament_entries(&self, id: TournamentId) -> Result<Vec<EntryRow>, StoreError>;
    /// Starts it: replaces its entries by the frozen ones, sets its rounds,
    /// and marks it running (one transaction), if it is still to start;
    /// else nothing changes and the answer is false (a cancel came first).
    async fn start_tournament(
        &self,
        id: TournamentId,
        entries: &[EntryRow],
        rounds: i64,
        at: &str,
    ) -> Result<bool, StoreError>;
    /// Stores the games of round `round` and makes it the current round (one
    /// transaction), if the tournament is running; else nothing changes and
    /// the answer is false (not started, or a cancel came first).
    async fn plan_round(
        &self,
        id: TournamentId,
        round: i64,
        games: &[NewTournamentGame],
    ) -> Result<bool, StoreError>;
    /// Its planned games counted.
    async fn plan_counts(&self, id: TournamentId) -> Result<PlanCounts, StoreError>;
    /// Every planned game, by round, table and game.
    async fn tournament_games(
        &self,
        id: TournamentId,
    ) -> Result<Vec<TournamentGameRow>, StoreError>;
    /// Deals planned game `plan`: stores a running game marked with its
    /// tournament, and links the plan to it (one transaction).
    async fn start_tournament_game(
        &self,
        plan: i64,
        game: &str,
        bots: &[BotId],
        seed: i64,
        started: &str,
    ) -> Result<GameId, StoreError>;
    /// Records a planned game's result: its ranks, its faulted seats, and
    /// its game's scores, which it copies from the seats `finish_game`
    /// stored (so it must come after that).
    async fn finish_tournament_game(
        &self,
        plan: i64,
        ranks: &[i64],
        faults: &[i64],
    ) -> Result<(), StoreError>;
    /// Makes a planned game pending again (its game never finished).
    async fn reset_tournament_game(&self, plan: i64) -> Result<(), StoreError>;
    /// Withdraws an entry with the reason, and voids its pending games, if
    /// the tournament is not over; else nothing changes.
    async fn withdraw_entry(
        &self,
        id: TournamentId,
        bot: BotId,
        round: i64,
        reason: &str,
    ) -> Result<(), StoreError>;
    /// Ends a tournament that is scheduled or running: `finished` or
    /// `cancelled` (with a reason); its pending games become void. False if
    /// it was already over (then nothing changes).
    async fn end_tournament(
        &self,
        id: TournamentId,
        status: &str,
        at: &str,
        reason: Option<&str>,
    ) -> Result<bool, StoreError>;
    /// Ends a tournament that is scheduled or running as `finished`, with
    /// its winner (as its standings say at the end) in the same statement;
    /// its pending games become void. False if it was already over (then
    /// nothing changes: a cancel came first).
    async fn finish_tournament(
        &self,
        id: TournamentId,
        at: &str,
        winner: Option<&str>,
    ) -> Result<bool, StoreError>;
    /// Keeps `winner` as the winner of tournament `id` if it is finished
    /// (`croupier db recount`: a winner decided again from its games).
    /// False if it is not finished (then nothing changes).
    async fn keep_winner(&self, id: TournamentId, winner: Option<&str>)
        -> Result<bool, StoreError>;
    /// The tournaments a bot is entered in, newest first.
    async fn bot_tournaments(&self, bot: BotId) -> Result<Vec<TournamentRow>, StoreError>;
    /// Whether `game` belongs to a tournament in which a game sharing its
    /// deal is not over (pending or running): its deal is then still secret.
    async fn deal_pending(&self, game: GameId) -> Result<bool, StoreError>;
    /// Finished games that `filter` matches, newest first (the games list
    /// when it filters by tournament).
    async fn filtered_games(
        &self,
        filter: &GamesFilter,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError>;
    /// How many finished games `filter` matches.
    async fn count_filtered_games(&self, filter: &GamesFilter) -> Result<i64, StoreError>;
    /// Stored games marked with the tournament: (finished, aborted, running).
    async fn tournament_game_counts(&self, id: TournamentId)
        -> Result<(i64, i64, i64), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(scores: Option<&str>) -> TournamentGameRow {
        TournamentGameRow {
            id: 1,
            tournament_id: 1,
            round: 1,
            table_no: 0,
            game_no: 0,
            seats: "1,2".into(),
            seed: 0,
            status: "done".into(),
            game_id: Some(1),
            ranks: Some("1,2".into()),
            faults: None,
            scores: scores.map(str::to_string),
        }
    }

    #[test]
    fn scores_are_read_by_seat() {
        assert_eq!(kept(Some("4,-6")).score_by_seat(), vec![Some(4), Some(-6)]);
        assert_eq!(kept(Some(",3")).score_by_seat(), vec![None, Some(3)]);
        assert_eq!(
            kept(Some("7,,2")).score_by_seat(),
            vec![Some(7), None, Some(2)]
        );
        assert!(kept(Some(",")).score_by_seat().is_empty());
        assert!(kept(None).score_by_seat().is_empty());
    }
}
