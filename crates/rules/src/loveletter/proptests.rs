//! Property tests over many random playouts of 2, 3 and 4 players.

use proptest::prelude::*;
use rand::Rng;

use super::card::DECK_SIZE;
use super::*;

/// Longest match: 13 rounds of at most 13 turns, with room to spare.
const MAX_STEPS: usize = 13 * 16;

/// Every card of the round, wherever it is, sorted.
fn all_cards(g: &LoveLetter) -> Vec<Card> {
    let mut cards: Vec<Card> = g.deck.as_slice().to_vec();
    cards.extend(g.set_aside);
    for i in 0..g.n() {
        cards.extend_from_slice(g.hands[i].as_slice());
        cards.extend_from_slice(g.played[i].as_slice());
        cards.extend_from_slice(g.out_cards[i].as_slice());
    }
    cards.sort_unstable();
    cards
}

/// Checks the invariants of a state; returns a description of the first
/// broken one.
fn invariants(g: &LoveLetter) -> Result<(), String> {
    if all_cards(g) != DECK {
        return Err(format!("cards not conserved: {:?}", all_cards(g)));
    }
    if g.set_aside.is_none() && !g.deck.is_empty() {
        return Err("the set-aside card was taken while the deck held cards".into());
    }
    for i in 0..g.n() {
        let s = Seat(i as u8);
        if g.played_value[i] > g.played[i].total() {
            return Err(format!("seat {i} played more than lies face up"));
        }
        let held = g.hands[i].len();
        let want = if !g.is_in(s) {
            0..=0
        } else if !g.over && s == g.current {
            2..=2
        } else {
            1..=2
        };
        if !want.contains(&held) {
            return Err(format!("seat {s} holds {held} cards"));
        }
        if g.is_in(s) && !g.out_cards[i].is_empty() {
            return Err(format!("seat {s} is in but showed an out hand"));
        }
        for o in 0..g.n() {
            if let Some(c) = g.known[o][i] {
                if o == i || !g.hands[i].contains(c) {
                    return Err(format!("seat {o} wrongly knows seat {s} holds the {c}"));
                }
            }
        }
    }
    if !g.over && g.in_round.count_ones() < 2 {
        return Err("a round is under way with fewer than two players".into());
    }
    Ok(())
}

/// Swaps a hidden card of `other` with the deck or the set-aside card, and
/// shuffles the deck: nothing `seat` may see.
fn perturb_hidden(g: &mut LoveLetter, other: Seat, rng: &mut GameRng) {
    let o = other.index();
    if !g.hands[o].is_empty() {
        let i = rng.random_range(0..g.hands[o].len());
        let held = g.hands[o].as_slice()[i];
        if !g.deck.is_empty() {
            let j = rng.random_range(0..g.deck.len());
            let slot = &mut g.deck.as_mut_slice()[j];
            g.hands[o].as_mut_slice()[i] = *slot;
            *slot = held;
        } else if let Some(aside) = g.set_aside {
            g.hands[o].as_mut_slice()[i] = aside;
            g.set_aside = Some(held);
        }
    }
    rand::seq::SliceRandom::shuffle(g.deck.as_mut_slice(), rng);
}

/// What a playout did: a seat's action, or `None` for an arena forfeit.
type Step = (Seat, Option<Play>);

/// The rules variants under test: standard, Postman, and the standard rules
/// as version 1 applied them.
fn variants() -> impl Strategy<Value = LoveLetterVariant> {
    prop_oneof![
        Just(LoveLetterVariant::standard()),
        Just(LoveLetterVariant::postman()),
        Just(LoveLetterVariant::standard_v1()),
    ]
}

