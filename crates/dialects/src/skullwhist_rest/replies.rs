//! The replies of the 2014 API as they go on the wire: `status`,
//! `new-game`, `success`, `failure` and `retry`, written straight from typed
//! structs (one allocation, no `serde_json::Value` map per reply).
//!
//! The 2014 server's replies were built as JSON objects, whose keys
//! serde_json writes in sorted order; the wire structs below declare their
//! fields in that same order, so every reply is byte for byte what it was
//! (the tests compare them with the objects built the old way).

use croupier_rules::skullwhist::{Card, Phase, SkullWhistObservation, Trick};
use croupier_rules::Seat;
use serde::Serialize;
use serde_json::Value;

/// What `status` says about a seat's game.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// Game id (None: not in a game).
    pub game: Option<i64>,
    /// Current trick, 1..=13.
    pub round: Option<u8>,
    /// Whether this bot must play a card now.
    pub your_turn: Option<bool>,
    /// Opponent's bot id.
    pub opponent: Option<i64>,
    /// Opponent's bid, once this bot has bid too.
    pub opponent_bid: Option<u8>,
    /// Opponent's card in the previous trick.
    pub opponent_previous_card: Option<Card>,
    /// Opponent's card in the current trick.
    pub opponent_current_card: Option<Card>,
    /// Whether this bot took the previous trick (None in trick 1).
    pub you_won_previous_round: Option<bool>,
}

/// The `status` reply on the wire (keys in sorted order, see the module).
#[derive(Serialize)]
struct StatusWire {
    game: Option<i64>,
    opponent: Option<i64>,
    #[serde(rename = "opponent-bid")]
    opponent_bid: Option<u8>,
    #[serde(rename = "opponent-current-card")]
    opponent_current_card: Option<Card>,
    #[serde(rename = "opponent-previous-card")]
    opponent_previous_card: Option<Card>,
    result: &'static str,
    round: Option<u8>,
    #[serde(rename = "you-won-previous-round")]
    you_won_previous_round: Option<bool>,
    #[serde(rename = "your-turn")]
    your_turn: Option<bool>,
}

impl Status {
    /// The status of a seat of game `game` against `opponent`, from what the
    /// seat observes.
    pub fn of(game: i64, opponent: i64, obs: &SkullWhistObservation) -> Status {
        let seat = obs.seat;
        let opp = Seat(1 - seat.0);
        let card_of = |t: &Trick, s: Seat| if t.leader == s { t.lead } else { t.follow };
        let last = obs.history.last();
        Status {
            game: Some(game),
            round: Some((obs.history.len() as u8 + 1).min(13)),
            your_turn: Some(obs.to_act && obs.phase == Phase::Playing),
            opponent: Some(opponent),
            opponent_bid: obs.my_bid.and(obs.opponent_bid),
            opponent_previous_card: last.map(|t| card_of(t, opp)),
            opponent_current_card: match (obs.lead_card, obs.leader) {
                (Some(c), Some(l)) if l == opp => Some(c),
                _ => None,
            },
            you_won_previous_round: last.map(|t| t.winner == seat),
        }
    }

    fn wire(&self) -> StatusWire {
        StatusWire {
            game: self.game,
            opponent: self.opponent,
            opponent_bid: self.opponent_bid,
            opponent_current_card: self.opponent_current_card,
            opponent_previous_card: self.opponent_previous_card,
            result: "success",
            round: self.round,
            you_won_previous_round: self.you_won_previous_round,
            your_turn: self.your_turn,
        }
    }

    /// The `status` reply as JSON text, as it goes on the wire.
    pub fn reply_text(&self) -> String {
        self.reply_after("")
    }

    /// The `status` reply's text written after `prefix`, in one string
    /// (the hub's `view` line: issue 53, one string and one copy fewer a
    /// seat and a step than writing the reply, then the line around it).
    pub fn reply_after(&self, prefix: &str) -> String {
        let mut line = Vec::with_capacity(prefix.len() + 224);
        line.extend_from_slice(prefix.as_bytes());
        if let Err(e) = serde_json::to_writer(&mut line, &self.wire()) {
            line.truncate(prefix.len());
            line.extend_from_slice(internal(&e).as_bytes());
        }
        // serde_json writes UTF-8 only.
        String::from_utf8(line)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// The `status` reply as a JSON value.
    pub fn reply(&self) -> Value {
        to_value(&self.wire())
    }
}

/// The `new-game` reply on the wire.
#[derive(Serialize)]
struct NewGameWire<'a> {
    cards: &'a [Card],
    game: i64,
    opponent: i64,
    result: &'static str,
}

/// The `new-game` reply: the game, the opponent and the dealt cards.
pub fn new_game_reply(game: i64, opponent: i64, cards: &[Card]) -> Value {
    to_value(&new_game_wire(game, opponent, cards))
}

