//! The Love Letter rules variants: the competition's seed rules
//! (`standard`) and those of its later manager, Postman (`postman`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::core::{SetupError, Variant};

/// Round wins needed to win the match.
pub const WINS_NEEDED: u8 = 4;

/// Which manager's rules a game follows.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rules {
    /// The rules of the competition's README (seed 001), as SPEC §1.2 reads
    /// them.
    #[default]
    Standard,
    /// The rules the competition's later manager, Postman, enforces: the
    /// Minister is checked only when it is drawn (above 12), a Princess
    /// discarded by a Wizard does not put her holder out, a Wizard's target
    /// is out when the deck is empty, a targeting card always names a target
    /// (aimed at a protected or out player, or at oneself, it has no effect),
    /// the Soldier may name the Soldier, ties go to the lowest seat, and
    /// every round's first player is drawn at random.
    Postman,
}

impl Rules {
    /// The name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Rules::Standard => "standard",
            Rules::Postman => "postman",
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The Love Letter variant: which rules, first to [`WINS_NEEDED`] round
/// wins. Serialised as `{}` for the standard rules (as in every record made
/// before the Postman rules existed) and `{"rules":"postman"}` otherwise.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoveLetterVariant {
    /// Which manager's rules.
    #[serde(default, skip_serializing_if = "is_standard")]
    pub rules: Rules,
    /// Rules version 1 (records made before version 2): a card aimed at a
    /// protected player is refused rather than played without effect. Set
    /// only to replay such records; never serialised (the record's
    /// `rules_version` says it).
    #[serde(skip)]
    pub(super) refuse_protected: bool,
}

fn is_standard(rules: &Rules) -> bool {
    *rules == Rules::Standard
}

impl LoveLetterVariant {
    /// The standard (seed) rules.
    pub fn standard() -> Self {
        Self::default()
    }

    /// Postman's rules.
    pub fn postman() -> Self {
        LoveLetterVariant {
            rules: Rules::Postman,
            refuse_protected: false,
        }
    }

    /// The standard rules as rules version 1 applied them (a card aimed at
    /// a protected player refused), to replay records of that version.
    pub(super) fn standard_v1() -> Self {
        LoveLetterVariant {
            rules: Rules::Standard,
            refuse_protected: true,
        }
    }

    /// Round wins needed to win the match.
    pub fn wins_needed(&self) -> u8 {
        WINS_NEEDED
    }

    /// Whether these are Postman's rules.
    pub fn is_postman(&self) -> bool {
        self.rules == Rules::Postman
    }
}

impl Variant for LoveLetterVariant {
    /// Accepts the empty string, `standard` (or `classic`), `postman`, or
    /// the JSON form (`{}`, `{"rules":"postman"}`).
    fn parse(text: &str) -> Result<Self, SetupError> {
        let text = text.trim();
        if text.starts_with('{') {
            return serde_json::from_str(text)
                .map_err(|e| SetupError::Variant(format!("bad love letter variant: {e}")));
        }
        match text.to_ascii_lowercase().as_str() {
            "" | "standard" | "classic" => Ok(LoveLetterVariant::standard()),
            "postman" => Ok(LoveLetterVariant::postman()),
            _ => Err(SetupError::Variant(format!(
                "love letter has the 'standard' and 'postman' variants, not '{text}'"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_and_postman_parse_by_name_and_as_json() {
        for text in [
            "",
            " Standard ",
            "classic",
            "{}",
            "{\"rules\":\"standard\"}",
        ] {
            assert_eq!(
                LoveLetterVariant::parse(text),
                Ok(LoveLetterVariant::standard()),
                "{text}"
            );
        }
        for text in ["postman", "POSTMAN", "{\"rules\":\"postman\"}"] {
            assert_eq!(
                LoveLetterVariant::parse(text),
                Ok(LoveLetterVariant::postman()),
                "{text}"
            );
        }
        for bad in [
            "premium",
            "standard wins=5",
            "{\"wins\":5}",
            "[]",
            "{\"rules\":\"x\"}",
        ] {
            assert!(
                matches!(LoveLetterVariant::parse(bad), Err(SetupError::Variant(_))),
                "{bad} accepted"
            );
        }
    }

    #[test]
    fn standard_serialises_as_an_empty_object_and_postman_names_its_rules() {
        let text = serde_json::to_string(&LoveLetterVariant::standard()).expect("serialises");
        assert_eq!(text, "{}");
        assert_eq!(
            LoveLetterVariant::parse(&text),
            Ok(LoveLetterVariant::standard())
        );
        let text = serde_json::to_string(&LoveLetterVariant::postman()).expect("serialises");
        assert_eq!(text, "{\"rules\":\"postman\"}");
        assert_eq!(
            LoveLetterVariant::parse(&text),
            Ok(LoveLetterVariant::postman())
        );
    }

    #[test]
    fn the_version_1_reading_is_never_written() {
        let text = serde_json::to_string(&LoveLetterVariant::standard_v1()).expect("serialises");
        assert_eq!(text, "{}");
    }
}
