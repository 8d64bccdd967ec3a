//! A Weng-Lin rating (the Bayesian, TrueSkill-like rating the ladder keeps)
//! computed from a tournament's own games, in the order they were played:
//! each seat is a one-player team, so tables of 2 to 4 work. Swiss uses its
//! mean as the last tie-break before the pairing number.

use serde::Serialize;
use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::MultiTeamOutcome;

/// A rating: mean and uncertainty (one standard deviation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rating {
    /// Mean.
    pub mu: f64,
    /// Standard deviation.
    pub sigma: f64,
}

impl Default for Rating {
    /// Where every bot starts: 25 ± 25/3.
    fn default() -> Self {
        Rating {
            mu: 25.0,
            sigma: 25.0 / 3.0,
        }
    }
}

/// Rates one game in which bot `order[s]` held seat `s` and finished with
/// rank `ranks[s]` (1 = first, equal ranks tie).
pub fn update(ratings: &mut [Rating], order: &[usize], ranks: &[u8]) {
    if order.len() != ranks.len() || order.len() < 2 {
        return;
    }
    let teams: Vec<[WengLinRating; 1]> = order
        .iter()
        .map(|&b| {
            [WengLinRating {
                rating: ratings[b].mu,
                uncertainty: ratings[b].sigma,
            }]
        })
        .collect();
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(ranks)
        .map(|(t, r)| (&t[..], MultiTeamOutcome::new(usize::from(*r))))
        .collect();
    let after = weng_lin_multi_team(&input, &WengLinConfig::new());
    for (&b, team) in order.iter().zip(after) {
        if let Some(r) = team.first() {
            ratings[b] = Rating {
                mu: r.rating,
                sigma: r.uncertainty,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn winners_rise_losers_fall_and_everyone_grows_surer() {
        let mut r = vec![Rating::default(); 3];
        for _ in 0..10 {
            update(&mut r, &[2, 0], &[1, 2]);
        }
        assert!(r[2].mu > 25.0 && r[0].mu < 25.0, "{r:?}");
        assert!(r[2].sigma < 25.0 / 3.0);
        assert_eq!(r[1], Rating::default(), "bot 1 did not play");
        let before = r.clone();
        update(&mut r, &[0, 1], &[1, 1, 1]);
        assert_eq!(r, before, "ranks that do not match the seats are ignored");
    }
}
