//! Psychological Jujitsu (seed 002): the bot is an HTTP server, and for every
//! decision Croupier POSTs one JSON document holding the whole match so far.
//! The bot answers with the number of its bid card as `text/plain`.
//!
//! ```json
//! {"match":[5,6],"myTimeRemainingMs":null,"opponentTimeRemainingMs":null,
//!  "rounds":[{"lot":[4],"nextVictoryCard":1,"turns":[]}],
//!  "myPointsTotal":0,"opponentPointsTotal":0,"gameEnded":false}
//! ```
//!
//! The document is built from the seat's observation, which never holds the
//! opponent's bid of the current turn (it is sealed until both are in). A
//! bid the server had to play at random (invalid, illegal, late or missing
//! answer, or spent time budget) is flagged `…ResponseLegal: false` in later
//! documents. After the last turn each bot gets one document with
//! `gameEnded: true`; its answer is ignored.
//!
//! See `docs/protocol/jujitsu.md`.

use std::collections::HashSet;

use croupier_rules::goofspiel::{Goofspiel, GoofspielObservation, TieRule};
use croupier_rules::{Game, RuleError, Seat};
use serde::{Deserialize, Serialize};

use crate::{Dialect, DialectKind, Flow, Reply};

/// The document POSTed to a Psychological Jujitsu bot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    /// Cards per round for the whole match.
    #[serde(rename = "match")]
    pub match_rounds: Vec<u8>,
    /// This bot's thinking time left in the match; `None` = unlimited.
    pub my_time_remaining_ms: Option<u64>,
    /// The opponent's thinking time left; `None` = unlimited.
    pub opponent_time_remaining_ms: Option<u64>,
    /// Every round so far; the last is the current one.
    pub rounds: Vec<RoundDoc>,
    /// This bot's points in the match so far.
    pub my_points_total: u32,
    /// The opponent's points in the match so far.
    pub opponent_points_total: u32,
    /// Whether the match is over (the answer is then ignored).
    pub game_ended: bool,
}

/// One round of a [`Document`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoundDoc {
    /// Victory cards in the lot (for a finished round: those left unwon).
    pub lot: Vec<u8>,
    /// The next victory card on the pile, if shown.
    pub next_victory_card: Option<u8>,
    /// The turns played in this round.
    pub turns: Vec<TurnDoc>,
}

/// One turn of a [`RoundDoc`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnDoc {
    /// The victory card drawn into the lot.
    pub drawn_victory_card: u8,
    /// This bot's bid card.
    pub my_bid: u8,
    /// The opponent's bid card.
    pub opponent_bid: u8,
    /// Points this bot won on the turn.
    pub my_points_gained: u32,
    /// Points the opponent won on the turn.
    pub opponent_points_gained: u32,
    /// False when the server played a random card for this bot.
    pub my_response_legal: bool,
    /// False when the server played a random card for the opponent.
    pub opponent_response_legal: bool,
}

impl Document {
    /// The document for `seat`, from its observation. `random` holds the
    /// (round, turn, seat) of every bid the server played at random.
    pub fn build(
        obs: &GoofspielObservation,
        ties: TieRule,
        random: &HashSet<(usize, usize, u8)>,
        clocks: [Option<u64>; 2],
        ended: bool,
    ) -> Document {
        let me = obs.seat.index().min(1) as u8;
        let opp = 1 - me;
        let rounds = obs
            .history
            .iter()
            .enumerate()
            .map(|(r, turns)| {
                let current = r == obs.round && !ended;
                let lot = if current {
                    obs.lot.clone()
                } else {
                    unwon_lot(turns, ties)
                };
                RoundDoc {
                    lot,
                    next_victory_card: if current { obs.next } else { None },
                    turns: turns
                        .iter()
                        .enumerate()
                        .map(|(t, turn)| TurnDoc {
                            drawn_victory_card: turn.drawn,
                            my_bid: turn.bids[0],
                            opponent_bid: turn.bids[1],
                            my_points_gained: turn.gained[0],
                            opponent_points_gained: turn.gained[1],
                            my_response_legal: !random.contains(&(r, t, me)),
                            opponent_response_legal: !random.contains(&(r, t, opp)),
                        })
                        .collect(),
                }
            })
            .collect();
        Document {
            match_rounds: obs.rounds.clone(),
            my_time_remaining_ms: clocks[usize::from(me)],
            opponent_time_remaining_ms: clocks[usize::from(opp)],
            rounds,
            my_points_total: obs.my_points,
            opponent_points_total: obs.opponent_points,
            game_ended: ended,
        }
    }
}

