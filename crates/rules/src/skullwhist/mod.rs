//! SkullWhist (SkullSpace 2014): two players, 13 cards each, sealed bids,
//! 13 tricks with follow-suit and spades as trumps.

mod card;
mod event;

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::core::{
    check_seat, check_seat_count, game_rng, Game, Outcome, RuleError, Seat, SeatSet, SetupError,
    Variant,
};
use crate::kind::GameKind;
pub use card::{Card, CardSet, Cards, Suit};
pub use event::SkullWhistEvent;

/// Tricks in a game (and cards per hand).
pub const TRICKS: u8 = 13;

/// SkullWhist has no options; the variant exists for uniformity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkullWhistVariant {}

impl Variant for SkullWhistVariant {
    fn parse(text: &str) -> Result<Self, SetupError> {
        match text.trim() {
            "" | "standard" | "{}" => Ok(SkullWhistVariant {}),
            other => Err(SetupError::Variant(format!(
                "skullwhist has one variant, 'standard' (got '{other}')"
            ))),
        }
    }
}

/// An action: a sealed bid, or a card played to the current trick.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SkullWhistAction {
    /// Bid 1..=13 tricks.
    Bid(u8),
    /// Play a card.
    Play(Card),
}

impl fmt::Display for SkullWhistAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkullWhistAction::Bid(n) => write!(f, "bid {n}"),
            SkullWhistAction::Play(c) => write!(f, "play {c}"),
        }
    }
}

impl FromStr for SkullWhistAction {
    type Err = RuleError;
    /// `bid 5`, `play H05`, or a bare card `H05` (keywords in any case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut words = s.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some(w), Some(n), None) if w.eq_ignore_ascii_case("bid") => match n.parse::<u8>() {
                Ok(v) if n.bytes().all(|b| b.is_ascii_digit()) => Ok(SkullWhistAction::Bid(v)),
                _ => Err(RuleError::malformed(format!(
                    "'{n}' is not a bid (1 to 13)"
                ))),
            },
            (Some(w), Some(c), None) if w.eq_ignore_ascii_case("play") => {
                c.parse().map(SkullWhistAction::Play)
            }
            (Some(c), None, None) => c.parse().map(SkullWhistAction::Play),
            _ => Err(RuleError::malformed(format!(
                "'{s}' is not a skullwhist action (expected 'bid N' or 'play H05')"
            ))),
        }
    }
}

/// One finished trick.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trick {
    /// Who led.
    pub leader: Seat,
    /// The led card.
    pub lead: Card,
    /// The follower's card.
    pub follow: Card,
    /// Who took the trick.
    pub winner: Seat,
}

impl Trick {
    /// What fills the places of the tricks not yet played.
    const UNPLAYED: Trick = Trick {
        leader: Seat(0),
        lead: Card::LOWEST,
        follow: Card::LOWEST,
        winner: Seat(0),
    };
}

/// Who takes a trick: same suit → higher value; different suits → the
/// follower only with a spade.
pub fn trick_winner(leader: Seat, lead: Card, follow: Card) -> Seat {
    let follower = Seat(1 - leader.0);
    let follower_wins = if lead.suit() == follow.suit() {
        follow.value() > lead.value()
    } else {
        follow.suit() == Suit::Spades
    };
    if follower_wins {
        follower
    } else {
        leader
    }
}

/// Cards that may be played from `hand`: the led suit if the hand holds
/// any, else all; the leader (`lead == None`) plays any card.
pub fn playable(hand: CardSet, lead: Option<Card>) -> CardSet {
    match lead {
        Some(lead) => {
            let same = hand.of_suit(lead.suit());
            if same.is_empty() {
                hand
            } else {
                same
            }
        }
        None => hand,
    }
}

/// SkullWhist scoring: exact → 10×bid; short → −10×bid; over → 10×bid + overtricks.
pub fn score(bid: u8, tricks: u8) -> i64 {
    let (bid, tricks) = (i64::from(bid), i64::from(tricks));
    match tricks.cmp(&bid) {
        std::cmp::Ordering::Equal => 10 * bid,
        std::cmp::Ordering::Less => -10 * bid,
        std::cmp::Ordering::Greater => 10 * bid + (tricks - bid),
    }
}

/// Where the game stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Waiting for sealed bids.
    Bidding,
    /// Tricks are being played.
    Playing,
    /// Scored or forfeited.
    Over,
}

