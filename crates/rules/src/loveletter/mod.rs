//! Love Letter (SPEC §1.2, seed 001): 2 to 4 players, 16 cards, one card in
//! hand; draw, play one of two, and be the last one in or hold the highest
//! card when the deck runs out. First to four round wins takes the match.
//!
//! One seat acts at a time. Advancing to a seat's turn includes its draw, so
//! the seat to act always holds two cards. All chance (first player, the
//! shuffle of each round) comes from the game's own seeded generator.
//!
//! Two rules variants ([`Rules`]): the standard rules of the competition's
//! README, and those of its later manager, Postman. Under both, a card aimed
//! at a player protected by a Priestess is played without effect
//! ([`LoveLetterEvent::NoEffect`]); rules version 1 refused it, and records
//! of that version replay under it ([`Game::replay_variant`]).

mod action;
mod card;
mod effects;
mod event;
mod observation;
mod play_lists;
mod plays;
mod search;
mod shown;
mod targets;
mod variant;

use rand::Rng;

use crate::core::{
    check_seat, game_rng, Game, GameRng, Outcome, RuleError, Seat, SeatSet, SetupError,
};
use crate::kind::GameKind;
pub use action::Play;
pub use card::{Card, DECK, DECK_SIZE};
use card::{Hand, Pile};
pub use event::{LoveLetterEvent, NoEffectReason};
pub use observation::{LoveLetterObservation, SeatView};
pub use shown::{Few, Item, OutCards, RoundHands, TooMany};
pub use targets::no_effect;
pub use variant::{LoveLetterVariant, Rules, WINS_NEEDED};

/// Most seats a game may have.
pub const MAX_SEATS: usize = 4;

fn bit(seat: Seat) -> u8 {
    1 << seat.0
}

/// A game (match) of Love Letter.
#[derive(Clone, Debug)]
pub struct LoveLetter {
    variant: LoveLetterVariant,
    rng: GameRng,
    seats: u8,
    /// Current round, from 0.
    round: u32,
    wins: [u8; MAX_SEATS],
    /// The round's first player.
    first: Seat,
    /// The seat whose turn it is.
    current: Seat,
    /// The deck; the top card is the last one.
    deck: Pile,
    set_aside: Option<Card>,
    hands: [Hand; MAX_SEATS],
    /// Cards each seat played or discarded face up this round.
    played: [Pile; MAX_SEATS],
    /// Value of the cards each seat *played* this round, which break ties
    /// at its end: those of `played` but for the ones a Wizard made it
    /// discard (they lie face up but were not played).
    played_value: [u32; MAX_SEATS],
    /// Cards each seat showed when it went out this round.
    out_cards: [Hand; MAX_SEATS],
    /// Seats still in the round (bit per seat).
    in_round: u8,
    /// Seats protected by a Priestess (bit per seat).
    protected: u8,
    /// `known[o][s]`: the card seat `o` has seen in seat `s`'s hand and knows
    /// is still there.
    known: [[Option<Card>; MAX_SEATS]; MAX_SEATS],
    events: Vec<LoveLetterEvent>,
    over: bool,
}

impl LoveLetter {
    /// A game whose first round comes off the deck in `top` order: `top[0]`
    /// is set aside, then one card to each player in turn order from `first`,
    /// then the draws; the rest of the deck follows in canonical order. For
    /// tests and worked examples (later rounds are shuffled from `seed`).
    pub fn with_top_cards(
        seats: usize,
        first: Seat,
        top: &[Card],
        seed: u64,
    ) -> Result<Self, SetupError> {
        Self::with_top_cards_under(&LoveLetterVariant::default(), seats, first, top, seed)
    }

    /// [`LoveLetter::with_top_cards`] under the rules of `variant`.
    pub fn with_top_cards_under(
        variant: &LoveLetterVariant,
        seats: usize,
        first: Seat,
        top: &[Card],
        seed: u64,
    ) -> Result<Self, SetupError> {
        let mut g = LoveLetter::blank(variant, seats, seed)?;
        if first.index() >= seats {
            return Err(SetupError::Variant(format!("there is no seat {first}")));
        }
        let mut order = top.to_vec();
        let mut rest = DECK.to_vec();
        for c in top {
            let i = rest.iter().position(|r| r == c).ok_or_else(|| {
                SetupError::Variant(format!("the deck has no more copies of the {c}"))
            })?;
            rest.remove(i);
        }
        order.extend(rest);
        order.reverse(); // the top of the deck is its last card
        let cards: [Card; DECK_SIZE] = order
            .try_into()
            .map_err(|_| SetupError::Variant("the deck must have 16 cards".into()))?;
        g.deal(cards, first);
        g.advance(first);
        Ok(g)
    }

