//! SkullWhist `strong`: determinized search.
//!
//! For every decision it samples deals of the opponent's unseen hand that
//! agree with everything this seat has seen (cards played, and the suits
//! the opponent showed void in), then scores each candidate on every sample
//! alike: the rest of the game is played out by a fast card-counting policy
//! for both sides, or solved exactly (double dummy, alpha-beta) once few
//! tricks remain. A sample's result is turned into a win (1, a tie ½, a loss
//! 0) plus a small share of the score margin under SkullWhist's scoring, and
//! the candidate with the best average is played. Bids come from the same
//! samples: the bid that maximises the average result (over both possible
//! first leaders) against the bid the opponent's sampled hand would make by
//! the heuristic, or in a quarter of the samples any bid at all.

use croupier_rules::skullwhist::{
    score, CardSet, SkullWhist, SkullWhistAction, SkullWhistObservation, TRICKS,
};
use croupier_rules::Seat;
use rand::Rng;

use super::Budget;
use crate::skullwhist::{choose_bid, estimate_tricks};
use crate::{BotRng, Strategy};

/// Hands at most this large are solved exactly instead of played out.
pub const EXACT_TRICKS: u32 = 5;
/// Share of samples in which the opponent's bid is any bid rather than the
/// heuristic's (bidding must also hold up against unusual bidders).
pub const ANY_BID: f64 = 0.25;
/// How likely a skilled opponent is to follow like the play-out policy
/// (the rest is spread over its other legal cards).
pub const SKILLED_FOLLOW: f64 = 0.7;
/// Prior weight of a careless opponent (any bid, any legal card) beside a
/// skilled one in the card play, before its revealed bid is weighed.
pub const CARELESS: f64 = 0.75;
/// [`CARELESS`] when choosing the bid, which is sealed before the opponent
/// shows what kind of player it is. High, because a careless bidder is
/// beaten only by bidding what the hand takes against careless play (probe
/// games, 300 samples per decision: 0.7 won 92.5% of 120 games against
/// `random`, 0.9 95.0%; against `heuristic` 91.7% and 90.8%).
pub const BID_CARELESS: f64 = 0.9;
const SPADES: u8 = 3;
const ALL: u64 = (1u64 << 52) - 1;

fn suit(c: u8) -> u8 {
    c / 13
}

fn suit_mask(s: u8) -> u64 {
    0x1FFFu64 << (13 * u32::from(s))
}

fn bits(mut m: u64) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let c = m.trailing_zeros() as u8;
            m &= m - 1;
            c
        })
    })
}

/// The cheapest card of a set: lowest value, non-trumps before trumps.
fn cheapest(m: u64) -> Option<u8> {
    bits(m).min_by_key(|c| (suit(*c) == SPADES, c % 13))
}

/// A deal with every hand known (one determinization).
#[derive(Clone, Copy, Debug)]
struct Deal {
    hands: [u64; 2],
    leader: usize,
    lead: Option<u8>,
    tricks: [u8; 2],
}

impl Deal {
    fn mover(&self) -> usize {
        if self.lead.is_some() {
            1 - self.leader
        } else {
            self.leader
        }
    }

    fn playable(&self, seat: usize) -> u64 {
        let hand = self.hands[seat];
        match self.lead {
            Some(l) => {
                let same = hand & suit_mask(suit(l));
                if same == 0 {
                    hand
                } else {
                    same
                }
            }
            None => hand,
        }
    }

    fn play(&mut self, seat: usize, card: u8) {
        self.hands[seat] &= !(1u64 << card);
        match self.lead.take() {
            None => self.lead = Some(card),
            Some(lead) => {
                let follower_wins = if suit(lead) == suit(card) {
                    card > lead
                } else {
                    suit(card) == SPADES
                };
                let w = if follower_wins {
                    1 - self.leader
                } else {
                    self.leader
                };
                self.tricks[w] += 1;
                self.leader = w;
            }
        }
    }

