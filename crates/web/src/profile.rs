//! Figures from the records of a bot's recent games: how long it thinks
//! (wall time, and CPU time where the records carry it), how it faults,
//! its version; and for two bots, their score margins and results by seat
//! and by who led first.
//!
//! They are read from the facts stored with each record
//! ([`croupier_store::facts`], one small row per game); a game stored
//! without them has its record read instead. Only games whose deal is
//! public are read (see [`croupier_live::visibility`]); a record that does
//! not parse is skipped.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use croupier_rules::Record;
use croupier_store::facts::GameFacts;
use croupier_store::web::GameSummary;
use croupier_store::{BotId, GameId, Store};
use serde::Serialize;

use crate::page::WebError;

/// Faults listed on a bot's page.
const RECENT_FAULTS: usize = 10;

/// Percentiles of a bot's thinking time, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thinking {
    /// Moves measured.
    pub moves: usize,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest move.
    pub max: f64,
}

impl Thinking {
    /// The percentiles of `ms` (nearest rank), or `None` without moves.
    pub fn of(mut ms: Vec<f64>) -> Option<Thinking> {
        ms.retain(|m| m.is_finite());
        if ms.is_empty() {
            return None;
        }
        ms.sort_by(f64::total_cmp);
        let n = ms.len();
        let rank = |p: f64| ms[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Some(Thinking {
            moves: n,
            p50: rank(0.50),
            p90: rank(0.90),
            p95: rank(0.95),
            p99: rank(0.99),
            max: ms[n - 1],
        })
    }
}

/// A fault in a bot's recent games.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecentFault {
    /// The game.
    pub game_id: i64,
    /// The step (from 1, as the replay numbers them).
    pub step: usize,
    /// Its kind (`timeout`, `illegal`, ...).
    pub kind: String,
    /// What happened.
    pub detail: String,
}

/// The CPU time of a bot's decisions, where its records carry it (a bot
/// program in a cgroup of its own, issue 51: the step field `cpu_ms`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cpu {
    /// Percentiles of the CPU time per decision, in milliseconds.
    pub thinking: Thinking,
    /// Percentiles of the wall time of the same decisions, to compare
    /// move for move.
    pub wall: Thinking,
    /// Mean CPU time per decision, in milliseconds.
    pub mean_ms: f64,
    /// Mean wall time of the same decisions, in milliseconds.
    pub wall_mean_ms: f64,
}

impl Cpu {
    /// The summary of `(wall, cpu)` pairs, or `None` without any.
    pub fn of(pairs: &[(f64, f64)]) -> Option<Cpu> {
        let pairs: Vec<(f64, f64)> = pairs
            .iter()
            .copied()
            .filter(|(w, c)| w.is_finite() && c.is_finite())
            .collect();
        let n = pairs.len() as f64;
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        Some(Cpu {
            thinking: Thinking::of(pairs.iter().map(|p| p.1).collect())?,
            wall: Thinking::of(pairs.iter().map(|p| p.0).collect())?,
            mean_ms: round(pairs.iter().map(|p| p.1).sum::<f64>() / n),
            wall_mean_ms: round(pairs.iter().map(|p| p.0).sum::<f64>() / n),
        })
    }
}

/// What a bot's recent records say about it.
#[derive(Debug, Default, Serialize)]
pub struct Profile {
    /// Records read.
    pub games: usize,
    /// Thinking time (wall time), when the bot was asked over a transport.
    pub thinking: Option<Thinking>,
    /// CPU time of the decisions whose records carry it (`None`: not
    /// measured, e.g. HTTP bots, built-ins or older records).
    pub cpu: Option<Cpu>,
    /// It played in-process (a built-in strategy): no times to show.
    pub builtin: bool,
    /// Fault counts by kind.
    pub faults: BTreeMap<String, usize>,
    /// The latest faults, newest first.
    pub recent_faults: Vec<RecentFault>,
    /// The version its newest record names.
    pub version: Option<String>,
}

