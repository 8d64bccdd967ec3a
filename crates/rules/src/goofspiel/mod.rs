//! Goofspiel (GOPS, Psychological Jujitsu): two players bid cards 1..N for
//! victory cards 1..N turned one at a time into the lot.
//!
//! Both bids of a turn are sealed: each seat acts independently, and the bids
//! are revealed together once both are in. The variant decides the round
//! sizes, whether a tie carries the lot or discards it, and whether the next
//! victory card is shown.

mod event;
mod variant;

use serde::{Deserialize, Serialize};

use crate::core::{
    check_seat, check_seat_count, game_rng, Game, GameRng, Outcome, RuleError, Seat, SeatSet,
    SetupError,
};
use crate::kind::GameKind;
pub use event::{Bid, GoofspielEvent, TurnResult};
pub use variant::{GoofspielVariant, TieRule, MAX_CARDS, MAX_ROUNDS};

/// What one seat sees.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoofspielObservation {
    /// The observing seat.
    pub seat: Seat,
    /// Cards per round for the whole match.
    pub rounds: Vec<u8>,
    /// Current round index from 0.
    pub round: usize,
    /// Bid cards this seat still holds.
    pub hand: Vec<u8>,
    /// Bid cards the opponent still holds (public: every bid is revealed).
    pub opponent_hand: Vec<u8>,
    /// Victory cards in the lot now, in the order they were drawn.
    pub lot: Vec<u8>,
    /// The victory card drawn this turn.
    pub current: Option<u8>,
    /// The next victory card, when the variant previews it.
    pub next: Option<u8>,
    /// Victory cards still face down this round (as a set, sorted).
    pub undrawn: Vec<u8>,
    /// This seat's sealed bid for the current turn, if made.
    pub my_bid: Option<u8>,
    /// Whether the opponent has sealed its bid (not which card).
    pub opponent_has_bid: bool,
    /// Match points of this seat.
    pub my_points: u32,
    /// Match points of the opponent.
    pub opponent_points: u32,
    /// Every resolved turn, one list per round, from this seat's side
    /// (`bids[0]` and `gained[0]` are this seat's).
    pub history: Vec<Vec<TurnResult>>,
}

/// Up to 32 small cards inline (no heap allocation on the hot path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cards {
    cards: [u8; 32],
    len: u8,
}

impl Cards {
    const EMPTY: Cards = Cards {
        cards: [0; 32],
        len: 0,
    };

    fn push(&mut self, c: u8) {
        self.cards[usize::from(self.len)] = c;
        self.len += 1;
    }

    fn clear(&mut self) {
        self.len = 0;
    }
}

impl std::ops::Deref for Cards {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.cards[..usize::from(self.len)]
    }
}

impl std::ops::DerefMut for Cards {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.cards[..usize::from(self.len)]
    }
}

/// A game of Goofspiel.
#[derive(Clone, Debug)]
pub struct Goofspiel {
    variant: GoofspielVariant,
    rng: GameRng,
    round: usize,
    /// Victory cards of this round in draw order; `deck[turn]` is current.
    deck: Cards,
    turn: usize,
    hands: [u32; 2],
    /// The lot: the cards drawn from `deck[lot_from]` on, up to the current
    /// one (a win or a discarded tie empties it).
    lot_from: usize,
    /// The value of the cards in the lot.
    lot_value: u32,
    sealed: [Option<u8>; 2],
    points: [u32; 2],
    round_points: [u32; 2],
    /// The log; the resolved turns (an observation's history) are read
    /// from its draws and reveals.
    events: Vec<GoofspielEvent>,
    over: bool,
    forfeited_by: Option<Seat>,
}

fn full_hand(n: u8) -> u32 {
    // bits 1..=n
    (((1u64 << (n + 1)) - 1) as u32) & !1
}

fn mask_to_vec(mask: u32) -> Vec<u8> {
    (1..=31u8).filter(|c| mask & (1 << c) != 0).collect()
}

impl Goofspiel {
    fn start_round(&mut self) {
        let n = self.variant.rounds[self.round];
        self.deck.clear();
        for c in 1..=n {
            self.deck.push(c);
        }
        crate::shuffle::shuffle(&mut self.deck, &mut self.rng);
        self.turn = 0;
        self.hands = [full_hand(n); 2];
        self.lot_from = 0;
        self.lot_value = 0;
        self.round_points = [0; 2];
        self.events.push(GoofspielEvent::RoundStart {
            round: self.round,
            cards: n,
        });
        self.draw();
    }

