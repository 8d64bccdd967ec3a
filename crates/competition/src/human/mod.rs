//! People in the loop (issue 16): a person plays bots from the website.
//!
//! The person is a seat like any other: a [`conn::PersonConnector`] behind
//! a croupier/1 seat of [`play_live`], with the same rulings. Their move
//! time is [`PeopleLimits::move_time`] (5 minutes by default); the match's
//! other seats get the same, generous, time (one move time per match).
//! The game is stored like a ladder game, marked as played by a person
//! (`person_games`), and **rates no bot**: people play differently from
//! bots, and a bot's rating measures it against bots only.
//!
//! Who may play: anyone with the site's cookie (`croupier_player`, made on
//! the first game; the page of a game answers only that cookie), within
//! bounds: games per cookie, per client address, and overall. Opponents
//! are house bots, and registered push or pull bots whose owners allow
//! challenges (`PATCH /v1/bots/{name}` with `{"challenges": true}`), or
//! that belong to the person, who then gives the owner's name and password
//! (a challenge). A bot plays at most [`PeopleLimits::per_bot`] such games
//! at once.

pub mod conn;
mod table;

pub use table::{unix_ms, MoveError, Table, View};

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_arena::live::{play_live, LiveConfig, LiveSeat};
use croupier_arena::spec::remote_seat;
use croupier_arena::transport::http::HttpClient;
use croupier_arena::transport::Link;
use croupier_bots::Builtins;
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{GameKind, Record, SeatInfo, SetupError};
use croupier_store::{BotId, BotInfo, BotKind, GameEnd, GameId, Store};
use tokio::sync::{mpsc, watch};

use crate::ladder::SeatError;
use croupier_live::live_games::LiveGames;
use croupier_live::mailbox::Mailboxes;

/// The label of people's games in the metrics.
const PEOPLE: croupier_live::metrics::GameSource = croupier_live::metrics::GameSource::People;

/// Bounds on games people play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeopleLimits {
    /// Time a person has for each decision.
    pub move_time: Duration,
    /// Games in progress per cookie.
    pub per_player: usize,
    /// Games in progress per client address.
    pub per_client: usize,
    /// Games in progress in all.
    pub total: usize,
    /// Games in progress against one registered bot.
    pub per_bot: usize,
    /// How long a finished game's page stays (then its replay remains).
    pub linger: Duration,
}

impl Default for PeopleLimits {
    fn default() -> Self {
        PeopleLimits {
            move_time: Duration::from_secs(300),
            per_player: 2,
            per_client: 4,
            total: 32,
            per_bot: 2,
            linger: Duration::from_secs(600),
        }
    }
}

/// Who the person's opponents are.
#[derive(Debug, Clone)]
pub enum Opponent {
    /// A house strategy (`random`, `heuristic`, `strong`, ...).
    House(String),
    /// A registered push or pull bot (boxed: a bot's row is large).
    Bot(Box<BotInfo>),
}

/// A game a person asks for.
#[derive(Debug, Clone)]
pub struct NewGame {
    /// The game.
    pub game: GameKind,
    /// Variant text (`None` = the default).
    pub variant: Option<String>,
    /// The other seats, in order.
    pub opponents: Vec<Opponent>,
    /// The person's seat (`None` = at random).
    pub seat: Option<usize>,
    /// Who plays (`guest` or an owner's name).
    pub player: String,
    /// The person's cookie.
    pub key: String,
    /// The person's address.
    pub client: IpAddr,
}

/// Why a game could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// Something in the request is wrong.
    #[error("{0}")]
    Bad(String),
    /// A bound is reached.
    #[error("{0}")]
    Busy(String),
    /// Storage failed.
    #[error("the game could not be stored; try again")]
    Store,
}

