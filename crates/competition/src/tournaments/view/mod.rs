//! What a tournament's page, its JSON twin and `GET /v1/tournaments/{name}`
//! show: progress, standings with tie-breaks, the crosstable with a 95%
//! confidence interval per pair (ACPC style), and every game.

use croupier_store::tournaments::{
    EntryRow, PlanCounts, TournamentGameRow, TournamentId, TournamentRow,
};
use croupier_store::{BotId, Store, StoreError};
use serde::Serialize;
use std::collections::HashMap;

use croupier_arena::think::off_runtime;
use croupier_arena::tournament::rating::{self, Rating};

use super::plan::{self, Places};

pub mod json;

/// Progress of a tournament.
#[derive(Debug, Clone, Serialize)]
pub struct Progress {
    /// Games finished.
    pub done: i64,
    /// Games in progress now.
    pub running: i64,
    /// Games in all (rounds not yet paired are estimated).
    pub total: i64,
    /// The round being played (0 before the start).
    pub current_round: i64,
    /// Rounds in all.
    pub rounds: i64,
}

/// An entry as shown.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// The bot's name.
    pub name: String,
    /// How it connects (push, pull, house, hosted).
    pub kind: String,
    /// A hosted entry's version, frozen at the start: every game of the
    /// tournament runs it.
    pub version: Option<i64>,
    /// Why it was withdrawn, if it was.
    pub withdrawn: Option<String>,
}

/// One line of the standings.
#[derive(Debug, Clone, Serialize)]
pub struct Standing {
    /// Place, from 1.
    pub rank: usize,
    /// The bot.
    pub name: String,
    /// Points (a match won 1, drawn ½; at a table of k, 1/(k−1) per
    /// opponent beaten).
    pub points: f64,
    /// First tie-break: Buchholz.
    pub buchholz: f64,
    /// Second tie-break: points among the bots still tied.
    pub head_to_head: f64,
    /// Third tie-break: the bot's Weng-Lin mean (μ) from this tournament's
    /// games.
    pub rating: f64,
    /// Byes.
    pub byes: u32,
    /// Games played, and those in which it faulted.
    pub games: i64,
    /// Games in which it faulted at least once.
    pub faulty: i64,
}

/// A crosstable cell: the row bot's score against the column bot.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// Games between them.
    pub games: i64,
    /// Mean score per game (1 a win, ½ a tie, 0 a loss), for the row bot.
    pub score: f64,
    /// 95% confidence interval of the mean.
    pub low: f64,
    /// 95% confidence interval of the mean.
    pub high: f64,
    /// 1: significantly better (the interval is above ½); -1: worse; 0: not
    /// significant.
    pub significant: i8,
}

/// The crosstable, bots in the order of the standings.
#[derive(Debug, Clone, Serialize)]
pub struct Crosstable {
    /// Bot names (rows and columns).
    pub bots: Vec<String>,
    /// `cells[row][col]`; `None` where they have not met (and the diagonal).
    pub cells: Vec<Vec<Option<Cell>>>,
}

/// A game of the tournament.
#[derive(Debug, Clone, Serialize)]
pub struct Game {
    /// Round.
    pub round: i64,
    /// Table within the round.
    pub table: i64,
    /// Game within the table.
    pub game: i64,
    /// Bots by seat.
    pub seats: Vec<String>,
    /// `pending`, `running`, `done` or `void`.
    pub status: String,
    /// The stored game (its replay is `/games/{id}`).
    pub id: Option<i64>,
    /// Ranks by seat, once done.
    pub ranks: Vec<i64>,
    /// Scores by seat, once done (the game's own score: points, tricks'
    /// score, rounds won); `null` for a seat without one (a forfeit in an
    /// imported game), empty when no seat has one.
    pub scores: Vec<Option<i64>>,
}

/// The bots that sat out a round (a bye), by round.
#[derive(Debug, Clone, Serialize)]
pub struct Byes {
    /// Round.
    pub round: i64,
    /// Bots without a table that round.
    pub bots: Vec<String>,
}

