//! Requests relayed between instances through PostgreSQL (issue 13 item
//! 3). A game in progress runs in one process, its home; a request for it
//! that reaches another instance is sent to the home with `NOTIFY` on the
//! home's channel, and the home's reply comes back the same way on the
//! asker's channel. No connection between instances but the database.
//!
//! Also here: what an instance does after each heartbeat of its one
//! registration (`crate::lease::Membership`, whose reaper closes a lost
//! process's games): whether other instances run ([`Crowd`], in `crowd`), clearing the
//! seats of games whose process is gone; the session cache (kept in
//! `session_cache`, emptied when notices may have been lost); the wake-up
//! of bots waiting for an opponent.
//!
//! [`Relay::start`] is all a registered process running games needs: it
//! serves the requests relayed to it with its [`Home`] (in `home`, with
//! the other types a home answers through).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::lock::lock;
use std::time::Duration;

use tokio::time::Instant;

use super::answered::{self, Answered, Handling, Seen};
pub use super::crowd::Crowd;
pub use super::home::{
    Home, HomeRead, NoGames, PullAnswer, PullHome, ReplyTo, GONE, OVER, SEAT_BID, SEAT_OPEN,
};
use super::session_cache::SessionCache;
pub use super::session_cache::SESSION_RECHECK;
use crate::lease::{AfterBeat, Membership};
use croupier_store::postgres::cluster::{instance_channel, Cluster, Heard, SHARED_CHANNEL};
use croupier_store::{BotId, GameId};
use futures::future::BoxFuture;
use tokio::sync::{oneshot, Notify};

/// Why an instance could not join the others.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// Its channels could not be listened to.
    #[error("cannot listen for the other instances: {0}")]
    Listen(#[source] croupier_store::StoreError),
}

/// Why a REST game is closed whose instance stopped without its reaper
/// closing it (its seats outlived the game's row, e.g. a deal written by a
/// process registered before migration 0008).
pub const STOPPED_REASON: &str = "the server instance running the game stopped";

impl AfterBeat for Relay {
    fn after_beat(&self, renewed: bool) -> BoxFuture<'_, ()> {
        Box::pin(self.after_heartbeat(renewed))
    }
}

/// The number of a relayed request: one per move, abandon or pull answer,
/// however often it is sent ([`Relay::ask`]). Only [`Relay::request_id`]
/// makes one, so two requests of an instance never share a number.
#[derive(Debug)]
pub struct RequestId(u64);

/// One instance's side of the relay.
pub struct Relay {
    db: Cluster,
    instance: i64,
    next: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<String>>>,
    /// The requests relayed here lately, with their answers.
    answered: Arc<Answered>,
    matched: Mutex<HashMap<BotId, Arc<Notify>>>,
    sessions: SessionCache,
    pulled: Mutex<HashMap<BotId, Arc<Notify>>>,
    pull_home: std::sync::OnceLock<Arc<dyn PullHome>>,
    crowd: Arc<Crowd>,
    /// What serves the requests relayed here and takes the notices.
    home: Arc<dyn Home>,
    /// How long a lost process's games may stay open: its registration's
    /// lifetime plus a heartbeat (the reaper's sweep).
    lease: Duration,
    member: Arc<Membership>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

/// The address at the head of a relayed request (`q`) or read (`t`, `n`):
/// the asking instance, the request's id, the game and the seat.
fn addressed<'a>(f: &mut impl Iterator<Item = &'a str>) -> Option<(i64, u64, GameId, usize)> {
    let origin = f.next()?.parse::<i64>().ok()?;
    let id = f.next()?.parse::<u64>().ok()?;
    let game = f.next()?.parse::<GameId>().ok()?;
    let seat = f.next()?.parse::<usize>().ok()?;
    Some((origin, id, game, seat))
}

