//! What the website reads of a finished game's record, kept beside it
//! (issue 53): per seat its version, whether it was timed, the wall and CPU
//! time of its decisions and its faults; for SkullWhist, the seat that led
//! the first trick. [`GameEnd::from_record`](crate::GameEnd::from_record)
//! writes them when the game is stored, so that a bot's page and a versus
//! page read fifty small rows instead of parsing fifty whole records.
//! Games stored before the column existed have none: the pages read their
//! records instead.

use croupier_rules::record::StepKind;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Game, Record};
use serde::{Deserialize, Serialize};

/// What the website reads of one finished game (see the module).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GameFacts {
    /// SkullWhist: the seat that led the first trick (the first card played).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead: Option<usize>,
    /// By seat.
    pub seats: Vec<SeatFacts>,
}

/// One seat of [`GameFacts`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeatFacts {
    /// The version the record names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// It was asked over a transport (a program, HTTP), so its decisions
    /// were timed; an in-process built-in strategy was not.
    #[serde(default)]
    pub timed: bool,
    /// The wall time of each timed decision, in milliseconds, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ms: Vec<f64>,
    /// `(wall, cpu)` milliseconds of the decisions whose CPU time was
    /// measured (issue 51).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu: Vec<(f64, f64)>,
    /// Its faults, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FactFault>,
}

/// A fault of [`SeatFacts`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactFault {
    /// The step, from 1 (as the replay numbers them).
    pub step: usize,
    /// Its kind (`timeout`, `illegal`, ...).
    pub kind: String,
    /// What happened.
    pub detail: String,
}

impl GameFacts {
    /// The facts of `record`.
    pub fn of(record: &Record) -> GameFacts {
        let mut seats: Vec<SeatFacts> = record
            .seats
            .iter()
            .map(|info| SeatFacts {
                version: info.version.clone(),
                timed: !info.in_process(),
                ..SeatFacts::default()
            })
            .collect();
        for (i, step) in record.steps.iter().enumerate() {
            let Some(seat) = seats.get_mut(step.seat.index()) else {
                continue;
            };
            // Only finite times: JSON has no NaN, and the pages skip them.
            if let (true, Some(m)) = (seat.timed, step.ms.filter(|m| m.is_finite())) {
                seat.ms.push(m);
                if let Some(c) = step.cpu_ms.filter(|c| c.is_finite()) {
                    seat.cpu.push((m, c));
                }
            }
            if let Some(f) = &step.fault {
                seat.faults.push(FactFault {
                    step: i + 1,
                    kind: f.kind.clone(),
                    detail: f.detail.clone(),
                });
            }
        }
        let lead = (record.game == SkullWhist::NAME)
            .then(|| first_leader(record))
            .flatten();
        GameFacts { lead, seats }
    }

    /// The facts as stored (JSON).
    pub fn to_text(&self) -> String {
        // Plain data with finite numbers: serialising it cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Stored facts, or `None` if they do not parse.
    pub fn parse(text: &str) -> Option<GameFacts> {
        serde_json::from_str(text).ok()
    }
}

/// The seat that led the first trick of a SkullWhist record: the seat of
/// its first card played.
pub fn first_leader(record: &Record) -> Option<usize> {
    record.steps.iter().find_map(|s| match &s.kind {
        StepKind::Action(a) if a.starts_with("play") => Some(s.seat.index()),
        StepKind::Action(_) | StepKind::Forfeit => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(game: &str, seats: serde_json::Value, steps: serde_json::Value) -> Record {
        serde_json::from_value(serde_json::json!({
            "format": "croupier-record/1", "game": game, "rules_version": 1,
            "variant": {}, "seed": 1, "seats": seats, "steps": steps,
            "outcome": {"scores": [0, 0], "ranks": [1, 2]}
        }))
        .unwrap()
    }

    #[test]
    fn the_first_card_played_names_the_first_leader() {
        let r = record(
            "skullwhist",
            serde_json::json!([{"name": "a"}, {"name": "b"}]),
            serde_json::json!([{"seat": 0, "action": "bid 3"}, {"seat": 1, "action": "bid 4"},
                      {"seat": 1, "action": "play H05"}, {"seat": 0, "action": "play H07"}]),
        );
        assert_eq!(first_leader(&r), Some(1));
        assert_eq!(GameFacts::of(&r).lead, Some(1));
    }

    #[test]
    fn a_seat_keeps_its_times_faults_and_version_and_built_ins_are_not_timed() {
        let r = record(
            "goofspiel",
            serde_json::json!([
                {"name": "prog", "version": "v2", "dialect": "gops"},
                {"name": "builtin:random"}
            ]),
            serde_json::json!([
                {"seat": 0, "action": "bid 3", "ms": 12.5, "cpu_ms": 4.0},
                {"seat": 1, "action": "bid 4", "ms": 0.01},
                {"seat": 0, "action": "bid 5", "ms": 700.0,
                 "fault": {"kind": "timeout", "detail": "no answer in 500 ms"}},
            ]),
        );
        let f = GameFacts::of(&r);
        assert_eq!(f.lead, None, "only SkullWhist has a first leader");
        let (p, b) = (&f.seats[0], &f.seats[1]);
        assert_eq!(p.version.as_deref(), Some("v2"));
        assert!(p.timed && !b.timed);
        assert_eq!(p.ms, vec![12.5, 700.0]);
        assert_eq!(p.cpu, vec![(12.5, 4.0)]);
        assert_eq!(
            p.faults,
            vec![FactFault {
                step: 3,
                kind: "timeout".into(),
                detail: "no answer in 500 ms".into()
            }]
        );
        assert!(b.ms.is_empty() && b.faults.is_empty());
        assert_eq!(GameFacts::parse(&f.to_text()), Some(f));
        assert_eq!(GameFacts::parse("{not json"), None);
    }
}
