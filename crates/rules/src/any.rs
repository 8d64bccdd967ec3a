//! Choosing a game at run time: [`GameKind`] (in `kind`) names a game, and
//! [`GameVisitor`] lets generic code run for whichever game was named.

use crate::core::Game;
use crate::goofspiel::Goofspiel;
use crate::kind::GameKind;
use crate::loveletter::LoveLetter;
use crate::skullwhist::SkullWhist;

impl GameKind {
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