/// Games people play.
pub struct People {
    store: Arc<dyn Store>,
    mailboxes: Arc<Mailboxes>,
    http: Option<Arc<HttpClient>>,
    live: Arc<LiveGames>,
    tables: Mutex<HashMap<GameId, Arc<Table>>>,
    limits: Mutex<PeopleLimits>,
    /// Hosted bots (issue 12), once enabled: owners play them too.
    hosted: std::sync::OnceLock<Arc<crate::hosted::Hosted>>,
}

impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("People").finish_non_exhaustive()
    }
}

/// The name of the bot row that stands for people in `game`'s records.
pub fn person_bot_name(game: GameKind) -> String {
    format!("person-{game}")
}

/// The name a person without an owner account plays under (issue 48):
/// `guest-` and six hex digits drawn from their cookie, so that their games
/// and rating stay theirs while the cookie lasts, and the cookie itself is
/// never shown.
pub fn guest_name(key: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(format!("croupier person {key}").as_bytes());
    let hex: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
    format!("guest-{hex}")
}

/// The seats a game takes.
pub fn seat_range(game: GameKind) -> std::ops::RangeInclusive<usize> {
    game.seats()
}

/// The house strategies a person may play in `game`.
pub fn house_strategies(game: GameKind) -> &'static [&'static str] {
    match game {
        GameKind::Goofspiel => Goofspiel::NAMES,
        GameKind::LoveLetter => LoveLetter::NAMES,
        GameKind::SkullWhist => SkullWhist::NAMES,
    }
}

impl People {
    /// Lets people play hosted bots too (`croupier_server::enable_hosted`).
    pub fn play_hosted(&self, hosted: Arc<crate::hosted::Hosted>) {
        let _ = self.hosted.set(hosted);
    }

    /// Games people play, with their opponents reached through `mailboxes`
    /// (pull bots) and `http` (push bots; none = push bots cannot be played).
    pub fn new(
        store: Arc<dyn Store>,
        mailboxes: Arc<Mailboxes>,
        http: Option<Arc<HttpClient>>,
        live: Arc<LiveGames>,
    ) -> Self {
        People {
            store,
            mailboxes,
            http,
            live,
            tables: Mutex::default(),
            limits: Mutex::default(),
            hosted: std::sync::OnceLock::new(),
        }
    }

    fn tables(&self) -> MutexGuard<'_, HashMap<GameId, Arc<Table>>> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The bounds in force.
    pub fn limits(&self) -> PeopleLimits {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the bounds (tests, settings).
    pub fn set_limits(&self, limits: PeopleLimits) {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner()) = limits;
    }

    /// The game `id` a person plays (or played lately).
    pub fn table(&self, id: GameId) -> Option<Arc<Table>> {
        self.tables().get(&id).cloned()
    }

    /// The games of the person with cookie `key`, newest first.
    pub fn tables_of(&self, key: &str) -> Vec<Arc<Table>> {
        let mut out: Vec<Arc<Table>> = self
            .tables()
            .values()
            .filter(|t| t.belongs_to(key))
            .cloned()
            .collect();
        out.sort_by_key(|t| std::cmp::Reverse(t.id));
        out
    }

    /// Games in progress against `bot`.
    pub fn games_against(&self, bot: BotId) -> usize {
        self.tables()
            .values()
            .filter(|t| t.bots.contains(&bot) && t.running())
            .count()
    }

    fn check_bounds(&self, req: &NewGame) -> Result<(), StartError> {
        let limits = self.limits();
        let tables = self.tables();
        let running: Vec<&Arc<Table>> = tables.values().filter(|t| t.running()).collect();
        if running.len() >= limits.total {
            return Err(StartError::Busy(
                "people are playing as many games as the server takes; try again in a while".into(),
            ));
        }
        if running.iter().filter(|t| t.key == req.key).count() >= limits.per_player {
            return Err(StartError::Busy(format!(
                "you are playing {} games already: finish one first",
                limits.per_player
            )));
        }
        if running.iter().filter(|t| t.client == req.client).count() >= limits.per_client {
            return Err(StartError::Busy(
                "too many games are in progress from your address".into(),
            ));
        }
        for o in &req.opponents {
            if let Opponent::Bot(b) = o {
                let n = running.iter().filter(|t| t.bots.contains(&b.id)).count();
                if n >= limits.per_bot {
                    return Err(StartError::Busy(format!(
                        "{} is playing {n} games with people already; try again later",
                        b.name
                    )));
                }
            }
        }
        Ok(())
    }

