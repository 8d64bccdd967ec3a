//! A series of games between bots, with seats rotated between games,
//! optional records on disk, and a per-bot summary. Games between built-in
//! strategies only are played directly; games with programs run on a Tokio
//! runtime through the live runner.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use croupier_bots::Builtins;
use croupier_rules::{Record, Seat, SeatInfo};
use serde::Serialize;

use crate::explain::{FaultNotice, FaultSink};
use crate::live::{play_live, LiveConfig, LiveSeat};
use crate::record::MatchError;
use crate::runner::{play_match, Player};
use crate::seeds;
use crate::spec::{BotSpec, SpecError};
use crate::transport::process::Held;

/// What to play.
#[derive(Debug, Clone)]
pub struct SeriesConfig<V> {
    /// Rules variant.
    pub variant: V,
    /// The bots, one per seat (the table has this many seats).
    pub bots: Vec<BotSpec>,
    /// Number of games.
    pub games: u64,
    /// Base seed; game `i` uses [`seeds::game`]`(seed, i)`.
    pub seed: u64,
    /// Directory for one JSON record per game, if any.
    pub records: Option<PathBuf>,
    /// Deadlines and process limits for bot programs.
    pub live: LiveConfig,
    /// The croupier binary, to run built-in strategies as processes.
    pub exe: PathBuf,
    /// Where each fault goes as it is ruled (`play -v`), if anywhere.
    pub on_fault: Option<FaultSink>,
}

/// One bot's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BotSummary {
    /// The bot as given.
    pub name: String,
    /// Games it played.
    pub games: u64,
    /// Games it won outright.
    pub wins: u64,
    /// Games where it shared first place.
    pub draws: u64,
    /// Games it did not finish first in.
    pub losses: u64,
    /// Mean score per game, over the games that were scored (a game ended by
    /// forfeit has no scores).
    pub mean_score: f64,
    /// Faults it committed (timeouts, crashes, malformed or illegal answers).
    pub faults: u64,
    /// Its faults per kind (`timeout`, `crash`, `malformed`, `illegal`,
    /// `disconnect`, `budget`).
    pub fault_kinds: BTreeMap<String, u64>,
    /// Its first fault, explained (absent when it made none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_fault: Option<FirstFault>,
    #[serde(skip)]
    total_score: i64,
    #[serde(skip)]
    scored_games: u64,
}