/// Every listed play that names a player it cannot affect (protected; under
/// Postman's rules also out, or the player itself), made on a copy: it adds
/// exactly `Played` and `NoEffect` to the log, takes the card from the
/// player's hand, and changes no other hand, who is in, who is protected,
/// the deck or the set-aside card.
fn no_effect_plays_change_nothing(
    g: &LoveLetter,
    seat: Seat,
    legal: &[Play],
) -> Result<(), TestCaseError> {
    for a in legal {
        let Play::Play {
            card,
            target: Some(t),
            guess,
        } = *a
        else {
            continue;
        };
        let Some(reason) = g.no_effect(seat, t) else {
            continue;
        };
        if g.variant.refuse_protected {
            return Err(TestCaseError::fail(format!("{a} listed under version 1")));
        }
        let mut copy = g.clone();
        let n = copy.events.len();
        copy.play(seat, card, Some(t), guess);
        prop_assert_eq!(
            &copy.events[n..],
            &[
                LoveLetterEvent::Played {
                    seat,
                    card,
                    target: Some(t),
                    guess
                },
                LoveLetterEvent::NoEffect {
                    seat,
                    target: t,
                    reason
                }
            ]
        );
        for i in 0..g.n() {
            let mut want = g.hands[i];
            if i == seat.index() {
                want.remove(card);
            }
            prop_assert_eq!(copy.hands[i], want, "{}: hand of seat {}", a, i);
            prop_assert_eq!(copy.out_cards[i], g.out_cards[i]);
        }
        prop_assert_eq!(copy.in_round, g.in_round, "{}: who is in", a);
        prop_assert_eq!(copy.protected, g.protected);
        prop_assert_eq!(copy.deck, g.deck);
        prop_assert_eq!(copy.set_aside, g.set_aside);
    }
    Ok(())
}

