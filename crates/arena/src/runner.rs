//! One match between in-process strategies ([`play_match`]).
//!
//! What every match shares (fault rulings, the record builder, the
//! timestamp format, [`MatchError`]) is in [`crate::record`], and seed
//! derivation in [`crate::seeds`].

use croupier_bots::{RandomBot, Strategy};
use croupier_rules::{Game, Record, SeatInfo};

use crate::live::{self, Driver, LiveConfig, LiveSeat, Mode, Think};
use crate::record::MatchError;

/// A seat: who it is and the strategy that plays it.
pub struct Player<G: Game> {
    /// Name and version for the record.
    pub info: SeatInfo,
    /// The strategy.
    pub strategy: Box<dyn Strategy<G>>,
}

impl<G: Game> std::fmt::Debug for Player<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Player")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Plays one game of `G` between `players` (in seat order) from `seed`, and
/// returns its record. Strategies see only their own observation and the
/// events visible to their seat.
///
/// The match runs the one decision loop of every match
/// ([`crate::live`], by rounds: the seats due are asked, then their answers
/// applied in seat order), with each strategy thinking on this thread. With
/// no remote seat nothing in it waits, so it is driven to its end here, with
/// no runtime; it may be called from any thread.
pub fn play_match<G: Game>(
    variant: &G::Variant,
    seed: u64,
    players: &mut [Player<G>],
) -> Result<Record, MatchError> {
    // The strategies are lent to the match's seats and given back after.
    let mut seats: Vec<LiveSeat<G>> = players
        .iter_mut()
        .map(|p| {
            let strategy = std::mem::replace(&mut p.strategy, Box::new(RandomBot));
            LiveSeat::builtin(p.info.clone(), strategy)
        })
        .collect();
    let played = futures::executor::block_on(live::play(
        variant,
        seed,
        &mut seats,
        &LiveConfig::default(),
        Mode::Rounds,
        Think::Inline,
    ));
    for (p, s) in players.iter_mut().zip(seats) {
        if let Driver::Builtin(strategy) = s.driver {
            p.strategy = strategy;
        }
    }
    played
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_bots::{BotRng, Builtins};
    use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielObservation, GoofspielVariant};
    use croupier_rules::skullwhist::{SkullWhist, SkullWhistAction, SkullWhistVariant};
    use croupier_rules::{Seat, StepKind};

    /// Always bids 99, which nobody holds.
    struct Cheater;
    impl Strategy<Goofspiel> for Cheater {
        fn act(&mut self, _: &GoofspielObservation, _: &[Bid], _: &mut BotRng) -> Bid {
            Bid(99)
        }
    }

    struct BadBidder;
    impl Strategy<SkullWhist> for BadBidder {
        fn act(
            &mut self,
            _: &croupier_rules::skullwhist::SkullWhistObservation,
            _: &[SkullWhistAction],
            _: &mut BotRng,
        ) -> SkullWhistAction {
            SkullWhistAction::Bid(0)
        }
    }

    fn player<G: Game>(name: &str, s: Box<dyn Strategy<G>>) -> Player<G> {
        Player {
            info: SeatInfo::named(name),
            strategy: s,
        }
    }

    #[test]
    fn illegal_goofspiel_bid_gets_a_random_card_and_a_recorded_fault() {
        let mut players = vec![
            player("cheater", Box::new(Cheater)),
            player("random", Box::new(RandomBot)),
        ];
        let r = play_match::<Goofspiel>(&GoofspielVariant::gops(), 5, &mut players).unwrap();
        let faults: Vec<_> = r.steps.iter().filter(|s| s.fault.is_some()).collect();
        assert_eq!(faults.len(), 13, "every bid of seat 0 was substituted");
        assert!(faults.iter().all(|s| s.seat == Seat(0)));
        assert!(faults[0].fault.as_ref().unwrap().detail.contains("'99'"));
        r.verify::<Goofspiel>().unwrap();
    }

    #[test]
    fn illegal_skullwhist_bid_forfeits_the_game() {
        let mut players = vec![
            player("random", Box::new(RandomBot)),
            player("bad", Box::new(BadBidder) as Box<dyn Strategy<SkullWhist>>),
        ];
        let r = play_match::<SkullWhist>(&SkullWhistVariant {}, 5, &mut players).unwrap();
        assert_eq!(r.outcome.forfeited_by, Some(Seat(1)));
        assert!(matches!(r.steps.last().unwrap().kind, StepKind::Forfeit));
        r.verify::<SkullWhist>().unwrap();
    }

    #[test]
    fn a_match_is_a_function_of_its_seed() {
        let play = |seed| {
            let mut p = vec![
                player("a", SkullWhist::builtin("heuristic").unwrap()),
                player("b", SkullWhist::builtin("random").unwrap()),
            ];
            play_match::<SkullWhist>(&SkullWhistVariant {}, seed, &mut p).unwrap()
        };
        let (a, b, c) = (play(1), play(1), play(2));
        let actions = |r: &Record| r.steps.iter().map(|s| s.kind.clone()).collect::<Vec<_>>();
        assert_eq!(actions(&a), actions(&b));
        assert_ne!(actions(&a), actions(&c));
    }
}
