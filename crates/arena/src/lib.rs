//! Runs matches: seats that answer with actions, the fault ruling when an
//! answer is refused, the record of every game, and series of games with
//! rotated seats and a per-bot summary.

pub mod addr_guard;
pub mod bot_side;
pub mod explain;
pub mod fair_threads;
pub mod live;
pub mod record;
pub mod runner;
pub mod seeds;
pub mod series;
pub mod spec;
pub mod think;
pub mod tournament;
pub mod transport;
pub mod watch;

pub use live::{play_live, Driver, LiveConfig, LiveSeat, ProgramSeat};
pub use record::{MatchError, Ruling};
pub use runner::{play_match, Player};
pub use series::{run_series, BotSummary, SeriesConfig, SeriesSummary};