/// Everything about one tournament.
#[derive(Debug, Clone, Serialize)]
pub struct TournamentView {
    /// The tournament.
    pub tournament: TournamentRow,
    /// Progress.
    pub progress: Progress,
    /// Entries, in order of entry.
    pub entries: Vec<Entry>,
    /// Standings over the completed rounds.
    pub standings: Vec<Standing>,
    /// Rounds the standings count.
    pub standings_after_round: i64,
    /// Pairwise scores over every finished game.
    pub crosstable: Crosstable,
    /// Every planned game.
    pub games: Vec<Game>,
    /// Byes, by round.
    pub byes: Vec<Byes>,
    /// The view as JSON, once written ([`json::json_of`]).
    #[serde(skip)]
    json: tokio::sync::OnceCell<bytes::Bytes>,
}

/// A short line for lists.
#[derive(Debug, Clone, Serialize)]
pub struct Brief {
    /// The tournament.
    pub tournament: TournamentRow,
    /// Progress.
    pub progress: Progress,
    /// Entries.
    pub entries: usize,
    /// The winner of a finished tournament (its first place).
    pub winner: Option<String>,
}

fn progress(t: &TournamentRow, entries: usize, games: &PlanCounts) -> Progress {
    Progress {
        done: games.done,
        running: games.running,
        total: plan::expected_games(t, entries, games),
        current_round: t.current_round,
        rounds: planned_rounds(t, entries),
    }
}

/// Rounds in all: a round-robin's are set at its start from its entries,
/// and until then follow from the entries named so far.
fn planned_rounds(t: &TournamentRow, entries: usize) -> i64 {
    match plan::Format::parse(&t.format) {
        Some(plan::Format::RoundRobin) if t.status == "scheduled" => {
            plan::round_robin_rounds(entries)
        }
        Some(plan::Format::RoundRobin | plan::Format::Swiss) | None => t.rounds,
    }
}

/// A tournament for a list.
pub async fn brief(store: &dyn Store, t: TournamentRow) -> Result<Brief, StoreError> {
    let ts = store.tournaments();
    let entries = ts.tournament_entries(t.id).await?;
    // Counted, not read: a brief does not read every planned game, unless
    // a tournament finished before its winner was kept.
    let counts = ts.plan_counts(t.id).await?;
    let winner = match (t.status.as_str(), &t.winner) {
        ("finished", Some(w)) => Some(w.clone()),
        ("finished", None) => {
            let games = ts.tournament_games(t.id).await?;
            winner(&t, &entries, &games)
        }
        _ => None,
    };
    Ok(Brief {
        progress: progress(&t, entries.len(), &counts),
        entries: entries.len(),
        winner,
        tournament: t,
    })
}

/// The first place of tournament `t`'s standings with these `entries`
/// and planned `games`: what `finish_tournament` keeps with it as its last
/// round is complete, so that the lists show it without reading its games
/// again. The standings are the games' alone, so this is the first row the
/// tournament's page shows for ever after.
pub fn winner(
    t: &TournamentRow,
    entries: &[EntryRow],
    games: &[TournamentGameRow],
) -> Option<String> {
    let (standings, _, _) = standings(t, entries, &plan::places(entries), games);
    standings.into_iter().next().map(|s| s.name)
}

/// [`winner`] of tournament `id` as stored now (for a caller that has not
/// read it).
pub async fn winner_now(store: &dyn Store, id: TournamentId) -> Result<Option<String>, StoreError> {
    let ts = store.tournaments();
    let Some(t) = ts.tournament(id).await? else {
        return Ok(None);
    };
    let entries = ts.tournament_entries(id).await?;
    let games = ts.tournament_games(id).await?;
    Ok(winner(&t, &entries, &games))
}

/// Each entry's Weng-Lin mean from the tournament's own finished games of
/// rounds `1..=upto`, rated in the order they were planned (by id), as
/// `croupier tournament` rates its games. The third tie-break: a pure
/// function of the games, so standings that are over never change (the
/// ladder's rating, read here before, moved on as the ladder played, and
/// reordered tied bots after the winner was kept).
fn ratings(
    entries: &[EntryRow],
    places: &Places,
    games: &[TournamentGameRow],
    upto: i64,
) -> Vec<f64> {
    let index = |b: BotId| places.get(&b).copied();
    let mut rated: Vec<&TournamentGameRow> = games
        .iter()
        .filter(|g| g.status == "done" && g.round <= upto)
        .collect();
    rated.sort_by_key(|g| g.id);
    let mut ratings = vec![Rating::default(); entries.len()];
    for g in rated {
        let order: Option<Vec<usize>> = g.bots().into_iter().map(index).collect();
        let ranks: Option<Vec<u8>> = g
            .rank_list()
            .into_iter()
            .map(|r| u8::try_from(r).ok())
            .collect();
        if let (Some(order), Some(ranks)) = (order, ranks) {
            rating::update(&mut ratings, &order, &ranks);
        }
    }
    ratings.iter().map(|r| r.mu).collect()
}

