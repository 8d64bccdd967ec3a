//! The opponent model of Goofspiel `strong`: a posterior over families of
//! simple bidding rules, read from the bids the opponent has shown.
//!
//! Each [`Family`] gives the probability of each card the opponent holds,
//! given the turn as the opponent sees it ([`Turn`]). Deterministic rules
//! keep [`SLIP`] of their mass spread over the hand, so that one surprising
//! bid lowers a family's weight without ruling it out. The posterior is
//! Bayes' rule over the turns seen (Bayesian opponent modelling over a
//! finite set of types, as in Southey et al., "Bayes' Bluff", 2005), and
//! the equilibrium itself is one of the families: an opponent that bids
//! like the equilibrium keeps `strong` at the equilibrium.

use croupier_rules::goofspiel::GoofspielObservation;
use rand::Rng;

use super::solver::cards;
use crate::goofspiel::Planner;
use crate::{BotRng, Strategy};

/// Share of a deterministic rule's probability spread over the whole hand.
pub const SLIP: f64 = 0.04;

/// A way of bidding that the opponent may follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The card of the prize's value plus a fixed offset (0: the prize's
    /// value itself).
    Offset(i8),
    /// The prize's value plus an offset drawn uniformly from [-1, 2].
    NearPrize,
    /// A fixed prize-to-card table (learnt across the games of a series;
    /// within one round every prize comes once, so it starts uniform).
    Table,
    /// The card `strong` bid last this round, plus an offset.
    Copy(i8),
    /// The highest card left.
    Highest,
    /// The lowest card left.
    Lowest,
    /// Uniformly at random.
    Uniform,
    /// Seed 004's Planner: sure wins on the best prizes, else its lowest.
    Planner,
    /// The equilibrium of the turn's matrix game.
    Equilibrium,
}

/// Every family, in a fixed order (the posterior's index).
pub const FAMILIES: &[Family] = &[
    Family::Offset(0),
    Family::Offset(1),
    Family::Offset(-1),
    Family::Offset(2),
    Family::Offset(3),
    Family::Offset(-2),
    Family::NearPrize,
    Family::Table,
    Family::Copy(0),
    Family::Copy(1),
    Family::Highest,
    Family::Lowest,
    Family::Uniform,
    Family::Planner,
    Family::Equilibrium,
];

/// The index of the equilibrium in [`FAMILIES`].
pub const EQUILIBRIUM: usize = FAMILIES.len() - 1;

/// Prior weight of the equilibrium (the others share the rest evenly).
pub const EQUILIBRIUM_PRIOR: f64 = 0.35;

/// How much of a finished game's evidence the next game keeps.
pub const CARRY_OVER: f64 = 0.5;

/// One turn as the opponent sees it, cards as bit masks (bit c: card c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The opponent's hand before it bids.
    pub theirs: u32,
    /// `strong`'s hand before it bids.
    pub mine: u32,
    /// The prize drawn this turn.
    pub prize: u8,
    /// The prizes still face down (after this one).
    pub undrawn: u32,
    /// `strong`'s bid of the turn before, in this round.
    pub my_last: Option<u8>,
}

/// The card of `hand` nearest to `target`, the higher one on a tie.
pub fn nearest(hand: u32, target: i32) -> Option<u8> {
    cards(hand)
        .min_by_key(|c| ((*c as i32 - target).abs(), std::cmp::Reverse(*c)))
        .map(|c| c as u8)
}

/// A prize-to-card table learnt from the opponent's bids across games:
/// how often each card answered each prize.
#[derive(Clone, Debug)]
pub struct TableCounts(Box<[[f32; 32]; 32]>);

impl Default for TableCounts {
    fn default() -> Self {
        TableCounts(Box::new([[0.0; 32]; 32]))
    }
}