/// What one seat sees.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkullWhistObservation {
    /// The observing seat.
    pub seat: Seat,
    /// Where the game stands.
    pub phase: Phase,
    /// Cards in hand, sorted.
    pub hand: Vec<Card>,
    /// This seat's bid, once made.
    pub my_bid: Option<u8>,
    /// The opponent's bid, shown once both have bid.
    pub opponent_bid: Option<u8>,
    /// Current trick number from 1 (during play).
    pub trick: u8,
    /// Who leads the current trick (during play).
    pub leader: Option<Seat>,
    /// The card led to the current trick, if any.
    pub lead_card: Option<Card>,
    /// Whether this seat must act now.
    pub to_act: bool,
    /// Tricks taken: `[mine, opponent's]`.
    pub tricks_won: [u8; 2],
    /// Finished tricks in order.
    pub history: Vec<Trick>,
}

/// A game of SkullWhist.
#[derive(Clone, Debug)]
pub struct SkullWhist {
    hands: [CardSet; 2],
    bids: [Option<u8>; 2],
    first_leader: Seat,
    leader: Seat,
    lead_card: Option<Card>,
    tricks_won: [u8; 2],
    /// Finished tricks, the first `tricks_done` of them: an array in the
    /// game rather than a vector of its own, one allocation fewer a game.
    tricks: [Trick; TRICKS as usize],
    tricks_done: u8,
    events: Vec<SkullWhistEvent>,
    phase: Phase,
    forfeited_by: Option<Seat>,
    variant: SkullWhistVariant,
}

impl SkullWhist {
    /// Starts a game from two given hands and first leader (for tests and
    /// hand-built positions). Hands must be 13 distinct cards each.
    pub fn from_hands(hands: [CardSet; 2], first_leader: Seat) -> Result<Self, SetupError> {
        if hands[0].len() != 13 || hands[1].len() != 13 || hands[0].0 & hands[1].0 != 0 {
            return Err(SetupError::Variant(
                "hands must be 13 distinct cards each".into(),
            ));
        }
        check_seat(first_leader, 2).map_err(|e| SetupError::Variant(e.to_string()))?;
        let mut events = Vec::with_capacity(2 * usize::from(TRICKS) * 2 + 8);
        for (i, h) in hands.iter().enumerate() {
            events.push(SkullWhistEvent::Deal {
                seat: Seat(i as u8),
                hand: h.to_vec(),
            });
        }
        Ok(SkullWhist {
            hands,
            bids: [None; 2],
            first_leader,
            leader: first_leader,
            lead_card: None,
            tricks_won: [0; 2],
            tricks: [Trick::UNPLAYED; TRICKS as usize],
            tricks_done: 0,
            events,
            phase: Phase::Bidding,
            forfeited_by: None,
            variant: SkullWhistVariant {},
        })
    }

    /// The seat that plays next in the current trick.
    fn card_turn(&self) -> Seat {
        if self.lead_card.is_some() {
            Seat(1 - self.leader.0)
        } else {
            self.leader
        }
    }

    /// A seat's current hand.
    pub fn hand(&self, seat: Seat) -> CardSet {
        self.hands[seat.index()]
    }

    /// Bids by seat.
    pub fn bids(&self) -> [Option<u8>; 2] {
        self.bids
    }

    /// Tricks taken by seat.
    pub fn tricks_won(&self) -> [u8; 2] {
        self.tricks_won
    }

    /// Finished tricks.
    pub fn history(&self) -> &[Trick] {
        &self.tricks[..usize::from(self.tricks_done)]
    }

    /// The phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Cards `seat` may play now (see [`playable`]).
    fn playable(&self, seat: Seat) -> CardSet {
        let lead = self.lead_card.filter(|_| seat != self.leader);
        playable(self.hands[seat.index()], lead)
    }

    /// Whether `seat` may bid `n` now: what `check` accepts, in short.
    fn may_bid(&self, seat: Seat, n: u8) -> bool {
        self.phase == Phase::Bidding
            && seat.index() < 2
            && self.bids[seat.index()].is_none()
            && (1..=TRICKS).contains(&n)
    }

    /// Whether `seat` may play `card` now: what `check` accepts, in short
    /// (the seat to play is a seat, and its playable cards are in its hand).
    fn may_play(&self, seat: Seat, card: Card) -> bool {
        self.phase == Phase::Playing
            && seat == self.card_turn()
            && self.playable(seat).contains(card)
    }

