//! The best response to the opponent model, by rollouts.
//!
//! Every rollout draws a family from the posterior, the order of the prizes
//! still face down, and the opponent's bid this turn; then it plays each
//! card of `strong`'s hand against them (common random numbers) to the end
//! of the round. After this turn the opponent bids by the family drawn and
//! `strong` by [`reply`]: against a rule that names its card, the cheapest
//! card that beats it (else its lowest); against a rule that does not, its
//! k-th lowest card on the k-th lowest prize left. A won match counts 1, a
//! draw ½ (match points so far included), and the margin breaks ties.

use croupier_rules::goofspiel::GoofspielObservation;
use rand::seq::SliceRandom;
use rand::Rng;

use super::model::{nearest, Family, TableCounts, Turn, FAMILIES};
use super::solver::{cards, mask};
use crate::strong::Budget;
use crate::BotRng;

/// Most rollouts per decision (each plays every candidate once).
pub const ROLLOUTS: u32 = 2000;

/// Weight of the point margin (per point, as a share of a win) that breaks
/// ties between cards that win equally often.
const MARGIN: f64 = 0.002;

/// `strong`'s own bid in a rollout for turn `t` (`t.mine` is its hand)
/// against `family` with a carried lot of `lot` (this turn's prize in it).
pub fn reply(family: Family, t: &Turn, lot: u32, table: &TableCounts) -> u8 {
    let lowest = nearest(t.mine, -99).unwrap_or(1);
    let beat = |b: u8| cards(t.mine).find(|c| *c > u32::from(b)).map(|c| c as u8);
    let named = match family {
        Family::NearPrize | Family::Equilibrium => {
            nearest(t.theirs, i32::from(t.prize) + 2).filter(|_| {
                // Only worth outbidding on the better half of the prizes.
                let left = t.undrawn | (1 << t.prize);
                let above = cards(left).filter(|p| *p > lot).count();
                above * 2 < left.count_ones() as usize
            })
        }
        _ => family.point(t, table),
    };
    match named {
        Some(b) => beat(b).unwrap_or(lowest),
        None if matches!(family, Family::NearPrize | Family::Equilibrium) => lowest,
        None => {
            // Rank for rank: the k-th lowest card on the k-th lowest prize.
            let left = t.undrawn | (1 << t.prize);
            let rank = (left & ((1u32 << t.prize) - 1)).count_ones() as usize;
            let n = t.mine.count_ones() as usize;
            cards(t.mine)
                .nth(rank.min(n.saturating_sub(1)))
                .unwrap_or(1) as u8
        }
    }
}

/// What the rollouts play against.
#[derive(Clone, Copy, Debug)]
pub struct Against<'a> {
    /// The mixture's weights over [`FAMILIES`].
    pub weights: &'a [f64],
    /// The prize-to-card table learnt so far.
    pub table: &'a TableCounts,
    /// Whether a tie carries the lot to the next turn.
    pub carry_ties: bool,
}

