//! Information-set Monte Carlo tree search (single observer) for Love
//! Letter, after Cowling, Powley and Whitehouse, "Information Set Monte
//! Carlo Tree Search" (IEEE TCIAIG, 2012).
//!
//! Each iteration takes a fresh determinization (a full round consistent
//! with what the searching seat has seen, drawn from its belief) and walks
//! down a tree whose nodes are the searching seat's own information sets:
//! a node is keyed by that seat's observation, so every determinization
//! that looks the same to it shares the node, and the plays at a node (the
//! [`preferred`] ones) depend only on that observation. At its own nodes it
//! chooses by UCB1; the other seats move by the opponent model (the
//! card-counting heuristic on their own view of the determinization, or a
//! uniformly random preferred play with a small probability), i.e. they are
//! part of the environment. One node is added per iteration; below it the
//! round is played out by the heuristic for every seat, and the result (1
//! if the searching seat wins the round, else 0) is backed up the path.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use croupier_rules::loveletter::{
    LoveLetter, LoveLetterEvent, LoveLetterObservation, LoveLetterVariant, Play,
};
use croupier_rules::{Event, Game, Seat};
use rand::seq::IndexedRandom;
use rand::Rng;

use super::exposure::Exposure;
use crate::loveletter::{preferred, Heuristic};
use crate::{BotRng, Strategy};

/// Most actions an iteration takes before it is scored as lost (a round
/// has at most 16 draws; this only guards against a rules change).
const MAX_ACTIONS: usize = 64;

/// How the search plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// UCB1 exploration constant (rewards are 0 or 1).
    pub exploration: f64,
    /// Probability that another seat plays a uniformly random preferred
    /// play instead of the heuristic's.
    pub opponent_noise: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            exploration: 0.7,
            opponent_noise: 0.05,
        }
    }
}

/// One play of a node and its statistics.
#[derive(Debug, Clone)]
struct Arm {
    play: Play,
    visits: u32,
    wins: f64,
}

/// One information set of the searching seat.
#[derive(Debug, Clone)]
struct Node {
    visits: u32,
    arms: Vec<Arm>,
}

impl Node {
    fn new(plays: &[Play]) -> Self {
        Node {
            visits: 0,
            arms: plays
                .iter()
                .map(|p| Arm {
                    play: *p,
                    visits: 0,
                    wins: 0.0,
                })
                .collect(),
        }
    }

    /// The arm UCB1 picks: an untried arm first (at random among them),
    /// else the best upper bound (the first on a tie).
    fn select(&self, c: f64, rng: &mut BotRng) -> usize {
        let untried: Vec<usize> = (0..self.arms.len())
            .filter(|i| self.arms[*i].visits == 0)
            .collect();
        if let Some(i) = untried.choose(rng) {
            return *i;
        }
        let ln = f64::from(self.visits.max(1)).ln();
        let mut best = (f64::NEG_INFINITY, 0);
        for (i, a) in self.arms.iter().enumerate() {
            let n = f64::from(a.visits);
            let v = a.wins / n + c * (ln / n).sqrt();
            if v > best.0 {
                best = (v, i);
            }
        }
        best.1
    }
}

/// The key of an information set: a hash of everything the observation
/// shows (the hand as a multiset).
pub fn key(obs: &LoveLetterObservation) -> u64 {
    let mut h = FxHasher::default();
    let mut hand: Vec<u8> = obs.hand.iter().map(|c| c.value()).collect();
    hand.sort_unstable();
    hand.hash(&mut h);
    obs.seat.hash(&mut h);
    obs.round.hash(&mut h);
    obs.wins.hash(&mut h);
    for v in &obs.players {
        (v.in_round, v.protected).hash(&mut h);
        v.played.hash(&mut h);
        v.out_hand.hash(&mut h);
    }
    obs.deck.hash(&mut h);
    obs.to_act.hash(&mut h);
    obs.first.hash(&mut h);
    let mut known = obs.known.clone();
    known.sort_unstable();
    known.hash(&mut h);
    h.finish()
}

