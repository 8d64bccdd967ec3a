//! Zero-sum matrix games solved exactly by the simplex method.
//!
//! The row player maximises `payoff[i][j]`. The game is shifted to strictly
//! positive payoffs, and the column player's linear program
//! `max Σy subject to A·y ≤ 1, y ≥ 0` is solved on a dense tableau with
//! Bland's rule (no cycling); the row player's optimal strategy is read from
//! the dual values of the slack columns.

/// The solution of a matrix game: its value to the row player and an optimal
/// mixed strategy of the row player.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// Value of the game to the row player.
    pub value: f64,
    /// Probability of each row; sums to 1.
    pub row: Vec<f64>,
}

/// Solves the game with `rows × cols` payoffs given row by row. A game with
/// no rows or no columns has value 0 and an empty strategy.
pub fn solve(payoff: &[f64], rows: usize, cols: usize) -> Solution {
    if rows == 0 || cols == 0 || payoff.len() != rows * cols {
        return Solution {
            value: 0.0,
            row: vec![1.0 / rows.max(1) as f64; rows],
        };
    }
    let min = payoff.iter().copied().fold(f64::INFINITY, f64::min);
    let max = payoff.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !min.is_finite() || !max.is_finite() {
        return Solution {
            value: 0.0,
            row: vec![1.0 / rows as f64; rows],
        };
    }
    if max - min < 1e-12 {
        // Every outcome is the same: any strategy is optimal.
        let mut row = vec![0.0; rows];
        row[0] = 1.0;
        return Solution { value: min, row };
    }
    let shift = 1.0 - min;
    // Tableau: `rows` constraint rows + the objective row; columns are the
    // `cols` y variables, the `rows` slacks, then the right-hand side.
    let width = cols + rows + 1;
    let mut t = vec![0.0; (rows + 1) * width];
    let mut basis: Vec<usize> = (0..rows).map(|i| cols + i).collect();
    for i in 0..rows {
        for j in 0..cols {
            t[i * width + j] = payoff[i * cols + j] + shift;
        }
        t[i * width + cols + i] = 1.0;
        t[i * width + width - 1] = 1.0;
    }
    let obj = rows * width;
    for j in 0..cols {
        t[obj + j] = -1.0;
    }
    const EPS: f64 = 1e-11;
    for _ in 0..(50 * (rows + cols) + 100) {
        // Bland's rule: the lowest-index column with a negative reduced cost.
        let Some(pc) = (0..cols + rows).find(|&j| t[obj + j] < -EPS) else {
            break;
        };
        // Ratio test; ties broken by the lowest basic variable index.
        let mut pr: Option<(usize, f64)> = None;
        for i in 0..rows {
            let a = t[i * width + pc];
            if a > EPS {
                let ratio = t[i * width + width - 1] / a;
                pr = match pr {
                    Some((r, best))
                        if ratio > best + EPS
                            || ((ratio - best).abs() <= EPS && basis[i] > basis[r]) =>
                    {
                        Some((r, best))
                    }
                    _ => Some((i, ratio)),
                };
            }
        }
        let Some((pr, _)) = pr else {
            // Unbounded cannot happen with positive payoffs; stop safely.
            break;
        };
        let pivot = t[pr * width + pc];
        for k in 0..width {
            t[pr * width + k] /= pivot;
        }
        for i in 0..=rows {
            if i == pr {
                continue;
            }
            let f = t[i * width + pc];
            if f.abs() > 0.0 {
                for k in 0..width {
                    t[i * width + k] -= f * t[pr * width + k];
                }
            }
        }
        basis[pr] = pc;
    }
    let total = t[obj + width - 1];
    if total <= EPS {
        return Solution {
            value: 0.0,
            row: vec![1.0 / rows as f64; rows],
        };
    }
    let v = 1.0 / total;
    let mut row: Vec<f64> = (0..rows)
        .map(|i| (t[obj + cols + i] * v).max(0.0))
        .collect();
    let sum: f64 = row.iter().sum();
    if sum > 0.0 {
        for p in &mut row {
            *p /= sum;
        }
    } else {
        row = vec![1.0 / rows as f64; rows];
    }
    Solution {
        value: v - shift,
        row,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the row strategy guarantees: its worst column.
    fn guarantee(payoff: &[f64], cols: usize, row: &[f64]) -> f64 {
        (0..cols)
            .map(|j| {
                row.iter()
                    .enumerate()
                    .map(|(i, p)| p * payoff[i * cols + j])
                    .sum::<f64>()
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn matching_pennies_is_half_and_half() {
        let s = solve(&[1.0, -1.0, -1.0, 1.0], 2, 2);
        assert!(s.value.abs() < 1e-9, "{s:?}");
        assert!((s.row[0] - 0.5).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn rock_paper_scissors_with_a_biased_payoff() {
        // Rock-paper-scissors where a win with rock pays 2. Equalising the
        // rows gives the column mix (1/3, 5/12, 1/4) and the value 1/12.
        let m = [0.0, -1.0, 2.0, 1.0, 0.0, -1.0, -1.0, 1.0, 0.0];
        let s = solve(&m, 3, 3);
        assert!((s.value - 1.0 / 12.0).abs() < 1e-9, "{s:?}");
        assert!((guarantee(&m, 3, &s.row) - s.value).abs() < 1e-9);
    }

    #[test]
    fn a_dominant_row_is_played_purely() {
        let s = solve(&[3.0, 4.0, 1.0, 2.0], 2, 2);
        assert!((s.value - 3.0).abs() < 1e-9);
        assert!((s.row[0] - 1.0).abs() < 1e-9);
    }

    proptest! {
        /// The strategy guarantees the value, and the column player can hold
        /// the row player to it (checked with the column player's own LP on
        /// the transposed, negated game).
        #[test]
        fn value_is_guaranteed_and_tight(rows in 1usize..6, cols in 1usize..6, seed in any::<u64>()) {
            use rand::{Rng, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let m: Vec<f64> = (0..rows * cols).map(|_| f64::from(rng.random_range(-9i32..=9))).collect();
            let s = solve(&m, rows, cols);
            prop_assert!((s.row.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            prop_assert!(guarantee(&m, cols, &s.row) >= s.value - 1e-7, "{:?} {:?}", m, s);
            let mut neg_t = vec![0.0; rows * cols];
            for i in 0..rows {
                for j in 0..cols {
                    neg_t[j * rows + i] = -m[i * cols + j];
                }
            }
            let c = solve(&neg_t, cols, rows);
            prop_assert!((c.value + s.value).abs() < 1e-7, "{} vs {}", c.value, s.value);
        }
    }
}
