//! Love Letter `strong`: information-set Monte Carlo tree search.
//!
//! For every decision it runs single-observer ISMCTS ([`tree`]): each
//! iteration samples the hidden cards (the other players' hands, the
//! set-aside card and the deck order) from what this seat has not seen,
//! keeping every card it knows another player holds (Clown looks, Knight
//! duels, its own General swaps) and weighting each other hand by how
//! likely it makes that player's last two plays under the card-counting
//! heuristic ([`kept_likelihood`]) and by the Soldier guesses that missed
//! it ([`exposure::Clues`]); at a two-player table the opponent's card
//! is weighed instead by a filter carried over every play of the round
//! ([`filter::Filter`]: each play judged on the opponent's exact view,
//! rebuilt by the rules); then it descends a tree of this seat's own
//! information sets, the other seats moving by the heuristic on their own
//! view (which includes what they saw of this seat's hand,
//! [`exposure::Exposure`]). The play at the root with the most visits is
//! chosen. Only the [`preferred`] plays are candidates. Works under both
//! rule sets and at every table size.

use croupier_rules::loveletter::{
    Card, LoveLetter, LoveLetterEvent, LoveLetterObservation, LoveLetterVariant, Play,
};
use croupier_rules::Seat;
use rand::seq::SliceRandom;
use rand::Rng;

use super::Budget;
use exposure::{Clues, Exposure};
use filter::{Filter, MISPLAY};
use tree::{Params, Tree};

pub mod exposure;
pub mod filter;
pub mod tree;
use crate::loveletter::{preferred, score, unseen_counts, Heuristic};
use crate::{BotRng, Strategy};

/// The plays of `card` that the seat of `o` could make: the rules' own
/// list for `o` ([`LoveLetterObservation::legal_plays_of`]), less those the
/// heuristic never considers.
fn plays_of(o: &LoveLetterObservation, rules: &LoveLetterVariant, card: Card) -> Vec<Play> {
    preferred(o, &o.legal_plays_of(rules, card), rules)
}

/// How likely each card (by value) is to be the one seat `i` kept when it
/// made its last play, relative to the others: 1 when the card-counting
/// heuristic, holding that card and the one played, plays the card it did
/// (½ on a tie), [`MISPLAY`] when it would have kept the played card, and 0
/// when the pair could not have been held (the Minister with 12 or more
/// puts its holder out as it draws, under the standard rules). The
/// player's view at that time is taken as this seat's view now, with the
/// card played back in its hand. Opponent modelling by Bayesian inference
/// over an assumed policy, as in Whitehouse, Powley and Cowling's ISMCTS
/// work and Ponsen et al.'s MCTS with opponent models.
///
/// `back` counts plays back from the last: 1 weighs the card kept at the
/// play before (the view is this seat's with both cards back in hand).
pub fn kept_likelihood(
    obs: &LoveLetterObservation,
    rules: &LoveLetterVariant,
    i: usize,
    back: usize,
) -> [f64; 9] {
    let mut lik = [1.0; 9];
    let Some(view) = obs.players.get(i) else {
        return lik;
    };
    let Some(played) = view
        .played
        .len()
        .checked_sub(1 + back)
        .and_then(|k| view.played.get(k).copied())
    else {
        return lik;
    };
    let mut o = obs.clone();
    o.seat = Seat(i as u8);
    for _ in 0..=back {
        o.players[i].played.pop();
    }
    o.players[i].protected = false;
    o.known.clear();
    o.deck = obs.deck.saturating_add(1 + back as u8);
    o.hand.clear();
    let best = |o: &LoveLetterObservation, card: Card| -> f64 {
        let unseen = unseen_counts(o);
        plays_of(o, rules, card)
            .into_iter()
            .map(|p| score(o, p, &unseen, rules))
            .fold(f64::NEG_INFINITY, f64::max)
    };
    for kept in Card::ALL {
        let v = usize::from(kept.value());
        let pair = [played, kept];
        if !rules.is_postman()
            && pair.contains(&Card::Minister)
            && played.value() + kept.value() >= 12
        {
            lik[v] = 0.0;
            continue;
        }
        if kept == played {
            continue;
        }
        o.hand = pair.to_vec();
        let (mine, other) = (best(&o, played), best(&o, kept));
        lik[v] = if mine > other + 1e-9 {
            1.0
        } else if mine + 1e-9 >= other {
            0.5
        } else {
            MISPLAY
        };
    }
    lik
}

