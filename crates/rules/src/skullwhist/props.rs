//! Property tests over thousands of random SkullWhist playouts.

use proptest::prelude::*;

use super::*;
use crate::testutil::{random_playout, record_of, MAX_ACTIONS};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_playouts_take_13_tricks_and_conserve_cards(seed: u64, act: u64) {
        let (g, steps) = random_playout::<SkullWhist>(&SkullWhistVariant {}, 2, seed, act, MAX_ACTIONS);
        prop_assert_eq!(steps.len(), 2 + 26);
        prop_assert_eq!(g.tricks_won()[0] + g.tricks_won()[1], 13);
        prop_assert!(g.hand(Seat(0)).is_empty() && g.hand(Seat(1)).is_empty());
        // Every dealt card was played exactly once.
        let mut played = 0u64;
        for t in g.history() {
            prop_assert_eq!(played & (t.lead.bit() | t.follow.bit()), 0);
            played |= t.lead.bit() | t.follow.bit();
        }
        let dealt = g.events().iter().filter_map(|e| match e {
            SkullWhistEvent::Deal { hand, .. } => Some(hand.iter().fold(0u64, |m, c| m | c.bit())),
            _ => None,
        }).fold(0, |a, b| a | b);
        prop_assert_eq!(played, dealt);
        let o = g.outcome().unwrap();
        for s in 0..2 {
            prop_assert_eq!(o.scores[s], score(g.bids()[s].unwrap(), g.tricks_won()[s]));
        }
    }

    #[test]
    fn midgame_cards_are_conserved(seed: u64, act: u64, stop in 0usize..28) {
        let (g, _) = random_playout::<SkullWhist>(&SkullWhistVariant {}, 2, seed, act, stop);
        let played = g.history().len() * 2 + usize::from(g.lead_card.is_some());
        prop_assert_eq!(g.hand(Seat(0)).len() + g.hand(Seat(1)).len() + played, 26);
    }

    #[test]
    fn replaying_a_record_reproduces_it(seed: u64, act: u64) {
        let (g, steps) = random_playout::<SkullWhist>(&SkullWhistVariant {}, 2, seed, act, MAX_ACTIONS);
        let record = record_of(&SkullWhistVariant {}, 2, seed, &steps, &g);
        let text = serde_json::to_string(&record).unwrap();
        let back: crate::Record = serde_json::from_str(&text).unwrap();
        let replayed = back.verify::<SkullWhist>().unwrap();
        prop_assert_eq!(replayed.events(), g.events());
    }

    /// Replacing a card of the opponent's hand by one of the 26 undealt
    /// cards does not change what this seat sees.
    #[test]
    fn observation_ignores_the_opponents_hidden_cards(seed: u64, act: u64, stop in 0usize..28, pick: u8, swap_in: u8) {
        let (g, _) = random_playout::<SkullWhist>(&SkullWhistVariant {}, 2, seed, act, stop);
        for me in 0..2u8 {
            let opp = usize::from(1 - me);
            let theirs = g.hands[opp].to_vec();
            prop_assume!(!theirs.is_empty());
            let out = theirs[usize::from(pick) % theirs.len()];
            let mut seen = g.hands[0].0 | g.hands[1].0;
            for t in g.history() { seen |= t.lead.bit() | t.follow.bit(); }
            if let Some(c) = g.lead_card { seen |= c.bit(); }
            let unseen = CardSet(!seen & ((1u64 << 52) - 1)).to_vec();
            let inn = unseen[usize::from(swap_in) % unseen.len()];
            let mut other = g.clone();
            other.hands[opp].0 = (other.hands[opp].0 & !out.bit()) | inn.bit();
            prop_assert_eq!(g.observation(Seat(me)), other.observation(Seat(me)));
        }
    }

    #[test]
    fn refused_actions_change_nothing(seed: u64, act: u64, stop in 0usize..28, text in "[a-zA-Z0-9 ]{0,8}", seat in 0u8..3) {
        let (mut g, _) = random_playout::<SkullWhist>(&SkullWhistVariant {}, 2, seed, act, stop);
        let before = format!("{g:?}");
        if let Ok(a) = text.parse::<SkullWhistAction>() {
            if g.apply(Seat(seat), a).is_err() {
                prop_assert_eq!(before, format!("{g:?}"));
            }
        }
    }
}