impl TableCounts {
    /// Counts the opponent answering `prize` with `card`.
    pub fn add(&mut self, prize: u8, card: u8) {
        if let Some(row) = self.0.get_mut(usize::from(prize)) {
            if let Some(x) = row.get_mut(usize::from(card)) {
                *x += 1.0;
            }
        }
    }

    /// Keeps `share` of every count (older games weigh less).
    pub fn fade(&mut self, share: f32) {
        for row in self.0.iter_mut() {
            for x in row.iter_mut() {
                *x *= share;
            }
        }
    }

    /// The probability of `card` for `prize` out of `hand` (a Dirichlet
    /// mean with half a count per card: uniform before any evidence).
    fn probability(&self, prize: u8, card: u8, hand: u32) -> f64 {
        let row = &self.0[usize::from(prize.min(31))];
        let n = f64::from(hand.count_ones().max(1));
        let total: f64 = cards(hand).map(|c| f64::from(row[c as usize])).sum();
        (f64::from(row[usize::from(card.min(31))]) + 0.5) / (total + 0.5 * n)
    }

    /// The card of `hand` most often answered to `prize`, if any was.
    fn favourite(&self, prize: u8, hand: u32) -> Option<u8> {
        let row = &self.0[usize::from(prize.min(31))];
        cards(hand)
            .filter(|c| row[*c as usize] > 0.0)
            .max_by(|a, b| row[*a as usize].total_cmp(&row[*b as usize]))
            .map(|c| c as u8)
    }
}

/// The Planner's bid, computed afresh from the turn: its cards above
/// `strong`'s best are sure wins, given from the top down to the best prizes
/// left; a prize with a sure win gets it, any other its lowest card. (The
/// Planner keeps a plan through the round; with no card bid in between this
/// gives the same bids.)
pub fn planner_bid(t: &Turn) -> Option<u8> {
    let best_mine = 31 - t.mine.leading_zeros().min(31);
    let mut sure: Vec<u32> = cards(t.theirs).filter(|c| *c > best_mine).collect();
    sure.reverse();
    let mut prizes: Vec<u32> = cards(t.undrawn | (1 << t.prize)).collect();
    prizes.reverse();
    match prizes.iter().position(|p| *p == u32::from(t.prize)) {
        Some(k) if k < sure.len() => Some(sure[k] as u8),
        _ => nearest(t.theirs, 0),
    }
}

impl Family {
    /// The card this family bids for sure, for a deterministic family.
    pub fn point(self, t: &Turn, table: &TableCounts) -> Option<u8> {
        let p = i32::from(t.prize);
        match self {
            Family::Offset(k) => nearest(t.theirs, p + i32::from(k)),
            Family::Copy(k) => t
                .my_last
                .and_then(|c| nearest(t.theirs, i32::from(c) + i32::from(k))),
            Family::Highest => nearest(t.theirs, 99),
            Family::Lowest => nearest(t.theirs, -99),
            Family::Planner => planner_bid(t),
            Family::Table => table.favourite(t.prize, t.theirs),
            Family::NearPrize | Family::Uniform | Family::Equilibrium => None,
        }
    }

    /// The probability that the opponent bids `card` on turn `t`. The
    /// equilibrium's is passed in (`eq`, computed by the solver).
    pub fn likelihood(self, t: &Turn, card: u8, table: &TableCounts, eq: Option<f64>) -> f64 {
        let n = f64::from(t.theirs.count_ones().max(1));
        let spread = |p: f64| (1.0 - SLIP) * p + SLIP / n;
        match self {
            Family::Uniform => 1.0 / n,
            Family::Table => table.probability(t.prize, card, t.theirs),
            Family::Equilibrium => spread(eq.unwrap_or(1.0 / n)),
            Family::NearPrize => spread(
                (-1..=2)
                    .filter(|o| nearest(t.theirs, i32::from(t.prize) + o) == Some(card))
                    .count() as f64
                    / 4.0,
            ),
            Family::Copy(_) if t.my_last.is_none() => 1.0 / n,
            _ => spread(f64::from(u8::from(self.point(t, table) == Some(card)))),
        }
    }

