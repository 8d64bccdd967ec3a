//! The SkullWhist REST API of 2014, manager side, as a pure translation:
//! a `bid`/`play` request's fields become a raw action checked by
//! [`Game::validate`], and what a seat sees becomes the `status`,
//! `new-game` and `old-game` replies. Every refusal keeps the wording the
//! 2014 server used, so bots written against it see no change.
//!
//! No I/O and no clocks here. [`SkullWhistRest`] is the manager side as a
//! [`Dialect`]: the server's hub is a `Connector` whose connections carry
//! a bot's `bid`/`play` requests to the match runner as lines (`bid 5`,
//! `play H05`) and bring back [`HubLine`]s: the seat's `status` reply
//! (kept for `status` polls), whether a request stood or was refused, and
//! the end of the game. The runner owns the game, its clocks and rulings.

use croupier_rules::skullwhist::{Card, SkullWhist, SkullWhistAction, SkullWhistEvent};
use croupier_rules::{Event as _, Game, RuleError, Seat};
use serde_json::{json, Map, Value};

use crate::{Dialect, DialectKind, Flow, Reply};

mod fields;
mod refusal;
mod replies;

pub use fields::{int_field, str_field, BadBody, Fields};
pub use refusal::Refusal;

pub use replies::{
    failure_text, new_game_reply, new_game_text, retry_text, Status, RETRY_REASON, SUCCESS_TEXT,
};

/// A JSON object (request body or reply).
pub type Obj = Map<String, Value>;

/// `{"result": "failure", "reason": ...}`.
pub fn failure(reason: impl Into<String>) -> Value {
    json!({"result": "failure", "reason": reason.into()})
}

/// `{"result": "success", ...fields}`.
pub fn success(mut fields: Obj) -> Value {
    fields.insert("result".into(), "success".into());
    Value::Object(fields)
}

/// `{"result": "retry", ...}`: `new-game` found no opponent in time.
pub fn retry() -> Value {
    json!({"result": "retry", "reason": RETRY_REASON})
}

/// The card of a `play` request. Checked before the bot's game is looked
/// up, as in 2014 (a bot not in a game that sends `X99` is told it is not a
/// card).
pub fn parse_card(raw: &str) -> Result<Card, Refusal> {
    raw.parse()
        .map_err(|_| Refusal(format!("'{raw}' is not a card (expected e.g. H05)")))
}

/// Decodes a `bid` of `seat`: the raw action `bid N`, validated by the
/// rules. A number that is no bid at all (negative, huge) is refused as out
/// of range, after the "already bid" check, as in 2014.
pub fn decode_bid(game: &SkullWhist, seat: Seat, bid: i64) -> Result<SkullWhistAction, Refusal> {
    match u8::try_from(bid) {
        Ok(n) => Ok(game.validate(seat, &format!("bid {n}"))?),
        Err(_) => {
            game.check(seat, SkullWhistAction::Bid(1))?;
            Err(Refusal(format!("bid {bid} is out of range (1 to 13)")))
        }
    }
}

/// Decodes a `play` of `card` by `seat`: the raw action `play C`, validated
/// by the rules ("play begins when both players have bid", "not your turn",
/// "H05 is not in your hand", "you must follow suit").
pub fn decode_play(game: &SkullWhist, seat: Seat, card: Card) -> Result<SkullWhistAction, Refusal> {
    Ok(game.validate(seat, &format!("play {card}"))?)
}

/// The 13 cards `seat` was dealt, sorted (`None` before the deal).
pub fn dealt_hand(events: &[SkullWhistEvent], seat: Seat) -> Option<Vec<Card>> {
    events.iter().find_map(|e| match e {
        SkullWhistEvent::Deal { seat: s, hand } if *s == seat => Some(hand.clone()),
        SkullWhistEvent::Deal { .. }
        | SkullWhistEvent::Sealed { .. }
        | SkullWhistEvent::Bids { .. }
        | SkullWhistEvent::Played { .. }
        | SkullWhistEvent::TrickWon { .. }
        | SkullWhistEvent::Scored { .. }
        | SkullWhistEvent::Forfeit { .. } => None,
    })
}

