//! Exact values of Goofspiel positions: every turn a simultaneous-move
//! matrix game solved by the simplex method, chance over the unseen prize
//! order, memoised; positions too large to solve get an estimate.

use std::collections::HashMap;

use croupier_rules::goofspiel::{GoofspielVariant, TieRule};

use super::super::matrix;

/// Positions whose hands hold at most this many cards are valued exactly.
pub const EXACT_CARDS: u32 = 5;

/// What a position is worth to its owner.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Payoff {
    /// The expected point difference over the rest of the round.
    #[default]
    Points,
    /// The expected result of the round: 1 a win, 0 a draw, -1 a loss
    /// (the points already won count).
    WinLoss,
}

/// The exact value of positions, memoised: key (my hand, their hand,
/// undrawn prizes, carried lot, points ahead), as bit masks and sums; the
/// points ahead are 0 for [`Payoff::Points`], whose values do not depend
/// on them.
#[derive(Debug, Default, Clone)]
pub struct Solver {
    carry_ties: bool,
    payoff: Payoff,
    memo: HashMap<(u32, u32, u32, u32, i32), f64>,
    /// Past this instant, positions of [`EXACT_CARDS`] cards not solved yet
    /// are estimated instead (and not memoised), so that a decision keeps
    /// to its time budget; `None` solves everything.
    pub deadline: Option<std::time::Instant>,
    /// Whether the deadline has passed (positions solved since are not
    /// memoised); cleared by [`Solver::set_deadline`].
    timed_out: bool,
    /// The weights of the estimate's two parts ([`estimate_parts`]) for
    /// positions too large to solve; `None`: [`ESTIMATE_MIX`].
    pub mix: Option<(f64, f64)>,
}

/// The weights of the estimate's two parts: (every card against every
/// card, both hands sorted against the prizes sorted). Least squares
/// against the exact values of 300 random 6-card positions from a 13-card
/// deck (`examples/gops_values.rs`): the error's RMS falls from 6.47
/// points (equal weights, before) to 3.17, and the exploitability of the
/// equilibrium play on 7- and 8-card decks from 1.61 and 3.78 points a game
/// to 0.48 and 1.62.
pub const ESTIMATE_MIX: (f64, f64) = (0.532, 0.282);

/// Past the deadline, unsolved positions of this many cards or more are
/// estimated: a solve of 3 cards takes microseconds, so a decision ends
/// within a few of them after its deadline.
pub const CUT_CARDS: u32 = 3;

pub(super) fn cards(mask: u32) -> impl Iterator<Item = u32> + Clone {
    (1..32u32).filter(move |c| mask & (1 << c) != 0)
}

pub(super) fn mask(cards: &[u8]) -> u32 {
    cards
        .iter()
        .filter(|c| **c < 32)
        .fold(0, |m, c| m | (1 << c))
}

