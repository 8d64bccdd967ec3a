//! The bot side of Psychological Jujitsu: a seed-002 document in, a bid out.
//! What a document says is the dialect's bot side
//! ([`croupier_dialects::bot::jujitsu`]).

use croupier_bots::{BotRng, Strategy};
use croupier_dialects::bot::jujitsu::decision;
use croupier_rules::goofspiel::Goofspiel;

use super::BotSideError;

/// The bid `strategy` makes for the document `body`.
pub fn jujitsu_bid(
    strategy: &mut dyn Strategy<Goofspiel>,
    body: &str,
    rng: &mut BotRng,
) -> Result<u8, BotSideError> {
    let (obs, legal) = decision(body)?;
    Ok(strategy.act(&obs, &legal, rng).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_gets_a_bid_from_the_hand_and_bad_ones_are_errors() {
        let mut s: Box<dyn Strategy<Goofspiel>> =
            <Goofspiel as croupier_bots::Builtins>::builtin("random").unwrap();
        let mut rng = croupier_bots::bot_rng(1);
        let doc = r#"{"match":[5],"myTimeRemainingMs":null,"opponentTimeRemainingMs":null,"rounds":[{"lot":[3],"nextVictoryCard":null,"turns":[{"drawnVictoryCard":1,"myBid":2,"opponentBid":4,"myPointsGained":0,"opponentPointsGained":1,"myResponseLegal":true,"opponentResponseLegal":true}]}],"myPointsTotal":0,"opponentPointsTotal":1,"gameEnded":false}"#;
        let bid = jujitsu_bid(s.as_mut(), doc, &mut rng).unwrap();
        assert!([1, 3, 4, 5].contains(&bid), "{bid}");
        assert!(jujitsu_bid(s.as_mut(), "{}", &mut rng).is_err());
    }
}