    // Inlined into `apply`, with the game's end kept apart in
    // `score_game`: one trick in two ends here.
    #[inline]
    fn finish_trick(&mut self, lead: Card, follow: Card) {
        let winner = trick_winner(self.leader, lead, follow);
        self.tricks[usize::from(self.tricks_done)] = Trick {
            leader: self.leader,
            lead,
            follow,
            winner,
        };
        self.tricks_done += 1;
        self.tricks_won[winner.index()] += 1;
        self.events.push(SkullWhistEvent::TrickWon {
            trick: self.tricks_done,
            winner,
        });
        self.leader = winner;
        self.lead_card = None;
        if self.tricks_done == TRICKS {
            self.score_game();
        }
    }

    /// Ends the game after the last trick: once a game, so kept out of
    /// the code of every trick.
    #[cold]
    fn score_game(&mut self) {
        self.phase = Phase::Over;
        let bids = [self.bids[0].unwrap_or(0), self.bids[1].unwrap_or(0)];
        let scores = [
            score(bids[0], self.tricks_won[0]),
            score(bids[1], self.tricks_won[1]),
        ];
        self.events.push(SkullWhistEvent::Scored {
            tricks: self.tricks_won,
            scores,
        });
    }
}

impl Game for SkullWhist {
    const NAME: &'static str = GameKind::SkullWhist.name();
    const KIND: GameKind = GameKind::SkullWhist;
    const RULES_VERSION: u32 = 1;
    type Variant = SkullWhistVariant;
    type Action = SkullWhistAction;
    type Observation = SkullWhistObservation;
    type Event = SkullWhistEvent;

    fn new(_variant: &SkullWhistVariant, seats: usize, seed: u64) -> Result<Self, SetupError> {
        check_seat_count(Self::NAME, Self::KIND.seats(), seats)?;
        let mut rng = game_rng(seed);
        let mut deck: [u8; 52] = std::array::from_fn(|i| i as u8);
        crate::shuffle::shuffle_52(&mut deck, &mut rng);
        let mut hands = [CardSet::default(); 2];
        for (i, c) in deck[..26].iter().enumerate() {
            hands[i / 13].0 |= 1u64 << c;
        }
        let first_leader = Seat(rng.random_range(0..2));
        Self::from_hands(hands, first_leader)
    }

    fn num_seats(&self) -> usize {
        2
    }

    fn variant(&self) -> &SkullWhistVariant {
        &self.variant
    }

    fn to_act(&self) -> SeatSet {
        match self.phase {
            Phase::Bidding => {
                let mut s = SeatSet::EMPTY;
                for i in 0..2u8 {
                    if self.bids[usize::from(i)].is_none() {
                        s = s.with(Seat(i));
                    }
                }
                s
            }
            Phase::Playing => SeatSet::only(self.card_turn()),
            Phase::Over => SeatSet::EMPTY,
        }
    }

    // Offered for inlining into a caller's loop (a playout's, a search's):
    // called at every step and short, it spends a good part of its time
    // on the call itself and the registers saved and restored around it.
    #[inline]
    fn legal_actions(&self, seat: Seat, out: &mut Vec<SkullWhistAction>) {
        match self.phase {
            Phase::Bidding if self.to_act().contains(seat) => {
                out.extend((1..=TRICKS).map(SkullWhistAction::Bid))
            }
            Phase::Playing if seat == self.card_turn() => {
                // The seat to play follows when a card is led, so the led
                // card is the one to follow.
                let cards = playable(self.hands[seat.index()], self.lead_card);
                out.extend(cards.iter().map(SkullWhistAction::Play));
            }
            _ => {}
        }
    }

    fn check(&self, seat: Seat, action: SkullWhistAction) -> Result<(), RuleError> {
        check_seat(seat, 2)?;
        match (self.phase, action) {
            (Phase::Over, _) => Err(RuleError::GameOver),
            (Phase::Bidding, SkullWhistAction::Bid(n)) => {
                if self.bids[seat.index()].is_some() {
                    Err(RuleError::illegal("you have already bid"))
                } else if !(1..=TRICKS).contains(&n) {
                    Err(RuleError::illegal(format!(
                        "bid {n} is out of range (1 to 13)"
                    )))
                } else {
                    Ok(())
                }
            }
            (Phase::Bidding, SkullWhistAction::Play(_)) => {
                Err(RuleError::illegal("play begins when both players have bid"))
            }
            (Phase::Playing, SkullWhistAction::Bid(_)) => {
                Err(RuleError::illegal("you have already bid"))
            }
            (Phase::Playing, SkullWhistAction::Play(card)) => {
                if seat != self.card_turn() {
                    Err(RuleError::NotYourTurn)
                } else if !self.hands[seat.index()].contains(card) {
                    Err(RuleError::illegal(format!("{card} is not in your hand")))
                } else if !self.playable(seat).contains(card) {
                    Err(RuleError::illegal("you must follow suit"))
                } else {
                    Ok(())
                }
            }
        }
    }