impl Relay {
    /// Joins the other instances as registered process `member` (the one
    /// registry of live processes, `croupier_store::leases`), and serves
    /// the requests relayed to its games with `home` (in tasks that live as
    /// long as the runtime). After each of the member's heartbeats it
    /// looks at the other instances and clears the seats of games whose
    /// process is gone (the member's reaper closed the games).
    pub async fn start(
        db: Cluster,
        member: Arc<Membership>,
        home: Arc<dyn Home>,
    ) -> Result<Arc<Relay>, RelayError> {
        let instance = member.id();
        let own = instance_channel(instance);
        let mut listener = db
            .listen(&[SHARED_CHANNEL, &own])
            .await
            .map_err(RelayError::Listen)?;
        let relay = Arc::new(Relay {
            db: db.clone(),
            instance,
            next: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            answered: Arc::new(Answered::new(answered::KEEP, answered::CAP)),
            matched: Mutex::new(HashMap::new()),
            sessions: SessionCache::default(),
            pulled: Mutex::new(HashMap::new()),
            pull_home: std::sync::OnceLock::new(),
            crowd: Arc::new(Crowd::new(member.config().beat)),
            home,
            lease: member.config().ttl + member.config().beat,
            member: Arc::clone(&member),
        });
        tracing::info!("instance {instance} joined the cluster");
        let (r, channels) = (
            Arc::clone(&relay),
            [SHARED_CHANNEL.to_string(), own.clone()],
        );
        tokio::spawn(async move {
            loop {
                match listener.recv().await {
                    Ok(Heard::Notice(_, payload)) => r.take(&payload),
                    Ok(Heard::Lost) => {
                        tracing::warn!("the instances' channel was lost, and listened to again");
                        r.listening_again();
                    }
                    Err(e) => {
                        // Listened to again by a new connection, so that it
                        // is known when it listens (the requests under way
                        // are sent again only then).
                        tracing::warn!("the instances' channel: {e}");
                        r.notices_lost();
                        // At once after a blip; once a second (one warning
                        // each) while the database stays away.
                        let mut pause = Duration::from_millis(100);
                        listener = loop {
                            tokio::time::sleep(pause).await;
                            match r.db.listen(&[&channels[0], &channels[1]]).await {
                                Ok(l) => break l,
                                Err(e) => tracing::warn!("cannot listen again: {e}"),
                            }
                            pause = Duration::from_secs(1);
                        };
                        r.listening_again();
                    }
                }
            }
        });
        // Whether others run, before serving: if so, tell them and wait
        // until each has seen this one (and writes the seats of the games it dealt alone).
        match db.other_instances(instance).await {
            // A worker serves no requests: nobody need wait for it.
            _ if member.config().role != "serve" => {}
            Ok(0) => relay.crowd.set(true),
            Ok(_) | Err(_) => {
                let _ = db.notify(SHARED_CHANNEL, &format!("j {instance}")).await;
                tokio::time::sleep(relay.crowd.join_wait()).await;
            }
        }
        member.after_beat(Arc::clone(&relay) as Arc<dyn AfterBeat>);
        // "Alone" that runs out wakes the seat writers at once.
        let (crowd, beat) = (Arc::downgrade(&relay.crowd), member.config().beat);
        tokio::spawn(async move {
            while let Some(c) = crowd.upgrade() {
                let wait = c
                    .lapse()
                    .map_or(beat / 2, |left| left + Duration::from_millis(1));
                drop(c);
                tokio::time::sleep(wait).await;
            }
        });
        Ok(relay)
    }

    /// Notifications may have been lost: the home forgets what it learnt
    /// from them, and the sessions are checked in the database again (a
    /// login elsewhere may not have been heard).
    fn notices_lost(&self) {
        self.home.lost();
        self.sessions.clear();
    }

    /// The listener listens again after losing its connection: what was
    /// heard is not trusted ([`Relay::notices_lost`]), and the requests
    /// waiting for an answer are sent again (theirs may have been lost),
    /// with the same numbers.
    fn listening_again(&self) {
        self.notices_lost();
        lock(&self.pending).clear();
    }

    /// Whether other instances run (see [`Crowd`]).
    pub fn crowd(&self) -> &Arc<Crowd> {
        &self.crowd
    }

    /// This instance's id (its id in the registry of processes).
    pub fn instance(&self) -> i64 {
        self.instance
    }

    /// The shared tables.
    pub fn db(&self) -> &Cluster {
        &self.db
    }

    /// How long a lost process's games may stay open.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// This process's registration.
    pub fn member(&self) -> &Arc<Membership> {
        &self.member
    }

