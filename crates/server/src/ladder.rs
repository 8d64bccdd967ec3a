//! The ladder: the server keeps playing matches between the bots that are
//! available for each game: push bots (HTTP servers it calls), pull bots that
//! are polling `/v1/messages`, and house bots (built-in strategies, always
//! available). Opponents are spread fairly: a bot waiting longest is seated
//! first, against the available bots it has met least. Love Letter tables
//! take 2 to 4 bots.
//!
//! Every match is stored like a SkullWhist game of the REST API: dealt
//! (`running`) before the first move, its record committed when it ends. A
//! bot that faults in several matches in a row is paused for a while with
//! the reason, then retried.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use croupier_arena::live::{play_live, LiveConfig, LiveSeat};
use croupier_arena::spec::remote_seat;
use croupier_arena::transport::http::{HttpClient, HttpEndpoint};
use croupier_arena::transport::Link;
use croupier_bots::Builtins;
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{GameKind, Record, SeatInfo};
use croupier_store::{BotId, BotInfo, BotKind, GameEnd, Store};
use rand::seq::SliceRandom;
use rand::Rng;
use tokio::time::Instant;

use crate::mailbox::{Mailboxes, PullConnector};

/// Ladder settings for one game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameLadder {
    /// The game.
    pub game: GameKind,
    /// Rules variant text (`jujitsu`, `jujitsu rounds=5,6`, ...); `None` =
    /// the game's default.
    pub variant: Option<String>,
    /// Time for each decision.
    pub move_time: Duration,
    /// Thinking time per bot per match (`None` = unlimited).
    pub budget: Option<Duration>,
    /// House strategies that play this game on the ladder.
    pub house: Vec<String>,
    /// Whether house bots play each other when no other bot is available
    /// (at most one such match at a time, `house_pause` apart).
    pub house_games: bool,
    /// Largest table (Love Letter: up to 4).
    pub max_seats: usize,
}

impl GameLadder {
    /// The defaults for `game`.
    pub fn default_for(game: GameKind) -> GameLadder {
        match game {
            GameKind::Goofspiel => GameLadder {
                game,
                variant: Some("jujitsu".into()),
                move_time: Duration::from_secs(5),
                budget: Some(Duration::from_secs(60)),
                house: vec!["random".into(), "planner".into(), "strong".into()],
                house_games: true,
                max_seats: 2,
            },
            GameKind::LoveLetter => GameLadder {
                game,
                variant: None,
                move_time: Duration::from_secs(10),
                budget: None,
                house: vec!["random".into(), "heuristic".into(), "strong".into()],
                house_games: true,
                max_seats: 4,
            },
            // House SkullWhist games are played through the REST hub.
            GameKind::SkullWhist => GameLadder {
                game,
                variant: None,
                move_time: Duration::from_secs(10),
                budget: None,
                house: vec!["random".into(), "heuristic".into(), "strong".into()],
                house_games: false,
                max_seats: 2,
            },
        }
    }
}

/// Ladder settings.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderConfig {
    /// Per game.
    pub games: Vec<GameLadder>,
    /// A bot's rest between two of its matches.
    pub rest: Duration,
    /// Pause between house-only matches of a game.
    pub house_pause: Duration,
    /// Faulty matches in a row that pause a bot.
    pub strikes: u32,
    /// How long a bot with too many strikes is paused.
    pub pause_for: Duration,
    /// Matches in progress at once, over all games.
    pub max_matches: usize,
    /// How often the ladder looks for matches to start.
    pub tick: Duration,
    /// A pull bot counts as waiting this long after its last poll.
    pub poll_grace: Duration,
    /// How long a bot waits for a busy opponent it has met less often than
    /// the available ones, before it plays whoever is there.
    pub patience: Duration,
}

impl Default for LadderConfig {
    fn default() -> Self {
        LadderConfig {
            games: [
                GameKind::Goofspiel,
                GameKind::LoveLetter,
                GameKind::SkullWhist,
            ]
            .into_iter()
            .map(GameLadder::default_for)
            .collect(),
            rest: Duration::from_millis(500),
            house_pause: Duration::from_secs(3),
            strikes: 3,
            pause_for: Duration::from_secs(600),
            max_matches: 64,
            tick: Duration::from_millis(200),
            poll_grace: Duration::from_secs(3),
            patience: Duration::from_secs(3),
        }
    }
}

/// A bot the ladder can seat.
#[derive(Clone, Debug)]
enum Entrant {
    House {
        id: BotId,
        name: String,
        strategy: String,
    },
    Remote(BotInfo),
}

