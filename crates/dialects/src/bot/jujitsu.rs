//! The bot side of Psychological Jujitsu (seed 002): a document in, the
//! observation and legal bids it describes out. Documents carry the whole
//! match, so a bot keeps no state between them.

use croupier_rules::goofspiel::{Bid, GoofspielObservation, TurnResult};
use croupier_rules::Seat;

use crate::jujitsu::Document;

/// A document a bot cannot decide on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// Not JSON, or not shaped as a document.
    #[error("not a Psychological Jujitsu document: {0}")]
    NotADocument(String),
    /// No round in progress.
    #[error("the document has no rounds")]
    NoRounds,
    /// More rounds played than the match plans.
    #[error("more rounds than the match plans")]
    TooManyRounds,
    /// A round of no cards, or of more than a round may have.
    #[error("a round of {0} cards")]
    RoundSize(u8),
    /// Every card of the round has been bid.
    #[error("no card left to bid")]
    NoCardLeft,
}

/// Largest number of cards in a round that a document may ask about.
const MAX_CARDS: u8 = croupier_rules::goofspiel::MAX_CARDS;

/// The observation a document describes, from the bot's side (seat 0).
pub fn observation(doc: &Document) -> Result<GoofspielObservation, DocumentError> {
    let Some(current) = doc.rounds.last() else {
        return Err(DocumentError::NoRounds);
    };
    let round = doc.rounds.len() - 1;
    let cards = *doc
        .match_rounds
        .get(round)
        .ok_or(DocumentError::TooManyRounds)?;
    if cards == 0 || cards > MAX_CARDS {
        return Err(DocumentError::RoundSize(cards));
    }
    let full = |played: &mut dyn Iterator<Item = u8>| -> Vec<u8> {
        let played: Vec<u8> = played.collect();
        (1..=cards).filter(|c| !played.contains(c)).collect()
    };
    let hand = full(&mut current.turns.iter().map(|t| t.my_bid));
    let opponent_hand = full(&mut current.turns.iter().map(|t| t.opponent_bid));
    let lot = current.lot.clone();
    // The lot holds the card drawn this turn last.
    let now = lot.last().copied();
    let undrawn = full(
        &mut current
            .turns
            .iter()
            .map(|t| t.drawn_victory_card)
            .chain(now),
    );
    let history = doc
        .rounds
        .iter()
        .map(|r| {
            r.turns
                .iter()
                .map(|t| TurnResult {
                    drawn: t.drawn_victory_card,
                    bids: [t.my_bid, t.opponent_bid],
                    gained: [t.my_points_gained, t.opponent_points_gained],
                })
                .collect()
        })
        .collect();
    Ok(GoofspielObservation {
        seat: Seat(0),
        rounds: doc.match_rounds.clone(),
        round,
        hand,
        opponent_hand,
        lot,
        current: now,
        next: current.next_victory_card,
        undrawn,
        my_bid: None,
        opponent_has_bid: false,
        my_points: doc.my_points_total,
        opponent_points: doc.opponent_points_total,
        history,
    })
}

/// The observation and legal bids of the document `body`.
pub fn decision(body: &str) -> Result<(GoofspielObservation, Vec<Bid>), DocumentError> {
    let doc: Document =
        serde_json::from_str(body).map_err(|e| DocumentError::NotADocument(e.to_string()))?;
    let obs = observation(&doc)?;
    let legal: Vec<Bid> = obs.hand.iter().map(|c| Bid(*c)).collect();
    if legal.is_empty() {
        return Err(DocumentError::NoCardLeft);
    }
    Ok((obs, legal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jujitsu::JujitsuDialect;
    use crate::Dialect;
    use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
    use croupier_rules::Game;

    /// The observation rebuilt from a document equals the engine's own,
    /// but for what a document does not carry (the sealed-bid flags).
    #[test]
    fn documents_rebuild_the_engines_observation() {
        let v = GoofspielVariant::jujitsu(vec![4, 5]);
        let mut g = Goofspiel::new(&v, 2, 3).unwrap();
        let mut d = JujitsuDialect::default();
        let mut turn = 0u8;
        while !g.is_over() {
            for seat in [Seat(0), Seat(1)] {
                let mut out = Vec::new();
                d.prompt(&g, seat, &[], 100, &mut out);
                let doc: Document = serde_json::from_str(&out[0]).unwrap();
                let mut mine = observation(&doc).unwrap();
                let mut theirs = g.observation(seat);
                mine.seat = seat;
                theirs.my_bid = None;
                theirs.opponent_has_bid = false;
                assert_eq!(mine, theirs, "turn {turn} seat {seat:?}");
            }
            let a = g.legal_vec(Seat(0))[usize::from(turn) % g.legal_vec(Seat(0)).len()];
            let b = g.legal_vec(Seat(1))[0];
            g.apply(Seat(0), a).unwrap();
            g.apply(Seat(1), b).unwrap();
            turn += 1;
        }
    }

    #[test]
    fn bad_documents_are_errors() {
        for (bad, want) in [
            ("", "not a Psychological Jujitsu document"),
            ("{}", "not a Psychological Jujitsu document"),
            (
                r#"{"match":[5],"myTimeRemainingMs":null,"opponentTimeRemainingMs":null,"rounds":[],"myPointsTotal":0,"opponentPointsTotal":0,"gameEnded":false}"#,
                "no rounds",
            ),
            (
                r#"{"match":[200],"myTimeRemainingMs":null,"opponentTimeRemainingMs":null,"rounds":[{"lot":[1],"nextVictoryCard":null,"turns":[]}],"myPointsTotal":0,"opponentPointsTotal":0,"gameEnded":false}"#,
                "a round of 200 cards",
            ),
        ] {
            let e = decision(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
