//! Standings of a Swiss tournament: points per round, tie-breaks and the
//! crosstable. Pure: results in, ordered rows out.
//!
//! - A table is a match. Each member's *game points* are counted over the
//!   table's games: for every game and every other member, 2 for finishing
//!   ahead, 1 for finishing level. Members are then placed by game points,
//!   and the match gives, for every other member, a full share for being
//!   ahead and half a share for being level, a share being `1/(k-1)` of a
//!   point at a table of `k`: a 2-player match gives 1, ½ or 0, the winner
//!   of a 4-player table 1 and its last 0. A bye scores 1.
//! - Points are kept in twelfths ([`POINT`]) so tables of 2, 3 and 4 add up
//!   exactly.
//! - Ties are broken by (1) Buchholz: the sum of the final points of every
//!   opponent, each table's opponents weighted `1/(k-1)`; a bye counts as an
//!   opponent with the player's own points; (2) head-to-head: the points of
//!   the results among the players still tied, counting only their meetings;
//!   (3) rating; (4) pairing number.

use serde::Serialize;

use super::swiss::Player;

/// One point, in the unit points are kept in.
pub const POINT: u32 = 12;

/// The points (twelfths) each member of a table of `game_points.len()`
/// members earns, from the game points they scored at it.
pub fn table_points(game_points: &[u64]) -> Vec<u32> {
    let k = game_points.len();
    if k < 2 {
        return vec![POINT; k];
    }
    game_points
        .iter()
        .map(|mine| {
            let halves: u32 = game_points
                .iter()
                .map(|theirs| duel(*mine, *theirs))
                .sum::<u32>()
                - 1; // itself counted as level
            halves * (POINT / 2) / (k as u32 - 1)
        })
        .collect()
}

/// Half-points of one pairwise result: 2 ahead, 1 level, 0 behind.
fn duel(mine: u64, theirs: u64) -> u32 {
    match mine.cmp(&theirs) {
        std::cmp::Ordering::Greater => 2,
        std::cmp::Ordering::Equal => 1,
        std::cmp::Ordering::Less => 0,
    }
}

/// One table of one round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableResult {
    /// The players, as seated by the pairing.
    pub bots: Vec<Player>,
    /// Game points each scored at the table (2 per opponent finished ahead
    /// of in a game, 1 per opponent level).
    pub game_points: Vec<u64>,
    /// Points each earned, in twelfths.
    #[serde(skip)]
    pub twelfths: Vec<u32>,
    /// Points each earned.
    pub points: Vec<f64>,
}

/// One round: its tables and byes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundResult {
    /// Round number, from 1.
    pub round: u32,
    /// Tables.
    pub tables: Vec<TableResult>,
    /// Players who had a bye.
    pub byes: Vec<Player>,
}

/// What one player did in one round (a crosstable cell).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The opponents at its table (empty for a bye).
    pub opponents: Vec<Player>,
    /// Points earned.
    pub points: f64,
    /// Whether it was a bye.
    pub bye: bool,
}

/// One line of the final standings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StandingRow {
    /// Place, from 1.
    pub rank: usize,
    /// The bot (index into the tournament's bots).
    pub bot: Player,
    /// Points.
    pub points: f64,
    /// Buchholz.
    pub buchholz: f64,
    /// Points against the players tied with it on points and Buchholz.
    pub head_to_head: f64,
    /// The rating used as the third tie-break.
    pub rating: f64,
    /// Byes received.
    pub byes: u32,
    /// Round by round (the crosstable).
    pub rounds: Vec<Cell>,
}

/// Results so far.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Standings {
    n: usize,
    points: Vec<u32>,
    duels: Vec<u32>,
    rounds: Vec<RoundResult>,
}

impl Standings {
    /// No results yet, `n` players.
    pub fn new(n: usize) -> Standings {
        Standings {
            n,
            points: vec![0; n],
            duels: vec![0; n * n],
            rounds: Vec::new(),
        }
    }

    /// Points so far (twelfths), per player.
    pub fn points(&self) -> &[u32] {
        &self.points
    }

    /// The rounds so far.
    pub fn rounds(&self) -> &[RoundResult] {
        &self.rounds
    }