    /// The play-out policy: follow with the cheapest winner or the cheapest
    /// card; lead a card the other hand cannot beat, else the cheapest.
    fn policy(&self, seat: usize) -> u8 {
        let moves = self.playable(seat);
        if let Some(lead) = self.lead {
            let winners = bits(moves).filter(|c| {
                if suit(*c) == suit(lead) {
                    *c > lead
                } else {
                    suit(*c) == SPADES
                }
            });
            let best = winners.min_by_key(|c| (suit(*c) == SPADES, c % 13));
            return best.or_else(|| cheapest(moves)).unwrap_or(0);
        }
        let other = self.hands[1 - seat];
        let mut master: Option<u8> = None;
        for s in 0..4u8 {
            let mine = moves & suit_mask(s);
            if mine == 0 {
                continue;
            }
            let top = 63 - mine.leading_zeros() as u8;
            let theirs = other & suit_mask(s);
            let safe = if theirs != 0 {
                theirs < (1u64 << top)
            } else {
                s == SPADES || other & suit_mask(SPADES) == 0
            };
            if safe && master.is_none_or(|m| (suit(m) == SPADES, m % 13) > (s == SPADES, top % 13))
            {
                master = Some(top);
            }
        }
        master.or_else(|| cheapest(moves)).unwrap_or(0)
    }

    fn roll_out(&mut self) {
        while self.hands[0] | self.hands[1] != 0 {
            let s = self.mover();
            if self.playable(s) == 0 {
                return;
            }
            let c = self.policy(s);
            self.play(s, c);
        }
    }

    /// Plays the rest out with `me` on the play-out policy and the other
    /// seat on uniformly random legal cards.
    fn roll_out_against_random(&mut self, me: usize, rng: &mut BotRng) {
        while self.hands[0] | self.hands[1] != 0 {
            let s = self.mover();
            let moves = self.playable(s);
            if moves == 0 {
                return;
            }
            let c = if s == me {
                self.policy(s)
            } else {
                let n = moves.count_ones();
                bits(moves)
                    .nth(rng.random_range(0..n) as usize)
                    .unwrap_or(0)
            };
            self.play(s, c);
        }
    }

