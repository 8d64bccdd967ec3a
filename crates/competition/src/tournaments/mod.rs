//! Tournaments on the server (issue 15; docs/tournaments.md): an organiser
//! announces a round-robin or a Swiss over registered bots; at its start the
//! entries are frozen (how each is reached), then each round is paired with
//! the arena's Swiss pairing (or the circle method), stored as planned
//! games, and played beside the ladder, which keeps a bounded share of the
//! capacity ([`Capacity`]). Every planned game and result is in the store,
//! so a restarted server resumes a tournament where it stopped: finished
//! games are never played again; a game cut by the restart is dealt afresh.

mod error;
pub mod kept;
pub mod list;
pub mod plan;
pub mod play;
mod start;
mod table;
#[cfg(test)]
mod test_games;
pub mod view;
pub mod winners;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use croupier_arena::transport::http::HttpClient;
use croupier_rules::{GameKind, Record};
use croupier_store::tournaments::{EntryRow, TournamentGameRow, TournamentId, TournamentRow};
use croupier_store::{BotId, BotKind, Store};
use tokio::sync::Semaphore;

pub use crate::capacity::Capacity;
pub use error::{EntryError, TournamentError};

use crate::hosted::Hosted;
use crate::ladder::{house_name, LadderConfig};
use croupier_live::mailbox::Mailboxes;

/// The gauge of tournaments by status is set every this many ticks (every
/// 5 s at the driver's 200 ms).
const COUNT_EVERY: u64 = 25;

/// Runs the tournaments of the store.
pub struct Tournaments {
    store: Arc<dyn Store>,
    mailboxes: Arc<Mailboxes>,
    http: Arc<HttpClient>,
    /// House bots by game: (name, strategy).
    house: HashMap<GameKind, Vec<(String, String)>>,
    capacity: Arc<Capacity>,
    slots: Arc<Semaphore>,
    driving: Mutex<HashSet<TournamentId>>,
    tick: Duration,
    /// Owners named by `croupier serve --admin`.
    admins: std::sync::OnceLock<Vec<String>>,
    /// Hosted bots, when the server runs them.
    hosted: std::sync::OnceLock<Arc<Hosted>>,
}

