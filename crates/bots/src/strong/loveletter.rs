//! Love Letter `strong`: determinized Monte Carlo search.
//!
//! For every decision it samples the hidden cards (the other players' hands,
//! the set-aside card and the deck order) from what this seat has not seen,
//! keeping every card it knows another player holds (Clown looks, Knight
//! duels, its own General swaps) and weighting each other hand by a simple
//! belief (a player most likely kept a card at least as high as the one it
//! just played); each candidate play is then played out to
//! the end of the round on every sample alike, every seat played by the
//! card-counting [`Heuristic`](crate::loveletter::Heuristic), and the play
//! that wins the round most often is chosen. Only the [`preferred`] plays are
//! candidates. Works under both rule sets and at every table size.

use croupier_rules::loveletter::{
    Card, LoveLetter, LoveLetterEvent, LoveLetterObservation, LoveLetterVariant, Play,
};
use croupier_rules::{Game, Seat};
use rand::seq::SliceRandom;
use rand::Rng;

use super::Budget;
use crate::loveletter::{preferred, unseen_counts, Heuristic};
use crate::{BotRng, Strategy};

/// Most actions a play-out takes before it is scored as lost (a round has
/// at most 16 draws; this only guards against a rules change).
const MAX_PLAYOUT_ACTIONS: usize = 64;

/// How much likelier a hand at least as high as the player's last play is
/// than a lower one (players mostly keep the higher card).
const KEPT_WEIGHT: f64 = 3.0;

/// The `strong` Love Letter strategy.
#[derive(Debug, Default, Clone)]
pub struct Strong {
    rules: LoveLetterVariant,
    budget: Budget,
}

impl Strong {
    /// A strategy with the given thinking budget.
    pub fn new(budget: Budget) -> Self {
        Strong {
            rules: LoveLetterVariant::default(),
            budget,
        }
    }

    /// One determinization: a state of the round consistent with `obs`, or
    /// `None` when the observation does not add up (then the heuristic plays).
    fn sample(&self, obs: &LoveLetterObservation, rng: &mut BotRng) -> Option<LoveLetter> {
        let mut counts = unseen_counts(obs);
        let me = obs.seat.index();
        let mut others: Vec<Option<Card>> = vec![None; obs.players.len()];
        for (s, c) in &obs.known {
            let i = s.index();
            if i != me && i < others.len() && obs.players[i].in_round {
                let v = usize::from(c.value());
                counts[v] = counts[v].checked_sub(1)?;
                others[i] = Some(*c);
            }
        }
        let mut pool: Vec<Card> = (1..=8u8)
            .filter_map(Card::from_value)
            .flat_map(|c| std::iter::repeat_n(c, usize::from(counts[usize::from(c.value())])))
            .collect();
        // Belief: a player who chose what to play most likely kept the
        // higher card, so hands at least as high as its last play weigh more.
        for (i, view) in obs.players.iter().enumerate() {
            if i == me || !view.in_round || others[i].is_some() || pool.is_empty() {
                continue;
            }
            let floor = view.played.last().map_or(0, |c| c.value());
            let weight = |c: &Card| if c.value() >= floor { KEPT_WEIGHT } else { 1.0 };
            let total: f64 = pool.iter().map(weight).sum();
            let mut x = rng.random::<f64>() * total;
            let mut pick = pool.len() - 1;
            for (k, c) in pool.iter().enumerate() {
                x -= weight(c);
                if x < 0.0 {
                    pick = k;
                    break;
                }
            }
            others[i] = Some(pool.swap_remove(pick));
        }
        pool.shuffle(rng);
        let mut next = pool.into_iter();
        let set_aside = next.next()?;
        let deck: Vec<Card> = next.collect();
        LoveLetter::from_observation(&self.rules, obs, &others, &deck, set_aside, rng.random()).ok()
    }

