//! The vocabulary shared by every game: seats, the [`Game`] trait, outcomes,
//! errors and the seeded random number generator.

use std::borrow::Cow;
use std::fmt::{self, Debug, Display};
use std::str::FromStr;

use rand::SeedableRng;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::kind::GameKind;

/// The seeded generator every game owns. ChaCha8 is portable (same stream on
/// every platform and version of the crate's major release) and fast.
pub type GameRng = rand_chacha::ChaCha8Rng;

/// Builds the game generator from a match seed.
pub fn game_rng(seed: u64) -> GameRng {
    GameRng::seed_from_u64(seed)
}

/// A seat at the table, numbered from 0 in the order the seats were given.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seat(pub u8);

impl Seat {
    /// The seat's index into per-seat arrays.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A small set of seats (games have at most 8), used for "who must act now".
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct SeatSet(u8);

impl SeatSet {
    /// No seat.
    pub const EMPTY: SeatSet = SeatSet(0);

    /// The set holding only `seat`.
    pub fn only(seat: Seat) -> SeatSet {
        SeatSet(1 << seat.0)
    }

    /// Adds a seat.
    pub fn with(self, seat: Seat) -> SeatSet {
        SeatSet(self.0 | (1 << seat.0))
    }

    /// Whether `seat` is in the set.
    pub fn contains(self, seat: Seat) -> bool {
        self.0 & (1 << seat.0) != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The lowest seat in the set.
    pub fn first(self) -> Option<Seat> {
        (self.0 != 0).then(|| Seat(self.0.trailing_zeros() as u8))
    }

    /// The seats in ascending order.
    pub fn iter(self) -> impl Iterator<Item = Seat> {
        (0..8u8).filter(move |i| self.0 & (1 << i) != 0).map(Seat)
    }

    /// Number of seats in the set.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }
}

/// Why a game could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The game does not support this many seats.
    #[error("{game} needs {} players, not {given}", seat_range(*min, *max))]
    SeatCount {
        /// The game's name.
        game: &'static str,
        /// Fewest seats.
        min: usize,
        /// Most seats.
        max: usize,
        /// What was asked for.
        given: usize,
    },
    /// The variant is not valid.
    #[error("invalid variant: {0}")]
    Variant(String),
}

/// Why an action was refused. `apply` changes nothing when it returns one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The game has ended.
    #[error("the game is over")]
    GameOver,
    /// The seat does not exist in this game.
    #[error("there is no seat {0}")]
    NoSuchSeat(Seat),
    /// It is not this seat's turn (or it has already acted in this decision).
    #[error("not your turn")]
    NotYourTurn,
    /// The text could not be parsed as an action of this game.
    #[error("malformed action: {0}")]
    Malformed(Cow<'static, str>),
    /// A well-formed action that the rules forbid now.
    #[error("illegal action: {0}")]
    Illegal(Cow<'static, str>),
}

impl RuleError {
    /// A malformed-input error with a fixed message.
    pub fn malformed(msg: impl Into<Cow<'static, str>>) -> Self {
        RuleError::Malformed(msg.into())
    }
    /// An illegal-move error with a fixed message.
    pub fn illegal(msg: impl Into<Cow<'static, str>>) -> Self {
        RuleError::Illegal(msg.into())
    }
}

/// Rules variant of a game: serialisable, with a default and a textual form
/// for the command line (`jujitsu rounds=5,6,7,8`).
pub trait Variant:
    Clone + Debug + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// Parses a variant given on the command line.
    fn parse(text: &str) -> Result<Self, SetupError>;
}

/// An event in a game's log, with the rule of who may see it. `Display` gives
/// the line a transcript shows for it.
pub trait Event:
    Clone + Debug + Display + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// Whether `seat` may see this event.
    fn visible_to(&self, seat: Seat) -> bool;
}

/// Final result of a game. Ranks start at 1 (best); equal scores share a rank.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Score per seat (game-specific meaning; higher is better).
    pub scores: Vec<i64>,
    /// Rank per seat: 1 = first, ties share the better rank.
    pub ranks: Vec<u8>,
    /// The seat that forfeited the game, if the game ended by forfeit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forfeited_by: Option<Seat>,
}

impl Outcome {
    /// Ranks seats by score, higher first; equal scores share a rank.
    pub fn from_scores(scores: Vec<i64>) -> Outcome {
        let ranks = scores
            .iter()
            .map(|s| 1 + scores.iter().filter(|o| *o > s).count() as u8)
            .collect();
        Outcome {
            scores,
            ranks,
            forfeited_by: None,
        }
    }

    /// A game lost by forfeit: the forfeiting seat ranks last, every other
    /// seat shares first place. Scores are zero (a forfeited game has none).
    pub fn forfeit(seats: usize, by: Seat) -> Outcome {
        let ranks = (0..seats)
            .map(|i| if i == by.index() { 2 } else { 1 })
            .collect();
        Outcome {
            scores: vec![0; seats],
            ranks,
            forfeited_by: Some(by),
        }
    }

    /// Whether `seat` alone holds first place.
    pub fn is_sole_winner(&self, seat: Seat) -> bool {
        self.ranks[seat.index()] == 1 && self.ranks.iter().filter(|r| **r == 1).count() == 1
    }

    /// Whether `seat` shares first place with another seat.
    pub fn is_shared_first(&self, seat: Seat) -> bool {
        self.ranks[seat.index()] == 1 && self.ranks.iter().filter(|r| **r == 1).count() > 1
    }
}

