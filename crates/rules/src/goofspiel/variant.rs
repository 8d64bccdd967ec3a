//! Goofspiel rules variants and the named presets `jujitsu` and `gops`.

use serde::{Deserialize, Serialize};

use crate::core::{SetupError, Variant};

/// Most cards a round may use (hands are kept as bit masks).
pub const MAX_CARDS: u8 = 31;
/// Most rounds a match may have.
pub const MAX_ROUNDS: usize = 100;

/// What happens to the lot when both bids are equal.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TieRule {
    /// The lot stays and accumulates (Psychological Jujitsu).
    Carry,
    /// The victory card is discarded (the GOPS quiz).
    Discard,
}

/// A Goofspiel variant: round sizes, tie rule, next-card preview.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoofspielVariant {
    /// Cards per round; one entry per round.
    pub rounds: Vec<u8>,
    /// What a tie does to the lot.
    pub ties: TieRule,
    /// Whether the next victory card is shown.
    pub preview: bool,
}

impl GoofspielVariant {
    /// Psychological Jujitsu: ties carry, next card shown, the given rounds.
    pub fn jujitsu(rounds: Vec<u8>) -> Self {
        GoofspielVariant {
            rounds,
            ties: TieRule::Carry,
            preview: true,
        }
    }

    /// The GOPS quiz: 13 cards, one round, ties discard, no preview.
    pub fn gops() -> Self {
        GoofspielVariant {
            rounds: vec![13],
            ties: TieRule::Discard,
            preview: false,
        }
    }

    /// Checks the limits: at least one round, 3..=31 cards per round.
    pub fn validate(&self) -> Result<(), SetupError> {
        if self.rounds.is_empty() || self.rounds.len() > MAX_ROUNDS {
            return Err(SetupError::Variant(format!(
                "a match needs 1 to {MAX_ROUNDS} rounds, not {}",
                self.rounds.len()
            )));
        }
        if let Some(n) = self.rounds.iter().find(|n| !(3..=MAX_CARDS).contains(*n)) {
            return Err(SetupError::Variant(format!(
                "a round needs 3 to {MAX_CARDS} cards, not {n}"
            )));
        }
        Ok(())
    }
}

impl Default for GoofspielVariant {
    fn default() -> Self {
        Self::gops()
    }
}

impl Variant for GoofspielVariant {
    /// `gops`, `jujitsu`, either followed by `key=value` overrides separated by
    /// spaces (`jujitsu rounds=5,6,7,8 ties=discard preview=off`), or a JSON
    /// object with every field.
    fn parse(text: &str) -> Result<Self, SetupError> {
        let text = text.trim();
        if text.starts_with('{') {
            let v: GoofspielVariant =
                serde_json::from_str(text).map_err(|e| SetupError::Variant(e.to_string()))?;
            v.validate()?;
            return Ok(v);
        }
        let mut words = text.split_whitespace();
        let mut v = match words.next() {
            Some("gops") => Self::gops(),
            Some("jujitsu") => Self::jujitsu(vec![13]),
            Some(other) => {
                return Err(SetupError::Variant(format!(
                    "unknown goofspiel preset '{other}' (expected gops or jujitsu)"
                )))
            }
            None => Self::default(),
        };
        for word in words {
            let (key, value) = word
                .split_once('=')
                .ok_or_else(|| SetupError::Variant(format!("expected key=value, got '{word}'")))?;
            match key {
                "rounds" => {
                    v.rounds = value
                        .split(',')
                        .map(|n| n.trim().parse::<u8>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| {
                            SetupError::Variant(format!("rounds must be numbers, got '{value}'"))
                        })?
                }
                "ties" => {
                    v.ties = match value {
                        "carry" => TieRule::Carry,
                        "discard" => TieRule::Discard,
                        _ => {
                            return Err(SetupError::Variant(format!(
                                "ties must be carry or discard, got '{value}'"
                            )))
                        }
                    }
                }
                "preview" => {
                    v.preview = match value {
                        "on" | "true" | "yes" => true,
                        "off" | "false" | "no" => false,
                        _ => {
                            return Err(SetupError::Variant(format!(
                                "preview must be on or off, got '{value}'"
                            )))
                        }
                    }
                }
                _ => {
                    return Err(SetupError::Variant(format!(
                        "unknown goofspiel option '{key}' (rounds, ties, preview)"
                    )))
                }
            }
        }
        v.validate()?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_to_their_documented_rules() {
        assert_eq!(
            GoofspielVariant::parse("gops").unwrap(),
            GoofspielVariant::gops()
        );
        let j = GoofspielVariant::parse("jujitsu").unwrap();
        assert_eq!(j.rounds, vec![13]);
        assert_eq!(j.ties, TieRule::Carry);
        assert!(j.preview);
    }

    #[test]
    fn overrides_change_only_their_field() {
        let v = GoofspielVariant::parse("jujitsu rounds=5,6,7,8 preview=off").unwrap();
        assert_eq!(v.rounds, vec![5, 6, 7, 8]);
        assert!(!v.preview);
        assert_eq!(v.ties, TieRule::Carry);
    }

    #[test]
    fn bad_variants_are_refused_with_a_reason() {
        for bad in [
            "poker",
            "gops rounds=2",
            "gops rounds=",
            "gops ties=maybe",
            "gops x=1",
            "gops rounds=40",
            "{}",
        ] {
            assert!(GoofspielVariant::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn json_variant_round_trips() {
        let v = GoofspielVariant::jujitsu(vec![5, 6]);
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(GoofspielVariant::parse(&text).unwrap(), v);
    }
}