/// The `new-game` reply as JSON text.
pub fn new_game_text(game: i64, opponent: i64, cards: &[Card]) -> String {
    to_text(&new_game_wire(game, opponent, cards))
}

fn new_game_wire(game: i64, opponent: i64, cards: &[Card]) -> NewGameWire<'_> {
    NewGameWire {
        cards,
        game,
        opponent,
        result: "success",
    }
}

/// A reply with a reason (`failure`, `retry`) on the wire.
#[derive(Serialize)]
struct ReasonWire<'a> {
    reason: &'a str,
    result: &'static str,
}

/// `{"result": "failure", "reason": ...}` as JSON text.
pub fn failure_text(reason: &str) -> String {
    to_text(&ReasonWire {
        reason,
        result: "failure",
    })
}

/// `{"result":"success"}`: a `bid` or `play` that stood.
pub const SUCCESS_TEXT: &str = r#"{"result":"success"}"#;

/// The reason of a `retry` reply of `new-game`.
pub const RETRY_REASON: &str = "no opponent yet; call new-game again";

/// `{"result": "retry", ...}` as JSON text.
pub fn retry_text() -> String {
    to_text(&ReasonWire {
        reason: RETRY_REASON,
        result: "retry",
    })
}

/// The text of a wire struct. Writing one of the structs above into memory
/// cannot fail (plain fields, cards written as text); should it ever, the
/// bot gets a failure that says so rather than an empty or partial body.
fn to_text<T: Serialize>(wire: &T) -> String {
    serde_json::to_string(wire).unwrap_or_else(|e| internal(&e))
}

fn to_value<T: Serialize>(wire: &T) -> Value {
    serde_json::to_value(wire).unwrap_or_else(
        |e| serde_json::json!({"result": "failure", "reason": format!("internal error: {e}")}),
    )
}

fn internal(e: &serde_json::Error) -> String {
    // A literal: this path must not depend on the serialiser that failed.
    let reason = format!("internal error: {e}").replace(['"', '\\'], "'");
    format!(r#"{{"reason":"{reason}","result":"failure"}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::skullwhist::{SkullWhist, SkullWhistVariant};
    use croupier_rules::Game;
    use serde_json::json;

    /// The `status` reply as the server built it before (a JSON object).
    fn status_as_before(s: &Status) -> String {
        json!({
            "result": "success",
            "game": s.game,
            "round": s.round,
            "your-turn": s.your_turn,
            "opponent": s.opponent,
            "opponent-bid": s.opponent_bid,
            "opponent-previous-card": s.opponent_previous_card.map(|c| c.to_string()),
            "opponent-current-card": s.opponent_current_card.map(|c| c.to_string()),
            "you-won-previous-round": s.you_won_previous_round,
        })
        .to_string()
    }

    #[test]
    fn status_replies_are_byte_for_byte_as_before_through_whole_games() {
        let mut checked = 0;
        for seed in 0..20u64 {
            let mut g = SkullWhist::new(&SkullWhistVariant {}, 2, seed).unwrap();
            let mut step = 0usize;
            loop {
                for seat in [Seat(0), Seat(1)] {
                    let s = Status::of(seed as i64 + 1, 7, &g.observation(seat));
                    assert_eq!(s.reply_text(), status_as_before(&s), "seed {seed}");
                    assert_eq!(s.reply().to_string(), s.reply_text());
                    checked += 1;
                }
                let Some(seat) = g.to_act().first() else {
                    break;
                };
                let legal = g.legal_vec(seat);
                g.apply(seat, legal[step % legal.len()]).unwrap();
                step += 7;
            }
        }
        assert!(checked > 20 * 26 * 2);
        let none = Status::default();
        assert_eq!(none.reply_text(), status_as_before(&none));
    }

    #[test]
    fn other_replies_are_byte_for_byte_as_before() {
        let g = SkullWhist::new(&SkullWhistVariant {}, 2, 3).unwrap();
        let hand = crate::skullwhist_rest::dealt_hand(g.events(), Seat(1)).unwrap();
        let names: Vec<String> = hand.iter().map(ToString::to_string).collect();
        let before = json!({"result": "success", "game": 12, "opponent": 4, "cards": names});
        assert_eq!(new_game_text(12, 4, &hand), before.to_string());
        assert_eq!(new_game_reply(12, 4, &hand), before);
        for reason in ["not your turn", "a \"quoted\" \\ reason\n", "é"] {
            let before = json!({"result": "failure", "reason": reason}).to_string();
            assert_eq!(failure_text(reason), before);
        }
        let before = json!({"result": "retry", "reason": RETRY_REASON}).to_string();
        assert_eq!(retry_text(), before);
        assert_eq!(SUCCESS_TEXT, json!({"result": "success"}).to_string());
    }
}