    /// Plays `play` in `state`, then the rest of the round by the heuristic
    /// for every seat; 1 if `me` wins the round, else 0.
    fn play_out(&self, mut state: LoveLetter, me: Seat, play: Play, rng: &mut BotRng) -> f64 {
        let start = state.events().len();
        if state.apply(me, play).is_err() {
            return 0.0;
        }
        let mut heuristic = Heuristic::default();
        heuristic.new_game(me, &self.rules, state.num_seats());
        let mut legal = Vec::with_capacity(32);
        for _ in 0..MAX_PLAYOUT_ACTIONS {
            let won = state.events()[start..].iter().find_map(|e| match e {
                LoveLetterEvent::RoundEnd { winner, .. } => Some(*winner == me),
                _ => None,
            });
            if let Some(w) = won {
                return if w { 1.0 } else { 0.0 };
            }
            let Some(seat) = state.to_act().first() else {
                return 0.0;
            };
            legal.clear();
            state.legal_actions(seat, &mut legal);
            if legal.is_empty() {
                return 0.0;
            }
            let obs = state.observation(seat);
            let a = heuristic.act(&obs, &legal, rng);
            if state.apply(seat, a).is_err() {
                return 0.0;
            }
        }
        0.0
    }
}

impl Strategy<LoveLetter> for Strong {
    fn new_game(&mut self, _seat: Seat, variant: &LoveLetterVariant, _seats: usize) {
        self.rules = variant.clone();
    }

    fn act(&mut self, obs: &LoveLetterObservation, legal: &[Play], rng: &mut BotRng) -> Play {
        let candidates = preferred(obs, legal, &self.rules);
        let fallback = |rng: &mut BotRng| {
            let mut h = Heuristic::default();
            h.new_game(obs.seat, &self.rules, obs.players.len());
            h.act(obs, legal, rng)
        };
        if candidates.len() <= 1 {
            return candidates.first().copied().unwrap_or_else(|| fallback(rng));
        }
        let me = obs.seat;
        let start = std::time::Instant::now();
        let (totals, samples) = self.budget.search(rng, candidates.len(), |totals, rng| {
            let Some(state) = self.sample(obs, rng) else {
                return false;
            };
            let seed: u64 = rng.random();
            let mut values = Vec::with_capacity(candidates.len());
            for p in &candidates {
                // A sample left unfinished at the deadline is dropped whole.
                if self.budget.cut(start) {
                    return false;
                }
                // Every candidate meets the same deal and the same luck.
                let mut r = crate::bot_rng(seed);
                values.push(self.play_out(state.clone(), me, *p, &mut r));
            }
            for (t, v) in totals.iter_mut().zip(values) {
                *t += v;
            }
            true
        });
        if samples == 0 {
            return fallback(rng);
        }
        let best = (0..candidates.len())
            .max_by(|a, b| totals[*a].total_cmp(&totals[*b]).then(b.cmp(a)))
            .unwrap_or(0);
        candidates[best]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::loveletter::Rules;

    /// Every sampled state shows the deciding seat exactly what it saw, at
    /// every decision of heuristic games under both rule sets and all sizes.
    #[test]
    fn samples_agree_with_the_observation() {
        let mut checked = 0;
        for (seats, postman) in [(2, false), (3, true), (4, false), (4, true)] {
            let variant = if postman {
                LoveLetterVariant::postman()
            } else {
                LoveLetterVariant::standard()
            };
            assert_eq!(variant.rules == Rules::Postman, postman);
            for seed in 0..4u64 {
                let mut g = LoveLetter::new(&variant, seats, seed).unwrap();
                let mut rng = crate::bot_rng(seed);
                let mut h = Heuristic::default();
                h.new_game(Seat(0), &variant, seats);
                let strong = Strong {
                    rules: variant.clone(),
                    budget: Budget::iterations(1),
                };
                while let Some(seat) = g.to_act().first() {
                    let obs = g.observation(seat);
                    let state = strong.sample(&obs, &mut rng).expect("a consistent sample");
                    assert_eq!(state.observation(seat), obs);
                    checked += 1;
                    let legal = g.legal_vec(seat);
                    let a = h.act(&obs, &legal, &mut rng);
                    g.apply(seat, a).unwrap();
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
