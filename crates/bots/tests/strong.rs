//! The `strong` strategies never panic and always answer a legal action, on
//! random game states and seeds; and they see only their own observation.

use croupier_bots::strong::Budget;
use croupier_bots::{bot_rng, Builtins, Strategy};
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Game, Seat};
use proptest::prelude::*;
use rand::Rng;

/// Plays `moves` random actions from `seed` (fewer if the game ends), with
/// one `strong` per seat following the events; then every seat to act asks
/// its `strong` for a choice, which must be legal.
fn strong_answers_legally<G: Builtins>(
    variant: &G::Variant,
    seats: usize,
    seed: u64,
    moves: usize,
    threads: u32,
) {
    let mut game = G::new(variant, seats, seed).expect("a game");
    let budget = Budget::iterations(3).with_threads(threads);
    let mut bots: Vec<Box<dyn Strategy<G>>> = (0..seats)
        .map(|s| {
            let mut b = G::builtin_with("strong", &budget).expect("strong exists");
            b.new_game(Seat(s as u8), variant, seats);
            b
        })
        .collect();
    let mut rng = bot_rng(seed ^ 0xABC);
    let mut seen = vec![0usize; seats];
    for step in 0..=moves {
        for (s, (bot, seen)) in bots.iter_mut().zip(&mut seen).enumerate() {
            croupier_bots::catch_up(&game, Seat(s as u8), bot.as_mut(), seen);
        }
        let Some(seat) = game.to_act().first() else {
            return;
        };
        let legal = game.legal_vec(seat);
        let action = if step == moves {
            let obs = game.observation(seat);
            let a = bots[seat.index()].act(&obs, &legal, &mut rng);
            assert!(legal.contains(&a), "illegal choice at step {step}");
            a
        } else {
            legal[rng.random_range(0..legal.len())]
        };
        game.apply(seat, action).expect("a legal action applies");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn goofspiel_strong_never_panics(seed in any::<u64>(), moves in 0usize..40, rounds in proptest::collection::vec(3u8..=13, 1..3)) {
        strong_answers_legally::<Goofspiel>(&GoofspielVariant::gops(), 2, seed, moves, 1);
        strong_answers_legally::<Goofspiel>(&GoofspielVariant::jujitsu(rounds), 2, seed, moves, 2);
    }

    #[test]
    fn skullwhist_strong_never_panics(seed in any::<u64>(), moves in 0usize..28, threads in 1u32..3) {
        strong_answers_legally::<SkullWhist>(&Default::default(), 2, seed, moves, threads);
    }

    #[test]
    fn loveletter_strong_never_panics(seed in any::<u64>(), moves in 0usize..40, seats in 2usize..=4, postman in any::<bool>(), threads in 1u32..3) {
        let v = if postman { LoveLetterVariant::postman() } else { LoveLetterVariant::standard() };
        strong_answers_legally::<LoveLetter>(&v, seats, seed, moves, threads);
    }
}

/// Goofspiel's hidden information is the order of the prizes still to
/// come: two deals that agree on what a seat has seen, but not on that
/// order, get the same choices from the same seed.
#[test]
fn goofspiel_choices_do_not_depend_on_the_hidden_prize_order() {
    let v = GoofspielVariant::gops();
    let first_prize = |seed| {
        let g = Goofspiel::new(&v, 2, seed).expect("a game");
        g.observation(Seat(0)).current
    };
    let a = 1u64;
    let b = (2..10_000u64)
        .find(|s| first_prize(*s) == first_prize(a))
        .expect("another deal with the same first prize");
    let (mut ga, mut gb) = (
        Goofspiel::new(&v, 2, a).expect("a game"),
        Goofspiel::new(&v, 2, b).expect("a game"),
    );
    // The whole prize order, seen by playing each deal to its end.
    let order = |seed| {
        let mut g = Goofspiel::new(&v, 2, seed).expect("a game");
        while let Some(seat) = g.to_act().first() {
            let l = g.legal_vec(seat);
            g.apply(seat, l[0]).expect("legal");
        }
        format!("{:?}", g.events())
    };
    assert_ne!(order(a), order(b), "the deals differ");
    let mut checked = 0;
    // While both deals show the same observations, strong chooses alike.
    loop {
        let (oa, ob) = (ga.observation(Seat(0)), gb.observation(Seat(0)));
        if oa != ob || ga.to_act().first().is_none() {
            break;
        }
        let mut s = Goofspiel::builtin("strong").expect("strong");
        let legal = ga.legal_vec(Seat(0));
        let x = s.act(&oa, &legal, &mut bot_rng(9));
        let y = s.act(&ob, &legal, &mut bot_rng(9));
        assert_eq!(x, y);
        checked += 1;
        for g in [&mut ga, &mut gb] {
            g.apply(Seat(0), x).expect("legal");
            let l = g.legal_vec(Seat(1));
            g.apply(Seat(1), l[0]).expect("legal");
        }
    }
    assert!(checked >= 1);
}

/// Love Letter: a round rebuilt with other cards in the other hands, the
/// set-aside card and the deck (but the same observation for the deciding
/// seat) gets the same choice for a fixed seed.
#[test]
fn loveletter_choices_do_not_depend_on_hidden_cards() {
    use croupier_bots::loveletter::unseen_counts;
    use croupier_rules::loveletter::Card;
    use rand::seq::SliceRandom;
    let v = LoveLetterVariant::standard();
    let budget = Budget::iterations(30);
    let mut compared = 0;
    for seed in 0..20u64 {
        let real = LoveLetter::new(&v, 2, seed).expect("a game");
        let Some(seat) = real.to_act().first() else {
            continue;
        };
        let other = Seat(1 - seat.0);
        let obs = real.observation(seat);
        let counts = unseen_counts(&obs);
        let mut pool: Vec<Card> = (1..=8u8)
            .filter_map(Card::from_value)
            .flat_map(|c| std::iter::repeat_n(c, usize::from(counts[usize::from(c.value())])))
            .collect();
        pool.shuffle(&mut bot_rng(seed + 100));
        let mut others = vec![None; 2];
        others[other.index()] = pool.pop();
        let Some(set_aside) = pool.pop() else {
            continue;
        };
        let alt = LoveLetter::from_observation(&v, &obs, &others, &pool, set_aside, 5)
            .expect("a consistent round");
        if alt.observation(other).hand == real.observation(other).hand {
            continue;
        }
        assert_eq!(alt.observation(seat), obs);
        let legal = real.legal_vec(seat);
        assert_eq!(alt.legal_vec(seat), legal);
        let choose = |o| {
            let mut s = LoveLetter::builtin_with("strong", &budget).expect("strong");
            s.new_game(seat, &v, 2);
            s.act(o, &legal, &mut bot_rng(3))
        };
        assert_eq!(choose(&obs), choose(&alt.observation(seat)), "seed {seed}");
        compared += 1;
    }
    assert!(compared >= 5, "{compared}");
}

/// With a fixed number of iterations and a seed, choices repeat exactly,
/// on one thread or several.
#[test]
fn iterations_and_a_seed_make_choices_deterministic() {
    for threads in [1, 3] {
        let budget = Budget::iterations(40).with_threads(threads);
        let g = SkullWhist::new(&Default::default(), 2, 5).expect("a game");
        let seat = g.to_act().first().expect("someone bids");
        let obs = g.observation(seat);
        let legal = g.legal_vec(seat);
        let choose = || {
            let mut s = SkullWhist::builtin_with("strong", &budget).expect("strong");
            s.act(&obs, &legal, &mut bot_rng(11))
        };
        let first = choose();
        for _ in 0..3 {
            assert_eq!(choose(), first, "{threads} threads");
        }
    }
}

/// Love Letter's tree search: with a fixed number of iterations and a
/// seed, the choice repeats exactly on one thread or several, at every
/// decision of a few heuristic rounds.
#[test]
fn loveletter_tree_search_is_deterministic() {
    let v = LoveLetterVariant::standard();
    let mut compared = 0;
    for threads in [1, 3] {
        let budget = Budget::iterations(120).with_threads(threads);
        let mut g = LoveLetter::new(&v, 3, 9).expect("a game");
        let mut h = LoveLetter::builtin("heuristic").expect("heuristic");
        let mut rng = bot_rng(1);
        for _ in 0..12 {
            let Some(seat) = g.to_act().first() else {
                break;
            };
            let obs = g.observation(seat);
            let legal = g.legal_vec(seat);
            let choose = || {
                let mut s = LoveLetter::builtin_with("strong", &budget).expect("strong");
                s.new_game(seat, &v, 3);
                s.act(&obs, &legal, &mut bot_rng(21))
            };
            let first = choose();
            assert!(legal.contains(&first));
            assert_eq!(choose(), first, "{threads} threads");
            compared += 1;
            let a = h.act(&obs, &legal, &mut rng);
            g.apply(seat, a).expect("legal");
        }
    }
    assert!(compared >= 12, "{compared}");
}

/// SkullWhist, in the middle of the card play: the opponent's unplayed
/// cards swapped for others it could hold (cards out of play, none of a
/// suit it showed void in), the same history replayed, the same
/// observation for seat 0, and `strong` chooses alike for a fixed seed.
#[test]
fn skullwhist_choices_do_not_depend_on_the_opponents_hidden_cards() {
    use croupier_rules::skullwhist::{CardSet, SkullWhistAction};
    let mut compared = 0;
    for seed in 0..12u64 {
        let mut g = SkullWhist::new(&Default::default(), 2, seed).expect("a game");
        let leader = g.first_leader();
        let mut h = SkullWhist::builtin("heuristic").expect("heuristic");
        let mut actions = vec![];
        // Bids, then 5 to 9 cards, each seat on the heuristic.
        let stop = 2 + 5 + (seed as usize % 5);
        while actions.len() < stop {
            let Some(seat) = g.to_act().first() else {
                break;
            };
            let legal = g.legal_vec(seat);
            let a = h.act(&g.observation(seat), &legal, &mut bot_rng(seed));
            g.apply(seat, a).expect("legal");
            actions.push((seat, a));
        }
        if g.to_act().first() != Some(Seat(0)) {
            continue;
        }
        // Seat 1's played cards stay; its others are drawn from the cards
        // out of play, avoiding the suits it showed void in.
        let start = SkullWhist::new(&Default::default(), 2, seed).expect("a game");
        let (mine, theirs) = (start.hand(Seat(0)).0, start.hand(Seat(1)).0);
        let mut played = 0u64;
        let mut void = 0u64;
        for (seat, a) in &actions {
            if let SkullWhistAction::Play(c) = a {
                if *seat == Seat(1) {
                    played |= c.bit();
                }
            }
        }
        for t in g.history() {
            if t.leader == Seat(0) && t.follow.suit() != t.lead.suit() {
                void |= t.lead.suit().mask();
            }
        }
        let out: Vec<u64> = (0..52)
            .map(|i| 1u64 << i)
            .filter(|b| (mine | theirs | void) & b == 0)
            .collect();
        let need = (theirs & !played).count_ones() as usize;
        if out.len() < need {
            continue;
        }
        let alt_theirs = out[..need].iter().fold(played, |m, b| m | b);
        assert_ne!(alt_theirs, theirs);
        let mut alt =
            SkullWhist::from_hands([CardSet(mine), CardSet(alt_theirs)], leader).expect("a deal");
        for (seat, a) in &actions {
            alt.apply(*seat, *a).expect("the same history is legal");
        }
        let (oa, ob) = (g.observation(Seat(0)), alt.observation(Seat(0)));
        assert_eq!(oa, ob, "seed {seed}");
        let legal = g.legal_vec(Seat(0));
        assert_eq!(alt.legal_vec(Seat(0)), legal);
        let choose = |o| {
            let mut s = SkullWhist::builtin("strong?iterations=60").expect("strong");
            s.act(o, &legal, &mut bot_rng(21))
        };
        assert_eq!(choose(&oa), choose(&ob), "seed {seed}");
        compared += 1;
    }
    assert!(compared >= 4, "{compared}");
}

/// Love Letter at a 4-player table, later in a round: every other hand,
/// the set-aside card and the deck redealt from what the deciding seat has
/// not seen (keeping what it knows), and its choice stays the same.
#[test]
fn loveletter_four_player_choices_do_not_depend_on_hidden_cards() {
    use croupier_bots::loveletter::unseen_counts;
    use croupier_rules::loveletter::Card;
    use rand::seq::SliceRandom;
    let v = LoveLetterVariant::standard();
    let budget = Budget::iterations(20);
    let mut compared = 0;
    for seed in 0..30u64 {
        let mut real = LoveLetter::new(&v, 4, seed).expect("a game");
        let mut h = LoveLetter::builtin("heuristic").expect("heuristic");
        // A few turns into the first round.
        for _ in 0..(2 + seed % 4) {
            let Some(seat) = real.to_act().first() else {
                break;
            };
            let legal = real.legal_vec(seat);
            let a = h.act(&real.observation(seat), &legal, &mut bot_rng(seed));
            real.apply(seat, a).expect("legal");
        }
        let Some(seat) = real.to_act().first() else {
            continue;
        };
        let obs = real.observation(seat);
        if obs.round != 0 {
            continue;
        }
        let mut counts = unseen_counts(&obs);
        let mut others: Vec<Option<Card>> = vec![None; 4];
        for (s, c) in &obs.known {
            others[s.index()] = Some(*c);
            let k = usize::from(c.value());
            counts[k] = counts[k].saturating_sub(1);
        }
        let mut pool: Vec<Card> = (1..=8u8)
            .filter_map(Card::from_value)
            .flat_map(|c| std::iter::repeat_n(c, usize::from(counts[usize::from(c.value())])))
            .collect();
        pool.shuffle(&mut bot_rng(seed + 500));
        for (i, view) in obs.players.iter().enumerate() {
            if i != seat.index() && view.in_round && others[i].is_none() {
                others[i] = pool.pop();
            }
        }
        let Some(set_aside) = pool.pop() else {
            continue;
        };
        let Ok(alt) = LoveLetter::from_observation(&v, &obs, &others, &pool, set_aside, 5) else {
            continue;
        };
        let differs = (0..4u8)
            .filter(|s| *s != seat.0)
            .any(|s| alt.observation(Seat(s)).hand != real.observation(Seat(s)).hand);
        if !differs {
            continue;
        }
        assert_eq!(alt.observation(seat), obs);
        let legal = real.legal_vec(seat);
        assert_eq!(alt.legal_vec(seat), legal);
        let choose = |o| {
            let mut s = LoveLetter::builtin_with("strong", &budget).expect("strong");
            s.new_game(seat, &v, 4);
            s.act(o, &legal, &mut bot_rng(3))
        };
        assert_eq!(choose(&obs), choose(&alt.observation(seat)), "seed {seed}");
        compared += 1;
    }
    assert!(compared >= 5, "{compared}");
}
