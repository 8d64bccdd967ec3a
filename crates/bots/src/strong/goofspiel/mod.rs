//! Goofspiel `strong`: every turn is a simultaneous-move matrix game.
//!
//! The payoff of a pair of bids is the lot it wins or loses plus the value of
//! the position it leads to, in expected point difference over the rest of
//! the round. Positions with few cards left are valued exactly (chance over
//! the unseen prize order, each turn a matrix game solved by the simplex
//! method, memoised for the whole game); larger ones by a card-advantage
//! estimate. The bot then samples its bid from the optimal mixed strategy
//! with its seeded generator, so a copying or predicting opponent cannot
//! exploit it.
//!
//! It also keeps a two-model belief about the opponent, read from the bids
//! shown in its observation: "plays the equilibrium" (the column player's
//! optimal strategy of each past turn, computed the same way) against
//! "bids uniformly at random". As the posterior of the random model rises
//! above 0.6, up to 90% of the weight moves from the equilibrium to the best
//! response against the model's mixture; against an equilibrium-like or
//! unpredictable-but-not-random opponent it stays at the equilibrium. Every
//! choice is a fixed computation from the observation: deterministic given
//! the seed.

mod solver;

use std::collections::HashMap;

use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielObservation, GoofspielVariant, TieRule};
use croupier_rules::Seat;
use rand::seq::SliceRandom;
use rand::Rng;

use super::{matrix, Budget};
use crate::{BotRng, Strategy};
use solver::{cards, mask};
pub use solver::{estimate, Solver, CUT_CARDS, EXACT_CARDS};

/// The `strong` Goofspiel strategy.
#[derive(Debug, Default, Clone)]
pub struct Strong {
    budget: Budget,
    solver: Solver,
    carry_ties: bool,
    /// The opponent model's column strategy for past turns, by (round,
    /// turn): (their cards ascending, equilibrium probabilities).
    cache: HashMap<(usize, usize), (Vec<u8>, Vec<f64>)>,
    /// When the decision under way began (the rollouts get what is left
    /// of a time budget).
    started: Option<std::time::Instant>,
}

/// Resolved turns the opponent model reads (the most recent ones).
pub const MODEL_TURNS: usize = 16;
/// Least probability the equilibrium model gives any bid (so that one
/// surprising bid does not settle the question).
const MODEL_FLOOR: f64 = 0.02;
/// How often the copying model bids the card of the prize's value.
const COPIED: f64 = 0.7;
/// Most weight moved from the equilibrium to the best response.
pub const MAX_EXPLOIT: f64 = 0.9;
/// Posterior of the random model from which the best response is found
/// by rollouts that maximise the chance to win (below it, by one step of
/// the equilibrium-valued turn matrix).
pub const ROLLOUT_BELIEF: f64 = 0.8;
/// Most rollouts per decision (each plays every candidate once).
pub const ROLLOUTS: u32 = 3000;

/// One turn's position: (my hand, their hand, undrawn prizes, lot value).
type Position = (u32, u32, u32, u32);

impl Strong {
    /// A strategy with the given thinking budget. Its work per decision is
    /// a fixed computation, except on the turn where exact values first
    /// become reachable (hands of [`EXACT_CARDS`] + 1): with a time budget,
    /// positions it has no time left to solve are estimated.
    pub fn new(budget: Budget) -> Self {
        Strong {
            budget,
            ..Strong::default()
        }
    }