impl Solver {
    /// Sets the deadline of the next decision (`None`: solve everything).
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.deadline = deadline;
        self.timed_out = false;
    }

    /// Whether the deadline has passed (remembered once it has).
    fn past_deadline(&mut self) -> bool {
        if !self.timed_out
            && self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
        {
            self.timed_out = true;
        }
        self.timed_out
    }

    /// A solver of point differences for the tie rule of `variant`.
    pub fn new(variant: &GoofspielVariant) -> Self {
        Self::with_payoff(variant, Payoff::Points)
    }

    /// A solver of `payoff` for the tie rule of `variant`.
    pub fn with_payoff(variant: &GoofspielVariant, payoff: Payoff) -> Self {
        Solver {
            carry_ties: variant.ties == TieRule::Carry,
            payoff,
            ..Solver::default()
        }
    }

    /// The payoff this solver values.
    pub fn payoff(&self) -> Payoff {
        self.payoff
    }

    /// The payoff matrix of one turn: rows my cards, columns theirs, for a
    /// lot worth `lot` (the current prize and anything carried), with the
    /// prizes in `undrawn` still to come (point differences).
    pub fn turn_matrix(&mut self, mine: u32, theirs: u32, undrawn: u32, lot: u32) -> Vec<f64> {
        self.turn_matrix_at(mine, theirs, undrawn, lot, 0)
    }

    /// [`Solver::turn_matrix`] with `ahead` points already won over the
    /// opponent (which only [`Payoff::WinLoss`] reads).
    pub fn turn_matrix_at(
        &mut self,
        mine: u32,
        theirs: u32,
        undrawn: u32,
        lot: u32,
        ahead: i32,
    ) -> Vec<f64> {
        let rows: Vec<u32> = cards(mine).collect();
        let cols: Vec<u32> = cards(theirs).collect();
        let mut m = Vec::with_capacity(rows.len() * cols.len());
        for &a in &rows {
            for &b in &cols {
                let (now, carry) = match a.cmp(&b) {
                    std::cmp::Ordering::Greater => (lot as i32, 0),
                    std::cmp::Ordering::Less => (-(lot as i32), 0),
                    std::cmp::Ordering::Equal => (0, if self.carry_ties { lot } else { 0 }),
                };
                let (m2, t2) = (mine & !(1 << a), theirs & !(1 << b));
                m.push(match self.payoff {
                    Payoff::Points => f64::from(now) + self.value(m2, t2, undrawn, carry),
                    Payoff::WinLoss => self.value_at(m2, t2, undrawn, carry, ahead + now),
                });
            }
        }
        m
    }

    /// Expected point difference (mine minus theirs) over the rest of the
    /// round, before the next prize is turned ([`Payoff::Points`]; a
    /// [`Payoff::WinLoss`] solver gives the expected result from level).
    pub fn value(&mut self, mine: u32, theirs: u32, undrawn: u32, carry: u32) -> f64 {
        self.value_at(mine, theirs, undrawn, carry, 0)
    }

    /// The value of a position with `ahead` points already won over the
    /// opponent, before the next prize is turned.
    pub fn value_at(
        &mut self,
        mine: u32,
        theirs: u32,
        undrawn: u32,
        carry: u32,
        ahead: i32,
    ) -> f64 {
        let n = mine.count_ones();
        let win_loss = self.payoff == Payoff::WinLoss;
        let ahead = if win_loss { ahead } else { 0 };
        let sign = |d: i32| f64::from(d.signum());
        if n == 0 || undrawn == 0 {
            return if win_loss { sign(ahead) } else { 0.0 };
        }
        if win_loss {
            let rest = cards(undrawn).sum::<u32>() + carry;
            if ahead.unsigned_abs() > rest {
                return sign(ahead);
            }
        }
        if n > EXACT_CARDS {
            return self.estimate_at(mine, theirs, undrawn, carry, ahead);
        }
        if n == 1 {
            let (a, b) = (mine.trailing_zeros(), theirs.trailing_zeros());
            let lot = (undrawn.trailing_zeros() + carry) as i32;
            let now = match a.cmp(&b) {
                std::cmp::Ordering::Greater => lot,
                std::cmp::Ordering::Less => -lot,
                std::cmp::Ordering::Equal => 0,
            };
            return if win_loss {
                sign(ahead + now)
            } else {
                f64::from(now)
            };
        }
        let key = (mine, theirs, undrawn, carry, ahead);
        if let Some(v) = self.memo.get(&key) {
            return *v;
        }
        // Past the deadline, positions of CUT_CARDS or more cards not
        // solved yet are estimated, and a position whose solve met the
        // deadline part-way is not memoised (it mixes in estimates).
        if n >= CUT_CARDS && self.past_deadline() {
            return self.estimate_at(mine, theirs, undrawn, carry, ahead);
        }
        let v = self.turns_solved(mine, theirs, undrawn, carry, ahead);
        if !self.timed_out {
            self.memo.insert(key, v);
        }
        v
    }

    /// The value of a position as a decision there sees it: its own turns
    /// solved, whatever its size, over the values of the positions after
    /// them (so exact for hands of up to [`EXACT_CARDS`] + 1 cards).
    pub fn decision_value(
        &mut self,
        mine: u32,
        theirs: u32,
        undrawn: u32,
        carry: u32,
        ahead: i32,
    ) -> f64 {
        let n = mine.count_ones();
        if n <= EXACT_CARDS || undrawn == 0 {
            return self.value_at(mine, theirs, undrawn, carry, ahead);
        }
        self.turns_solved(mine, theirs, undrawn, carry, ahead)
    }

    /// The mean over the next prize of the value of its turn's matrix
    /// game (`undrawn` not empty).
    fn turns_solved(
        &mut self,
        mine: u32,
        theirs: u32,
        undrawn: u32,
        carry: u32,
        ahead: i32,
    ) -> f64 {
        let (r, c) = (mine.count_ones() as usize, theirs.count_ones() as usize);
        let mut total = 0.0;
        for p in cards(undrawn) {
            let m = self.turn_matrix_at(mine, theirs, undrawn & !(1 << p), carry + p, ahead);
            total += matrix::solve(&m, r, c).value;
        }
        total / f64::from(undrawn.count_ones().max(1))
    }

    /// The estimate of a position too large to solve, in this solver's
    /// payoff: for [`Payoff::WinLoss`], the point estimate and the points
    /// ahead read as a result through a logistic curve whose width grows
    /// with the prizes left.
    fn estimate_at(&self, mine: u32, theirs: u32, undrawn: u32, carry: u32, ahead: i32) -> f64 {
        let (a, b) = estimate_parts(mine, theirs, undrawn, carry);
        let (wa, wb) = self.mix.unwrap_or(ESTIMATE_MIX);
        let e = wa * a + wb * b;
        match self.payoff {
            Payoff::Points => e,
            Payoff::WinLoss => {
                let spread: f64 = cards(undrawn).map(|p| f64::from(p * p)).sum::<f64>()
                    + f64::from(carry * carry);
                let x = (f64::from(ahead) + e) / (0.5 * spread.sqrt()).max(1.0);
                x.tanh()
            }
        }
    }
}

