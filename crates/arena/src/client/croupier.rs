//! The bot side of `croupier/1`: JSON lines, any game.

use std::io::{BufRead, Write};

use anyhow::{anyhow, bail, Context as _};
use croupier_bots::{bot_rng, Strategy};
use croupier_dialects::croupier::{FromBot, ToBot};
use croupier_rules::Game;

use super::{answer, shown, ClientOptions, Lines};

/// Message types this client knows; a line of another type is skipped, so a
/// later protocol revision may add messages without breaking old bots.
const KNOWN_TYPES: [&str; 4] = ["start", "event", "act", "end"];

/// Runs `strategy` as a `croupier/1` bot of game `G`.
///
/// `start` begins the game (its variant is read as `G::Variant`), `event`
/// lines are passed to the strategy when they read as `G::Event`, every `act`
/// is answered with `{"action": "<text>", "decision": n}`, and `end` or the
/// end of input ends the run. A line that is not JSON, a known message that
/// does not read, or an `act` with no legal action this game understands is
/// an error naming the line.
pub fn run_croupier<G: Game>(
    mut strategy: Box<dyn Strategy<G>>,
    opts: &ClientOptions,
    input: impl BufRead,
    mut output: impl Write,
) -> anyhow::Result<()> {
    let mut rng = bot_rng(opts.seed);
    let mut lines = Lines::new(input);
    while let Some((number, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("line {number} '{}'", shown(line));
        let value: serde_json::Value =
            serde_json::from_str(line).with_context(|| format!("{} is not JSON", at()))?;
        let kind = value.get("type").and_then(serde_json::Value::as_str);
        if !kind.is_some_and(|k| KNOWN_TYPES.contains(&k)) {
            continue;
        }
        let msg: ToBot<G::Observation, serde_json::Value> = serde_json::from_value(value)
            .with_context(|| format!("{} is not a croupier/1 message for {}", at(), G::NAME))?;
        match msg {
            ToBot::Start {
                game,
                variant,
                seat,
                seats,
                ..
            } => {
                if game != G::NAME {
                    bail!("this bot plays {}, but the manager runs {game}", G::NAME);
                }
                let variant: G::Variant = serde_json::from_value(variant)
                    .with_context(|| format!("{}: the variant does not read", at()))?;
                strategy.new_game(seat, &variant, seats);
            }
            ToBot::Event { event } => {
                // Events of a newer revision that do not read are skipped.
                if let Ok(event) = serde_json::from_value::<G::Event>(event) {
                    strategy.notify(&event);
                }
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
                    return Err(anyhow!("{}: no legal action this bot understands", at()));
                }
                let actions: Vec<G::Action> = parsed.iter().map(|(a, _)| *a).collect();
                let chosen = strategy.act(&observation, &actions, &mut rng);
                // Answer with the manager's own text for the action.
                let text = parsed
                    .iter()
                    .find(|(a, _)| *a == chosen)
                    .map_or_else(|| chosen.to_string(), |(_, t)| (*t).clone());
                let reply = FromBot {
                    action: text,
                    decision: Some(decision),
                };
                answer(&mut output, &serde_json::to_string(&reply)?)?;
            }
            ToBot::End { .. } => return Ok(()),
        }
    }
    Ok(())
}
