//! The load generator's REST bots: each registers, logs in and plays whole
//! SkullWhist games through the 2014 REST API with random legal cards,
//! timing every call per endpoint (`croupier bench server` and
//! `bench server --instances`).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use croupier_rules::skullwhist::{playable, Card, CardSet};
use rand::seq::IndexedRandom;
use serde_json::{json, Value};
use tokio::sync::{Notify, Semaphore};

use crate::bench::server_stats::{Endpoint, Stats};

/// Bots per loopback source address: the server allows 200 registrations
/// at once per address, loopback included.
const BOTS_PER_ADDRESS: usize = 150;
/// Registrations and logins in flight at once (argon2 runs on two threads
/// behind a bounded queue on the server).
pub(crate) const AUTH_IN_FLIGHT: usize = 32;
/// The longest and the shortest a bot waits on a throttled answer before
/// it asks again.
const MAX_THROTTLE_WAIT: Duration = Duration::from_secs(5);
const MIN_THROTTLE_WAIT: Duration = Duration::from_millis(100);
/// How long a bot asks again a call the server keeps throttling before
/// it gives up with an error.
const THROTTLED_FOR: Duration = Duration::from_secs(60);

/// The error of a call throttled for `limit`.
fn kept_throttling(endpoint: Endpoint, limit: Duration) -> anyhow::Error {
    anyhow!(
        "{} kept answering retry for {:.1} s",
        endpoint.method(),
        limit.as_secs_f64()
    )
}

pub(crate) struct Bot {
    pub(crate) client: reqwest::Client,
    pub(crate) base: String,
    pub(crate) stats: Arc<Stats>,
}

impl Bot {
    pub(crate) async fn call(&self, endpoint: Endpoint, body: Value) -> anyhow::Result<Value> {
        let (reply, _, t) = self.send(endpoint, &body).await?;
        self.stats.record(endpoint, t);
        Ok(reply)
    }

    /// One call: its answer, the wait its `Retry-After` asks for (a
    /// throttled answer has one; new-game's `retry` after a long poll
    /// without an opponent has none), and when it was sent.
    async fn send(
        &self,
        endpoint: Endpoint,
        body: &Value,
    ) -> anyhow::Result<(Value, Option<Duration>, Instant)> {
        let t = Instant::now();
        let response = self
            .client
            .post(format!("{}/api/{}/", self.base, endpoint.method()))
            .json(body)
            .send()
            .await?;
        // Seconds, as Croupier sends it; a value it cannot read (an HTTP
        // date) is a second.
        let wait = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .map(|v| {
                let secs = v.to_str().ok().and_then(|v| v.trim().parse::<u64>().ok());
                Duration::from_secs(secs.unwrap_or(1)).clamp(MIN_THROTTLE_WAIT, MAX_THROTTLE_WAIT)
            });
        let reply: Value = response.json().await?;
        Ok((reply, wait, t))
    }

    /// One try of a call: its answer (counted as served), or, for a
    /// throttled answer (`retry` with `Retry-After`), the wait it asks for
    /// (counted apart, in `throttled`; not read as the game's end or a
    /// refusal).
    async fn attempt(
        &self,
        endpoint: Endpoint,
        body: &Value,
    ) -> anyhow::Result<Result<Value, Duration>> {
        let (reply, wait, t) = self.send(endpoint, body).await?;
        match wait.filter(|_| reply["result"] == "retry") {
            None => {
                self.stats.record(endpoint, t);
                Ok(Ok(reply))
            }
            Some(wait) => {
                self.stats.throttled.fetch_add(1, Ordering::Relaxed);
                Ok(Err(wait))
            }
        }
    }

    /// A game's call, asked again while the server throttles it, as the
    /// 2014 API's bots do: a stop of the bots does not cut it short, so
    /// that a stopped bot still ends its game. An error after
    /// [`THROTTLED_FOR`] of throttled answers.
    pub(crate) async fn ask(&self, endpoint: Endpoint, body: Value) -> anyhow::Result<Value> {
        let never = std::future::pending::<std::convert::Infallible>();
        let Ok(reply) = self.ask_until(endpoint, body, THROTTLED_FOR, never).await?;
        Ok(reply)
    }

    /// [`ask`](Self::ask) between games: `None` if the bots are stopped
    /// while it waits.
    pub(crate) async fn ask_unless_stopped(
        &self,
        endpoint: Endpoint,
        body: Value,
        control: &Control,
    ) -> anyhow::Result<Option<Value>> {
        let reply = self.ask_until(endpoint, body, THROTTLED_FOR, control.stopping());
        Ok(reply.await?.ok())
    }

