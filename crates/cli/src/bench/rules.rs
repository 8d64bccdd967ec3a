//! `croupier bench rules` (the default): random playouts per second for each
//! rules engine.

use std::time::{Duration, Instant};

use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
use croupier_rules::Game;
use rand::{Rng, SeedableRng};
use serde::Serialize;

#[derive(Serialize)]
struct RulesLine {
    bench: &'static str,
    game: &'static str,
    games_per_sec: f64,
    actions_per_game: f64,
    ns_per_action: f64,
}

/// Plays random games of `G` from consecutive seeds for about `time`;
/// returns (games, actions, elapsed).
pub fn random_playouts<G: Game>(
    variant: &G::Variant,
    seats: usize,
    time: Duration,
) -> (u64, u64, Duration) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xBE7C4);
    let mut legal = Vec::with_capacity(64);
    let (mut games, mut actions) = (0u64, 0u64);
    let start = Instant::now();
    loop {
        // Check the clock every 256 games so the timer costs nothing.
        for _ in 0..256 {
            let Ok(mut g) = G::new(variant, seats, games) else {
                return (0, 0, start.elapsed());
            };
            while let Some(seat) = g.to_act().first() {
                legal.clear();
                g.legal_actions(seat, &mut legal);
                let a = legal[rng.random_range(0..legal.len())];
                if g.apply(seat, a).is_err() {
                    break;
                }
                actions += 1;
            }
            games += 1;
        }
        if start.elapsed() >= time {
            return (games, actions, start.elapsed());
        }
    }
}

fn line<G: Game>(name: &'static str, variant: &G::Variant, seats: usize, secs: f64) -> RulesLine {
    let (games, actions, elapsed) =
        random_playouts::<G>(variant, seats, Duration::from_secs_f64(secs));
    let s = elapsed.as_secs_f64();
    RulesLine {
        bench: "rules",
        game: name,
        games_per_sec: (games as f64 / s).round(),
        actions_per_game: actions as f64 / games.max(1) as f64,
        ns_per_action: s * 1e9 / actions.max(1) as f64,
    }
}

/// Prints one JSON line per game: about `seconds` of random playouts each.
pub fn run(seconds: f64) -> anyhow::Result<()> {
    let lines = [
        line::<Goofspiel>("goofspiel-13", &GoofspielVariant::gops(), 2, seconds),
        line::<SkullWhist>("skullwhist", &SkullWhistVariant {}, 2, seconds),
        line::<LoveLetter>("loveletter-4p", &LoveLetterVariant::default(), 4, seconds),
    ];
    for l in lines {
        println!("{}", serde_json::to_string(&l)?);
    }
    Ok(())
}