impl Entrant {
    fn id(&self) -> BotId {
        match self {
            Entrant::House { id, .. } => *id,
            Entrant::Remote(b) => b.id,
        }
    }

    fn is_house(&self) -> bool {
        matches!(self, Entrant::House { .. })
    }
}

#[derive(Default)]
struct State {
    busy: HashSet<BotId>,
    last_played: HashMap<BotId, Instant>,
    met: HashMap<(BotId, BotId), u32>,
    running: usize,
    house_running: HashMap<GameKind, bool>,
    last_house: HashMap<GameKind, Instant>,
    played: u64,
}

/// The ladder's view for status pages.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LadderStatus {
    /// Matches in progress.
    pub running: usize,
    /// Bots in a match now.
    pub busy: Vec<BotId>,
    /// Matches finished since the server started.
    pub played: u64,
}

/// The ladder.
pub struct Ladder {
    store: Arc<dyn Store>,
    mailboxes: Arc<Mailboxes>,
    http: Arc<HttpClient>,
    config: LadderConfig,
    house: Vec<(GameKind, BotId, String, String)>,
    state: Mutex<State>,
    /// wf (issue 16): where spectators watch the matches.
    live: std::sync::OnceLock<Arc<crate::live_games::LiveGames>>,
}

impl std::fmt::Debug for Ladder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ladder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The name of a house bot of `game` on the ladder. SkullWhist's are the
/// REST hub's own (`house-random`).
pub fn house_name(game: GameKind, strategy: &str) -> String {
    let strategy = crate::house::name_part(strategy);
    match game {
        GameKind::SkullWhist => format!("house-{strategy}"),
        _ => format!("house-{strategy}-{game}"),
    }
}

