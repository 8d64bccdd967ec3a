//! Goofspiel `strong`: the equilibrium of every turn, and the best response
//! to the opponent in front of it once its bids give it away.
//!
//! - **Equilibrium.** Every turn is a simultaneous-move matrix game: the
//!   payoff of a pair of bids is the lot it wins or loses plus the value of
//!   the position it leads to. Small positions are valued exactly
//!   ([`Solver`]); larger ones by an estimate. The mixed strategy is found by
//!   the simplex method and sampled with the seeded generator.
//! - **Opponent model** ([`model`]). A posterior over families of bidding
//!   rules (the prize's value and fixed offsets from it, near the prize with
//!   noise, a prize-to-card table, copying, highest, lowest, uniform, seed
//!   004's Planner, and the equilibrium itself), from the bids shown.
//! - **Best response** ([`respond`]). Rollouts against the posterior's
//!   mixture of the non-equilibrium families value every card.
//! - **Safe exploitation.** The weight moved from the equilibrium to the
//!   best response grows with the posterior mass *off* the equilibrium: an
//!   opponent that bids like the equilibrium keeps `strong` there, so it is
//!   never far from equilibrium play against an opponent it cannot read.
//!
//! The evidence and the learnt table carry over (halved) to the next game
//! this strategy plays, so a series in one process reads the opponent from
//! its first turn. Every choice is a fixed computation from the observation
//! and that memory: deterministic given the seed.

#[cfg(test)]
mod exact;
pub mod model;
pub mod respond;
mod solver;

use std::collections::HashMap;

use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielObservation, GoofspielVariant, TieRule};
use croupier_rules::Seat;
use rand::Rng;

use super::{matrix, Budget};
use crate::{BotRng, Strategy};
use model::{Belief, Turn, EQUILIBRIUM};
use solver::{cards, mask};
pub use solver::{estimate, estimate_parts, Payoff, Solver, CUT_CARDS, ESTIMATE_MIX, EXACT_CARDS};

/// The `strong` Goofspiel strategy.
#[derive(Debug, Default, Clone)]
pub struct Strong {
    budget: Budget,
    solver: Solver,
    /// The endgame's solver: the last round's positions of at most
    /// [`EXACT_CARDS`] + 1 cards are played for the result, not the points.
    endgame: Solver,
    carry_ties: bool,
    /// The equilibrium's probability of the opponent's bid on past turns,
    /// by (round, turn).
    cache: HashMap<(usize, usize), Option<f64>>,
    /// What is known of the opponent from earlier games and rounds.
    belief: Belief,
    /// The latest evidence of the round under way, folded into `belief`
    /// when a new round or game begins.
    pending: Option<Pending>,
    /// When the decision under way began (the rollouts get what is left
    /// of a time budget).
    started: Option<std::time::Instant>,
}

/// The evidence of the round under way: its index, the log-likelihood of
/// each family, and the turns with the opponent's bids.
#[derive(Debug, Clone)]
struct Pending {
    round: usize,
    evidence: Vec<f64>,
    turns: Vec<(Turn, u8)>,
}