/// What the store knows of a finished game besides its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishedGame {
    /// Game id.
    pub id: i64,
    /// Bots by seat.
    pub bots: [i64; 2],
    /// Scores by seat (none for a forfeited game).
    pub scores: [Option<i64>; 2],
    /// Start and end times (RFC 3339).
    pub started: Option<String>,
    /// End time.
    pub finished: Option<String>,
    /// The bot that forfeited.
    pub forfeited_by: Option<i64>,
}

/// The `old-game` reply: the finished game in the 2014 shape, with every
/// trick, from the game replayed from its record.
pub fn old_game_reply(row: &FinishedGame, game: &SkullWhist) -> Result<Value, Refusal> {
    let bots = row.bots;
    let hand = |s: u8| {
        dealt_hand(game.events(), Seat(s))
            .map(|h| h.iter().map(ToString::to_string).collect::<Vec<_>>())
            .ok_or_else(|| Refusal("internal error: the record has no deal".into()))
    };
    let (hand1, hand2) = (hand(0)?, hand(1)?);
    let bids = game.bids();
    let tricks = game.tricks_won();
    let rounds: Vec<Value> = game
        .history()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({
                "round": i + 1,
                "leader": bots[t.leader.index()],
                "follower": bots[1 - t.leader.index()],
                "leader-card": t.lead.to_string(),
                "follower-card": t.follow.to_string(),
                "winner": bots[t.winner.index()],
            })
        })
        .collect();
    Ok(success(obj(json!({
        "game": row.id,
        "bot1": bots[0],
        "bot2": bots[1],
        "bid1": bids[0],
        "bid2": bids[1],
        "score1": row.scores[0],
        "score2": row.scores[1],
        "hand1": hand1,
        "hand2": hand2,
        "started": row.started,
        "finished": row.finished,
        "round": game.history().len(),
        "tricks1": tricks[0],
        "tricks2": tricks[1],
        "forfeited_by": row.forfeited_by,
        "rounds": rounds,
    }))))
}

