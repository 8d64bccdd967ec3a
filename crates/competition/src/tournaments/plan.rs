//! Pure planning of a tournament's rounds: who sits at which table, and the
//! games each table plays (deals, seatings, seeds). The pairing, standings
//! and tie-breaks are the arena's (`croupier_arena::tournament`), shared with
//! `croupier tournament`; this file only maps the stored rows onto them.

use croupier_arena::seeds;
use croupier_arena::tournament::standings::Standings;
use croupier_arena::tournament::swiss::{
    pair_round, seeding, History, PairingError, Round, Tables,
};
use croupier_store::tournaments::{
    EntryRow, NewTournamentGame, PlanCounts, TournamentGameRow, TournamentRow,
};
use croupier_store::BotId;
use std::collections::{BTreeMap, HashMap};

/// Why a round cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The stored format is none of Croupier's.
    #[error("unknown tournament format '{0}'")]
    Format(String),
    /// The Swiss pairing failed.
    #[error(transparent)]
    Pairing(#[from] PairingError),
}

/// Round-robin or Swiss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Every pair meets once (the circle method: one round per turn).
    RoundRobin,
    /// Rounds paired by score.
    Swiss,
}

impl Format {
    /// The format of stored tournament `t`.
    pub fn of(t: &TournamentRow) -> Result<Format, PlanError> {
        Format::parse(&t.format).ok_or_else(|| PlanError::Format(t.format.clone()))
    }

    /// Reads `round-robin` or `swiss`.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "round-robin" | "roundrobin" | "rr" => Some(Format::RoundRobin),
            "swiss" => Some(Format::Swiss),
            _ => None,
        }
    }

    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            Format::RoundRobin => "round-robin",
            Format::Swiss => "swiss",
        }
    }
}

/// Rounds of a round-robin of `n` entries (the circle method).
pub fn round_robin_rounds(n: usize) -> i64 {
    if n < 2 {
        0
    } else if n.is_multiple_of(2) {
        n as i64 - 1
    } else {
        n as i64
    }
}

/// The pairs of round `round` (from 1) of a round-robin of `n` players
/// (indices), by the circle method; an odd `n` gives one player a rest.
pub fn round_robin_pairs(n: usize, round: i64) -> Vec<(usize, usize)> {
    let m = if n.is_multiple_of(2) { n } else { n + 1 };
    if m < 2 || round < 1 {
        return Vec::new();
    }
    let r = (round as usize - 1) % (m - 1);
    // Player m-1 stays put; the others turn.
    let at = |i: usize| if i == m - 1 { m - 1 } else { (i + r) % (m - 1) };
    let mut pairs = Vec::new();
    for i in 0..m / 2 {
        let (a, b) = (at(i), at(m - 1 - i));
        if a < n && b < n {
            // Alternate who is seated first from round to round.
            pairs.push(if (r + i).is_multiple_of(2) {
                (a, b)
            } else {
                (b, a)
            });
        }
    }
    pairs
}

/// The games of one table: `deals` deals, each under every rotation of the
/// seats with duplicate deals (else one rotation, turning from deal to
/// deal). Every table of a round plays the same deals.
pub fn table_games(
    t: &TournamentRow,
    round: i64,
    table_no: i64,
    members: &[BotId],
) -> Vec<NewTournamentGame> {
    let k = members.len();
    let mut games = Vec::new();
    for deal in 0..t.deals.max(0) as u64 {
        let seed = seeds::game(t.seed as u64, (1 << 62) | ((round as u64) << 32) | deal) as i64;
        let rotations = if t.duplicate { k } else { 1 };
        for r in 0..rotations {
            let shift = if t.duplicate {
                r
            } else {
                (deal as usize + round as usize) % k
            };
            games.push(NewTournamentGame {
                table_no,
                game_no: games.len() as i64,
                seats: (0..k).map(|s| members[(s + shift) % k]).collect(),
                seed,
            });
        }
    }
    games
}

/// Whether entry `e` still plays in round `round`.
fn active_in(e: &EntryRow, round: i64) -> bool {
    e.withdrawn_round.is_none_or(|w| w >= round)
}

/// Results so far, in the arena's terms: every completed round's tables
/// (members as first seated, game points) and byes.
#[derive(Debug)]
pub struct Results {
    /// Standings over the completed rounds.
    pub standings: Standings,
    /// Who met whom.
    pub history: History,
    /// Rounds complete.
    pub complete: i64,
}

/// Game points of each seat of one game: 2 per opponent finished ahead of,
/// 1 per opponent level.
pub fn game_points(ranks: &[i64]) -> Vec<u64> {
    ranks
        .iter()
        .enumerate()
        .map(|(i, mine)| {
            ranks
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, theirs)| match mine.cmp(theirs) {
                    std::cmp::Ordering::Less => 2,
                    std::cmp::Ordering::Equal => 1,
                    std::cmp::Ordering::Greater => 0,
                })
                .sum()
        })
        .collect()
}