    // Inlined as `legal_actions` is, for the same reason.
    #[inline]
    fn apply(&mut self, seat: Seat, action: SkullWhistAction) -> Result<(), RuleError> {
        // The legal actions are told apart by a few tests on the state,
        // without building the reasons `check` gives for a refusal; the
        // tests must accept exactly what `check` accepts.
        debug_assert_eq!(
            match action {
                SkullWhistAction::Bid(n) => self.may_bid(seat, n),
                SkullWhistAction::Play(card) => self.may_play(seat, card),
            },
            self.check(seat, action).is_ok(),
            "{action} by seat {seat}"
        );
        match action {
            SkullWhistAction::Bid(n) if self.may_bid(seat, n) => {
                self.bids[seat.index()] = Some(n);
                self.events.push(SkullWhistEvent::Sealed { seat, bid: n });
                if let [Some(a), Some(b)] = self.bids {
                    self.phase = Phase::Playing;
                    self.events.push(SkullWhistEvent::Bids {
                        bids: [a, b],
                        leader: self.leader,
                    });
                }
            }
            SkullWhistAction::Play(card) if self.may_play(seat, card) => {
                self.hands[seat.index()].0 &= !card.bit();
                self.events.push(SkullWhistEvent::Played { seat, card });
                match self.lead_card {
                    None => self.lead_card = Some(card),
                    Some(lead) => self.finish_trick(lead, card),
                }
            }
            // Refused: `check` refuses exactly these, and says why.
            _ => return self.check(seat, action),
        }
        Ok(())
    }

    fn forfeit(&mut self, seat: Seat) -> Result<(), RuleError> {
        check_seat(seat, 2)?;
        if self.phase == Phase::Over {
            return Err(RuleError::GameOver);
        }
        self.phase = Phase::Over;
        self.forfeited_by = Some(seat);
        self.events.push(SkullWhistEvent::Forfeit { seat });
        Ok(())
    }

    /// A seat that is not at the table (a spectator) sees only public play.
    fn public_view(&self) -> SkullWhistObservation {
        let mut o = self.observation(Seat(0));
        o.hand.clear();
        o.to_act = false;
        // Seat 0's bid is public once both bids are revealed.
        if o.opponent_bid.is_none() {
            o.my_bid = None;
        }
        o
    }

    fn observation(&self, seat: Seat) -> SkullWhistObservation {
        let seated = seat.index() < 2;
        let me = seat.index().min(1);
        let opp = 1 - me;
        let both_bid = self.bids[0].is_some() && self.bids[1].is_some();
        let playing = self.phase == Phase::Playing;
        SkullWhistObservation {
            seat,
            phase: self.phase,
            hand: if seated {
                self.hands[me].to_vec()
            } else {
                Vec::new()
            },
            my_bid: if seated { self.bids[me] } else { None },
            opponent_bid: if seated && both_bid {
                self.bids[opp]
            } else {
                None
            },
            trick: if playing { self.tricks_done + 1 } else { 0 },
            leader: playing.then_some(self.leader),
            lead_card: if playing { self.lead_card } else { None },
            to_act: self.to_act().contains(seat),
            tricks_won: [self.tricks_won[me], self.tricks_won[opp]],
            history: self.history().to_vec(),
        }
    }

    fn events(&self) -> &[SkullWhistEvent] {
        &self.events
    }

    fn outcome(&self) -> Option<Outcome> {
        if self.phase != Phase::Over {
            return None;
        }
        if let Some(by) = self.forfeited_by {
            return Some(Outcome::forfeit(2, by));
        }
        let scores = (0..2)
            .map(|i| score(self.bids[i].unwrap_or(0), self.tricks_won[i]))
            .collect();
        Some(Outcome::from_scores(scores))
    }
}

impl SkullWhist {
    /// The seat that leads the first trick.
    pub fn first_leader(&self) -> Seat {
        self.first_leader
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props;

#[cfg(test)]
mod regression;