    #[inline]
    fn draw(&mut self) {
        let card = self.deck[self.turn];
        self.lot_value += u32::from(card);
        let next = if self.variant.preview {
            self.deck.get(self.turn + 1).copied()
        } else {
            None
        };
        self.events.push(GoofspielEvent::Draw { card, next });
    }

    fn resolve(&mut self, bids: [u8; 2]) {
        self.hands[0] &= !(1 << bids[0]);
        self.hands[1] &= !(1 << bids[1]);
        let lot_value = self.lot_value;
        let winner = match bids[0].cmp(&bids[1]) {
            std::cmp::Ordering::Greater => Some(0),
            std::cmp::Ordering::Less => Some(1),
            std::cmp::Ordering::Equal => None,
        };
        match winner {
            Some(w) => {
                self.points[w] += lot_value;
                self.round_points[w] += lot_value;
                self.lot_from = self.turn + 1;
                self.lot_value = 0;
            }
            None => {
                if self.variant.ties == TieRule::Discard {
                    self.lot_from = self.turn + 1;
                    self.lot_value = 0;
                }
            }
        }
        self.events.push(GoofspielEvent::Reveal {
            bids,
            winner: winner.map(|w| Seat(w as u8)),
            points: if winner.is_some() { lot_value } else { 0 },
        });
        self.sealed = [None; 2];
        self.turn += 1;
        if self.turn < self.deck.len() {
            self.draw();
            return;
        }
        let discarded = self.lot_value;
        self.lot_from = self.turn;
        self.lot_value = 0;
        self.events.push(GoofspielEvent::RoundEnd {
            points: self.round_points,
            discarded,
        });
        self.round += 1;
        if self.round < self.variant.rounds.len() {
            self.start_round();
        } else {
            self.over = true;
        }
    }

    /// The victory cards in the lot, in the order they were drawn.
    fn lot(&self) -> &[u8] {
        let end = (self.turn + 1).min(self.deck.len());
        &self.deck[self.lot_from.min(end)..end]
    }

    /// Every resolved turn so far, from seat 0's side, by round (from the
    /// log: a turn's card is the last one drawn before its reveal).
    fn history(&self) -> Vec<Vec<TurnResult>> {
        let mut rounds: Vec<Vec<TurnResult>> = Vec::with_capacity(self.round + 1);
        let mut drawn = 0;
        for e in &self.events {
            match *e {
                GoofspielEvent::RoundStart { cards, .. } => {
                    rounds.push(Vec::with_capacity(usize::from(cards)))
                }
                GoofspielEvent::Draw { card, .. } => drawn = card,
                GoofspielEvent::Reveal {
                    bids,
                    winner,
                    points,
                } => {
                    let mut gained = [0; 2];
                    if let Some(w) = winner {
                        gained[w.index()] = points;
                    }
                    if let Some(round) = rounds.last_mut() {
                        round.push(TurnResult {
                            drawn,
                            bids,
                            gained,
                        });
                    }
                }
                GoofspielEvent::Sealed { .. }
                | GoofspielEvent::RoundEnd { .. }
                | GoofspielEvent::Forfeit { .. } => {}
            }
        }
        rounds
    }

    /// Match points by seat.
    pub fn points(&self) -> [u32; 2] {
        self.points
    }
}

impl Game for Goofspiel {
    const NAME: &'static str = GameKind::Goofspiel.name();
    const KIND: GameKind = GameKind::Goofspiel;
    const RULES_VERSION: u32 = 1;
    type Variant = GoofspielVariant;
    type Action = Bid;
    type Observation = GoofspielObservation;
    type Event = GoofspielEvent;

    #[inline]
    fn new(variant: &GoofspielVariant, seats: usize, seed: u64) -> Result<Self, SetupError> {
        check_seat_count(Self::NAME, Self::KIND.seats(), seats)?;
        variant.validate()?;
        let mut g = Goofspiel {
            variant: variant.clone(),
            rng: game_rng(seed),
            round: 0,
            deck: Cards::EMPTY,
            turn: 0,
            hands: [0; 2],
            lot_from: 0,
            lot_value: 0,
            sealed: [None; 2],
            points: [0; 2],
            round_points: [0; 2],
            // Per card: its draw, two sealed bids and the reveal; per round
            // its start and end (the log never grows during a game).
            events: Vec::with_capacity(
                variant.rounds.iter().map(|n| 4 * usize::from(*n) + 2).sum(),
            ),
            over: false,
            forfeited_by: None,
        };
        g.start_round();
        Ok(g)
    }

    fn num_seats(&self) -> usize {
        2
    }

    fn variant(&self) -> &GoofspielVariant {
        &self.variant
    }

