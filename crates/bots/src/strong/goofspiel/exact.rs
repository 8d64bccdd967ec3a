//! Exact Goofspiel values for decks of up to 6 cards, by a solver written
//! apart from [`Solver`]: it carries the whole score in its state and pays
//! the final one (the point difference, or its sign), where [`Solver`]
//! values the points still to come. `strong`'s solver must agree with it
//! on every payoff, tie rule and position.

use std::collections::HashMap;

use super::solver::{cards, Payoff, Solver};
use crate::strong::matrix;
use croupier_rules::goofspiel::{GoofspielVariant, TieRule};

/// The reference solver: the value of the final score, by recursion over
/// (my hand, their hand, prizes face down, carried lot, score).
struct Reference {
    carry_ties: bool,
    payoff: Payoff,
    memo: HashMap<(u32, u32, u32, u32, i32), f64>,
}

impl Reference {
    fn end(&self, score: i32) -> f64 {
        match self.payoff {
            Payoff::Points => f64::from(score),
            Payoff::WinLoss => f64::from(score.signum()),
        }
    }

    fn value(&mut self, mine: u32, theirs: u32, undrawn: u32, carry: u32, score: i32) -> f64 {
        if undrawn == 0 || mine == 0 {
            return self.end(score);
        }
        if let Some(v) = self.memo.get(&(mine, theirs, undrawn, carry, score)) {
            return *v;
        }
        let mut sum = 0.0;
        for p in cards(undrawn) {
            let lot = carry + p;
            let mut m = vec![];
            for a in cards(mine) {
                for b in cards(theirs) {
                    let won = if a > b {
                        lot as i32
                    } else if a < b {
                        -(lot as i32)
                    } else {
                        0
                    };
                    let kept = if a == b && self.carry_ties { lot } else { 0 };
                    m.push(self.value(
                        mine ^ (1 << a),
                        theirs ^ (1 << b),
                        undrawn ^ (1 << p),
                        kept,
                        score + won,
                    ));
                }
            }
            sum +=
                matrix::solve(&m, mine.count_ones() as usize, theirs.count_ones() as usize).value;
        }
        let v = sum / f64::from(undrawn.count_ones());
        self.memo.insert((mine, theirs, undrawn, carry, score), v);
        v
    }
}

fn variant(carry_ties: bool) -> GoofspielVariant {
    GoofspielVariant {
        rounds: vec![6],
        ties: if carry_ties {
            TieRule::Carry
        } else {
            TieRule::Discard
        },
        preview: false,
    }
}

fn deck(n: u32) -> u32 {
    ((1u32 << (n + 1)) - 1) & !1
}

/// Every rule and payoff: the four solvers to compare.
fn cases() -> Vec<(bool, Payoff)> {
    let mut v = vec![];
    for carry in [false, true] {
        for payoff in [Payoff::Points, Payoff::WinLoss] {
            v.push((carry, payoff));
        }
    }
    v
}

/// Full decks of 1 to 6 cards: the game is symmetric, so worth 0 to both
/// sides under either payoff, and the solver says so.
#[test]
fn full_decks_up_to_six_are_worth_nothing_under_both_payoffs() {
    for (carry, payoff) in cases() {
        for n in 1..=6 {
            let all = deck(n);
            let mut r = Reference {
                carry_ties: carry,
                payoff,
                memo: HashMap::new(),
            };
            let exact = r.value(all, all, all, 0, 0);
            let mut s = Solver::with_payoff(&variant(carry), payoff);
            let v = s.decision_value(all, all, all, 0, 0);
            assert!(
                exact.abs() < 1e-7,
                "{payoff:?} carry={carry} n={n}: reference {exact}"
            );
            assert!(
                (v - exact).abs() < 1e-7,
                "{payoff:?} carry={carry} n={n}: {v} vs {exact}"
            );
        }
    }
}

/// Uneven positions drawn from decks of up to 6 cards (hands, prizes,
/// carried lot and score at random): the solver agrees with the reference
/// on each, for both payoffs and both tie rules.
#[test]
fn the_solver_agrees_with_the_reference_on_uneven_positions() {
    use rand::seq::SliceRandom;
    use rand::Rng;
    let mut rng = crate::bot_rng(46);
    let mut checked = 0;
    for (carry, payoff) in cases() {
        let mut r = Reference {
            carry_ties: carry,
            payoff,
            memo: HashMap::new(),
        };
        let mut s = Solver::with_payoff(&variant(carry), payoff);
        for _ in 0..30 {
            let top = rng.random_range(2..=8u32);
            let k = rng.random_range(1..=6u32.min(top));
            let pick = |rng: &mut crate::BotRng| {
                let mut c: Vec<u32> = (1..=top).collect();
                c.shuffle(rng);
                c[..k as usize].iter().fold(0u32, |m, x| m | (1 << x))
            };
            let (mine, theirs, undrawn) = (pick(&mut rng), pick(&mut rng), pick(&mut rng));
            let lot = if carry { rng.random_range(0..6) } else { 0 };
            let score = rng.random_range(-8..=8);
            let exact = r.value(mine, theirs, undrawn, lot, score);
            let v = match payoff {
                Payoff::Points => {
                    f64::from(score) + s.decision_value(mine, theirs, undrawn, lot, score)
                }
                Payoff::WinLoss => s.decision_value(mine, theirs, undrawn, lot, score),
            };
            assert!(
                (v - exact).abs() < 1e-6,
                "{payoff:?} carry={carry}: {mine:b} {theirs:b} {undrawn:b} lot {lot} score {score}: {v} vs {exact}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 120);
}

/// On the first turn of the 6-card game, the mixed strategy that `strong`
/// plays from its solver's turn matrix earns at least the game value
/// against every answer (it is an equilibrium strategy), under both payoffs.
#[test]
fn the_first_turn_strategy_of_six_cards_is_an_equilibrium() {
    for (carry, payoff) in cases() {
        let all = deck(6);
        for p in 1..=6u32 {
            let mut s = Solver::with_payoff(&variant(carry), payoff);
            let m = s.turn_matrix_at(all, all, all & !(1 << p), p, 0);
            let sol = matrix::solve(&m, 6, 6);
            let mut r = Reference {
                carry_ties: carry,
                payoff,
                memo: HashMap::new(),
            };
            let mut exact = vec![];
            for a in 1..=6u32 {
                for b in 1..=6u32 {
                    let won = if a > b {
                        p as i32
                    } else if a < b {
                        -(p as i32)
                    } else {
                        0
                    };
                    let kept = if a == b && carry { p } else { 0 };
                    exact.push(r.value(all ^ (1 << a), all ^ (1 << b), all & !(1 << p), kept, won));
                }
            }
            let truth = matrix::solve(&exact, 6, 6).value;
            assert!(truth.abs() < 1e-7, "symmetric turn: {truth}");
            for j in 0..6 {
                let earned: f64 = (0..6).map(|i| sol.row[i] * exact[i * 6 + j]).sum();
                assert!(
                    earned >= truth - 1e-7,
                    "{payoff:?} carry={carry} prize {p}, answer {j}: {earned}"
                );
            }
        }
    }
}
