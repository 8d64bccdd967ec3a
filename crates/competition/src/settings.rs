//! The ladder's settings file (TOML), for `croupier serve --ladder FILE`.
//!
//! ```toml
//! rest = "500ms"          # a bot's rest between two of its matches
//! house_pause = "3s"      # between house-only matches of a game
//! strikes = 3             # faulty matches in a row that pause a bot
//! pause = "10m"           # how long such a bot is paused
//! max_matches = 64        # ladder matches in progress at once
//! tournament_share = 0.75 # of max_matches, tournaments' while one runs
//! bot_cpus = 0.5          # CPU cores of each bot program in a ladder match
//!                         # (its cgroup's quota; default: --bot-cpus)
//!
//! [goofspiel]
//! variant = "jujitsu rounds=5,6,7,8"
//! move_time = "5s"
//! budget = "60s"          # thinking time per bot per match, or "unlimited"
//! house = ["random", "planner", "strong?think-ms=200"]  # built-ins (default: all)
//! house_games = true      # house bots play each other when nobody else does
//!
//! [loveletter]
//! max_seats = 4
//!
//! [skullwhist]
//! enabled = false         # no ladder for this game
//! ```
//!
//! Every key is optional; a game not named keeps its defaults.

use std::time::Duration;

use croupier_arena::transport::process::cgroup::BotCpus;
use croupier_rules::GameKind;
use serde::Deserialize;