    /// Adds a round: each table with its players' game points, and byes.
    pub fn add_round(&mut self, tables: Vec<(Vec<Player>, Vec<u64>)>, byes: Vec<Player>) {
        let mut results = Vec::with_capacity(tables.len());
        for (bots, game_points) in tables {
            let twelfths = table_points(&game_points);
            for (i, &a) in bots.iter().enumerate() {
                self.points[a] += twelfths[i];
                for (j, &b) in bots.iter().enumerate() {
                    if i != j {
                        self.duels[a * self.n + b] += duel(game_points[i], game_points[j]);
                    }
                }
            }
            let points = twelfths
                .iter()
                .map(|t| f64::from(*t) / f64::from(POINT))
                .collect();
            results.push(TableResult {
                bots,
                game_points,
                twelfths,
                points,
            });
        }
        for &b in &byes {
            self.points[b] += POINT;
        }
        self.rounds.push(RoundResult {
            round: self.rounds.len() as u32 + 1,
            tables: results,
            byes,
        });
    }

    /// Buchholz of every player, in 1/144 of a point.
    fn buchholz(&self) -> Vec<u64> {
        let mut b = vec![0u64; self.n];
        for round in &self.rounds {
            for t in &round.tables {
                let weight = u64::from(POINT) / (t.bots.len() as u64 - 1).max(1);
                for &p in &t.bots {
                    for &o in &t.bots {
                        if o != p {
                            b[p] += u64::from(self.points[o]) * weight;
                        }
                    }
                }
            }
            for &p in &round.byes {
                b[p] += u64::from(self.points[p]) * u64::from(POINT);
            }
        }
        b
    }

