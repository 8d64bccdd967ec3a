//! Choosing a game at run time: [`GameKind`] names a game, and
//! [`GameVisitor`] lets generic code run for whichever game was named.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::core::Game;
use crate::goofspiel::Goofspiel;
use crate::loveletter::LoveLetter;
use crate::skullwhist::SkullWhist;

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

    /// The name used on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            GameKind::SkullWhist => SkullWhist::NAME,
            GameKind::LoveLetter => LoveLetter::NAME,
            GameKind::Goofspiel => Goofspiel::NAME,
        }
    }

    /// How many seats a table of this game may have.
    pub fn seats(self) -> std::ops::RangeInclusive<usize> {
        match self {
            GameKind::SkullWhist => 2..=2,
            GameKind::LoveLetter => 2..=crate::loveletter::MAX_SEATS,
            GameKind::Goofspiel => 2..=2,
        }
    }

    /// Runs generic code for this game.
    pub fn visit<V: GameVisitor>(self, visitor: V) -> V::Output {
        match self {
            GameKind::SkullWhist => visitor.visit::<SkullWhist>(),
            GameKind::LoveLetter => visitor.visit::<LoveLetter>(),
            GameKind::Goofspiel => visitor.visit::<Goofspiel>(),
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

/// Generic code to run for a game chosen at run time (see [`GameKind::visit`]).
pub trait GameVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the chosen game's type.
    fn visit<G: Game>(self) -> Self::Output;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_names_round_trip() {
        for k in GameKind::ALL {
            assert_eq!(k.name().parse::<GameKind>(), Ok(k));
        }
        assert_eq!("Love-Letter".parse::<GameKind>(), Ok(GameKind::LoveLetter));
        assert!("chess".parse::<GameKind>().is_err());
    }

    #[test]
    fn visit_reaches_the_named_game() {
        struct Name;
        impl GameVisitor for Name {
            type Output = &'static str;
            fn visit<G: Game>(self) -> &'static str {
                G::NAME
            }
        }
        for k in GameKind::ALL {
            assert_eq!(k.visit(Name), k.name());
        }
    }
}