/// The value of each card of `obs.hand` (cards ascending) against the
/// mixture `against`, by rollouts within `budget` (less the time already
/// `spent`), for a lot of `lot`; `None` when there is no choice to make.
pub fn values(
    obs: &GoofspielObservation,
    lot: u32,
    against: &Against,
    budget: Budget,
    spent: std::time::Duration,
    rng: &mut BotRng,
) -> Option<Vec<f64>> {
    let Against {
        weights,
        table,
        carry_ties,
    } = *against;
    let mut hand: Vec<u8> = obs.hand.clone();
    hand.sort_unstable();
    let n = hand.len();
    // Cards are bits of a u32: an observation with a card of 32 or more
    // (a garbled protocol line) gets no rollouts, only the equilibrium.
    let prize = obs.current.filter(|p| *p < 32)?;
    let fits = |v: &[u8]| v.iter().all(|c| *c < 32);
    if !fits(&hand) || !fits(&obs.opponent_hand) || !fits(&obs.undrawn) {
        return None;
    }
    if n < 2 || obs.opponent_hand.len() != n || obs.undrawn.len() + 1 != n {
        return None;
    }
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return None;
    }
    let mine0 = mask(&hand);
    let theirs0 = mask(&obs.opponent_hand);
    let undrawn0 = mask(&obs.undrawn);
    let my_last0 = obs
        .history
        .get(obs.round)
        .and_then(|v| v.last())
        .map(|t| t.bids[0]);
    let diff0 = i64::from(obs.my_points) - i64::from(obs.opponent_points);
    let next = obs.next;
    let mut prizes0 = [0u8; 32];
    prizes0[..n - 1].copy_from_slice(&obs.undrawn);
    let mut budget = budget;
    budget.think = budget.think.saturating_sub(spent);
    let width = n + 1;
    let (totals, _) = budget.search(rng, width, |acc, r| {
        if acc[n] >= f64::from(ROLLOUTS) {
            return false;
        }
        acc[n] += 1.0;
        // The family of this rollout.
        let mut x = r.random::<f64>() * total;
        let mut family = FAMILIES[FAMILIES.len() - 1];
        for (f, w) in FAMILIES.iter().zip(weights) {
            if x < *w {
                family = *f;
                break;
            }
            x -= w;
        }
        let mut prizes = prizes0;
        prizes[..n - 1].shuffle(r);
        if let Some(k) = next.and_then(|c| prizes[..n - 1].iter().position(|p| *p == c)) {
            prizes.swap(0, k);
        }
        let now = Turn {
            theirs: theirs0,
            mine: mine0,
            prize,
            undrawn: undrawn0,
            my_last: my_last0,
        };
        let first = family.sample(&now, table, r);
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
        for (i, &a) in hand.iter().enumerate() {
            let mut pot = i64::from(lot);
            let mut diff = diff0;
            settle(a, first, &mut pot, &mut diff);
            let mut t = Turn {
                theirs: theirs0 & !(1u32 << first),
                mine: mine0 & !(1u32 << a),
                prize,
                undrawn: undrawn0,
                my_last: Some(a),
            };
            for &p in &prizes[..n - 1] {
                t.prize = p;
                t.undrawn &= !(1u32 << p);
                pot += i64::from(p);
                let theirs = family.sample(&t, table, r);
                let mine = reply(family, &t, pot as u32, table);
                settle(mine, theirs, &mut pot, &mut diff);
                t.mine &= !(1u32 << mine);
                t.theirs &= !(1u32 << theirs);
                t.my_last = Some(mine);
            }
            let result = match diff.cmp(&0) {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Equal => 0.5,
                std::cmp::Ordering::Less => 0.0,
            };
            acc[i] += result + MARGIN * (diff - diff0) as f64;
        }
        true
    });
    let runs = totals[n].max(1.0);
    Some(totals[..n].iter().map(|v| v / runs).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strong::goofspiel::model::Family;

    fn obs(hand: &[u8], theirs: &[u8], current: u8, undrawn: &[u8]) -> GoofspielObservation {
        GoofspielObservation {
            seat: croupier_rules::Seat(0),
            rounds: vec![13],
            round: 0,
            hand: hand.to_vec(),
            opponent_hand: theirs.to_vec(),
            lot: vec![current],
            current: Some(current),
            next: None,
            undrawn: undrawn.to_vec(),
            my_bid: None,
            opponent_has_bid: false,
            my_points: 0,
            opponent_points: 0,
            history: vec![vec![]],
        }
    }

    fn against<'a>(weights: &'a [f64], table: &'a TableCounts) -> Against<'a> {
        Against {
            weights,
            table,
            carry_ties: false,
        }
    }

    fn only(f: Family) -> Vec<f64> {
        FAMILIES
            .iter()
            .map(|g| f64::from(u8::from(*g == f)))
            .collect()
    }

    /// The card values against `family` alone on the first turn of GOPS,
    /// with prize 7 turned, and the best card.
    fn first_turn(family: Family) -> (Vec<f64>, u8) {
        let all: Vec<u8> = (1..=13).collect();
        let undrawn: Vec<u8> = (1..=13).filter(|c| *c != 7).collect();
        let table = TableCounts::default();
        let mut rng = crate::bot_rng(1);
        let v = values(
            &obs(&all, &all, 7, &undrawn),
            7,
            &against(&only(family), &table),
            Budget::iterations(300),
            Default::default(),
            &mut rng,
        )
        .unwrap();
        let best = (0..13).max_by(|a, b| v[*a].total_cmp(&v[*b])).unwrap();
        (v, all[best])
    }

    /// Against a bot that bids the prize's value, the best card is the one
    /// just above the prize; against the highest card, the lowest.
    #[test]
    fn the_best_response_beats_a_known_rule_cheaply() {
        let (v, best) = first_turn(Family::Offset(0));
        assert_eq!(best, 8, "{v:?}");
        assert!(v[7] > 0.99, "it wins every rollout: {v:?}");
        let (v, best) = first_turn(Family::Highest);
        assert_eq!(best, 1, "{v:?}");
    }

    /// A garbled observation (a card of 32 or more) gets no rollouts, and
    /// no panic: the strategy falls back to the equilibrium.
    #[test]
    fn cards_beyond_the_mask_get_no_rollouts() {
        let table = TableCounts::default();
        let w = only(Family::Offset(0));
        let mut rng = crate::bot_rng(1);
        for o in [
            obs(&[1, 40], &[2, 3], 5, &[4]),
            obs(&[1, 2], &[2, 3], 200, &[4]),
            obs(&[1, 2], &[2, 3], 5, &[99]),
        ] {
            let v = values(
                &o,
                5,
                &against(&w, &table),
                Budget::iterations(10),
                Default::default(),
                &mut rng,
            );
            assert!(v.is_none(), "{o:?}");
        }
        let fine = obs(&[1, 2], &[2, 3], 5, &[4]);
        assert!(values(
            &fine,
            5,
            &against(&w, &table),
            Budget::iterations(10),
            Default::default(),
            &mut rng
        )
        .is_some());
    }
}