/// Mean of per-game scores (a win 1, a tie ½) and its 95% Wilson score
/// interval, as the leaderboard's head-to-head uses: honest for few games
/// (two wins out of two give 0.34–1.00, not 1.00–1.00, so nothing is
/// shaded significant after two games).
pub fn interval(scores: &[f64]) -> (f64, f64, f64) {
    let n = scores.len() as f64;
    let points = scores.iter().sum::<f64>();
    match croupier_store::ratings::wilson(points, n) {
        Some((low, high)) => (points / n, low, high),
        None => (0.5, 0.0, 1.0),
    }
}

fn crosstable(
    order: &[usize],
    entries: &[EntryRow],
    places: &Places,
    games: &[TournamentGameRow],
) -> Crosstable {
    let n = entries.len();
    let index = |b: BotId| places.get(&b).copied();
    let mut scores: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n]; n];
    for g in games.iter().filter(|g| g.status == "done") {
        let bots: Vec<Option<usize>> = g.bots().into_iter().map(index).collect();
        let ranks = g.rank_list();
        if ranks.len() != bots.len() {
            continue;
        }
        for (i, a) in bots.iter().enumerate() {
            for (j, b) in bots.iter().enumerate() {
                if let (Some(a), Some(b), true) = (a, b, i != j) {
                    let s = match ranks[i].cmp(&ranks[j]) {
                        std::cmp::Ordering::Less => 1.0,
                        std::cmp::Ordering::Equal => 0.5,
                        std::cmp::Ordering::Greater => 0.0,
                    };
                    scores[*a][*b].push(s);
                }
            }
        }
    }
    let cells = order
        .iter()
        .map(|&r| {
            order
                .iter()
                .map(|&c| {
                    let s = &scores[r][c];
                    (r != c && !s.is_empty()).then(|| {
                        let (score, low, high) = interval(s);
                        Cell {
                            games: s.len() as i64,
                            score,
                            low,
                            high,
                            significant: if low > 0.5 {
                                1
                            } else if high < 0.5 {
                                -1
                            } else {
                                0
                            },
                        }
                    })
                })
                .collect()
        })
        .collect();
    Crosstable {
        bots: order.iter().map(|&i| entries[i].name.clone()).collect(),
        cells,
    }
}

/// The standings after the rounds complete so far (with tie-breaks), each
/// row's entry index in standing order, and how many rounds are complete.
fn standings(
    t: &TournamentRow,
    entries: &[EntryRow],
    places: &Places,
    games: &[TournamentGameRow],
) -> (Vec<Standing>, Vec<usize>, i64) {
    let complete = plan::complete_rounds(games, t.current_round);
    let results = plan::results(t, entries, games, complete);
    let ratings = ratings(entries, places, games, complete);
    let seeding = plan::pairing_numbers(t, entries.len());
    let rows = results.standings.rows(&ratings, &seeding);
    // Each bot's finished games, and those it faulted in (at its first seat).
    let mut played: HashMap<BotId, (i64, i64)> = HashMap::new();
    for g in games.iter().filter(|g| g.status == "done") {
        let (bots, faults) = (g.bots(), g.fault_list());
        for (s, bot) in bots.iter().enumerate() {
            if bots[..s].contains(bot) {
                continue;
            }
            let (n, f) = played.entry(*bot).or_default();
            *n += 1;
            *f += i64::from(faults.contains(&(s as i64)));
        }
    }
    let standings: Vec<Standing> = rows
        .iter()
        .map(|r| {
            let e = &entries[r.bot];
            let (games, faulty) = played.get(&e.bot).copied().unwrap_or_default();
            Standing {
                rank: r.rank,
                name: e.name.clone(),
                points: r.points,
                buchholz: r.buchholz,
                head_to_head: r.head_to_head,
                rating: r.rating,
                byes: r.byes,
                games,
                faulty,
            }
        })
        .collect();
    let order: Vec<usize> = rows.iter().map(|r| r.bot).collect();
    (standings, order, results.complete)
}