/// A search tree of one thread.
#[derive(Debug, Default)]
pub struct Tree {
    nodes: FxHashMap<u64, Node>,
}

impl Tree {
    /// A tree whose root (the observation searched from) has `plays`, in
    /// that order.
    pub fn new(root: &LoveLetterObservation, plays: &[Play]) -> Self {
        let mut t = Tree::default();
        t.nodes.insert(key(root), Node::new(plays));
        t
    }

    /// Visits of each play at the information set `obs` (in the order it
    /// was created with), if the tree has it.
    pub fn visits(&self, obs: &LoveLetterObservation) -> Option<Vec<(Play, u32, f64)>> {
        self.nodes
            .get(&key(obs))
            .map(|n| n.arms.iter().map(|a| (a.play, a.visits, a.wins)).collect())
    }

    /// Number of information sets in the tree.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree is empty.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// One iteration from the determinization `state`, in which `me` is to
    /// act; returns the result backed up (1 if `me` won the round).
    pub fn iterate(
        &mut self,
        mut state: LoveLetter,
        me: Seat,
        exposure: &Exposure,
        rules: &LoveLetterVariant,
        params: &Params,
        rng: &mut BotRng,
    ) -> f64 {
        let mut path: Vec<(u64, usize)> = Vec::with_capacity(8);
        let mut in_tree = true;
        let mut heuristic = Heuristic::default();
        heuristic.new_game(me, rules, state.num_seats());
        let mut legal = Vec::with_capacity(32);
        let round = state.round();
        let mut seen = state.events().len();
        let mut exposure = exposure.clone();
        let mut result = 0.0;
        for _ in 0..MAX_ACTIONS {
            if state.round() != round || state.outcome().is_some() {
                result = round_won(&state.events()[seen..], me);
                break;
            }
            // The events of the next play (a round's end among them).
            seen = state.events().len();
            let Some(seat) = state.to_act().first() else {
                break;
            };
            legal.clear();
            state.legal_actions(seat, &mut legal);
            if legal.is_empty() {
                break;
            }
            let mut obs = state.observation(seat);
            if let Some(c) = exposure.known_by(seat) {
                // What this seat saw of `me` before the search began.
                if seat != me && !obs.known.iter().any(|(s, _)| *s == me) {
                    obs.known.push((me, c));
                }
            }
            let play = if seat == me && in_tree {
                let k = key(&obs);
                let node = self.nodes.entry(k).or_insert_with(|| {
                    // A new information set: the last node this iteration adds.
                    in_tree = false;
                    Node::new(&preferred(&obs, &legal, rules))
                });
                if node.arms.is_empty() {
                    heuristic.act(&obs, &legal, rng)
                } else {
                    let i = node.select(params.exploration, rng);
                    path.push((k, i));
                    node.arms[i].play
                }
            } else if seat == me || rng.random::<f64>() >= params.opponent_noise {
                heuristic.act(&obs, &legal, rng)
            } else {
                let pool = preferred(&obs, &legal, rules);
                *pool.choose(rng).unwrap_or(&legal[0])
            };
            if state.apply(seat, play).is_err() {
                break;
            }
            for e in &state.events()[seen..] {
                if e.visible_to(me) {
                    exposure.notify(e);
                }
            }
        }
        for (k, i) in path {
            if let Some(node) = self.nodes.get_mut(&k) {
                node.visits += 1;
                if let Some(a) = node.arms.get_mut(i) {
                    a.visits += 1;
                    a.wins += result;
                }
            }
        }
        result
    }
}