/// Whether every game of `round` is over (done or void); a round with no
/// games (every pairing had a withdrawn bot) is over at once.
pub fn round_complete(games: &[TournamentGameRow], round: i64) -> bool {
    games.iter().filter(|g| g.round == round).all(game_over)
}

/// Whether planned game `g` is over (done or void).
fn game_over(g: &TournamentGameRow) -> bool {
    g.status == "done" || g.status == "void"
}

/// Each entry's place among a tournament's entries, by its bot.
pub type Places = HashMap<BotId, usize>;

/// Each entry's place in `entries`, by its bot (a tournament's page and
/// its standings look up every seat of every game: a round-robin of 256
/// has 32,640 pairs).
pub fn places(entries: &[EntryRow]) -> Places {
    let mut places = HashMap::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        places.entry(e.bot).or_insert(i);
    }
    places
}

/// The games of each round, in the order given.
pub fn by_round(games: &[TournamentGameRow]) -> BTreeMap<i64, Vec<&TournamentGameRow>> {
    let mut rounds: BTreeMap<i64, Vec<&TournamentGameRow>> = BTreeMap::new();
    for g in games {
        rounds.entry(g.round).or_default().push(g);
    }
    rounds
}

/// The last round up to `current` that is over with every round before it
/// ([`round_complete`]); 0 if the first is not.
pub fn complete_rounds(games: &[TournamentGameRow], current: i64) -> i64 {
    let first_open = games
        .iter()
        .filter(|g| !game_over(g))
        .map(|g| g.round)
        .filter(|r| *r >= 1)
        .min();
    first_open.map_or(current, |r| current.min(r - 1)).max(0)
}

/// Standings and history from the stored rows, over rounds `1..=upto`.
pub fn results(
    t: &TournamentRow,
    entries: &[EntryRow],
    games: &[TournamentGameRow],
    upto: i64,
) -> Results {
    let n = entries.len();
    let places = places(entries);
    let index = |bot: BotId| places.get(&bot).copied();
    let rounds = by_round(games);
    let mut standings = Standings::new(n);
    let mut history = History::new(n);
    for round in 1..=upto {
        let mut tables: Vec<(Vec<usize>, Vec<u64>)> = Vec::new();
        let mut table_nos: HashMap<i64, usize> = HashMap::new();
        let games = rounds.get(&round).map_or(&[][..], Vec::as_slice);
        for g in games.iter().filter(|g| g.status == "done") {
            let seats: Vec<Option<usize>> = g.bots().into_iter().map(index).collect();
            let Some(seats) = seats.into_iter().collect::<Option<Vec<usize>>>() else {
                continue;
            };
            let points = game_points(&g.rank_list());
            if points.len() != seats.len() {
                continue;
            }
            let at = *table_nos.entry(g.table_no).or_insert_with(|| {
                let mut members = seats.clone();
                members.sort_unstable();
                tables.push((members, vec![0; seats.len()]));
                tables.len() - 1
            });
            let (members, total) = &mut tables[at];
            for (seat, p) in seats.iter().zip(points) {
                if let Some(i) = members.iter().position(|m| m == seat) {
                    total[i] += p;
                }
            }
        }
        let mut seated = vec![false; n];
        for (members, _) in &tables {
            for m in members {
                seated[*m] = true;
            }
        }
        // A Swiss bye: an entry still in, at no table of the round.
        let byes: Vec<usize> = if t.format == Format::Swiss.name() {
            (0..n)
                .filter(|i| !seated[*i] && active_in(&entries[*i], round))
                .collect()
        } else {
            Vec::new()
        };
        history.record(&Round {
            tables: tables.iter().map(|(m, _)| m.clone()).collect(),
            byes: byes.clone(),
        });
        standings.add_round(tables, byes);
    }
    Results {
        standings,
        history,
        complete: upto,
    }
}

/// The pairing numbers of the entries (a shuffle drawn from the seed).
pub fn pairing_numbers(t: &TournamentRow, n: usize) -> Vec<usize> {
    seeding(n, None, t.seed as u64)
}

