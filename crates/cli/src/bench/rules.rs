//! `croupier bench rules` (the default): random playouts per second for each
//! rules engine.

use std::time::Duration;

use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use croupier_rules::playouts::{goofspiel_beside_bare, random_playouts, Tally, ROUNDS_BESIDE_BARE};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
use croupier_rules::Game;
use serde::Serialize;

#[derive(Serialize)]
struct RulesLine {
    bench: &'static str,
    game: &'static str,
    games_per_sec: f64,
    actions_per_game: f64,
    ns_per_action: f64,
    /// Goofspiel-13: games/s as a share of the bare loop's in this run.
    #[serde(skip_serializing_if = "Option::is_none")]
    of_bare_loop: Option<f64>,
    /// Goofspiel-13: that share in each round of turns with the bare loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    of_bare_loop_by_round: Option<Vec<f64>>,
}

/// `x` to three decimals.
fn three(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn figures(name: &'static str, t: Tally) -> RulesLine {
    RulesLine {
        bench: "rules",
        game: name,
        games_per_sec: t.games_per_sec().round(),
        actions_per_game: t.actions as f64 / t.games.max(1) as f64,
        ns_per_action: t.elapsed.as_secs_f64() * 1e9 / t.actions.max(1) as f64,
        of_bare_loop: None,
        of_bare_loop_by_round: None,
    }
}

fn line<G: Game>(name: &'static str, variant: &G::Variant, seats: usize, secs: f64) -> RulesLine {
    figures(
        name,
        random_playouts::<G>(variant, seats, Duration::from_secs_f64(secs)),
    )
}

/// Prints one JSON line per game: about `seconds` of random playouts each.
/// Goofspiel-13's engine and the bare loop take turns
/// ([`ROUNDS_BESIDE_BARE`] rounds, `seconds` each in all), and the
/// engine's line gives its share of the bare loop's games/s, in all and
/// round by round.
pub fn run(seconds: f64) -> anyhow::Result<()> {
    let (engine, bare, shares) =
        goofspiel_beside_bare(Duration::from_secs_f64(seconds), ROUNDS_BESIDE_BARE);
    let bare = figures("goofspiel-13-bare-loop", bare);
    let mut gops = figures("goofspiel-13", engine);
    gops.of_bare_loop = Some(three(gops.games_per_sec / bare.games_per_sec.max(1.0)));
    gops.of_bare_loop_by_round = Some(shares.into_iter().map(three).collect());
    let lines = [
        gops,
        bare,
        line::<SkullWhist>("skullwhist", &SkullWhistVariant {}, 2, seconds),
        line::<LoveLetter>("loveletter-4p", &LoveLetterVariant::default(), 4, seconds),
    ];
    for l in lines {
        println!("{}", serde_json::to_string(&l)?);
    }
    Ok(())
}