    async fn bot_id(&self, name: &str, game: GameKind) -> Result<BotId, StartError> {
        match self.store.ensure_house_bot(name, game.name()).await {
            Ok(id) => Ok(id),
            Err(croupier_store::StoreError::NameTaken) => self
                .store
                .bot_by_name(name)
                .await
                .map_err(|_| StartError::Store)?
                .map(|b| b.id)
                .ok_or(StartError::Store),
            Err(e) => {
                tracing::error!("people: {e}");
                Err(StartError::Store)
            }
        }
    }

    /// Starts a game for a person; returns its id.
    pub async fn start(self: &Arc<Self>, req: NewGame) -> Result<GameId, StartError> {
        let seats = req.opponents.len() + 1;
        if !seat_range(req.game).contains(&seats) {
            let r = seat_range(req.game);
            return Err(StartError::Bad(format!(
                "{} takes {} to {} players: choose {} to {} opponents",
                req.game,
                r.start(),
                r.end(),
                r.start() - 1,
                r.end() - 1
            )));
        }
        check_variant(req.game, req.variant.as_deref())
            .map_err(|e| StartError::Bad(e.to_string()))?;
        for o in &req.opponents {
            match o {
                Opponent::House(s) if !house_strategies(req.game).contains(&s.as_str()) => {
                    return Err(StartError::Bad(format!(
                        "there is no house bot '{}' for {}",
                        s.chars().take(40).collect::<String>(),
                        req.game
                    )))
                }
                Opponent::Bot(b) if b.game != req.game.name() => {
                    return Err(StartError::Bad(format!(
                        "{} plays {}, not {}",
                        b.name, b.game, req.game
                    )))
                }
                Opponent::Bot(b) if b.kind == BotKind::Push && self.http.is_none() => {
                    return Err(StartError::Bad(format!(
                        "{} is a push bot, and this server calls no push bots",
                        b.name
                    )))
                }
                Opponent::House(_) | Opponent::Bot(_) => {}
            }
        }
        let seat = match req.seat {
            Some(s) if s < seats => s,
            Some(s) => {
                return Err(StartError::Bad(format!(
                    "seat {s} does not exist in a game of {seats}"
                )))
            }
            None => rand::random_range(0..seats),
        };
        self.check_bounds(&req)?;
        // Seat names and ids, the person at `seat`.
        let person = person_bot_name(req.game);
        let mut names = Vec::with_capacity(seats);
        let mut ids = Vec::with_capacity(seats);
        let mut others = req.opponents.iter();
        for i in 0..seats {
            if i == seat {
                ids.push(self.bot_id(&person, req.game).await?);
                names.push(person.clone());
                continue;
            }
            let Some(o) = others.next() else { break };
            match o {
                Opponent::House(s) => {
                    let name = crate::ladder::house_name(req.game, s);
                    ids.push(self.bot_id(&name, req.game).await?);
                    names.push(name);
                }
                Opponent::Bot(b) => {
                    ids.push(b.id);
                    names.push(b.name.clone());
                }
            }
        }
        let seed = croupier_live::visibility::fresh_seed().map_err(|e| {
            tracing::error!("people: {e}");
            StartError::Store
        })?;
        let started = croupier_arena::record::now_rfc3339();
        let id = self
            .store
            .start_game(req.game.name(), &ids, seed as i64, &started)
            .await
            .map_err(|_| StartError::Store)?;
        croupier_live::metrics::game_started(req.game.name(), PEOPLE);
        if self
            .store
            .mark_person_game(id, seat, &req.player)
            .await
            .is_err()
        {
            let _ = self
                .store
                .abort_game(id, "could not mark the game as a person's", &started)
                .await;
            croupier_live::metrics::game_aborted(req.game.name(), PEOPLE);
            return Err(StartError::Store);
        }
        let (tx, rx) = mpsc::channel(1);
        let table = Arc::new(Table {
            id,
            game: req.game,
            seat,
            seats: names.clone(),
            player: req.player.clone(),
            key: req.key.clone(),
            client: req.client,
            bots: req
                .opponents
                .iter()
                .filter_map(|o| match o {
                    Opponent::Bot(b) => Some(b.id),
                    Opponent::House(_) => None,
                })
                .collect(),
            view: Mutex::new(View {
                status: "running".into(),
                ..View::default()
            }),
            changed: watch::channel(0).0,
            answers: tx,
        });
        self.tables().insert(id, Arc::clone(&table));
        let watch = self
            .live
            .open(id, req.game.name(), names, &started, Some(seat));
        let me = Arc::clone(self);
        tokio::spawn(async move {
            let played = croupier_arena::watch::scope(watch, me.play(&req, &table, seed, rx)).await;
            // A hosted bot's version and stderr for the game (issue 12).
            if let Some(h) = me.hosted.get() {
                h.match_over(id, &ids).await;
            }
            me.finish(&table, &ids, played).await;
        });
        Ok(id)
    }