/// A line from the manager side to the hub's connection of one seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubLine<'a> {
    /// The seat's `status` reply as it stands now (JSON), and whether the
    /// seat has bid.
    View {
        /// Whether this seat's bid stands.
        has_bid: bool,
        /// The `status` reply.
        status: &'a str,
    },
    /// What the seat observes and may do, `[observation, legal actions]`
    /// (JSON), for bots inside the server.
    Observation(&'a str),
    /// The seat's last request stood (`{"result": "success"}`).
    Accepted,
    /// The seat's last request is refused with this reason; the decision
    /// stays open.
    Refused(&'a str),
    /// The game is over.
    Over,
}

impl<'a> HubLine<'a> {
    /// Reads a line written by [`HubLine::write`]; `None` for anything else.
    pub fn parse(line: &'a str) -> Option<HubLine<'a>> {
        if let Some(rest) = line.strip_prefix("view ") {
            let (flag, status) = rest.split_once(' ')?;
            return Some(HubLine::View {
                has_bid: flag == "b",
                status,
            });
        }
        if let Some(obs) = line.strip_prefix("obs ") {
            return Some(HubLine::Observation(obs));
        }
        if let Some(reason) = line.strip_prefix("refused ") {
            return Some(HubLine::Refused(reason));
        }
        match line {
            "ok" => Some(HubLine::Accepted),
            "over" => Some(HubLine::Over),
            _ => None,
        }
    }

    /// What a [`HubLine::View`] line starts with.
    fn view_prefix(has_bid: bool) -> &'static str {
        if has_bid {
            "view b "
        } else {
            "view - "
        }
    }

    /// The [`HubLine::View`] line of `status`, written in one string.
    pub fn view_of(has_bid: bool, status: &Status) -> String {
        status.reply_after(HubLine::view_prefix(has_bid))
    }

    /// The line.
    pub fn write(&self) -> String {
        match self {
            HubLine::View { has_bid, status } => {
                format!("{}{status}", HubLine::view_prefix(*has_bid))
            }
            HubLine::Observation(o) => format!("obs {o}"),
            HubLine::Accepted => "ok".into(),
            HubLine::Refused(r) => format!("refused {r}"),
            HubLine::Over => "over".into(),
        }
    }
}

/// A `bid` request as a line for the runner.
pub fn bid_line(bid: i64) -> String {
    format!("bid {bid}")
}

/// A `play` request as a line for the runner.
pub fn play_line(card: Card) -> String {
    format!("play {card}")
}

/// The 2014 API as the manager side of a [`Dialect`], one per seat of one
/// game: every refusal lets the bot try again within the same move time,
/// and a request's success is told only once it is applied.
#[derive(Debug, Clone)]
pub struct SkullWhistRest {
    game: i64,
    opponent: i64,
    observations: bool,
}

impl SkullWhistRest {
    /// The seat of a bot in game `game` against bot `opponent`.
    pub fn new(game: i64, opponent: i64) -> Self {
        SkullWhistRest {
            game,
            opponent,
            observations: false,
        }
    }

    /// Also writes [`HubLine::Observation`] lines (for bots inside the
    /// server that choose with the rules' observation).
    pub fn with_observations(mut self) -> Self {
        self.observations = true;
        self
    }

    fn view(&self, game: &SkullWhist, seat: Seat, out: &mut Vec<String>) {
        if game.is_over() {
            out.push(HubLine::Over.write());
            return;
        }
        let status = Status::of(self.game, self.opponent, &game.observation(seat));
        let has_bid = game.bids()[seat.index()].is_some();
        out.push(HubLine::view_of(has_bid, &status));
        if self.observations {
            let o = json!([
                game.observation(seat),
                game.legal_vec(seat)
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
            ]);
            out.push(HubLine::Observation(&o.to_string()).write());
        }
    }
}

/// Decodes a request line (`bid N`, `play C`) of `seat`.
pub fn decode_request(
    game: &SkullWhist,
    seat: Seat,
    line: &str,
) -> Result<SkullWhistAction, Refusal> {
    match line.split_once(' ') {
        Some(("bid", n)) => {
            let n: i64 = n
                .parse()
                .map_err(|_| Refusal("key 'bid' must be an integer".into()))?;
            decode_bid(game, seat, n)
        }
        Some(("play", c)) => decode_play(game, seat, parse_card(c)?),
        _ => Err(Refusal(format!("unknown request '{line}'"))),
    }
}

impl Dialect<SkullWhist> for SkullWhistRest {
    fn kind(&self) -> DialectKind {
        DialectKind::SkullWhistRest
    }

    fn hello(&mut self, game: &SkullWhist, seat: Seat, out: &mut Vec<String>) {
        self.view(game, seat, out);
    }

    fn event(
        &mut self,
        game: &SkullWhist,
        seat: Seat,
        event: &SkullWhistEvent,
        out: &mut Vec<String>,
    ) -> Flow {
        // One view per batch of events: the status is that of the game now,
        // so only the last event this seat sees writes it.
        let last = game.events().iter().rev().find(|e| e.visible_to(seat));
        if last.is_some_and(|l| std::ptr::eq(l, event)) {
            self.view(game, seat, out);
        }
        Flow::Continue
    }

    fn prompt(
        &mut self,
        _game: &SkullWhist,
        _seat: Seat,
        _legal: &[SkullWhistAction],
        _deadline_ms: u64,
        _out: &mut Vec<String>,
    ) {
    }

    fn decode(
        &mut self,
        game: &SkullWhist,
        seat: Seat,
        line: &str,
    ) -> Result<Reply<SkullWhistAction>, RuleError> {
        Ok(Reply::Action(decode_request(game, seat, line)?))
    }

    fn goodbye(&mut self, _game: &SkullWhist, _seat: Seat, out: &mut Vec<String>) {
        out.push(HubLine::Over.write());
    }

    fn refuse(
        &mut self,
        _game: &SkullWhist,
        _seat: Seat,
        error: &RuleError,
        out: &mut Vec<String>,
    ) -> bool {
        out.push(HubLine::Refused(&Refusal::from(error.clone()).0).write());
        true
    }

    fn accepted(&mut self, _game: &SkullWhist, _seat: Seat, out: &mut Vec<String>) {
        out.push(HubLine::Accepted.write());
    }
}

fn obj(v: Value) -> Obj {
    match v {
        Value::Object(m) => m,
        other => {
            let mut m = Obj::new();
            m.insert("value".into(), other);
            m
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::skullwhist::SkullWhistVariant;

    fn game() -> SkullWhist {
        SkullWhist::new(&SkullWhistVariant {}, 2, 7).unwrap()
    }

    #[test]
    fn bids_are_refused_with_the_2014_reasons() {
        let mut g = game();
        assert_eq!(
            decode_bid(&g, Seat(0), 0),
            Err(Refusal("bid 0 is out of range (1 to 13)".into()))
        );
        assert_eq!(
            decode_bid(&g, Seat(0), -5),
            Err(Refusal("bid -5 is out of range (1 to 13)".into()))
        );
        assert_eq!(
            decode_bid(&g, Seat(0), 300),
            Err(Refusal("bid 300 is out of range (1 to 13)".into()))
        );
        let a = decode_bid(&g, Seat(0), 4).unwrap();
        assert_eq!(a, SkullWhistAction::Bid(4));
        g.apply(Seat(0), a).unwrap();
        for bid in [4, 300] {
            assert_eq!(
                decode_bid(&g, Seat(0), bid),
                Err(Refusal("you have already bid".into()))
            );
        }
    }

    #[test]
    fn plays_are_refused_with_the_2014_reasons() {
        let mut g = game();
        assert_eq!(
            parse_card("X99"),
            Err(Refusal("'X99' is not a card (expected e.g. H05)".into()))
        );
        let hand = dealt_hand(g.events(), Seat(0)).unwrap();
        assert_eq!(
            decode_play(&g, Seat(0), hand[0]),
            Err(Refusal("play begins when both players have bid".into()))
        );
        g.apply(Seat(0), SkullWhistAction::Bid(3)).unwrap();
        g.apply(Seat(1), SkullWhistAction::Bid(3)).unwrap();
        let leader = g.to_act().first().unwrap();
        let other = Seat(1 - leader.0);
        let theirs = dealt_hand(g.events(), other).unwrap();
        assert_eq!(
            decode_play(&g, other, theirs[0]),
            Err(Refusal("not your turn".into()))
        );
        assert_eq!(
            decode_play(&g, leader, theirs[0]),
            Err(Refusal(format!("{} is not in your hand", theirs[0])))
        );
        let mine = dealt_hand(g.events(), leader).unwrap();
        assert_eq!(
            decode_play(&g, leader, mine[0]),
            Ok(SkullWhistAction::Play(mine[0]))
        );
    }

    #[test]
    fn status_shows_the_opponent_bid_only_after_own_bid() {
        let mut g = game();
        g.apply(Seat(1), SkullWhistAction::Bid(5)).unwrap();
        let s = Status::of(9, 2, &g.observation(Seat(0)));
        assert_eq!(s.opponent_bid, None);
        assert_eq!(s.round, Some(1));
        assert_eq!(s.your_turn, Some(false));
        g.apply(Seat(0), SkullWhistAction::Bid(2)).unwrap();
        let s = Status::of(9, 2, &g.observation(Seat(0)));
        assert_eq!(s.opponent_bid, Some(5));
        let reply = s.reply();
        assert_eq!(reply["result"], "success");
        assert_eq!(reply["opponent-bid"], 5);
        assert_eq!(reply["game"], 9);
    }

    #[test]
    fn a_view_line_is_the_status_reply_after_its_prefix() {
        let mut g = game();
        for step in 0..6 {
            for seat in [Seat(0), Seat(1)] {
                let s = Status::of(9, 2, &g.observation(seat));
                for has_bid in [false, true] {
                    let line = HubLine::view_of(has_bid, &s);
                    let text = s.reply_text();
                    assert_eq!(
                        line,
                        HubLine::View {
                            has_bid,
                            status: &text
                        }
                        .write(),
                        "step {step}"
                    );
                    assert_eq!(
                        HubLine::parse(&line),
                        Some(HubLine::View {
                            has_bid,
                            status: &text
                        })
                    );
                }
            }
            let Some(seat) = g.to_act().first() else {
                break;
            };
            let a = g.legal_vec(seat)[0];
            g.apply(seat, a).unwrap();
        }
    }
}