    /// The answer to a call asked again while the server throttles it, up
    /// to `limit` of throttled answers; what `stop` gives if it comes while
    /// it waits (never while a call is under way).
    async fn ask_until<S: std::future::Future>(
        &self,
        endpoint: Endpoint,
        body: Value,
        limit: Duration,
        stop: S,
    ) -> anyhow::Result<Result<Value, S::Output>> {
        let since = Instant::now();
        let mut stop = std::pin::pin!(stop);
        loop {
            match self.attempt(endpoint, &body).await? {
                Ok(reply) => return Ok(Ok(reply)),
                Err(_) if since.elapsed() >= limit => return Err(kept_throttling(endpoint, limit)),
                Err(wait) => tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    stopped = &mut stop => return Ok(Err(stopped)),
                },
            }
        }
    }

    /// Register or login, waiting out the throttle and a full hash queue.
    async fn auth(
        &self,
        endpoint: Endpoint,
        body: Value,
        gate: &Semaphore,
    ) -> anyhow::Result<Value> {
        for _ in 0..600 {
            let reply = {
                let _permit = gate.acquire().await?;
                self.call(endpoint, body.clone()).await?
            };
            let busy = reply["result"] == "retry"
                || reply["reason"].as_str().is_some_and(|r| r.contains("busy"));
            if !busy {
                return ok(&reply).cloned();
            }
            self.stats.auth_retries.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Err(anyhow!("{} kept answering retry", endpoint.method()))
    }
}

/// Stops the bots, or pauses them between games (`bench server` measures
/// the bare endpoint while the bots are paused).
#[derive(Default)]
pub(crate) struct Control {
    stop: AtomicBool,
    paused: AtomicBool,
    /// Bots between asking for a game and seeing it end.
    playing: AtomicUsize,
    /// Bots answered by new-game since the last resume.
    back: AtomicUsize,
    changed: Notify,
}

impl Control {
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// The bots end, each after its current game.
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Resolves once the bots are stopped.
    async fn stopping(&self) {
        loop {
            // Registered before the check, so a stop in between is seen.
            let changed = self.changed.notified();
            if self.stopped() {
                return;
            }
            changed.await;
        }
    }

