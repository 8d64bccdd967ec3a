//! The bot side of the GOPS quiz runner's protocol (seed 004).
//!
//! Per turn the runner writes `Competition card:  <v>`, the bot answers its
//! bid, then the runner writes `Opponent's bid:  <v>`. Like the quiz's own
//! bots (`$stdin.gets[/\d+/]`), the client takes the first run of digits of
//! each line and does not look at the words; lines with no digits at all are
//! skipped.

use std::io::{BufRead, Write};

use anyhow::{bail, Context as _};
use croupier_bots::{bot_rng, Strategy};
use croupier_dialects::gops::first_number;
use croupier_rules::goofspiel::{
    Bid, Goofspiel, GoofspielEvent, GoofspielObservation, GoofspielVariant, TieRule, TurnResult,
};
use croupier_rules::Seat;

use super::{answer, ClientOptions, Lines};

/// What the bot knows of the game, kept as a Goofspiel observation from its
/// own side (seat 0: the protocol does not say which seat the bot has).
#[derive(Debug)]
struct Tracker {
    obs: GoofspielObservation,
}

impl Tracker {
    fn new(cards: u8) -> Self {
        let all: Vec<u8> = (1..=cards).collect();
        Tracker {
            obs: GoofspielObservation {
                seat: Seat(0),
                rounds: vec![cards],
                round: 0,
                hand: all.clone(),
                opponent_hand: all.clone(),
                lot: Vec::new(),
                current: None,
                next: None,
                undrawn: all,
                my_bid: None,
                opponent_has_bid: false,
                my_points: 0,
                opponent_points: 0,
                history: vec![Vec::new()],
            },
        }
    }

    /// A victory card is turned: it leaves the undrawn set and forms the lot
    /// (ties discard, so the lot never carries over).
    fn draw(&mut self, card: u8) {
        let obs = &mut self.obs;
        obs.undrawn.retain(|c| *c != card);
        obs.current = Some(card);
        obs.lot = vec![card];
        obs.my_bid = None;
        obs.opponent_has_bid = false;
    }

    fn legal(&self) -> Vec<Bid> {
        self.obs.hand.iter().map(|c| Bid(*c)).collect()
    }

    /// Both bids are known: the higher takes the lot, a tie discards it.
    fn resolve(&mut self, mine: u8, theirs: u8) -> GoofspielEvent {
        let obs = &mut self.obs;
        obs.hand.retain(|c| *c != mine);
        obs.opponent_hand.retain(|c| *c != theirs);
        let drawn = obs.current.take().unwrap_or(0);
        let value: u32 = obs.lot.drain(..).map(u32::from).sum();
        let (winner, gained) = match mine.cmp(&theirs) {
            std::cmp::Ordering::Greater => (Some(Seat(0)), [value, 0]),
            std::cmp::Ordering::Less => (Some(Seat(1)), [0, value]),
            std::cmp::Ordering::Equal => (None, [0, 0]),
        };
        obs.my_points += gained[0];
        obs.opponent_points += gained[1];
        obs.my_bid = None;
        if let Some(turns) = obs.history.last_mut() {
            turns.push(TurnResult {
                drawn,
                bids: [mine, theirs],
                gained,
            });
        }
        GoofspielEvent::Reveal {
            bids: [mine, theirs],
            winner,
            points: if winner.is_some() { value } else { 0 },
        }
    }
}

/// Where the turn stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Expect {
    /// `Competition card:  <v>`.
    Card,
    /// `Opponent's bid:  <v>`, after the bot bid this.
    OpponentBid(u8),
}

fn card_of(n: u64, line: &str, number: usize) -> anyhow::Result<u8> {
    match u8::try_from(n) {
        Ok(c) => Ok(c),
        Err(_) => bail!("line {number} '{line}': {n} is no card"),
    }
}

/// Runs `strategy` as a bot of the GOPS quiz runner, for one round of
/// `opts.goofspiel_cards` cards (ties discard, no preview).
///
/// Ends after the last turn or at the end of input. The opponent's bid is
/// taken as reported; the bot's own bid is assumed to have been played.
pub fn run_gops(
    mut strategy: Box<dyn Strategy<Goofspiel>>,
    opts: &ClientOptions,
    input: impl BufRead,
    mut output: impl Write,
) -> anyhow::Result<()> {
    let cards = opts.goofspiel_cards;
    let variant = GoofspielVariant {
        rounds: vec![cards],
        ties: TieRule::Discard,
        preview: false,
    };
    variant
        .validate()
        .context("the gops dialect needs 3 to 31 cards")?;
    let mut rng = bot_rng(opts.seed);
    let mut lines = Lines::new(input);
    let mut tracker = Tracker::new(cards);
    strategy.new_game(Seat(0), &variant, 2);
    strategy.notify(&GoofspielEvent::RoundStart { round: 0, cards });
    let mut expect = Expect::Card;
    let mut turns = 0;
    while turns < usize::from(cards) {
        let Some((number, line)) = lines.next_line()? else {
            return Ok(());
        };
        let Some(n) = first_number(line) else {
            continue;
        };
        let n = card_of(n, line, number)?;
        match expect {
            Expect::Card => {
                tracker.draw(n);
                strategy.notify(&GoofspielEvent::Draw {
                    card: n,
                    next: None,
                });
                let legal = tracker.legal();
                if legal.is_empty() {
                    bail!("line {number}: asked to bid with no card left");
                }
                let Bid(bid) = strategy.act(&tracker.obs, &legal, &mut rng);
                tracker.obs.my_bid = Some(bid);
                strategy.notify(&GoofspielEvent::Sealed {
                    seat: Seat(0),
                    card: bid,
                });
                answer(&mut output, &bid.to_string())?;
                expect = Expect::OpponentBid(bid);
            }
            Expect::OpponentBid(mine) => {
                let reveal = tracker.resolve(mine, n);
                strategy.notify(&reveal);
                turns += 1;
                expect = Expect::Card;
            }
        }
    }
    let points = [tracker.obs.my_points, tracker.obs.opponent_points];
    strategy.notify(&GoofspielEvent::RoundEnd {
        points,
        discarded: 0,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracker_scores_the_higher_bid_and_discards_ties() {
        let mut t = Tracker::new(5);
        t.draw(4);
        assert_eq!(t.obs.undrawn, [1, 2, 3, 5]);
        t.resolve(5, 2);
        assert_eq!((t.obs.my_points, t.obs.opponent_points), (4, 0));
        t.draw(3);
        t.resolve(1, 1);
        assert_eq!((t.obs.my_points, t.obs.opponent_points), (4, 0));
        assert_eq!(t.obs.hand, [2, 3, 4]);
        assert_eq!(t.obs.opponent_hand, [3, 4, 5]);
        assert_eq!(t.obs.history[0].len(), 2);
        assert!(t.obs.lot.is_empty());
    }
}