impl BotSummary {
    /// An empty summary for a bot.
    pub fn new(name: impl Into<String>) -> Self {
        BotSummary {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Empty summaries for a list of bots, in order.
    pub fn for_bots(bots: &[BotSpec]) -> Vec<BotSummary> {
        bots.iter()
            .map(|b| BotSummary::new(b.to_string()))
            .collect()
    }

    /// Counts one game in which this bot held `seat`.
    pub fn add(&mut self, seat: usize, record: &Record) {
        let o = &record.outcome;
        let id = Seat(seat as u8);
        self.games += 1;
        if o.is_sole_winner(id) {
            self.wins += 1;
        } else if o.is_shared_first(id) {
            self.draws += 1;
        } else {
            self.losses += 1;
        }
        if o.forfeited_by.is_none() {
            self.total_score += o.scores[seat];
            self.scored_games += 1;
            self.mean_score = self.total_score as f64 / self.scored_games as f64;
        }
        let faults = record
            .steps
            .iter()
            .filter(|st| st.seat == id)
            .filter_map(|st| st.fault.as_ref());
        for f in faults {
            self.faults += 1;
            *self.fault_kinds.entry(f.kind.clone()).or_default() += 1;
            if self.first_fault.is_none() {
                self.first_fault = Some(FirstFault {
                    game: self.games,
                    seat: seat as u8,
                    kind: f.kind.clone(),
                    detail: f.detail.clone(),
                    stderr: Vec::new(),
                    explained: false,
                });
            }
        }
    }

    /// Adds what the bot had written on stderr to its first fault, from the
    /// notices of the game [`add`](Self::add) just counted (the first of
    /// them for this bot is that fault's).
    pub fn explain(&mut self, notice: &FaultNotice) {
        let games = self.games;
        if let Some(first) = self
            .first_fault
            .as_mut()
            .filter(|f| f.game == games && !f.explained && f.kind == notice.fault.kind)
        {
            first.stderr = notice.stderr.clone();
            first.explained = true;
        }
    }
}

/// A bot's first fault: where it happened, why, and what the bot had last
/// written on stderr (a program's own explanation, often a traceback).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FirstFault {
    /// The bot's game it happened in, counted from 1.
    pub game: u64,
    /// The seat it held.
    pub seat: u8,
    /// The fault's kind.
    pub kind: String,
    /// The fault's detail, as in the record.
    pub detail: String,
    /// The last lines of the bot's stderr when it was ruled (empty for
    /// built-in strategies, HTTP bots, and programs that wrote nothing).
    pub stderr: Vec<String>,
    #[serde(skip)]
    explained: bool,
}

/// Adds each notice of a game to the first fault of the bot that held its
/// seat (`order[seat]`, an index into `bots`).
pub fn explain_faults(bots: &mut [BotSummary], order: &[usize], notices: &[FaultNotice]) {
    for n in notices {
        if let Some(&b) = order.get(n.seat as usize) {
            bots[b].explain(n);
        }
    }
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
    /// A bot specification cannot be used.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
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

/// Plays single games of `G` between given bots: directly when every bot is
/// in-process, otherwise on its own Tokio runtime.
pub struct Table<'a, G: Builtins> {
    variant: &'a G::Variant,
    live: &'a LiveConfig,
    exe: &'a Path,
    runtime: Option<tokio::runtime::Runtime>,
    http: std::sync::Arc<crate::transport::http::HttpClient>,
    /// Games played so far.
    played: AtomicU64,
    /// Whether faults are explained (kept for [`Table::take_faults`]).
    explaining: bool,
    /// Where faults go as they are ruled, besides `notices`.
    on_fault: Option<FaultSink>,
    /// The faults of the game being played (see [`Table::take_faults`]).
    notices: Arc<Mutex<Vec<FaultNotice>>>,
    /// Whether the sandboxes held for a game are cleared and used again
    /// for the next ([`Table::reusing_sandboxes`]).
    reusing: bool,
    /// The last game's held sandboxes, being cleared for the next.
    kept: Mutex<Option<tokio::task::JoinHandle<Vec<Kept>>>>,
}

/// A sandbox kept from a game, with the bot that held it
/// ([`LiveSeat::give_back_held`]).
type Kept = (SeatInfo, Held);

impl<G: Builtins> std::fmt::Debug for Table<'_, G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

impl<'a, G: Builtins> Table<'a, G> {
    /// Checks every bot and prepares to play.
    pub fn new(
        variant: &'a G::Variant,
        bots: &[BotSpec],
        live: &'a LiveConfig,
        exe: &'a Path,
    ) -> Result<Self, SeriesError> {
        for b in bots {
            b.check::<G>(variant)?;
        }
        let runtime = if bots.iter().all(BotSpec::is_in_process) {
            None
        } else {
            Some(
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .map_err(SeriesError::Runtime)?,
            )
        };
        let http =
            crate::transport::http::HttpClient::new(crate::transport::http::HttpLimits::default())
                .map_err(|e| SeriesError::Runtime(std::io::Error::other(e.to_string())))?;
        Ok(Table {
            variant,
            live,
            exe,
            runtime,
            http: std::sync::Arc::new(http),
            played: AtomicU64::new(0),
            explaining: false,
            on_fault: None,
            notices: Arc::default(),
            reusing: false,
            kept: Mutex::new(None),
        })
    }

    /// Keeps the sandboxes bot programs are held in (issue 53: each
    /// round's program, or each match's) from one game to the next, for a
    /// caller whose next game seats the same bots, or some of them (a
    /// series, a tournament's tables): after each game they are cleared in
    /// the background ([`Held::reset`]: every process in them killed, every
    /// writable place emptied, their IPC objects removed), and each bot of
    /// the next game takes back its own, so that a series sets its
    /// sandboxes up once and a program's later starts are starts in a
    /// sandbox already set up. A kept sandbox whose bot does not play the
    /// next game (or whose program would now get another sandbox), or that
    /// cannot be cleared, is killed, and a seat left without one sets up a
    /// new one.
    pub fn reusing_sandboxes(mut self) -> Self {
        self.reusing = true;
        self
    }

    /// Gives `seats` the sandboxes kept from the last game (killing those
    /// none suits), and has them keep theirs at this game's end.
    fn reuse(&self, rt: &tokio::runtime::Runtime, seats: &mut [LiveSeat<G>]) {
        let task = self.kept.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            let mut ready = rt.block_on(task).unwrap_or_default();
            for s in seats.iter_mut() {
                s.take_held(&mut ready, &self.live.limits);
            }
        }
        for s in seats.iter_mut() {
            s.keep_held();
        }
    }

    /// Waits until the sandboxes kept from the last game are cleared (for
    /// a caller that times its games: the clearing is part of their cost).
    pub fn settle(&self) {
        let Some(rt) = &self.runtime else {
            return;
        };
        let mut slot = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(task) = slot.take() {
            let ready = rt.block_on(task).unwrap_or_default();
            *slot = Some(rt.spawn(std::future::ready(ready)));
        }
    }

    /// Clears, in the background, the sandboxes `seats` held for the game
    /// just played, for the next ([`Table::reuse`]).
    fn keep(&self, rt: &tokio::runtime::Runtime, seats: &mut [LiveSeat<G>]) {
        let mut back: Vec<Kept> = seats
            .iter_mut()
            .filter_map(|s| s.give_back_held())
            .collect();
        if back.is_empty() {
            return;
        }
        let task = rt.spawn(async move {
            let cleared = futures::future::join_all(back.iter_mut().map(|(_, h)| h.reset())).await;
            back.into_iter()
                .zip(cleared)
                .filter_map(|(h, r)| match r {
                    Ok(()) => Some(h),
                    Err(e) => {
                        tracing::debug!("a held sandbox is not used again: {e}");
                        None
                    }
                })
                .collect()
        });
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
    }