/// The `strong` Love Letter strategy.
#[derive(Debug, Clone)]
pub struct Strong {
    rules: LoveLetterVariant,
    budget: Budget,
    params: Params,
    /// What the other seats know of this seat's hand (from its events).
    exposure: Exposure,
    /// What the public events say of the other hands.
    clues: Clues,
    /// The belief over the opponent's card at a two-player table.
    filter: Filter,
}

/// How much likelier a card named by this seat's Soldier, which the target
/// survived, is than before once the target has drawn and played once
/// since (it held another card; it may have drawn the one named).
const MISSED_GUESS: f64 = 0.3;

impl Strong {
    /// A strategy with the given thinking budget.
    pub fn new(budget: Budget) -> Self {
        Strong {
            rules: LoveLetterVariant::default(),
            budget,
            params: Params::default(),
            exposure: Exposure::new(Seat(0)),
            clues: Clues::default(),
            filter: Filter::default(),
        }
    }

    /// How likely each card (by value) is to be seat `i`'s, relative to
    /// the others: what its last plays say under the heuristic's policy
    /// ([`kept_likelihood`], the last two plays when no card came into its
    /// hand from outside since), times what missed Soldiers say. No
    /// weighting for this seat, a hand it knows, or a hand that came from
    /// a General (the player holds its target's card) or a Wizard's draw.
    fn belief(&self, obs: &LoveLetterObservation, i: usize) -> [f64; 9] {
        let mut lik = [1.0; 9];
        let Some(view) = obs.players.get(i) else {
            return lik;
        };
        let general = view.played.last() == Some(&Card::General);
        let fresh = self.clues.since_fresh(i);
        if i == obs.seat.index() || obs.known.iter().any(|(s, _)| s.index() == i) {
            return lik;
        }
        if !general && fresh >= 1 {
            lik = kept_likelihood(obs, &self.rules, i, 0);
            let before =
                view.played.len() >= 2 && view.played[view.played.len() - 2] != Card::General;
            if fresh >= 2 && before {
                // The card kept before is the one played last or this one.
                let prior = kept_likelihood(obs, &self.rules, i, 1);
                let last = view.played.last().map_or(0, |c| usize::from(c.value()));
                for v in 1..=8 {
                    lik[v] *= prior[last] + prior[v];
                }
            }
        }
        self.clues.weigh_misses(i, &mut lik, MISSED_GUESS);
        lik
    }

    /// One determinization: a state of the round consistent with `obs`, or
    /// `None` when the observation does not add up (then the heuristic plays).
    fn sample(
        &self,
        obs: &LoveLetterObservation,
        belief: &[[f64; 9]],
        rng: &mut BotRng,
    ) -> Option<LoveLetter> {
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
        // Belief: each other hand weighs as likely as it makes that
        // player's last play (see [`kept_likelihood`]).
        for (i, view) in obs.players.iter().enumerate() {
            if i == me || !view.in_round || others[i].is_some() || pool.is_empty() {
                continue;
            }
            let lik = belief.get(i).copied().unwrap_or([1.0; 9]);
            let weight = |c: &Card| lik[usize::from(c.value())];
            let total: f64 = pool.iter().map(weight).sum();
            let mut pick = pool.len() - 1;
            if total > 0.0 {
                let mut x = rng.random::<f64>() * total;
                for (k, c) in pool.iter().enumerate() {
                    x -= weight(c);
                    if x < 0.0 {
                        pick = k;
                        break;
                    }
                }
            } else {
                pick = rng.random_range(0..pool.len());
            }
            others[i] = Some(pool.swap_remove(pick));
        }
        pool.shuffle(rng);
        let mut next = pool.into_iter();
        let set_aside = next.next()?;
        let deck: Vec<Card> = next.collect();
        LoveLetter::from_observation(&self.rules, obs, &others, &deck, set_aside, rng.random()).ok()
    }
}

impl Strategy<LoveLetter> for Strong {
    fn new_game(&mut self, seat: Seat, variant: &LoveLetterVariant, _seats: usize) {
        self.rules = variant.clone();
        self.clues = Clues::default();
        self.exposure = Exposure::new(seat);
        self.filter = Filter::default();
    }