    /// A table with no round dealt yet.
    fn blank(variant: &LoveLetterVariant, seats: usize, seed: u64) -> Result<Self, SetupError> {
        crate::core::check_seat_count(Self::NAME, Self::KIND.seats(), seats)?;
        Ok(LoveLetter {
            variant: variant.clone(),
            rng: game_rng(seed),
            seats: seats as u8,
            round: 0,
            wins: [0; MAX_SEATS],
            first: Seat(0),
            current: Seat(0),
            deck: Pile::EMPTY,
            set_aside: None,
            hands: [Hand::EMPTY; MAX_SEATS],
            played: [Pile::EMPTY; MAX_SEATS],
            played_value: [0; MAX_SEATS],
            out_cards: [Hand::EMPTY; MAX_SEATS],
            in_round: 0,
            protected: 0,
            known: [[None; MAX_SEATS]; MAX_SEATS],
            events: Vec::with_capacity(512),
            over: false,
        })
    }

    /// Round wins so far, per seat.
    pub fn wins(&self) -> &[u8] {
        &self.wins[..usize::from(self.seats)]
    }

    /// The current round, from 0.
    pub fn round(&self) -> u32 {
        self.round
    }

    fn n(&self) -> usize {
        usize::from(self.seats)
    }

    fn is_in(&self, seat: Seat) -> bool {
        self.in_round & bit(seat) != 0
    }

    fn is_protected(&self, seat: Seat) -> bool {
        self.protected & bit(seat) != 0
    }

    /// The seat after `seat` in seat order.
    fn after(&self, seat: Seat) -> Seat {
        if seat.0 + 1 >= self.seats {
            Seat(0)
        } else {
            Seat(seat.0 + 1)
        }
    }

    /// The next seat after `seat` that is still in the round (`seat`
    /// itself if it is the only one).
    fn next_in(&self, seat: Seat) -> Seat {
        let in_round = u16::from(self.in_round);
        // The seats after `seat` in the round, else from seat 0 on.
        let later = in_round & !((2u16 << seat.0) - 1);
        let from = if later != 0 { later } else { in_round };
        if from == 0 {
            seat
        } else {
            Seat(from.trailing_zeros() as u8)
        }
    }

    /// Shuffles the full deck and deals a round led by `first`.
    fn start_round(&mut self, first: Seat) {
        let mut cards = DECK;
        crate::shuffle::shuffle_16(&mut cards, &mut self.rng);
        self.deal(cards, first);
    }

    /// Deals a round from the full deck `cards` as it lies (the top card
    /// is the last one): the top card is set aside, then one card to each
    /// player in turn order from `first`.
    fn deal(&mut self, cards: [Card; DECK_SIZE], first: Seat) {
        self.first = first;
        self.current = first;
        self.played = [Pile::EMPTY; MAX_SEATS];
        self.played_value = [0; MAX_SEATS];
        self.out_cards = [Hand::EMPTY; MAX_SEATS];
        self.in_round = ((1u16 << self.seats) - 1) as u8;
        self.protected = 0;
        self.known = [[None; MAX_SEATS]; MAX_SEATS];
        self.set_aside = Some(cards[DECK_SIZE - 1]);
        // The deal: the round's start and a draw by each seat, logged at once.
        let n = self.n();
        let mut log = [LoveLetterEvent::RoundStart {
            round: self.round,
            first,
        }; 1 + MAX_SEATS];
        self.hands = [Hand::EMPTY; MAX_SEATS];
        let mut seat = first;
        for (k, entry) in log[1..=n].iter_mut().enumerate() {
            let card = cards[DECK_SIZE - 2 - k];
            self.hands[seat.index()] = Hand::one(card);
            *entry = LoveLetterEvent::Draw { seat, card };
            seat = self.after(seat);
        }
        self.deck = Pile::from_array(cards);
        self.deck.truncate(DECK_SIZE - 1 - n);
        self.events.extend_from_slice(&log[..=n]);
    }

    /// Lays `card` in `seat`'s face-up pile as a card it played (tests).
    #[cfg(test)]
    fn lay_played(&mut self, seat: usize, card: Card) {
        self.played[seat].push(card);
        self.played_value[seat] += u32::from(card.value());
    }

    /// `seat` takes the top card of the deck (if any) into its hand.
    #[inline]
    fn draw_from_deck(&mut self, seat: Seat) {
        if let Some(card) = self.deck.pop() {
            self.hands[seat.index()].push(card);
            self.events.push(LoveLetterEvent::Draw { seat, card });
        }
    }

