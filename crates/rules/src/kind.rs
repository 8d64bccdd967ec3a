//! The names of the games Croupier knows ([`GameKind`]), below the games
//! themselves: each game names its kind, and `any` runs generic code for a
//! kind chosen at run time.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The games Croupier knows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    /// SkullWhist, 2 players.
    SkullWhist,
    /// Love Letter, 2 to 4 players.
    LoveLetter,
    /// Goofspiel (GOPS, Psychological Jujitsu), 2 players.
    Goofspiel,
}

impl GameKind {
    /// Every game.
    pub const ALL: [GameKind; 3] = [
        GameKind::SkullWhist,
        GameKind::LoveLetter,
        GameKind::Goofspiel,
    ];

    /// The name used on the command line and in records (each game's
    /// [`Game::NAME`](crate::Game::NAME) is this).
    pub const fn name(self) -> &'static str {
        match self {
            GameKind::SkullWhist => "skullwhist",
            GameKind::LoveLetter => "loveletter",
            GameKind::Goofspiel => "goofspiel",
        }
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A game name that Croupier does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown game '{0}' (known: skullwhist, loveletter, goofspiel)")]
pub struct UnknownGame(pub String);

impl FromStr for GameKind {
    type Err = UnknownGame;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s
            .trim()
            .to_ascii_lowercase()
            .replace(['-', '_', ' '], "")
            .as_str()
        {
            "skullwhist" => Ok(GameKind::SkullWhist),
            "loveletter" => Ok(GameKind::LoveLetter),
            "goofspiel" => Ok(GameKind::Goofspiel),
            _ => Err(UnknownGame(s.to_string())),
        }
    }
}
