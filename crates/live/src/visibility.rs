//! Hidden information and its time: what a running game keeps to itself.
//!
//! A game's seed determines every card dealt, so it (and anything derived
//! from it: the record, the replay, other seats' hands) stays off every page,
//! JSON twin, API reply and log line visible to bots until the deal is
//! public. A deal is public when **every game sharing it** is over — one
//! rule for all, so that duplicate seatings (the same deal played more than
//! once, as tournaments do) plug in by passing all their games. The server
//! today deals each game afresh, so a deal's games are that one game.
//!
//! Seeds come from the operating system's random source, one per game:
//! never derived from ids, clocks or a counter a bot could observe.

use rand::TryRngCore;

/// A game's status as stored: `running`, `finished` or `aborted`.
pub const RUNNING: &str = "running";

/// The operating system's random source failed.
#[derive(Debug, thiserror::Error)]
#[error("the OS random source failed: {0}")]
pub struct NoEntropy(String);

/// A fresh seed for a new deal, from the OS random source.
pub fn fresh_seed() -> Result<u64, NoEntropy> {
    rand::rngs::OsRng
        .try_next_u64()
        .map_err(|e| NoEntropy(e.to_string()))
}

/// Fills `bytes` from the OS random source.
pub fn os_random(bytes: &mut [u8]) -> Result<(), NoEntropy> {
    rand::rngs::OsRng
        .try_fill_bytes(bytes)
        .map_err(|e| NoEntropy(e.to_string()))
}

/// Whether a deal may be shown: every game playing it is over (finished or
/// aborted). `statuses` holds the status of each game sharing the deal; a
/// deal no game plays is not shown.
pub fn deal_is_public<'a>(statuses: impl IntoIterator<Item = &'a str>) -> bool {
    let mut any = false;
    for s in statuses {
        any = true;
        if s == RUNNING {
            return false;
        }
    }
    any
}

/// The deal of a game the server dealt alone (no other game shares it).
pub fn game_is_public(status: &str) -> bool {
    deal_is_public([status])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deal_is_public_only_when_all_its_games_are_over() {
        assert!(!deal_is_public(["running"]));
        assert!(deal_is_public(["finished"]));
        assert!(deal_is_public(["aborted"]));
        assert!(!deal_is_public(["finished", "running"]));
        assert!(deal_is_public(["finished", "aborted", "finished"]));
        assert!(!deal_is_public([]));
        assert!(!game_is_public("running"));
        assert!(game_is_public("finished"));
    }

    #[test]
    fn seeds_differ() {
        let seeds: std::collections::HashSet<u64> =
            (0..64).map(|_| fresh_seed().unwrap()).collect();
        assert_eq!(seeds.len(), 64);
    }
}