/// Most weight moved from the equilibrium to the best response.
pub const MAX_EXPLOIT: f64 = 0.95;
/// Posterior mass off the equilibrium at which exploitation begins (the
/// prior's own, so the first turn of a fresh game is equilibrium play) ...
pub const EXPLOIT_FROM: f64 = 1.0 - model::EQUILIBRIUM_PRIOR;
/// ... and at which it reaches [`MAX_EXPLOIT`].
pub const EXPLOIT_FULL: f64 = 0.9;

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

    /// The equilibrium's probability of the opponent's bid on each turn of
    /// the round under way (cached; `None` where the hands are uneven).
    fn equilibrium_odds(
        &mut self,
        obs: &GoofspielObservation,
        turns: &[(Turn, u8)],
    ) -> Vec<Option<f64>> {
        let mut lot = 0u32;
        let mut out = vec![];
        for (k, (t, bid)) in turns.iter().enumerate() {
            lot += u32::from(t.prize);
            let key = (obs.round, k);
            let p = match self.cache.get(&key) {
                Some(p) => *p,
                None => {
                    let p = if t.mine.count_ones() == t.theirs.count_ones()
                        && t.theirs & (1 << bid.min(&31)) != 0
                    {
                        let (_, _, col) = self.solve((t.mine, t.theirs, t.undrawn, lot));
                        cards(t.theirs)
                            .position(|c| c == u32::from(*bid))
                            .map(|i| col[i])
                    } else {
                        None
                    };
                    self.cache.insert(key, p);
                    p
                }
            };
            out.push(p);
            let mine_bid = obs.history[obs.round][k].bids[0];
            if !(self.carry_ties && mine_bid == *bid) {
                lot = 0;
            }
        }
        out
    }

    /// Folds the evidence of a finished round into the belief.
    fn fold_pending(&mut self) {
        if let Some(p) = self.pending.take() {
            self.belief.keep(&p.evidence, &p.turns);
        }
    }

    /// The posterior over [`FAMILIES`] for the turn `obs` shows.
    pub fn posterior(&mut self, obs: &GoofspielObservation) -> Vec<f64> {
        if self.pending.as_ref().is_some_and(|p| p.round != obs.round) {
            self.fold_pending();
        }
        let turns = model::round_turns(obs);
        let eq = self.equilibrium_odds(obs, &turns);
        let evidence = self.belief.evidence(obs, &turns, &eq);
        let post = self.belief.posterior(&evidence);
        self.pending = Some(Pending {
            round: obs.round,
            evidence,
            turns,
        });
        post
    }

    /// The mixed strategy over this seat's hand (cards ascending) for the
    /// turn `obs` shows, or `None` when there is nothing to decide: the
    /// equilibrium, moved towards the best response against the opponent
    /// model as far as the posterior's mass off the equilibrium allows.
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
        let last_round = obs.round + 1 >= obs.rounds.len();
        let mut row = if last_round && mine.count_ones() <= EXACT_CARDS + 1 {
            let ahead = obs.my_points as i32 - obs.opponent_points as i32;
            let m = self
                .endgame
                .turn_matrix_at(mine, theirs, undrawn, lot, ahead);
            let (r, c) = (mine.count_ones() as usize, theirs.count_ones() as usize);
            matrix::solve(&m, r, c).row
        } else {
            self.solve((mine, theirs, undrawn, lot)).1
        };
        let post = self.posterior(obs);
        let off = 1.0 - post[EQUILIBRIUM];
        let w =
            MAX_EXPLOIT * ((off - EXPLOIT_FROM) / (EXPLOIT_FULL - EXPLOIT_FROM)).clamp(0.0, 1.0);
        if w > 0.0 {
            let mut weights = post.clone();
            weights[EQUILIBRIUM] = 0.0;
            let spent = self.started.map(|t| t.elapsed()).unwrap_or_default();
            let against = respond::Against {
                weights: &weights,
                table: &self.belief.table,
                carry_ties: self.carry_ties,
            };
            if let Some(v) = respond::values(obs, lot, &against, self.budget, spent, rng) {
                let best = (0..v.len())
                    .max_by(|a, b| v[*a].total_cmp(&v[*b]).then(b.cmp(a)))
                    .unwrap_or(0);
                for (i, x) in row.iter_mut().enumerate() {
                    *x = (1.0 - w) * *x + if i == best { w } else { 0.0 };
                }
            }
        }
        Some((cards(mine).map(|c| c as u8).collect(), row))
    }
}

impl Strategy<Goofspiel> for Strong {
    fn new_game(&mut self, _seat: Seat, variant: &GoofspielVariant, _seats: usize) {
        self.fold_pending();
        self.solver = Solver::new(variant);
        self.endgame = Solver::with_payoff(variant, Payoff::WinLoss);
        self.carry_ties = variant.ties == TieRule::Carry;
        self.cache.clear();
    }