    /// A bid drawn from this family for turn `t` (the equilibrium, which
    /// rollouts cannot afford to solve, is played as `near-prize`).
    pub fn sample(self, t: &Turn, table: &TableCounts, rng: &mut BotRng) -> u8 {
        let pick = |rng: &mut BotRng| -> u8 {
            let n = t.theirs.count_ones().max(1);
            cards(t.theirs)
                .nth(rng.random_range(0..n) as usize)
                .unwrap_or(1) as u8
        };
        match self {
            Family::Uniform => pick(rng),
            Family::NearPrize | Family::Equilibrium => {
                nearest(t.theirs, i32::from(t.prize) + rng.random_range(-1..=2))
                    .unwrap_or_else(|| pick(rng))
            }
            Family::Table => {
                if table.favourite(t.prize, t.theirs).is_none() {
                    return pick(rng);
                }
                let r: f64 = rng.random();
                let mut acc = 0.0;
                for c in cards(t.theirs) {
                    acc += table.probability(t.prize, c as u8, t.theirs);
                    if r < acc {
                        return c as u8;
                    }
                }
                pick(rng)
            }
            _ => self.point(t, table).unwrap_or_else(|| pick(rng)),
        }
    }
}

/// The turns of `obs`'s current round as the opponent saw them, each with
/// the card it bid.
pub fn round_turns(obs: &GoofspielObservation) -> Vec<(Turn, u8)> {
    let n = obs.rounds.get(obs.round).copied().unwrap_or(0).min(31);
    let all: u32 = (1..=u32::from(n)).fold(0, |m, c| m | (1 << c));
    let (mut mine, mut theirs, mut undrawn) = (all, all, all);
    let mut my_last = None;
    let mut out = vec![];
    for t in obs.history.get(obs.round).map_or(&[][..], |v| &v[..]) {
        let prize = t.drawn.min(31);
        undrawn &= !(1u32 << prize);
        out.push((
            Turn {
                theirs,
                mine,
                prize,
                undrawn,
                my_last,
            },
            t.bids[1],
        ));
        mine &= !(1u32 << t.bids[0].min(31));
        theirs &= !(1u32 << t.bids[1].min(31));
        my_last = Some(t.bids[0]);
    }
    out
}

/// The exact Planner's bids for the turns of a round, replayed from the
/// opponent's seat (its plan is kept through the round).
pub fn planner_bids(obs: &GoofspielObservation, turns: &[(Turn, u8)]) -> Vec<u8> {
    let mut planner = Planner::default();
    let mut rng = crate::bot_rng(0);
    let list = |m: u32| cards(m).map(|c| c as u8).collect::<Vec<u8>>();
    turns
        .iter()
        .map(|(t, _)| {
            let view = GoofspielObservation {
                seat: croupier_rules::Seat(1),
                rounds: obs.rounds.clone(),
                round: obs.round,
                hand: list(t.theirs),
                opponent_hand: list(t.mine),
                lot: vec![t.prize],
                current: Some(t.prize),
                next: None,
                undrawn: list(t.undrawn),
                my_bid: None,
                opponent_has_bid: false,
                my_points: 0,
                opponent_points: 0,
                history: vec![],
            };
            let legal: Vec<croupier_rules::goofspiel::Bid> = view
                .hand
                .iter()
                .map(|c| croupier_rules::goofspiel::Bid(*c))
                .collect();
            if legal.is_empty() {
                return 0;
            }
            planner.act(&view, &legal, &mut rng).0
        })
        .collect()
}

/// The posterior over [`FAMILIES`]: log-likelihoods carried from earlier
/// games plus this round's.
#[derive(Clone, Debug, Default)]
pub struct Belief {
    /// Evidence kept from earlier games, per family (natural log).
    pub carried: Vec<f64>,
    /// The table counts learnt from earlier games.
    pub table: TableCounts,
}

