//! Swiss pairing: who plays whom in the next round. Pure: no I/O, no clock,
//! no randomness of its own (the seeded part is [`seeding`]).
//!
//! Players are looked at best first: by score, then by pairing number (their
//! place in the seeding: by rating when ratings are known, otherwise a
//! shuffle drawn from the tournament's seed).
//!
//! Two-player games ([`Tables::Pairs`]), in order of importance:
//! 1. with an odd number of players one gets a bye: never a second bye while
//!    another player has had fewer, and among those the lowest placed whose
//!    absence still allows the fewest repeated pairings;
//! 2. no pairing repeats while a pairing of the round without that repeat
//!    exists (checked exactly with maximum matchings of the graph of pairs
//!    that have not met yet);
//! 3. score groups: the best unpaired player meets a player of its own score
//!    group, the one half-way down the group first ("slide": 1 against
//!    n/2+1), floating down to the next group only when its own group cannot
//!    give it a partner that keeps (2) possible.
//!
//! Games of up to `max` players ([`Tables::UpTo`], Love Letter): the players
//! sit at as few tables as `max` allows, of sizes that differ by at most one
//! (never fewer than two), so nobody sits out. Tables are filled best first:
//! the best unseated player opens a table, and each seat goes to the
//! unseated player who has met the table's players least often, the best
//! placed among equals.

use petgraph::algo::maximum_matching;
use petgraph::graph::{NodeIndex, UnGraph};
use serde::Serialize;

/// A player: an index into the tournament's list of entries.
pub type Player = usize;

/// How players are seated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tables {
    /// Two players per table; with an odd number of players, one bye.
    Pairs,
    /// Tables of two to `max` players (`max` at least 3), no byes.
    UpTo(usize),
}

impl Tables {
    /// Tables of at most `max` players (`max` 2 means pairs).
    pub fn up_to(max: usize) -> Tables {
        if max <= 2 {
            Tables::Pairs
        } else {
            Tables::UpTo(max)
        }
    }
}

/// Who has met whom, and who has had byes, in the rounds so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    n: usize,
    met: Vec<u32>,
    byes: Vec<u32>,
}

impl History {
    /// No rounds yet, `n` players.
    pub fn new(n: usize) -> History {
        History {
            n,
            met: vec![0; n * n],
            byes: vec![0; n],
        }
    }

    /// Number of players.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no players.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// How often `a` and `b` sat at the same table.
    pub fn met(&self, a: Player, b: Player) -> u32 {
        self.met[a * self.n + b]
    }

    /// How many byes `p` had.
    pub fn byes(&self, p: Player) -> u32 {
        self.byes[p]
    }

    /// Counts a round that was played.
    pub fn record(&mut self, round: &Round) {
        for table in &round.tables {
            for &a in table {
                for &b in table {
                    if a != b {
                        self.met[a * self.n + b] += 1;
                    }
                }
            }
        }
        for &p in &round.byes {
            self.byes[p] += 1;
        }
    }
}

/// One round's seating: each table lists its players best placed first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Round {
    /// The tables.
    pub tables: Vec<Vec<Player>>,
    /// Players who sit this round out (and score a bye).
    pub byes: Vec<Player>,
}

/// Input that cannot be paired.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingError {
    /// Fewer than two players.
    #[error("a Swiss round needs at least two players, not {0}")]
    TooFew(usize),
    /// Scores, history and seeding disagree on the number of players, or the
    /// seeding is not a permutation of the players.
    #[error("pairing input is inconsistent: {0}")]
    Inconsistent(String),
}

/// The pairing numbers: players best first. With ratings, by rating (ties
/// drawn from `seed`); without, in an order drawn from `seed`.
pub fn seeding(n: usize, ratings: Option<&[f64]>, seed: u64) -> Vec<Player> {
    let key = |p: Player| crate::seeds::game(seed ^ 0x5_3715_5000, p as u64);
    let mut order: Vec<Player> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let by_rating = match ratings {
            Some(r) => r.get(b).unwrap_or(&0.0).total_cmp(r.get(a).unwrap_or(&0.0)),
            None => std::cmp::Ordering::Equal,
        };
        by_rating.then(key(a).cmp(&key(b)))
    });
    order
}

/// The seating of the next round. `seeding` lists every player once (best
/// pairing number first), `scores[p]` is `p`'s score so far (any unit).
pub fn pair_round(
    seeding: &[Player],
    scores: &[u32],
    history: &History,
    tables: Tables,
) -> Result<Round, PairingError> {
    let n = seeding.len();
    if scores.len() != n || history.len() != n {
        return Err(PairingError::Inconsistent(format!(
            "{n} in the seeding, {} scores, {} in the history",
            scores.len(),
            history.len()
        )));
    }
    let mut seen = vec![false; n];
    for &p in seeding {
        if p >= n || std::mem::replace(&mut seen[p], true) {
            return Err(PairingError::Inconsistent(format!(
                "player {p} is out of range or listed twice"
            )));
        }
    }
    if n < 2 {
        return Err(PairingError::TooFew(n));
    }
    // Best first: score, then pairing number (a stable sort keeps seeding).
    let mut ranked = seeding.to_vec();
    ranked.sort_by(|a, b| scores[*b].cmp(&scores[*a]));
    Ok(match tables {
        Tables::Pairs => pairs(ranked, scores, history),
        Tables::UpTo(max) => seat_tables(ranked, history, max),
    })
}

