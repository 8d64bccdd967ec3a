//! Who plays whom. Pure functions of the ladder's memory ([`State`]: who is
//! in a match, who played when, who has met whom), the registered bots and
//! the clock, so that they can be tested without a server.
//!
//! Opponents are spread fairly: the bot that has waited longest is seated
//! first, against the available bots it has met least; it waits a little
//! (its patience) for a busy bot it has met less often than anyone there.
//! A bot is never at two tables at once; house bots are, as often as needed.

use std::collections::{HashMap, HashSet};

use croupier_rules::GameKind;
use croupier_store::{BotId, BotInfo};
use rand::seq::SliceRandom;
use rand::Rng;
use tokio::time::Instant;

use super::config::{GameLadder, LadderConfig};
use super::seats::Entrant;

/// The ladder's memory of its matches.
#[derive(Debug, Default)]
pub(super) struct State {
    /// Registered bots in a match now.
    pub(super) busy: HashSet<BotId>,
    /// When each bot's last match ended.
    pub(super) last_played: HashMap<BotId, Instant>,
    /// Matches played by each pair (smaller id first).
    pub(super) met: HashMap<(BotId, BotId), u32>,
    /// Matches in progress.
    pub(super) running: usize,
    /// Whether a house-only match of the game is in progress.
    pub(super) house_running: HashMap<GameKind, bool>,
    /// When the game's last house-only match ended.
    pub(super) last_house: HashMap<GameKind, Instant>,
    /// Matches finished.
    pub(super) played: u64,
    /// Bots the database says are claimed (in a match or resting), by any
    /// process sharing it (issue 13): read at every tick.
    pub(super) taken: HashSet<BotId>,
}

impl State {
    /// How often `a` and `b` have met.
    fn met(&self, a: BotId, b: BotId) -> u32 {
        self.met.get(&(a.min(b), a.max(b))).copied().unwrap_or(0)
    }

    /// Marks `table`'s match as started: its registered bots are busy, its
    /// pairs have met once more.
    pub(super) fn begin(&mut self, table: &[Entrant]) {
        self.running += 1;
        for (i, a) in table.iter().enumerate() {
            if !a.is_house() {
                self.busy.insert(a.id());
            }
            for b in &table[i + 1..] {
                let key = (a.id().min(b.id()), a.id().max(b.id()));
                *self.met.entry(key).or_default() += 1;
            }
        }
    }

    /// Forgets `table`'s match, which never started (another process
    /// claimed one of its bots first).
    pub(super) fn cancel(&mut self, game: GameKind, table: &[Entrant]) {
        self.running = self.running.saturating_sub(1);
        if table.iter().all(Entrant::is_house) {
            self.house_running.insert(game, false);
        }
        for (i, a) in table.iter().enumerate() {
            self.busy.remove(&a.id());
            for b in &table[i + 1..] {
                let key = (a.id().min(b.id()), a.id().max(b.id()));
                if let Some(n) = self.met.get_mut(&key) {
                    *n = n.saturating_sub(1);
                }
            }
        }
    }

    /// Marks `table`'s match of `game` as ended at `now`.
    pub(super) fn end(&mut self, game: GameKind, table: &[Entrant], now: Instant) {
        self.running = self.running.saturating_sub(1);
        self.played += 1;
        if table.iter().all(Entrant::is_house) {
            self.house_running.insert(game, false);
            self.last_house.insert(game, now);
        }
        for e in table {
            self.busy.remove(&e.id());
            self.last_played.insert(e.id(), now);
        }
    }
}

/// The clock: `now` for rests and patience, `unix` (seconds) for pauses.
#[derive(Clone, Copy, Debug)]
pub(super) struct Clock {
    pub(super) now: Instant,
    pub(super) unix: i64,
}

impl Clock {
    fn since(&self, t: Instant) -> std::time::Duration {
        self.now.saturating_duration_since(t)
    }
}

/// Whether `b` is a healthy bot of `g`: switched on, not banned (issue 49)
/// and not paused.
fn healthy(b: &BotInfo, g: &GameLadder, clock: Clock) -> bool {
    b.game == g.game.name()
        && b.enabled
        && b.banned.is_none()
        && b.paused_until.is_none_or(|t| t <= clock.unix)
}