impl Belief {
    /// The prior's log weight of family `i`.
    fn prior(i: usize) -> f64 {
        if i == EQUILIBRIUM {
            EQUILIBRIUM_PRIOR.ln()
        } else {
            ((1.0 - EQUILIBRIUM_PRIOR) / (FAMILIES.len() - 1) as f64).ln()
        }
    }

    /// The log-likelihood of each family over `turns` (the equilibrium's
    /// probability of each bid given by `eq`).
    pub fn evidence(
        &self,
        obs: &GoofspielObservation,
        turns: &[(Turn, u8)],
        eq: &[Option<f64>],
    ) -> Vec<f64> {
        let planned = planner_bids(obs, turns);
        FAMILIES
            .iter()
            .map(|f| {
                turns
                    .iter()
                    .enumerate()
                    .map(|(k, (t, bid))| {
                        let p = match f {
                            Family::Planner => {
                                let n = f64::from(t.theirs.count_ones().max(1));
                                let hit = f64::from(u8::from(planned.get(k) == Some(bid)));
                                (1.0 - SLIP) * hit + SLIP / n
                            }
                            _ => f.likelihood(t, *bid, &self.table, eq.get(k).copied().flatten()),
                        };
                        p.max(1e-9).ln()
                    })
                    .sum()
            })
            .collect()
    }

    /// The posterior weights given this round's evidence.
    pub fn posterior(&self, evidence: &[f64]) -> Vec<f64> {
        let logs: Vec<f64> = (0..FAMILIES.len())
            .map(|i| {
                Self::prior(i)
                    + evidence.get(i).copied().unwrap_or(0.0)
                    + self.carried.get(i).copied().unwrap_or(0.0)
            })
            .collect();
        let top = logs.iter().copied().fold(f64::MIN, f64::max);
        let w: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
        let sum: f64 = w.iter().sum();
        w.iter().map(|x| x / sum).collect()
    }

    /// Folds a finished round's evidence and bids into what the next game
    /// starts from.
    pub fn keep(&mut self, evidence: &[f64], turns: &[(Turn, u8)]) {
        self.carried.resize(FAMILIES.len(), 0.0);
        for (c, e) in self.carried.iter_mut().zip(evidence) {
            *c = (*c + e) * CARRY_OVER;
        }
        self.table.fade(CARRY_OVER as f32);
        for (t, bid) in turns {
            self.table.add(t.prize, *bid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(theirs: &[u8], mine: &[u8], prize: u8, undrawn: &[u8]) -> Turn {
        let m = |v: &[u8]| v.iter().fold(0u32, |m, c| m | (1 << c));
        Turn {
            theirs: m(theirs),
            mine: m(mine),
            prize,
            undrawn: m(undrawn),
            my_last: None,
        }
    }

    #[test]
    fn each_family_predicts_its_own_rule() {
        let t = turn(&[1, 3, 5, 9], &[2, 4, 6, 7], 5, &[2, 3, 4]);
        let table = TableCounts::default();
        assert_eq!(Family::Offset(0).point(&t, &table), Some(5));
        assert_eq!(
            Family::Offset(1).point(&t, &table),
            Some(5),
            "6 gone: 5 is nearest"
        );
        assert_eq!(
            Family::Offset(2).point(&t, &table),
            Some(9),
            "7: 5 and 9 tie, the higher"
        );
        assert_eq!(Family::Highest.point(&t, &table), Some(9));
        assert_eq!(Family::Lowest.point(&t, &table), Some(1));
        // The Planner's 9 beats all of strong's cards: it goes on the best
        // prize left, 5.
        assert_eq!(Family::Planner.point(&t, &table), Some(9));
        let total: f64 = [1, 3, 5, 9]
            .iter()
            .map(|c| Family::NearPrize.likelihood(&t, *c, &table, None))
            .sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
    }
}
