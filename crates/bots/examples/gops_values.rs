//! How good are Goofspiel `strong`'s values of positions too large to
//! solve? `cargo run --release -p croupier-bots --example gops_values --
//! [SAMPLES] [DECKS]`:
//!
//! 1. the error of the estimate on 6-card positions drawn from a 13-card
//!    deck, against their exact values, and the least-squares weights of
//!    its two parts;
//! 2. the exploitability of `strong`'s equilibrium play (no opponent
//!    model) on decks of DECKS cards (default 7,8) with each weighting: what
//!    a best responder that knows its mixed strategy at every position
//!    wins per game, in points (0 for an exact equilibrium).

use std::collections::HashMap;

use croupier_bots::strong::goofspiel::{estimate_parts, Solver, ESTIMATE_MIX};
use croupier_bots::strong::matrix;
use croupier_rules::goofspiel::GoofspielVariant;
use rand::seq::SliceRandom;
use rand::SeedableRng;

fn cards(m: u32) -> impl Iterator<Item = u32> {
    (1..32).filter(move |c| m & (1 << c) != 0)
}

/// The best responder's expected points from a position before its prize
/// is turned, against `strong`'s equilibrium play with `solver`'s values.
struct Exploit<'a> {
    solver: &'a mut Solver,
    exact: Solver,
    memo: HashMap<(u32, u32, u32), f64>,
}

impl Exploit<'_> {
    fn gain(&mut self, s: u32, o: u32, u: u32) -> f64 {
        let k = s.count_ones();
        if k == 0 || u == 0 {
            return 0.0;
        }
        if k <= croupier_bots::strong::goofspiel::EXACT_CARDS + 1 {
            // From here `strong` plays an exact equilibrium.
            return -self.exact.decision_value(s, o, u, 0, 0);
        }
        if let Some(v) = self.memo.get(&(s, o, u)) {
            return *v;
        }
        let mut total = 0.0;
        for p in cards(u) {
            let rest = u & !(1 << p);
            let m = self.solver.turn_matrix(s, o, rest, p);
            let n = k as usize;
            let row = matrix::solve(&m, n, n).row;
            let mut best = f64::MIN;
            for b in cards(o) {
                let mut g = 0.0;
                for (i, a) in cards(s).enumerate() {
                    if row[i] < 1e-12 {
                        continue;
                    }
                    let now = if a > b {
                        -(p as f64)
                    } else if a < b {
                        p as f64
                    } else {
                        0.0
                    };
                    g += row[i] * (now + self.gain(s & !(1 << a), o & !(1 << b), rest));
                }
                best = best.max(g);
            }
            total += best;
        }
        let v = total / f64::from(u.count_ones());
        self.memo.insert((s, o, u), v);
        v
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let samples: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(400);
    let decks: Vec<u32> = args
        .get(2)
        .map_or("7,8", |s| s.as_str())
        .split(',')
        .filter_map(|x| x.parse().ok())
        .collect();
    let v = GoofspielVariant::gops();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(47);
    let mut exact = Solver::new(&v);
    let mut rows = vec![];
    for _ in 0..samples {
        let pick = |rng: &mut rand_chacha::ChaCha8Rng| {
            let mut c: Vec<u32> = (1..=13).collect();
            c.shuffle(rng);
            c[..6].iter().fold(0u32, |m, x| m | (1 << x))
        };
        let (s, o, u) = (pick(&mut rng), pick(&mut rng), pick(&mut rng));
        let truth = exact.decision_value(s, o, u, 0, 0);
        let (a, b) = estimate_parts(s, o, u, 0);
        rows.push((a, b, truth));
    }
    // Least squares for truth ≈ wa·a + wb·b.
    let (mut saa, mut sab, mut sbb, mut sat, mut sbt) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (a, b, t) in &rows {
        saa += a * a;
        sab += a * b;
        sbb += b * b;
        sat += a * t;
        sbt += b * t;
    }
    let det = saa * sbb - sab * sab;
    let fit = ((sat * sbb - sbt * sab) / det, (sbt * saa - sat * sab) / det);
    let rmse = |w: (f64, f64)| {
        (rows
            .iter()
            .map(|(a, b, t)| (w.0 * a + w.1 * b - t).powi(2))
            .sum::<f64>()
            / rows.len() as f64)
            .sqrt()
    };
    let spread = (rows.iter().map(|(_, _, t)| t * t).sum::<f64>() / rows.len() as f64).sqrt();
    println!("6-card positions from a 13-card deck: {samples}; exact values' RMS {spread:.3}");
    println!("  equal weights (0.5, 0.5): RMSE {:.3}", rmse((0.5, 0.5)));
    println!(
        "  ESTIMATE_MIX {ESTIMATE_MIX:?}: RMSE {:.3}",
        rmse(ESTIMATE_MIX)
    );
    println!(
        "  fitted ({:.3}, {:.3}): RMSE {:.3}",
        fit.0,
        fit.1,
        rmse(fit)
    );
    for n in decks {
        for (name, mix) in [
            ("equal", (0.5, 0.5)),
            ("ESTIMATE_MIX", ESTIMATE_MIX),
            ("fitted", fit),
        ] {
            let t0 = std::time::Instant::now();
            let mut solver = Solver::new(&v);
            solver.mix = Some(mix);
            let mut e = Exploit {
                solver: &mut solver,
                exact: Solver::new(&v),
                memo: HashMap::new(),
            };
            let all = ((1u32 << (n + 1)) - 1) & !1;
            let g = e.gain(all, all, all);
            println!(
                "  {n} cards, {name} ({:.3}, {:.3}): exploitability {g:.4} points per game ({:.1} s)",
                mix.0,
                mix.1,
                t0.elapsed().as_secs_f64()
            );
        }
    }
}
