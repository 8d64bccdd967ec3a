//! A SkullWhist deal with every hand known (one determinization of what
//! `strong` has seen), its cards as bits, and how it is played out: this
//! seat by a card-counting policy, the opponent by it or by random legal
//! cards.

use rand::Rng;

use crate::BotRng;

const SPADES: u8 = 3;
pub(super) const ALL: u64 = (1u64 << 52) - 1;

pub(super) fn suit(c: u8) -> u8 {
    c / 13
}

pub(super) fn suit_mask(s: u8) -> u64 {
    0x1FFFu64 << (13 * u32::from(s))
}

pub(super) fn bits(mut m: u64) -> impl Iterator<Item = u8> {
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
pub(super) struct Deal {
    pub(super) hands: [u64; 2],
    pub(super) leader: usize,
    pub(super) lead: Option<u8>,
    pub(super) tricks: [u8; 2],
}

impl Deal {
    pub(super) fn mover(&self) -> usize {
        if self.lead.is_some() {
            1 - self.leader
        } else {
            self.leader
        }
    }

    pub(super) fn playable(&self, seat: usize) -> u64 {
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

    pub(super) fn play(&mut self, seat: usize, card: u8) {
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
    pub(super) fn policy(&self, seat: usize) -> u8 {
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

    pub(super) fn roll_out(&mut self) {
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
    pub(super) fn roll_out_against_random(&mut self, me: usize, rng: &mut BotRng) {
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
}