    async fn play(
        &self,
        req: &NewGame,
        table: &Arc<Table>,
        seed: u64,
        answers: mpsc::Receiver<String>,
    ) -> Result<Record, PlayError> {
        match req.game {
            GameKind::Goofspiel => self.play_game::<Goofspiel>(req, table, seed, answers).await,
            GameKind::LoveLetter => {
                self.play_game::<LoveLetter>(req, table, seed, answers)
                    .await
            }
            GameKind::SkullWhist => {
                self.play_game::<SkullWhist>(req, table, seed, answers)
                    .await
            }
        }
    }

    async fn play_game<G: Builtins>(
        &self,
        req: &NewGame,
        table: &Arc<Table>,
        seed: u64,
        answers: mpsc::Receiver<String>,
    ) -> Result<Record, PlayError> {
        let variant = parse_variant::<G>(req.variant.as_deref())?;
        let mut seats: Vec<LiveSeat<G>> = Vec::with_capacity(table.seats.len());
        let mut others = req.opponents.iter();
        let connector = Arc::new(conn::PersonConnector::<G>::new(Arc::clone(table), answers));
        for (i, name) in table.seats.iter().enumerate() {
            let info = SeatInfo::named(name.clone());
            if i == table.seat {
                seats.push(remote_seat::<G>(
                    info,
                    Link::Custom(connector.clone()),
                    DialectKind::Croupier,
                ));
                continue;
            }
            let Some(o) = others.next() else { break };
            seats.push(match o {
                Opponent::House(s) => LiveSeat::builtin(info, G::builtin(s)?),
                Opponent::Bot(b) => {
                    let (link, dialect) = self.link(b)?;
                    remote_seat::<G>(info, link, dialect)
                }
            });
        }
        let config = LiveConfig {
            move_time: self.limits().move_time,
            budget: None,
            ..LiveConfig::default()
        };
        Ok(play_live::<G>(&variant, seed, &mut seats, &config).await?)
    }

    fn link(&self, b: &BotInfo) -> Result<(Link, DialectKind), SeatError> {
        crate::ladder::link(b, self.http.as_ref(), &self.mailboxes, self.hosted.get())
    }

