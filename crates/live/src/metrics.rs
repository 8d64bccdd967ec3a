//! The games' metrics (issue 49): every kind of game (the 2014 REST API's,
//! the ladder's, tournaments', people's) counts its starts, ends and faults
//! here, under one set of names. They go to the `metrics` facade: a no-op
//! until the process installs a recorder (`croupier serve
//! --metrics-listen`, see `croupier_server::metrics`), like log lines
//! without a subscriber.

use croupier_rules::Record;

/// Games dealt, by game and kind.
pub const GAMES_STARTED: &str = "croupier_games_started_total";
/// Games finished and stored, by game and kind.
pub const GAMES_FINISHED: &str = "croupier_games_finished_total";
/// Games aborted (stored without a result), by game and kind.
pub const GAMES_ABORTED: &str = "croupier_games_aborted_total";
/// Faults ruled in finished games, by game and fault kind.
pub const FAULTS: &str = "croupier_faults_total";
/// Games in progress in this process (dealt, not yet finished or aborted),
/// by game and kind.
pub const GAMES_ACTIVE: &str = "croupier_games_active";

/// Where a game comes from: the label `kind` of the game counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameSource {
    /// A SkullWhist game of the 2014 REST API (its bots and house bots).
    Rest,
    /// A ladder match.
    Ladder,
    /// A tournament game.
    Tournament,
    /// A person at the card table against bots.
    People,
}

impl GameSource {
    /// The label.
    pub fn label(self) -> &'static str {
        match self {
            GameSource::Rest => "rest",
            GameSource::Ladder => "ladder",
            GameSource::Tournament => "tournament",
            GameSource::People => "people",
        }
    }
}

/// A game of `game` was dealt.
pub fn game_started(game: &str, source: GameSource) {
    metrics::counter!(GAMES_STARTED, "game" => game.to_string(), "kind" => source.label())
        .increment(1);
    metrics::gauge!(GAMES_ACTIVE, "game" => game.to_string(), "kind" => source.label())
        .increment(1);
}

/// A game finished with `record` and was stored: counts it and its faults.
pub fn game_finished(source: GameSource, record: &Record) {
    metrics::counter!(GAMES_FINISHED, "game" => record.game.clone(), "kind" => source.label())
        .increment(1);
    metrics::gauge!(GAMES_ACTIVE, "game" => record.game.clone(), "kind" => source.label())
        .decrement(1);
    for f in record.steps.iter().filter_map(|s| s.fault.as_ref()) {
        metrics::counter!(FAULTS, "game" => record.game.clone(), "fault" => f.kind.clone())
            .increment(1);
    }
}

/// A game of `game` was aborted.
pub fn game_aborted(game: &str, source: GameSource) {
    metrics::counter!(GAMES_ABORTED, "game" => game.to_string(), "kind" => source.label())
        .increment(1);
    metrics::gauge!(GAMES_ACTIVE, "game" => game.to_string(), "kind" => source.label())
        .decrement(1);
}

/// A game counted as started: counted as finished by
/// [`finished`](Counted::finished), or as aborted when dropped unfinished
/// (an error on the way, a match abandoned, a task cancelled), so that
/// every start has exactly one end and `croupier_games_active` cannot
/// drift.
#[derive(Debug)]
#[must_use = "dropping it counts the game as aborted"]
pub struct Counted {
    game: String,
    source: GameSource,
    ended: bool,
}

impl Counted {
    /// Counts a game of `game` as started.
    pub fn start(game: &str, source: GameSource) -> Counted {
        game_started(game, source);
        Counted {
            game: game.to_string(),
            source,
            ended: false,
        }
    }

    /// Counts the game as finished with `record` (and its faults).
    pub fn finished(mut self, record: &Record) {
        self.ended = true;
        game_finished(self.source, record);
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if !self.ended {
            game_aborted(&self.game, self.source);
        }
    }
}
