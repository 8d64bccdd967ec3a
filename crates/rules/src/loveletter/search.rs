//! States consistent with what one seat sees, for bots that search.

use super::card::{Hand, Pile};
use super::{bit, Card, LoveLetter, LoveLetterObservation, LoveLetterVariant, DECK, MAX_SEATS};
use crate::core::{game_rng, Game, Seat, SetupError};

impl LoveLetter {
    /// The round `obs` shows, with the cards its seat cannot see filled in:
    /// `others[s]` is the hand of each other seat still in the round (the
    /// entry of the observer and of seats out is ignored), `deck` lies
    /// bottom to top (the last card is drawn next) and `set_aside` is the
    /// card set aside. Every card of the deck must be accounted for exactly
    /// once. Only the observer's knowledge of other hands is kept, and a
    /// Wizard's forced discards count as played at the round's end. Later
    /// rounds are shuffled from `seed`.
    pub fn from_observation(
        variant: &LoveLetterVariant,
        obs: &LoveLetterObservation,
        others: &[Option<Card>],
        deck: &[Card],
        set_aside: Card,
        seed: u64,
    ) -> Result<Self, SetupError> {
        let bad = |m: &str| Err(SetupError::Variant(m.to_string()));
        let n = obs.players.len();
        crate::core::check_seat_count(Self::NAME, 2..=MAX_SEATS, n)?;
        let me = obs.seat.index();
        let Some(current) = obs.to_act else {
            return bad("the match is over");
        };
        if me >= n || current.index() >= n || obs.first.index() >= n || obs.wins.len() != n {
            return bad("seats out of range");
        }
        let mut counts = [0i32; 9];
        for c in DECK {
            counts[usize::from(c.value())] += 1;
        }
        let mut take = |c: Card| counts[usize::from(c.value())] -= 1;
        let mut g = LoveLetter {
            variant: variant.clone(),
            rng: game_rng(seed),
            seats: n as u8,
            round: obs.round,
            wins: [0; MAX_SEATS],
            first: obs.first,
            current,
            deck: Pile::EMPTY,
            set_aside: Some(set_aside),
            hands: [Hand::EMPTY; MAX_SEATS],
            played: [Pile::EMPTY; MAX_SEATS],
            played_value: [0; MAX_SEATS],
            out_cards: [Hand::EMPTY; MAX_SEATS],
            in_round: 0,
            protected: 0,
            known: [[None; MAX_SEATS]; MAX_SEATS],
            events: Vec::with_capacity(64),
            over: false,
        };
        take(set_aside);
        if deck.len() != usize::from(obs.deck) {
            return bad("the deck has the wrong size");
        }
        for c in deck {
            take(*c);
            g.deck.push(*c);
        }
        for (i, view) in obs.players.iter().enumerate() {
            let s = Seat(i as u8);
            g.wins[i] = obs.wins[i];
            if view.played.len() > DECK.len() || view.out_hand.len() > 2 {
                return bad("too many cards shown");
            }
            for c in &view.played {
                take(*c);
                g.played[i].push(*c);
                g.played_value[i] += u32::from(c.value());
            }
            for c in &view.out_hand {
                take(*c);
                g.out_cards[i].push(*c);
            }
            if view.in_round {
                g.in_round |= bit(s);
                if view.protected {
                    g.protected |= bit(s);
                }
                let hand: Vec<Card> = if i == me {
                    obs.hand.clone()
                } else {
                    others.get(i).copied().flatten().into_iter().collect()
                };
                let want = if i == me && s == current { 2 } else { 1 };
                if hand.len() != want {
                    return bad("a hand has the wrong size");
                }
                for c in hand {
                    take(c);
                    g.hands[i].push(c);
                }
            }
        }
        if counts.iter().any(|c| *c != 0) {
            return bad("the cards do not make up the deck");
        }
        for (s, c) in &obs.known {
            if s.index() < n && g.hands[s.index()].contains(*c) {
                g.known[me][s.index()] = Some(*c);
            }
        }
        Ok(g)
    }
}
