//! Built-in strategies ("bots") for every game.
//!
//! A [`Strategy`] sees only its own observation, the events it may see, and
//! the list of legal actions; it answers with an action. The arena checks the
//! answer like any other bot's, so a built-in strategy that errs gets the same
//! ruling as a program would.
//!
//! | game | strategies |
//! |---|---|
//! | goofspiel | `random`, `planner` (seed 004's Planner), `strong` (matrix games) |
//! | skullwhist | `random`, `heuristic`, `strong` (determinized search) |
//! | loveletter | `random`, `heuristic`, `strong` (determinized Monte Carlo) |

pub mod duplicate;
pub mod goofspiel;
pub mod loveletter;
pub mod skullwhist;
pub mod strong;

use croupier_rules::{Game, Seat};
use rand::seq::IndexedRandom;
use rand::SeedableRng;

/// The generator a strategy draws from: seeded per game and seat by the arena,
/// so a series of games is reproducible from its seed.
pub type BotRng = rand_chacha::ChaCha8Rng;

/// Builds a strategy generator from a seed.
pub fn bot_rng(seed: u64) -> BotRng {
    BotRng::seed_from_u64(seed)
}

/// A built-in strategy for game `G`.
pub trait Strategy<G: Game>: Send {
    /// Called before each game with this strategy's seat and the table size.
    fn new_game(&mut self, _seat: Seat, _variant: &G::Variant, _seats: usize) {}

    /// Called for every event this seat may see, in order.
    fn notify(&mut self, _event: &G::Event) {}

    /// Chooses an action. `legal` is never empty.
    fn act(&mut self, obs: &G::Observation, legal: &[G::Action], rng: &mut BotRng) -> G::Action;
}

/// Plays a uniformly random legal action (the seeds' example bots).
#[derive(Debug, Default, Clone)]
pub struct RandomBot;

impl<G: Game> Strategy<G> for RandomBot {
    fn act(&mut self, _obs: &G::Observation, legal: &[G::Action], rng: &mut BotRng) -> G::Action {
        *legal.choose(rng).unwrap_or(&legal[0])
    }
}

/// A built-in strategy name that this game does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown built-in bot '{name}' for {game} (available: {available})")]
pub struct UnknownBot {
    /// The name asked for.
    pub name: String,
    /// The game.
    pub game: &'static str,
    /// The names that exist, comma-separated.
    pub available: String,
}

/// Games that have built-in strategies.
pub trait Builtins: Game + Sized {
    /// The strategy names for this game.
    const NAMES: &'static [&'static str];

    /// Makes a fresh strategy by name.
    fn make(name: &str) -> Option<Box<dyn Strategy<Self>>>;

    /// Makes a fresh strategy by name with a thinking budget (only the
    /// search-based `strong` strategies use it).
    fn make_with(name: &str, _budget: &strong::Budget) -> Option<Box<dyn Strategy<Self>>> {
        Self::make(name)
    }

    /// Makes a strategy by name with a thinking budget, or explains which
    /// names exist.
    fn builtin_with(
        name: &str,
        budget: &strong::Budget,
    ) -> Result<Box<dyn Strategy<Self>>, UnknownBot> {
        Self::make_with(name, budget).ok_or_else(|| UnknownBot {
            name: name.to_string(),
            game: Self::NAME,
            available: Self::NAMES.join(", "),
        })
    }

    /// Makes a strategy by name, or explains which names exist.
    fn builtin(name: &str) -> Result<Box<dyn Strategy<Self>>, UnknownBot> {
        Self::make(name).ok_or_else(|| UnknownBot {
            name: name.to_string(),
            game: Self::NAME,
            available: Self::NAMES.join(", "),
        })
    }
}

impl Builtins for croupier_rules::goofspiel::Goofspiel {
    const NAMES: &'static [&'static str] = &["random", "planner", "strong"];
    fn make(name: &str) -> Option<Box<dyn Strategy<Self>>> {
        match name {
            "random" => Some(Box::new(RandomBot)),
            "planner" => Some(Box::new(goofspiel::Planner::default())),
            "strong" => Some(Box::new(strong::goofspiel::Strong::default())),
            _ => None,
        }
    }
}

impl Builtins for croupier_rules::loveletter::LoveLetter {
    const NAMES: &'static [&'static str] = &["random", "heuristic", "strong"];
    fn make(name: &str) -> Option<Box<dyn Strategy<Self>>> {
        Self::make_with(name, &strong::Budget::default())
    }
    fn make_with(name: &str, budget: &strong::Budget) -> Option<Box<dyn Strategy<Self>>> {
        match name {
            "random" => Some(Box::new(loveletter::Random::default())),
            "heuristic" => Some(Box::new(loveletter::Heuristic::default())),
            "strong" => Some(Box::new(strong::loveletter::Strong::new(*budget))),
            _ => None,
        }
    }
}

impl Builtins for croupier_rules::skullwhist::SkullWhist {
    const NAMES: &'static [&'static str] = &["random", "heuristic", "strong"];
    fn make(name: &str) -> Option<Box<dyn Strategy<Self>>> {
        Self::make_with(name, &strong::Budget::default())
    }
    fn make_with(name: &str, budget: &strong::Budget) -> Option<Box<dyn Strategy<Self>>> {
        match name {
            "random" => Some(Box::new(RandomBot)),
            "heuristic" => Some(Box::new(skullwhist::Heuristic)),
            "strong" => Some(Box::new(strong::skullwhist::Strong::new(*budget))),
            _ => None,
        }
    }
}