/// Everything about tournament `t`. [`StoreError::Closed`] if the
/// runtime shuts down while it is put together.
pub async fn view(store: &dyn Store, t: TournamentRow) -> Result<TournamentView, StoreError> {
    let ts = store.tournaments();
    let entries = ts.tournament_entries(t.id).await?;
    let games = ts.tournament_games(t.id).await?;
    put_together(t, entries, games)
        .await
        .ok_or(StoreError::Closed)
}

/// [`assemble`], off the runtime's threads for a tournament of
/// [`OFF_RUNTIME`] planned games or more; `None` only when the runtime
/// shuts down first.
async fn put_together(
    t: TournamentRow,
    entries: Vec<EntryRow>,
    games: Vec<TournamentGameRow>,
) -> Option<TournamentView> {
    if games.len() < OFF_RUNTIME {
        return Some(assemble(t, &entries, &games));
    }
    // The rows are dropped there too: 32,768 of them are thousands of
    // strings.
    off_runtime(move || assemble(t, &entries, &games)).await
}

/// A tournament with this many planned games or more is put together on
/// Tokio's blocking threads ([`off_runtime`]): a round-robin of 64 entries
/// half played (2,048 planned games) takes about 2 ms, one of 256 (32,768)
/// about 48 ms, which on a runtime thread would hold up every request that
/// thread serves. A cup of 1,000 games (about 1 ms) is put together where
/// it is asked for: sent to the blocking threads, the pages of
/// `croupier bench web` held about 10 MiB more resident memory (the
/// blocking threads' own heaps, I suppose; not measured apart).
pub const OFF_RUNTIME: usize = 2_000;

/// Everything about tournament `t`, from its entries and planned games
/// (as [`view`] reads them).
pub fn assemble(
    t: TournamentRow,
    entries: &[EntryRow],
    games: &[TournamentGameRow],
) -> TournamentView {
    let places = plan::places(entries);
    let (standings, order, complete) = standings(&t, entries, &places, games);
    let byes = round_byes(entries, games);
    let name = |b: BotId| {
        places
            .get(&b)
            .map_or_else(|| b.to_string(), |i| entries[*i].name.clone())
    };
    TournamentView {
        progress: progress(&t, entries.len(), &PlanCounts::of(games)),
        entries: entries
            .iter()
            .map(|e| Entry {
                name: e.name.clone(),
                kind: e.kind.name().into(),
                version: e.version,
                withdrawn: e.withdrawn.clone(),
            })
            .collect(),
        standings,
        standings_after_round: complete,
        crosstable: crosstable(&order, entries, &places, games),
        games: games
            .iter()
            .map(|g| Game {
                round: g.round,
                table: g.table_no,
                game: g.game_no,
                seats: g.bots().into_iter().map(name).collect(),
                status: g.status.clone(),
                id: g.game_id,
                ranks: g.rank_list(),
                // Kept with the planned game when it was done.
                scores: g.score_by_seat(),
            })
            .collect(),
        byes,
        tournament: t,
        json: tokio::sync::OnceCell::new(),
    }
}

/// Who had no table in each paired round: the entries still in it that
/// no game of the round seats.
fn round_byes(entries: &[EntryRow], games: &[TournamentGameRow]) -> Vec<Byes> {
    plan::by_round(games)
        .into_iter()
        .filter_map(|(round, games)| {
            let seated: std::collections::HashSet<BotId> = games
                .iter()
                .filter(|g| g.status != "void")
                .flat_map(|g| g.bots())
                .collect();
            let bots: Vec<String> = entries
                .iter()
                .filter(|e| e.withdrawn_round.is_none_or(|w| w >= round))
                .filter(|e| !seated.contains(&e.bot))
                .map(|e| e.name.clone())
                .collect();
            (!bots.is_empty()).then_some(Byes { round, bots })
        })
        .collect()
}

#[cfg(test)]
mod tests;