/// The games of round `round` (from 1), given the results of the rounds
/// before it.
pub fn plan_round(
    t: &TournamentRow,
    entries: &[EntryRow],
    games: &[TournamentGameRow],
    round: i64,
) -> Result<Vec<NewTournamentGame>, PlanError> {
    let n = entries.len();
    let active: Vec<usize> = (0..n).filter(|i| active_in(&entries[*i], round)).collect();
    let tables: Vec<Vec<usize>> = match Format::of(t)? {
        Format::RoundRobin => round_robin_pairs(n, round)
            .into_iter()
            .filter(|(a, b)| active.contains(a) && active.contains(b))
            .map(|(a, b)| vec![a, b])
            .collect(),
        Format::Swiss => {
            if active.len() < 2 {
                return Ok(Vec::new());
            }
            let done = results(t, entries, games, round - 1);
            // Pair the players still in: a sub-problem over their indices.
            let order: Vec<usize> = pairing_numbers(t, n)
                .into_iter()
                .filter(|p| active.contains(p))
                .map(|p| active.iter().position(|a| *a == p).unwrap_or(0))
                .collect();
            let scores: Vec<u32> = active.iter().map(|p| done.standings.points()[*p]).collect();
            let mut history = History::new(active.len());
            for r in done.standings.rounds() {
                let map = |ps: &[usize]| -> Vec<usize> {
                    ps.iter()
                        .filter_map(|p| active.iter().position(|a| a == p))
                        .collect()
                };
                history.record(&Round {
                    tables: r.tables.iter().map(|tb| map(&tb.bots)).collect(),
                    byes: map(&r.byes),
                });
            }
            let seats = Tables::up_to(t.seats.max(2) as usize);
            pair_round(&order, &scores, &history, seats)?
                .tables
                .into_iter()
                .map(|tb| tb.into_iter().map(|p| active[p]).collect())
                .collect()
        }
    };
    let mut out = Vec::new();
    for (table_no, members) in tables.iter().enumerate() {
        let bots: Vec<BotId> = members.iter().map(|i| entries[*i].bot).collect();
        out.extend(table_games(t, round, table_no as i64, &bots));
    }
    Ok(out)
}

/// Games a tournament plays in all (known once its rounds are planned: the
/// rounds not yet planned are estimated from the number of entries; a
/// format Croupier does not know, which cannot be planned, is estimated as
/// a round-robin).
pub fn expected_games(t: &TournamentRow, entries: usize, planned: &PlanCounts) -> i64 {
    let per_table = |k: i64| t.deals * if t.duplicate { k } else { 1 };
    let planned_rounds = planned.planned_rounds;
    let per_round = match Format::parse(&t.format) {
        Some(Format::Swiss) => {
            croupier_arena::tournament::swiss_table_sizes(entries, t.seats.max(2) as usize)
                .into_iter()
                .map(|k| per_table(k as i64))
                .sum::<i64>()
        }
        Some(Format::RoundRobin) | None => (entries / 2) as i64 * per_table(2),
    };
    let rounds = match Format::parse(&t.format) {
        // Before the start a round-robin's rounds are not yet set.
        Some(Format::RoundRobin) if t.status == "scheduled" => round_robin_rounds(entries),
        Some(Format::RoundRobin | Format::Swiss) | None => t.rounds,
    };
    let later = (rounds - planned_rounds).max(0) * per_round;
    planned.not_void + later
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournaments::test_games::planned;
    use std::collections::HashSet;

    #[test]
    fn a_round_robin_meets_every_pair_once() {
        for n in 2..=13 {
            let mut met = HashSet::new();
            for round in 1..=round_robin_rounds(n) {
                let mut seen = HashSet::new();
                for (a, b) in round_robin_pairs(n, round) {
                    assert!(a != b && a < n && b < n);
                    assert!(seen.insert(a) && seen.insert(b), "n={n} round {round}");
                    assert!(met.insert((a.min(b), a.max(b))), "n={n}: {a}-{b} twice");
                }
            }
            assert_eq!(met.len(), n * (n - 1) / 2, "n={n}");
        }
    }

    /// Every set of games over rounds 0 to 4 (each round empty, over, or
    /// with a game still open, in either order), against every current
    /// round from −1 to 6: the complete rounds are those `round_complete`
    /// says are over, from round 1 on.
    #[test]
    fn the_complete_rounds_are_the_rounds_over_from_the_first() {
        let game = |round: i64, status: &str| planned(round, "1,2", status);
        let kinds: [&[&str]; 5] = [
            &[],
            &["done"],
            &["void", "done"],
            &["done", "running"],
            &["pending"],
        ];
        for code in 0..5usize.pow(5) {
            let mut games = Vec::new();
            for round in 0..5 {
                let kind = kinds[code / 5usize.pow(round as u32) % 5];
                games.extend(kind.iter().map(|s| game(round, s)));
            }
            games.reverse();
            for current in -1..=6 {
                let expected = (1..=current)
                    .take_while(|r| round_complete(&games, *r))
                    .last()
                    .unwrap_or(0);
                assert_eq!(
                    complete_rounds(&games, current),
                    expected,
                    "{code} {current}"
                );
            }
        }
    }

    #[test]
    fn game_points_count_every_opponent() {
        assert_eq!(game_points(&[1, 2]), vec![2, 0]);
        assert_eq!(game_points(&[1, 1]), vec![1, 1]);
        assert_eq!(game_points(&[2, 1, 2]), vec![1, 4, 1]);
    }
}
