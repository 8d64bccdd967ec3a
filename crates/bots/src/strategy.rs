//! What every built-in strategy is ([`Strategy`]) and draws from
//! ([`BotRng`]), the random one, and why a strategy cannot be made
//! ([`UnknownBot`]).

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
