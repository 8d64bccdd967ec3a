//! The one place a game record becomes what the store keeps of a finished
//! game: the REST hub, the ladder and the demo seeding all store games
//! through [`GameEnd::from_record`].

use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Game, Record};

use crate::{BotId, GameEnd};

/// Why a record cannot be stored.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The record has no finish time (the game is not over).
    #[error("the record of a finished game has no finish time")]
    Unfinished,
    /// The record has a seat without a bot.
    #[error("the record has {seats} seats but {bots} bots were given")]
    Seats {
        /// Seats in the record.
        seats: usize,
        /// Bots given.
        bots: usize,
    },
    /// The record could not be written as JSON.
    #[error("the record cannot be serialised: {0}")]
    Json(#[from] serde_json::Error),
}

impl GameEnd {
    /// What the store keeps of a finished game played by `bots` (by seat):
    /// scores (none for the seats of a forfeited SkullWhist game, as the
    /// 2014 API reported), ranks, the forfeiting bot and the record.
    pub fn from_record(record: &Record, bots: &[BotId]) -> Result<GameEnd, RecordError> {
        if record.seats.len() != bots.len() {
            return Err(RecordError::Seats {
                seats: record.seats.len(),
                bots: bots.len(),
            });
        }
        let finished = record.finished.clone().ok_or(RecordError::Unfinished)?;
        let o = &record.outcome;
        let unscored = o.forfeited_by.is_some() && record.game == SkullWhist::NAME;
        let scores = (0..bots.len())
            .map(|i| {
                if unscored {
                    None
                } else {
                    o.scores.get(i).copied()
                }
            })
            .collect();
        Ok(GameEnd {
            finished,
            scores,
            ranks: o.ranks.clone(),
            forfeited_by: o.forfeited_by.and_then(|s| bots.get(s.index()).copied()),
            record: serde_json::to_string(record)?,
            facts: Some(crate::facts::GameFacts::of(record).to_text()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::skullwhist::SkullWhistVariant;
    use croupier_rules::{Outcome, Seat, SeatInfo};

    fn record(forfeit: bool) -> Record {
        let mut r = Record::begin::<SkullWhist>(
            &SkullWhistVariant {},
            3,
            vec![SeatInfo::named("a"), SeatInfo::named("b")],
        );
        r.outcome = Outcome {
            scores: vec![12, -4],
            ranks: vec![1, 2],
            forfeited_by: forfeit.then_some(Seat(1)),
        };
        r.finished = Some("2026-01-01T00:00:00.000Z".into());
        r
    }

    #[test]
    fn a_forfeited_skullwhist_game_has_no_scores() {
        let end = GameEnd::from_record(&record(true), &[7, 9]).unwrap();
        assert_eq!(end.scores, vec![None, None]);
        assert_eq!(end.forfeited_by, Some(9));
        let end = GameEnd::from_record(&record(false), &[7, 9]).unwrap();
        assert_eq!(end.scores, vec![Some(12), Some(-4)]);
        assert_eq!(end.forfeited_by, None);
        assert_eq!(end.ranks, vec![1, 2]);
        let back: Record = serde_json::from_str(&end.record).unwrap();
        assert_eq!(back, record(false));
    }

    #[test]
    fn a_record_without_finish_time_or_with_other_seats_is_refused() {
        let mut r = record(false);
        assert!(matches!(
            GameEnd::from_record(&r, &[1]),
            Err(RecordError::Seats { seats: 2, bots: 1 })
        ));
        r.finished = None;
        assert!(matches!(
            GameEnd::from_record(&r, &[1, 2]),
            Err(RecordError::Unfinished)
        ));
    }
}
