//! The bot side of `croupier/1`: JSON lines, any game.

use std::io::{BufRead, Write};

use super::error::{At as _, BotSideError};
use croupier_bots::{bot_rng, Strategy};
use croupier_dialects::croupier::{FromBot, ToBot};
use croupier_rules::Game;

use super::io::{answer, shown, ClientOptions, Lines};

/// Message types this client knows; a line of another type is skipped, so a
/// later protocol revision may add messages without breaking old bots.
const KNOWN_TYPES: [&str; 4] = ["start", "event", "act", "end"];

/// What a bot does with one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handled {
    /// Nothing to say.
    Quiet,
    /// The answer line to an `act`.
    Answer(String),
    /// The match is over (`end`).
    End,
}

/// A built-in strategy behind `croupier/1` messages, one message at a time
/// (the same state machine serves stdin/stdout and HTTP).
pub struct CroupierBot<G: Game> {
    strategy: Box<dyn Strategy<G>>,
    rng: croupier_bots::BotRng,
}

impl<G: Game> std::fmt::Debug for CroupierBot<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CroupierBot")
            .field("game", &G::NAME)
            .finish()
    }
}

impl<G: Game> CroupierBot<G> {
    /// `strategy` with its generator seeded from `seed`.
    pub fn new(strategy: Box<dyn Strategy<G>>, seed: u64) -> Self {
        CroupierBot {
            strategy,
            rng: bot_rng(seed),
        }
    }

    /// Handles one message. A message of an unknown type is skipped, so a
    /// later protocol revision may add messages without breaking old bots.
    /// A line that is not JSON, a known message that does not read, or an
    /// `act` with no legal action this game understands is an error.
    pub fn handle(&mut self, line: &str) -> Result<Handled, BotSideError> {
        if line.trim().is_empty() {
            return Ok(Handled::Quiet);
        }
        let value: serde_json::Value = serde_json::from_str(line).at(|| "not JSON")?;
        let kind = value.get("type").and_then(serde_json::Value::as_str);
        if !kind.is_some_and(|k| KNOWN_TYPES.contains(&k)) {
            return Ok(Handled::Quiet);
        }
        let msg: ToBot<G::Observation, serde_json::Value> = serde_json::from_value(value)
            .at(|| format!("not a croupier/1 message for {}", G::NAME))?;
        match msg {
            ToBot::Start {
                game,
                variant,
                seat,
                seats,
                ..
            } => {
                if game != G::NAME {
                    return Err(BotSideError::protocol(format!(
                        "this bot plays {}, but the manager runs {game}",
                        G::NAME
                    )));
                }
                let variant: G::Variant =
                    serde_json::from_value(variant).at(|| "the variant does not read")?;
                self.strategy.new_game(seat, &variant, seats);
                Ok(Handled::Quiet)
            }
            ToBot::Event { event } => {
                // Events of a newer revision that do not read are skipped.
                if let Ok(event) = serde_json::from_value::<G::Event>(event) {
                    self.strategy.notify(&event);
                }
                Ok(Handled::Quiet)
            }
            ToBot::Act {
                decision,
                observation,
                legal,
                ..
            } => {
                let parsed: Vec<(G::Action, &String)> = legal
                    .iter()
                    .filter_map(|text| text.parse::<G::Action>().ok().map(|a| (a, text)))
                    .collect();
                if parsed.is_empty() {
                    return Err(BotSideError::protocol(
                        "no legal action this bot understands",
                    ));
                }
                let actions: Vec<G::Action> = parsed.iter().map(|(a, _)| *a).collect();
                let chosen = self.strategy.act(&observation, &actions, &mut self.rng);
                // Answer with the manager's own text for the action.
                let text = parsed
                    .iter()
                    .find(|(a, _)| *a == chosen)
                    .map_or_else(|| chosen.to_string(), |(_, t)| (*t).clone());
                let reply = FromBot {
                    action: text,
                    decision: Some(decision),
                };
                Ok(Handled::Answer(serde_json::to_string(&reply)?))
            }
            ToBot::End { .. } => Ok(Handled::End),
        }
    }
}

/// Runs `strategy` as a `croupier/1` bot of game `G`.
///
/// `start` begins the game (its variant is read as `G::Variant`), `event`
/// lines are passed to the strategy when they read as `G::Event`, every `act`
/// is answered with `{"action": "<text>", "decision": n}`, and `end` or the
/// end of input ends the run. A line that is not JSON, a known message that
/// does not read, or an `act` with no legal action this game understands is
/// an error naming the line.
pub fn run_croupier<G: Game>(
    strategy: Box<dyn Strategy<G>>,
    opts: &ClientOptions,
    input: impl BufRead,
    mut output: impl Write,
) -> Result<(), BotSideError> {
    let mut bot = CroupierBot::new(strategy, opts.seed);
    let mut lines = Lines::new(input);
    while let Some((number, line)) = lines.next_line()? {
        match bot
            .handle(line)
            .at(|| format!("line {number} '{}'", shown(line)))?
        {
            Handled::Quiet => {}
            Handled::Answer(reply) => answer(&mut output, &reply)?,
            Handled::End => return Ok(()),
        }
    }
    Ok(())
}