    /// Tricks `me` ends with when both sides play perfectly (double dummy).
    fn solve(&self, me: usize, mut alpha: u8, mut beta: u8) -> u8 {
        if self.hands[0] | self.hands[1] == 0 {
            return self.tricks[me];
        }
        let s = self.mover();
        let moves = self.playable(s);
        if moves == 0 {
            return self.tricks[me];
        }
        let maximise = s == me;
        let mut best = if maximise { 0 } else { u8::MAX };
        for c in bits(moves) {
            let mut next = *self;
            next.play(s, c);
            let v = next.solve(me, alpha, beta);
            if maximise {
                best = best.max(v);
                alpha = alpha.max(best);
            } else {
                best = best.min(v);
                beta = beta.min(best);
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }

    /// Tricks `me` ends with: exact when the hands are small, else played out.
    fn finish(mut self, me: usize) -> u8 {
        if self.hands[me].count_ones() <= EXACT_TRICKS {
            return self.solve(me, 0, TRICKS);
        }
        self.roll_out();
        self.tricks[me]
    }
}

/// A sample's worth to this seat: a win is 1, a tie ½, plus 1/1000 of the
/// score margin so that among equal chances the bigger margin is chosen.
fn worth(my_bid: u8, their_bid: u8, my_tricks: u8) -> f64 {
    let margin = score(my_bid, my_tricks) - score(their_bid, TRICKS.saturating_sub(my_tricks));
    let win = match margin.cmp(&0) {
        std::cmp::Ordering::Greater => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Less => 0.0,
    };
    win + margin as f64 / 1000.0
}

/// How likely a skilled opponent dealt `hand` is to bid `bid`: it bids
/// like the heuristic, or (with [`ANY_BID`]) anything.
fn bid_likelihood(hand: u64, bid: u8) -> f64 {
    let heuristic = choose_bid(&CardSet(hand).to_vec());
    let exact = if heuristic == bid { 1.0 - ANY_BID } else { 0.0 };
    exact + ANY_BID / f64::from(TRICKS)
}

/// [`worth`] averaged over every bid the opponent may make (1 to 13).
fn any_bid_worth(my_bid: u8, my_tricks: u8) -> f64 {
    (1..=TRICKS)
        .map(|their| worth(my_bid, their, my_tricks))
        .sum::<f64>()
        / f64::from(TRICKS)
}

/// What this seat knows: its hand, the cards out of play, the opponent's
/// voids and how many cards the opponent holds.
struct Knowledge {
    mine: u64,
    pool: u64,
    voids: u64,
    their_count: u32,
    /// Cards the opponent has played so far.
    their_played: u64,
    /// The opponent's follows: the card led to it, the card it played,
    /// and the cards it played after that trick.
    follows: Vec<(u8, u8, u64)>,
    me: usize,
}

impl Knowledge {
    fn from(obs: &SkullWhistObservation) -> Knowledge {
        let me = obs.seat.index().min(1);
        let mine = obs.hand.iter().fold(0u64, |m, c| m | c.bit());
        let mut played = 0u64;
        let mut voids = 0u64;
        let mut their_played = 0u32;
        let mut theirs = 0u64;
        for t in &obs.history {
            played |= t.lead.bit() | t.follow.bit();
            their_played += 1;
            theirs |= if t.leader.index() == me {
                t.follow.bit()
            } else {
                t.lead.bit()
            };
            if t.leader.index() == me && t.follow.suit() != t.lead.suit() {
                voids |= t.lead.suit().mask();
            }
        }
        if let Some(c) = obs.lead_card {
            played |= c.bit();
            if obs.leader.map(Seat::index) != Some(me) {
                their_played += 1;
                theirs |= c.bit();
            }
        }
        Knowledge {
            mine,
            pool: ALL & !mine & !played,
            voids,
            their_count: u32::from(TRICKS).saturating_sub(their_played),
            their_played: theirs,
            follows: Knowledge::follows(obs, me),
            me,
        }
    }

    fn follows(obs: &SkullWhistObservation, me: usize) -> Vec<(u8, u8, u64)> {
        let theirs = |t: &croupier_rules::skullwhist::Trick| {
            if t.leader.index() == me {
                t.follow.bit()
            } else {
                t.lead.bit()
            }
        };
        let mut later = 0u64;
        if let (Some(c), Some(l)) = (obs.lead_card, obs.leader) {
            if l.index() != me {
                later |= c.bit();
            }
        }
        let mut out = vec![];
        for t in obs.history.iter().rev() {
            if t.leader.index() == me {
                out.push((t.lead.index(), t.follow.index(), later));
            }
            later |= theirs(t);
        }
        out
    }

    /// How likely the opponent's follows so far are, if it holds `theirs`
    /// now, for a skilled player (it mostly follows like the play-out
    /// policy: the cheapest winner, else the cheapest card) and for a
    /// careless one (any legal card).
    fn follow_likelihood(&self, theirs: u64) -> (f64, f64) {
        let (mut skilled, mut careless) = (1.0, 1.0);
        for &(lead, follow, later) in &self.follows {
            let hand = theirs | later | (1u64 << follow);
            let deal = Deal {
                hands: [hand, hand],
                leader: 0,
                lead: Some(lead),
                tricks: [0; 2],
            };
            let n = deal.playable(1).count_ones();
            if n <= 1 {
                continue;
            }
            careless /= f64::from(n);
            skilled *= if deal.policy(1) == follow {
                SKILLED_FOLLOW
            } else {
                (1.0 - SKILLED_FOLLOW) / f64::from(n - 1)
            };
        }
        (skilled, careless)
    }

    /// The opponent's hand in one sample: `their_count` cards of the pool,
    /// none of a suit it showed void in (unless the pool is too small).
    fn sample(&self, rng: &mut BotRng) -> u64 {
        let mut pool: Vec<u8> = bits(self.pool & !self.voids).collect();
        if (pool.len() as u32) < self.their_count {
            pool = bits(self.pool).collect();
        }
        let n = (self.their_count as usize).min(pool.len());
        for i in 0..n {
            let j = rng.random_range(i..pool.len());
            pool.swap(i, j);
        }
        pool[..n].iter().fold(0u64, |m, c| m | (1u64 << c))
    }
}

/// The `strong` SkullWhist strategy.
#[derive(Debug, Default, Clone)]
pub struct Strong {
    budget: Budget,
}

impl Strong {
    /// A strategy with the given thinking budget.
    pub fn new(budget: Budget) -> Self {
        Strong { budget }
    }

    fn bid(&self, obs: &SkullWhistObservation, rng: &mut BotRng) -> u8 {
        let k = Knowledge::from(obs);
        let (totals, samples) = self.budget.search(rng, 14, |totals, rng| {
            let theirs = k.sample(rng);
            let their_cards: Vec<_> = CardSet(theirs).to_vec();
            let heuristic_bid = choose_bid(&their_cards);
            let mut hands = [0u64; 2];
            hands[k.me] = k.mine;
            hands[1 - k.me] = theirs;
            // The first leader is drawn after the bids: try both.
            for leader in 0..2 {
                let deal = Deal {
                    hands,
                    leader,
                    lead: None,
                    tricks: [0; 2],
                };
                // A skilled opponent: plays like the play-out policy and
                // bids like the heuristic (or, less often, any bid).
                let mut skilled = deal;
                skilled.roll_out();
                let t = skilled.tricks[k.me];
                // A careless one: plays any legal card, bids anything.
                let mut careless = deal;
                careless.roll_out_against_random(k.me, rng);
                let u = careless.tricks[k.me];
                for (b, total) in totals.iter_mut().enumerate().skip(1) {
                    let b = b as u8;
                    let any_t = any_bid_worth(b, t);
                    let any_u = any_bid_worth(b, u);
                    let w_skilled = (1.0 - ANY_BID) * worth(b, heuristic_bid, t) + ANY_BID * any_t;
                    *total += (1.0 - BID_CARELESS) * w_skilled + BID_CARELESS * any_u;
                }
            }
            true
        });
        if samples == 0 {
            return (estimate_tricks(&obs.hand) * 0.9).floor().clamp(1.0, 13.0) as u8;
        }
        (1..=TRICKS)
            .max_by(|a, b| {
                totals[usize::from(*a)]
                    .total_cmp(&totals[usize::from(*b)])
                    .then(b.cmp(a))
            })
            .unwrap_or(1)
    }

    fn card(
        &self,
        obs: &SkullWhistObservation,
        candidates: &[croupier_rules::skullwhist::Card],
        rng: &mut BotRng,
    ) -> usize {
        if candidates.len() <= 1 {
            return 0;
        }
        let k = Knowledge::from(obs);
        let my_bid = obs.my_bid.unwrap_or(1);
        let their_bid = obs.opponent_bid.unwrap_or(1);
        let leader = obs.leader.map_or(k.me, Seat::index).min(1);
        // The observation lists tricks as [mine, the opponent's].
        let mut tricks = [0u8; 2];
        tricks[k.me] = obs.tricks_won[0];
        tricks[1 - k.me] = obs.tricks_won[1];
        let lead = obs.lead_card.map(|c| c.index());
        let start = std::time::Instant::now();
        let (totals, samples) = self.budget.search(rng, candidates.len(), |totals, rng| {
            let theirs = k.sample(rng);
            let their_start = theirs | k.their_played;
            let mut hands = [0u64; 2];
            hands[k.me] = k.mine;
            hands[1 - k.me] = theirs;
            let d = Deal {
                hands,
                leader,
                lead,
                tricks,
            };
            // The opponent's bid tells what kind of hand it holds, if it
            // is a skilled bidder: weigh this sample by how likely its bid
            // is under each kind of opponent (Bayes).
            let (follow_skilled, follow_careless) = k.follow_likelihood(theirs);
            let skilled =
                (1.0 - CARELESS) * bid_likelihood(their_start, their_bid) * follow_skilled;
            let careless = CARELESS / f64::from(TRICKS) * follow_careless;
            let seed: u64 = rng.random();
            let mut values = Vec::with_capacity(candidates.len());
            for c in candidates {
                // A sample left unfinished at the deadline is dropped whole.
                if self.budget.cut(start) {
                    return false;
                }
                let mut n = d;
                n.play(k.me, c.index());
                let mut r = crate::bot_rng(seed);
                let mut loose = n;
                loose.roll_out_against_random(k.me, &mut r);
                values.push(
                    skilled * worth(my_bid, their_bid, n.finish(k.me))
                        + careless * worth(my_bid, their_bid, loose.tricks[k.me]),
                );
            }
            for (t, v) in totals.iter_mut().zip(values) {
                *t += v;
            }
            true
        });
        if samples == 0 {
            // No sample finished in time: the heuristic's card.
            let mut h = crate::skullwhist::Heuristic;
            let legal: Vec<_> = candidates
                .iter()
                .map(|c| SkullWhistAction::Play(*c))
                .collect();
            let pick = h.act(obs, &legal, rng);
            return candidates
                .iter()
                .position(|c| SkullWhistAction::Play(*c) == pick)
                .unwrap_or(0);
        }
        (0..candidates.len())
            .max_by(|a, b| totals[*a].total_cmp(&totals[*b]).then(b.cmp(a)))
            .unwrap_or(0)
    }
}

impl Strategy<SkullWhist> for Strong {
    fn act(
        &mut self,
        obs: &SkullWhistObservation,
        legal: &[SkullWhistAction],
        rng: &mut BotRng,
    ) -> SkullWhistAction {
        if legal.iter().any(|a| matches!(a, SkullWhistAction::Bid(_))) {
            let b = SkullWhistAction::Bid(self.bid(obs, rng));
            return if legal.contains(&b) { b } else { legal[0] };
        }
        let cards: Vec<_> = legal
            .iter()
            .filter_map(|a| match a {
                SkullWhistAction::Play(c) => Some(*c),
                SkullWhistAction::Bid(_) => None,
            })
            .collect();
        if cards.is_empty() {
            return legal[0];
        }
        let i = self.card(obs, &cards, rng);
        SkullWhistAction::Play(cards[i.min(cards.len() - 1)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::skullwhist::Suit;

    #[test]
    fn double_dummy_counts_top_tricks() {
        // Seat 0: S13 S12 (top trumps); seat 1: H13 H12. Seat 1 leads hearts,
        // seat 0 trumps both: 2 tricks to seat 0.
        let s = |v| Suit::Spades.mask() & (1u64 << (39 + v - 1));
        let h = |v| Suit::Hearts.mask() & (1u64 << (26 + v - 1));
        let d = Deal {
            hands: [s(13) | s(12), h(13) | h(12)],
            leader: 1,
            lead: None,
            tricks: [0; 2],
        };
        assert_eq!(d.solve(0, 0, TRICKS), 2);
        assert_eq!(d.solve(1, 0, TRICKS), 0);
        // The play-out policy agrees here.
        let mut r = d;
        r.roll_out();
        assert_eq!(r.tricks, [2, 0]);
    }

    #[test]
    fn worth_prefers_wins_then_margin() {
        assert!(worth(3, 5, 3) > worth(3, 5, 2));
        assert!(worth(5, 3, 5) > 1.0);
        assert!(worth(5, 3, 4) < 0.5);
    }
}

#[cfg(test)]
mod hidden {
    use super::*;
    use croupier_rules::skullwhist::Card;
    use croupier_rules::Game;

    /// Two deals that agree on seat 0's hand but not on seat 1's.
    fn deal(rotate: u8) -> SkullWhist {
        let mine: u64 = (0..52u8).step_by(4).fold(0, |m, i| m | (1u64 << i));
        let rest: Vec<u8> = (0..52u8).filter(|i| mine & (1u64 << i) == 0).collect();
        let theirs = (0..13usize).fold(0u64, |m, k| {
            m | (1u64 << rest[(k + usize::from(rotate) * 13) % rest.len()])
        });
        SkullWhist::from_hands([CardSet(mine), CardSet(theirs)], Seat(0)).unwrap()
    }

    #[test]
    fn hidden_cards_of_the_opponent_do_not_change_its_choices() {
        let (mut a, mut b) = (deal(0), deal(1));
        assert_ne!(a.hand(Seat(1)), b.hand(Seat(1)));
        for g in [&mut a, &mut b] {
            g.apply(Seat(0), SkullWhistAction::Bid(4)).unwrap();
            g.apply(Seat(1), SkullWhistAction::Bid(3)).unwrap();
        }
        let mut choices = vec![];
        for g in [&a, &b] {
            let obs = g.observation(Seat(0));
            let legal = g.legal_vec(Seat(0));
            let mut s = Strong::new(Budget::iterations(20));
            let bid_obs = deal(0).observation(Seat(0));
            let bid_legal = deal(0).legal_vec(Seat(0));
            choices.push((
                s.act(&obs, &legal, &mut crate::bot_rng(7)),
                s.act(&bid_obs, &bid_legal, &mut crate::bot_rng(7)),
            ));
        }
        assert_eq!(choices[0], choices[1]);
        let first: Vec<Card> = a.hand(Seat(0)).to_vec();
        assert!(matches!(choices[0].0, SkullWhistAction::Play(c) if first.contains(&c)));
    }
}
