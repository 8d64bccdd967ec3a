//! A request the 2014 API refuses, with the reason its bot is shown.

use croupier_rules::RuleError;

/// A refusal with the reason shown to the bot (`{"result": "failure",
/// "reason": ...}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl From<RuleError> for Refusal {
    fn from(e: RuleError) -> Self {
        Refusal(match e {
            RuleError::Illegal(m) | RuleError::Malformed(m) => m.into_owned(),
            RuleError::GameOver | RuleError::NoSuchSeat(_) | RuleError::NotYourTurn => {
                e.to_string()
            }
        })
    }
}

impl From<Refusal> for RuleError {
    fn from(r: Refusal) -> Self {
        RuleError::Illegal(r.0.into())
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
