//! SkullWhist `strong` against another built-in, one line per game, for
//! checking the bid against what the bot then takes:
//! `cargo run --release -p croupier-bots --example skullwhist_probe --
//! AGAINST DEALS THINK_MS|iITERATIONS [FIRST_SEED]`.
//!
//! Columns: seed, `strong`'s seat, first leader, `strong`'s bid, the
//! opponent's bid, `strong`'s tricks, the opponent's, both scores, the mean
//! of the bid search's trick forecast, and the forecast (shares of 0 to 13
//! tricks; drawn with a generator of its own at 3,000 samples, so the game
//! is the same as without it).

use croupier_bots::strong::skullwhist::Strong;
use croupier_bots::strong::Budget;
use croupier_bots::{bot_rng, catch_up, Builtins, Strategy};
use croupier_rules::skullwhist::{score, SkullWhist};
use croupier_rules::{Game, Seat};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let against = args.get(1).map_or("random", |s| s.as_str());
    let deals: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let think = args.get(3).map_or("i300", |s| s.as_str());
    let budget = match think.strip_prefix('i') {
        Some(n) => Budget::iterations(n.parse().unwrap_or(300)),
        None => Budget::think_ms(think.parse().unwrap_or(100)),
    };
    let first: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
    for seed in first..first + deals {
        for me in 0..2usize {
            // As `duplicate::pair` plays it: same deal, bots and generators.
            let mut game = SkullWhist::new(&Default::default(), 2, seed).expect("a deal");
            let mut bots: Vec<Box<dyn Strategy<SkullWhist>>> = (0..2)
                .map(|s| {
                    let name = if s == me { "strong" } else { against };
                    SkullWhist::builtin_with(name, &budget).expect("a built-in")
                })
                .collect();
            for (s, b) in bots.iter_mut().enumerate() {
                b.new_game(Seat(s as u8), &Default::default(), 2);
            }
            let mut rngs: Vec<_> = (0..2)
                .map(|s| bot_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (s as u64 + 1)))
                .collect();
            let forecast = Strong::new(Budget::iterations(3000)).trick_forecast(
                &game.observation(Seat(me as u8)),
                &mut bot_rng(seed ^ 0xABCD),
            );
            let mean: f64 = forecast.iter().enumerate().map(|(t, p)| t as f64 * p).sum();
            let mut seen = [0usize; 2];
            let mut legal = Vec::new();
            loop {
                for (s, (bot, seen)) in bots.iter_mut().zip(&mut seen).enumerate() {
                    catch_up(&game, Seat(s as u8), bot.as_mut(), seen);
                }
                let Some(seat) = game.to_act().first() else {
                    break;
                };
                legal.clear();
                game.legal_actions(seat, &mut legal);
                let obs = game.observation(seat);
                let a = bots[seat.index()].act(&obs, &legal, &mut rngs[seat.index()]);
                if game.apply(seat, a).is_err() {
                    eprintln!("seed {seed}: an illegal action");
                    return;
                }
            }
            let bids = game.bids().map(|b| b.unwrap_or(0));
            let tricks = game.tricks_won();
            let (mb, ob) = (bids[me], bids[1 - me]);
            let (mt, ot) = (tricks[me], tricks[1 - me]);
            let shares: Vec<String> = forecast.iter().map(|p| format!("{p:.3}")).collect();
            println!(
                "{seed} {me} {} {mb} {ob} {mt} {ot} {} {} {mean:.3} {}",
                game.first_leader().index(),
                score(mb, mt),
                score(ob, ot),
                shares.join(",")
            );
        }
    }
}
