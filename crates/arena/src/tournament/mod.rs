//! Tournaments: every table of bots plays the same deals under every seating
//! (duplicate deals), so the luck of the cards cancels out.
//!
//! For a 2-player game the tables are all pairs of bots (a round-robin); for
//! a game of more players, every combination of `players` bots. Each table
//! plays `deals` deals; with duplicate deals each deal is played once under
//! every rotation of the seats (for two players: again with seats swapped).

pub mod standings;
pub mod swiss;

use std::path::PathBuf;

use croupier_bots::Builtins;
use croupier_rules::Record;
use serde::Serialize;

use crate::live::LiveConfig;
use crate::runner::seeds;
use crate::series::{prepare_records, write_record, BotSummary, SeriesError, Table};
use crate::spec::BotSpec;

/// What to play.
#[derive(Debug, Clone)]
pub struct TournamentConfig<V> {
    /// Rules variant.
    pub variant: V,
    /// The bots.
    pub bots: Vec<BotSpec>,
    /// Players per table.
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
    /// Games played.
    pub games: u64,
    /// Players per table.
    pub players: usize,
    /// Whether deals were duplicated.
    pub duplicate: bool,
    /// One entry per bot, in the order given.
    pub bots: Vec<BotSummary>,
    /// `head_to_head[i][j]`: bot i against bot j.
    pub head_to_head: Vec<Vec<HeadToHead>>,
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

/// How many games a tournament plays.
pub fn total_games<V>(config: &TournamentConfig<V>) -> u64 {
    let tables = combinations(config.bots.len(), config.players).len() as u64;
    let seatings = if config.duplicate {
        config.players as u64
    } else {
        1
    };
    tables * config.deals * seatings
}

/// Plays a tournament; `on_game` is called after each game (for progress).
pub fn run_tournament<G: Builtins>(
    config: &TournamentConfig<G::Variant>,
    mut on_game: impl FnMut(&Record),
) -> Result<TournamentResult, SeriesError> {
    let table = Table::<G>::new(&config.variant, &config.bots, &config.live, &config.exe)?;
    prepare_records(config.records.as_deref())?;
    let n = config.bots.len();
    let mut bots = BotSummary::for_bots(&config.bots);
    let mut h2h = vec![vec![HeadToHead::default(); n]; n];
    let mut games = 0u64;
    for (t, members) in combinations(n, config.players).iter().enumerate() {
        for deal in 0..config.deals {
            let seed = seeds::game(config.seed, ((t as u64) << 32) | deal);
            let rotations = if config.duplicate { members.len() } else { 1 };
            for r in 0..rotations {
                // Without duplicates, rotate from deal to deal instead.
                let shift = if config.duplicate {
                    r
                } else {
                    deal as usize % members.len()
                };
                let order: Vec<usize> = (0..members.len())
                    .map(|s| members[(s + shift) % members.len()])
                    .collect();
                let seating: Vec<&BotSpec> = order.iter().map(|&b| &config.bots[b]).collect();
                let record = table.play(&seating, seed)?;
                for (seat, &b) in order.iter().enumerate() {
                    bots[b].add(seat, &record);
                    for (other_seat, &o) in order.iter().enumerate() {
                        if o == b {
                            continue;
                        }
                        let (mine, theirs) =
                            (record.outcome.ranks[seat], record.outcome.ranks[other_seat]);
                        let cell = &mut h2h[b][o];
                        match mine.cmp(&theirs) {
                            std::cmp::Ordering::Less => cell.wins += 1,
                            std::cmp::Ordering::Equal => cell.draws += 1,
                            std::cmp::Ordering::Greater => cell.losses += 1,
                        }
                    }
                }
                if let Some(dir) = &config.records {
                    let path = dir.join(format!("{}-t{t:03}-d{deal:04}-r{r}.json", G::NAME));
                    write_record(&path, &record)?;
                }
                games += 1;
                on_game(&record);
            }
        }
    }
    Ok(TournamentResult {
        game: G::NAME.to_string(),
        games,
        players: config.players,
        duplicate: config.duplicate,
        bots,
        head_to_head: h2h,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
    use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};

    fn config<V>(variant: V, bots: &[&str], players: usize, deals: u64) -> TournamentConfig<V> {
        TournamentConfig {
            variant,
            bots: bots.iter().map(|b| b.parse().unwrap()).collect(),
            players,
            deals,
            duplicate: true,
            seed: 5,
            records: None,
            live: LiveConfig::default(),
            exe: PathBuf::from("croupier"),
        }
    }

    #[test]
    fn combinations_are_complete_and_ordered() {
        assert_eq!(combinations(3, 2), vec![vec![0, 1], vec![0, 2], vec![1, 2]]);
        assert_eq!(combinations(5, 4).len(), 5);
        assert!(combinations(2, 3).is_empty());
    }

    #[test]
    fn round_robin_with_duplicate_deals_plays_every_deal_both_ways() {
        let c = config(
            GoofspielVariant::gops(),
            &["builtin:planner", "builtin:random", "builtin:random"],
            2,
            200,
        );
        let mut seeds_seen = std::collections::HashMap::new();
        let r = run_tournament::<Goofspiel>(&c, |rec| {
            *seeds_seen.entry(rec.seed).or_insert(0) += 1;
        })
        .unwrap();
        assert_eq!(r.games, 3 * 200 * 2);
        assert_eq!(r.games, total_games(&c));
        assert!(seeds_seen.values().all(|n| *n == 2), "each deal twice");
        // Each bot met two others, 400 games each.
        assert!(r.bots.iter().all(|b| b.games == 800));
        // Head-to-head is antisymmetric.
        for i in 0..3 {
            for j in 0..3 {
                assert_eq!(r.head_to_head[i][j].wins, r.head_to_head[j][i].losses);
                assert_eq!(r.head_to_head[i][j].draws, r.head_to_head[j][i].draws);
            }
        }
        assert!(
            r.head_to_head[0][1].wins > r.head_to_head[0][1].losses,
            "planner beats random"
        );
    }

    #[test]
    fn love_letter_tables_rotate_every_seat() {
        let bots = [
            "builtin:heuristic",
            "builtin:random",
            "builtin:random",
            "builtin:random",
            "builtin:random",
        ];
        let c = config(LoveLetterVariant::default(), &bots, 4, 2);
        let r = run_tournament::<LoveLetter>(&c, |_| {}).unwrap();
        assert_eq!(r.games, 5 * 2 * 4);
        assert!(r.bots.iter().all(|b| b.games == 4 * 2 * 4));
        assert_eq!(
            r.bots.iter().map(|b| b.wins).sum::<u64>(),
            r.games,
            "one winner per game"
        );
    }
}
