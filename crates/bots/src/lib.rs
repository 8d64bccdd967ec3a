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
//! | loveletter | `random`, `heuristic`, `strong` (information-set MCTS) |

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

/// Tells `strategy`, playing `seat`, the events of `game` since `*seen`
/// that the seat may see, and moves `*seen` to the end.
pub fn catch_up<G: Game>(game: &G, seat: Seat, strategy: &mut dyn Strategy<G>, seen: &mut usize) {
    use croupier_rules::Event as _;
    let events = game.events();
    for e in &events[*seen..] {
        if e.visible_to(seat) {
            strategy.notify(e);
        }
    }
    *seen = events.len();
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

/// A built-in strategy that cannot be made: a name this game does not have,
/// or options it does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownBot {
    /// No strategy of that name.
    #[error("unknown built-in bot '{name}' for {game} (available: {available})")]
    Name {
        /// The name asked for.
        name: String,
        /// The game.
        game: &'static str,
        /// The names that exist, comma-separated.
        available: String,
    },
    /// Options after `?` that the strategy does not take.
    #[error("built-in bot '{spec}': {problem}")]
    Options {
        /// The whole text asked for.
        spec: String,
        /// What is wrong.
        problem: String,
    },
}

/// Splits `NAME?OPTIONS` into the name and the options (if any).
pub fn split_options(spec: &str) -> (&str, Option<&str>) {
    match spec.split_once('?') {
        Some((name, options)) => (name, Some(options)),
        None => (spec, None),
    }
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
        Self::make_with(name, budget).ok_or_else(|| UnknownBot::Name {
            name: name.to_string(),
            game: Self::NAME,
            available: Self::NAMES.join(", "),
        })
    }

    /// Makes a strategy from its spec, `NAME` or `NAME?OPTIONS` (only
    /// `strong` takes options: `strong?think-ms=50&threads=2`, or
    /// `strong?iterations=400`), or explains what is wrong.
    fn builtin(spec: &str) -> Result<Box<dyn Strategy<Self>>, UnknownBot> {
        let (name, options) = split_options(spec);
        let budget = match options {
            None => strong::Budget::default(),
            Some(_) if name != "strong" && Self::make(name).is_some() => {
                return Err(UnknownBot::Options {
                    spec: spec.to_string(),
                    problem: format!("'{name}' takes no options (only 'strong' does)"),
                })
            }
            Some(o) => strong::Budget::parse(o).map_err(|problem| UnknownBot::Options {
                spec: spec.to_string(),
                problem: problem.to_string(),
            })?,
        };
        Self::builtin_with(name, &budget)
    }
}

impl Builtins for croupier_rules::goofspiel::Goofspiel {
    const NAMES: &'static [&'static str] = &["random", "planner", "strong"];
    fn make(name: &str) -> Option<Box<dyn Strategy<Self>>> {
        Self::make_with(name, &strong::Budget::default())
    }
    fn make_with(name: &str, budget: &strong::Budget) -> Option<Box<dyn Strategy<Self>>> {
        match name {
            "random" => Some(Box::new(RandomBot)),
            "planner" => Some(Box::new(goofspiel::Planner::default())),
            "strong" => Some(Box::new(strong::goofspiel::Strong::new(*budget))),
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