/// Table sizes for `n` players at tables of at most `max`: as few tables as
/// possible, sizes differing by at most one, largest first.
pub fn table_sizes(n: usize, max: usize) -> Vec<usize> {
    if n == 0 || max == 0 {
        return Vec::new();
    }
    let t = n.div_ceil(max);
    (0..t).map(|i| n / t + usize::from(i < n % t)).collect()
}

/// The size of a maximum matching in the graph of `players` whose edges
/// join players who have not met: the most pairs without a repeat.
fn most_new_pairs(players: &[Player], history: &History) -> usize {
    if players.len() < 2 {
        return 0;
    }
    let mut g = UnGraph::<(), ()>::with_capacity(players.len(), players.len() * 4);
    let nodes: Vec<NodeIndex> = players.iter().map(|_| g.add_node(())).collect();
    for i in 0..players.len() {
        for j in i + 1..players.len() {
            if history.met(players[i], players[j]) == 0 {
                g.add_edge(nodes[i], nodes[j], ());
            }
        }
    }
    maximum_matching(&g).len()
}

fn pairs(mut rest: Vec<Player>, scores: &[u32], history: &History) -> Round {
    let mut byes = Vec::new();
    if rest.len() % 2 == 1 {
        // Among those with the fewest byes, from the bottom up, the first
        // whose absence allows the most pairs without a repeat.
        let fewest = rest.iter().map(|&p| history.byes(p)).min().unwrap_or(0);
        let mut best: Option<(usize, usize)> = None; // (new pairs, index)
        for i in (0..rest.len()).rev() {
            if history.byes(rest[i]) != fewest {
                continue;
            }
            let mut others = rest.clone();
            others.remove(i);
            let m = most_new_pairs(&others, history);
            if best.is_none_or(|(b, _)| m > b) {
                best = Some((m, i));
            }
            if m == others.len() / 2 {
                break;
            }
        }
        if let Some((_, i)) = best {
            byes.push(rest.remove(i));
        }
    }
    let mut target = most_new_pairs(&rest, history);
    let mut tables = Vec::with_capacity(rest.len() / 2);
    while rest.len() >= 2 {
        let p = rest[0];
        let order = candidates(&rest, scores);
        // The first candidate that keeps `target` new pairs possible; there
        // is always one (the maximum matching's partner of p, for one).
        let mut chosen = order[0];
        for &i in &order {
            let q = rest[i];
            let new = usize::from(history.met(p, q) == 0);
            if new + (rest.len() - 2) / 2 < target {
                continue; // cannot reach `target` even if all others are new
            }
            let others: Vec<Player> = rest
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != 0 && *k != i)
                .map(|(_, &x)| x)
                .collect();
            if new + most_new_pairs(&others, history) >= target {
                chosen = i;
                break;
            }
        }
        let q = rest[chosen];
        target = target.saturating_sub(usize::from(history.met(p, q) == 0));
        tables.push(vec![p, q]);
        rest.remove(chosen);
        rest.remove(0);
    }
    Round { tables, byes }
}

/// Indices into `rest` (best first) of the partners for `rest[0]`, in order
/// of preference: its score group from half-way down, then the rest of the
/// group upwards, then the lower groups best first.
fn candidates(rest: &[Player], scores: &[u32]) -> Vec<usize> {
    let top = scores[rest[0]];
    let g = rest.iter().take_while(|&&p| scores[p] == top).count();
    let half = (g / 2).max(1);
    let mut order: Vec<usize> = (half..g).collect();
    order.extend((1..half).rev());
    order.extend(g..rest.len());
    order
}

fn seat_tables(mut rest: Vec<Player>, history: &History, max: usize) -> Round {
    let mut tables = Vec::new();
    for size in table_sizes(rest.len(), max) {
        let mut table = vec![rest.remove(0)];
        while table.len() < size && !rest.is_empty() {
            let meetings = |q: Player| table.iter().map(|&m| history.met(m, q)).sum::<u32>();
            let mut best = 0;
            for i in 1..rest.len() {
                if meetings(rest[i]) < meetings(rest[best]) {
                    best = i;
                }
            }
            table.push(rest.remove(best));
        }
        tables.push(table);
    }
    Round {
        tables,
        byes: Vec::new(),
    }
}

#[cfg(test)]
#[path = "swiss_tests.rs"]
mod tests;
