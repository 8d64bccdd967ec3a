//! Built-in strategies ("bots") for every game.
//!
//! A [`Strategy`] sees only its own observation, the events it may see, and
//! the list of legal actions; it answers with an action. The arena checks the
//! answer like any other bot's, so a built-in strategy that errs gets the same
//! ruling as a program would.
//!
//! | game | strategies |
//! |---|---|
//! | goofspiel | `random`, `planner` (seed 004's Planner), `strong` (matrix games and an opponent model), and the sparring panel: `prize`, `near-prize`, `table`, `copy`, `highest`, `lowest` ([`goofspiel::panel`]) |
//! | skullwhist | `random`, `heuristic`, `strong` (determinized search) |
//! | loveletter | `random`, `heuristic`, `strong` (information-set MCTS) |

pub mod duplicate;
pub mod goofspiel;
pub mod loveletter;
pub mod skullwhist;
mod strategy;
pub mod strong;

use croupier_rules::Game;

pub use strategy::{bot_rng, catch_up, split_options, BotRng, RandomBot, Strategy, UnknownBot};

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
    const NAMES: &'static [&'static str] = &[
        "random",
        "planner",
        "strong",
        "prize",
        "near-prize",
        "table",
        "copy",
        "highest",
        "lowest",
    ];
    fn make(name: &str) -> Option<Box<dyn Strategy<Self>>> {
        Self::make_with(name, &strong::Budget::default())
    }
    fn make_with(name: &str, budget: &strong::Budget) -> Option<Box<dyn Strategy<Self>>> {
        match name {
            "random" => Some(Box::new(RandomBot)),
            "planner" => Some(Box::new(goofspiel::Planner::default())),
            "strong" => Some(Box::new(strong::goofspiel::Strong::new(*budget))),
            other => goofspiel::panel::Panel::named(other)
                .map(|p| Box::new(p) as Box<dyn Strategy<Self>>),
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
