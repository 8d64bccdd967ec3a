//! The Love Letter rules variant: only the standard rules for now.

use serde::{Deserialize, Serialize};

use crate::core::{SetupError, Variant};

/// Round wins needed to win the match.
pub const WINS_NEEDED: u8 = 4;

/// The Love Letter variant. There are no options yet: the standard rules of
/// SPEC §1.2 (first to [`WINS_NEEDED`] round wins). Serialised as `{}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoveLetterVariant {}

impl LoveLetterVariant {
    /// Round wins needed to win the match.
    pub fn wins_needed(&self) -> u8 {
        WINS_NEEDED
    }
}

impl Variant for LoveLetterVariant {
    /// Accepts the empty string, `standard` or the JSON `{}`.
    fn parse(text: &str) -> Result<Self, SetupError> {
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("standard") {
            return Ok(LoveLetterVariant {});
        }
        if text.starts_with('{') {
            return serde_json::from_str(text).map_err(|e| {
                SetupError::Variant(format!("love letter has no variant options yet: {e}"))
            });
        }
        Err(SetupError::Variant(format!(
            "love letter has only the 'standard' variant, not '{text}'"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_standard_variant_parses() {
        assert_eq!(LoveLetterVariant::parse(""), Ok(LoveLetterVariant {}));
        assert_eq!(
            LoveLetterVariant::parse(" Standard "),
            Ok(LoveLetterVariant {})
        );
        assert_eq!(LoveLetterVariant::parse("{}"), Ok(LoveLetterVariant {}));
        for bad in ["premium", "standard wins=5", "{\"wins\":5}", "[]"] {
            assert!(
                matches!(LoveLetterVariant::parse(bad), Err(SetupError::Variant(_))),
                "{bad} accepted"
            );
        }
    }

    #[test]
    fn variant_serialises_as_an_empty_object() {
        let text = serde_json::to_string(&LoveLetterVariant::default()).expect("serialises");
        assert_eq!(text, "{}");
        assert_eq!(LoveLetterVariant::parse(&text), Ok(LoveLetterVariant {}));
    }
}
