//! Seed derivation, so that one number fixes a whole series.

/// SplitMix64: a well-mixed 64-bit value from any input.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The game seed of game `index` of a series.
pub fn game(base: u64, index: u64) -> u64 {
    mix(base ^ mix(index))
}

/// The generator seed of a seat's strategy in a game.
pub fn bot(game_seed: u64, seat: u8) -> u64 {
    mix(game_seed ^ mix(0xB07 + u64::from(seat)))
}

/// The seed of the arena's own generator (random moves for faults).
pub fn arena(game_seed: u64) -> u64 {
    mix(game_seed ^ 0xA4E4A)
}

#[cfg(test)]
mod tests {
    use crate::seeds;

    #[test]
    fn seeds_differ_per_game_and_seat() {
        assert_ne!(seeds::game(1, 0), seeds::game(1, 1));
        assert_ne!(seeds::bot(5, 0), seeds::bot(5, 1));
        assert_ne!(seeds::arena(5), seeds::bot(5, 0));
    }
}
