//! Goofspiel strategies: the Planner of seed 004, and the sparring panel.

pub mod panel;

use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielObservation, GoofspielVariant};
use croupier_rules::Seat;

use crate::{BotRng, Strategy};

/// Seed 004's "Planner": it looks for *sure wins* (its cards above the
/// opponent's best remaining card), assigns them from the top down to the best
/// victory cards still to come, plays the planned card when its victory card
/// comes up, and otherwise throws its lowest card.
///
/// This follows the Ruby original step by step, including that a plan, once
/// made, is kept for the rest of the round.
#[derive(Debug, Default, Clone)]
pub struct Planner {
    /// (victory card or none, planned bid card), in the order planned; the
    /// original's `@sure_wins` hash (a `nil` key arises when every remaining
    /// victory card already has a plan).
    sure_wins: Vec<(Option<u8>, u8)>,
    round: Option<usize>,
}

impl Planner {
    fn find_sure_wins(&mut self, obs: &GoofspielObservation, top: u8) {
        let opp_max = obs.opponent_hand.iter().copied().max().unwrap_or(0);
        // bids_left: victory cards not yet bid for, the current one included.
        let mut bids_left: Vec<u8> = obs.undrawn.clone();
        bids_left.extend(obs.current);
        for card in ((opp_max + 1)..=top).rev() {
            if !obs.hand.contains(&card) {
                continue;
            }
            if self.sure_wins.iter().any(|(_, c)| *c == card) {
                continue;
            }
            let target = bids_left
                .iter()
                .copied()
                .filter(|b| !self.sure_wins.iter().any(|(k, _)| *k == Some(*b)))
                .max();
            match self.sure_wins.iter_mut().find(|(k, _)| *k == target) {
                Some(entry) => entry.1 = card,
                None => self.sure_wins.push((target, card)),
            }
        }
    }
}

impl Strategy<Goofspiel> for Planner {
    fn new_game(&mut self, _seat: Seat, _variant: &GoofspielVariant, _seats: usize) {
        self.sure_wins.clear();
        self.round = None;
    }

    fn act(&mut self, obs: &GoofspielObservation, legal: &[Bid], _rng: &mut BotRng) -> Bid {
        if self.round != Some(obs.round) {
            self.sure_wins.clear();
            self.round = Some(obs.round);
        }
        let top = obs.rounds.get(obs.round).copied().unwrap_or(13);
        self.find_sure_wins(obs, top);
        let planned = obs
            .current
            .and_then(|cur| self.sure_wins.iter().find(|(k, _)| *k == Some(cur)))
            .map(|(_, c)| *c);
        let lowest = obs.hand.iter().copied().min();
        match planned.or(lowest) {
            Some(c) => Bid(c),
            None => legal[0],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::Game;

    #[test]
    fn planner_throws_its_lowest_card_without_a_sure_win() {
        let g = Goofspiel::new(&GoofspielVariant::gops(), 2, 1).unwrap();
        let obs = g.observation(Seat(0));
        let mut p = Planner::default();
        let legal = g.legal_vec(Seat(0));
        // The opponent still holds 13: nothing is sure.
        assert_eq!(p.act(&obs, &legal, &mut crate::bot_rng(0)), Bid(1));
    }

    #[test]
    fn planner_spends_a_sure_win_on_the_best_card_to_come() {
        // Seat 1 throws its 13 and 12 on the first two turns while seat 0
        // throws 1 and 2; seat 0 then holds 13 and 12 as sure wins.
        let mut g = Goofspiel::new(&GoofspielVariant::gops(), 2, 5).unwrap();
        for (a, b) in [(1, 13), (2, 12)] {
            g.apply(Seat(0), Bid(a)).unwrap();
            g.apply(Seat(1), Bid(b)).unwrap();
        }
        let obs = g.observation(Seat(0));
        let mut remaining: Vec<u8> = obs.undrawn.clone();
        remaining.extend(obs.current);
        remaining.sort_unstable();
        let best = *remaining.last().unwrap();
        let second = remaining[remaining.len() - 2];
        let mut p = Planner::default();
        let choice = p.act(&obs, &g.legal_vec(Seat(0)), &mut crate::bot_rng(0));
        let cur = obs.current.unwrap();
        let expected = if cur == best {
            13
        } else if cur == second {
            12
        } else {
            3
        };
        assert_eq!(choice, Bid(expected));
        assert!(p.sure_wins.contains(&(Some(best), 13)));
        assert!(p.sure_wins.contains(&(Some(second), 12)));
    }
}
