//! The shuffle of every game's cards: rand 0.9's `SliceRandom::shuffle`,
//! step for step (the same draws from the generator, the same swaps, so
//! the same deals from the same seeds), with its divisions by the small
//! numbers 2..=len done by multiplication. A division by a number known
//! only at run time takes tens of cycles; a deal of 16 cards makes 15 of
//! them. The tests compare it with rand's own for every length up to and
//! beyond [`MAX_LEN`].

use rand::seq::SliceRandom;
use rand::Rng;

/// The longest slice shuffled here; longer ones go to rand's shuffle.
const MAX_LEN: usize = 64;

/// `ceil(2^64 / d)` for each divisor `d` in `2..=MAX_LEN`.
const RECIPROCALS: [u64; MAX_LEN + 1] = {
    let mut r = [0; MAX_LEN + 1];
    let mut d = 2;
    while d <= MAX_LEN {
        r[d] = u64::MAX / d as u64 + 1;
        d += 1;
    }
    r
};

/// For each `n` in `2..=MAX_LEN`, rand's chunk for the indices from `n`
/// on: the product `n * (n + 1) * ...` of as many factors as fit in a u32,
/// and how many they are (rand's `calculate_bound_u32`).
const BOUNDS: [(u32, u8); MAX_LEN + 1] = {
    let mut b = [(0, 0); MAX_LEN + 1];
    let mut n = 2;
    while n <= MAX_LEN {
        let mut product = n as u32;
        let mut current = n as u32 + 1;
        while let Some(p) = product.checked_mul(current) {
            product = p;
            current += 1;
        }
        b[n] = (product, (current - n as u32) as u8);
        n += 1;
    }
    b
};

/// `(x / d, x % d)` for `d` in `2..=MAX_LEN`: the quotient is the high
/// word of `x * ceil(2^64 / d)`, exact for every 32-bit `x` and `d`
/// (Lemire, Kaser and Kurz, "Faster remainder by direct computation",
/// 2019).
#[inline]
fn div_rem(x: u32, d: usize) -> (u32, u32) {
    let q = ((u128::from(RECIPROCALS[d]) * u128::from(x)) >> 64) as u32;
    (q, x - q * d as u32)
}

/// Shuffles `items` exactly as `items.shuffle(rng)` (rand 0.9) does.
pub(crate) fn shuffle<T, R: Rng + ?Sized>(items: &mut [T], rng: &mut R) {
    let len = items.len();
    if len > MAX_LEN {
        items.shuffle(rng);
        return;
    }
    // rand: for each i, swap item i with a uniform index in 0..=i, the
    // indices read from one draw in 0..bound for several i at once (mixed
    // radix: the remainder by i + 1, then the quotient goes on). Item 0
    // stays where it is without a draw.
    let (mut chunk, mut left) = (0u32, 0u8);
    for i in 1..len {
        let d = i + 1;
        if left == 0 {
            let (bound, count) = BOUNDS[d];
            chunk = rng.random_range(..bound);
            left = count;
        }
        left -= 1;
        let j = if left == 0 {
            chunk
        } else {
            let (q, r) = div_rem(chunk, d);
            chunk = q;
            r
        };
        items.swap(i, j as usize);
    }
}

/// The indices of one draw: swaps item `d - 1` with a uniform index in
/// `0..d` for each `d` in `first..=last`, all read from one draw in
/// `0..BOUNDS[first]` as [`shuffle`] reads them (the remainder by `d`, the
/// quotient going on; at the chunk's last digit the quotient is already
/// below `d`, so it is the digit). `last` may stop short
/// of the chunk's end, as a slice's last chunk does. Inlined with constant
/// `first` and `last`, the loop unrolls and every division is by a
/// constant (a multiplication the compiler picks).
#[inline(always)]
fn one_draw<T, R: Rng + ?Sized>(items: &mut [T], rng: &mut R, first: usize, last: usize) {
    let (bound, count) = BOUNDS[first];
    let end = first + usize::from(count) - 1;
    debug_assert!(
        2 <= first && first <= last && last <= end,
        "{first}..={last}"
    );
    let mut chunk = rng.random_range(..bound);
    for d in first..=last {
        // At the chunk's end the quotient is the digit: no division.
        let j = if d == end {
            chunk
        } else {
            let j = chunk % d as u32;
            chunk /= d as u32;
            j
        };
        items.swap(d - 1, j as usize);
    }
}

/// The draws of a shuffle of `len` items: `(first, last)` of each, as
/// [`one_draw`] takes them. `K` must be their number (checked when the
/// constant is built).
const fn draws<const K: usize>(len: usize) -> [(usize, usize); K] {
    let mut out = [(0, 0); K];
    let (mut first, mut k) = (2, 0);
    while first <= len {
        let end = first + BOUNDS[first].1 as usize - 1;
        let last = if end < len { end } else { len };
        out[k] = (first, last);
        first = last + 1;
        k += 1;
    }
    assert!(
        k == K,
        "a shuffle of this length takes another number of draws"
    );
    out
}