    /// The final standings, best first. `ratings[p]` is the third
    /// tie-break; `seeding` lists pairing numbers (best first), the last.
    pub fn rows(&self, ratings: &[f64], seeding: &[Player]) -> Vec<StandingRow> {
        let buchholz = self.buchholz();
        let rating = |p: Player| ratings.get(p).copied().unwrap_or(0.0);
        let mut number = vec![usize::MAX; self.n];
        for (i, &p) in seeding.iter().enumerate() {
            if p < self.n {
                number[p] = i;
            }
        }
        let mut order: Vec<Player> = (0..self.n).collect();
        order.sort_by(|&a, &b| (self.points[b], buchholz[b]).cmp(&(self.points[a], buchholz[a])));
        // Head-to-head inside each block tied on points and Buchholz.
        let mut h2h = vec![0u32; self.n];
        let mut start = 0;
        while start < order.len() {
            let key = |p: Player| (self.points[p], buchholz[p]);
            let end = start
                + order[start..]
                    .iter()
                    .take_while(|&&p| key(p) == key(order[start]))
                    .count();
            let block = &mut order[start..end];
            for &p in block.iter() {
                h2h[p] = block
                    .iter()
                    .map(|&q| {
                        if q == p {
                            0
                        } else {
                            self.duels[p * self.n + q]
                        }
                    })
                    .sum();
            }
            block.sort_by(|&a, &b| {
                h2h[b]
                    .cmp(&h2h[a])
                    .then(rating(b).total_cmp(&rating(a)))
                    .then(number[a].cmp(&number[b]))
            });
            start = end;
        }
        let mut cells = self.cells();
        order
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let rounds = std::mem::take(&mut cells[p]);
                StandingRow {
                    rank: i + 1,
                    bot: p,
                    points: f64::from(self.points[p]) / f64::from(POINT),
                    buchholz: buchholz[p] as f64 / f64::from(POINT * POINT),
                    head_to_head: f64::from(h2h[p]) / 2.0,
                    rating: rating(p),
                    byes: rounds.iter().filter(|c| c.bye).count() as u32,
                    rounds,
                }
            })
            .collect()
    }

    /// Each player's cell of each round: in one pass over the rounds (a
    /// round-robin of 256 has 255 rounds of 128 tables).
    fn cells(&self) -> Vec<Vec<Cell>> {
        let none = Cell {
            opponents: Vec::new(),
            points: 0.0,
            bye: false,
        };
        let mut cells = vec![vec![none; self.rounds.len()]; self.n];
        let mut seen = vec![false; self.n];
        for (k, r) in self.rounds.iter().enumerate() {
            // Each player's first table of the round, unless it had a bye.
            seen.fill(false);
            for &p in &r.byes {
                if p < self.n && !seen[p] {
                    seen[p] = true;
                    cells[p][k] = Cell {
                        opponents: Vec::new(),
                        points: 1.0,
                        bye: true,
                    };
                }
            }
            for t in &r.tables {
                for (i, &p) in t.bots.iter().enumerate() {
                    if p < self.n && !seen[p] {
                        seen[p] = true;
                        cells[p][k] = Cell {
                            opponents: t.bots.iter().copied().filter(|&b| b != p).collect(),
                            points: t.points[i],
                            bye: false,
                        };
                    }
                }
            }
        }
        cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_player_matches_give_one_half_nothing() {
        assert_eq!(table_points(&[10, 4]), vec![12, 0]);
        assert_eq!(table_points(&[7, 7]), vec![6, 6]);
    }

    #[test]
    fn tables_share_one_point_per_place_step() {
        // Four players: first 1, second 2/3, third 1/3, last 0.
        assert_eq!(table_points(&[9, 5, 3, 1]), vec![12, 8, 4, 0]);
        // Two level at the top of three share (1 + 1/2) / 2 each.
        assert_eq!(table_points(&[4, 4, 0]), vec![9, 9, 0]);
        // Points of a table always add up to k/2 points.
        for t in [vec![1u64, 2, 3], vec![5, 5, 5, 5], vec![0, 9, 9, 2]] {
            let sum: u32 = table_points(&t).iter().sum();
            assert_eq!(sum as usize, t.len() * POINT as usize / 2);
        }
    }

    #[test]
    fn buchholz_then_head_to_head_then_rating_break_ties() {
        // Round 1: 0 beats 1, 2 beats 3. Round 2: 0 beats 2, 3 beats 1.
        // Round 3: 1 beats 2, 0 and 3 draw.
        let mut s = Standings::new(4);
        s.add_round(
            vec![(vec![0, 1], vec![2, 0]), (vec![2, 3], vec![2, 0])],
            vec![],
        );
        s.add_round(
            vec![(vec![0, 2], vec![2, 0]), (vec![3, 1], vec![2, 0])],
            vec![],
        );
        s.add_round(
            vec![(vec![1, 2], vec![2, 0]), (vec![0, 3], vec![1, 1])],
            vec![],
        );
        // Points: 0: 2.5, 1: 1, 2: 1, 3: 1.5.
        let rows = s.rows(&[0.0; 4], &[0, 1, 2, 3]);
        let order: Vec<Player> = rows.iter().map(|r| r.bot).collect();
        // 1 and 2 tie on points; Buchholz: 1 met 0 (2.5), 3 (1.5), 2 (1)
        // = 5; 2 met 3, 0, 1 = 5. Level: head-to-head 1 beat 2.
        assert_eq!(order, vec![0, 3, 1, 2]);
        assert_eq!(rows[2].buchholz, 5.0);
        assert_eq!(rows[3].buchholz, 5.0);
        assert_eq!(rows[2].head_to_head, 1.0);
        assert_eq!(rows[0].points, 2.5);
        assert_eq!(rows[0].rounds[2].opponents, vec![3]);
        assert_eq!(rows[0].rounds[2].points, 0.5);
    }

    #[test]
    fn rating_breaks_what_head_to_head_cannot() {
        // 0 and 1 never meet; both win once against others and lose once.
        let mut s = Standings::new(4);
        s.add_round(
            vec![(vec![0, 2], vec![2, 0]), (vec![1, 3], vec![2, 0])],
            vec![],
        );
        s.add_round(
            vec![(vec![0, 3], vec![0, 2]), (vec![1, 2], vec![0, 2])],
            vec![],
        );
        let rows = s.rows(&[10.0, 20.0, 0.0, 0.0], &[0, 1, 2, 3]);
        assert_eq!(rows[0].points, rows[1].points);
        assert_eq!(rows[0].buchholz, rows[1].buchholz);
        assert_eq!((rows[0].bot, rows[1].bot), (1, 0), "higher rating first");
        let rows = s.rows(&[20.0, 10.0, 0.0, 0.0], &[0, 1, 2, 3]);
        assert_eq!((rows[0].bot, rows[1].bot), (0, 1));
        let rows = s.rows(&[0.0; 4], &[1, 0, 2, 3]);
        assert_eq!((rows[0].bot, rows[1].bot), (1, 0), "then pairing number");
    }

    #[test]
    fn a_bye_scores_a_point_and_counts_own_points_for_buchholz() {
        let mut s = Standings::new(3);
        s.add_round(vec![(vec![0, 1], vec![2, 0])], vec![2]);
        let rows = s.rows(&[0.0; 3], &[0, 1, 2]);
        let bye = rows.iter().find(|r| r.bot == 2).unwrap();
        assert_eq!(bye.points, 1.0);
        assert_eq!(bye.buchholz, 1.0);
        assert_eq!(bye.byes, 1);
        assert!(bye.rounds[0].bye);
    }
}
