//! A series of games between built-in strategies, with seats rotated between
//! games, optional records on disk, and a per-bot summary.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use croupier_bots::Builtins;
use croupier_rules::{Record, SeatInfo};
use serde::Serialize;

use crate::runner::{play_match, seeds, MatchError, Player};

/// What to play.
#[derive(Debug, Clone)]
pub struct SeriesConfig<V> {
    /// Rules variant.
    pub variant: V,
    /// Built-in strategy names, one per bot (the table has this many seats).
    pub bots: Vec<String>,
    /// Number of games.
    pub games: u64,
    /// Base seed; game `i` uses [`seeds::game`]`(seed, i)`.
    pub seed: u64,
    /// Directory for one JSON record per game, if any.
    pub records: Option<PathBuf>,
}

/// One bot's results over a series.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BotSummary {
    /// The bot's name as given.
    pub name: String,
    /// Games it won outright.
    pub wins: u64,
    /// Games where it shared first place.
    pub draws: u64,
    /// Games it did not finish first in.
    pub losses: u64,
    /// Mean score per game, over the games that were scored (a game ended by
    /// forfeit has no scores).
    pub mean_score: f64,
    /// Faults it committed (refused answers).
    pub faults: u64,
    #[serde(skip)]
    total_score: i64,
    #[serde(skip)]
    scored_games: u64,
}

/// The result of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesSummary {
    /// Game name.
    pub game: String,
    /// Games played.
    pub games: u64,
    /// One entry per bot, in the order given.
    pub bots: Vec<BotSummary>,
}

/// Why a series stopped.
#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    /// A bot name is unknown.
    #[error(transparent)]
    UnknownBot(#[from] croupier_bots::UnknownBot),
    /// A game could not be played.
    #[error(transparent)]
    Match(#[from] MatchError),
    /// A record could not be written.
    #[error("cannot write record {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Plays a series; `on_game` is called after each game (for progress).
pub fn run_series<G: Builtins>(
    config: &SeriesConfig<G::Variant>,
    mut on_game: impl FnMut(u64, &Record),
) -> Result<SeriesSummary, SeriesError> {
    let n = config.bots.len();
    // Check every name before the first game.
    for name in &config.bots {
        G::builtin(name)?;
    }
    if let Some(dir) = &config.records {
        fs::create_dir_all(dir).map_err(|source| SeriesError::Io {
            path: dir.clone(),
            source,
        })?;
    }
    let mut bots: Vec<BotSummary> = config
        .bots
        .iter()
        .map(|b| BotSummary {
            name: format!("builtin:{b}"),
            ..Default::default()
        })
        .collect();
    for i in 0..config.games {
        // Rotate seats: in game i, seat s is played by bot (s + i) mod n.
        let order: Vec<usize> = (0..n).map(|s| (s + i as usize) % n.max(1)).collect();
        let mut players = order
            .iter()
            .map(|&b| {
                Ok(Player {
                    info: SeatInfo::named(format!("builtin:{}", config.bots[b])),
                    strategy: G::builtin(&config.bots[b])?,
                })
            })
            .collect::<Result<Vec<Player<G>>, croupier_bots::UnknownBot>>()?;
        let seed = seeds::game(config.seed, i);
        let record = play_match::<G>(&config.variant, seed, &mut players)?;
        for (seat, &b) in order.iter().enumerate() {
            let s = &mut bots[b];
            let o = &record.outcome;
            let seat_id = croupier_rules::Seat(seat as u8);
            if o.is_sole_winner(seat_id) {
                s.wins += 1;
            } else if o.is_shared_first(seat_id) {
                s.draws += 1;
            } else {
                s.losses += 1;
            }
            if o.forfeited_by.is_none() {
                s.total_score += o.scores[seat];
                s.scored_games += 1;
            }
            s.faults += record
                .steps
                .iter()
                .filter(|st| st.seat == seat_id && st.fault.is_some())
                .count() as u64;
        }
        if let Some(dir) = &config.records {
            let path = dir.join(format!("{}-s{}-g{:05}.json", G::NAME, config.seed, i));
            write_record(&path, &record)?;
        }
        on_game(i, &record);
    }
    for s in &mut bots {
        s.mean_score = if config.games == 0 {
            0.0
        } else {
            s.total_score as f64 / config.games as f64
        };
    }
    Ok(SeriesSummary {
        game: G::NAME.to_string(),
        games: config.games,
        bots,
    })
}

/// Writes a record as pretty JSON, atomically (temporary file, then rename).
pub fn write_record(path: &Path, record: &Record) -> Result<(), SeriesError> {
    let io = |source| SeriesError::Io {
        path: path.to_path_buf(),
        source,
    };
    let tmp = path.with_extension("json.tmp");
    let file = fs::File::create(&tmp).map_err(io)?;
    let mut w = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut w, record).map_err(|e| io(e.into()))?;
    w.write_all(b"\n").map_err(io)?;
    w.flush().map_err(io)?;
    drop(w);
    fs::rename(&tmp, path).map_err(io)
}