    /// Keeps each fault of the games it plays, with the bot's stderr, for
    /// [`take_faults`](Self::take_faults) (which the caller must then call
    /// after each game), and hands it to `sink` too, as it is ruled.
    pub fn explaining(mut self, sink: Option<FaultSink>) -> Self {
        self.explaining = true;
        self.on_fault = sink;
        self
    }

    /// The faults of bot programs and HTTP bots in the games played since
    /// the last call, each with the last lines of the bot's stderr.
    pub fn take_faults(&self) -> Vec<FaultNotice> {
        std::mem::take(&mut *self.notices.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A sink that keeps each notice for [`take_faults`](Self::take_faults)
    /// and hands it on to the caller's.
    fn collector(&self) -> FaultSink {
        let notices = Arc::clone(&self.notices);
        let on = self.on_fault.clone();
        FaultSink::new(move |n| {
            notices
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(n.clone());
            if let Some(on) = &on {
                (on.0)(n);
            }
        })
    }

    /// Plays one game from `seed` with `seating[s]` in seat `s`.
    pub fn play(&self, seating: &[&BotSpec], seed: u64) -> Result<Record, SeriesError> {
        let n = seating.len();
        let game = self.played.fetch_add(1, Ordering::Relaxed) + 1;
        let record = match &self.runtime {
            None => {
                let mut players = seating
                    .iter()
                    .map(|spec| match spec {
                        BotSpec::Builtin {
                            name,
                            dialect: None,
                        } => Ok(Player {
                            info: SeatInfo::named(spec.to_string()),
                            strategy: G::builtin(name)?,
                        }),
                        other => Err(SpecError::NotInProcess(other.to_string())),
                    })
                    .collect::<Result<Vec<Player<G>>, SpecError>>()?;
                play_match::<G>(self.variant, seed, &mut players)?
            }
            Some(rt) => {
                let mut seats = seating
                    .iter()
                    .enumerate()
                    .map(|(i, spec)| {
                        spec.seat::<G>(
                            self.variant,
                            n,
                            self.exe,
                            seeds::bot(seed, i as u8),
                            &self.http,
                        )
                    })
                    .collect::<Result<Vec<_>, SpecError>>()?;
                if self.reusing {
                    self.reuse(rt, &mut seats);
                }
                let play = play_live::<G>(self.variant, seed, &mut seats, self.live);
                let record = if self.explaining {
                    rt.block_on(crate::explain::scope(self.collector(), game, play))?
                } else {
                    rt.block_on(play)?
                };
                if self.reusing {
                    self.keep(rt, &mut seats);
                }
                record
            }
        };
        Ok(record)
    }
}

/// Plays a series; `on_game` is called after each game (for progress).
pub fn run_series<G: Builtins>(
    config: &SeriesConfig<G::Variant>,
    mut on_game: impl FnMut(u64, &Record),
) -> Result<SeriesSummary, SeriesError> {
    let table = Table::<G>::new(&config.variant, &config.bots, &config.live, &config.exe)?
        .explaining(config.on_fault.clone());
    // Kept sandboxes pay off from the second game on (a single game's
    // programs start as a match's do).
    let table = match config.games > 1 {
        true => table.reusing_sandboxes(),
        false => table,
    };
    prepare_records(config.records.as_deref())?;
    let n = config.bots.len();
    let mut bots = BotSummary::for_bots(&config.bots);
    for i in 0..config.games {
        // Rotate seats: in game i, seat s is played by bot (s + i) mod n.
        let order: Vec<usize> = (0..n).map(|s| (s + i as usize) % n.max(1)).collect();
        let seating: Vec<&BotSpec> = order.iter().map(|&b| &config.bots[b]).collect();
        let record = table.play(&seating, seeds::game(config.seed, i))?;
        for (seat, &b) in order.iter().enumerate() {
            bots[b].add(seat, &record);
        }
        explain_faults(&mut bots, &order, &table.take_faults());
        if let Some(dir) = &config.records {
            let path = dir.join(format!("{}-s{}-g{:05}.json", G::NAME, config.seed, i));
            write_record(&path, &record)?;
        }
        on_game(i, &record);
    }
    Ok(SeriesSummary {
        game: G::NAME.to_string(),
        games: config.games,
        bots,
    })
}

/// Creates the records directory, if one is wanted.
pub fn prepare_records(dir: Option<&Path>) -> Result<(), SeriesError> {
    match dir {
        Some(d) => fs::create_dir_all(d).map_err(|source| SeriesError::Io {
            path: d.to_path_buf(),
            source,
        }),
        None => Ok(()),
    }
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
