//! The Croupier protocol, `croupier/1`: one JSON object per line, for every
//! game. See `docs/protocol/croupier.md` for the full description.
//!
//! Croupier → bot:
//! ```json
//! {"type":"start","protocol":"croupier/1","game":"goofspiel","variant":{...},"seat":0,"seats":2}
//! {"type":"event","event":{"event":"draw","card":5,"next":null}}
//! {"type":"act","decision":1,"observation":{...},"legal":["1","2","3"],"deadline_ms":10000}
//! {"type":"end","outcome":{"scores":[50,41],"ranks":[1,2]}}
//! ```
//! Bot → Croupier, only after `act`: `{"action":"3","decision":1}` (the
//! `decision` echo is optional; an answer naming an earlier decision is skipped).

use croupier_rules::{Game, Outcome, RuleError, Seat};
use serde::{Deserialize, Serialize};

use crate::{Dialect, DialectKind, Flow, Reply};

/// The protocol version string.
pub const PROTOCOL: &str = "croupier/1";

/// A message from Croupier to a bot, generic over the game's observation and
/// event types (the bot side reads it back with the same type).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToBot<O, E> {
    /// The match begins.
    Start {
        /// Always [`PROTOCOL`].
        protocol: String,
        /// Game name.
        game: String,
        /// The rules variant.
        variant: serde_json::Value,
        /// This bot's seat, from 0.
        seat: Seat,
        /// Number of seats.
        seats: usize,
    },
    /// Something happened that this seat may see.
    Event {
        /// The game's event.
        event: E,
    },
    /// The bot must answer with one of `legal` before `deadline_ms` elapse.
    Act {
        /// Decision number, from 1.
        decision: u64,
        /// What this seat sees now.
        observation: O,
        /// Every legal action, in the game's text form.
        legal: Vec<String>,
        /// Milliseconds the bot has to answer.
        deadline_ms: u64,
    },
    /// The match is over.
    End {
        /// Scores and ranks by seat.
        outcome: Outcome,
    },
}

/// A bot's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FromBot {
    /// The chosen action in the game's text form.
    pub action: String,
    /// The decision this answers, if the bot echoes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<u64>,
}

/// The manager side of `croupier/1`.
#[derive(Debug, Default, Clone)]
pub struct CroupierDialect {
    decision: u64,
}

fn line<T: Serialize>(msg: &T) -> String {
    // Serialising plain data structures to a String cannot fail.
    serde_json::to_string(msg).unwrap_or_default()
}

impl<G: Game> Dialect<G> for CroupierDialect {
    fn kind(&self) -> DialectKind {
        DialectKind::Croupier
    }

    fn hello(&mut self, game: &G, seat: Seat, out: &mut Vec<String>) {
        let msg: ToBot<(), ()> = ToBot::Start {
            protocol: PROTOCOL.to_string(),
            game: G::NAME.to_string(),
            // A variant is plain data: serialising it cannot fail.
            variant: serde_json::to_value(game.variant()).unwrap_or_default(),
            seat,
            seats: game.num_seats(),
        };
        out.push(line(&msg));
    }

    fn event(&mut self, _game: &G, _seat: Seat, event: &G::Event, out: &mut Vec<String>) -> Flow {
        out.push(line(&ToBot::<(), &G::Event>::Event { event }));
        Flow::Continue
    }

    fn prompt(
        &mut self,
        game: &G,
        seat: Seat,
        legal: &[G::Action],
        deadline_ms: u64,
        out: &mut Vec<String>,
    ) {
        self.decision += 1;
        let msg = ToBot::<G::Observation, ()>::Act {
            decision: self.decision,
            observation: game.observation(seat),
            legal: legal.iter().map(ToString::to_string).collect(),
            deadline_ms,
        };
        out.push(line(&msg));
    }

    fn decode(&mut self, game: &G, seat: Seat, line: &str) -> Result<Reply<G::Action>, RuleError> {
        let answer: FromBot = serde_json::from_str(line.trim()).map_err(|e| {
            RuleError::malformed(format!(
                "expected {{\"action\": \"...\"}}, got invalid JSON ({e})"
            ))
        })?;
        match answer.decision {
            Some(d) if d < self.decision => return Ok(Reply::Ignore),
            Some(d) if d > self.decision => {
                return Err(RuleError::malformed(format!(
                    "answer to decision {d}, but the current decision is {}",
                    self.decision
                )))
            }
            _ => {}
        }
        game.validate(seat, &answer.action).map(Reply::Action)
    }

