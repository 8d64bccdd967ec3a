//! `croupier bench spectators`: what watching costs (issue 16). A `croupier
//! serve` child runs its ladder (house games of Goofspiel and Love Letter);
//! the benchmark plays two Goofspiel games as a person through the play
//! pages, one move every `--move-ms`, first with nobody watching (the
//! baseline), then again with `--spectators` Server-Sent-Event clients on
//! the two games (`/v1/games/{id}/events?format=sse`, from 127.0.0.2 on,
//! 16 per address). It prints the server's CPU time and memory in both
//! runs, their difference, and the delay from each move (the person's POST)
//! to each spectator receiving the events it caused (p50, p99).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::anyhow;

use crate::bench::proc::{cpu_seconds, percentile, rss_mib, wait_up, Server};

/// Moves made: (game, when the POST left).
type Moves = Arc<Mutex<Vec<(i64, Instant)>>>;

struct Person {
    http: reqwest::Client,
    base: String,
    cookie: Option<String>,
}

impl Person {
    /// Starts a Goofspiel game against the house's random bot.
    async fn start(&mut self) -> anyhow::Result<i64> {
        for _ in 0..100 {
            match self.try_start().await? {
                Some(id) => return Ok(id),
                // The last games are still being stored.
                None => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
        Err(anyhow!("cannot start a game: the server stays busy"))
    }

    async fn try_start(&mut self) -> anyhow::Result<Option<i64>> {
        let mut req = self.http.post(format!("{}/play", self.base)).form(&[
            ("game", "goofspiel"),
            ("opponent1", "house:random"),
            ("seat", "0"),
        ]);
        if let Some(c) = &self.cookie {
            req = req.header("cookie", c);
        }
        let r = req.send().await?;
        if r.status().as_u16() == 429 {
            return Ok(None);
        }
        if r.status().as_u16() != 303 {
            return Err(anyhow!("cannot start a game: HTTP {}", r.status()));
        }
        if let Some(c) = r.headers().get("set-cookie") {
            let c = c
                .to_str()?
                .split(';')
                .next()
                .unwrap_or_default()
                .to_string();
            self.cookie = Some(c);
        }
        let location = r.headers()["location"].to_str()?.to_string();
        location
            .strip_prefix("/play/")
            .and_then(|s| s.parse().ok())
            .map(Some)
            .ok_or_else(|| anyhow!("unexpected redirect to {location}"))
    }

    /// Makes the first legal move in game `id` once it is the person's
    /// turn; returns when the POST left (`None`: the game is over).
    async fn act(&self, id: i64) -> anyhow::Result<Option<Instant>> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if Instant::now() > deadline {
                return Err(anyhow!("game {id}: never the person's turn"));
            }
            let html = self
                .http
                .get(format!("{}/play/{id}", self.base))
                .header("cookie", self.cookie.as_deref().unwrap_or_default())
                .send()
                .await?
                .text()
                .await?;
            if !html.contains("data-status=\"running\"") {
                return Ok(None);
            }
            let value = |marker: &str| {
                html.split(marker)
                    .nth(1)
                    .and_then(|r| r.split("value=\"").nth(1))
                    .and_then(|r| r.split('"').next())
                    .map(str::to_string)
            };
            if let (Some(d), Some(a)) = (value("name=\"decision\""), value("name=\"action\"")) {
                let t = Instant::now();
                self.http
                    .post(format!("{}/play/{id}", self.base))
                    .header("cookie", self.cookie.as_deref().unwrap_or_default())
                    .form(&[("decision", d), ("action", a)])
                    .send()
                    .await?;
                return Ok(Some(t));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Plays `moves` moves alternately in `games`, one every `every`.
async fn play(
    person: &Person,
    games: &[i64],
    moves: usize,
    every: Duration,
    log: &Moves,
) -> anyhow::Result<()> {
    let mut tick = tokio::time::interval(every);
    for k in 0..moves {
        tick.tick().await;
        let id = games[k % games.len()];
        let t = person
            .act(id)
            .await?
            .ok_or_else(|| anyhow!("game {id} ended early"))?;
        log.lock().unwrap_or_else(|e| e.into_inner()).push((id, t));
    }
    Ok(())
}

/// One spectator: reads the SSE stream, noting when each event arrives.
async fn spectator(
    client: reqwest::Client,
    url: String,
    game: i64,
    connected: Arc<tokio::sync::Semaphore>,
    arrivals: Arc<Mutex<Vec<(i64, Instant)>>>,
    dropped: Arc<std::sync::atomic::AtomicUsize>,
) {
    let Ok(mut r) = client.get(&url).send().await else {
        dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        connected.add_permits(1);
        return;
    };
    if !r.status().is_success() {
        dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        connected.add_permits(1);
        return;
    }
    let mut buf = String::new();
    let mut started = false;
    let mut mine = Vec::new();
    while let Ok(Some(chunk)) = r.chunk().await {
        let now = Instant::now();
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let msg: String = buf.drain(..end + 2).collect();
            if msg.contains("event: start") && !started {
                started = true;
                connected.add_permits(1);
            } else if msg.contains("event: event") {
                mine.push((game, now));
            } else if msg.contains("event: dropped") {
                dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }
    arrivals
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(mine);
}

struct Phase {
    cpu_s: f64,
    rss_mib: f64,
}

/// Runs the benchmark and prints its figures.
pub fn run(
    spectators: usize,
    moves: usize,
    move_ms: u64,
    exe: &std::path::Path,
) -> anyhow::Result<()> {
    let fd_limit = croupier_server::net::raise_fd_limit();
    if (fd_limit as usize) < spectators + 200 {
        return Err(anyhow!(
            "the open-file limit ({fd_limit}) is too low for {spectators} spectators"
        ));
    }
    let moves = moves.clamp(2, 24);
    let dir = tempfile::tempdir()?;
    let database = format!("sqlite://{}", dir.path().join("watch.db").display());
    let (server, base) = Server::serve(exe, &database, &[], "error")?;
    let pid = server.pid();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let http = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        wait_up(&base).await?;
        let every = Duration::from_millis(move_ms);
        let mut person = Person {
            http: http.clone(),
            base: base.clone(),
            cookie: None,
        };
        // Let the ladder warm up (its house games start at a pace).
        tokio::time::sleep(Duration::from_secs(2)).await;

        // Baseline: the same moves with nobody watching.
        let games = [person.start().await?, person.start().await?];
        let log: Moves = Arc::default();
        let (cpu0, t0) = (cpu_seconds(pid), Instant::now());
        play(&person, &games, moves, every, &log).await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let baseline = Phase {
            cpu_s: cpu_seconds(pid) - cpu0,
            rss_mib: rss_mib(pid),
        };
        let baseline_wall = t0.elapsed().as_secs_f64();
        // Let those games end (their move time is long: abandon them by
        // playing them out quickly).
        for g in games {
            while let Ok(Some(_)) = person.act(g).await {}
        }

        // With spectators.
        let games = [person.start().await?, person.start().await?];
        let rss_before = rss_mib(pid);
        let connected = Arc::new(tokio::sync::Semaphore::new(0));
        let arrivals: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::default();
        let dropped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut clients = Vec::new();
        let mut readers = Vec::new();
        for i in 0..spectators {
            let addr = i / 16;
            if addr >= clients.len() {
                let ip = IpAddr::V4(Ipv4Addr::new(127, 0, (2 + addr / 250) as u8, (2 + addr % 250) as u8));
                clients.push(
                    reqwest::Client::builder()
                        .no_proxy()
                        .local_address(ip)
                        .build()?,
                );
            }
            let game = games[i % games.len()];
            readers.push(tokio::spawn(spectator(
                clients[addr].clone(),
                format!("{base}/v1/games/{game}/events?format=sse"),
                game,
                Arc::clone(&connected),
                Arc::clone(&arrivals),
                Arc::clone(&dropped),
            )));
        }
        let all = connected
            .acquire_many(spectators as u32)
            .await
            .map_err(|e| anyhow!("{e}"))?;
        all.forget();
        let refused = dropped.load(std::sync::atomic::Ordering::Relaxed);
        let rss_connected = rss_mib(pid);
        let log: Moves = Arc::default();
        let (cpu0, t0) = (cpu_seconds(pid), Instant::now());
        let phase_start = Instant::now();
        play(&person, &games, moves, every, &log).await?;
        // The last events reach everyone.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let watched = Phase {
            cpu_s: cpu_seconds(pid) - cpu0,
            rss_mib: rss_mib(pid),
        };
        let watched_wall = t0.elapsed().as_secs_f64();
        // End the games: every stream ends with them.
        for g in games {
            while let Ok(Some(_)) = person.act(g).await {}
        }
        for r in readers {
            let _ = tokio::time::timeout(Duration::from_secs(30), r).await;
        }
        let moves_log = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut delays: Vec<f64> = arrivals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, t)| *t > phase_start)
            .filter_map(|(g, t)| {
                moves_log
                    .iter()
                    .filter(|(mg, mt)| mg == g && mt <= t)
                    .map(|(_, mt)| t.duration_since(*mt).as_secs_f64() * 1000.0)
                    .reduce(f64::min)
            })
            .collect();
        delays.sort_by(f64::total_cmp);
        println!(
            "bench spectators: {spectators} SSE clients on 2 Goofspiel games a person plays, \
the ladder's house games running; {moves} moves, one every {move_ms} ms"
        );
        println!("{:<22} {:>12} {:>14} {:>10}", "run", "server CPU s", "CPU % of core", "RSS MiB");
        println!(
            "{:<22} {:>12.2} {:>14.1} {:>10.1}",
            "nobody watching",
            baseline.cpu_s,
            100.0 * baseline.cpu_s / baseline_wall,
            baseline.rss_mib
        );
        println!(
            "{:<22} {:>12.2} {:>14.1} {:>10.1}",
            format!("{spectators} watching"),
            watched.cpu_s,
            100.0 * watched.cpu_s / watched_wall,
            watched.rss_mib
        );
        println!(
            "added by spectators: CPU {:.2} s ({:.1} ms per move); memory {:.1} MiB on connecting ({:.1} KiB per spectator)",
            watched.cpu_s - baseline.cpu_s,
            1000.0 * (watched.cpu_s - baseline.cpu_s) / moves as f64,
            rss_connected - rss_before,
            1024.0 * (rss_connected - rss_before) / spectators.max(1) as f64
        );
        println!(
            "delay move -> spectator: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} deliveries); refused or dropped: {refused}+{}",
            percentile(&delays, 0.5),
            percentile(&delays, 0.99),
            delays.last().copied().unwrap_or(f64::NAN),
            delays.len(),
            dropped.load(std::sync::atomic::Ordering::Relaxed) - refused
        );
        Ok(())
    })
}
