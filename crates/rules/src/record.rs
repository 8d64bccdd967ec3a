//! Game records: everything needed to replay a game exactly, and the replay
//! that checks a record against the rules.
//!
//! A record is JSON:
//!
//! ```json
//! {
//!   "format": "croupier-record/1",
//!   "game": "goofspiel", "rules_version": 1,
//!   "variant": {"rounds": [13], "ties": "discard", "preview": false},
//!   "seed": 7,
//!   "seats": [{"name": "builtin:planner"}, {"name": "builtin:random"}],
//!   "steps": [{"seat": 0, "action": "13", "ms": 0.004, "cpu_ms": 0.003}, ...],
//!   "outcome": {"scores": [50, 41], "ranks": [1, 2]}
//! }
//! ```
//!
//! A step is either an `action` in the game's text form or a `forfeit`
//! ruling, with the thinking time and any fault that led to it.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::core::{Game, Outcome, RuleError, Seat, SetupError, Variant};

/// The value of the `format` field.
pub const RECORD_FORMAT: &str = "croupier-record/1";

/// A seat of a recorded game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatInfo {
    /// The bot's name (`builtin:planner`, a program, a registered bot).
    pub name: String,
    /// The bot's version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The dialect the bot spoke, when not in-process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
}

impl SeatInfo {
    /// Whether the seat was an in-process built-in strategy (its decisions
    /// are not timed): every seat reached over a transport (a program,
    /// HTTP) records its dialect, and the SkullWhist REST hub names its
    /// seats `bot:{id}`.
    pub fn in_process(&self) -> bool {
        self.dialect.is_none() && !self.name.starts_with("bot:")
    }

    /// A seat with just a name.
    pub fn named(name: impl Into<String>) -> Self {
        SeatInfo {
            name: name.into(),
            version: None,
            dialect: None,
        }
    }
}

/// What went wrong with a bot's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    /// Short kind: `timeout`, `illegal`, `malformed`, `crash`, `disconnect`, `budget`.
    pub kind: String,
    /// Human-readable detail (what the bot sent, the rule it broke).
    pub detail: String,
}

/// What a step did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// An action in the game's text form (`"action": "..."`).
    Action(String),
    /// A forfeit ruling (`"forfeit": true`; its meaning is the game's: see
    /// [`Game::forfeit`]).
    Forfeit,
}

/// One step of a recorded game. In JSON it holds exactly one of `action`
/// and `"forfeit": true`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawStep", into = "RawStep")]
pub struct RecordedStep {
    /// Who acted.
    pub seat: Seat,
    /// What was done.
    pub kind: StepKind,
    /// Thinking time in milliseconds, when measured.
    pub ms: Option<f64>,
    /// CPU time in milliseconds that the bot's processes used for it, when
    /// measured (a bot program in a cgroup of its own); absent in older
    /// records.
    pub cpu_ms: Option<f64>,
    /// The fault that led to this step (a substituted move or a forfeit).
    pub fault: Option<Fault>,
}

/// The JSON shape of a step.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    seat: Seat,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    forfeit: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cpu_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fault: Option<Fault>,
}

/// Why a step's JSON does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepShapeError {
    /// `"forfeit": false`.
    #[error("\"forfeit\" may only be true")]
    ForfeitFalse,
    /// Both `action` and `forfeit`.
    #[error("a step has either an action or a forfeit, not both")]
    Both,
    /// Neither.
    #[error("a step needs an \"action\" or \"forfeit\": true")]
    Neither,
}

impl TryFrom<RawStep> for RecordedStep {
    type Error = StepShapeError;
    fn try_from(raw: RawStep) -> Result<Self, StepShapeError> {
        let kind = match (raw.action, raw.forfeit) {
            (Some(a), None) => StepKind::Action(a),
            (None, Some(true)) => StepKind::Forfeit,
            (None, Some(false)) => return Err(StepShapeError::ForfeitFalse),
            (Some(_), Some(_)) => return Err(StepShapeError::Both),
            (None, None) => return Err(StepShapeError::Neither),
        };
        Ok(RecordedStep {
            seat: raw.seat,
            kind,
            ms: raw.ms,
            cpu_ms: raw.cpu_ms,
            fault: raw.fault,
        })
    }
}

impl From<RecordedStep> for RawStep {
    fn from(s: RecordedStep) -> RawStep {
        let (action, forfeit) = match s.kind {
            StepKind::Action(a) => (Some(a), None),
            StepKind::Forfeit => (None, Some(true)),
        };
        RawStep {
            seat: s.seat,
            action,
            forfeit,
            ms: s.ms,
            cpu_ms: s.cpu_ms,
            fault: s.fault,
        }
    }
}

/// A seed from a JSON number or a string of decimal digits.
fn seed_number_or_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Seed {
        Number(u64),
        Text(String),
    }
    match Seed::deserialize(d)? {
        Seed::Number(n) => Ok(n),
        Seed::Text(t) => t
            .parse()
            .map_err(|_| serde::de::Error::custom(format!("seed {t:?} is not a number"))),
    }
}