    fn notify(&mut self, event: &LoveLetterEvent) {
        let knew = match event {
            LoveLetterEvent::Played { seat, .. } => self.exposure.known_by(*seat),
            _ => None,
        };
        self.filter.notify(event, knew);
        self.exposure.notify(event);
        self.clues.notify(event);
    }

    fn act(&mut self, obs: &LoveLetterObservation, legal: &[Play], rng: &mut BotRng) -> Play {
        let me = obs.seat;
        if self.exposure.me() != me {
            self.exposure = Exposure::new(me);
        }
        self.exposure.sync(obs);
        let mut belief: Vec<[f64; 9]> = (0..obs.players.len())
            .map(|i| self.belief(obs, i))
            .collect();
        if obs.players.len() == 2 {
            let opp = 1 - me.index().min(1);
            let fallback = belief[opp];
            if let Some(b) = self.filter.belief(obs, &self.rules, || fallback) {
                belief[opp] = b;
            }
        }
        let play = self.choose(obs, legal, &belief, rng);
        self.filter.record(obs, play);
        play
    }
}

impl Strong {
    /// The play chosen by the search, given the belief over each hand.
    fn choose(
        &mut self,
        obs: &LoveLetterObservation,
        legal: &[Play],
        belief: &[[f64; 9]],
        rng: &mut BotRng,
    ) -> Play {
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
        let trees = self.budget.search_with(
            rng,
            || Tree::new(obs, &candidates),
            |tree, rng| {
                let Some(state) = self.sample(obs, belief, rng) else {
                    return false;
                };
                tree.iterate(state, me, &self.exposure, &self.rules, &self.params, rng);
                true
            },
        );
        let mut visits = vec![0u64; candidates.len()];
        let mut samples = 0;
        for (tree, n) in &trees {
            samples += n;
            for (v, (_, n, _)) in visits.iter_mut().zip(tree.visits(obs).unwrap_or_default()) {
                *v += u64::from(n);
            }
        }
        if samples == 0 {
            return fallback(rng);
        }
        let best = (0..candidates.len())
            .max_by(|a, b| visits[*a].cmp(&visits[*b]).then(b.cmp(a)))
            .unwrap_or(0);
        candidates[best]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::loveletter::Rules;
    use croupier_rules::Game;

    /// The opponent's last play weighs the card it kept: the heuristic
    /// keeps the Princess over a Wizard, would rather have played a Soldier
    /// than a Wizard, and cannot have held the Minister with a Wizard.
    #[test]
    fn the_last_play_weighs_the_card_kept() {
        use croupier_rules::loveletter::SeatView;
        let view = |played: Vec<Card>| SeatView {
            in_round: true,
            protected: false,
            played,
            out_hand: vec![],
        };
        let obs = LoveLetterObservation {
            seat: Seat(0),
            round: 0,
            wins: vec![0, 0],
            wins_needed: 4,
            hand: vec![Card::Soldier, Card::Clown],
            players: vec![view(vec![]), view(vec![Card::Wizard])],
            deck: 11,
            to_act: Some(Seat(0)),
            first: Seat(1),
            known: vec![],
        };
        let standard = LoveLetterVariant::standard();
        let lik = kept_likelihood(&obs, &standard, 1, 0);
        assert_eq!(lik[usize::from(Card::Princess.value())], 1.0);
        assert_eq!(lik[usize::from(Card::Minister.value())], 0.0);
        assert_eq!(lik[usize::from(Card::Soldier.value())], MISPLAY);
        // Postman's Minister bites only when drawn, so the pair is possible.
        let postman = kept_likelihood(&obs, &LoveLetterVariant::postman(), 1, 0);
        assert!(postman[usize::from(Card::Minister.value())] > 0.0);
        // A player that has not played yet: no evidence.
        assert_eq!(kept_likelihood(&obs, &standard, 0, 0), [1.0; 9]);
    }

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
                    params: Params::default(),
                    exposure: Exposure::new(Seat(0)),
                    clues: Clues::default(),
                    filter: Filter::default(),
                };
                while let Some(seat) = g.to_act().first() {
                    let obs = g.observation(seat);
                    let belief = vec![[1.0; 9]; seats];
                    let state = strong
                        .sample(&obs, &belief, &mut rng)
                        .expect("a consistent sample");
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
