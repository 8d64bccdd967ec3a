//! `croupier bot`: a built-in strategy as a bot program of any dialect, over
//! stdin/stdout, so it can be entered into other managers (and ours).

use std::io::{BufRead, Read};
use std::process::ExitCode;

use clap::Args;
use croupier_arena::bot_side::{self, ClientOptions};
use croupier_bots::Builtins;
use croupier_dialects::loveletter::Style;
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::GameKind;

use crate::error::CliError;

/// Arguments of `croupier bot`.
#[derive(Debug, Args)]
pub struct BotArgs {
    /// The built-in strategy (random, planner, heuristic, strong), with
    /// options if any (`strong?think-ms=50`).
    strategy: String,
    /// Thinking time per decision of `strong`, in milliseconds (default 100).
    #[arg(long, value_name = "MS")]
    think_ms: Option<u64>,
    /// A fixed number of samples per decision of `strong` instead of a time
    /// budget: with --seed, its choices are fully deterministic.
    #[arg(long, value_name = "N")]
    iterations: Option<u32>,
    /// Threads the search of `strong` may use (default 1).
    #[arg(long, value_name = "N")]
    threads: Option<u32>,
    /// The dialect to speak: croupier, gops, loveletter, loveletter-postman,
    /// or jujitsu (with --serve).
    #[arg(long, default_value = "croupier")]
    dialect: String,
    /// The game; implied by the gops and loveletter dialects, and read from
    /// the start message in the croupier dialect.
    #[arg(long)]
    game: Option<String>,
    /// Rules variant (the gops dialect uses its number of cards; a Love
    /// Letter AI follows `standard` or `postman`, by default the rules of
    /// the manager its dialect names).
    #[arg(long)]
    variant: Option<String>,
    /// Number of players (needed by the loveletter dialect, which does not say).
    #[arg(long)]
    players: Option<usize>,
    /// Seed of the strategy's random choices.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Play SkullWhist on a server through its REST API instead of stdin/stdout.
    #[arg(long, value_name = "URL")]
    connect: Option<String>,
    /// Bot name on the server (registered on first use; default: croupier-STRATEGY).
    #[arg(long, requires = "connect")]
    name: Option<String>,
    /// Password on the server.
    #[arg(long, requires = "connect", default_value = "croupier")]
    password: String,
    /// Games to play on the server (default: until stopped).
    #[arg(long, requires = "connect")]
    games: Option<u64>,
    /// Serve as an HTTP bot on this address (`127.0.0.1:8001`, `:8001`), in
    /// the jujitsu or croupier dialect.
    #[arg(long, value_name = "ADDR", conflicts_with = "connect")]
    serve: Option<String>,
    /// Basic-auth credentials (`USER:PASSWORD`) that requests to --serve
    /// must carry.
    #[arg(long, value_name = "USER:PASSWORD", requires = "serve")]
    auth: Option<String>,
}