/// What may be shown of each of `games`: its stored facts, or (a game
/// stored before facts were kept, or whose facts do not read) the facts of
/// its record. A game that is not public, or whose record does not parse,
/// is left out.
async fn facts_of(
    store: &Arc<dyn Store>,
    games: &[GameSummary],
) -> Result<HashMap<GameId, GameFacts>, WebError> {
    let ids: Vec<GameId> = games.iter().map(|g| g.id).collect();
    let mut out = HashMap::with_capacity(ids.len());
    for row in store.game_facts(&ids).await? {
        if !croupier_live::visibility::game_is_public(&row.status) || row.secret {
            continue;
        }
        let facts = match row.facts.as_deref().and_then(GameFacts::parse) {
            Some(f) => f,
            None => {
                let record = store
                    .game(row.id)
                    .await?
                    .and_then(|g| g.record)
                    .and_then(|r| serde_json::from_str::<Record>(&r).ok());
                match record {
                    Some(r) => GameFacts::of(&r),
                    None => continue,
                }
            }
        };
        out.insert(row.id, facts);
    }
    Ok(out)
}

/// The seat `bot` held in `game`.
fn seat_of(game: &GameSummary, bot: BotId) -> Option<usize> {
    game.seats
        .iter()
        .find(|s| s.bot == bot)
        .and_then(|s| usize::try_from(s.seat).ok())
}

/// Reads the facts of `games` (newest first) for `bot`.
pub async fn profile(
    store: &Arc<dyn Store>,
    bot: BotId,
    games: &[GameSummary],
) -> Result<Profile, WebError> {
    let facts = facts_of(store, games).await?;
    let mut out = Profile::default();
    let mut ms = Vec::new();
    let mut cpu = Vec::new();
    for g in games {
        let Some(seat) = seat_of(g, bot) else {
            continue;
        };
        let Some(info) = facts.get(&g.id).and_then(|f| f.seats.get(seat)) else {
            continue;
        };
        out.games += 1;
        if out.version.is_none() {
            out.version.clone_from(&info.version);
        }
        out.builtin |= !info.timed;
        ms.extend_from_slice(&info.ms);
        cpu.extend_from_slice(&info.cpu);
        for f in &info.faults {
            *out.faults.entry(f.kind.clone()).or_default() += 1;
            if out.recent_faults.len() < RECENT_FAULTS {
                out.recent_faults.push(RecentFault {
                    game_id: g.id,
                    step: f.step,
                    kind: f.kind.clone(),
                    detail: f.detail.clone(),
                });
            }
        }
    }
    out.thinking = Thinking::of(ms);
    out.cpu = Cpu::of(&cpu);
    Ok(out)
}

/// Results of one bot against another over some games, from the first
/// bot's side.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Games.
    pub games: i64,
    /// Won.
    pub wins: i64,
    /// Lost.
    pub losses: i64,
    /// Tied.
    pub ties: i64,
}

impl Tally {
    fn add(&mut self, r: std::cmp::Ordering) {
        self.games += 1;
        match r {
            std::cmp::Ordering::Less => self.wins += 1,
            std::cmp::Ordering::Greater => self.losses += 1,
            std::cmp::Ordering::Equal => self.ties += 1,
        }
    }
}

/// Score margins of `a` over `b` (games neither forfeited).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Margins {
    /// Games with a margin.
    pub games: usize,
    /// Mean of a's score minus b's.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// a's largest win margin (positive), if a won any.
    pub best: Option<i64>,
    /// a's largest loss margin (negative), if a lost any.
    pub worst: Option<i64>,
    /// Every margin, oldest game first (for the strip chart).
    pub all: Vec<i64>,
}

impl Margins {
    /// The summary of `margins` (oldest first), or `None` if empty.
    pub fn of(all: Vec<i64>) -> Option<Margins> {
        if all.is_empty() {
            return None;
        }
        let mut sorted = all.clone();
        sorted.sort_unstable();
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2] as f64
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0
        };
        Some(Margins {
            games: n,
            mean: all.iter().sum::<i64>() as f64 / n as f64,
            median,
            best: sorted.last().copied().filter(|m| *m > 0),
            worst: sorted.first().copied().filter(|m| *m < 0),
            all,
        })
    }
}