/// Plays a whole match at random (sometimes forfeiting, sometimes applying
/// an arena forfeit to any seat), checking the invariants at every step.
/// Returns the actions taken, with `None` for an arena forfeit of the seat.
fn playout(
    variant: &LoveLetterVariant,
    seats: usize,
    seed: u64,
    choices: u64,
) -> Result<(LoveLetter, Vec<Step>), TestCaseError> {
    let mut g =
        LoveLetter::new(variant, seats, seed).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut rng = game_rng(choices);
    let mut legal = Vec::new();
    let mut log = Vec::new();
    for _ in 0..MAX_STEPS {
        invariants(&g).map_err(TestCaseError::fail)?;
        let Some(seat) = g.to_act().first() else {
            break;
        };
        prop_assert_eq!(g.to_act().len(), 1);
        legal.clear();
        g.legal_actions(seat, &mut legal);
        prop_assert!(!legal.is_empty(), "no legal action for {}", seat);
        for other in (0..seats as u8).map(Seat).filter(|s| *s != seat) {
            prop_assert!(g.legal_vec(other).is_empty());
        }
        // The seat's own observation lists the same plays (bots use it).
        prop_assert_eq!(&g.observation(seat).legal_plays(&g.variant), &legal);
        // Every legal action is accepted; a few are applied to a copy.
        for a in &legal {
            prop_assert_eq!(g.check(seat, *a), Ok(()), "{} refused", a);
        }
        for _ in 0..2 {
            let a = legal[rng.random_range(0..legal.len())];
            let mut copy = g.clone();
            prop_assert_eq!(copy.apply(seat, a), Ok(()));
        }
        no_effect_plays_change_nothing(&g, seat, &legal)?;
        // No seat's view depends on what it cannot see.
        for viewer in (0..seats as u8).map(Seat) {
            let before = g.observation(viewer);
            for other in (0..seats as u8).map(Seat).filter(|s| *s != viewer) {
                let mut copy = g.clone();
                perturb_hidden(&mut copy, other, &mut rng);
                prop_assert_eq!(&copy.observation(viewer), &before);
            }
        }
        let roll = rng.random_range(0..100);
        if roll == 0 {
            let victim = Seat(rng.random_range(0..seats as u8));
            if g.is_in(victim) {
                g.forfeit(victim)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                log.push((victim, None));
                continue;
            }
        }
        let action = if roll == 1 {
            Play::Forfeit
        } else {
            legal[rng.random_range(0..legal.len())]
        };
        g.apply(seat, action)
            .map_err(|e| TestCaseError::fail(format!("{action}: {e}")))?;
        log.push((seat, Some(action)));
    }
    Ok((g, log))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_playouts_keep_every_rule_invariant(
        variant in variants(),
        seats in 2usize..=4,
        seed in any::<u64>(),
        choices in any::<u64>(),
    ) {
        let (g, _) = playout(&variant, seats, seed, choices)?;
        prop_assert!(g.is_over(), "the match did not end in {} steps", MAX_STEPS);
        let outcome = g.outcome().ok_or_else(|| TestCaseError::fail("no outcome"))?;
        let top = outcome.scores.iter().copied().max().unwrap_or(0);
        prop_assert_eq!(top, i64::from(WINS_NEEDED));
        prop_assert_eq!(outcome.ranks.iter().filter(|r| **r == 1).count(), 1);
        let rounds: i64 = outcome.scores.iter().sum();
        prop_assert_eq!(rounds, i64::from(g.round()) + 1);
        let ends = g.events().iter().filter(|e| matches!(e, LoveLetterEvent::RoundEnd { .. })).count();
        prop_assert_eq!(ends as i64, rounds);
        prop_assert_eq!(DECK_SIZE, 16);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn a_play_at_a_player_it_cannot_affect_changes_no_hand_and_nobody_is_out(
        postman in any::<bool>(),
        seats in 2usize..=4,
        seed in any::<u64>(),
        choices in any::<u64>(),
    ) {
        // Prefer such plays, so that many are made and checked.
        let variant = if postman { LoveLetterVariant::postman() } else { LoveLetterVariant::standard() };
        let mut g = LoveLetter::new(&variant, seats, seed)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut rng = game_rng(choices);
        while let Some(seat) = g.to_act().first() {
            let legal = g.legal_vec(seat);
            no_effect_plays_change_nothing(&g, seat, &legal)?;
            let aimless: Vec<Play> = legal
                .iter()
                .copied()
                .filter(|a| matches!(a, Play::Play { target: Some(t), .. } if g.no_effect(seat, *t).is_some()))
                .collect();
            let pool = if aimless.is_empty() || rng.random_range(0..3) == 0 { &legal } else { &aimless };
            let a = pool[rng.random_range(0..pool.len())];
            g.apply(seat, a).map_err(|e| TestCaseError::fail(format!("{a}: {e}")))?;
        }
        prop_assert!(g.is_over());
    }

    #[test]
    fn same_seed_and_actions_give_the_same_game(
        variant in variants(),
        seats in 2usize..=4,
        seed in any::<u64>(),
        choices in any::<u64>(),
    ) {
        let (g, log) = playout(&variant, seats, seed, choices)?;
        let mut again = LoveLetter::new(&variant, seats, seed)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (seat, action) in log {
            match action {
                Some(a) => again.apply(seat, a),
                None => again.forfeit(seat),
            }
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        prop_assert_eq!(again.events(), g.events());
        prop_assert_eq!(format!("{again:?}"), format!("{g:?}"));
    }

    #[test]
    fn check_accepts_exactly_the_legal_actions(
        variant in variants(),
        seats in 2usize..=4,
        seed in any::<u64>(),
        steps in 0usize..40,
    ) {
        let mut g = LoveLetter::new(&variant, seats, seed)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut rng = game_rng(seed ^ 0x5eed);
        for _ in 0..steps {
            let Some(seat) = g.to_act().first() else { break };
            let legal = g.legal_vec(seat);
            let a = legal[rng.random_range(0..legal.len())];
            g.apply(seat, a).map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        let Some(seat) = g.to_act().first() else { return Ok(()) };
        let legal = g.legal_vec(seat);
        let targets = std::iter::once(None).chain((0..5u8).map(|t| Some(Seat(t))));
        for target in targets {
            for card in Card::ALL {
                for guess in std::iter::once(None).chain(Card::ALL.map(Some)) {
                    let a = Play::Play { card, target, guess };
                    prop_assert_eq!(g.check(seat, a).is_ok(), legal.contains(&a), "{}", a);
                }
            }
        }
    }

    #[test]
    fn action_text_round_trips(
        card in 1u8..=8,
        target in proptest::option::of(0u8..=255),
        guess in proptest::option::of(1u8..=8),
    ) {
        let card = Card::from_value(card).ok_or_else(|| TestCaseError::fail("card"))?;
        let a = Play::Play { card, target: target.map(Seat), guess: guess.and_then(Card::from_value) };
        prop_assert_eq!(a.to_string().parse::<Play>(), Ok(a));
        prop_assert_eq!(a.to_string().to_uppercase().parse::<Play>(), Ok(a));
    }
}