    /// The turn matrix of `pos` and the optimal mixed strategies of both
    /// sides (rows mine, columns theirs, cards ascending).
    fn solve(&mut self, pos: Position) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let (mine, theirs, undrawn, lot) = pos;
        let (r, c) = (mine.count_ones() as usize, theirs.count_ones() as usize);
        let m = self.solver.turn_matrix(mine, theirs, undrawn, lot);
        let row = matrix::solve(&m, r, c).row;
        let mut t = vec![0.0; r * c];
        for i in 0..r {
            for j in 0..c {
                t[j * r + i] = -m[i * c + j];
            }
        }
        let col = matrix::solve(&t, c, r).row;
        (m, row, col)
    }

    /// The position of turn `turn` of round `round` as `obs`'s history
    /// shows it, before the bids.
    fn past_position(
        obs: &GoofspielObservation,
        round: usize,
        turn: usize,
        carry: bool,
    ) -> Position {
        let n = obs.rounds.get(round).copied().unwrap_or(0).min(31);
        let all: u32 = (1..=u32::from(n)).fold(0, |m, c| m | (1 << c));
        let turns = &obs.history[round][..turn];
        let (mut mine, mut theirs, mut undrawn, mut lot) = (all, all, all, 0u32);
        for t in turns {
            mine &= !(1u32 << t.bids[0].min(31));
            theirs &= !(1u32 << t.bids[1].min(31));
            undrawn &= !(1u32 << t.drawn.min(31));
            lot += u32::from(t.drawn);
            if !(carry && t.bids[0] == t.bids[1]) {
                lot = 0;
            }
        }
        let now = obs.history[round][turn].drawn;
        undrawn &= !(1u32 << now.min(31));
        (mine, theirs, undrawn, lot + u32::from(now))
    }

    /// The posterior probability that the opponent bids uniformly at random
    /// rather than by the equilibrium or by copying the prize (bidding the
    /// card of the prize's value [`COPIED`] of the time, a common simple
    /// bot), from its recent bids (equal priors).
    fn random_belief(&mut self, obs: &GoofspielObservation) -> f64 {
        let mut turns: Vec<(usize, usize)> = obs
            .history
            .iter()
            .enumerate()
            .flat_map(|(r, ts)| (0..ts.len()).map(move |t| (r, t)))
            .collect();
        let skip = turns.len().saturating_sub(MODEL_TURNS);
        turns.drain(..skip);
        let mut log_ratio = 0.0; // ln P(bids | equilibrium) − ln P(bids | random)
        let mut copier = 0.0; // ln P(bids | copier) − ln P(bids | random)
        for (r, t) in turns {
            let bid = obs.history[r][t].bids[1];
            let drawn = obs.history[r][t].drawn;
            let (theirs, probs) = match self.cache.get(&(r, t)) {
                Some(v) => v.clone(),
                None => {
                    let pos = Self::past_position(obs, r, t, self.carry_ties);
                    if pos.0.count_ones() != pos.1.count_ones() || pos.1 & (1 << bid.min(31)) == 0 {
                        continue;
                    }
                    let (_, _, col) = self.solve(pos);
                    let v = (cards(pos.1).map(|c| c as u8).collect::<Vec<u8>>(), col);
                    self.cache.insert((r, t), v.clone());
                    v
                }
            };
            let p = theirs
                .iter()
                .position(|c| *c == bid)
                .map_or(0.0, |i| probs[i]);
            let n = theirs.len().max(1) as f64;
            log_ratio += p.max(MODEL_FLOOR).ln() + n.ln();
            if n > 1.0 && theirs.contains(&drawn) {
                copier += if bid == drawn {
                    (COPIED * n).ln()
                } else {
                    ((1.0 - COPIED) * n / (n - 1.0)).ln()
                };
            }
        }
        let ratio = log_ratio.clamp(-50.0, 50.0).exp() + copier.clamp(-50.0, 50.0).exp();
        1.0 / (1.0 + ratio)
    }

    /// The mixed strategy over this seat's hand (cards ascending) for the
    /// turn `obs` shows, or `None` when there is nothing to decide: the
    /// equilibrium, shifted towards the best response to an opponent that
    /// bids at random as far as its past bids make that likely. Once that
    /// is likely enough ([`ROLLOUT_BELIEF`]), the best response is the card
    /// with the best chance to win the match against a uniform bidder, by
    /// rollouts ([`Strong::rollout_best`]) drawn with `rng`.
    pub fn mixed(
        &mut self,
        obs: &GoofspielObservation,
        rng: &mut BotRng,
    ) -> Option<(Vec<u8>, Vec<f64>)> {
        let mine = mask(&obs.hand);
        let theirs = mask(&obs.opponent_hand);
        if mine == 0 || theirs == 0 {
            return None;
        }
        let lot: u32 = obs.lot.iter().map(|c| u32::from(*c)).sum();
        let undrawn = mask(&obs.undrawn);
        let (m, mut row, col) = self.solve((mine, theirs, undrawn, lot));
        let (r, c) = (row.len(), col.len());
        let u = self.random_belief(obs);
        let w = MAX_EXPLOIT * ((u - 0.6) / 0.35).clamp(0.0, 1.0);
        if w > 0.0 {
            // The best response to the model's mixture of both opponents.
            let q: Vec<f64> = col.iter().map(|p| u / c as f64 + (1.0 - u) * p).collect();
            let one_step = || {
                (0..r)
                    .max_by(|a, b| {
                        let va: f64 = (0..c).map(|j| m[a * c + j] * q[j]).sum();
                        let vb: f64 = (0..c).map(|j| m[b * c + j] * q[j]).sum();
                        va.total_cmp(&vb)
                    })
                    .unwrap_or(0)
            };
            let best = if u >= ROLLOUT_BELIEF {
                self.rollout_best(obs, lot, rng).unwrap_or_else(one_step)
            } else {
                one_step()
            };
            for (i, x) in row.iter_mut().enumerate() {
                *x = (1.0 - w) * *x + if i == best { w } else { 0.0 };
            }
        }
        Some((cards(mine).map(|c| c as u8).collect(), row))
    }

    /// The card of this seat's hand (index, cards ascending) with the best
    /// chance to win the match against an opponent bidding uniformly at
    /// random: every sample draws the opponent's remaining bids and the
    /// prize order once and plays each candidate against them (common
    /// random numbers), this seat then bidding by rank (its k-th lowest
    /// card on the k-th lowest prize left); a win counts 1, a draw ½. Only
    /// this round is played out; match points so far count.
    fn rollout_best(
        &self,
        obs: &GoofspielObservation,
        lot: u32,
        rng: &mut BotRng,
    ) -> Option<usize> {
        let mut mine: Vec<u8> = obs.hand.clone();
        mine.sort_unstable();
        let theirs: Vec<u8> = obs.opponent_hand.clone();
        let undrawn: Vec<u8> = obs.undrawn.clone();
        let n = mine.len();
        if n < 2 || theirs.len() != n || undrawn.len() + 1 != n {
            return None;
        }
        let diff0 = i64::from(obs.my_points) - i64::from(obs.opponent_points);
        let next = obs.next;
        let carry_ties = self.carry_ties;
        let width = n + 1;
        let mut budget = self.budget;
        if let Some(t0) = self.started {
            budget.think = budget.think.saturating_sub(t0.elapsed());
        }
        // Hands and prizes left as bit masks (cards < 32), the sampled
        // orders on the stack: a rollout allocates nothing.
        let mine_mask = mask(&mine);
        let undrawn_mask = mask(&undrawn);
        let (mut bids0, mut prizes0) = ([0u8; 32], [0u8; 32]);
        bids0[..n].copy_from_slice(&theirs);
        prizes0[..n - 1].copy_from_slice(&undrawn);
        let (totals, _) = budget.search(rng, width, |t, r| {
            if t[n] >= f64::from(ROLLOUTS) {
                return false;
            }
            t[n] += 1.0;
            let mut bids = bids0;
            bids[..n].shuffle(r);
            let mut prizes = prizes0;
            prizes[..n - 1].shuffle(r);
            if let Some(k) = next.and_then(|x| prizes[..n - 1].iter().position(|p| *p == x)) {
                prizes.swap(0, k);
            }
            let settle = |a: u8, b: u8, pot: &mut i64, diff: &mut i64| {
                match a.cmp(&b) {
                    std::cmp::Ordering::Greater => *diff += *pot,
                    std::cmp::Ordering::Less => *diff -= *pot,
                    std::cmp::Ordering::Equal => {}
                }
                if a != b || !carry_ties {
                    *pot = 0;
                }
            };
            for (i, &a) in mine.iter().enumerate() {
                let mut hand = mine_mask & !(1u32 << a);
                let mut left = undrawn_mask;
                let mut diff = diff0;
                let mut pot = i64::from(lot);
                settle(a, bids[0], &mut pot, &mut diff);
                for (k, &p) in prizes[..n - 1].iter().enumerate() {
                    // This seat's card of the prize's rank among those left.
                    let rank = (left & ((1u32 << p) - 1)).count_ones();
                    left &= !(1u32 << p);
                    let mut h = hand;
                    for _ in 0..rank.min(hand.count_ones().saturating_sub(1)) {
                        h &= h - 1;
                    }
                    let card = h.trailing_zeros() as u8;
                    hand &= !(1u32 << card);
                    pot += i64::from(p);
                    settle(card, bids[k + 1], &mut pot, &mut diff);
                }
                t[i] += match diff.cmp(&0) {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                };
            }
            true
        });
        (0..n).max_by(|a, b| totals[*a].total_cmp(&totals[*b]).then(b.cmp(a)))
    }
}