/// Two bots' shared games of one kind, split.
#[derive(Debug, Serialize)]
pub struct Split {
    /// The game kind.
    pub game: String,
    /// a's score minus b's.
    pub margins: Option<Margins>,
    /// a's results when it sat before b (seat order), and after.
    pub a_first_seat: Tally,
    /// When b sat before a.
    pub b_first_seat: Tally,
    /// SkullWhist: a's results when a led the first trick, and when b did
    /// (from the records).
    pub a_led_first: Option<Tally>,
    /// When b led the first trick.
    pub b_led_first: Option<Tally>,
}

/// Splits the shared games of `a` and `b` (newest first) by game kind.
pub async fn split(
    store: &Arc<dyn Store>,
    a: BotId,
    b: BotId,
    games: &[GameSummary],
) -> Result<Vec<Split>, WebError> {
    let facts = facts_of(store, games).await?;
    let mut out: Vec<Split> = Vec::new();
    let mut margins: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for g in games.iter().rev() {
        let (Some(sa), Some(sb)) = (
            g.seats.iter().find(|s| s.bot == a),
            g.seats.iter().find(|s| s.bot == b),
        ) else {
            continue;
        };
        let (Some(ra), Some(rb)) = (sa.rank, sb.rank) else {
            continue;
        };
        let idx = match out.iter().position(|s| s.game == g.game) {
            Some(i) => i,
            None => {
                let sw = g.game == "skullwhist";
                out.push(Split {
                    game: g.game.clone(),
                    margins: None,
                    a_first_seat: Tally::default(),
                    b_first_seat: Tally::default(),
                    a_led_first: sw.then(Tally::default),
                    b_led_first: sw.then(Tally::default),
                });
                out.len() - 1
            }
        };
        let result = ra.cmp(&rb);
        let split = &mut out[idx];
        if sa.seat < sb.seat {
            split.a_first_seat.add(result);
        } else {
            split.b_first_seat.add(result);
        }
        if let (Some(sa_score), Some(sb_score), false) =
            (sa.score, sb.score, sa.forfeited || sb.forfeited)
        {
            margins
                .entry(g.game.clone())
                .or_default()
                .push(sa_score - sb_score);
        }
        if split.a_led_first.is_some() {
            let leader = facts.get(&g.id).and_then(|f| f.lead);
            let tally = match leader {
                Some(l) if l as i64 == sa.seat => split.a_led_first.as_mut(),
                Some(l) if l as i64 == sb.seat => split.b_led_first.as_mut(),
                _ => None,
            };
            if let Some(t) = tally {
                t.add(result);
            }
        }
    }
    for s in &mut out {
        s.margins = margins.remove(&s.game).and_then(Margins::of);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        assert_eq!(Thinking::of(Vec::new()), None);
        let t = Thinking::of((1..=100).map(f64::from).rev().collect()).unwrap();
        assert_eq!(
            (t.moves, t.p50, t.p90, t.p95, t.p99, t.max),
            (100, 50.0, 90.0, 95.0, 99.0, 100.0)
        );
        let one = Thinking::of(vec![7.5, f64::NAN]).unwrap();
        assert_eq!((one.moves, one.p50, one.p99, one.max), (1, 7.5, 7.5, 7.5));
    }

    #[test]
    fn cpu_is_summarised_beside_the_wall_time_of_the_same_moves() {
        assert_eq!(Cpu::of(&[]), None);
        let c = Cpu::of(&[(400.0, 40.0), (200.0, 20.0), (f64::NAN, 1.0)]).unwrap();
        assert_eq!((c.thinking.moves, c.thinking.max), (2, 40.0));
        assert_eq!((c.wall.p50, c.wall.max), (200.0, 400.0));
        assert_eq!((c.mean_ms, c.wall_mean_ms), (30.0, 300.0));
    }

    #[test]
    fn margins_summarise_wins_and_losses() {
        assert_eq!(Margins::of(Vec::new()), None);
        let m = Margins::of(vec![10, -30, 5, 20]).unwrap();
        assert_eq!((m.games, m.mean, m.median), (4, 1.25, 7.5));
        assert_eq!((m.best, m.worst), (Some(20), Some(-30)));
        let wins = Margins::of(vec![3, 1, 2]).unwrap();
        assert_eq!((wins.median, wins.best, wins.worst), (2.0, Some(3), None));
    }
}
