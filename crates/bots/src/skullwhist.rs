//! SkullWhist strategies: a counting heuristic for bidding and play.

use croupier_rules::skullwhist::{
    trick_winner, Card, CardSet, SkullWhist, SkullWhistAction, SkullWhistObservation, Suit,
};
use croupier_rules::Seat;

use crate::{BotRng, Strategy};

/// Bids from its high cards and trumps, then plays economically: follows with
/// the cheapest winning card, leads cards nobody can beat, and sheds its
/// lowest card when it cannot win.
#[derive(Debug, Default, Clone)]
pub struct Heuristic;

/// Expected tricks from a hand: trumps and high cards count, discounted so
/// the bid errs low (falling short costs ten times what an overtrick earns).
pub fn estimate_tricks(hand: &[Card]) -> f64 {
    let spades = hand.iter().filter(|c| c.suit() == Suit::Spades).count();
    let mut est = 0.0;
    for c in hand {
        let v = c.value();
        est += if c.suit() == Suit::Spades {
            match v {
                12..=13 => 1.0,
                10..=11 => 0.8,
                7..=9 => 0.55,
                _ => 0.35,
            }
        } else {
            let len = hand.iter().filter(|o| o.suit() == c.suit()).count();
            match (v, len) {
                (13, _) => 0.9,
                (12, l) if l >= 2 => 0.6,
                (11, l) if l >= 3 => 0.3,
                _ => 0.0,
            }
        };
    }
    // Long trumps also win the tricks of suits the hand lacks.
    let void_suits = [Suit::Clubs, Suit::Diamonds, Suit::Hearts]
        .iter()
        .filter(|s| hand.iter().all(|c| c.suit() != **s))
        .count();
    est + 0.3 * (void_suits.min(spades)) as f64
}

/// The bid for a hand: the estimate rounded down, at least 1.
pub fn choose_bid(hand: &[Card]) -> u8 {
    (estimate_tricks(hand) * 0.9).floor().clamp(1.0, 13.0) as u8
}

/// The cards among `legal` (none while bidding).
pub(crate) fn playable_cards(legal: &[SkullWhistAction]) -> Vec<Card> {
    legal
        .iter()
        .filter_map(|a| match a {
            SkullWhistAction::Play(c) => Some(*c),
            SkullWhistAction::Bid(_) => None,
        })
        .collect()
}

fn lowest(cards: impl Iterator<Item = Card>) -> Option<Card> {
    // Lowest value, non-trumps before trumps.
    cards.min_by_key(|c| (c.suit() == Suit::Spades, c.value(), c.index()))
}

/// Cards neither in my hand nor played yet: those the opponent may hold.
fn unseen(obs: &SkullWhistObservation) -> CardSet {
    let mut seen = 0u64;
    for c in &obs.hand {
        seen |= c.bit();
    }
    for t in &obs.history {
        seen |= t.lead.bit() | t.follow.bit();
    }
    if let Some(c) = obs.lead_card {
        seen |= c.bit();
    }
    CardSet(!seen & ((1u64 << 52) - 1))
}

impl Strategy<SkullWhist> for Heuristic {
    fn act(
        &mut self,
        obs: &SkullWhistObservation,
        legal: &[SkullWhistAction],
        _rng: &mut BotRng,
    ) -> SkullWhistAction {
        if obs.my_bid.is_none() {
            return SkullWhistAction::Bid(choose_bid(&obs.hand));
        }
        let playable = playable_cards(legal);
        let choice = match obs.lead_card {
            Some(lead) => {
                let leader = obs.leader.unwrap_or(Seat(1 - obs.seat.0));
                let winners = playable
                    .iter()
                    .copied()
                    .filter(|c| trick_winner(leader, lead, *c) == obs.seat);
                lowest(winners).or_else(|| lowest(playable.iter().copied()))
            }
            None => {
                let others = unseen(obs);
                // A master: beats every unseen card of its suit (trumps
                // aside, which the opponent may or may not hold).
                let master = playable
                    .iter()
                    .copied()
                    .filter(|c| {
                        others
                            .of_suit(c.suit())
                            .iter()
                            .all(|o| o.value() < c.value())
                            && (c.suit() == Suit::Spades || !others.of_suit(c.suit()).is_empty())
                    })
                    .max_by_key(|c| (c.suit() != Suit::Spades, c.value()));
                master.or_else(|| lowest(playable.iter().copied()))
            }
        };
        choice.map(SkullWhistAction::Play).unwrap_or(legal[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hand(s: &str) -> Vec<Card> {
        s.split_whitespace().map(|c| c.parse().unwrap()).collect()
    }

    #[test]
    fn strong_trumps_bid_high_and_weak_hands_bid_one() {
        let strong = hand("S13 S12 S11 S10 S09 S08 H13 D13 C13 H12 H11 D02 C02");
        let weak = hand("C02 C03 C04 D02 D03 D05 H02 H03 H04 H06 C06 D07 H07");
        assert!(choose_bid(&strong) >= 7, "{}", choose_bid(&strong));
        assert_eq!(choose_bid(&weak), 1);
    }
}
