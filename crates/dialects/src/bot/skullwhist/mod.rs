//! The bot side of the SkullWhist REST API (the 2014 SkullSpace API): the
//! JSON replies a bot reads, and the game it rebuilds from them. Pure: the
//! HTTP calls and the polling loop live in `croupier_arena::bot_side::skullwhist_rest`.
//!
//! The server only sends cards and a status, so [`GameView`] rebuilds the
//! [`SkullWhistObservation`] a strategy expects (hand, bids, trick, leader,
//! led card, tricks won and the full trick history) and the events it would
//! see in a local match. In that view this bot is always seat 0 and the
//! opponent seat 1, whatever the server's seat order. Trick winners and the
//! cards that may be played come from the rules ([`trick_winner`],
//! [`playable`]).

use std::fmt;

use croupier_rules::skullwhist::{
    playable, trick_winner, Card, CardSet, Phase, SkullWhistAction, SkullWhistEvent,
    SkullWhistObservation, Trick, TRICKS,
};
use croupier_rules::Seat;
use serde_json::{Map, Value};

/// This bot's seat in its own view of a game.
pub const ME: Seat = Seat(0);
/// The opponent's seat in this bot's view of a game.
pub const OPPONENT: Seat = Seat(1);

mod reply;

use reply::{disagrees, small, Result};
pub use reply::{
    int_field, parse_cards, parse_reply, parse_status, required_int, Reply, ReplyError, Status,
};

// ---------------------------------------------------------------------------
// This bot's view of a game

/// This bot's side of a game, rebuilt from the `new-game` and `status`
/// replies: what [`SkullWhistObservation`] needs, and the events the bot
/// would have seen in a local match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameView {
    hand: Vec<Card>,
    my_bid: Option<u8>,
    opponent_bid: Option<u8>,
    history: Vec<Trick>,
    tricks_won: [u8; 2],
    /// The card this bot led to the current trick, while the opponent has
    /// not answered.
    my_lead: Option<Card>,
    /// The card the opponent led to the current trick.
    their_lead: Option<Card>,
    /// Whether the first leader (the `Bids` event) is known yet.
    bids_announced: bool,
    events: Vec<SkullWhistEvent>,
}

impl GameView {
    /// A new game with the dealt hand.
    pub fn new(mut hand: Vec<Card>) -> Self {
        hand.sort();
        let events = vec![SkullWhistEvent::Deal {
            seat: ME,
            hand: hand.clone(),
        }];
        GameView {
            hand,
            my_bid: None,
            opponent_bid: None,
            history: Vec::with_capacity(usize::from(TRICKS)),
            tricks_won: [0; 2],
            my_lead: None,
            their_lead: None,
            bids_announced: false,
            events,
        }
    }

    /// The events learnt since the last call, in game order.
    pub fn take_events(&mut self) -> Vec<SkullWhistEvent> {
        std::mem::take(&mut self.events)
    }

    /// Finished tricks so far.
    pub fn history(&self) -> &[Trick] {
        &self.history
    }

    /// The opponent's bid, once the server has shown it.
    pub fn opponent_bid(&self) -> Option<u8> {
        self.opponent_bid
    }

    /// Cards still in hand.
    pub fn hand(&self) -> &[Card] {
        &self.hand
    }

    /// The observation and legal actions for the bid.
    pub fn bid_turn(&self) -> (SkullWhistObservation, Vec<SkullWhistAction>) {
        let obs = SkullWhistObservation {
            seat: ME,
            phase: Phase::Bidding,
            hand: self.hand.clone(),
            my_bid: None,
            opponent_bid: None,
            trick: 0,
            leader: None,
            lead_card: None,
            to_act: true,
            tricks_won: [0, 0],
            history: Vec::new(),
        };
        (obs, (1..=TRICKS).map(SkullWhistAction::Bid).collect())
    }

    /// Notes the bid the server accepted.
    pub fn record_bid(&mut self, bid: u8) {
        self.my_bid = Some(bid);
        self.events.push(SkullWhistEvent::Sealed { seat: ME, bid });
    }

    fn complete_trick(&mut self, leader: Seat, lead: Card, follow: Card) {
        let winner = trick_winner(leader, lead, follow);
        self.history.push(Trick {
            leader,
            lead,
            follow,
            winner,
        });
        self.tricks_won[winner.index()] += 1;
        self.events.push(SkullWhistEvent::TrickWon {
            trick: self.history.len() as u8,
            winner,
        });
        self.my_lead = None;
        self.their_lead = None;
    }