    /// No bot starts another game until [`Control::resume`]; waits up to
    /// `limit` until at most one bot is still in a game (or asking for one:
    /// a bot left without an opponent waits out the server's long poll),
    /// and says whether that happened.
    pub(crate) async fn pause(&self, limit: Duration) -> bool {
        // A bot counts itself as playing before it looks at `paused` (both
        // SeqCst), so once this store is done no bot it missed can start.
        self.paused.store(true, Ordering::SeqCst);
        let t = Instant::now();
        while self.playing.load(Ordering::SeqCst) > 1 {
            if t.elapsed() >= limit {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }

    pub(crate) fn resume(&self) {
        self.back.store(0, Ordering::SeqCst);
        self.paused.store(false, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// After [`Control::resume`], waits up to `limit` until all but one of
    /// the `bots` have had new-game's answer (their connections open).
    pub(crate) async fn resumed(&self, bots: usize, limit: Duration) {
        let t = Instant::now();
        while self.back.load(Ordering::SeqCst) + 1 < bots && t.elapsed() < limit {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Counts the bot as playing once no pause holds it (not once stopped:
    /// `None`).
    async fn enter(&self) -> Option<Playing<'_>> {
        loop {
            // Registered before the checks, so a resume in between is seen.
            let changed = self.changed.notified();
            if self.stopped() {
                return None;
            }
            let playing = Playing::new(self);
            if !self.paused.load(Ordering::SeqCst) {
                return Some(playing);
            }
            drop(playing);
            changed.await;
        }
    }
}

/// Counts a bot as playing while it lives.
struct Playing<'a>(&'a Control);

impl<'a> Playing<'a> {
    fn new(control: &'a Control) -> Self {
        control.playing.fetch_add(1, Ordering::SeqCst);
        Playing(control)
    }
}

impl Drop for Playing<'_> {
    fn drop(&mut self) {
        self.0.playing.fetch_sub(1, Ordering::SeqCst);
    }
}

fn ok(v: &Value) -> anyhow::Result<&Value> {
    match v["result"].as_str() {
        Some("success") => Ok(v),
        _ => Err(anyhow!("{v}")),
    }
}

/// One REST bot: plays random legal cards until stopped, pausing between
/// games when told; fetches every fifth finished game with old-game.
pub(crate) async fn play(
    bot: Bot,
    name: String,
    control: Arc<Control>,
    gate: Arc<Semaphore>,
) -> anyhow::Result<()> {
    let stats = Arc::clone(&bot.stats);
    let creds = json!({"name": name, "password": "pw"});
    bot.auth(Endpoint::Register, creds.clone(), &gate).await?;
    let login = bot.auth(Endpoint::Login, creds, &gate).await?;
    let session = login["session"]
        .as_str()
        .ok_or_else(|| anyhow!("the login reply has no session: {login}"))?
        .to_string();
    stats.logged_in.fetch_add(1, Ordering::Relaxed);
    let mut finished = 0u64;
    while let Some(_playing) = control.enter().await {
        let Some(g) = bot
            .ask_unless_stopped(Endpoint::NewGame, json!({"session": session}), &control)
            .await?
        else {
            break;
        };
        control.back.fetch_add(1, Ordering::SeqCst);
        if g["result"] == "retry" {
            stats.new_game_retries.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let game = ok(&g)?["game"].clone();
        let mut hand: Vec<String> = g["cards"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        ok(&bot
            .ask(Endpoint::Bid, json!({"session": session, "bid": 3}))
            .await?)?;
        let mut ended = false;
        while !ended {
            let s = bot
                .ask(Endpoint::Status, json!({"session": session}))
                .await?;
            if s["game"].is_null() {
                // Both bots of a game see it end: count halves.
                stats.game_ends.fetch_add(1, Ordering::Relaxed);
                finished += 1;
                ended = true;
                continue;
            }
            if s["your-turn"] != true {
                tokio::time::sleep(Duration::from_millis(1)).await;
                continue;
            }
            let lead = s["opponent-current-card"]
                .as_str()
                .and_then(|c| c.parse::<Card>().ok());
            let held: CardSet = hand.iter().filter_map(|c| c.parse().ok()).collect();
            let choice = playable(held, lead)
                .to_vec()
                .choose(&mut rand::rng())
                .copied();
            let Some(card) = choice.map(|c| c.text().to_string()) else {
                break;
            };
            let r = bot
                .ask(Endpoint::Play, json!({"session": session, "card": card}))
                .await?;
            if r["result"] == "success" {
                hand.retain(|c| *c != card);
            } else {
                stats.refused_plays.fetch_add(1, Ordering::Relaxed);
            }
        }
        if ended && finished.is_multiple_of(5) && !control.stopped() {
            let r = bot
                .ask_unless_stopped(
                    Endpoint::OldGame,
                    json!({"session": session, "game": game}),
                    &control,
                )
                .await?;
            if r.is_some_and(|r| r["result"] != "success") {
                stats.old_game_refusals.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    Ok(())
}

/// A keep-alive client for bot `i`, from its loopback source address.
pub(crate) fn client(i: usize) -> anyhow::Result<reqwest::Client> {
    let host = 1 + (i / BOTS_PER_ADDRESS).min(250) as u8;
    Ok(reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(1)
        // Below the server's 20 s keep-alive timeout, so that a bot waiting
        // for its turn to log in never reuses a connection being closed.
        .pool_idle_timeout(Duration::from_secs(10))
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, host)))
        .timeout(Duration::from_secs(60))
        .build()?)
}

/// Starts `bots` REST bots playing on `base` as `control` says (names
/// `PREFIX<run>-<i>`, a fresh run id each time), counting into `stats`;
/// at most [`AUTH_IN_FLIGHT`] of them register or log in at once.
pub(crate) fn spawn_bots(
    bots: usize,
    base: &str,
    prefix: char,
    stats: &Arc<Stats>,
    control: &Arc<Control>,
) -> anyhow::Result<tokio::task::JoinSet<anyhow::Result<()>>> {
    let gate = Arc::new(Semaphore::new(AUTH_IN_FLIGHT));
    let mut tasks = tokio::task::JoinSet::new();
    let run_id: u32 = rand::random();
    for i in 0..bots {
        let bot = Bot {
            client: client(i)?,
            base: base.to_string(),
            stats: Arc::clone(stats),
        };
        tasks.spawn(play(
            bot,
            format!("{prefix}{run_id:x}-{i}"),
            Arc::clone(control),
            Arc::clone(&gate),
        ));
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests;
