//! What both formats share: the configuration and result of a tournament,
//! its error, the tally every game adds to, and the play of one table's
//! deals under every seating.

use std::path::PathBuf;

use croupier_bots::Builtins;
use croupier_rules::Record;
use serde::Serialize;

use super::standings::{RoundResult, StandingRow};
use super::{rating, swiss};
use crate::live::LiveConfig;
use crate::series::{write_record, BotSummary, SeriesError, Table};
use crate::spec::BotSpec;

/// How tables are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Every combination of `players` bots, once.
    RoundRobin,
    /// Rounds paired by score; `players` is the largest table.
    Swiss {
        /// Number of rounds.
        rounds: u32,
    },
}

/// What to play.
#[derive(Debug, Clone)]
pub struct TournamentConfig<V> {
    /// Rules variant.
    pub variant: V,
    /// The bots.
    pub bots: Vec<BotSpec>,
    /// Round-robin or Swiss.
    pub format: Format,
    /// Players per table (Swiss: at most).
    pub players: usize,
    /// Deals per table.
    pub deals: u64,
    /// Play every deal under every rotation of the seats.
    pub duplicate: bool,
    /// Base seed.
    pub seed: u64,
    /// Directory for one JSON record per game, if any.
    pub records: Option<PathBuf>,
    /// Deadlines and process limits for bot programs.
    pub live: LiveConfig,
    /// The croupier binary, to run built-in strategies as processes.
    pub exe: PathBuf,
    /// Where each fault goes as it is ruled (`tournament -v`), if anywhere.
    pub on_fault: Option<crate::explain::FaultSink>,
}

/// How one bot fared against another in the games both played.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HeadToHead {
    /// Games it finished ahead.
    pub wins: u64,
    /// Games they finished level.
    pub draws: u64,
    /// Games it finished behind.
    pub losses: u64,
}

/// The final table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TournamentResult {
    /// Game name.
    pub game: String,
    /// `round-robin` or `swiss`.
    pub format: &'static str,
    /// Games played.
    pub games: u64,
    /// Players per table (Swiss: at most).
    pub players: usize,
    /// Whether deals were duplicated.
    pub duplicate: bool,
    /// One entry per bot, in the order given.
    pub bots: Vec<BotSummary>,
    /// A Weng-Lin rating per bot from the tournament's games, in the order given.
    pub ratings: Vec<rating::Rating>,
    /// `head_to_head[i][j]`: bot i against bot j.
    pub head_to_head: Vec<Vec<HeadToHead>>,
    /// Swiss only: rounds, standings and crosstable.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub swiss: Option<SwissReport>,
}

