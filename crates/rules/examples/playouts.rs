//! Random playouts per second of one rules engine, without building the
//! rest of Croupier: `cargo run --release -p croupier-rules --example
//! playouts -- loveletter-4p 3` (games: goofspiel-13, goofspiel-13-bare-loop,
//! skullwhist, loveletter-4p; seconds, default 3). `goofspiel-13-share`
//! plays the Goofspiel engine and the bare loop in turns, as `croupier bench
//! rules` does (the seconds each, so twice in all), and prints the engine's
//! share of the bare loop's games/s.
//! `croupier bench rules` prints the same figures for every game, as JSON.

use std::time::Duration;

use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use croupier_rules::playouts::{
    bare_goofspiel_playouts, goofspiel_beside_bare, random_playouts, Tally, ROUNDS_BESIDE_BARE,
};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};

fn main() {
    let mut args = std::env::args().skip(1);
    let game = args.next().unwrap_or_else(|| "loveletter-4p".into());
    let secs: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let time = Duration::from_secs_f64(secs);
    let Tally {
        games,
        actions,
        elapsed,
    } = match game.as_str() {
        "goofspiel-13" => random_playouts::<Goofspiel>(&GoofspielVariant::gops(), 2, time),
        "goofspiel-13-bare-loop" => bare_goofspiel_playouts(time),
        "skullwhist" => random_playouts::<SkullWhist>(&SkullWhistVariant {}, 2, time),
        "loveletter-4p" => random_playouts::<LoveLetter>(&LoveLetterVariant::default(), 4, time),
        "goofspiel-13-share" => {
            let (engine, bare, shares) = goofspiel_beside_bare(time, ROUNDS_BESIDE_BARE);
            let shares: Vec<String> = shares
                .iter()
                .map(|s| format!("{:.1}%", s * 100.0))
                .collect();
            println!(
                "goofspiel-13: {:.0} games/s, {:.1}% of the bare loop's {:.0} in turns (by round: {})",
                engine.games_per_sec(),
                engine.games_per_sec() / bare.games_per_sec() * 100.0,
                bare.games_per_sec(),
                shares.join(", ")
            );
            return;
        }
        other => {
            eprintln!("unknown game '{other}' (goofspiel-13, goofspiel-13-bare-loop, goofspiel-13-share, skullwhist, loveletter-4p)");
            std::process::exit(2);
        }
    };
    let s = elapsed.as_secs_f64();
    println!(
        "{game}: {:.0} games/s, {:.1} actions per game, {:.1} ns per action ({games} games)",
        games as f64 / s,
        actions as f64 / games.max(1) as f64,
        s * 1e9 / actions.max(1) as f64
    );
}
