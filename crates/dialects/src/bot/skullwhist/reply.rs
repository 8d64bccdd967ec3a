//! The replies a SkullWhist REST bot reads: each method's JSON parsed and
//! checked (its fields, their types and ranges), and the error that says
//! what did not read.

use croupier_rules::skullwhist::{Card, TRICKS};
use serde_json::{Map, Value};

/// A reply that does not read, or a server whose account of a game
/// disagrees with the rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// The server answered with an HTTP error status.
    #[error("{method}: HTTP {status} from the server (is this a SkullWhist server?): {snippet}")]
    Status {
        /// The API method called.
        method: String,
        /// The HTTP status.
        status: u16,
        /// The start of the reply.
        snippet: String,
    },
    /// The reply is not a JSON object with a `result`.
    #[error("{method}: {problem}: {snippet}")]
    NotApi {
        /// The API method called.
        method: String,
        /// What is wrong with it.
        problem: &'static str,
        /// The start of the reply.
        snippet: String,
    },
    /// A field is missing or has the wrong type.
    #[error("{0}")]
    Field(String),
    /// The server's account of the game disagrees with this bot's view.
    #[error("{0}")]
    Disagrees(String),
}

pub(super) type Result<T> = std::result::Result<T, ReplyError>;

fn field(msg: impl Into<String>) -> ReplyError {
    ReplyError::Field(msg.into())
}

pub(super) fn disagrees(msg: impl Into<String>) -> ReplyError {
    ReplyError::Disagrees(msg.into())
}

fn snippet(body: &[u8]) -> String {
    String::from_utf8_lossy(body).chars().take(200).collect()
}

/// An API reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `result: success`, with the reply's other fields.
    Success(Map<String, Value>),
    /// `result: retry`, with the reason.
    Retry(String),
    /// `result: failure`, with the reason.
    Failure(String),
}

/// Reads an API reply from an HTTP reply's status and body.
pub fn parse_reply(method: &str, status: u16, body: &[u8]) -> Result<Reply> {
    let not_api = |problem| ReplyError::NotApi {
        method: method.to_string(),
        problem,
        snippet: snippet(body),
    };
    if status != 200 {
        return Err(ReplyError::Status {
            method: method.to_string(),
            status,
            snippet: snippet(body),
        });
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|_| not_api("the reply is not JSON"))?;
    let Value::Object(mut fields) = value else {
        return Err(not_api("the reply is not a JSON object"));
    };
    let reason = |f: &Map<String, Value>| match f.get("reason") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "no reason given".to_string(),
    };
    match fields.get("result").and_then(Value::as_str) {
        Some("success") => {
            fields.remove("result");
            Ok(Reply::Success(fields))
        }
        Some("retry") => Ok(Reply::Retry(reason(&fields))),
        Some("failure") => Ok(Reply::Failure(reason(&fields))),
        _ => Err(not_api(
            "the reply has no 'result' of success, failure or retry",
        )),
    }
}

/// An integer field: `None` when null or absent; numeric strings accepted.
pub fn int_field(fields: &Map<String, Value>, key: &str) -> Result<Option<i64>> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| field(format!("'{key}' is not an integer: {n}"))),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| field(format!("'{key}' is not an integer: '{s}'"))),
        Some(v) => Err(field(format!("'{key}' is not an integer: {v}"))),
    }
}

pub fn required_int(fields: &Map<String, Value>, key: &str) -> Result<i64> {
    int_field(fields, key)?.ok_or_else(|| field(format!("the reply has no '{key}'")))
}

fn card_field(fields: &Map<String, Value>, key: &str) -> Result<Option<Card>> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|e| field(format!("'{key}': {e}"))),
        Some(v) => Err(field(format!("'{key}' is not a card: {v}"))),
    }
}

fn bool_field(fields: &Map<String, Value>, key: &str) -> Result<Option<bool>> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(field(format!("'{key}' is not true or false: {v}"))),
    }
}

pub(super) fn small(value: Option<i64>, key: &str) -> Result<Option<u8>> {
    value
        .map(|v| u8::try_from(v).map_err(|_| field(format!("'{key}' is out of range: {v}"))))
        .transpose()
}

/// A `status` reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// The game, or `None` outside a game.
    pub game: Option<i64>,
    /// The current trick, 1..=13.
    pub round: Option<u8>,
    /// Whether this bot must play now.
    pub your_turn: bool,
    /// The opponent's bot id.
    pub opponent: Option<i64>,
    /// The opponent's bid (once both have bid).
    pub opponent_bid: Option<u8>,
    /// The opponent's card in the previous trick.
    pub opponent_previous_card: Option<Card>,
    /// The opponent's card in the current trick (when it led).
    pub opponent_current_card: Option<Card>,
    /// Whether this bot took the previous trick (`None` in trick 1).
    pub you_won_previous_round: Option<bool>,
}

/// Reads the fields of a successful `status` reply.
pub fn parse_status(fields: &Map<String, Value>) -> Result<Status> {
    Ok(Status {
        game: int_field(fields, "game")?,
        round: small(int_field(fields, "round")?, "round")?,
        your_turn: bool_field(fields, "your-turn")?.unwrap_or(false),
        opponent: int_field(fields, "opponent")?,
        opponent_bid: small(int_field(fields, "opponent-bid")?, "opponent-bid")?,
        opponent_previous_card: card_field(fields, "opponent-previous-card")?,
        opponent_current_card: card_field(fields, "opponent-current-card")?,
        you_won_previous_round: bool_field(fields, "you-won-previous-round")?,
    })
}

/// Reads the 13 cards of a `new-game` reply.
pub fn parse_cards(fields: &Map<String, Value>) -> Result<Vec<Card>> {
    let Some(Value::Array(cards)) = fields.get("cards") else {
        return Err(field("the new-game reply has no list of 'cards'"));
    };
    let mut hand = cards
        .iter()
        .map(|c| match c {
            Value::String(s) => s
                .parse::<Card>()
                .map_err(|e| field(format!("'cards': {e}"))),
            other => Err(field(format!("'cards' holds {other}, not a card"))),
        })
        .collect::<Result<Vec<Card>>>()?;
    hand.sort();
    let before = hand.len();
    hand.dedup();
    if hand.len() != usize::from(TRICKS) || before != hand.len() {
        return Err(field(format!(
            "new-game dealt {before} cards, not 13 distinct ones"
        )));
    }
    Ok(hand)
}