    fn announce_bids(&mut self, first_leader: Seat) {
        if self.bids_announced {
            return;
        }
        self.bids_announced = true;
        if let (Some(mine), Some(theirs)) = (self.my_bid, self.opponent_bid) {
            self.events.push(SkullWhistEvent::Bids {
                bids: [mine, theirs],
                leader: first_leader,
            });
        }
    }

    /// Whether `status` shows an older state of the game than this view
    /// has already seen: an earlier round, or this bot's turn in a round
    /// it has already played. A server of several instances may answer
    /// from a copy that lags behind; a client asks again rather than take
    /// it for a contradiction (issue 50).
    pub fn is_behind(&self, status: &Status) -> bool {
        let next = self.history.len() as u8 + 1;
        match status.round {
            Some(round) if round < next => true,
            Some(round) if round == next => status.your_turn && self.my_lead.is_some(),
            _ => false,
        }
    }

    /// The trick being played, from 1.
    pub fn round(&self) -> u8 {
        self.history.len() as u8 + 1
    }

    /// Takes in a `status` of this game: completes the trick this bot led
    /// once the opponent has answered, notes the opponent's bid and led
    /// card, and checks that the server agrees with this view.
    pub fn update(&mut self, status: &Status) -> Result<()> {
        if self.opponent_bid.is_none() {
            self.opponent_bid = status.opponent_bid;
        }
        let Some(round) = status.round else {
            return Err(disagrees("status shows a game but no round"));
        };
        let next = self.history.len() as u8 + 1;
        if round == next + 1 {
            // The opponent answered the trick this bot led.
            let Some(lead) = self.my_lead else {
                return Err(disagrees(format!(
                    "status skipped to round {round} while this bot had not played in round {next}"
                )));
            };
            let follow = status.opponent_previous_card.ok_or_else(|| {
                disagrees(format!(
                    "status shows round {round} but no opponent-previous-card"
                ))
            })?;
            self.announce_bids(ME);
            self.events.push(SkullWhistEvent::Played {
                seat: OPPONENT,
                card: follow,
            });
            self.complete_trick(ME, lead, follow);
        } else if round != next {
            return Err(disagrees(format!(
                "status shows round {round} but this bot is in round {next}"
            )));
        }
        // The server's account of the previous trick must match this view.
        if let Some(last) = self.history.last() {
            let theirs = if last.leader == OPPONENT {
                last.lead
            } else {
                last.follow
            };
            if let Some(said) = status.opponent_previous_card.filter(|c| *c != theirs) {
                return Err(disagrees(format!(
                    "status says the opponent played {said} in round {}, but it played {theirs}",
                    self.history.len()
                )));
            }
            if let Some(won) = status.you_won_previous_round {
                if won != (last.winner == ME) {
                    return Err(disagrees(format!(
                        "status says this bot {} round {}, but by the rules it {}",
                        if won { "won" } else { "lost" },
                        self.history.len(),
                        if won { "lost" } else { "won" }
                    )));
                }
            }
        }
        if status.your_turn {
            if self.hand.is_empty() {
                // Caught by the bot_skullwhist fuzz target's check: a "round 14" would ask
                // a strategy to choose among no cards.
                return Err(disagrees(format!(
                    "status says it is this bot's turn in round {round}, but it has played all its cards"
                )));
            }
            if self.my_bid.is_none() {
                return Err(disagrees(
                    "status says it is this bot's turn to play before it has bid",
                ));
            }
            if self.my_lead.is_some() {
                return Err(disagrees(format!(
                    "status says it is this bot's turn, but it has played in round {round}"
                )));
            }
            match status.opponent_current_card {
                Some(card) => {
                    if self.their_lead.is_some_and(|c| c != card) {
                        return Err(disagrees(format!(
                            "the opponent's card in round {round} changed"
                        )));
                    }
                    if self.their_lead.is_none() {
                        self.announce_bids(OPPONENT);
                        self.their_lead = Some(card);
                        self.events.push(SkullWhistEvent::Played {
                            seat: OPPONENT,
                            card,
                        });
                    }
                }
                None => self.announce_bids(ME),
            }
        }
        Ok(())
    }

