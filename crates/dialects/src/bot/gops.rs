//! The bot side of the GOPS quiz runner's protocol (seed 004): the game a
//! bot rebuilds from `Competition card:` and `Opponent's bid:` lines (read
//! with [`crate::gops::first_number`]).

use croupier_rules::goofspiel::{Bid, GoofspielEvent, GoofspielObservation, TurnResult};
use croupier_rules::Seat;

/// What the bot knows of the game, kept as a Goofspiel observation from its
/// own side (seat 0: the protocol does not say which seat the bot has).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracker {
    /// The observation a strategy is asked with.
    pub obs: GoofspielObservation,
}

impl Tracker {
    /// A round of `cards` cards, before the first draw.
    pub fn new(cards: u8) -> Self {
        let all: Vec<u8> = (1..=cards).collect();
        Tracker {
            obs: GoofspielObservation {
                seat: Seat(0),
                rounds: vec![cards],
                round: 0,
                hand: all.clone(),
                opponent_hand: all.clone(),
                lot: Vec::new(),
                current: None,
                next: None,
                undrawn: all,
                my_bid: None,
                opponent_has_bid: false,
                my_points: 0,
                opponent_points: 0,
                history: vec![Vec::new()],
            },
        }
    }

    /// A victory card is turned: it leaves the undrawn set and forms the lot
    /// (ties discard, so the lot never carries over).
    pub fn draw(&mut self, card: u8) {
        let obs = &mut self.obs;
        obs.undrawn.retain(|c| *c != card);
        obs.current = Some(card);
        obs.lot = vec![card];
        obs.my_bid = None;
        obs.opponent_has_bid = false;
    }

    /// The bids the hand allows.
    pub fn legal(&self) -> Vec<Bid> {
        self.obs.hand.iter().map(|c| Bid(*c)).collect()
    }

    /// Both bids are known: the higher takes the lot, a tie discards it.
    pub fn resolve(&mut self, mine: u8, theirs: u8) -> GoofspielEvent {
        let obs = &mut self.obs;
        obs.hand.retain(|c| *c != mine);
        obs.opponent_hand.retain(|c| *c != theirs);
        let drawn = obs.current.take().unwrap_or(0);
        let value: u32 = obs.lot.drain(..).map(u32::from).sum();
        let (winner, gained) = match mine.cmp(&theirs) {
            std::cmp::Ordering::Greater => (Some(Seat(0)), [value, 0]),
            std::cmp::Ordering::Less => (Some(Seat(1)), [0, value]),
            std::cmp::Ordering::Equal => (None, [0, 0]),
        };
        obs.my_points += gained[0];
        obs.opponent_points += gained[1];
        obs.my_bid = None;
        if let Some(turns) = obs.history.last_mut() {
            turns.push(TurnResult {
                drawn,
                bids: [mine, theirs],
                gained,
            });
        }
        GoofspielEvent::Reveal {
            bids: [mine, theirs],
            winner,
            points: if winner.is_some() { value } else { 0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracker_scores_the_higher_bid_and_discards_ties() {
        let mut t = Tracker::new(5);
        t.draw(4);
        assert_eq!(t.obs.undrawn, [1, 2, 3, 5]);
        t.resolve(5, 2);
        assert_eq!((t.obs.my_points, t.obs.opponent_points), (4, 0));
        t.draw(3);
        t.resolve(1, 1);
        assert_eq!((t.obs.my_points, t.obs.opponent_points), (4, 0));
        assert_eq!(t.obs.hand, [2, 3, 4]);
        assert_eq!(t.obs.opponent_hand, [3, 4, 5]);
        assert_eq!(t.obs.history[0].len(), 2);
        assert!(t.obs.lot.is_empty());
    }
}