impl std::fmt::Debug for Tournaments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tournaments")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Tournaments {
    /// The tournament runner, sharing the ladder's capacity (`ladder` gives
    /// the house bots and the number of matches at once).
    pub fn new(
        store: Arc<dyn Store>,
        mailboxes: Arc<Mailboxes>,
        http: Arc<HttpClient>,
        ladder: &LadderConfig,
        capacity: Arc<Capacity>,
    ) -> Tournaments {
        let mut house: HashMap<GameKind, Vec<(String, String)>> = HashMap::new();
        for g in &ladder.games {
            for s in &g.house {
                house
                    .entry(g.game)
                    .or_default()
                    .push((house_name(g.game, s), s.clone()));
            }
        }
        let slots = Arc::new(Semaphore::new(capacity.tournament_slots()));
        Tournaments {
            store,
            mailboxes,
            http,
            house,
            capacity,
            slots,
            driving: Mutex::new(HashSet::new()),
            tick: Duration::from_millis(200),
            admins: std::sync::OnceLock::new(),
            hosted: std::sync::OnceLock::new(),
        }
    }

    /// Lets hosted programs enter (issue 12): each plays the version that
    /// was active when its tournament started.
    pub fn enable_hosted(&self, hosted: Arc<Hosted>) {
        let _ = self.hosted.set(hosted);
    }

    /// Whether hosted programs can enter tournaments here.
    pub fn hosted_on(&self) -> bool {
        self.hosted.get().is_some()
    }

    /// Names the organisers of `croupier serve --admin` (besides the owners
    /// whose organiser flag is set in the database).
    pub fn set_admins(&self, names: Vec<String>) {
        let _ = self.admins.set(names);
    }

    /// Whether `owner` was named an organiser when the server started.
    pub fn named_admin(&self, owner: &str) -> bool {
        self.admins
            .get()
            .is_some_and(|a| a.iter().any(|n| n == owner))
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The capacity shared with the ladder.
    pub fn capacity(&self) -> &Arc<Capacity> {
        &self.capacity
    }

    /// The strategy of house bot `name` of `game`, if it is one.
    pub fn house_strategy(&self, game: GameKind, name: &str) -> Option<&str> {
        self.house
            .get(&game)?
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.as_str())
    }

    /// Runs forever: starts tournaments when due, and drives each running
    /// one (resuming those a previous run left running).
    pub async fn run(self: Arc<Self>) {
        let mut tick = tokio::time::interval(self.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        for ticks in 0u64.. {
            tick.tick().await;
            // The open ones alone: a tick does not read every tournament
            // ever held.
            let list = match self.store.tournaments().open_tournaments().await {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!("tournaments: cannot list: {e}");
                    continue;
                }
            };
            if ticks % COUNT_EVERY == 0 {
                self.count_statuses().await;
            }
            let live: Vec<&TournamentRow> = list.iter().filter(|t| t.status == "running").collect();
            self.capacity.set_tournaments_running(live.len());
            let mut reserved = HashSet::new();
            for t in live {
                if let Ok(entries) = self.store.tournaments().tournament_entries(t.id).await {
                    reserved.extend(
                        entries
                            .iter()
                            .filter(|e| e.withdrawn.is_none() && e.kind != BotKind::House)
                            .map(|e| e.bot),
                    );
                }
            }
            self.capacity.reserve(reserved);
            for t in list {
                let due = t.status == "scheduled" && t.starts_at <= unix_now();
                if (due || t.status == "running") && self.claim_driver(t.id) {
                    let me = Arc::clone(&self);
                    tokio::spawn(async move {
                        let id = t.id;
                        if let Err(e) = me.drive(t).await {
                            tracing::warn!("tournament {id}: {e}");
                        }
                        me.lock_driving().remove(&id);
                    });
                }
            }
        }
    }

    fn lock_driving(&self) -> std::sync::MutexGuard<'_, HashSet<TournamentId>> {
        self.driving.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the gauge of tournaments by status (a count of every
    /// tournament ever held, so not at every tick).
    async fn count_statuses(&self) {
        let counts = match self.store.tournaments().tournament_counts().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("tournaments: cannot count: {e}");
                return;
            }
        };
        for status in ["scheduled", "running", "finished", "cancelled"] {
            let n = counts
                .iter()
                .find(|(s, _)| s == status)
                .map_or(0, |(_, n)| *n);
            metrics::gauge!(TOURNAMENTS, "status" => status).set(n as f64);
        }
    }

    fn claim_driver(&self, id: TournamentId) -> bool {
        self.lock_driving().insert(id)
    }

    /// Starts (if scheduled) and plays a tournament to its end.
    async fn drive(&self, t: TournamentRow) -> Result<(), TournamentError> {
        let ts = self.store.tournaments();
        if t.status == "scheduled" {
            self.start(&t).await?;
        }
        let mut resumed = false;
        loop {
            let t = ts.tournament(t.id).await?.ok_or(TournamentError::Gone)?;
            if t.status != "running" {
                return Ok(());
            }
            let entries = ts.tournament_entries(t.id).await?;
            let games = ts.tournament_games(t.id).await?;
            if !resumed {
                // Games a previous run left dealt: keep the finished ones,
                // deal the others afresh.
                self.resume(&games).await?;
                resumed = true;
                continue;
            }
            let round = t.current_round;
            progress(&t, &games);
            if round == 0 || plan::round_complete(&games, round) {
                if round > 0 {
                    self.withdraw_faulty(&t, &entries, &games, round).await?;
                }
                let entries = ts.tournament_entries(t.id).await?;
                let still_in = entries.iter().filter(|e| e.withdrawn.is_none()).count();
                if round >= t.rounds || still_in < 2 {
                    let now = croupier_arena::record::now_rfc3339();
                    // The games read above are all of them: the round is
                    // complete, and a withdrawal voids only pending games.
                    let winner = view::winner(&t, &entries, &games);
                    if ts.finish_tournament(t.id, &now, winner.as_deref()).await? {
                        tracing::info!(
                            "tournament {} finished, won by {}",
                            t.name,
                            winner.as_deref().unwrap_or("nobody")
                        );
                    }
                    return Ok(());
                }
                let next = round + 1;
                let planned = plan::plan_round(&t, &entries, &games, next)?;
                // Not planned when a cancel came first: the loop then finds
                // it over.
                if ts.plan_round(t.id, next, &planned).await? {
                    tracing::info!(
                        "tournament {} round {next}: {} games",
                        t.name,
                        planned.len()
                    );
                }
                continue;
            }
            self.play_round(&t, &entries, &games, round).await;
        }
    }

    /// Settles the games a previous run left dealt.
    async fn resume(&self, games: &[TournamentGameRow]) -> Result<(), TournamentError> {
        let ts = self.store.tournaments();
        for g in games.iter().filter(|g| g.status == "running") {
            let row = match g.game_id {
                Some(id) => self.store.game(id).await?,
                None => None,
            };
            let stored = row
                .filter(|r| r.status == "finished")
                .and_then(|r| r.record.map(|text| (r.id, text)));
            let record = match stored {
                None => None,
                Some((id, text)) => match serde_json::from_str::<Record>(&text) {
                    Ok(record) => Some(record),
                    // Dealt afresh, not counted with a result nobody can read.
                    Err(e) => {
                        tracing::warn!("tournament game {}: game {id}'s record does not read ({e}); it is dealt again", g.id);
                        None
                    }
                },
            };
            match record {
                Some(record) => {
                    let faults: Vec<i64> = play::faults(&record).into_iter().map(|f| f.0).collect();
                    ts.finish_tournament_game(g.id, &play::ranks(&record), &faults)
                        .await?;
                }
                None => ts.reset_tournament_game(g.id).await?,
            }
        }
        Ok(())
    }

    /// Plays the pending games of `round`: tables side by side, each
    /// table's games one after another.
    async fn play_round(
        &self,
        t: &TournamentRow,
        entries: &[EntryRow],
        games: &[TournamentGameRow],
        round: i64,
    ) {
        let mut tables: Vec<Vec<TournamentGameRow>> = Vec::new();
        let mut table_nos: Vec<i64> = Vec::new();
        for g in games
            .iter()
            .filter(|g| g.round == round && g.status == "pending")
        {
            match table_nos.iter().position(|n| *n == g.table_no) {
                Some(i) => tables[i].push(g.clone()),
                None => {
                    table_nos.push(g.table_no);
                    tables.push(vec![g.clone()]);
                }
            }
        }
        if tables.is_empty() {
            // Games in flight elsewhere (cannot happen with one driver):
            // wait rather than spin.
            tokio::time::sleep(self.tick).await;
            return;
        }
        let entries: Arc<Vec<EntryRow>> = Arc::new(entries.to_vec());
        let mut set = tokio::task::JoinSet::new();
        for table in tables {
            let t = t.clone();
            let entries = Arc::clone(&entries);
            let me = self.handle();
            set.spawn(async move {
                for g in table {
                    // Cancelled: the table's remaining games are not started.
                    if !me.still_running(t.id).await {
                        break;
                    }
                    match me.play_one(&t, &entries, &g).await {
                        Ok(()) => {}
                        Err(TournamentError::Cancelled) => break,
                        // Voided since the round was read (a bot withdrawn:
                        // banned): not played.
                        Err(TournamentError::Deal(croupier_store::StoreError::NotPending)) => {}
                        Err(e) => {
                            tracing::warn!("tournament {} game {}: {e}", t.name, g.id);
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                    }
                }
            });
        }
        while set.join_next().await.is_some() {}
    }

    fn handle(&self) -> table::Handle {
        table::Handle {
            store: Arc::clone(&self.store),
            mailboxes: Arc::clone(&self.mailboxes),
            http: Arc::clone(&self.http),
            capacity: Arc::clone(&self.capacity),
            slots: Arc::clone(&self.slots),
            hosted: self.hosted.get().cloned(),
        }
    }

    /// Withdraws every entry that faulted in each of its games of `round`.
    async fn withdraw_faulty(
        &self,
        t: &TournamentRow,
        entries: &[EntryRow],
        games: &[TournamentGameRow],
        round: i64,
    ) -> Result<(), TournamentError> {
        let ts = self.store.tournaments();
        for e in entries.iter().filter(|e| e.withdrawn.is_none()) {
            let mine: Vec<&TournamentGameRow> = games
                .iter()
                .filter(|g| g.round == round && g.status == "done")
                .filter(|g| g.bots().contains(&e.bot))
                .collect();
            let faulty = |g: &&TournamentGameRow| {
                let seat = g.bots().iter().position(|b| *b == e.bot).unwrap_or(0) as i64;
                g.fault_list().contains(&seat)
            };
            if mine.is_empty() || !mine.iter().all(faulty) {
                continue;
            }
            let last = self.last_fault(mine.last().copied(), e.bot).await;
            let reason = format!(
                "withdrawn after round {round}: it faulted in every one of its {} games of the round (last fault: {})",
                mine.len(),
                last.chars().take(300).collect::<String>()
            );
            tracing::warn!("tournament {}: bot {} {reason}", t.name, e.name);
            ts.withdraw_entry(t.id, e.bot, round, &reason).await?;
        }
        Ok(())
    }

    async fn last_fault(&self, g: Option<&TournamentGameRow>, bot: BotId) -> String {
        let Some(g) = g else { return "unknown".into() };
        let seat = g.bots().iter().position(|b| *b == bot).unwrap_or(0) as i64;
        let record = match g.game_id {
            Some(id) => match self.store.game(id).await {
                Ok(row) => row.and_then(|r| r.record),
                Err(e) => {
                    tracing::warn!("tournament game {}: cannot read game {id}: {e}", g.id);
                    None
                }
            },
            None => None,
        };
        record
            .and_then(|r| match serde_json::from_str::<Record>(&r) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::warn!("tournament game {}: its record does not read: {e}", g.id);
                    None
                }
            })
            .and_then(|r| play::faults(&r).into_iter().find(|f| f.0 == seat))
            .map_or_else(|| "unknown".into(), |f| f.1)
    }
}

/// Tournaments by status, in the metrics (issue 49).
pub const TOURNAMENTS: &str = "croupier_tournaments";
/// A running tournament's planned games by status (`pending`, `running`,
/// `done`, `void`).
pub const TOURNAMENT_GAMES: &str = "croupier_tournament_games";
/// A running tournament's current round, and its number of rounds.
pub const TOURNAMENT_ROUND: &str = "croupier_tournament_round";
/// A tournament's number of rounds.
pub const TOURNAMENT_ROUNDS: &str = "croupier_tournament_rounds";

/// A running tournament's progress, for the metrics.
fn progress(t: &TournamentRow, games: &[TournamentGameRow]) {
    let name = t.name.clone();
    for status in ["pending", "running", "done", "void"] {
        let n = games.iter().filter(|g| g.status == status).count();
        metrics::gauge!(TOURNAMENT_GAMES, "tournament" => name.clone(), "status" => status)
            .set(n as f64);
    }
    metrics::gauge!(TOURNAMENT_ROUND, "tournament" => name.clone()).set(t.current_round as f64);
    metrics::gauge!(TOURNAMENT_ROUNDS, "tournament" => name).set(t.rounds as f64);
}
