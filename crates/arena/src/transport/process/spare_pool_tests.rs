//! The rules of the spares' bookkeeping, with numbered stand-ins for
//! sandboxes (dead where a test says so) and a clock of its own.

use std::time::{Duration, Instant};

use super::Pool;

const IDLE: Duration = Duration::from_secs(600);

fn pool() -> Pool<u32> {
    Pool::new(2, 4, IDLE)
}

fn alive(_: &u32) -> bool {
    true
}

/// Kinds "a" to "d" looked for a second apart from `first`, each with one
/// spare made then: 0 to 3.
fn one_spare_each(p: &mut Pool<u32>, first: Instant) {
    for (i, kind) in ["a", "b", "c", "d"].into_iter().enumerate() {
        let at = first + Duration::from_secs(i as u64);
        let g = p.look(kind, at, alive).generation;
        assert_eq!(p.made(kind, g, i as u32, at), None);
    }
}

#[test]
fn the_first_start_of_a_kind_finds_none_and_has_two_set_up_once() {
    let mut p = pool();
    let t = Instant::now();
    let first = p.look("a", t, alive);
    assert_eq!((first.found, first.make), (None, 2));
    // The two being set up count: a second start meanwhile begins none.
    let second = p.look("a", t, alive);
    assert_eq!((second.found, second.make), (None, 0));
    // One setup failed: the next start begins one more.
    p.done("a", first.generation);
    assert_eq!(p.look("a", t, alive).make, 1);
}

#[test]
fn the_oldest_spare_is_taken_and_its_place_is_set_up_again() {
    let mut p = pool();
    let t = Instant::now();
    let g = p.look("a", t, alive).generation;
    for (n, at) in [(1, t), (2, t + Duration::from_secs(1))] {
        assert_eq!(p.made("a", g, n, at), None);
        p.done("a", g);
    }
    let took = p.look("a", t + Duration::from_secs(2), alive);
    assert_eq!((took.found, took.make), (Some(1), 1));
    assert_eq!(
        p.look("a", t + Duration::from_secs(3), alive).found,
        Some(2)
    );
}

#[test]
fn a_dead_spare_is_never_taken() {
    let mut p = pool();
    let t = Instant::now();
    let g = p.look("a", t, alive).generation;
    p.made("a", g, 1, t);
    p.made("a", g, 2, t + Duration::from_secs(1));
    // The oldest, 1, died: the start takes 2, and 1 is let go.
    let look = p.look("a", t + Duration::from_secs(2), |n| *n != 1);
    assert_eq!((look.found, look.gone), (Some(2), vec![1]));
}

#[test]
fn idle_and_dead_spares_of_every_kind_are_let_go_at_any_start() {
    let mut p = pool();
    let t = Instant::now();
    let g = p.look("a", t, alive).generation;
    p.made("a", g, 1, t);
    p.made("a", g, 2, t + Duration::from_secs(60));
    let h = p.look("b", t, alive).generation;
    p.made("b", h, 3, t);
    p.made("b", h, 4, t + Duration::from_secs(60));
    // At IDLE after 1 and 3 were made, a start of another kind lets them
    // go; 4, not idle so long, is dead.
    let later = t + IDLE;
    let look = p.look("c", later, |n| *n != 4);
    let mut gone = look.gone;
    gone.sort_unstable();
    assert_eq!(gone, [1, 3, 4]);
    assert_eq!(p.ready_mut("a").map(|n| *n).collect::<Vec<_>>(), [2]);
    assert_eq!(p.ready_mut("b").count(), 0);
}

#[test]
fn a_kind_past_the_fourth_forgets_the_one_used_longest_ago() {
    let mut p = pool();
    let t = Instant::now();
    one_spare_each(&mut p, t);
    // "a" is used again: "b" is now the one used longest ago.
    let a = p.look("a", t + Duration::from_secs(10), alive);
    assert_eq!(a.found, Some(0));
    assert!(a.gone.is_empty());
    let e = p.look("e", t + Duration::from_secs(11), alive);
    assert_eq!(e.gone, [1], "b's spare is let go with b");
    assert_eq!(p.ready_mut("b").count(), 0);
    assert_eq!(p.ready_mut("c").count(), 1);
    // A spare put back for a forgotten kind is handed back, to be let go.
    assert_eq!(p.put_back("b", 9, t), Some(9));
}

#[test]
fn a_setup_begun_for_a_forgotten_kind_counts_in_no_new_keeping_of_it() {
    let mut p = pool();
    let t = Instant::now();
    let old = p.look("a", t, alive);
    assert_eq!(old.make, 2);
    // One of its setups is done; then "a" is forgotten while the other
    // runs (its ready spare is let go with it), and looked for again.
    assert_eq!(p.made("a", old.generation, 5, t), None);
    p.done("a", old.generation);
    let mut gone = Vec::new();
    for (i, kind) in ["b", "c", "d", "e"].into_iter().enumerate() {
        gone.extend(
            p.look(kind, t + Duration::from_secs(1 + i as u64), alive)
                .gone,
        );
    }
    assert_eq!(gone, [5]);
    assert_eq!(p.ready_mut("a").count(), 0);
    let new = p.look("a", t + Duration::from_secs(9), alive);
    assert_ne!(new.generation, old.generation);
    assert_eq!(new.make, 2);
    // The old setup ends: its spare is not kept, and its end does not take
    // from the new keeping's count of setups.
    assert_eq!(p.made("a", old.generation, 7, t), Some(7));
    p.done("a", old.generation);
    assert_eq!(p.look("a", t + Duration::from_secs(10), alive).make, 0);
    assert_eq!(p.made("a", new.generation, 8, t), None);
    assert_eq!(p.ready_mut("a").map(|n| *n).collect::<Vec<_>>(), [8]);
}

#[test]
fn the_kind_looked_for_is_never_the_one_forgotten() {
    let mut p = pool();
    let t = Instant::now();
    one_spare_each(&mut p, t + Duration::from_secs(1));
    // A fifth kind, looked for with a clock behind the others' (their
    // `used` is later than its own): "a" goes, not "e".
    let e = p.look("e", t, alive);
    assert_eq!(e.gone, [0]);
    assert_eq!(p.made("e", e.generation, 9, t), None);
    assert_eq!(p.ready_mut("e").map(|n| *n).collect::<Vec<_>>(), [9]);
}

#[test]
fn a_spare_put_back_is_kept_up_to_two_of_its_kind() {
    let mut p = pool();
    let t = Instant::now();
    let g = p.look("a", t, alive).generation;
    p.made("a", g, 1, t);
    assert_eq!(p.put_back("a", 2, t), None);
    assert_eq!(p.put_back("a", 3, t), Some(3));
    assert_eq!(p.ready_mut("a").map(|n| *n).collect::<Vec<_>>(), [1, 2]);
}