    async fn after_heartbeat(&self, renewed: bool) {
        let heard = self.crowd.heard.load(Ordering::SeqCst);
        let others = if renewed {
            self.db.other_instances(self.instance).await
        } else {
            Ok(1)
        };
        match others {
            Ok(n) => self.crowd.counted(n, heard),
            Err(e) => {
                self.crowd.set(false);
                tracing::warn!("instance {}: the other instances: {e}", self.instance);
            }
        }
        self.sessions.prune(SESSION_RECHECK * 4);
        let now = croupier_arena::record::now_rfc3339();
        match self.db.clear_orphans(STOPPED_REASON, &now).await {
            Ok(games) if !games.is_empty() => {
                tracing::warn!(
                    "cleared the seats of {} games whose instance stopped: {games:?}",
                    games.len()
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("looking for the games of stopped instances: {e}"),
        }
    }

    /// A notification from another instance (or this one).
    fn take(self: &Arc<Self>, payload: &str) {
        let mut parts = payload.splitn(2, ' ');
        let (kind, rest) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        if let Some(read) = HomeRead::of_kind(kind) {
            return self.answer_read(read, rest, payload);
        }
        match kind {
            "s" => {
                if let Ok(bot) = rest.parse::<BotId>() {
                    self.sessions.forget(bot);
                }
            }
            // Another instance starts: its requests may read our seats.
            "j" => {
                if rest.parse::<i64>().ok() != Some(self.instance) {
                    self.crowd.newcomer();
                }
            }
            "m" => {
                if let Ok(bot) = rest.parse::<BotId>() {
                    if let Some(n) = lock(&self.matched).get(&bot) {
                        n.notify_one();
                    }
                }
            }
            // Messages for a pull bot (see `crate::mailbox`).
            "p" => {
                if let Ok(bot) = rest.parse::<BotId>() {
                    if let Some(n) = lock(&self.pulled).get(&bot) {
                        n.notify_waiters();
                    }
                }
            }
            // A pull bot's answer for a match this process plays.
            "a" => {
                let mut f = rest.splitn(3, ' ');
                let parsed = (|| {
                    let origin = f.next()?.parse::<i64>().ok()?;
                    let id = f.next()?.parse::<u64>().ok()?;
                    let a: PullAnswer = serde_json::from_str(f.next()?).ok()?;
                    Some((origin, id, a))
                })();
                let Some((origin, id, a)) = parsed else {
                    tracing::warn!("a relayed answer that does not parse: {payload}");
                    return;
                };
                let to = ReplyTo::new(origin, id);
                let Some(handling) = self.first_time((origin, id), &to) else {
                    return;
                };
                let reply = match self.pull_home.get() {
                    Some(h) => h.answer(a.bot, &a.tag, a.decision, &a.action),
                    None => GONE.to_string(),
                };
                self.answered
                    .answered(handling, &reply, std::time::Instant::now());
                self.reply(to, std::future::ready(reply));
            }
            "r" => {
                let (id, reply) = rest.split_once(' ').unwrap_or((rest, ""));
                if let Ok(id) = id.parse::<u64>() {
                    if let Some(tx) = lock(&self.pending).remove(&id) {
                        let _ = tx.send(reply.to_string());
                    }
                }
            }
            "q" => {
                let mut f = rest.splitn(5, ' ');
                let parsed = addressed(&mut f).zip(f.next());
                let Some(((origin, id, game, seat), line)) = parsed else {
                    tracing::warn!("a relayed request that does not parse: {payload}");
                    return;
                };
                let to = ReplyTo::new(origin, id);
                let Some(handling) = self.first_time((origin, id), &to) else {
                    return;
                };
                let t = std::time::Instant::now();
                let handled = self.home.handle(game, seat, line.to_string());
                let answered = Arc::clone(&self.answered);
                self.reply(to, async move {
                    let text = handled.await;
                    answered.answered(handling, &text, std::time::Instant::now());
                    croupier_store::waits::record("relay: home answered", t.elapsed());
                    text
                });
            }
            _ if self.home.notified(kind, rest) => {} // wm (issue 13)
            _ => tracing::warn!("an unknown notification: {payload}"),
        }
    }

    /// Notes request `key` as being handled if it is new (the caller
    /// handles it, then records its answer). If it was taken before (it
    /// is asked again: its answer was lost or late), `None`: its answer
    /// went to `to` again if it has one, and will go when it has one if
    /// not.
    fn first_time(&self, key: answered::Key, to: &ReplyTo) -> Option<Handling> {
        match self.answered.arrived(key, std::time::Instant::now()) {
            Seen::New(handling) => Some(handling),
            Seen::Handling => None,
            Seen::Answered(text) => {
                croupier_store::waits::record("relay: home answered again", Duration::ZERO);
                self.reply(to.clone(), std::future::ready(text));
                None
            }
        }
    }

    /// A `status`, or what `new-game` needs of a seat, asked by another
    /// instance (issue 50): safe to ask again, so not remembered.
    fn answer_read(&self, read: HomeRead, rest: &str, payload: &str) {
        let Some((origin, id, game, seat)) = addressed(&mut rest.splitn(4, ' ')) else {
            tracing::warn!("a relayed read that does not parse: {payload}");
            return;
        };
        let answer = match read {
            HomeRead::Status => self.home.status(game, seat),
            HomeRead::Seat => self.home.seat(game, seat),
        };
        self.reply(ReplyTo::new(origin, id), answer);
    }

    /// Sends the answer `reply` comes to back to its asker, in a task of
    /// its own.
    fn reply(&self, to: ReplyTo, reply: impl Future<Output = String> + Send + 'static) {
        let db = self.db.clone();
        tokio::spawn(async move {
            let (channel, payload) = to.notice(&reply.await);
            if let Err(e) = db.notify(&channel, &payload).await {
                tracing::warn!("cannot send a relayed reply: {e}");
            }
        });
    }

    /// A number for a request to relay with [`Relay::ask`]: asked again
    /// with the same number, the home answers as it did the first time.
    pub fn request_id(&self) -> RequestId {
        RequestId(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends `line` for seat `seat` of game `game` to its home instance as
    /// request `id` ([`Relay::request_id`]); the reply, or `None` if none
    /// came within `wait` (ask again with the same `id`: the home answers
    /// as it did the first time).
    pub async fn ask(
        &self,
        id: &RequestId,
        home: i64,
        game: GameId,
        seat: usize,
        line: &str,
        wait: Duration,
    ) -> Option<String> {
        let payload = format!("q {} {} {game} {seat} {line}", self.instance, id.0);
        self.send_to(id, home, payload, wait).await
    }

    /// Asks game `game`'s home for what `read` wants of seat `seat`
    /// (issue 50): for [`HomeRead::Status`] the status, [`OVER`] or
    /// [`GONE`]; for [`HomeRead::Seat`] what [`Home::seat`] says. `None`
    /// if no answer came within `wait`.
    pub async fn ask_home(
        &self,
        read: HomeRead,
        home: i64,
        game: GameId,
        seat: usize,
        wait: Duration,
    ) -> Option<String> {
        let id = self.request_id();
        let kind = read.kind();
        let payload = format!("{kind} {} {} {game} {seat}", self.instance, id.0);
        self.send_to(&id, home, payload, wait).await
    }

    /// Sends a pull bot's answer to the process playing its match; the
    /// reply ([`PullHome::answer`]), or `None` if none came within `wait`.
    pub async fn ask_pull(&self, home: i64, answer: &PullAnswer, wait: Duration) -> Option<String> {
        let body = serde_json::to_string(answer).ok()?;
        let id = self.request_id();
        let payload = format!("a {} {} {body}", self.instance, id.0);
        self.send_to(&id, home, payload, wait).await
    }

    /// Sends request `id` and waits for its answer, at most `wait`. If the
    /// listener loses its connection meanwhile (the answer may be lost
    /// with it), the same request is sent again once it listens again
    /// ([`Relay::listening_again`] drops the waiting ends), and the home
    /// answers it as the first time (`hub::answered`).
    async fn send_to(
        &self,
        id: &RequestId,
        home: i64,
        payload: String,
        wait: Duration,
    ) -> Option<String> {
        let id = id.0;
        let t = Instant::now();
        let until = t + wait;
        let reply = loop {
            let (tx, rx) = oneshot::channel();
            let before = lock(&self.pending).insert(id, tx);
            debug_assert!(before.is_none(), "request {id} asked twice at once");
            if let Err(e) = self.db.notify(&instance_channel(home), &payload).await {
                tracing::warn!("cannot relay a request: {e}");
                break None;
            }
            match tokio::time::timeout_at(until, rx).await {
                Ok(Ok(reply)) => break Some(reply),
                Err(_) => break None,
                // Dropped: the listener listens again.
                Ok(Err(_)) => {}
            }
        };
        lock(&self.pending).remove(&id);
        croupier_store::waits::record("relay: ask, reply back", t.elapsed());
        reply
    }

    /// What handles the pull bots' answers relayed to this process.
    pub fn serve_pulls(&self, home: Arc<dyn PullHome>) {
        let _ = self.pull_home.set(home);
    }

    /// Woken whenever messages arrive for pull bot `bot`, by any process.
    pub fn pull_waker(&self, bot: BotId) -> Arc<Notify> {
        Arc::clone(lock(&self.pulled).entry(bot).or_default())
    }

    /// The sessions this instance checked in the database lately.
    pub(super) fn sessions(&self) -> &SessionCache {
        &self.sessions
    }

    /// Tells the instances that `bot` was dealt a game.
    pub(super) fn waker(&self, bot: BotId) -> Waker<'_> {
        let n = Arc::new(Notify::new());
        lock(&self.matched).insert(bot, Arc::clone(&n));
        Waker {
            relay: self,
            bot,
            notify: n,
        }
    }
}

/// Wakes a waiting bot's poll when another instance deals it a game; stops
/// listening when dropped.
pub(super) struct Waker<'a> {
    relay: &'a Relay,
    bot: BotId,
    pub(super) notify: Arc<Notify>,
}

impl Drop for Waker<'_> {
    fn drop(&mut self) {
        let mut m = lock(&self.relay.matched);
        if m.get(&self.bot)
            .is_some_and(|n| Arc::ptr_eq(n, &self.notify))
        {
            m.remove(&self.bot);
        }
    }
}
