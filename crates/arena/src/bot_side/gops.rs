//! The bot side of the GOPS quiz runner's protocol (seed 004).
//!
//! Per turn the runner writes `Competition card:  <v>`, the bot answers its
//! bid, then the runner writes `Opponent's bid:  <v>`. Like the quiz's own
//! bots (`$stdin.gets[/\d+/]`), the client takes the first run of digits of
//! each line and does not look at the words; lines with no digits at all are
//! skipped. The game the bot rebuilds from those lines is the dialect's bot
//! side ([`croupier_dialects::bot::gops::Tracker`]).

use std::io::{BufRead, Write};

use super::error::{At as _, BotSideError};
use croupier_bots::{bot_rng, Strategy};
use croupier_dialects::bot::gops::Tracker;
use croupier_dialects::gops::first_number;
use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielEvent, GoofspielVariant, TieRule};
use croupier_rules::Seat;

use super::io::{answer, ClientOptions, Lines};

/// Where the turn stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Expect {
    /// `Competition card:  <v>`.
    Card,
    /// `Opponent's bid:  <v>`, after the bot bid this.
    OpponentBid(u8),
}

fn card_of(n: u64, line: &str, number: usize) -> Result<u8, BotSideError> {
    match u8::try_from(n) {
        Ok(c) => Ok(c),
        Err(_) => Err(BotSideError::protocol(format!(
            "line {number} '{line}': {n} is no card"
        ))),
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
) -> Result<(), BotSideError> {
    let cards = opts.goofspiel_cards;
    let variant = GoofspielVariant {
        rounds: vec![cards],
        ties: TieRule::Discard,
        preview: false,
    };
    variant
        .validate()
        .at(|| "the gops dialect needs 3 to 31 cards")?;
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
                    return Err(BotSideError::protocol(format!(
                        "line {number}: asked to bid with no card left"
                    )));
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