/// The victory cards a finished round left in its lot.
fn unwon_lot(turns: &[croupier_rules::goofspiel::TurnResult], ties: TieRule) -> Vec<u8> {
    let mut lot = Vec::new();
    for t in turns {
        lot.push(t.drawn);
        let tie = t.bids[0] == t.bids[1];
        if !tie || ties == TieRule::Discard {
            lot.clear();
        }
    }
    lot
}

/// Reads a bot's answer: the bid number, surrounding white space allowed.
pub fn parse_bid(body: &str) -> Result<u8, RuleError> {
    let text = body.trim();
    let n: u64 = text.parse().map_err(|_| {
        RuleError::malformed(format!(
            "expected the number of a bid card, got '{}'",
            crate::gops::truncate(text)
        ))
    })?;
    u8::try_from(n).map_err(|_| RuleError::illegal(format!("you do not hold card {n}")))
}

/// The manager side of the Psychological Jujitsu dialect.
#[derive(Debug, Default, Clone)]
pub struct JujitsuDialect {
    random: HashSet<(usize, usize, u8)>,
    clocks: [Option<u64>; 2],
}

impl JujitsuDialect {
    fn document(&self, game: &Goofspiel, seat: Seat, ended: bool) -> String {
        let doc = Document::build(
            &game.observation(seat),
            game.variant().ties,
            &self.random,
            self.clocks,
            ended,
        );
        // Serialising plain data cannot fail.
        serde_json::to_string(&doc).unwrap_or_default()
    }
}

impl Dialect<Goofspiel> for JujitsuDialect {
    fn kind(&self) -> DialectKind {
        DialectKind::Jujitsu
    }

    fn hello(&mut self, _game: &Goofspiel, _seat: Seat, _out: &mut Vec<String>) {}

    fn event(
        &mut self,
        _game: &Goofspiel,
        _seat: Seat,
        _event: &<Goofspiel as Game>::Event,
        _out: &mut Vec<String>,
    ) -> Flow {
        Flow::Continue
    }

    fn prompt(
        &mut self,
        game: &Goofspiel,
        seat: Seat,
        _legal: &[<Goofspiel as Game>::Action],
        _deadline_ms: u64,
        out: &mut Vec<String>,
    ) {
        out.push(self.document(game, seat, false));
    }

    fn decode(
        &mut self,
        game: &Goofspiel,
        seat: Seat,
        line: &str,
    ) -> Result<Reply<<Goofspiel as Game>::Action>, RuleError> {
        let n = parse_bid(line)?;
        game.validate(seat, &n.to_string()).map(Reply::Action)
    }

    fn goodbye(&mut self, game: &Goofspiel, seat: Seat, out: &mut Vec<String>) {
        out.push(self.document(game, seat, true));
    }

    fn fault_ruled(&mut self, game: &Goofspiel, seat: Seat, faulty: Seat) {
        let obs = game.observation(seat);
        let turn = obs.history.get(obs.round).map_or(0, Vec::len);
        self.random
            .insert((obs.round, turn, faulty.index().min(1) as u8));
    }

    fn clocks(&mut self, remaining_ms: &[Option<u64>]) {
        for (i, c) in self.clocks.iter_mut().enumerate() {
            *c = remaining_ms.get(i).copied().flatten();
        }
    }
}