    async fn finish(
        self: &Arc<Self>,
        table: &Arc<Table>,
        ids: &[BotId],
        played: Result<Record, PlayError>,
    ) {
        let now = croupier_arena::record::now_rfc3339();
        // The person's table ends on the final hands and scores, not on
        // what they saw when last asked to move.
        if let Ok(record) = &played {
            if let Some(last) = final_observation(record, table.seat) {
                table.update(|v| v.observation = Some(last));
            }
        }
        let stored = match played {
            Ok(record) => match GameEnd::from_record(&record, ids) {
                Ok(end) => self
                    .store
                    .finish_game(table.id, &end)
                    .await
                    .map(|()| {
                        croupier_live::metrics::game_finished(PEOPLE, &record);
                        end.scores.clone()
                    })
                    .map_err(PlayError::from),
                Err(e) => Err(e.into()),
            },
            Err(e) => Err(e),
        };
        match stored {
            Ok(scores) => {
                // The people's pool (issue 48), apart from the bots' ratings.
                if let Err(e) = self.store.rate_person_game(table.id).await {
                    tracing::warn!("people: game {}: not rated: {e}", table.id);
                }
                table.update(|v| v.status = "finished".into());
                self.live.close(table.id, "finished", scores);
            }
            Err(e) => {
                tracing::warn!("people: game {}: {e}", table.id);
                let reason = e.to_string();
                croupier_live::metrics::game_aborted(table.game.name(), PEOPLE);
                if let Err(stored) = self.store.abort_game(table.id, &reason, &now).await {
                    tracing::warn!("people: cannot abort game {}: {stored}", table.id);
                }
                table.update(|v| {
                    v.status = "aborted".into();
                    v.notice = Some(format!("The game was aborted: {e}"));
                });
                self.live.close(table.id, "aborted", Vec::new());
            }
        }
        let me = Arc::clone(self);
        let id = table.id;
        let linger = self.limits().linger;
        tokio::spawn(async move {
            tokio::time::sleep(linger).await;
            me.tables().remove(&id);
        });
    }
}

/// What seat `seat` sees at the end of the game `record` holds.
fn final_observation(record: &Record, seat: usize) -> Option<serde_json::Value> {
    fn at_end<G: croupier_rules::Game>(record: &Record, seat: usize) -> Option<serde_json::Value> {
        let g = record.replay_with::<G>(|_, _, _| {}).ok()?;
        serde_json::to_value(g.observation(croupier_rules::Seat(seat as u8))).ok()
    }
    match record.game.parse::<GameKind>().ok()? {
        GameKind::Goofspiel => at_end::<Goofspiel>(record, seat),
        GameKind::LoveLetter => at_end::<LoveLetter>(record, seat),
        GameKind::SkullWhist => at_end::<SkullWhist>(record, seat),
    }
}

/// Why a person's game could not be played to its end.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// The variant does not read.
    #[error(transparent)]
    Variant(#[from] SetupError),
    /// A house strategy that does not exist.
    #[error(transparent)]
    House(#[from] croupier_bots::UnknownBot),
    /// A bot that cannot be seated.
    #[error(transparent)]
    Seat(#[from] SeatError),
    /// The runner could not play the game.
    #[error(transparent)]
    Match(#[from] croupier_arena::record::MatchError),
    /// The finished record does not fit the game's row.
    #[error(transparent)]
    Record(#[from] croupier_store::RecordError),
    /// The store failed to keep the finished game.
    #[error(transparent)]
    Store(#[from] croupier_store::StoreError),
}

/// Checks a variant text for `game`.
pub fn check_variant(game: GameKind, variant: Option<&str>) -> Result<(), SetupError> {
    fn check<G: Builtins>(v: Option<&str>) -> Result<(), SetupError> {
        parse_variant::<G>(v).map(|_| ())
    }
    match game {
        GameKind::Goofspiel => check::<Goofspiel>(variant),
        GameKind::LoveLetter => check::<LoveLetter>(variant),
        GameKind::SkullWhist => check::<SkullWhist>(variant),
    }
}
