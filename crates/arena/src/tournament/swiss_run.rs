//! Plays a Swiss tournament: pairs each round with [`super::swiss`], plays
//! every table as a match of duplicate deals, and keeps the standings.
//!
//! Every table of a round plays the same deals (seeds drawn from the
//! tournament seed and the round), so a round is duplicate across tables
//! too. Pairing numbers come from a shuffle drawn from the seed.

use croupier_bots::Builtins;
use croupier_rules::Record;

use super::play::{play_table, SwissReport, TablePlan, Tally, TournamentConfig, TournamentError};
use super::standings::Standings;
use super::swiss::{pair_round, seeding, History, Tables};
use crate::seeds;
use crate::series::Table;

/// Table sizes of every round of a Swiss of `n` bots at tables of at most
/// `max` (a bye, if any, is not a table).
pub fn table_sizes(n: usize, max: usize) -> Vec<usize> {
    match Tables::up_to(max) {
        Tables::Pairs => vec![2; n / 2],
        Tables::UpTo(m) => super::swiss::table_sizes(n, m),
    }
}

/// Plays `rounds` rounds.
pub(super) fn run<G: Builtins>(
    table: &Table<G>,
    config: &TournamentConfig<G::Variant>,
    rounds: u32,
    tally: &mut Tally,
    on_game: &mut dyn FnMut(&Record),
) -> Result<SwissReport, TournamentError> {
    let n = config.bots.len();
    let order = seeding(n, None, config.seed);
    let tables = Tables::up_to(config.players);
    let mut history = History::new(n);
    let mut standings = Standings::new(n);
    for round in 0..rounds {
        let pairing = pair_round(&order, standings.points(), &history, tables)?;
        let mut results = Vec::with_capacity(pairing.tables.len());
        for (t, members) in pairing.tables.iter().enumerate() {
            let seed =
                |deal: u64| seeds::game(config.seed, (1 << 62) | (u64::from(round) << 32) | deal);
            let name = |deal: u64, r: usize| {
                format!(
                    "{}-swiss-r{:02}-t{t:03}-d{deal:04}-s{r}.json",
                    G::NAME,
                    round + 1
                )
            };
            let plan = TablePlan {
                members,
                seed: &seed,
                name: &name,
                shift: round as usize,
            };
            let points = play_table(table, config, &plan, tally, on_game)?;
            results.push((members.clone(), points));
        }
        history.record(&pairing);
        standings.add_round(results, pairing.byes);
    }
    let ratings: Vec<f64> = tally.ratings.iter().map(|r| r.mu).collect();
    Ok(SwissReport {
        rounds,
        standings: standings.rows(&ratings, &order),
        seeding: order,
        round_results: standings.rounds().to_vec(),
    })
}