    /// Starts turns from `seat` until a seat can act or the match is over.
    #[inline]
    fn advance(&mut self, mut seat: Seat) {
        loop {
            if self.begin_turn(seat) {
                return;
            }
            match self.after_turn() {
                Some(next) => seat = next,
                None => return,
            }
        }
    }

    /// Begins `seat`'s turn: its protection ends and it draws. Returns
    /// whether it may act (false when the Minister put it out).
    #[inline(always)]
    fn begin_turn(&mut self, seat: Seat) -> bool {
        self.current = seat;
        self.protected &= !bit(seat);
        let drawn = self.deck.pop();
        let hand = &mut self.hands[seat.index()];
        match drawn {
            Some(card) => {
                hand.push(card);
                self.events.extend_from_slice(&[
                    LoveLetterEvent::Turn { seat },
                    LoveLetterEvent::Draw { seat, card },
                ]);
            }
            None => self.events.push(LoveLetterEvent::Turn { seat }),
        }
        let hand = &self.hands[seat.index()];
        // Standard: holding the Minister with 12 or more. Postman checks
        // only when the card drawn is the Minister, and only above 12. (The
        // other draws, the deal's and a Wizard's, leave a single card.)
        let bites = if self.variant.is_postman() {
            drawn == Some(Card::Minister) && hand.total() > 12
        } else if let [a, b] = *hand.as_slice() {
            (a == Card::Minister || b == Card::Minister) && a.value() + b.value() >= 12
        } else {
            hand.contains(Card::Minister) && hand.total() >= 12
        };
        if bites {
            self.knock_out(seat);
            return false;
        }
        true
    }

    /// After the current turn: ends the round if it is over (and deals the
    /// next). Returns whose turn begins next, or `None` if the match is over.
    #[inline]
    fn after_turn(&mut self) -> Option<Seat> {
        // At most one seat left in: no bit but the lowest.
        let alone = self.in_round & self.in_round.wrapping_sub(1) == 0;
        if alone || self.deck.is_empty() {
            self.end_round()
        } else {
            Some(self.next_in(self.current))
        }
    }

    /// Scores the round and deals the next one. Returns its first player,
    /// or `None` if the match is over.
    #[inline(never)]
    fn end_round(&mut self) -> Option<Seat> {
        let postman = self.variant.is_postman();
        // The best seat so far, and its key: its highest card's value (0
        // for none), then (standard rules) the value it played; -1 before
        // any seat.
        let (mut best, mut best_key) = (self.current, -1i32);
        let mut hands = RoundHands::EMPTY;
        // The seats still in, in turn order from the round's first player:
        // bit k for the k-th seat from it.
        let n = u32::from(self.seats);
        let first = u32::from(self.first.0);
        let table = (1u32 << n) - 1;
        let in_round = u32::from(self.in_round);
        let mut order = ((in_round >> first) | (in_round << (n - first))) & table;
        while order != 0 {
            let k = order.trailing_zeros();
            order &= order - 1;
            let i = first + k;
            let seat = Seat((if i >= n { i - n } else { i }) as u8);
            let hand = &self.hands[seat.index()];
            for c in hand.as_slice() {
                // Room for two cards of each of four seats: never full.
                let _ = hands.push((seat, *c));
            }
            // Postman compares the cards alone.
            let played = if postman {
                0
            } else {
                self.played_value[seat.index()]
            };
            let high = hand.max().map_or(0, |c| u32::from(c.value()));
            let key = ((high << 16) | played) as i32;
            // Strictly better only: on a full tie the earlier seat keeps the
            // lead, in turn order (standard) or by seat index (Postman).
            if key > best_key || (postman && key == best_key && seat < best) {
                (best, best_key) = (seat, key);
            }
        }
        let winner = best;
        self.events
            .push(LoveLetterEvent::RoundEnd { winner, hands });
        self.wins[winner.index()] += 1;
        if self.wins[winner.index()] >= self.variant.wins_needed() {
            self.events.push(LoveLetterEvent::MatchEnd { winner });
            self.over = true;
            return None;
        }
        self.round += 1;
        // The winner leads the next round; Postman draws its first player.
        let first = if postman {
            Seat(self.rng.random_range(0..self.seats))
        } else {
            winner
        };
        self.start_round(first);
        Some(first)
    }
}

impl Game for LoveLetter {
    const NAME: &'static str = GameKind::LoveLetter.name();
    const KIND: GameKind = GameKind::LoveLetter;
    /// Version 2: a card aimed at a protected player is played without
    /// effect (version 1 refused it); the Postman rules.
    const RULES_VERSION: u32 = 2;
    type Variant = LoveLetterVariant;
    type Action = Play;
    type Observation = LoveLetterObservation;
    type Event = LoveLetterEvent;