    /// The observation and legal cards when it is this bot's turn (after
    /// [`GameView::update`] with a status that says so).
    pub fn play_turn(&self) -> (SkullWhistObservation, Vec<SkullWhistAction>) {
        let leader = if self.their_lead.is_some() {
            OPPONENT
        } else {
            ME
        };
        let obs = SkullWhistObservation {
            seat: ME,
            phase: Phase::Playing,
            hand: self.hand.clone(),
            my_bid: self.my_bid,
            opponent_bid: self.opponent_bid,
            trick: self.history.len() as u8 + 1,
            leader: Some(leader),
            lead_card: self.their_lead,
            to_act: true,
            tricks_won: self.tricks_won,
            history: self.history.clone(),
        };
        let hand: CardSet = self.hand.iter().copied().collect();
        let legal = playable(hand, self.their_lead)
            .iter()
            .map(SkullWhistAction::Play)
            .collect();
        (obs, legal)
    }

    /// Notes a card the server accepted: it leaves the hand, and completes
    /// the trick when the opponent led.
    pub fn record_play(&mut self, card: Card) -> Result<()> {
        let Some(i) = self.hand.iter().position(|c| *c == card) else {
            return Err(disagrees(format!("{card} is not in this bot's hand")));
        };
        self.hand.remove(i);
        self.events.push(SkullWhistEvent::Played { seat: ME, card });
        match self.their_lead {
            Some(lead) => self.complete_trick(OPPONENT, lead, card),
            None => self.my_lead = Some(card),
        }
        Ok(())
    }

    /// Takes in the finished game's `old-game` record: the last trick if
    /// this bot led it, the score or forfeit; returns the result for the
    /// bot with id `me`.
    pub fn finish(&mut self, record: &Map<String, Value>, me: i64) -> Result<GameResult> {
        let bot1 = required_int(record, "bot1")?;
        let bot2 = required_int(record, "bot2")?;
        let (us, them) = if bot1 == me {
            ("1", "2")
        } else if bot2 == me {
            ("2", "1")
        } else {
            return Err(disagrees(format!(
                "old-game: this bot ({me}) did not play this game ({bot1} against {bot2})"
            )));
        };
        // The trick this bot led last, which status no longer shows.
        if let Some(lead) = self.my_lead {
            let number = self.history.len() + 1;
            let follow = record
                .get("rounds")
                .and_then(Value::as_array)
                .and_then(|rounds| {
                    rounds
                        .iter()
                        .find(|r| r.get("round").and_then(Value::as_u64) == Some(number as u64))
                })
                .and_then(|r| r.get("follower-card"))
                .and_then(Value::as_str)
                .and_then(|c| c.parse::<Card>().ok());
            if let Some(follow) = follow {
                self.events.push(SkullWhistEvent::Played {
                    seat: OPPONENT,
                    card: follow,
                });
                self.complete_trick(ME, lead, follow);
            }
        }
        if let Some(by) = int_field(record, "forfeited_by")? {
            let seat = if by == me { ME } else { OPPONENT };
            self.events.push(SkullWhistEvent::Forfeit { seat });
            return Ok(GameResult::Forfeit { by_me: by == me });
        }
        let mine = required_int(record, &format!("score{us}"))?;
        let theirs = required_int(record, &format!("score{them}"))?;
        let tricks = [
            small(int_field(record, &format!("tricks{us}"))?, "tricks")?.unwrap_or(0),
            small(int_field(record, &format!("tricks{them}"))?, "tricks")?.unwrap_or(0),
        ];
        self.events.push(SkullWhistEvent::Scored {
            tricks,
            scores: [mine, theirs],
        });
        Ok(GameResult::Scored {
            mine,
            theirs,
            tricks: tricks[0],
        })
    }
}

/// How a finished game ended for this bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameResult {
    /// Both played to the end.
    Scored {
        /// This bot's score.
        mine: i64,
        /// The opponent's score.
        theirs: i64,
        /// Tricks this bot took.
        tricks: u8,
    },
    /// A bot forfeited.
    Forfeit {
        /// Whether it was this bot.
        by_me: bool,
    },
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameResult::Scored {
                mine,
                theirs,
                tricks,
            } => {
                let verdict = match mine.cmp(theirs) {
                    std::cmp::Ordering::Greater => "won",
                    std::cmp::Ordering::Less => "lost",
                    std::cmp::Ordering::Equal => "tied",
                };
                write!(f, "took {tricks} tricks, {mine} to {theirs}: {verdict}")
            }
            GameResult::Forfeit { by_me: true } => write!(f, "forfeited by this bot"),
            GameResult::Forfeit { by_me: false } => write!(f, "forfeited by the opponent: won"),
        }
    }
}

#[cfg(test)]
mod tests;
