//! Tournaments: every table of bots plays the same deals under every seating
//! (duplicate deals), so the luck of the cards cancels out.
//!
//! Two formats:
//! - round-robin: the tables are all pairs of bots (for a 2-player game) or
//!   every combination of `players` bots;
//! - Swiss ([`swiss`], [`standings`], `swiss_run`): a fixed number of rounds,
//!   each paired by score; a table of a round is a match of `deals` deals.
//!
//! Each table plays `deals` deals; with duplicate deals each deal is played
//! once under every rotation of the seats (for two players: again with seats
//! swapped).

mod play;
pub mod rating;
pub mod standings;
pub mod swiss;
mod swiss_run;

use croupier_bots::Builtins;
use croupier_rules::Record;

use crate::seeds;
use crate::series::{prepare_records, Table};
use play::{play_table, TablePlan, Tally};

pub use play::{
    combinations, Format, HeadToHead, SwissReport, TournamentConfig, TournamentError,
    TournamentResult,
};
pub use swiss_run::table_sizes as swiss_table_sizes;

/// How many games a tournament plays.
pub fn total_games<V>(config: &TournamentConfig<V>) -> u64 {
    let seatings = |k: usize| if config.duplicate { k as u64 } else { 1 };
    match config.format {
        Format::RoundRobin => {
            let tables = combinations(config.bots.len(), config.players).len() as u64;
            tables * config.deals * seatings(config.players)
        }
        Format::Swiss { rounds } => {
            let per_round: u64 = swiss_run::table_sizes(config.bots.len(), config.players)
                .into_iter()
                .map(|k| config.deals * seatings(k))
                .sum();
            u64::from(rounds) * per_round
        }
    }
}

/// Plays a tournament; `on_game` is called after each game (for progress).
pub fn run_tournament<G: Builtins>(
    config: &TournamentConfig<G::Variant>,
    mut on_game: impl FnMut(&Record),
) -> Result<TournamentResult, TournamentError> {
    // A table's deals seat the same programs game after game, and the next
    // table shares programs with it: the sandboxes held for a game's
    // programs are cleared and kept for the next game, whose bots take
    // back their own (the rest are killed), as a series does (issue 53).
    let table = Table::<G>::new(&config.variant, &config.bots, &config.live, &config.exe)?
        .explaining(config.on_fault.clone())
        .reusing_sandboxes();
    prepare_records(config.records.as_deref())?;
    let mut tally = Tally::new(&config.bots);
    match config.format {
        Format::RoundRobin => {
            for (t, members) in combinations(config.bots.len(), config.players)
                .iter()
                .enumerate()
            {
                let seed = |deal: u64| seeds::game(config.seed, ((t as u64) << 32) | deal);
                let name =
                    |deal: u64, r: usize| format!("{}-t{t:03}-d{deal:04}-r{r}.json", G::NAME);
                let plan = TablePlan {
                    members,
                    seed: &seed,
                    name: &name,
                    shift: 0,
                };
                play_table(&table, config, &plan, &mut tally, &mut on_game)?;
            }
            Ok(tally.finish::<G>(config))
        }
        Format::Swiss { rounds } => {
            let report = swiss_run::run(&table, config, rounds, &mut tally, &mut on_game)?;
            let mut result = tally.finish::<G>(config);
            result.swiss = Some(report);
            Ok(result)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::LiveConfig;
    use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
    use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
    use std::path::PathBuf;

    fn config<V>(variant: V, bots: &[&str], players: usize, deals: u64) -> TournamentConfig<V> {
        TournamentConfig {
            variant,
            bots: bots.iter().map(|b| b.parse().unwrap()).collect(),
            format: Format::RoundRobin,
            players,
            deals,
            duplicate: true,
            seed: 5,
            records: None,
            live: LiveConfig::default(),
            exe: PathBuf::from("croupier"),
            on_fault: None,
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

    #[test]
    fn swiss_pairs_by_score_with_byes_and_duplicate_deals() {
        let mut c = config(
            GoofspielVariant::gops(),
            &[
                "builtin:random",
                // A fixed number of iterations, not a time budget: the
                // second run below must replay the first move for move.
                "builtin:strong?iterations=200",
                "builtin:random",
                "builtin:random",
                "builtin:random",
            ],
            2,
            4,
        );
        c.format = Format::Swiss { rounds: 3 };
        let mut games = 0;
        let r = run_tournament::<Goofspiel>(&c, |_| games += 1).unwrap();
        // 5 bots: two tables and a bye per round, 4 deals played both ways.
        assert_eq!(r.games, 3 * 2 * 4 * 2);
        assert_eq!(r.games, total_games(&c));
        assert_eq!(games, r.games);
        assert_eq!(r.format, "swiss");
        let s = r.swiss.as_ref().unwrap();
        assert_eq!(s.round_results.len(), 3);
        assert!(s.round_results.iter().all(|round| round.byes.len() == 1));
        let mut byes: Vec<usize> = s.round_results.iter().map(|r| r.byes[0]).collect();
        byes.sort_unstable();
        byes.dedup();
        assert_eq!(byes.len(), 3, "three different bots had the byes");
        // No pair met twice (5 bots, 3 rounds: always avoidable).
        let mut met = std::collections::HashSet::new();
        for round in &s.round_results {
            for t in &round.tables {
                let key = (t.bots[0].min(t.bots[1]), t.bots[0].max(t.bots[1]));
                assert!(met.insert(key), "{key:?} met twice");
            }
        }
        // One point per table and per bye each round.
        let total: f64 = s.standings.iter().map(|row| row.points).sum();
        assert_eq!(total, 3.0 * 3.0);
        assert_eq!(
            s.standings[0].bot, 1,
            "the strong bot wins: {:?}",
            s.standings
        );
        assert_eq!(s.standings[0].points, 3.0);
        assert!(s.standings.iter().all(|row| row.rounds.len() == 3));
        // Same seed, same tournament.
        assert_eq!(run_tournament::<Goofspiel>(&c, |_| {}).unwrap(), r);
    }

    #[test]
    fn love_letter_swiss_seats_tables_of_up_to_four() {
        let bots = ["builtin:heuristic"]
            .into_iter()
            .chain(std::iter::repeat_n("builtin:random", 5))
            .collect::<Vec<_>>();
        let mut c = config(LoveLetterVariant::default(), &bots, 4, 2);
        c.format = Format::Swiss { rounds: 2 };
        let r = run_tournament::<LoveLetter>(&c, |_| {}).unwrap();
        // Six bots: tables of 3 and 3, two deals under three rotations.
        assert_eq!(r.games, 2 * 2 * 2 * 3);
        assert_eq!(r.games, total_games(&c));
        let s = r.swiss.unwrap();
        for round in &s.round_results {
            assert_eq!(
                round
                    .tables
                    .iter()
                    .map(|t| t.bots.len())
                    .collect::<Vec<_>>(),
                vec![3, 3]
            );
            assert!(round.byes.is_empty());
        }
        assert!(r.bots.iter().all(|b| b.games == 2 * 2 * 3));
    }
}