/// Who may be seated for `g` now: the healthy registered bots that are not
/// in a match, have rested since their last one and can be `reached` (a
/// push bot has an endpoint, a pull bot is polling), then `g`'s house bots.
pub(super) fn available(
    g: &GameLadder,
    config: &LadderConfig,
    remote: &[BotInfo],
    house: &[Entrant],
    s: &State,
    clock: Clock,
    reached: impl Fn(&BotInfo) -> bool,
) -> Vec<Entrant> {
    let rested = |id: BotId| {
        s.last_played
            .get(&id)
            .is_none_or(|t| clock.since(*t) >= config.rest)
    };
    let mut out: Vec<Entrant> = remote
        .iter()
        .filter(|b| healthy(b, g, clock))
        .filter(|b| !s.busy.contains(&b.id) && !s.taken.contains(&b.id) && rested(b.id))
        .filter(|b| reached(b))
        .cloned()
        .map(Entrant::Remote)
        .collect();
    out.extend(house.iter().cloned());
    out
}

/// Healthy bots of `g` in a match or resting after one: they will be
/// available again soon.
pub(super) fn busy_ids(
    g: &GameLadder,
    config: &LadderConfig,
    remote: &[BotInfo],
    s: &State,
    clock: Clock,
) -> Vec<BotId> {
    remote
        .iter()
        .filter(|b| healthy(b, g, clock))
        .filter(|b| {
            s.busy.contains(&b.id)
                || s.taken.contains(&b.id)
                || s.last_played
                    .get(&b.id)
                    .is_some_and(|t| clock.since(*t) < config.rest + config.tick)
        })
        .map(|b| b.id)
        .collect()
}

/// The tables to start now for `g` from `pool` (see [`available`]), each
/// begun in `s`. Every table has a registered bot, unless house bots play
/// each other because nobody else does.
pub(super) fn tables(
    g: &GameLadder,
    config: &LadderConfig,
    mut pool: Vec<Entrant>,
    busy: &[BotId],
    s: &mut State,
    clock: Clock,
    rng: &mut impl Rng,
) -> Vec<Vec<Entrant>> {
    pool.shuffle(rng);
    // Longest-waiting first (never played counts as longest).
    pool.sort_by_key(|e| {
        s.last_played
            .get(&e.id())
            .map(|t| std::cmp::Reverse(clock.since(*t)))
    });
    let mut tables = Vec::new();
    let min = 2;
    loop {
        if s.running >= config.max_matches {
            break;
        }
        // The first remote bot that need not wait for a busy opponent
        // it has met less often than everyone available.
        let Some(first) = pool
            .iter()
            .position(|e| !e.is_house() && !should_wait(e.id(), &pool, busy, s, config, clock))
        else {
            break;
        };
        let first = pool.remove(first);
        if pool.is_empty() {
            pool.push(first);
            break;
        }
        let max = g.max_seats.min(pool.len() + 1).max(min);
        let size = rng.random_range(min..=max);
        let mut table = vec![first];
        while table.len() < size && !pool.is_empty() {
            let pick = least_met(&table, &pool, s);
            let e = pool.remove(pick);
            table.push(e);
        }
        // House bots can sit at many tables at once.
        for e in table.iter().filter(|e| e.is_house()) {
            pool.push(e.clone());
        }
        s.begin(&table);
        tables.push(table);
    }
    // House bots keep each other busy when nobody else plays, at a pace.
    let house_due = g.house_games
        && tables.is_empty()
        && !s.house_running.get(&g.game).copied().unwrap_or(false)
        && s.last_house
            .get(&g.game)
            .is_none_or(|t| clock.since(*t) >= config.house_pause)
        && s.running < config.max_matches;
    let house: Vec<Entrant> = pool.into_iter().filter(Entrant::is_house).collect();
    if house_due && house.len() >= 2 {
        let size = rng.random_range(2..=g.max_seats.min(house.len()).max(2));
        let mut table: Vec<Entrant> = house;
        table.shuffle(rng);
        table.truncate(size);
        s.house_running.insert(g.game, true);
        s.begin(&table);
        tables.push(table);
    }
    tables
}

