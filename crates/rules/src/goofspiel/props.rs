//! Property tests over thousands of random Goofspiel playouts.

use proptest::prelude::*;
use rand::seq::SliceRandom;

use super::*;
use crate::testutil::{random_playout, record_of, MAX_ACTIONS};

fn variants() -> impl Strategy<Value = GoofspielVariant> {
    (
        prop::collection::vec(3u8..=MAX_CARDS, 1..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(rounds, carry, preview)| GoofspielVariant {
            rounds,
            ties: if carry {
                TieRule::Carry
            } else {
                TieRule::Discard
            },
            preview,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_playouts_finish_and_conserve_cards(v in variants(), seed: u64, act: u64) {
        let (g, steps) = random_playout::<Goofspiel>(&v, 2, seed, act, MAX_ACTIONS);
        let total: usize = v.rounds.iter().map(|n| usize::from(*n)).sum();
        prop_assert_eq!(steps.len(), 2 * total, "each seat bids once per card");
        let o = g.outcome().unwrap();
        // Points won plus points discarded equal every victory card dealt.
        let dealt: i64 = v.rounds.iter().map(|n| i64::from(*n) * i64::from(n + 1) / 2).sum();
        let discarded: i64 = g.events().iter().map(|e| match e {
            GoofspielEvent::RoundEnd { discarded, .. } => i64::from(*discarded),
            _ => 0,
        }).sum();
        let tie_discards: i64 = if v.ties == TieRule::Discard {
            g.history().iter().flatten().filter(|t| t.bids[0] == t.bids[1]).map(|t| i64::from(t.drawn)).sum()
        } else { 0 };
        prop_assert_eq!(o.scores[0] + o.scores[1] + discarded + tie_discards, dealt);
        // The history read from the log has every round and every turn.
        let history = g.history();
        prop_assert_eq!(history.iter().map(Vec::len).collect::<Vec<_>>(),
            v.rounds.iter().map(|n| usize::from(*n)).collect::<Vec<_>>());
        prop_assert_eq!(&g.observation(Seat(0)).history, &history);
    }

    #[test]
    fn replaying_a_record_reproduces_it(v in variants(), seed: u64, act: u64) {
        let (g, steps) = random_playout::<Goofspiel>(&v, 2, seed, act, MAX_ACTIONS);
        let record = record_of(&v, 2, seed, &steps, &g);
        let text = serde_json::to_string(&record).unwrap();
        let back: crate::Record = serde_json::from_str(&text).unwrap();
        let replayed = back.verify::<Goofspiel>().unwrap();
        prop_assert_eq!(replayed.events(), g.events());
    }

    #[test]
    fn observation_ignores_hidden_deck_order_and_sealed_bid(
        v in variants(), seed: u64, act: u64, stop in 0usize..60, reshuffle: u64,
    ) {
        let (g, _) = random_playout::<Goofspiel>(&v, 2, seed, act, stop);
        // Reorder the cards still face down (beyond the previewed one).
        let mut other = g.clone();
        let from = (other.turn + if v.preview { 2 } else { 1 }).min(other.deck.len());
        let mut rng = crate::core::game_rng(reshuffle);
        other.deck[from..].shuffle(&mut rng);
        prop_assert_eq!(g.observation(Seat(0)), other.observation(Seat(0)));
        prop_assert_eq!(g.observation(Seat(1)), other.observation(Seat(1)));
        // A sealed bid by seat 1 shows seat 0 only that it was made.
        if !other.over && other.sealed[1].is_none() {
            let before = other.observation(Seat(0));
            let card = other.legal_vec(Seat(1))[0];
            if other.sealed[0].is_none() {
                other.apply(Seat(1), card).unwrap();
                let after = other.observation(Seat(0));
                prop_assert!(after.opponent_has_bid);
                prop_assert_eq!(GoofspielObservation { opponent_has_bid: false, ..after }, before);
            }
        }
    }

    #[test]
    fn refused_actions_change_nothing(v in variants(), seed: u64, act: u64, stop in 0usize..60, raw in 0u8..=255, seat in 0u8..4) {
        let (mut g, _) = random_playout::<Goofspiel>(&v, 2, seed, act, stop);
        let before = format!("{g:?}");
        if g.apply(Seat(seat), Bid(raw)).is_err() {
            prop_assert_eq!(before, format!("{g:?}"));
        }
    }
}
