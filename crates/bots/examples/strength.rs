//! Duplicate matches of `strong` against another built-in, printed as one
//! line: `cargo run --release -p croupier-bots --example strength -- GAME
//! AGAINST DEALS THINK_MS|iITERATIONS [PLAYERS] [VARIANT] [FIRST_SEED]`
//! (`STRENGTH_JSON=1`: one JSON line with every think time, for merging runs).

use croupier_bots::duplicate::pair;
use croupier_bots::strong::Budget;
use croupier_bots::Builtins;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::Variant;

fn one<G: Builtins>(args: &[String]) -> Result<(), String> {
    let against = args.get(2).map_or("random", |s| s.as_str());
    let deals: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(100);
    // `i300`: 300 iterations per decision instead of a time budget.
    let iterations: Option<u32> = args
        .get(4)
        .and_then(|s| s.strip_prefix('i'))
        .and_then(|s| s.parse().ok());
    let ms: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(100);
    let players: usize = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(2);
    let text = args.get(6).map_or("default", |s| s.as_str());
    let first_seed: u64 = args.get(7).and_then(|s| s.parse().ok()).unwrap_or(1);
    let variant = if text == "default" {
        G::Variant::default()
    } else {
        G::Variant::parse(text).map_err(|e| e.to_string())?
    };
    let l = pair::<G>(
        &variant,
        text,
        players,
        deals,
        first_seed,
        "strong",
        against,
        &iterations.map_or(Budget::think_ms(ms), Budget::iterations),
    )
    .map_err(|e| e.to_string())?;
    let m = &l.summary;
    if std::env::var_os("STRENGTH_JSON").is_some() {
        let sum: u64 = l.think_us.iter().sum();
        let over = l
            .think_us
            .iter()
            .filter(|us| **us > (ms + 20) * 1000)
            .count();
        println!(
            "{{\"game\":\"{}\",\"variant\":\"{}\",\"players\":{},\"against\":\"{}\",\"first_seed\":{first_seed},\"deals\":{},\"games\":{},\"win_rate\":{},\"mean_score\":{},\"mean_score_diff\":{},\"decisions\":{},\"think_us_sum\":{sum},\"over_budget\":{over},\"think_us\":{:?}}}",
            l.game, l.variant, l.players, l.against, l.deals, m.games, m.win_rate,
            m.mean_score, m.mean_score_diff, m.decisions, l.think_us
        );
        return Ok(());
    }
    println!(
        "{} {} ({}p, {}): strong vs {} {} deals {} games win {:.1}% ± {:.1} score diff {:+.2} think mean {:.2} ms p99 {:.2} ms max {:.2} ms",
        l.game, l.variant, l.players, l.budget, l.against, l.deals, m.games,
        m.win_rate * 100.0, m.ci95 * 100.0, m.mean_score_diff,
        m.think_ms_mean, m.think_ms_p99, m.think_ms_max
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let r = match args.get(1).map(|s| s.as_str()) {
        Some("goofspiel") => one::<Goofspiel>(&args),
        Some("skullwhist") => one::<SkullWhist>(&args),
        Some("loveletter") => one::<LoveLetter>(&args),
        _ => Err(
            "usage: strength GAME AGAINST DEALS THINK_MS|iITERATIONS [PLAYERS] [VARIANT]".into(),
        ),
    };
    if let Err(e) = r {
        eprintln!("{e}");
        std::process::exit(2);
    }
}
