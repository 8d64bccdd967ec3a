//! Ratings and statistics kept beside every finished game: a Weng-Lin
//! (Bayesian, TrueSkill-like) rating per bot and game kind, W/L/T/forfeit
//! counts, head-to-head counts per pair, and a rating history.
//!
//! A game is rated inside the transaction that marks it finished, so a
//! stored game and its effect on the ratings are never apart: on SQLite by
//! `sqlite_ratings` (from the writer's finish, the backlog and imports); on
//! PostgreSQL by `postgres::finish` (and `postgres::import` for imports).
//!
//! How a game counts:
//! - ranks come from [`GameEnd::ranks`] (1 = best, equal ranks tie); each seat
//!   is a one-player team of `weng_lin_multi_team`, so 2 to 4 seats work;
//! - a forfeit: the forfeiting bot ranks last and every other seat ties for
//!   first, whatever ranks the game reported (the rules already say so for
//!   SkullWhist and Goofspiel: `Outcome::forfeit`), so it is a loss for the
//!   forfeiting bot only;
//! - win = sole first place; tie = first place shared; loss = otherwise;
//! - head to head, every pair of seats counts once: the better rank wins.
//!
//! A game with the same bot in two seats, or with ranks that do not match
//! its seats, is stored but not rated (a rating against oneself means
//! nothing).

use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::MultiTeamOutcome;

use crate::{BotId, GameEnd};

/// The rating a bot starts with.
pub const START: (f64, f64) = (25.0, 25.0 / 3.0);

/// The rank each seat counts with: a forfeit puts the forfeiting seat last
/// and the others first together.
pub fn effective_ranks(bots: &[BotId], end: &GameEnd) -> Vec<u8> {
    match end.forfeited_by {
        Some(f) if bots.contains(&f) => bots.iter().map(|b| if *b == f { 2 } else { 1 }).collect(),
        _ => end.ranks.clone(),
    }
}

/// New (mu, sigma) for every seat after a game with `ranks`.
pub fn rate(before: &[(f64, f64)], ranks: &[u8]) -> Vec<(f64, f64)> {
    let teams: Vec<[WengLinRating; 1]> = before
        .iter()
        .map(|(mu, sigma)| {
            [WengLinRating {
                rating: *mu,
                uncertainty: *sigma,
            }]
        })
        .collect();
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(ranks)
        .map(|(t, r)| (&t[..], MultiTeamOutcome::new(usize::from(*r))))
        .collect();
    weng_lin_multi_team(&input, &WengLinConfig::new())
        .iter()
        .map(|t| t.first().map_or(START, |r| (r.rating, r.uncertainty)))
        .collect()
}

/// The conservative estimate leaderboards order by.
pub fn conservative(mu: f64, sigma: f64) -> f64 {
    mu - 3.0 * sigma
}

/// Wilson score interval (95 %) of a score fraction `score / n`, where a
/// win counts 1 and a tie one half. `None` without games.
pub fn wilson(score: f64, n: f64) -> Option<(f64, f64)> {
    if n <= 0.0 {
        return None;
    }
    let z = 1.959_964f64;
    let p = (score / n).clamp(0.0, 1.0);
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let margin = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let denom = 1.0 + z2 / n;
    Some(((centre - margin) / denom, (centre + margin) / denom))
}

/// A seat's new rating and the counts it adds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SeatUpdate {
    pub bot: BotId,
    pub mu: f64,
    pub sigma: f64,
    pub win: i64,
    pub loss: i64,
    pub tie: i64,
    pub forfeit: i64,
}

/// The head-to-head counts one ordered pair of seats adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PairUpdate {
    pub bot: BotId,
    pub opponent: BotId,
    pub win: i64,
    pub loss: i64,
    pub tie: i64,
}

/// The ranks a game with `bots` by seat counts with, or `None` if it is
/// not rated (fewer than two seats, ranks that do not match, a bot twice).
pub(crate) fn ratable(bots: &[BotId], end: &GameEnd) -> Option<Vec<u8>> {
    let ranks = effective_ranks(bots, end);
    let distinct = bots.iter().enumerate().all(|(i, b)| !bots[..i].contains(b));
    (bots.len() >= 2 && ranks.len() == bots.len() && distinct).then_some(ranks)
}