/// A complete game record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Always [`RECORD_FORMAT`].
    pub format: String,
    /// Game name.
    pub game: String,
    /// The rules version the game was played under.
    pub rules_version: u32,
    /// The variant, as the game serialises it.
    pub variant: serde_json::Value,
    /// The seed all chance came from. Written as a number; read from a
    /// number or from a string of digits (JSON twins write seeds as
    /// strings, which JavaScript reads without losing digits).
    #[serde(deserialize_with = "seed_number_or_text")]
    pub seed: u64,
    /// Seats in order.
    pub seats: Vec<SeatInfo>,
    /// Every action and ruling in order.
    pub steps: Vec<RecordedStep>,
    /// The result.
    pub outcome: Outcome,
    /// When the game started (RFC 3339), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// When the game finished (RFC 3339), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<String>,
}

/// Why a record does not replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Not a record of this format or game.
    #[error("{0}")]
    Format(String),
    /// The game cannot be set up from the record.
    #[error("cannot set up the game: {0}")]
    Setup(#[from] SetupError),
    /// A step is refused by the rules.
    #[error("step {index} (seat {seat}: {what}) is refused: {error}")]
    Step {
        /// Step index from 1.
        index: usize,
        /// Its seat.
        seat: Seat,
        /// The step as text.
        what: String,
        /// The rules' reason.
        error: RuleError,
    },
    /// The steps end before the game does.
    #[error("the record ends before the game is over")]
    Unfinished,
    /// The replayed outcome differs from the stored one.
    #[error("the replayed outcome {replayed} differs from the recorded {recorded}")]
    OutcomeMismatch {
        /// As replayed (JSON).
        replayed: String,
        /// As stored (JSON).
        recorded: String,
    },
}

impl Record {
    /// Starts a record for a game about to be played.
    pub fn begin<G: Game>(variant: &G::Variant, seed: u64, seats: Vec<SeatInfo>) -> Record {
        Record {
            format: RECORD_FORMAT.to_string(),
            game: G::NAME.to_string(),
            rules_version: G::RULES_VERSION,
            variant: serde_json::to_value(variant).unwrap_or(serde_json::Value::Null),
            seed,
            seats,
            steps: Vec::new(),
            outcome: Outcome {
                scores: Vec::new(),
                ranks: Vec::new(),
                forfeited_by: None,
            },
            started: None,
            finished: None,
        }
    }

    /// Re-plays the record through the rules of `G`, calling `on_step` after
    /// every step with the step and the state after it. Fails if a step is
    /// refused, the game is unfinished, or the outcome differs.
    pub fn replay_with<G: Game>(
        &self,
        mut on_step: impl FnMut(usize, &RecordedStep, &G),
    ) -> Result<G, ReplayError> {
        if self.format != RECORD_FORMAT {
            return Err(ReplayError::Format(format!(
                "unknown record format '{}' (expected {RECORD_FORMAT})",
                self.format
            )));
        }
        if self.game != G::NAME {
            return Err(ReplayError::Format(format!(
                "a {} record, not {}",
                self.game,
                G::NAME
            )));
        }
        let mut game = self.setup::<G>()?;
        for (i, step) in self.steps.iter().enumerate() {
            let result = match &step.kind {
                StepKind::Action(text) => game
                    .validate(step.seat, text)
                    .and_then(|a| game.apply(step.seat, a)),
                StepKind::Forfeit => game.forfeit(step.seat),
            };
            result.map_err(|error| ReplayError::Step {
                index: i + 1,
                seat: step.seat,
                what: match &step.kind {
                    StepKind::Action(t) => t.clone(),
                    StepKind::Forfeit => "forfeit".into(),
                },
                error,
            })?;
            on_step(i, step, &game);
        }
        let replayed = game.outcome().ok_or(ReplayError::Unfinished)?;
        if replayed != self.outcome {
            // Outcomes are plain data (serialising cannot fail); the text
            // only explains the error.
            return Err(ReplayError::OutcomeMismatch {
                replayed: serde_json::to_string(&replayed).unwrap_or_default(),
                recorded: serde_json::to_string(&self.outcome).unwrap_or_default(),
            });
        }
        Ok(game)
    }

    /// Re-plays the record and checks its outcome.
    pub fn verify<G: Game>(&self) -> Result<G, ReplayError> {
        self.replay_with::<G>(|_, _, _| {})
    }