/// The Jujitsu dialect as a dialect of `G`, when `G` is Goofspiel.
pub fn make<G: Game>() -> Option<Box<dyn Dialect<G>>> {
    crate::as_dialect_of::<G, Goofspiel>(Box::new(JujitsuDialect::default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::goofspiel::{Bid, GoofspielVariant};

    fn jujitsu(rounds: Vec<u8>) -> Goofspiel {
        let v = GoofspielVariant {
            rounds,
            ties: TieRule::Carry,
            preview: true,
        };
        Goofspiel::new(&v, 2, 11).unwrap()
    }

    fn doc(d: &mut JujitsuDialect, g: &Goofspiel, seat: u8) -> Document {
        let mut out = Vec::new();
        d.prompt(g, Seat(seat), &[], 1000, &mut out);
        assert_eq!(out.len(), 1);
        serde_json::from_str(&out[0]).unwrap()
    }

    #[test]
    fn the_first_document_has_one_round_and_no_turns() {
        let g = jujitsu(vec![5, 6]);
        let mut d = JujitsuDialect::default();
        let text = {
            let mut out = Vec::new();
            d.prompt(&g, Seat(0), &[], 1000, &mut out);
            out.remove(0)
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        // The seed's field names, exactly.
        for key in [
            "match",
            "myTimeRemainingMs",
            "opponentTimeRemainingMs",
            "rounds",
            "myPointsTotal",
            "opponentPointsTotal",
            "gameEnded",
        ] {
            assert!(v.get(key).is_some(), "{key} missing in {v}");
        }
        assert_eq!(v["match"], serde_json::json!([5, 6]));
        assert!(v["myTimeRemainingMs"].is_null());
        assert_eq!(v["rounds"].as_array().unwrap().len(), 1);
        let r = &v["rounds"][0];
        assert_eq!(r["lot"].as_array().unwrap().len(), 1);
        assert!(r["nextVictoryCard"].is_u64());
        assert_eq!(r["turns"], serde_json::json!([]));
        assert_eq!(v["gameEnded"], false);
    }

    #[test]
    fn turns_are_told_from_each_side_with_legality() {
        let mut g = jujitsu(vec![5, 6]);
        let mut d0 = JujitsuDialect::default();
        let mut d1 = JujitsuDialect::default();
        g.apply(Seat(0), Bid(5)).unwrap();
        // Seat 1's answer was refused: a card is played for it at random.
        d0.fault_ruled(&g, Seat(0), Seat(1));
        d1.fault_ruled(&g, Seat(1), Seat(1));
        g.apply(Seat(1), Bid(2)).unwrap();
        let a = doc(&mut d0, &g, 0);
        let b = doc(&mut d1, &g, 1);
        let (ta, tb) = (&a.rounds[0].turns[0], &b.rounds[0].turns[0]);
        assert_eq!((ta.my_bid, ta.opponent_bid), (5, 2));
        assert_eq!((tb.my_bid, tb.opponent_bid), (2, 5));
        assert_eq!(ta.my_points_gained, tb.opponent_points_gained);
        assert!(ta.my_points_gained > 0 && tb.my_points_gained == 0);
        assert!(ta.my_response_legal && !ta.opponent_response_legal);
        assert!(!tb.my_response_legal && tb.opponent_response_legal);
        assert_eq!(a.my_points_total, ta.my_points_gained);
    }

    #[test]
    fn nothing_reveals_the_opponents_sealed_bid() {
        let mut g = jujitsu(vec![5]);
        let mut d = JujitsuDialect::default();
        let before = doc(&mut d, &g, 1);
        g.apply(Seat(0), Bid(4)).unwrap();
        let after = doc(&mut d, &g, 1);
        // Seat 0 has bid; seat 1's document is the same as before.
        assert_eq!(before, after);
    }

    #[test]
    fn a_finished_round_shows_its_unwon_lot_and_the_last_document_ends() {
        let mut g = jujitsu(vec![3, 3]);
        let mut d = JujitsuDialect::default();
        for b in 1..=3 {
            g.apply(Seat(0), Bid(b)).unwrap();
            g.apply(Seat(1), Bid(b)).unwrap();
        }
        // Three ties with ties=carry: the whole round's cards stay unwon.
        let mid = doc(&mut d, &g, 0);
        assert_eq!(mid.rounds.len(), 2);
        let mut left = mid.rounds[0].lot.clone();
        left.sort_unstable();
        assert_eq!(left, vec![1, 2, 3]);
        assert_eq!(mid.rounds[0].next_victory_card, None);
        for b in 1..=3 {
            g.apply(Seat(0), Bid(b)).unwrap();
            g.apply(Seat(1), Bid(4 - b)).unwrap();
        }
        assert!(g.is_over());
        d.clocks(&[Some(0), Some(1500)]);
        let mut out = Vec::new();
        d.goodbye(&g, Seat(0), &mut out);
        let end: Document = serde_json::from_str(&out[0]).unwrap();
        assert!(end.game_ended);
        assert_eq!(end.rounds.len(), 2);
        assert_eq!(end.rounds[1].turns.len(), 3);
        assert_eq!(end.my_time_remaining_ms, Some(0));
        assert_eq!(end.opponent_time_remaining_ms, Some(1500));
    }

    #[test]
    fn answers_are_plain_numbers() {
        let g = jujitsu(vec![5]);
        let mut d = JujitsuDialect::default();
        assert_eq!(d.decode(&g, Seat(0), "3\n"), Ok(Reply::Action(Bid(3))));
        assert_eq!(d.decode(&g, Seat(0), " 5 "), Ok(Reply::Action(Bid(5))));
        for bad in ["", "three", "3.0", "<html>3</html>", "-1"] {
            assert!(
                matches!(d.decode(&g, Seat(0), bad), Err(RuleError::Malformed(_))),
                "{bad}"
            );
        }
        for illegal in ["0", "6", "99999999999999999999"] {
            assert!(d.decode(&g, Seat(0), illegal).is_err(), "{illegal}");
        }
    }
}