/// What a rated game changes, given each seat's rating `before` (the
/// same for every backend; each writes it in its own SQL).
pub(crate) fn updates(
    bots: &[BotId],
    ranks: &[u8],
    forfeited_by: Option<BotId>,
    before: &[(f64, f64)],
) -> (Vec<SeatUpdate>, Vec<PairUpdate>) {
    let after = rate(before, ranks);
    let firsts = ranks.iter().filter(|r| **r == 1).count();
    let mut seats = Vec::with_capacity(bots.len());
    let mut pairs = Vec::with_capacity(bots.len() * bots.len());
    for (i, bot) in bots.iter().enumerate() {
        let (mu, sigma) = after.get(i).copied().unwrap_or(START);
        let (win, tie) = match ranks[i] {
            1 if firsts == 1 => (1, 0),
            1 => (0, 1),
            _ => (0, 0),
        };
        seats.push(SeatUpdate {
            bot: *bot,
            mu,
            sigma,
            win,
            loss: 1 - win - tie,
            tie,
            forfeit: i64::from(forfeited_by == Some(*bot)),
        });
        for (j, opponent) in bots.iter().enumerate() {
            if i == j {
                continue;
            }
            let (win, loss, tie) = match ranks[i].cmp(&ranks[j]) {
                std::cmp::Ordering::Less => (1, 0, 0),
                std::cmp::Ordering::Greater => (0, 1, 0),
                std::cmp::Ordering::Equal => (0, 0, 1),
            };
            pairs.push(PairUpdate {
                bot: *bot,
                opponent: *opponent,
                win,
                loss,
                tie,
            });
        }
    }
    (seats, pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(ranks: Vec<u8>, forfeited_by: Option<BotId>) -> GameEnd {
        GameEnd {
            finished: "t".into(),
            scores: vec![None; ranks.len()],
            ranks,
            forfeited_by,
            record: "{}".into(),
            facts: None,
        }
    }

    #[test]
    fn the_winner_gains_and_the_loser_drops() {
        let after = rate(&[START, START], &[1, 2]);
        assert!(after[0].0 > START.0 && after[1].0 < START.0);
        assert!(after[0].1 < START.1 && after[1].1 < START.1);
    }

    #[test]
    fn four_seats_are_ordered_by_rank() {
        let after = rate(&[START; 4], &[3, 1, 4, 2]);
        let order: Vec<usize> = {
            let mut idx: Vec<usize> = (0..4).collect();
            idx.sort_by(|a, b| after[*b].0.total_cmp(&after[*a].0));
            idx
        };
        assert_eq!(order, vec![1, 3, 0, 2]);
    }

    #[test]
    fn a_tie_between_equals_keeps_their_means() {
        let after = rate(&[START, START], &[1, 1]);
        assert!((after[0].0 - START.0).abs() < 1e-9);
        assert!((after[1].0 - START.0).abs() < 1e-9);
    }

    #[test]
    fn a_forfeit_is_a_loss_for_the_forfeiting_bot_only() {
        assert_eq!(
            effective_ranks(&[7, 8, 9], &end(vec![1, 2, 3], Some(8))),
            [1, 2, 1]
        );
        assert_eq!(effective_ranks(&[7, 8], &end(vec![2, 1], None)), [2, 1]);
        // A forfeiting bot that is not seated changes nothing.
        assert_eq!(effective_ranks(&[7, 8], &end(vec![2, 1], Some(3))), [2, 1]);
    }

    #[test]
    fn wilson_interval_contains_the_fraction_and_narrows() {
        let (lo, hi) = wilson(7.0, 10.0).unwrap();
        assert!(lo < 0.7 && 0.7 < hi && lo > 0.3 && hi < 0.95);
        let (lo2, hi2) = wilson(700.0, 1000.0).unwrap();
        assert!(hi2 - lo2 < hi - lo);
        assert_eq!(wilson(0.0, 0.0), None);
        let (lo0, _) = wilson(0.0, 5.0).unwrap();
        assert!(lo0.abs() < 1e-12);
    }
}