/// Whether `bot` should rather wait for a busy bot it has met less often
/// than any available one (within its patience).
fn should_wait(
    bot: BotId,
    pool: &[Entrant],
    busy: &[BotId],
    s: &State,
    config: &LadderConfig,
    clock: Clock,
) -> bool {
    let waited = s
        .last_played
        .get(&bot)
        .is_none_or(|t| clock.since(*t) >= config.patience);
    if waited {
        return false;
    }
    let best_here = pool
        .iter()
        .filter(|e| e.id() != bot)
        .map(|e| s.met(bot, e.id()))
        .min();
    let best_busy = busy
        .iter()
        .filter(|b| **b != bot)
        .map(|b| s.met(bot, *b))
        .min();
    matches!((best_here, best_busy), (Some(h), Some(b)) if b < h)
}

/// The index in `pool` of the bot that has met `table` least.
fn least_met(table: &[Entrant], pool: &[Entrant], s: &State) -> usize {
    pool.iter()
        .enumerate()
        .min_by_key(|(_, e)| table.iter().map(|t| s.met(t.id(), e.id())).sum::<u32>())
        .map_or(0, |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::time::Duration;

    use croupier_store::BotKind;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    use super::*;

    fn bot(id: BotId, game: GameKind) -> BotInfo {
        BotInfo {
            id,
            name: format!("bot{id}"),
            game: game.name().into(),
            kind: BotKind::Push,
            owner: None,
            endpoint: Some("http://127.0.0.1:1/".into()),
            dialect: None,
            auth_user: None,
            auth_password: None,
            strikes: 0,
            paused_until: None,
            pause_reason: None,
            enabled: true,
            banned: None,
        }
    }

    fn house_bot(id: BotId) -> Entrant {
        Entrant::House {
            id,
            name: format!("house{id}"),
            strategy: "random".into(),
        }
    }

    fn ladder(game: GameKind, max_seats: usize, house_games: bool) -> GameLadder {
        GameLadder {
            max_seats,
            house_games,
            ..GameLadder::default_for(game)
        }
    }

    fn clock(base: Instant, after: Duration) -> Clock {
        Clock {
            now: base + after,
            unix: 1_000 + after.as_secs() as i64,
        }
    }

    /// One tick of the ladder: the tables started from what is available.
    fn tick(
        g: &GameLadder,
        config: &LadderConfig,
        remote: &[BotInfo],
        house: &[Entrant],
        s: &mut State,
        clock: Clock,
        rng: &mut StdRng,
    ) -> Vec<Vec<Entrant>> {
        let pool = available(g, config, remote, house, s, clock, |_| true);
        let busy = busy_ids(g, config, remote, s, clock);
        tables(g, config, pool, &busy, s, clock, rng)
    }

    fn ids(table: &[Entrant]) -> Vec<BotId> {
        table.iter().map(Entrant::id).collect()
    }

    #[test]
    fn no_bot_is_at_two_tables_at_once() {
        let g = ladder(GameKind::LoveLetter, 4, true);
        let config = LadderConfig::default();
        let remote: Vec<BotInfo> = (1..=9).map(|i| bot(i, GameKind::LoveLetter)).collect();
        let house = [house_bot(100), house_bot(101)];
        let mut s = State::default();
        let mut rng = StdRng::seed_from_u64(7);
        let base = Instant::now();
        let mut running: Vec<Vec<Entrant>> = Vec::new();
        let mut started = 0;
        for round in 0..200u64 {
            let now = clock(base, Duration::from_millis(200 * round));
            let before: HashSet<BotId> = s.busy.clone();
            let new = tick(&g, &config, &remote, &house, &mut s, now, &mut rng);
            let mut seated = HashSet::new();
            for t in &new {
                assert!(t.len() >= 2 && t.len() <= 4, "table of {}", t.len());
                for e in t.iter().filter(|e| !e.is_house()) {
                    assert!(
                        !before.contains(&e.id()),
                        "bot {} seated while busy",
                        e.id()
                    );
                    assert!(seated.insert(e.id()), "bot {} at two new tables", e.id());
                }
            }
            started += new.len();
            running.extend(new);
            // Every third tick the oldest match ends.
            if round % 3 == 2 && !running.is_empty() {
                let done = running.remove(0);
                s.end(g.game, &done, now.now);
            }
            let mut in_play = HashSet::new();
            for t in &running {
                for e in t.iter().filter(|e| !e.is_house()) {
                    assert!(in_play.insert(e.id()), "bot {} in two matches", e.id());
                }
            }
            assert_eq!(s.running, running.len());
        }
        assert!(started > 20, "only {started} matches started");
    }

    #[test]
    fn opponents_are_spread_evenly() {
        let g = ladder(GameKind::Goofspiel, 2, false);
        let config = LadderConfig::default();
        let remote: Vec<BotInfo> = (1..=4).map(|i| bot(i, GameKind::Goofspiel)).collect();
        let mut s = State::default();
        let mut rng = StdRng::seed_from_u64(3);
        let base = Instant::now();
        let mut played = 0;
        for round in 0..60u64 {
            let now = clock(base, Duration::from_secs(10 * round));
            let tables = tick(&g, &config, &remote, &[], &mut s, now, &mut rng);
            played += tables.len();
            for t in &tables {
                s.end(g.game, t, now.now);
            }
        }
        assert_eq!(played, 120, "two matches a round");
        let counts: Vec<u32> = (1..=4)
            .flat_map(|a| (a + 1..=4).map(move |b| (a, b)))
            .map(|p| s.met.get(&p).copied().unwrap_or(0))
            .collect();
        let (lo, hi) = (counts.iter().min(), counts.iter().max());
        assert!(
            matches!((lo, hi), (Some(lo), Some(hi)) if hi - lo <= 1),
            "pairs met {counts:?}"
        );
    }

    #[test]
    fn the_longest_waiting_bot_is_seated_first() {
        let g = ladder(GameKind::Goofspiel, 2, false);
        let config = LadderConfig::default();
        let remote: Vec<BotInfo> = (1..=3).map(|i| bot(i, GameKind::Goofspiel)).collect();
        let base = Instant::now();
        for seed in 0..20 {
            let mut s = State::default();
            s.last_played.insert(1, base + Duration::from_secs(5));
            s.last_played.insert(2, base + Duration::from_secs(5));
            s.last_played.insert(3, base);
            let now = clock(base, Duration::from_secs(60));
            let mut rng = StdRng::seed_from_u64(seed);
            let tables = tick(&g, &config, &remote, &[], &mut s, now, &mut rng);
            assert_eq!(tables.len(), 1);
            assert!(ids(&tables[0]).contains(&3), "{:?}", ids(&tables[0]));
        }
    }

    #[test]
    fn unhealthy_banned_and_unreachable_bots_are_skipped() {
        let g = ladder(GameKind::Goofspiel, 2, false);
        let config = LadderConfig::default();
        let base = Instant::now();
        let now = clock(base, Duration::from_secs(60));
        let paused = BotInfo {
            paused_until: Some(now.unix + 10),
            ..bot(1, GameKind::Goofspiel)
        };
        let pause_over = BotInfo {
            paused_until: Some(now.unix - 10),
            strikes: 3,
            ..bot(2, GameKind::Goofspiel)
        };
        let disabled = BotInfo {
            enabled: false,
            ..bot(3, GameKind::Goofspiel)
        };
        let other_game = bot(4, GameKind::LoveLetter);
        let unreachable = bot(5, GameKind::Goofspiel);
        let resting = bot(6, GameKind::Goofspiel);
        let busy = bot(7, GameKind::Goofspiel);
        let fine = bot(8, GameKind::Goofspiel);
        let banned = BotInfo {
            banned: Some("cheating".into()),
            ..bot(9, GameKind::Goofspiel)
        };
        let remote = [
            banned,
            paused,
            pause_over,
            disabled,
            other_game,
            unreachable,
            resting,
            busy,
            fine,
        ];
        let mut s = State::default();
        s.last_played.insert(6, now.now - config.rest / 2);
        s.busy.insert(7);
        let pool = available(&g, &config, &remote, &[house_bot(100)], &s, now, |b| {
            b.id != 5
        });
        assert_eq!(ids(&pool), [2, 8, 100]);
        // Resting and busy bots are soon back; unhealthy ones are not.
        assert_eq!(busy_ids(&g, &config, &remote, &s, now), [6, 7]);
    }

    #[test]
    fn a_bot_waits_a_little_for_an_opponent_it_has_not_met() {
        let g = ladder(GameKind::Goofspiel, 2, false);
        let config = LadderConfig::default();
        let remote: Vec<BotInfo> = (1..=3).map(|i| bot(i, GameKind::Goofspiel)).collect();
        let base = Instant::now();
        let mut s = State::default();
        // 1 and 2 have met often; 3 is in a match and has met nobody.
        s.met.insert((1, 2), 5);
        s.busy.insert(3);
        s.last_played.insert(1, base);
        s.last_played.insert(2, base);
        let mut rng = StdRng::seed_from_u64(1);
        let soon = clock(base, config.rest + Duration::from_millis(1));
        assert!(tick(&g, &config, &remote, &[], &mut s, soon, &mut rng).is_empty());
        let later = clock(base, config.patience + Duration::from_millis(1));
        let tables = tick(&g, &config, &remote, &[], &mut s, later, &mut rng);
        assert_eq!(tables.len(), 1);
        let mut seated = ids(&tables[0]);
        seated.sort_unstable();
        assert_eq!(seated, [1, 2]);
    }

    #[test]
    fn house_bots_sit_at_many_tables_and_play_alone_one_match_at_a_time() {
        let g = ladder(GameKind::Goofspiel, 2, true);
        let config = LadderConfig::default();
        let remote: Vec<BotInfo> = (1..=4).map(|i| bot(i, GameKind::Goofspiel)).collect();
        let house = [house_bot(100)];
        let base = Instant::now();
        let mut s = State::default();
        // Each remote bot has met the others, never the house bot.
        for a in 1..=4 {
            for b in a + 1..=4 {
                s.met.insert((a, b), 1);
            }
        }
        let mut rng = StdRng::seed_from_u64(5);
        let now = clock(base, Duration::ZERO);
        let tables = tick(&g, &config, &remote, &house, &mut s, now, &mut rng);
        assert_eq!(tables.len(), 4, "every bot plays the house bot");
        assert!(tables.iter().all(|t| ids(t).contains(&100)));
        assert!(!s.busy.contains(&100));

        // With no registered bot, house bots play each other, one match at
        // a time and `house_pause` apart.
        let two = [house_bot(100), house_bot(101)];
        let mut s = State::default();
        let first = tick(&g, &config, &[], &two, &mut s, now, &mut rng);
        assert_eq!(first.len(), 1);
        assert!(tick(&g, &config, &[], &two, &mut s, now, &mut rng).is_empty());
        s.end(g.game, &first[0], now.now);
        assert!(tick(&g, &config, &[], &two, &mut s, now, &mut rng).is_empty());
        let later = clock(base, config.house_pause);
        assert_eq!(
            tick(&g, &config, &[], &two, &mut s, later, &mut rng).len(),
            1
        );
    }

    #[test]
    fn no_more_matches_than_allowed() {
        let g = ladder(GameKind::Goofspiel, 2, false);
        let config = LadderConfig {
            max_matches: 2,
            ..LadderConfig::default()
        };
        let remote: Vec<BotInfo> = (1..=10).map(|i| bot(i, GameKind::Goofspiel)).collect();
        let mut s = State::default();
        let mut rng = StdRng::seed_from_u64(2);
        let now = clock(Instant::now(), Duration::ZERO);
        assert_eq!(
            tick(&g, &config, &remote, &[], &mut s, now, &mut rng).len(),
            2
        );
        assert!(tick(&g, &config, &remote, &[], &mut s, now, &mut rng).is_empty());
    }

    #[test]
    fn a_bot_another_process_holds_is_not_seated_but_waited_for() {
        let g = ladder(GameKind::Goofspiel, 2, false);
        let config = LadderConfig::default();
        let remote: Vec<BotInfo> = (1..=3).map(|i| bot(i, GameKind::Goofspiel)).collect();
        let mut s = State::default();
        s.taken.insert(2);
        let now = clock(Instant::now(), Duration::ZERO);
        let pool = available(&g, &config, &remote, &[], &s, now, |_| true);
        assert_eq!(pool.iter().map(Entrant::id).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(busy_ids(&g, &config, &remote, &s, now), [2]);
        // A table that was never dealt leaves no trace but its meeting undone.
        let table = pool;
        s.begin(&table);
        s.cancel(GameKind::Goofspiel, &table);
        assert_eq!((s.running, s.played, s.busy.len()), (0, 0, 0));
        assert_eq!(s.met(1, 3), 0);
        assert!(s.last_played.is_empty());
    }
}
