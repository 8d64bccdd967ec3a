//! The ladder's settings: per game (variant, clocks, house bots, table size)
//! and overall (rest, strikes, pace), with their checks.

use std::time::Duration;

use croupier_arena::transport::process::cgroup::BotCpus;
use croupier_bots::Builtins;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::GameKind;

/// Ladder settings for one game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameLadder {
    /// The game.
    pub game: GameKind,
    /// Rules variant text (`jujitsu`, `jujitsu rounds=5,6`, ...); `None` =
    /// the game's default.
    pub variant: Option<String>,
    /// Time for each decision.
    pub move_time: Duration,
    /// Thinking time per bot per match (`None` = unlimited).
    pub budget: Option<Duration>,
    /// House strategies that play this game on the ladder.
    pub house: Vec<String>,
    /// Whether house bots play each other when no other bot is available
    /// (at most one such match at a time, `house_pause` apart).
    pub house_games: bool,
    /// Largest table (Love Letter: up to 4).
    pub max_seats: usize,
}

impl GameLadder {
    /// The defaults for `game`.
    pub fn default_for(game: GameKind) -> GameLadder {
        match game {
            GameKind::Goofspiel => GameLadder {
                game,
                variant: Some("jujitsu".into()),
                move_time: Duration::from_secs(5),
                budget: Some(Duration::from_secs(60)),
                house: vec!["random".into(), "planner".into(), "strong".into()],
                house_games: true,
                max_seats: 2,
            },
            GameKind::LoveLetter => GameLadder {
                game,
                variant: None,
                move_time: Duration::from_secs(10),
                budget: None,
                house: vec!["random".into(), "heuristic".into(), "strong".into()],
                house_games: true,
                max_seats: 4,
            },
            // House SkullWhist games are played through the REST hub.
            GameKind::SkullWhist => GameLadder {
                game,
                variant: None,
                move_time: Duration::from_secs(10),
                budget: None,
                house: vec!["random".into(), "heuristic".into(), "strong".into()],
                house_games: false,
                max_seats: 2,
            },
        }
    }
}

/// Ladder settings.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderConfig {
    /// Per game.
    pub games: Vec<GameLadder>,
    /// A bot's rest between two of its matches.
    pub rest: Duration,
    /// Pause between house-only matches of a game.
    pub house_pause: Duration,
    /// Faulty matches in a row that pause a bot.
    pub strikes: u32,
    /// How long a bot with too many strikes is paused.
    pub pause_for: Duration,
    /// Matches in progress at once, over all games.
    pub max_matches: usize,
    /// How often the ladder looks for matches to start.
    pub tick: Duration,
    /// A pull bot counts as waiting this long after its last poll.
    pub poll_grace: Duration,
    /// How long a bot waits for a busy opponent it has met less often than
    /// the available ones, before it plays whoever is there.
    pub patience: Duration,
    /// Issue 15 hook: the share of `max_matches` tournaments may use while
    /// one runs (the ladder keeps the rest; see `tournaments::Capacity`).
    pub tournament_share: f64,
    /// Issue 13 (wc): how this process keeps its place among the processes
    /// that run the ladder on one database.
    pub lease: croupier_live::lease::LeaseConfig,
    /// Issue 51: the CPU quota, in cores, of each bot program in a ladder
    /// match (hosted bots: ladder matches, people's games and validation
    /// matches), instead of the process's `--bot-cpus`; `None`: that one.
    /// It changes only the quota of programs that get a cgroup at all
    /// (which `--bot-cpus` decides at start); tournaments keep `--bot-cpus`.
    pub bot_cpus: Option<BotCpus>,
}

impl Default for LadderConfig {
    fn default() -> Self {
        LadderConfig {
            games: [
                GameKind::Goofspiel,
                GameKind::LoveLetter,
                GameKind::SkullWhist,
            ]
            .into_iter()
            .map(GameLadder::default_for)
            .collect(),
            rest: Duration::from_millis(500),
            house_pause: Duration::from_secs(3),
            strikes: 3,
            pause_for: Duration::from_secs(600),
            max_matches: 64,
            tick: Duration::from_millis(200),
            poll_grace: Duration::from_secs(3),
            patience: Duration::from_secs(3),
            tournament_share: crate::capacity::DEFAULT_SHARE,
            lease: croupier_live::lease::LeaseConfig::default(),
            bot_cpus: None,
        }
    }
}

/// The name of a house bot of `game` on the ladder. SkullWhist's are the
/// REST hub's own (`house-random`).
pub fn house_name(game: GameKind, strategy: &str) -> String {
    let strategy = crate::house::name_part(strategy);
    match game {
        GameKind::SkullWhist => format!("house-{strategy}"),
        GameKind::LoveLetter | GameKind::Goofspiel => format!("house-{strategy}-{game}"),
    }
}

/// Ladder settings that cannot run, or a house bot that cannot be
/// registered.
#[derive(Debug, thiserror::Error)]
pub enum LadderError {
    /// A move time of zero.
    #[error("ladder {0}: the move time must be positive")]
    MoveTime(GameKind),
    /// Tables the game cannot seat.
    #[error("ladder {game}: tables of {seats} seats are not possible")]
    Seats {
        /// The game.
        game: GameKind,
        /// The seats asked for.
        seats: usize,
    },
    /// A variant the game does not have.
    #[error("ladder {game}: {cause}")]
    Variant {
        /// The game.
        game: GameKind,
        /// Why the variant does not read.
        cause: croupier_rules::SetupError,
    },
    /// A house strategy the game does not have.
    #[error("ladder {game}: {cause}")]
    House {
        /// The game.
        game: GameKind,
        /// Why the strategy cannot be made.
        cause: croupier_bots::UnknownBot,
    },
    /// A house bot could not be registered.
    #[error("house bot {name}: {cause}")]
    Store {
        /// The house bot's name.
        name: String,
        /// The store's failure.
        cause: croupier_store::StoreError,
    },
}

/// Checks a game's ladder settings.
pub fn check_game(g: &GameLadder) -> Result<(), LadderError> {
    fn check<G: Builtins>(g: &GameLadder) -> Result<(), LadderError> {
        let game = g.game;
        parse_variant::<G>(g.variant.as_deref())
            .map_err(|cause| LadderError::Variant { game, cause })?;
        for s in &g.house {
            G::builtin(s).map_err(|cause| LadderError::House { game, cause })?;
        }
        Ok(())
    }
    if g.move_time.is_zero() {
        return Err(LadderError::MoveTime(g.game));
    }
    if !g.game.seats().contains(&g.max_seats) {
        return Err(LadderError::Seats {
            game: g.game,
            seats: g.max_seats,
        });
    }
    match g.game {
        GameKind::Goofspiel => check::<Goofspiel>(g),
        GameKind::LoveLetter => check::<LoveLetter>(g),
        GameKind::SkullWhist => check::<SkullWhist>(g),
    }
}