    fn new(variant: &LoveLetterVariant, seats: usize, seed: u64) -> Result<Self, SetupError> {
        let mut g = Self::blank(variant, seats, seed)?;
        let first = Seat(g.rng.random_range(0..g.seats));
        g.start_round(first);
        g.advance(first);
        Ok(g)
    }

    /// Version 1 records replay with a card aimed at a protected player
    /// refused, as it was then; version 1 knew only the standard rules.
    fn replay_variant(variant: LoveLetterVariant, version: u32) -> Option<LoveLetterVariant> {
        match version {
            Self::RULES_VERSION => Some(variant),
            1 if !variant.is_postman() => Some(LoveLetterVariant::standard_v1()),
            _ => None,
        }
    }

    fn num_seats(&self) -> usize {
        self.n()
    }

    fn variant(&self) -> &LoveLetterVariant {
        &self.variant
    }

    fn to_act(&self) -> SeatSet {
        if self.over {
            SeatSet::EMPTY
        } else {
            SeatSet::only(self.current)
        }
    }

    #[inline]
    fn legal_actions(&self, seat: Seat, out: &mut Vec<Play>) {
        if self.over || seat != self.current {
            return;
        }
        // Each card of the hand once (it holds two on its turn).
        self.legal_plays_of(seat, self.hands[seat.index()].as_slice(), out);
    }

    #[inline]
    fn check(&self, seat: Seat, action: Play) -> Result<(), RuleError> {
        check_seat(seat, self.n())?;
        if self.over {
            return Err(RuleError::GameOver);
        }
        if seat != self.current {
            return Err(RuleError::NotYourTurn);
        }
        let Play::Play {
            card,
            target,
            guess,
        } = action
        else {
            return Ok(());
        };
        if !self.hands[seat.index()].contains(card) {
            return Err(RuleError::illegal(format!("you do not hold the {card}")));
        }
        self.check_play(seat, card, target, guess)
    }

    #[inline]
    fn apply(&mut self, seat: Seat, action: Play) -> Result<(), RuleError> {
        self.check(seat, action)?;
        match action {
            Play::Forfeit => {
                self.events.push(LoveLetterEvent::Forfeit { seat });
                self.knock_out(seat);
            }
            Play::Play {
                card,
                target,
                guess,
            } => self.play(seat, card, target, guess),
        }
        if let Some(next) = self.after_turn() {
            self.advance(next);
        }
        Ok(())
    }

    fn forfeit(&mut self, seat: Seat) -> Result<(), RuleError> {
        check_seat(seat, self.n())?;
        if self.over {
            return Err(RuleError::GameOver);
        }
        if !self.is_in(seat) {
            return Err(RuleError::illegal(format!(
                "seat {seat} is already out of the round"
            )));
        }
        self.events.push(LoveLetterEvent::Forfeit { seat });
        self.knock_out(seat);
        // The turn ends if it was this seat's; the round ends at once if only
        // one player is left.
        if seat == self.current || self.in_round.count_ones() <= 1 {
            if let Some(next) = self.after_turn() {
                self.advance(next);
            }
        }
        Ok(())
    }

    /// A seat that is not at the table gets the public view (no hand, no
    /// known cards).
    fn public_view(&self) -> LoveLetterObservation {
        let mut o = self.observation(Seat(0));
        o.hand.clear();
        o.known.clear();
        o
    }

    fn observation(&self, seat: Seat) -> LoveLetterObservation {
        let n = self.n();
        let me = (seat.index() < n).then_some(seat.index());
        let players = (0..n)
            .map(|i| {
                let s = Seat(i as u8);
                SeatView {
                    in_round: self.is_in(s),
                    protected: self.is_protected(s),
                    played: self.played[i].as_slice().to_vec(),
                    out_hand: self.out_cards[i].as_slice().to_vec(),
                }
            })
            .collect();
        let known = me.map_or_else(Vec::new, |me| {
            (0..n)
                .filter_map(|i| self.known[me][i].map(|c| (Seat(i as u8), c)))
                .collect()
        });
        LoveLetterObservation {
            seat,
            round: self.round,
            wins: self.wins().to_vec(),
            wins_needed: self.variant.wins_needed(),
            hand: me.map_or_else(Vec::new, |me| self.hands[me].as_slice().to_vec()),
            players,
            deck: self.deck.len() as u8,
            to_act: (!self.over).then_some(self.current),
            first: self.first,
            known,
        }
    }

    fn events(&self) -> &[LoveLetterEvent] {
        &self.events
    }

    fn outcome(&self) -> Option<Outcome> {
        self.over
            .then(|| Outcome::from_scores(self.wins().iter().map(|w| i64::from(*w)).collect()))
    }
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