    /// Re-plays the record and returns a readable transcript of every event
    /// (all hidden information included), with faults and the outcome, and
    /// whether the record reproduces. The transcript runs as far as the
    /// record replays, so a broken record still shows where it breaks.
    pub fn transcript<G: Game>(&self) -> (String, Result<(), ReplayError>) {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} (rules v{}), seed {}",
            self.game, self.rules_version, self.seed
        );
        let _ = writeln!(out, "variant: {}", self.variant);
        for (i, s) in self.seats.iter().enumerate() {
            let _ = writeln!(out, "seat {i}: {}", s.name);
        }
        let mut shown = 0;
        let mut new_events = |out: &mut String, g: &G| {
            for e in &g.events()[shown..] {
                let _ = writeln!(out, "  {e}");
            }
            shown = g.events().len();
        };
        let result = self.replay_with::<G>(|i, step, g| {
            if i == 0 {
                // Events of the deal, before the first step.
                if let Ok(first) = self.setup::<G>() {
                    new_events(&mut out, &first);
                }
            }
            if let Some(f) = &step.fault {
                let what = match &step.kind {
                    StepKind::Action(a) => format!("'{a}' played for it"),
                    StepKind::Forfeit => "it forfeits".to_string(),
                };
                let _ = writeln!(
                    out,
                    "  ! seat {} fault ({}): {}; {what}",
                    step.seat, f.kind, f.detail
                );
            }
            new_events(&mut out, g);
        });
        match &result {
            Ok(game) => {
                if let Some(o) = game.outcome() {
                    let _ = writeln!(
                        out,
                        "outcome: scores {:?}, ranks {:?}{}",
                        o.scores,
                        o.ranks,
                        o.forfeited_by
                            .map(|s| format!(", forfeited by seat {s}"))
                            .unwrap_or_default()
                    );
                }
            }
            Err(e) => {
                let _ = writeln!(out, "replay failed: {e}");
            }
        }
        (out, result.map(|_| ()))
    }

    /// The game as set up by the record, before any step.
    fn setup<G: Game>(&self) -> Result<G, ReplayError> {
        let variant: G::Variant = serde_json::from_value(self.variant.clone())
            .map_err(|e| ReplayError::Format(format!("bad variant: {e}")))?;
        // A record replays under the rules of the version it was made with.
        let variant = G::replay_variant(variant, self.rules_version).ok_or_else(|| {
            ReplayError::Format(format!(
                "recorded under rules version {}, this build has {}",
                self.rules_version,
                G::RULES_VERSION
            ))
        })?;
        Ok(G::new(&variant, self.seats.len(), self.seed)?)
    }
}

/// Parses a variant from the command line for game `G`.
pub fn parse_variant<G: Game>(text: Option<&str>) -> Result<G::Variant, SetupError> {
    match text {
        None => Ok(G::Variant::default()),
        Some(t) => G::Variant::parse(t),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn seeds_read_from_numbers_and_strings_alike() {
        let text = r#"{"format":"croupier-record/1","game":"goofspiel","rules_version":1,
            "variant":{},"seed":7,"seats":[{"name":"a"},{"name":"b"}],
            "steps":[{"seat":0,"action":"1"}],"outcome":{"scores":[1,0],"ranks":[1,2]}}"#;
        let record: super::Record = serde_json::from_str(text).expect("the example reads");
        assert_eq!(record.seed, 7);
        let big = u64::MAX - 6;
        let mut v: serde_json::Value = serde_json::from_str(text).expect("json");
        v["seed"] = serde_json::Value::String(big.to_string());
        let again: super::Record = serde_json::from_value(v.clone()).expect("a string seed reads");
        assert_eq!((again.seed, again.steps.len()), (big, record.steps.len()));
        v["seed"] = serde_json::Value::String("12x".into());
        let bad = serde_json::from_value::<super::Record>(v).expect_err("not a number");
        assert!(bad.to_string().contains("not a number"), "{bad}");
    }

    use super::*;

    fn step(json: &str) -> Result<RecordedStep, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn a_step_is_an_action_or_a_forfeit() {
        assert_eq!(
            step(r#"{"seat":0,"action":"7","ms":1.5}"#).unwrap().kind,
            StepKind::Action("7".into())
        );
        assert_eq!(
            step(r#"{"seat":1,"forfeit":true}"#).unwrap().kind,
            StepKind::Forfeit
        );
        for bad in [
            r#"{"seat":1,"forfeit":false}"#,
            r#"{"seat":1,"forfeit":true,"action":"7"}"#,
            r#"{"seat":1}"#,
            r#"{"seat":1,"action":"7","extra":1}"#,
            r#"{"seat":-1,"action":"7"}"#,
        ] {
            assert!(step(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpu_time_is_optional_and_kept() {
        let old = step(r#"{"seat":0,"action":"7","ms":1.5}"#).unwrap();
        assert_eq!(old.cpu_ms, None);
        let new = step(r#"{"seat":0,"action":"7","ms":400.0,"cpu_ms":40.0}"#).unwrap();
        assert_eq!(new.cpu_ms, Some(40.0));
        let back = serde_json::to_string(&new).unwrap();
        assert!(back.contains(r#""cpu_ms":40.0"#), "{back}");
        assert!(!serde_json::to_string(&old).unwrap().contains("cpu_ms"));
    }

    #[test]
    fn steps_round_trip_through_json() {
        let s = RecordedStep {
            seat: Seat(1),
            kind: StepKind::Forfeit,
            ms: Some(2.0),
            cpu_ms: None,
            fault: Some(Fault {
                kind: "timeout".into(),
                detail: "late".into(),
            }),
        };
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(
            text,
            r#"{"seat":1,"forfeit":true,"ms":2.0,"fault":{"kind":"timeout","detail":"late"}}"#
        );
        assert_eq!(step(&text).unwrap(), s);
    }
}