use crate::ladder::{check_game, GameLadder, LadderConfig, LadderError};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct File {
    rest: Option<String>,
    house_pause: Option<String>,
    strikes: Option<u32>,
    pause: Option<String>,
    max_matches: Option<usize>,
    tournament_share: Option<f64>,
    bot_cpus: Option<f64>,
    goofspiel: Option<GameSection>,
    loveletter: Option<GameSection>,
    skullwhist: Option<GameSection>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct GameSection {
    enabled: Option<bool>,
    variant: Option<String>,
    move_time: Option<String>,
    budget: Option<String>,
    house: Option<Vec<String>>,
    house_games: Option<bool>,
    max_seats: Option<usize>,
}

/// Ladder settings that do not read or cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// Not TOML, or keys the file may not have.
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
    /// A duration that does not read.
    #[error("{key} = \"{text}\": {cause} (write e.g. \"500ms\", \"5s\", \"10m\")")]
    Duration {
        /// The key.
        key: String,
        /// Its value.
        text: String,
        /// Why it does not read.
        cause: humantime::DurationError,
    },
    /// A count that must be positive.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// A share of the matches outside its range.
    #[error("tournament_share = {0}: between 0.05 and 1")]
    Share(f64),
    /// A CPU quota that is not one.
    #[error("bot_cpus = {0}: a number of CPU cores above 0 and at most 1024, such as 1 or 0.5")]
    BotCpus(f64),
    /// A game's settings that cannot run.
    #[error(transparent)]
    Ladder(#[from] LadderError),
}

fn duration(key: &str, text: &str) -> Result<Duration, SettingsError> {
    humantime::parse_duration(text.trim()).map_err(|cause| SettingsError::Duration {
        key: key.to_string(),
        text: text.to_string(),
        cause,
    })
}

/// Reads ladder settings from TOML text.
pub fn parse_ladder(text: &str) -> Result<LadderConfig, SettingsError> {
    let file: File = toml::from_str(text)?;
    let mut config = LadderConfig::default();
    if let Some(v) = &file.rest {
        config.rest = duration("rest", v)?;
    }
    if let Some(v) = &file.house_pause {
        config.house_pause = duration("house_pause", v)?;
    }
    if let Some(v) = &file.pause {
        config.pause_for = duration("pause", v)?;
    }
    if let Some(v) = file.strikes {
        if v == 0 {
            return Err(SettingsError::Zero("strikes"));
        }
        config.strikes = v;
    }
    if let Some(v) = file.max_matches {
        if v == 0 {
            return Err(SettingsError::Zero("max_matches"));
        }
        config.max_matches = v;
    }
    if let Some(v) = file.tournament_share {
        if !(0.05..=1.0).contains(&v) {
            return Err(SettingsError::Share(v));
        }
        config.tournament_share = v;
    }
    if let Some(v) = file.bot_cpus {
        config.bot_cpus = Some(BotCpus::new(v).map_err(|_| SettingsError::BotCpus(v))?);
    }
    let sections = [
        (GameKind::Goofspiel, file.goofspiel),
        (GameKind::LoveLetter, file.loveletter),
        (GameKind::SkullWhist, file.skullwhist),
    ];
    config.games.clear();
    for (game, section) in sections {
        let s = section.unwrap_or_default();
        if s.enabled == Some(false) {
            continue;
        }
        let mut g = GameLadder::default_for(game);
        let key = |k: &str| format!("{game}.{k}");
        if let Some(v) = s.variant {
            g.variant = Some(v);
        }
        if let Some(v) = &s.move_time {
            g.move_time = duration(&key("move_time"), v)?;
        }
        if let Some(v) = &s.budget {
            g.budget = if v.trim() == "unlimited" {
                None
            } else {
                Some(duration(&key("budget"), v)?)
            };
        }
        if let Some(v) = s.house {
            g.house = v;
        }
        if let Some(v) = s.house_games {
            g.house_games = v;
        }
        if let Some(v) = s.max_seats {
            g.max_seats = v;
        }
        check_game(&g)?;
        config.games.push(g);
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_keeps_the_defaults() {
        assert_eq!(parse_ladder("").unwrap(), LadderConfig::default());
    }

    #[test]
    fn settings_are_read_per_game() {
        let c = parse_ladder(
            r#"
            strikes = 2
            pause = "1m"
            [goofspiel]
            variant = "jujitsu rounds=5,6"
            budget = "unlimited"
            move_time = "750ms"
            [skullwhist]
            enabled = false
            [loveletter]
            max_seats = 3
            house = ["heuristic", "strong?think-ms=50"]
            "#,
        )
        .unwrap();
        assert_eq!((c.strikes, c.pause_for), (2, Duration::from_secs(60)));
        let games: Vec<GameKind> = c.games.iter().map(|g| g.game).collect();
        assert_eq!(games, vec![GameKind::Goofspiel, GameKind::LoveLetter]);
        let g = &c.games[0];
        assert_eq!(g.variant.as_deref(), Some("jujitsu rounds=5,6"));
        assert_eq!((g.budget, g.move_time), (None, Duration::from_millis(750)));
        assert_eq!(c.games[1].max_seats, 3);
        assert_eq!(c.games[1].house, vec!["heuristic", "strong?think-ms=50"]);
        // The default house sets include the strong built-in.
        assert!(c.games[0].house.contains(&"strong".to_string()));
    }

    #[test]
    fn the_ladder_may_give_bot_programs_their_own_cpu_quota() {
        assert_eq!(parse_ladder("").unwrap().bot_cpus, None);
        let half = parse_ladder("bot_cpus = 0.5").unwrap().bot_cpus;
        assert_eq!(half.map(BotCpus::cores), Some(0.5));
        // A whole number of cores reads as well.
        let two = parse_ladder("bot_cpus = 2").unwrap().bot_cpus;
        assert_eq!(two.map(BotCpus::cores), Some(2.0));
        for bad in [
            "bot_cpus = 0",
            "bot_cpus = -1",
            "bot_cpus = 2000",
            "bot_cpus = nan",
        ] {
            let e = parse_ladder(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("bot_cpus = ") && e.contains("above 0 and at most 1024"),
                "{bad}: {e}"
            );
        }
        let e = parse_ladder("bot_cpus = \"one\"").unwrap_err().to_string();
        assert!(e.contains("bot_cpus"), "{e}");
    }

    #[test]
    fn bad_settings_say_what_is_wrong() {
        for (text, needle) in [
            ("[goofspiel]\nmove_time = \"soon\"", "goofspiel.move_time"),
            ("[goofspiel]\nvariant = \"rounds=1\"", "goofspiel"),
            ("[loveletter]\nmax_seats = 5", "5 seats"),
            ("[goofspiel]\nhouse = [\"genius\"]", "genius"),
            (
                "[goofspiel]\nhouse = [\"strong?depth=3\"]",
                "unknown option 'depth'",
            ),
            (
                "[goofspiel]\nhouse = [\"planner?threads=2\"]",
                "takes no options",
            ),
            ("[chess]\n", "chess"),
            ("strikes = 0", "strikes"),
            ("rest = 5", "rest"),
        ] {
            let e = parse_ladder(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