    fn goodbye(&mut self, game: &G, _seat: Seat, out: &mut Vec<String>) {
        if let Some(outcome) = game.outcome() {
            out.push(line(&ToBot::<(), ()>::End { outcome }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielObservation, GoofspielVariant};
    use croupier_rules::Event as _;

    fn game() -> Goofspiel {
        Goofspiel::new(&GoofspielVariant::gops(), 2, 3).unwrap()
    }

    #[test]
    fn start_names_protocol_game_seat_and_variant() {
        let g = game();
        let mut out = Vec::new();
        Dialect::<Goofspiel>::hello(&mut CroupierDialect::default(), &g, Seat(1), &mut out);
        let v: serde_json::Value = serde_json::from_str(&out[0]).unwrap();
        assert_eq!(v["type"], "start");
        assert_eq!(v["protocol"], "croupier/1");
        assert_eq!(v["game"], "goofspiel");
        assert_eq!(v["seat"], 1);
        assert_eq!(v["seats"], 2);
        assert_eq!(v["variant"]["rounds"], serde_json::json!([13]));
    }

    #[test]
    fn act_carries_observation_legal_actions_and_deadline() {
        let g = game();
        let mut d = CroupierDialect::default();
        let mut out = Vec::new();
        let legal = g.legal_vec(Seat(0));
        Dialect::<Goofspiel>::prompt(&mut d, &g, Seat(0), &legal, 2500, &mut out);
        let msg: ToBot<GoofspielObservation, serde_json::Value> =
            serde_json::from_str(&out[0]).unwrap();
        match msg {
            ToBot::Act {
                decision,
                observation,
                legal,
                deadline_ms,
            } => {
                assert_eq!(decision, 1);
                assert_eq!(observation, g.observation(Seat(0)));
                assert_eq!(legal.len(), 13);
                assert_eq!(legal[0], "1");
                assert_eq!(deadline_ms, 2500);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_are_validated_against_the_rules() {
        let g = game();
        let mut d = CroupierDialect::default();
        Dialect::<Goofspiel>::prompt(&mut d, &g, Seat(0), &[], 1, &mut Vec::new());
        let ok = Dialect::<Goofspiel>::decode(&mut d, &g, Seat(0), r#"{"action":"7"}"#);
        assert_eq!(ok, Ok(Reply::Action(Bid(7))));
        let echoed =
            Dialect::<Goofspiel>::decode(&mut d, &g, Seat(0), r#"{"action":"7","decision":1}"#);
        assert_eq!(echoed, Ok(Reply::Action(Bid(7))));
        for bad in [
            "7",
            "{}",
            r#"{"action":7}"#,
            "",
            "{\"action\":\"x\"}",
            r#"{"action":"7","decision":9}"#,
        ] {
            assert!(
                Dialect::<Goofspiel>::decode(&mut d, &g, Seat(0), bad).is_err(),
                "{bad}"
            );
        }
        assert!(matches!(
            Dialect::<Goofspiel>::decode(&mut d, &g, Seat(0), r#"{"action":"99"}"#),
            Err(RuleError::Illegal(_))
        ));
    }

    #[test]
    fn stale_answers_are_skipped() {
        let g = game();
        let mut d = CroupierDialect::default();
        for _ in 0..2 {
            Dialect::<Goofspiel>::prompt(&mut d, &g, Seat(0), &[], 1, &mut Vec::new());
        }
        let stale =
            Dialect::<Goofspiel>::decode(&mut d, &g, Seat(0), r#"{"action":"7","decision":1}"#);
        assert_eq!(stale, Ok(Reply::Ignore));
    }

    #[test]
    fn events_are_the_games_own_json() {
        let g = game();
        let e = g
            .events()
            .iter()
            .find(|e| e.visible_to(Seat(0)))
            .copied()
            .unwrap();
        let mut out = Vec::new();
        let flow =
            Dialect::<Goofspiel>::event(&mut CroupierDialect::default(), &g, Seat(0), &e, &mut out);
        assert_eq!(flow, Flow::Continue);
        let v: serde_json::Value = serde_json::from_str(&out[0]).unwrap();
        assert_eq!(v["type"], "event");
        assert_eq!(v["event"], serde_json::to_value(e).unwrap());
    }
}