impl Strategy<Goofspiel> for Strong {
    fn new_game(&mut self, _seat: Seat, variant: &GoofspielVariant, _seats: usize) {
        self.solver = Solver::new(variant);
        self.carry_ties = variant.ties == TieRule::Carry;
        self.cache.clear();
    }

    fn act(&mut self, obs: &GoofspielObservation, legal: &[Bid], rng: &mut BotRng) -> Bid {
        self.started = Some(std::time::Instant::now());
        self.solver.set_deadline(match self.budget.iterations {
            Some(_) => None,
            None => Some(std::time::Instant::now() + self.budget.think.mul_f64(super::HARD_STOP)),
        });
        let Some((hand, probs)) = self.mixed(obs, rng) else {
            return legal[0];
        };
        let r: f64 = rng.random();
        let mut acc = 0.0;
        let mut pick = hand.last().copied();
        for (c, p) in hand.iter().zip(&probs) {
            acc += p;
            if r < acc {
                pick = Some(*c);
                break;
            }
        }
        pick.map(Bid)
            .filter(|b| legal.contains(b))
            .unwrap_or(legal[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copying_bot_is_not_taken_for_a_random_bidder() {
        use croupier_rules::Game;
        use rand::seq::IndexedRandom;
        let belief_after = |seed: u64, rule: u8| -> f64 {
            let v = GoofspielVariant::gops();
            let mut g = Goofspiel::new(&v, 2, seed).expect("a game");
            let mut rng = crate::bot_rng(seed);
            for _ in 0..9 {
                let o1 = g.observation(Seat(1));
                let mine = g.legal_vec(Seat(0))[0];
                let theirs = match rule {
                    1 => Bid(o1.current.unwrap_or(1)),
                    _ => *g.legal_vec(Seat(1)).choose(&mut rng).expect("a bid"),
                };
                g.apply(Seat(0), mine).expect("legal");
                g.apply(Seat(1), theirs).expect("legal");
            }
            let mut s = Strong::new(Budget::iterations(1));
            s.new_game(Seat(0), &v, 2);
            s.random_belief(&g.observation(Seat(0)))
        };
        let mut random = 0.0;
        for seed in 0..10 {
            assert!(belief_after(seed, 1) < 0.01, "prize's value, seed {seed}");
            random += belief_after(seed, 2) / 10.0;
        }
        assert!(random > 0.7, "random bidders: mean posterior {random}");
    }

    /// Against a uniform bidder the rollouts find the card that wins the
    /// match: with {1, 13} against {2, 12}, a lot of 10 and the 1 to come,
    /// the 13 now wins 10 and loses 1; the 1 now loses the match.
    #[test]
    fn rollouts_spend_the_sure_winner_on_the_big_lot() {
        let obs = GoofspielObservation {
            seat: Seat(0),
            rounds: vec![13],
            round: 0,
            hand: vec![1, 13],
            opponent_hand: vec![2, 12],
            lot: vec![10],
            current: Some(10),
            next: None,
            undrawn: vec![1],
            my_bid: None,
            opponent_has_bid: false,
            my_points: 40,
            opponent_points: 40,
            history: vec![vec![]],
        };
        let s = Strong::new(Budget::iterations(50));
        let mut rng = crate::bot_rng(3);
        assert_eq!(s.rollout_best(&obs, 10, &mut rng), Some(1));
        // 5 points behind: only the 13 now wins the match (by 4).
        let behind = GoofspielObservation {
            my_points: 35,
            ..obs.clone()
        };
        assert_eq!(s.rollout_best(&behind, 10, &mut rng), Some(1));
    }

}
