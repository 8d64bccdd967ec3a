//! The public view (what spectators see) shows nothing that some seat may
//! not see: at every step of random games, each of its fields is also in
//! seat 1's observation, and nothing only seat 0 knows is in it.

use rand::{Rng, SeedableRng};

use crate::core::{Game, Seat};
use crate::goofspiel::Goofspiel;
use crate::loveletter::LoveLetter;
use crate::skullwhist::SkullWhist;

/// Calls `check` on the game before every step of a random game.
fn every_step<G: Game>(variant: &G::Variant, seats: usize, seed: u64, check: impl Fn(&G)) {
    let mut g = G::new(variant, seats, seed).expect("setup");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xA5);
    loop {
        check(&g);
        let Some(seat) = g.to_act().first() else {
            break;
        };
        let legal = g.legal_vec(seat);
        let a = legal[rng.random_range(0..legal.len())];
        g.apply(seat, a).expect("legal");
    }
}

#[test]
fn skullwhist_public_view_is_what_both_seats_see() {
    for seed in 0..40 {
        every_step::<SkullWhist>(&Default::default(), 2, seed, |g| {
            let p = g.public_view();
            let o1 = g.observation(Seat(1));
            assert!(p.hand.is_empty() && !p.to_act);
            // Seat 0's bid only once seat 1 sees it too.
            assert!(p.my_bid.is_none() || p.my_bid == o1.opponent_bid);
            assert_eq!(p.opponent_bid, o1.opponent_bid.and(o1.my_bid));
            assert_eq!(p.tricks_won, [o1.tricks_won[1], o1.tricks_won[0]]);
            assert_eq!(
                (p.phase, p.trick, p.leader, p.lead_card, &p.history),
                (o1.phase, o1.trick, o1.leader, o1.lead_card, &o1.history)
            );
        });
    }
}

#[test]
fn goofspiel_public_view_is_what_both_seats_see() {
    for seed in 0..40 {
        every_step::<Goofspiel>(&Default::default(), 2, seed, |g| {
            let p = g.public_view();
            let o1 = g.observation(Seat(1));
            assert_eq!(p.my_bid, None, "a sealed bid is hidden");
            assert_eq!((&p.hand, &p.opponent_hand), (&o1.opponent_hand, &o1.hand));
            assert_eq!(
                (p.my_points, p.opponent_points),
                (o1.opponent_points, o1.my_points)
            );
            assert_eq!(
                (&p.lot, p.current, p.next, &p.undrawn, p.round),
                (&o1.lot, o1.current, o1.next, &o1.undrawn, o1.round)
            );
        });
    }
}

#[test]
fn loveletter_public_view_is_what_every_seat_sees() {
    for seats in 2..=4 {
        for seed in 0..20 {
            every_step::<LoveLetter>(&Default::default(), seats, seed, |g| {
                let p = g.public_view();
                assert!(p.hand.is_empty() && p.known.is_empty());
                for s in 1..seats {
                    let o = g.observation(Seat(s as u8));
                    assert_eq!(
                        (p.round, &p.wins, &p.players, p.deck, p.to_act, p.first),
                        (o.round, &o.wins, &o.players, o.deck, o.to_act, o.first)
                    );
                }
            });
        }
    }
}