impl Ladder {
    /// Prepares the ladder: checks every game's settings and registers its
    /// house bots.
    pub async fn new(
        store: Arc<dyn Store>,
        mailboxes: Arc<Mailboxes>,
        http: Arc<HttpClient>,
        config: LadderConfig,
    ) -> Result<Ladder, String> {
        let mut house = Vec::new();
        for g in &config.games {
            check_game(g)?;
            for strategy in &g.house {
                let name = house_name(g.game, strategy);
                let id = store
                    .ensure_house_bot(&name, g.game.name())
                    .await
                    .map_err(|e| format!("house bot {name}: {e}"))?;
                house.push((g.game, id, name, strategy.clone()));
            }
        }
        Ok(Ladder {
            store,
            mailboxes,
            http,
            config,
            house,
            state: Mutex::new(State::default()),
            live: std::sync::OnceLock::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// wf (issue 16): lets spectators watch the ladder's matches.
    pub fn watch_with(&self, live: Arc<crate::live_games::LiveGames>) {
        let _ = self.live.set(live);
    }

    /// What the ladder is doing.
    pub fn status(&self) -> LadderStatus {
        let s = self.lock();
        let mut busy: Vec<BotId> = s.busy.iter().copied().collect();
        busy.sort_unstable();
        LadderStatus {
            running: s.running,
            busy,
            played: s.played,
        }
    }

    /// The time a bot has for each decision in `game`'s ladder matches.
    pub fn move_time(&self, game: GameKind) -> Option<Duration> {
        self.config
            .games
            .iter()
            .find(|g| g.game == game)
            .map(|g| g.move_time)
    }

    /// Whether `bot` is in a ladder match now.
    pub fn is_busy(&self, bot: BotId) -> bool {
        self.lock().busy.contains(&bot)
    }

    /// Runs forever, starting matches as bots become available.
    pub async fn run(self: Arc<Self>) {
        let mut tick = tokio::time::interval(self.config.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let remote = match self.store.remote_bots().await {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!("ladder: cannot list bots: {e}");
                    continue;
                }
            };
            for g in &self.config.games {
                for table in self.tables(g, &remote) {
                    let me = Arc::clone(&self);
                    let g = g.clone();
                    tokio::spawn(async move { me.play(g, table).await });
                }
            }
        }
    }

    /// Who may be seated for `g` now.
    fn available(&self, g: &GameLadder, remote: &[BotInfo], s: &State) -> Vec<Entrant> {
        let now = unix_now();
        let rested = |id: BotId| {
            s.last_played
                .get(&id)
                .is_none_or(|t| t.elapsed() >= self.config.rest)
        };
        let mut out: Vec<Entrant> = remote
            .iter()
            .filter(|b| b.game == g.game.name() && b.enabled)
            .filter(|b| b.paused_until.is_none_or(|t| t <= now))
            .filter(|b| !s.busy.contains(&b.id) && rested(b.id))
            .filter(|b| match b.kind {
                BotKind::Push => b.endpoint.is_some(),
                BotKind::Pull => self
                    .mailboxes
                    .peek(b.id)
                    .is_some_and(|m| m.waiting(self.config.poll_grace)),
                BotKind::Rest | BotKind::House => false,
            })
            .cloned()
            .map(Entrant::Remote)
            .collect();
        out.extend(self.house.iter().filter(|(game, ..)| *game == g.game).map(
            |(_, id, name, strategy)| Entrant::House {
                id: *id,
                name: name.clone(),
                strategy: strategy.clone(),
            },
        ));
        out
    }

    /// Bots of `g` in a ladder match or resting after one: they will be
    /// available again soon.
    fn busy_ids(&self, g: &GameLadder, remote: &[BotInfo], s: &State) -> Vec<BotId> {
        let now = unix_now();
        remote
            .iter()
            .filter(|b| b.game == g.game.name() && b.enabled)
            .filter(|b| b.paused_until.is_none_or(|t| t <= now))
            .filter(|b| {
                s.busy.contains(&b.id)
                    || s.last_played
                        .get(&b.id)
                        .is_some_and(|t| t.elapsed() < self.config.rest + self.config.tick)
            })
            .map(|b| b.id)
            .collect()
    }

    /// The tables to start now for `g`, marking their bots busy.
    fn tables(&self, g: &GameLadder, remote: &[BotInfo]) -> Vec<Vec<Entrant>> {
        let mut s = self.lock();
        let mut pool = self.available(g, remote, &s);
        let busy = self.busy_ids(g, remote, &s);
        let mut rng = rand::rng();
        pool.shuffle(&mut rng);
        // Longest-waiting first (never played counts as longest).
        pool.sort_by_key(|e| {
            s.last_played
                .get(&e.id())
                .map(|t| std::cmp::Reverse(t.elapsed()))
        });
        let mut tables = Vec::new();
        let min = 2;
        loop {
            if s.running >= self.config.max_matches {
                break;
            }
            // The first remote bot that need not wait for a busy opponent
            // it has met less often than everyone available.
            let Some(first) = pool
                .iter()
                .position(|e| !e.is_house() && !self.should_wait(e.id(), &pool, &busy, &s))
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
                let pick = self.least_met(&table, &pool, &s);
                let e = pool.remove(pick);
                table.push(e);
            }
            // House bots can sit at many tables at once.
            for e in table.iter().filter(|e| e.is_house()) {
                pool.push(e.clone());
            }
            self.begin(&mut s, &table);
            tables.push(table);
        }
        // House bots keep each other busy when nobody else plays, at a pace.
        let house_due = g.house_games
            && tables.is_empty()
            && !s.house_running.get(&g.game).copied().unwrap_or(false)
            && s.last_house
                .get(&g.game)
                .is_none_or(|t| t.elapsed() >= self.config.house_pause)
            && s.running < self.config.max_matches;
        let house: Vec<Entrant> = pool.into_iter().filter(Entrant::is_house).collect();
        if house_due && house.len() >= 2 {
            let size = rng.random_range(2..=g.max_seats.min(house.len()).max(2));
            let mut table: Vec<Entrant> = house;
            table.shuffle(&mut rng);
            table.truncate(size);
            s.house_running.insert(g.game, true);
            self.begin(&mut s, &table);
            tables.push(table);
        }
        tables
    }

    /// Whether `bot` should rather wait for a busy bot it has met less often
    /// than any available one (within its patience).
    fn should_wait(&self, bot: BotId, pool: &[Entrant], busy: &[BotId], s: &State) -> bool {
        let waited = s
            .last_played
            .get(&bot)
            .is_none_or(|t| t.elapsed() >= self.config.patience);
        if waited {
            return false;
        }
        let met = |other: BotId| {
            s.met
                .get(&(bot.min(other), bot.max(other)))
                .copied()
                .unwrap_or(0)
        };
        let best_here = pool
            .iter()
            .filter(|e| e.id() != bot)
            .map(|e| met(e.id()))
            .min();
        let best_busy = busy.iter().filter(|b| **b != bot).map(|b| met(*b)).min();
        matches!((best_here, best_busy), (Some(h), Some(b)) if b < h)
    }

    /// The index in `pool` of the bot that has met `table` least.
    fn least_met(&self, table: &[Entrant], pool: &[Entrant], s: &State) -> usize {
        let met = |a: BotId, b: BotId| s.met.get(&(a.min(b), a.max(b))).copied().unwrap_or(0);
        pool.iter()
            .enumerate()
            .min_by_key(|(_, e)| table.iter().map(|t| met(t.id(), e.id())).sum::<u32>())
            .map_or(0, |(i, _)| i)
    }

    fn begin(&self, s: &mut State, table: &[Entrant]) {
        s.running += 1;
        for (i, a) in table.iter().enumerate() {
            if !a.is_house() {
                s.busy.insert(a.id());
            }
            for b in &table[i + 1..] {
                let key = (a.id().min(b.id()), a.id().max(b.id()));
                *s.met.entry(key).or_default() += 1;
            }
        }
    }

    fn end(&self, g: GameKind, table: &[Entrant]) {
        let mut s = self.lock();
        s.running = s.running.saturating_sub(1);
        s.played += 1;
        if table.iter().all(Entrant::is_house) {
            s.house_running.insert(g, false);
            s.last_house.insert(g, Instant::now());
        }
        for e in table {
            s.busy.remove(&e.id());
            s.last_played.insert(e.id(), Instant::now());
        }
    }

    /// Plays one match, stores it, and scores the bots' health.
    async fn play(&self, g: GameLadder, mut table: Vec<Entrant>) {
        // The bots are released however the match ends, a panic included.
        let _release = Release(self, g.game, table.clone());
        table.shuffle(&mut rand::rng());
        let ids: Vec<BotId> = table.iter().map(Entrant::id).collect();
        let started = croupier_arena::runner::now_rfc3339();
        let (seed, stored) = match crate::visibility::fresh_seed() {
            Ok(seed) => (
                seed,
                self.store
                    .start_game(g.game.name(), &ids, seed as i64, &started)
                    .await
                    .map_err(|e| e.to_string()),
            ),
            Err(e) => (0, Err(e)),
        };
        let result = match stored {
            Err(e) => Err(format!("cannot store a new game: {e}")),
            Ok(id) => {
                let live = LiveConfig {
                    move_time: g.move_time,
                    budget: g.budget,
                    ..LiveConfig::default()
                };
                // wf (issue 16): spectators watch the match.
                let names: Vec<String> = table.iter().map(|e| name_of(e).to_string()).collect();
                let watch = self
                    .live
                    .get()
                    .map(|l| l.open(id, g.game.name(), names, &started, None));
                let played = crate::live_games::watched(watch, async {
                    match g.game {
                        GameKind::Goofspiel => {
                            self.play_game::<Goofspiel>(&g, &table, seed, &live).await
                        }
                        GameKind::LoveLetter => {
                            self.play_game::<LoveLetter>(&g, &table, seed, &live).await
                        }
                        GameKind::SkullWhist => {
                            self.play_game::<SkullWhist>(&g, &table, seed, &live).await
                        }
                    }
                })
                .await;
                let done = match played {
                    Ok(record) => self
                        .finish(id, &ids, &table, &record)
                        .await
                        .map(|()| record),
                    Err(e) => {
                        let now = croupier_arena::runner::now_rfc3339();
                        let _ = self.store.abort_game(id, &e, &now).await;
                        Err(e)
                    }
                };
                crate::live_games::closed(self.live.get(), id, &done); // wf (issue 16)
                done.map(|_| ())
            }
        };
        if let Err(e) = result {
            tracing::warn!("ladder {}: {e}", g.game);
        }
    }

    async fn play_game<G: Builtins>(
        &self,
        g: &GameLadder,
        table: &[Entrant],
        seed: u64,
        live: &LiveConfig,
    ) -> Result<Record, String> {
        let variant = parse_variant::<G>(g.variant.as_deref()).map_err(|e| e.to_string())?;
        let mut seats: Vec<LiveSeat<G>> = Vec::with_capacity(table.len());
        for e in table {
            seats.push(match e {
                Entrant::House { name, strategy, .. } => LiveSeat::builtin(
                    SeatInfo::named(name.clone()),
                    G::builtin(strategy).map_err(|e| e.to_string())?,
                ),
                Entrant::Remote(b) => {
                    let (link, dialect) = self.link(b)?;
                    remote_seat::<G>(SeatInfo::named(b.name.clone()), link, dialect)
                }
            });
        }
        play_live::<G>(&variant, seed, &mut seats, live)
            .await
            .map_err(|e| e.to_string())
    }

    fn link(&self, b: &BotInfo) -> Result<(Link, DialectKind), String> {
        let dialect: DialectKind = b
            .dialect
            .as_deref()
            .unwrap_or("croupier")
            .parse()
            .map_err(|e| format!("bot {}: {e}", b.name))?;
        match b.kind {
            BotKind::Push => {
                let url = b.endpoint.as_deref().unwrap_or_default();
                let auth = b
                    .auth_user
                    .clone()
                    .map(|u| (u, b.auth_password.clone().unwrap_or_default()));
                let endpoint = HttpEndpoint::parse(url, auth).map_err(|e| e.to_string())?;
                Ok((Link::Http(Arc::clone(&self.http), endpoint), dialect))
            }
            BotKind::Pull => Ok((
                Link::Custom(Arc::new(PullConnector(self.mailboxes.get(b.id)))),
                DialectKind::Croupier,
            )),
            BotKind::Rest | BotKind::House => Err(format!("bot {} is not an HTTP bot", b.name)),
        }
    }

    async fn finish(
        &self,
        id: i64,
        ids: &[BotId],
        table: &[Entrant],
        record: &Record,
    ) -> Result<(), String> {
        let end = GameEnd::from_record(record, ids)
            .map_err(|e| format!("cannot store finished game {id}: {e}"))?;
        self.store
            .finish_game(id, &end)
            .await
            .map_err(|e| format!("cannot store finished game {id}: {e}"))?;
        tracing::info!(
            "ladder game {id} ({}): {}",
            record.game,
            table
                .iter()
                .zip(&record.outcome.scores)
                .map(|(e, s)| format!("{} {s}", name_of(e)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for (seat, e) in table.iter().enumerate() {
            let Entrant::Remote(b) = e else { continue };
            let last_fault = record
                .steps
                .iter()
                .rev()
                .filter(|s| s.seat.index() == seat)
                .find_map(|s| s.fault.as_ref());
            self.health(b, last_fault.map(|f| format!("{}: {}", f.kind, f.detail)))
                .await;
        }
        Ok(())
    }

    /// Counts a faulty match as a strike; pauses the bot after too many.
    async fn health(&self, b: &BotInfo, fault: Option<String>) {
        let current = match self.store.bot_info(b.id).await {
            Ok(Some(c)) => c,
            _ => return,
        };
        let result = match fault {
            None if current.strikes == 0 => return,
            None => self.store.set_bot_health(b.id, 0, None, None).await,
            Some(f) => {
                let strikes = current.strikes + 1;
                if strikes >= i64::from(self.config.strikes.max(1)) {
                    let until = unix_now() + self.config.pause_for.as_secs() as i64;
                    let reason = format!(
                        "paused for {} after {strikes} faulty matches in a row; last fault: {}",
                        humantime::format_duration(self.config.pause_for),
                        f.chars().take(300).collect::<String>()
                    );
                    tracing::warn!("ladder: bot {} {reason}", b.name);
                    self.store
                        .set_bot_health(b.id, strikes, Some(until), Some(&reason))
                        .await
                } else {
                    self.store
                        .set_bot_health(b.id, strikes, current.paused_until, None)
                        .await
                }
            }
        };
        if let Err(e) = result {
            tracing::warn!("ladder: cannot record the health of bot {}: {e}", b.name);
        }
    }
}

/// Releases a table's bots when dropped.
struct Release<'a>(&'a Ladder, GameKind, Vec<Entrant>);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.end(self.1, &self.2);
    }
}

fn name_of(e: &Entrant) -> &str {
    match e {
        Entrant::House { name, .. } => name,
        Entrant::Remote(b) => &b.name,
    }
}

/// Checks a game's ladder settings.
pub fn check_game(g: &GameLadder) -> Result<(), String> {
    fn check<G: Builtins>(g: &GameLadder) -> Result<(), String> {
        parse_variant::<G>(g.variant.as_deref()).map_err(|e| format!("ladder {}: {e}", g.game))?;
        for s in &g.house {
            G::builtin(s).map_err(|e| format!("ladder {}: {e}", g.game))?;
        }
        Ok(())
    }
    if g.move_time.is_zero() {
        return Err(format!("ladder {}: the move time must be positive", g.game));
    }
    let seats = match g.game {
        GameKind::LoveLetter => 2..=4,
        _ => 2..=2,
    };
    if !seats.contains(&g.max_seats) {
        return Err(format!(
            "ladder {}: tables of {} seats are not possible",
            g.game, g.max_seats
        ));
    }
    match g.game {
        GameKind::Goofspiel => check::<Goofspiel>(g),
        GameKind::LoveLetter => check::<LoveLetter>(g),
        GameKind::SkullWhist => check::<SkullWhist>(g),
    }
}
