//! The dialects Croupier speaks, by name ([`DialectKind`]), and which
//! games each carries.

use std::fmt;
use std::str::FromStr;

use croupier_rules::GameKind;

/// The dialects Croupier speaks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DialectKind {
    /// JSON lines, every game.
    Croupier,
    /// The GOPS quiz's text lines.
    Gops,
    /// The Love Letter manager's text lines.
    LoveLetter,
    /// The later "postman" revision of the Love Letter manager.
    LoveLetterPostman,
    /// Psychological Jujitsu's JSON documents (HTTP push bots).
    Jujitsu,
    /// The SkullWhist REST API of 2014, spoken by the server itself to the
    /// bots that call it (not offered for programs: not in [`DialectKind::ALL`]).
    SkullWhistRest,
}

impl DialectKind {
    /// Every dialect.
    pub const ALL: [DialectKind; 5] = [
        DialectKind::Croupier,
        DialectKind::Gops,
        DialectKind::LoveLetter,
        DialectKind::LoveLetterPostman,
        DialectKind::Jujitsu,
    ];

    /// The dialect's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DialectKind::Croupier => "croupier",
            DialectKind::Gops => "gops",
            DialectKind::LoveLetter => "loveletter",
            DialectKind::LoveLetterPostman => "loveletter-postman",
            DialectKind::Jujitsu => "jujitsu",
            DialectKind::SkullWhistRest => "skullwhist-rest",
        }
    }

    /// Whether this dialect can carry `game`.
    pub fn supports(self, game: GameKind) -> bool {
        match self {
            DialectKind::Croupier => true,
            DialectKind::Gops | DialectKind::Jujitsu => game == GameKind::Goofspiel,
            DialectKind::LoveLetter | DialectKind::LoveLetterPostman => {
                game == GameKind::LoveLetter
            }
            DialectKind::SkullWhistRest => game == GameKind::SkullWhist,
        }
    }

    /// Whether this dialect is spoken over HTTP only (one request per
    /// decision) rather than as lines over a byte stream.
    pub fn http_only(self) -> bool {
        matches!(self, DialectKind::Jujitsu | DialectKind::SkullWhistRest)
    }

    /// The dialect an HTTP bot of `game` speaks unless told otherwise:
    /// Psychological Jujitsu documents for Goofspiel, Croupier JSON otherwise.
    pub fn default_for_http(game: GameKind) -> DialectKind {
        match game {
            GameKind::Goofspiel => DialectKind::Jujitsu,
            GameKind::LoveLetter | GameKind::SkullWhist => DialectKind::Croupier,
        }
    }

    /// The dialect a bot of `game` speaks unless told otherwise: Love Letter
    /// bots speak the manager's protocol, GOPS-variant Goofspiel bots the
    /// quiz runner's, everything else Croupier JSON.
    pub fn default_for(game: GameKind, gops_variant: bool) -> DialectKind {
        match game {
            GameKind::LoveLetter => DialectKind::LoveLetter,
            GameKind::Goofspiel if gops_variant => DialectKind::Gops,
            GameKind::Goofspiel | GameKind::SkullWhist => DialectKind::Croupier,
        }
    }
}

impl fmt::Display for DialectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dialect name Croupier does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect '{0}' (known: croupier, gops, loveletter, loveletter-postman, jujitsu)")]
pub struct UnknownDialect(pub String);

impl FromStr for DialectKind {
    type Err = UnknownDialect;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DialectKind::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownDialect(s.to_string()))
    }
}