    fn to_act(&self) -> SeatSet {
        if self.over {
            return SeatSet::EMPTY;
        }
        let mut s = SeatSet::EMPTY;
        for i in 0..2u8 {
            if self.sealed[usize::from(i)].is_none() {
                s = s.with(Seat(i));
            }
        }
        s
    }

    fn legal_actions(&self, seat: Seat, out: &mut Vec<Bid>) {
        if self.over || seat.index() >= 2 || self.sealed[seat.index()].is_some() {
            return;
        }
        // The held cards, lowest first. A seat yet to bid holds one card
        // for each victory card not yet turned, so the vector is sized
        // once and takes each card without a capacity check.
        let mut mask = self.hands[seat.index()];
        let held = self.deck.len() - self.turn;
        debug_assert_eq!(held, mask.count_ones() as usize);
        out.extend((0..held).map(|_| {
            let card = mask.trailing_zeros() as u8;
            mask &= mask.wrapping_sub(1);
            Bid(card)
        }));
    }

    fn check(&self, seat: Seat, action: Bid) -> Result<(), RuleError> {
        check_seat(seat, 2)?;
        if self.over {
            return Err(RuleError::GameOver);
        }
        if self.sealed[seat.index()].is_some() {
            return Err(RuleError::NotYourTurn);
        }
        if action.0 > MAX_CARDS || self.hands[seat.index()] & (1 << action.0) == 0 {
            return Err(RuleError::illegal(format!(
                "you do not hold card {}",
                action.0
            )));
        }
        Ok(())
    }

    fn apply(&mut self, seat: Seat, action: Bid) -> Result<(), RuleError> {
        self.check(seat, action)?;
        let me = seat.index();
        self.sealed[me] = Some(action.0);
        self.events.push(GoofspielEvent::Sealed {
            seat,
            card: action.0,
        });
        // Both bids are in once the other seat's is (each read alone, in
        // registers: reading back the pair just written byte by byte
        // stalls the processor).
        if let Some(other) = self.sealed[1 - me] {
            let bids = if me == 0 {
                [action.0, other]
            } else {
                [other, action.0]
            };
            self.resolve(bids);
        }
        Ok(())
    }

    fn forfeit(&mut self, seat: Seat) -> Result<(), RuleError> {
        check_seat(seat, 2)?;
        if self.over {
            return Err(RuleError::GameOver);
        }
        self.over = true;
        self.forfeited_by = Some(seat);
        self.events.push(GoofspielEvent::Forfeit { seat });
        Ok(())
    }

    /// A seat that is not at the table (a spectator) sees no sealed bid.
    fn public_view(&self) -> GoofspielObservation {
        // Both hands are public (every bid is revealed); a sealed bid is not.
        let mut o = self.observation(Seat(0));
        o.my_bid = None;
        o
    }

    fn observation(&self, seat: Seat) -> GoofspielObservation {
        let seated = seat.index() < 2;
        let me = seat.index().min(1);
        let opp = 1 - me;
        let current = (!self.over).then(|| self.deck[self.turn]);
        let undrawn_from = if self.over {
            self.deck.len()
        } else {
            self.turn + 1
        };
        let mut undrawn: Vec<u8> = self.deck[undrawn_from..].to_vec();
        undrawn.sort_unstable();
        let next = if self.variant.preview && !self.over {
            self.deck.get(self.turn + 1).copied()
        } else {
            None
        };
        let mut history = self.history();
        if me == 1 {
            for t in history.iter_mut().flatten() {
                t.bids.swap(0, 1);
                t.gained.swap(0, 1);
            }
        }
        GoofspielObservation {
            seat,
            rounds: self.variant.rounds.clone(),
            round: self.round.min(self.variant.rounds.len() - 1),
            hand: mask_to_vec(self.hands[me]),
            opponent_hand: mask_to_vec(self.hands[opp]),
            lot: self.lot().to_vec(),
            current,
            next,
            undrawn,
            my_bid: if seated { self.sealed[me] } else { None },
            opponent_has_bid: self.sealed[opp].is_some(),
            my_points: self.points[me],
            opponent_points: self.points[opp],
            history,
        }
    }

    fn events(&self) -> &[GoofspielEvent] {
        &self.events
    }

    fn outcome(&self) -> Option<Outcome> {
        if !self.over {
            return None;
        }
        if let Some(by) = self.forfeited_by {
            return Some(Outcome::forfeit(2, by));
        }
        Some(Outcome::from_scores(
            self.points.iter().map(|p| i64::from(*p)).collect(),
        ))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props;