/// The card-advantage estimate of a position too large to solve: the
/// [`ESTIMATE_MIX`] of its two parts ([`estimate_parts`]).
pub fn estimate(mine: u32, theirs: u32, undrawn: u32, carry: u32) -> f64 {
    let (a, b) = estimate_parts(mine, theirs, undrawn, carry);
    ESTIMATE_MIX.0 * a + ESTIMATE_MIX.1 * b
}

/// The estimate's two parts: (a) every card of mine meeting every card of
/// theirs for an average lot, (b) both hands played high-to-high against
/// the prizes sorted.
pub fn estimate_parts(mine: u32, theirs: u32, undrawn: u32, carry: u32) -> (f64, f64) {
    let n = mine.count_ones().max(1);
    let prize_sum: u32 = cards(undrawn).sum::<u32>() + carry;
    let mean = f64::from(prize_sum) / f64::from(n);
    let mut wins = 0i32;
    for a in cards(mine) {
        for b in cards(theirs) {
            wins += (a as i32 - b as i32).signum();
        }
    }
    let all_pairs = mean * f64::from(wins) / f64::from(n);
    let mut a: Vec<u32> = cards(mine).collect();
    let mut b: Vec<u32> = cards(theirs).collect();
    let mut p: Vec<u32> = cards(undrawn).collect();
    a.reverse();
    b.reverse();
    p.reverse();
    if let Some(first) = p.first_mut() {
        *first += carry;
    }
    let sorted: f64 = a
        .iter()
        .zip(&b)
        .zip(&p)
        .map(|((x, y), z)| f64::from(*z) * f64::from((*x as i32 - *y as i32).signum()))
        .sum();
    (all_pairs, sorted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force without memo or estimate: the exact value by recursion.
    pub(super) fn brute(mine: u32, theirs: u32, undrawn: u32, carry: u32, carry_ties: bool) -> f64 {
        let n = mine.count_ones();
        if n == 0 {
            return 0.0;
        }
        let mut total = 0.0;
        for p in cards(undrawn) {
            let lot = carry + p;
            let rows: Vec<u32> = cards(mine).collect();
            let cols: Vec<u32> = cards(theirs).collect();
            let mut m = vec![];
            for &a in &rows {
                for &b in &cols {
                    let (now, c) = if a > b {
                        (f64::from(lot), 0)
                    } else if a < b {
                        (-f64::from(lot), 0)
                    } else {
                        (0.0, if carry_ties { lot } else { 0 })
                    };
                    m.push(
                        now + brute(
                            mine & !(1 << a),
                            theirs & !(1 << b),
                            undrawn & !(1 << p),
                            c,
                            carry_ties,
                        ),
                    );
                }
            }
            total += matrix::solve(&m, rows.len(), cols.len()).value;
        }
        total / f64::from(undrawn.count_ones())
    }

    fn full(n: u32) -> u32 {
        ((1u32 << (n + 1)) - 1) & !1
    }

    #[test]
    fn symmetric_games_are_worth_nothing_and_memo_matches_brute_force() {
        for n in 1..=5 {
            for carry_ties in [false, true] {
                let mut s = Solver {
                    carry_ties,
                    ..Solver::default()
                };
                let v = s.value(full(n), full(n), full(n), 0);
                assert!(v.abs() < 1e-7, "n={n}: {v}");
            }
        }
        // Asymmetric hands: the memoised solver equals plain recursion.
        let mine = 0b1_0110_1100; // 2 3 5 6 8
        let theirs = 0b0_1011_0110; // 1 2 4 5 7
        let prizes = 0b11_1110; // 1..=5
        for carry_ties in [false, true] {
            let mut s = Solver {
                carry_ties,
                ..Solver::default()
            };
            let a = s.value(mine, theirs, prizes, 0);
            let b = brute(mine, theirs, prizes, 0, carry_ties);
            assert!((a - b).abs() < 1e-7, "{a} vs {b}");
            assert!(a > 0.0, "the better hand is worth more: {a}");
        }
    }

    /// The opponent model tells a uniform bidder from a copying bot: after
    /// 9 turns, an opponent that always bids the prize's value is not
    /// taken for a random one; a uniformly random one mostly is.
    #[test]
    fn a_two_card_position_has_its_hand_computed_value() {
        // {2,3} against {1,2}, prizes {1,2}, ties discarded. With prize p
        // first and q second the turn matrix is [[3, q], [p, 3]] (rows 2, 3;
        // columns 1, 2); both orders solve to 7/3.
        let mut s = Solver::default();
        let v = s.value(0b1100, 0b0110, 0b0110, 0);
        assert!((v - 7.0 / 3.0).abs() < 1e-9, "{v}");
    }
}

#[cfg(test)]
mod deadline {
    use super::*;

    /// A deadline already past leaves the largest exact positions to the
    /// estimate (and out of the memo); without one they are solved.
    #[test]
    fn a_past_deadline_estimates_instead_of_solving() {
        let n = EXACT_CARDS;
        let all = (1..=n).fold(0u32, |m, c| m | (1 << c));
        let mine = all;
        let theirs = all & !(1 << 1) | (1 << (n + 1));
        let mut late = Solver {
            carry_ties: false,
            deadline: Some(std::time::Instant::now()),
            ..Solver::default()
        };
        let v = late.value(mine, theirs, all, 0);
        assert_eq!(v, estimate(mine, theirs, all, 0));
        assert!(late.memo.is_empty());
        let mut exact = Solver {
            deadline: None,
            timed_out: false,
            ..late.clone()
        };
        let w = exact.value(mine, theirs, all, 0);
        assert!(!exact.memo.is_empty());
        assert!((w - super::tests::brute(mine, theirs, all, 0, false)).abs() < 1e-7);
    }

    /// A deadline that passes part-way through a solve: what is memoised
    /// is exact (positions that met the deadline are left out), so the
    /// next decision does not inherit estimates as exact values; and
    /// positions of [`CUT_CARDS`] or more after it are estimated.
    #[test]
    fn a_deadline_met_part_way_memoises_only_exact_values() {
        let n = EXACT_CARDS;
        let all = (1..=n + 1).fold(0u32, |m, c| m | (1 << c));
        let mut cut_short = 0;
        for micros in [0u64, 50, 200, 1000, 5000] {
            let mut s = Solver::default();
            s.set_deadline(Some(
                std::time::Instant::now() + std::time::Duration::from_micros(micros),
            ));
            let theirs = all & !(1 << 2);
            let mine = all & !(1 << 4);
            s.turn_matrix(mine, theirs, all & !(1 << 6), 6);
            if s.timed_out {
                cut_short += 1;
            }
            let mut exact = Solver::default();
            for (&(m, t, u, c, _), v) in &s.memo {
                let w = exact.value(m, t, u, c);
                assert!((v - w).abs() < 1e-9, "{micros} µs: {v} memoised, {w} exact");
            }
        }
        assert!(cut_short >= 1, "no deadline met");
    }
}