    fn act(&mut self, obs: &GoofspielObservation, legal: &[Bid], rng: &mut BotRng) -> Bid {
        self.started = Some(std::time::Instant::now());
        let deadline = match self.budget.iterations {
            Some(_) => None,
            None => Some(std::time::Instant::now() + self.budget.think.mul_f64(super::HARD_STOP)),
        };
        self.solver.set_deadline(deadline);
        self.endgame.set_deadline(deadline);
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
    use super::model::{Family, FAMILIES};
    use super::*;

    /// Plays 9 turns of GOPS with seat 0 bidding at random and seat 1 by
    /// `rule`; returns strong's posterior (in seat 0) after them.
    fn posterior_after(seed: u64, rule: &str) -> Vec<f64> {
        use crate::Builtins;
        use croupier_rules::Game;
        let v = GoofspielVariant::gops();
        let mut g = Goofspiel::new(&v, 2, seed).expect("a game");
        let mut other = Goofspiel::builtin(rule).expect("a bot");
        other.new_game(Seat(1), &v, 2);
        let mut rng = crate::bot_rng(seed);
        for _ in 0..9 {
            let legal = g.legal_vec(Seat(0));
            let mine = legal[rng.random_range(0..legal.len())];
            let theirs = other.act(&g.observation(Seat(1)), &g.legal_vec(Seat(1)), &mut rng);
            g.apply(Seat(0), mine).expect("legal");
            g.apply(Seat(1), theirs).expect("legal");
        }
        let mut s = Strong::new(Budget::iterations(1));
        s.new_game(Seat(0), &v, 2);
        s.posterior(&g.observation(Seat(0)))
    }

    fn weight(post: &[f64], f: Family) -> f64 {
        FAMILIES
            .iter()
            .zip(post)
            .filter(|(g, _)| **g == f)
            .map(|(_, w)| w)
            .sum()
    }

    /// The model names the rule of each simple bot after 9 turns, and does
    /// not take a uniform bidder for the equilibrium or a rule.
    #[test]
    fn the_posterior_names_the_rule_in_front_of_it() {
        let mut random = 0.0;
        for seed in 0..5 {
            let p = posterior_after(seed, "prize");
            assert!(
                weight(&p, Family::Offset(0)) > 0.95,
                "prize, seed {seed}: {p:?}"
            );
            let p = posterior_after(seed, "highest");
            assert!(
                weight(&p, Family::Highest) > 0.95,
                "highest, seed {seed}: {p:?}"
            );
            let p = posterior_after(seed, "copy");
            assert!(
                weight(&p, Family::Copy(0)) > 0.95,
                "copy, seed {seed}: {p:?}"
            );
            let p = posterior_after(seed, "random");
            random += (weight(&p, Family::Uniform) + weight(&p, Family::Table)) / 5.0;
        }
        // A uniform bidder's bids can look like the equilibrium's mix for a
        // while (9 turns): most of the time it is read as uniform.
        assert!(random > 0.6, "random bidders: mean weight {random}");
    }

    /// Evidence carries to the next game: a prize bidder seen for a game
    /// is read from the first turn of the next.
    #[test]
    fn a_series_remembers_the_opponent() {
        use croupier_rules::Game;
        let v = GoofspielVariant::gops();
        let mut s = Strong::new(Budget::iterations(1));
        s.new_game(Seat(0), &v, 2);
        let mut g = Goofspiel::new(&v, 2, 3).expect("a game");
        for _ in 0..12 {
            let o1 = g.observation(Seat(1));
            let mine = g.legal_vec(Seat(0))[0];
            s.posterior(&g.observation(Seat(0)));
            g.apply(Seat(0), mine).expect("legal");
            g.apply(Seat(1), Bid(o1.current.unwrap_or(1)))
                .expect("legal");
        }
        s.posterior(&g.observation(Seat(0)));
        s.new_game(Seat(0), &v, 2);
        let fresh = Goofspiel::new(&v, 2, 4).expect("a game");
        let p = s.posterior(&fresh.observation(Seat(0)));
        assert!(weight(&p, Family::Offset(0)) > 0.9, "{p:?}");
    }
}