/// Runs `croupier bot` on stdin/stdout.
pub fn run(mut args: BotArgs) -> Result<ExitCode, CliError> {
    args.strategy = with_budget(&args.strategy, args.think_ms, args.iterations, args.threads);
    if let Some(url) = &args.connect {
        return connect(&args, url);
    }
    let dialect: DialectKind = args
        .dialect
        .parse()
        .map_err(|e| CliError::Usage(format!("{e}")))?;
    if let Some(addr) = &args.serve {
        let game = args
            .game
            .as_deref()
            .map(str::parse::<GameKind>)
            .transpose()
            .map_err(|e| CliError::Usage(format!("{e}")))?;
        return crate::bot_serve::run(crate::bot_serve::ServeOptions {
            addr: addr.clone(),
            strategy: args.strategy.clone(),
            dialect,
            game,
            seed: args.seed,
            auth: args.auth.clone(),
        });
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut first = String::new();
    let game: GameKind = match (&args.game, dialect) {
        (Some(g), _) => g.parse().map_err(|e| CliError::Usage(format!("{e}")))?,
        (_, DialectKind::Jujitsu) => {
            return Err(CliError::Usage(
                "the jujitsu dialect is spoken over HTTP: add --serve ADDR".into(),
            ))
        }
        (_, DialectKind::SkullWhistRest) => {
            return Err(CliError::Usage(
                "the skullwhist-rest dialect is the server's own (the 2014 REST API)".into(),
            ))
        }
        (None, DialectKind::Gops) => GameKind::Goofspiel,
        (None, DialectKind::LoveLetter | DialectKind::LoveLetterPostman) => GameKind::LoveLetter,
        (None, DialectKind::Croupier) => {
            // The start message names the game.
            input
                .read_line(&mut first)
                .map_err(|e| CliError::Failed(e.into()))?;
            let v: serde_json::Value = serde_json::from_str(&first).map_err(|e| {
                CliError::Failed(anyhow::anyhow!(
                    "the first line is not a start message: {e}"
                ))
            })?;
            v["game"]
                .as_str()
                .ok_or_else(|| {
                    CliError::Failed(anyhow::anyhow!("the start message names no game"))
                })?
                .parse()
                .map_err(|e| CliError::Failed(anyhow::anyhow!("{e}")))?
        }
    };
    if !dialect.supports(game) {
        return Err(CliError::Usage(format!(
            "the {dialect} dialect cannot play {game}"
        )));
    }
    let input = std::io::Cursor::new(first.into_bytes()).chain(input);
    let output = std::io::stdout().lock();
    let mut opts = ClientOptions {
        seed: args.seed,
        players: args.players,
        goofspiel_cards: 13,
    };
    let result = match game {
        GameKind::SkullWhist => bot_side::run_croupier::<SkullWhist>(
            strategy::<SkullWhist>(&args.strategy)?,
            &opts,
            input,
            output,
        ),
        GameKind::LoveLetter => {
            let s = strategy::<LoveLetter>(&args.strategy)?;
            // The manager's rules: --variant, or those of the protocol.
            let rules = |style: Style| match &args.variant {
                Some(v) => parse_variant::<LoveLetter>(Some(v))
                    .map_err(|e| CliError::Usage(format!("loveletter: {e}"))),
                None => Ok(bot_side::default_rules(style)),
            };
            match dialect {
                DialectKind::LoveLetter => {
                    let v = rules(Style::Classic)?;
                    bot_side::run_loveletter(s, Style::Classic, &v, &opts, input, output)
                }
                DialectKind::LoveLetterPostman => {
                    let v = rules(Style::Postman)?;
                    bot_side::run_loveletter(s, Style::Postman, &v, &opts, input, output)
                }
                DialectKind::Croupier
                | DialectKind::Gops
                | DialectKind::Jujitsu
                | DialectKind::SkullWhistRest => {
                    bot_side::run_croupier::<LoveLetter>(s, &opts, input, output)
                }
            }
        }
        GameKind::Goofspiel => {
            let s = strategy::<Goofspiel>(&args.strategy)?;
            match dialect {
                DialectKind::Gops => {
                    let v: GoofspielVariant = parse_variant::<Goofspiel>(args.variant.as_deref())
                        .map_err(|e| CliError::Usage(e.to_string()))?;
                    opts.goofspiel_cards = v.rounds.first().copied().unwrap_or(13);
                    bot_side::run_gops(s, &opts, input, output)
                }
                DialectKind::Croupier
                | DialectKind::Jujitsu
                | DialectKind::LoveLetter
                | DialectKind::LoveLetterPostman
                | DialectKind::SkullWhistRest => {
                    bot_side::run_croupier::<Goofspiel>(s, &opts, input, output)
                }
            }
        }
    };
    result.map_err(|e| CliError::Failed(e.into()))?;
    Ok(ExitCode::SUCCESS)
}

/// The strategy spec with the budget flags added as options
/// (`strong` + `--think-ms 50` → `strong?think-ms=50`); options already in
/// the spec come first, so a flag given twice is refused by the parser.
pub fn with_budget(
    spec: &str,
    think_ms: Option<u64>,
    iterations: Option<u32>,
    threads: Option<u32>,
) -> String {
    let mut options: Vec<String> = vec![];
    if let Some(ms) = think_ms {
        options.push(format!("think-ms={ms}"));
    }
    if let Some(n) = iterations {
        options.push(format!("iterations={n}"));
    }
    if let Some(n) = threads {
        options.push(format!("threads={n}"));
    }
    if options.is_empty() {
        return spec.to_string();
    }
    // `builtin:NAME@DIALECT` keeps its dialect last.
    let (body, dialect) = match spec.rsplit_once('@') {
        Some((b, d)) if spec.starts_with("builtin:") => (b, format!("@{d}")),
        _ => (spec, String::new()),
    };
    let sep = if body.contains('?') { '&' } else { '?' };
    format!("{body}{sep}{}{dialect}", options.join("&"))
}

fn strategy<G: Builtins>(name: &str) -> Result<Box<dyn croupier_bots::Strategy<G>>, CliError> {
    G::builtin(name).map_err(|e| CliError::Usage(e.to_string()))
}

/// `croupier bot STRATEGY --connect URL`: plays through the REST API.
fn connect(args: &BotArgs, url: &str) -> Result<ExitCode, CliError> {
    if args.game.as_deref().is_some_and(|g| g != "skullwhist") {
        return Err(CliError::Usage("--connect plays skullwhist only".into()));
    }
    let strategy = strategy::<SkullWhist>(&args.strategy)?;
    let opts = croupier_arena::bot_side::skullwhist_rest::RestOptions {
        url: url.to_string(),
        name: args.name.clone().unwrap_or_else(|| {
            let (name, _) = croupier_bots::split_options(&args.strategy);
            format!("croupier-{name}")
        }),
        password: args.password.clone(),
        games: args.games,
        seed: args.seed,
    };
    let summary = croupier_arena::bot_side::skullwhist_rest::play_rest(strategy, &opts, |line| {
        eprintln!("{line}")
    })
    .map_err(|e| CliError::Failed(e.into()))?;
    println!("{summary}");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::with_budget;

    #[test]
    fn budget_flags_become_options() {
        assert_eq!(with_budget("strong", None, None, None), "strong");
        assert_eq!(
            with_budget("strong", Some(50), None, Some(2)),
            "strong?think-ms=50&threads=2"
        );
        assert_eq!(
            with_budget("strong?threads=2", None, Some(300), None),
            "strong?threads=2&iterations=300"
        );
        assert_eq!(
            with_budget("builtin:strong@gops", Some(20), None, None),
            "builtin:strong?think-ms=20@gops"
        );
    }
}