/// 1 if the round that ended in `events` was won by `me`, else 0.
fn round_won(events: &[LoveLetterEvent], me: Seat) -> f64 {
    events
        .iter()
        .find_map(|e| match e {
            LoveLetterEvent::RoundEnd { winner, .. } => Some(if *winner == me { 1.0 } else { 0.0 }),
            _ => None,
        })
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::loveletter::Card;

    /// A position where one play wins at once: the opponent's card is
    /// known (a Clown look) and the Soldier that names it ends the round.
    /// The tree finds it and gives it most visits; the root's visits add
    /// up to the iterations.
    #[test]
    fn the_tree_finds_a_sure_win() {
        let rules = LoveLetterVariant::standard();
        // Seat 0 first: sets aside a Soldier, deals Soldier to 0, Princess
        // to 1, then 0 draws a Clown.
        let top = [Card::Soldier, Card::Soldier, Card::Princess, Card::Clown];
        let mut g = LoveLetter::with_top_cards_under(&rules, 2, Seat(0), &top, 1).unwrap();
        // Seat 0 looks at seat 1's hand with the Clown.
        g.apply(Seat(0), Play::on(Card::Clown, Seat(1))).unwrap();
        // Seat 1 draws and plays something other than the Princess.
        let legal = g.legal_vec(Seat(1));
        let p = legal
            .iter()
            .copied()
            .find(|p| p.played_card() != Some(Card::Princess))
            .unwrap();
        g.apply(Seat(1), p).unwrap();
        let obs = g.observation(Seat(0));
        let Some((_, known)) = obs.known.first().copied() else {
            return; // the play above took the Princess away: nothing to check
        };
        assert!(obs.hand.contains(&Card::Soldier), "{obs:?}");
        let legal = g.legal_vec(Seat(0));
        let plays = preferred(&obs, &legal, &rules);
        let mut tree = Tree::new(&obs, &plays);
        let mut rng = crate::bot_rng(7);
        for _ in 0..400 {
            tree.iterate(
                g.clone(),
                Seat(0),
                &Exposure::new(Seat(0)),
                &rules,
                &Params::default(),
                &mut rng,
            );
        }
        let v = tree.visits(&obs).unwrap();
        assert_eq!(v.iter().map(|a| a.1).sum::<u32>(), 400);
        let best = v.iter().max_by_key(|a| a.1).unwrap();
        if known != Card::Soldier {
            assert_eq!(best.0, Play::soldier(Seat(1), known), "{v:?}");
            assert_eq!(best.2, f64::from(best.1), "the sure win always wins");
        }
        assert!(tree.len() > 1);
    }
}

#[cfg(test)]
mod match_point {
    use super::*;
    use croupier_rules::loveletter::LoveLetterObservation;

    /// The round that ends the match is scored like any other (the match's
    /// end adds no round number): from positions where a seat could win
    /// the match, the iterations back up some wins.
    #[test]
    fn the_round_that_ends_the_match_counts() {
        let rules = LoveLetterVariant::standard();
        let mut total = 0.0;
        let mut positions = 0;
        for seed in 0..30u64 {
            let mut g = LoveLetter::new(&rules, 2, seed).unwrap();
            let mut rng = crate::bot_rng(seed);
            let mut h = Heuristic::default();
            h.new_game(Seat(0), &rules, 2);
            while let Some(seat) = g.to_act().first() {
                let obs: LoveLetterObservation = g.observation(seat);
                let legal = g.legal_vec(seat);
                if obs.wins[seat.index()] + 1 == obs.wins_needed && positions < 20 {
                    let plays = preferred(&obs, &legal, &rules);
                    let mut tree = Tree::new(&obs, &plays);
                    let exposure = Exposure::new(seat);
                    for _ in 0..50 {
                        total += tree.iterate(
                            g.clone(),
                            seat,
                            &exposure,
                            &rules,
                            &Params::default(),
                            &mut rng,
                        );
                    }
                    positions += 1;
                }
                let a = h.act(&obs, &legal, &mut rng);
                g.apply(seat, a).unwrap();
            }
        }
        assert!(positions >= 5, "{positions}");
        assert!(
            total > 0.0,
            "no round that ends the match was won in {positions} positions"
        );
    }
}