/// Why a tournament stopped.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// A game could not be played or recorded.
    #[error(transparent)]
    Series(#[from] SeriesError),
    /// A round could not be paired.
    #[error(transparent)]
    Pairing(#[from] swiss::PairingError),
}

/// Every combination of `k` indices out of `n`, in lexicographic order.
pub fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    fn go(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            cur.push(i);
            go(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    if k <= n {
        go(0, n, k, &mut Vec::new(), &mut out);
    }
    out
}

/// What a Swiss adds to the result: standings and every round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwissReport {
    /// Rounds played.
    pub rounds: u32,
    /// Pairing numbers: bot indices, first number first.
    pub seeding: Vec<usize>,
    /// Final standings, best first, with tie-breaks and the crosstable.
    pub standings: Vec<StandingRow>,
    /// Every round's tables, results and byes.
    pub round_results: Vec<RoundResult>,
}

/// What every game adds up to: per-bot summaries, head-to-head, ratings.
#[derive(Debug)]
pub(super) struct Tally {
    pub(super) bots: Vec<BotSummary>,
    pub(super) h2h: Vec<Vec<HeadToHead>>,
    pub(super) ratings: Vec<rating::Rating>,
    pub(super) games: u64,
}

impl Tally {
    pub(super) fn new(bots: &[BotSpec]) -> Tally {
        let n = bots.len();
        Tally {
            bots: BotSummary::for_bots(bots),
            h2h: vec![vec![HeadToHead::default(); n]; n],
            ratings: vec![rating::Rating::default(); n],
            games: 0,
        }
    }

    /// Counts a game in which `order[s]` (a bot index) held seat `s`.
    fn add(&mut self, order: &[usize], record: &Record) {
        let ranks = &record.outcome.ranks;
        for (seat, &b) in order.iter().enumerate() {
            self.bots[b].add(seat, record);
            for (other_seat, &o) in order.iter().enumerate() {
                if o == b {
                    continue;
                }
                let cell = &mut self.h2h[b][o];
                match ranks[seat].cmp(&ranks[other_seat]) {
                    std::cmp::Ordering::Less => cell.wins += 1,
                    std::cmp::Ordering::Equal => cell.draws += 1,
                    std::cmp::Ordering::Greater => cell.losses += 1,
                }
            }
        }
        rating::update(&mut self.ratings, order, ranks);
        self.games += 1;
    }

    pub(super) fn finish<G: Builtins>(
        self,
        config: &TournamentConfig<G::Variant>,
    ) -> TournamentResult {
        TournamentResult {
            game: G::NAME.to_string(),
            format: match config.format {
                Format::RoundRobin => "round-robin",
                Format::Swiss { .. } => "swiss",
            },
            games: self.games,
            players: config.players,
            duplicate: config.duplicate,
            bots: self.bots,
            ratings: self.ratings,
            head_to_head: self.h2h,
            swiss: None,
        }
    }
}

/// One table: its bots (indices), the deals' seeds and the records' names.
pub(super) struct TablePlan<'a> {
    pub(super) members: &'a [usize],
    /// Seed of deal `d`.
    pub(super) seed: &'a dyn Fn(u64) -> u64,
    /// Record file name of deal `d` under rotation `r`.
    pub(super) name: &'a dyn Fn(u64, usize) -> String,
    /// Rotation of the first deal without duplicate deals.
    pub(super) shift: usize,
}

/// Plays every deal of a table; returns each member's game points (2 per
/// opponent finished ahead of in a game, 1 per opponent level).
pub(super) fn play_table<G: Builtins>(
    table: &Table<G>,
    config: &TournamentConfig<G::Variant>,
    plan: &TablePlan,
    tally: &mut Tally,
    on_game: &mut dyn FnMut(&Record),
) -> Result<Vec<u64>, SeriesError> {
    let members = plan.members;
    let k = members.len();
    let mut points = vec![0u64; k];
    for deal in 0..config.deals {
        let seed = (plan.seed)(deal);
        let rotations = if config.duplicate { k } else { 1 };
        for r in 0..rotations {
            // Without duplicates, rotate from deal to deal instead.
            let shift = if config.duplicate {
                r
            } else {
                (deal as usize + plan.shift) % k
            };
            let order: Vec<usize> = (0..k).map(|s| members[(s + shift) % k]).collect();
            let seating: Vec<&BotSpec> = order.iter().map(|&b| &config.bots[b]).collect();
            let record = table.play(&seating, seed)?;
            let ranks = &record.outcome.ranks;
            for (seat, &b) in order.iter().enumerate() {
                let i = (seat + shift) % k;
                debug_assert_eq!(members[i], b);
                points[i] += ranks
                    .iter()
                    .enumerate()
                    .filter(|(s, _)| *s != seat)
                    .map(|(_, other)| match ranks[seat].cmp(other) {
                        std::cmp::Ordering::Less => 2,
                        std::cmp::Ordering::Equal => 1,
                        std::cmp::Ordering::Greater => 0,
                    })
                    .sum::<u64>();
            }
            tally.add(&order, &record);
            crate::series::explain_faults(&mut tally.bots, &order, &table.take_faults());
            if let Some(dir) = &config.records {
                write_record(&dir.join((plan.name)(deal, r)), &record)?;
            }
            on_game(&record);
        }
    }
    Ok(points)
}
