//! Requests relayed between instances through PostgreSQL (issue 13 item
//! 3). A game in progress runs in one process, its home; a request for it
//! that reaches another instance is sent to the home with `NOTIFY` on the
//! home's channel, and the home's reply comes back the same way on the
//! asker's channel. No connection between instances but the database.
//!
//! Also here: the instance's lease (a heartbeat every second; the first
//! instance to see a lease expired closes the dead instance's games with a
//! reason) and the wake-up of bots waiting for an opponent.
//!
//! [`Relay::start`] is all a process running games needs: it registers the
//! instance and serves the requests relayed to it with its [`Home`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_store::postgres::cluster::{instance_channel, Cluster, SHARED_CHANNEL};
use croupier_store::{BotId, GameId};
use futures::future::BoxFuture;
use tokio::sync::{oneshot, Notify};

/// How often an instance renews its lease.
pub const HEARTBEAT: Duration = Duration::from_secs(1);
/// An instance whose lease is older than this is dead; its games are
/// closed by the others (so within about `LEASE + REAP` of its death).
pub const LEASE: Duration = Duration::from_secs(10);
/// How often an instance looks for dead ones.
pub const REAP: Duration = Duration::from_secs(2);

/// The games a process runs: what it does with a request relayed to it.
pub trait Home: Send + Sync + 'static {
    /// Handles `line` for seat `seat` of game `game`; the reply text
    /// (`"gone"` for a game this process does not run).
    fn handle(&self, game: GameId, seat: usize, line: String) -> BoxFuture<'static, String>;
}

/// The reply of a home that does not run the game.
pub const GONE: &str = "gone";

/// One instance's side of the relay.
pub struct Relay {
    db: Cluster,
    instance: i64,
    next: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<String>>>,
    matched: Mutex<HashMap<BotId, Arc<Notify>>>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Relay {
    /// Registers this process as an instance named `name`, and serves the
    /// requests relayed to its games with `home` (in tasks that live as
    /// long as the runtime). Also renews the instance's lease, and closes
    /// the games of dead instances.
    pub async fn start(db: Cluster, name: &str, home: Arc<dyn Home>) -> Result<Arc<Relay>, String> {
        let instance = db
            .register_instance(name)
            .await
            .map_err(|e| format!("cannot register the instance: {e}"))?;
        let own = instance_channel(instance);
        let mut listener = db
            .listen(&[SHARED_CHANNEL, &own])
            .await
            .map_err(|e| format!("cannot listen for the other instances: {e}"))?;
        let relay = Arc::new(Relay {
            db: db.clone(),
            instance,
            next: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            matched: Mutex::new(HashMap::new()),
        });
        tracing::info!("instance {instance} ({name}) joined the cluster");
        let r = Arc::clone(&relay);
        tokio::spawn(async move {
            loop {
                match listener.recv().await {
                    Ok((_, payload)) => r.take(&payload, &home),
                    Err(e) => {
                        tracing::warn!("the instances' channel: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        });
        let r = Arc::clone(&relay);
        tokio::spawn(async move { r.keep_lease().await });
        Ok(relay)
    }

    /// This instance's id.
    pub fn instance(&self) -> i64 {
        self.instance
    }

    /// The shared tables.
    pub fn db(&self) -> &Cluster {
        &self.db
    }

    async fn keep_lease(&self) {
        let mut beat = tokio::time::interval(HEARTBEAT);
        let mut last_reap = tokio::time::Instant::now();
        loop {
            beat.tick().await;
            match self.db.heartbeat(self.instance).await {
                Ok(true) => {}
                Ok(false) => tracing::error!(
                    "instance {}: the others declared it dead (its lease ran out); its games were closed",
                    self.instance
                ),
                Err(e) => tracing::warn!("instance {}: heartbeat: {e}", self.instance),
            }
            if last_reap.elapsed() >= REAP {
                last_reap = tokio::time::Instant::now();
                let now = croupier_arena::runner::now_rfc3339();
                match self
                    .db
                    .reap_dead(
                        LEASE.as_secs_f64(),
                        "the server instance running the game stopped",
                        &now,
                    )
                    .await
                {
                    Ok((dead, games)) if !dead.is_empty() || !games.is_empty() => {
                        tracing::warn!(
                            "instances {dead:?} stopped: closed their {} games in progress",
                            games.len()
                        );
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("looking for stopped instances: {e}"),
                }
            }
        }
    }

    /// A notification from another instance (or this one).
    fn take(self: &Arc<Self>, payload: &str, home: &Arc<dyn Home>) {
        let mut parts = payload.splitn(2, ' ');
        let (kind, rest) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        match kind {
            "m" => {
                if let Ok(bot) = rest.parse::<BotId>() {
                    if let Some(n) = lock(&self.matched).get(&bot) {
                        n.notify_one();
                    }
                }
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
                let parsed = (|| {
                    let origin = f.next()?.parse::<i64>().ok()?;
                    let id = f.next()?.parse::<u64>().ok()?;
                    let game = f.next()?.parse::<GameId>().ok()?;
                    let seat = f.next()?.parse::<usize>().ok()?;
                    Some((origin, id, game, seat, f.next()?.to_string()))
                })();
                let Some((origin, id, game, seat, line)) = parsed else {
                    tracing::warn!("a relayed request that does not parse: {payload}");
                    return;
                };
                let reply = home.handle(game, seat, line);
                let db = self.db.clone();
                tokio::spawn(async move {
                    let reply = reply.await;
                    let channel = instance_channel(origin);
                    if let Err(e) = db.notify(&channel, &format!("r {id} {reply}")).await {
                        tracing::warn!("cannot send a relayed reply: {e}");
                    }
                });
            }
            _ => tracing::warn!("an unknown notification: {payload}"),
        }
    }

    /// Sends `line` for seat `seat` of game `game` to its home instance;
    /// the reply, or `None` if none came within `wait`.
    pub async fn ask(
        &self,
        home: i64,
        game: GameId,
        seat: usize,
        line: &str,
        wait: Duration,
    ) -> Option<String> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let payload = format!("q {} {id} {game} {seat} {line}", self.instance);
        let sent = self.db.notify(&instance_channel(home), &payload).await;
        let reply = match sent {
            Ok(()) => tokio::time::timeout(wait, rx)
                .await
                .ok()
                .and_then(Result::ok),
            Err(e) => {
                tracing::warn!("cannot relay a request: {e}");
                None
            }
        };
        lock(&self.pending).remove(&id);
        reply
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
