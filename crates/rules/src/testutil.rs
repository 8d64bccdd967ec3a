//! Helpers shared by the property tests of every game.

use rand::{Rng, SeedableRng};

use crate::core::{Game, Seat};
use crate::record::{Record, RecordedStep, SeatInfo, StepKind};

/// Most actions any game may take; a playout longer than this is a bug.
pub const MAX_ACTIONS: usize = 10_000;

/// Plays random legal actions from `seed` until the game ends (or `stop_after`
/// actions), checking on the way that every listed action applies and that a
/// seat to act always has one. Returns the game and the steps taken.
pub fn random_playout<G: Game>(
    variant: &G::Variant,
    seats: usize,
    seed: u64,
    act_seed: u64,
    stop_after: usize,
) -> (G, Vec<(Seat, G::Action)>) {
    let mut g = G::new(variant, seats, seed).expect("setup");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(act_seed);
    let mut steps = Vec::new();
    while let Some(seat) = g.to_act().first() {
        if steps.len() >= stop_after {
            break;
        }
        let legal = g.legal_vec(seat);
        assert!(
            !legal.is_empty(),
            "seat {seat} must act but has no legal action"
        );
        let a = legal[rng.random_range(0..legal.len())];
        // The text form round-trips and validates to the same action.
        assert_eq!(g.validate(seat, &a.to_string()), Ok(a), "text form of {a}");
        g.apply(seat, a)
            .unwrap_or_else(|e| panic!("legal action {a} refused: {e}"));
        steps.push((seat, a));
        assert!(steps.len() < MAX_ACTIONS, "game does not terminate");
    }
    (g, steps)
}

/// Builds the record of a finished random playout.
pub fn record_of<G: Game>(
    variant: &G::Variant,
    seats: usize,
    seed: u64,
    steps: &[(Seat, G::Action)],
    game: &G,
) -> Record {
    let mut r = Record::begin::<G>(
        variant,
        seed,
        (0..seats)
            .map(|i| SeatInfo::named(format!("random{i}")))
            .collect(),
    );
    r.steps = steps
        .iter()
        .map(|(s, a)| RecordedStep {
            seat: *s,
            kind: StepKind::Action(a.to_string()),
            ms: None,
            cpu_ms: None,
            fault: None,
        })
        .collect();
    r.outcome = game.outcome().expect("finished");
    r
}