/// A Love Letter deck's two draws.
const DRAWS_16: [(usize, usize); 2] = draws(16);
/// A full pack's eight draws.
const DRAWS_52: [(usize, usize); 8] = draws(52);

/// [`shuffle`] of exactly 16 items (a Love Letter deck), written out:
/// the same two draws and the same swaps, with no counter (the draws'
/// bounds are constants). Indices 1..=11 come from the first draw in `0..2*3*...*12`, 12..=15
/// from the second, of which rand reads only four of its seven digits.
#[inline]
pub(crate) fn shuffle_16<T, R: Rng + ?Sized>(items: &mut [T; 16], rng: &mut R) {
    one_draw(items, rng, DRAWS_16[0].0, DRAWS_16[0].1);
    one_draw(items, rng, DRAWS_16[1].0, DRAWS_16[1].1);
}

/// [`shuffle`] of exactly 52 items (a full pack, as SkullWhist deals),
/// written out as [`shuffle_16`] is: the same eight draws, the same swaps.
#[inline]
pub(crate) fn shuffle_52<T, R: Rng + ?Sized>(items: &mut [T; 52], rng: &mut R) {
    one_draw(items, rng, DRAWS_52[0].0, DRAWS_52[0].1);
    one_draw(items, rng, DRAWS_52[1].0, DRAWS_52[1].1);
    one_draw(items, rng, DRAWS_52[2].0, DRAWS_52[2].1);
    one_draw(items, rng, DRAWS_52[3].0, DRAWS_52[3].1);
    one_draw(items, rng, DRAWS_52[4].0, DRAWS_52[4].1);
    one_draw(items, rng, DRAWS_52[5].0, DRAWS_52[5].1);
    one_draw(items, rng, DRAWS_52[6].0, DRAWS_52[6].1);
    one_draw(items, rng, DRAWS_52[7].0, DRAWS_52[7].1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::game_rng;

    #[test]
    fn deals_as_rands_shuffle_does_for_every_length() {
        for len in 0..=MAX_LEN + 3 {
            for seed in 0..200u64 {
                let mut ours: Vec<usize> = (0..len).collect();
                let mut theirs = ours.clone();
                let (mut a, mut b) = (game_rng(seed), game_rng(seed));
                // Twice: the generator's state after a shuffle is the same too.
                for _ in 0..2 {
                    shuffle(&mut ours, &mut a);
                    theirs.shuffle(&mut b);
                    assert_eq!(ours, theirs, "length {len}, seed {seed}");
                }
                assert_eq!(a.random::<u64>(), b.random::<u64>());
            }
        }
    }

    /// `ours` deals a pack of `N` as rand's shuffle does, three times over
    /// from each of 20,000 seeds, and leaves the generator where it does.
    fn deals_as_rand<const N: usize>(ours: fn(&mut [u8; N], &mut crate::core::GameRng)) {
        for seed in 0..20_000u64 {
            let mut mine: [u8; N] = std::array::from_fn(|i| i as u8);
            let mut theirs = mine;
            let (mut a, mut b) = (game_rng(seed), game_rng(seed));
            for _ in 0..3 {
                ours(&mut mine, &mut a);
                theirs.shuffle(&mut b);
                assert_eq!(mine, theirs, "{N} items, seed {seed}");
            }
            assert_eq!(a.random::<u64>(), b.random::<u64>());
        }
    }

    #[test]
    fn deals_16_as_the_general_shuffle_does() {
        assert_eq!(BOUNDS[2].1, 11, "one draw for indices 1..=11");
        assert_eq!(DRAWS_16, [(2, 12), (13, 16)]);
        deals_as_rand::<16>(shuffle_16);
    }

    #[test]
    fn deals_52_as_the_general_shuffle_does() {
        // Eight draws cover the indices 1..=51 once each.
        let first = [(2, 12), (13, 19), (20, 26), (27, 32)];
        let then = [(33, 38), (39, 43), (44, 48), (49, 52)];
        assert_eq!((&DRAWS_52[..4], &DRAWS_52[4..]), (&first[..], &then[..]));
        deals_as_rand::<52>(shuffle_52);
    }

    #[test]
    fn divides_exactly() {
        let mut rng = game_rng(7);
        for d in 2..=MAX_LEN {
            let edges = [0, 1, d as u32 - 1, d as u32, u32::MAX - 1, u32::MAX];
            let random = (0..10_000).map(|_| rng.random::<u32>());
            for x in edges.into_iter().chain(random) {
                assert_eq!(div_rem(x, d), (x / d as u32, x % d as u32), "{x} / {d}");
            }
        }
    }

    #[test]
    fn the_bounds_are_rands() {
        // 2 * 3 * ... * 12 = 479,001,600 fits; times 13 does not.
        assert_eq!(BOUNDS[2], (479_001_600, 11));
        assert_eq!(BOUNDS[13], (13 * 14 * 15 * 16 * 17 * 18 * 19, 7));
    }
}