/// A game's rules as a pure state machine. See the crate documentation.
pub trait Game: Clone + Debug + Send + Sync + 'static {
    /// The game's name as used on the command line and in records.
    const NAME: &'static str;
    /// The game as a [`GameKind`].
    const KIND: GameKind;
    /// Version of these rules; bumped whenever a change could alter a replay.
    const RULES_VERSION: u32;
    /// Rules variant.
    type Variant: Variant;
    /// A legal-shaped action, with a text form that round-trips.
    type Action: Copy + Eq + Debug + Display + FromStr<Err = RuleError> + Send + Sync + 'static;
    /// What one seat may see.
    type Observation: Clone
        + Debug
        + PartialEq
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static;
    /// An entry of the game's log.
    type Event: Event;

    /// Sets up a game for `seats` players; all chance comes from `seed`.
    fn new(variant: &Self::Variant, seats: usize, seed: u64) -> Result<Self, SetupError>;

    /// Number of seats.
    fn num_seats(&self) -> usize;

    /// The variant this game is played under.
    fn variant(&self) -> &Self::Variant;

    /// Seats that must act now; empty once the game is over.
    fn to_act(&self) -> SeatSet;

    /// Appends the legal actions of `seat` to `out` (nothing if it need not act).
    fn legal_actions(&self, seat: Seat, out: &mut Vec<Self::Action>);

    /// Checks whether `seat` may take `action` now.
    fn check(&self, seat: Seat, action: Self::Action) -> Result<(), RuleError>;

    /// Takes the action, or refuses and leaves the state untouched.
    fn apply(&mut self, seat: Seat, action: Self::Action) -> Result<(), RuleError>;

    /// Applies a forfeit ruling against `seat` (what it means is the game's:
    /// SkullWhist and Goofspiel end the game, Love Letter puts the seat out of
    /// the round). Refused when the game is over or the seat does not exist.
    fn forfeit(&mut self, seat: Seat) -> Result<(), RuleError>;

    /// What `seat` may see now.
    fn observation(&self, seat: Seat) -> Self::Observation;

    /// What every seat may see now, shaped as seat 0's observation without
    /// anything only seat 0 knows (its hand, its sealed bid, what a card
    /// showed it): what spectators of a running game are shown.
    fn public_view(&self) -> Self::Observation;

    /// The whole log of events so far.
    fn events(&self) -> &[Self::Event];

    /// Scores and ranks once the game is over.
    fn outcome(&self) -> Option<Outcome>;

    /// Whether the game is over.
    fn is_over(&self) -> bool {
        self.outcome().is_some()
    }

    /// Parses untrusted text from a bot and checks it against the rules.
    fn validate(&self, seat: Seat, raw: &str) -> Result<Self::Action, RuleError> {
        let action: Self::Action = raw.trim().parse()?;
        self.check(seat, action)?;
        Ok(action)
    }

    /// The variant to replay a record made under rules version `version`
    /// with, or `None` if this build no longer has that version's rules. By
    /// default only [`Game::RULES_VERSION`] replays; a game that keeps an
    /// older version's rules returns a variant that applies them.
    fn replay_variant(variant: Self::Variant, version: u32) -> Option<Self::Variant> {
        (version == Self::RULES_VERSION).then_some(variant)
    }

    /// The legal actions of `seat` as a new vector.
    fn legal_vec(&self, seat: Seat) -> Vec<Self::Action> {
        let mut out = Vec::new();
        self.legal_actions(seat, &mut out);
        out
    }
}

/// Checks a table size against the sizes a game allows.
pub(crate) fn check_seat_count(
    game: &'static str,
    allowed: std::ops::RangeInclusive<usize>,
    seats: usize,
) -> Result<(), SetupError> {
    if allowed.contains(&seats) {
        return Ok(());
    }
    Err(SetupError::SeatCount {
        game,
        min: *allowed.start(),
        max: *allowed.end(),
        given: seats,
    })
}

fn seat_range(min: usize, max: usize) -> String {
    if min == max {
        format!("exactly {min}")
    } else {
        format!("{min} to {max}")
    }
}

/// Checks a seat index against the table size.
pub(crate) fn check_seat(seat: Seat, seats: usize) -> Result<(), RuleError> {
    if seat.index() < seats {
        Ok(())
    } else {
        Err(RuleError::NoSuchSeat(seat))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_scores_share_rank_and_higher_scores_rank_first() {
        let o = Outcome::from_scores(vec![10, 30, 10, 5]);
        assert_eq!(o.ranks, vec![2, 1, 2, 4]);
        assert!(o.is_sole_winner(Seat(1)));
        let tie = Outcome::from_scores(vec![7, 7]);
        assert!(tie.is_shared_first(Seat(0)) && tie.is_shared_first(Seat(1)));
    }

    #[test]
    fn forfeiting_seat_ranks_last() {
        let o = Outcome::forfeit(2, Seat(0));
        assert_eq!(o.ranks, vec![2, 1]);
        assert_eq!(o.forfeited_by, Some(Seat(0)));
    }

    #[test]
    fn seat_set_iterates_in_order() {
        let s = SeatSet::only(Seat(2)).with(Seat(0));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![Seat(0), Seat(2)]);
        assert_eq!(s.first(), Some(Seat(0)));
        assert_eq!(s.len(), 2);
        assert!(!s.contains(Seat(1)));
    }
}
