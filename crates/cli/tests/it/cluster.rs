//! Several `croupier serve` instances on one PostgreSQL database behind
//! haproxy (round robin, no stickiness), with the haproxy configuration of
//! docs/deploy/haproxy.cfg (issue 13 item 3). REST bots play complete games
//! through the proxy; the database holds each game they saw end once,
//! finished. Killing an instance with SIGKILL under play: the others keep
//! serving, and the dead instance's games are closed with a reason within
//! 30 s. Skipped with a notice without PostgreSQL or haproxy (a failure
//! under CI).

use crate::support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The instances behind the proxy.
const INSTANCES: usize = 3;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn have_everything() -> bool {
    let pg = croupier_store::scratch::find_bin().is_some();
    let haproxy = Command::new("haproxy")
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if pg && haproxy {
        return true;
    }
    assert!(
        std::env::var("CI").is_err(),
        "PostgreSQL or haproxy is missing under CI: .ci/run should install them"
    );
    eprintln!("SKIPPED: these tests need PostgreSQL and haproxy installed");
    false
}

/// The arguments of the docs' systemd unit (docs/deploy/croupier@.service)
/// for the instance on `port`.
fn unit_args(port: u16) -> Vec<String> {
    let unit = std::fs::read_to_string(support::root().join("docs/deploy/croupier@.service"))
        .expect("docs/deploy/croupier@.service");
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("the unit has an ExecStart line");
    exec.split_whitespace()
        .skip(1) // the installed binary; the tests run the one built
        .map(|w| w.replace("%i", &port.to_string()))
        .collect()
}

/// One `croupier serve` on `port` (as the docs' systemd unit starts it, its
/// database in `CROUPIER_DATABASE` as the unit's environment file sets it),
/// its log in `log`, its waits (`croupier_store::waits`, on `SIGUSR1`) in
/// `log` with the extension `waits`.
/// `house`: its house bots' strategies (none for most tests: only the
/// REST bots under test play).
fn instance(url: &str, port: u16, log: &Path, house: &str) -> Killed {
    let waits = log.with_extension("waits");
    let log = std::fs::File::create(log).expect("log file");
    let child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(unit_args(port))
        .args(["--no-ladder", "--house-bots", house])
        // House bots (in the tests that have them) move without the pause
        // that keeps their games watchable: what is tested is who pairs
        // with whom, not the pace (300 ms a move made 3 games take 30 s).
        .args(["--house-pause-ms", "10"])
        .args(["--move-timeout", "20"])
        .env("CROUPIER_DATABASE", url)
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "info")
        .env(croupier_store::waits::ENV, waits)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start croupier serve");
    Killed(child)
}

fn wait_listening(port: u16) {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "port {port} did not open"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// haproxy with docs/deploy/haproxy.cfg, its addresses replaced by ours.
fn proxy(dir: &Path, front: u16, backs: &[u16]) -> Killed {
    let template = std::fs::read_to_string(support::root().join("docs/deploy/haproxy.cfg"))
        .expect("docs/deploy/haproxy.cfg");
    // Plain round robin: any instance answers any request (the docs'
    // session affinity, its lines marked "# affinity", taken out).
    let template: String = template
        .lines()
        .filter_map(|l| match l.trim_end().strip_suffix("# affinity") {
            Some(marked) if marked.contains("balance ") => Some("    balance roundrobin"),
            Some(_) => None,
            None => Some(l),
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(template.contains("balance roundrobin"), "{template}");
    let mut cfg = template.replace("127.0.0.1:8080", &format!("127.0.0.1:{front}"));
    for (i, port) in backs.iter().enumerate() {
        let docs = format!("127.0.0.1:{}", 8081 + i);
        assert!(cfg.contains(&docs), "the docs' config names {docs}");
        cfg = cfg.replace(&docs, &format!("127.0.0.1:{port}"));
    }
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, cfg).expect("write haproxy.cfg");
    let child = Command::new("haproxy")
        .arg("-db")
        .arg("-f")
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start haproxy");
    wait_listening(front);
    Killed(child)
}

struct Cluster {
    _pg: croupier_store::scratch::ScratchCluster,
    url: String,
    dir: tempfile::TempDir,
    ports: Vec<u16>,
    instances: Vec<Option<Killed>>,
    _proxy: Killed,
    base: String,
    rt: tokio::runtime::Runtime,
    /// The instances' house bots.
    house: &'static str,
}

impl Cluster {
    fn start() -> Cluster {
        Cluster::start_some(INSTANCES)
    }

    /// The proxy names all instances; only the first `running` start.
    fn start_some(running: usize) -> Cluster {
        Cluster::start_with(running, "")
    }

    /// As [`Cluster::start_some`], with house bots of strategies `house`.
    fn start_with(running: usize, house: &'static str) -> Cluster {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let pg = croupier_store::scratch::ScratchCluster::start(false).expect("scratch cluster");
        let url = rt.block_on(pg.create_database()).expect("database");
        let dir = tempfile::tempdir().expect("temp dir");
        let ports: Vec<u16> = (0..INSTANCES)
            .map(|_| crate::support::free_port())
            .collect();
        let mut instances = Vec::new();
        for (i, port) in ports.iter().enumerate().take(running) {
            instances.push(Some(instance(
                &url,
                *port,
                &dir.path().join(format!("serve{i}.log")),
                house,
            )));
            // One at a time: the first migrates the database.
            wait_listening(*port);
        }
        instances.resize_with(INSTANCES, || None);
        let front = crate::support::free_port();
        let proxy = proxy(dir.path(), front, &ports);
        Cluster {
            _pg: pg,
            url,
            dir,
            ports,
            instances,
            _proxy: proxy,
            base: format!("http://127.0.0.1:{front}"),
            rt,
            house,
        }
    }

    /// Starts instance `i` (not started yet) and waits until it listens.
    fn start_instance(&mut self, i: usize) {
        let port = self.ports[i];
        self.instances[i] = Some(instance(
            &self.url,
            port,
            &self.dir.path().join(format!("serve{i}.log")),
            self.house,
        ));
        wait_listening(port);
    }

    fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("serve{i}.log"))).unwrap_or_default()
    }

    /// How many waits of each kind running instance `i` recorded since it
    /// started (or since this was last asked): it is sent `SIGUSR1` and
    /// appends them to its waits file.
    fn wait_counts(&self, i: usize) -> std::collections::BTreeMap<String, u64> {
        let file = self.dir.path().join(format!("serve{i}.waits"));
        let lines = |f: &Path| {
            std::fs::read_to_string(f)
                .map(|t| t.lines().count())
                .unwrap_or(0)
        };
        let before = lines(&file);
        let pid = self.instances[i]
            .as_ref()
            .expect("a running instance")
            .0
            .id();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGUSR1,
        )
        .expect("signal the instance");
        let start = Instant::now();
        while lines(&file) == before {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "instance {i} wrote no waits on SIGUSR1"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let text = std::fs::read_to_string(&file).expect("waits file");
        let last: Value =
            serde_json::from_str(text.lines().last().expect("a line")).expect("the waits are JSON");
        last.as_object()
            .expect("waits by kind")
            .iter()
            .map(|(k, v)| (k.clone(), v["n"].as_u64().expect("a count")))
            .collect()
    }

    fn query<T>(&self, f: impl FnOnce(sqlx::PgPool) -> Query<T>) -> T {
        self.rt.block_on(async {
            let store = croupier_store::PgStore::open(&self.url)
                .await
                .expect("open the database");
            f(store.pool().clone()).await
        })
    }
}

type Query<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T>>>;

/// What a bot saw.
#[derive(Default)]
struct Seen {
    /// Games it saw end (its status said it is in no game any more).
    ended: Vec<i64>,
    /// Requests that failed (HTTP errors, refusals other than turns), each
    /// as what was sent and what came back.
    failures: Vec<String>,
}

/// A call's JSON reply, or what went wrong (the transport's error, or the
/// status and body of a reply that is not JSON: a proxy's error page).
fn call(
    client: &reqwest::blocking::Client,
    base: &str,
    method: &str,
    body: Value,
) -> Result<Value, String> {
    let reply = client
        .post(format!("{base}/api/{method}/"))
        .json(&body)
        .send()
        .map_err(|e| format!("{method}: {e}"))?;
    let status = reply.status();
    let text = reply.text().map_err(|e| format!("{method}: {e}"))?;
    serde_json::from_str(&text).map_err(|_| format!("{method}: {status} {text:?}"))
}

/// A REST bot: registers, logs in, plays games of random legal cards
/// through the proxy until `stop`.
fn bot(base: String, name: String, stop: Arc<AtomicBool>, games: Arc<AtomicUsize>) -> Seen {
    let client = reqwest::blocking::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(40))
        .build()
        .expect("client");
    let mut seen = Seen::default();
    let creds = json!({"name": name, "password": "pw"});
    let mut session = None;
    for _ in 0..100 {
        let _ = call(&client, &base, "register", creds.clone());
        if let Ok(r) = call(&client, &base, "login", creds.clone()) {
            if let Some(s) = r["session"].as_str() {
                session = Some(s.to_string());
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let session = session.expect("the bot logged in");
    while !stop.load(Ordering::Relaxed) {
        let g = match call(&client, &base, "new-game", json!({"session": session})) {
            Ok(g) => g,
            Err(e) => {
                seen.failures.push(e);
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        if g["result"] == "retry" {
            continue;
        }
        let Some(game) = g["game"].as_i64() else {
            // "you have bid; finish it first": play on below.
            seen.failures.push(format!("new-game: {g}"));
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let mut hand: Vec<String> = g["cards"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        // A `retry` (over the bot's request rate) is waited out, as the
        // server asks: it is no failure, and no game's end.
        for _ in 0..100 {
            match call(&client, &base, "bid", json!({"session": session, "bid": 3})) {
                Ok(r) if r["result"] == "success" => {}
                Ok(r) if r["result"] == "retry" => {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                Ok(r) => seen.failures.push(format!("bid: {r}")),
                Err(e) => seen.failures.push(e),
            }
            break;
        }
        let mut errors = 0;
        loop {
            let Ok(s) = call(&client, &base, "status", json!({"session": session})) else {
                errors += 1;
                if errors > 200 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            if s["result"] == "retry" {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            if s["game"].is_null() {
                seen.ended.push(game);
                games.fetch_add(1, Ordering::Relaxed);
                break;
            }
            if s["your-turn"] != true {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            let lead = s["opponent-current-card"]
                .as_str()
                .and_then(|c| c.chars().next());
            let follow: Vec<&String> = hand
                .iter()
                .filter(|c| lead.is_some_and(|l| c.starts_with(l)))
                .collect();
            let card = match follow.first() {
                Some(c) => (*c).clone(),
                None => match hand.first() {
                    Some(c) => c.clone(),
                    None => break,
                },
            };
            match call(
                &client,
                &base,
                "play",
                json!({"session": session, "card": card}),
            ) {
                Ok(r) if r["result"] == "success" => hand.retain(|c| *c != card),
                Ok(r) if r["result"] == "retry" => std::thread::sleep(Duration::from_millis(50)),
                r => {
                    seen.failures.push(format!("play {card}: {r:?}"));
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }
    seen
}

fn bots(
    base: &str,
    n: usize,
    tag: &str,
    stop: &Arc<AtomicBool>,
    games: &Arc<AtomicUsize>,
) -> Vec<std::thread::JoinHandle<Seen>> {
    (0..n)
        .map(|i| {
            let (base, stop, games) = (base.to_string(), Arc::clone(stop), Arc::clone(games));
            let name = format!("{tag}{i}");
            std::thread::spawn(move || bot(base, name, stop, games))
        })
        .collect()
}

fn wait_games(games: &AtomicUsize, at_least: usize, secs: u64) {
    let start = Instant::now();
    while games.load(Ordering::Relaxed) < at_least {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "only {} game ends seen in {secs} s",
            games.load(Ordering::Relaxed)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

type GameRows = Vec<(i64, String, Option<String>)>;

fn games_in(c: &Cluster) -> GameRows {
    c.query(|pool| -> Query<GameRows> {
        Box::pin(async move {
            sqlx::query_as("SELECT id, status, reason FROM games ORDER BY id")
                .fetch_all(&pool)
                .await
                .expect("games")
        })
    })
}

/// Each of the games `ids` (that bots saw end) is finished in `rows`.
fn assert_finished<'a>(rows: &GameRows, ids: impl IntoIterator<Item = &'a i64>) {
    for id in ids {
        let row = rows.iter().find(|r| r.0 == *id);
        assert!(
            matches!(row, Some((_, st, _)) if st == "finished"),
            "game {id} the bots saw end is {row:?} in the database"
        );
    }
}

#[test]
fn rest_bots_play_through_haproxy_on_three_instances() {
    if !have_everything() {
        return;
    }
    let c = Cluster::start();
    let stop = Arc::new(AtomicBool::new(false));
    let games = Arc::new(AtomicUsize::new(0));
    let handles = bots(&c.base, 8, "rr", &stop, &games);
    // Each game ends for two bots.
    wait_games(&games, 2 * 24, 240);
    stop.store(true, Ordering::Relaxed);
    let seen: Vec<Seen> = handles
        .into_iter()
        .map(|h| h.join().expect("bot thread"))
        .collect();
    let failures: Vec<&String> = seen.iter().flat_map(|s| &s.failures).collect();
    let mut ended: Vec<i64> = seen.iter().flat_map(|s| s.ended.clone()).collect();
    ended.sort_unstable();
    // Each game the bots saw end was seen by both of its bots.
    let mut distinct = ended.clone();
    distinct.dedup();
    let rows = games_in(&c);
    eprintln!(
        "{} games seen ended, {} rows, {} failed requests",
        distinct.len(),
        rows.len(),
        failures.len()
    );
    assert_finished(&rows, &distinct);
    for id in &distinct {
        assert_eq!(
            ended.iter().filter(|e| *e == id).count(),
            2,
            "game {id} ended for both its bots"
        );
    }
    let finished = rows.iter().filter(|r| r.1 == "finished").count();
    assert_eq!(
        finished,
        distinct.len(),
        "the database holds each finished game once, and only those the bots saw"
    );
    assert!(
        failures.is_empty(),
        "requests failed through the proxy: {failures:?}"
    );
    // Games ran in more than one instance (each logs the games it played).
    let homes = (0..INSTANCES)
        .filter(|i| c.log(*i).contains(": bot "))
        .count();
    assert!(homes >= 2, "games ran in {homes} instance(s)");
    // Requests that reached an instance other than their game's home were
    // relayed there and answered by it: moves, and (issue 50) statuses.
    let (mut moves, mut statuses) = (0, 0);
    for i in 0..INSTANCES {
        let n = c.wait_counts(i);
        moves += n.get("relay: home answered").copied().unwrap_or(0);
        statuses += n.get("status: asked the home").copied().unwrap_or(0);
    }
    eprintln!("relayed moves: {moves}, statuses asked of the home: {statuses}");
    assert!(
        moves >= 20 && statuses >= 20,
        "relayed moves {moves}, statuses asked of the home {statuses}"
    );
}

#[test]
fn killing_an_instance_closes_its_games_and_the_others_keep_serving() {
    if !have_everything() {
        return;
    }
    let mut c = Cluster::start();
    let stop = Arc::new(AtomicBool::new(false));
    let games = Arc::new(AtomicUsize::new(0));
    let handles = bots(&c.base, 12, "kk", &stop, &games);
    wait_games(&games, 12, 240);
    // The instance to kill, and its games in progress at that moment.
    let victim = c.instances[1].take().expect("instance two");
    let pid = victim.0.id();
    let victim_games: Vec<i64> = c.query(move |pool| -> Query<Vec<i64>> {
        Box::pin(async move {
            sqlx::query_scalar(
                "SELECT DISTINCT s.game FROM hub_seats s JOIN ladder_processes p ON p.id = s.home
                 WHERE p.role = 'serve' AND p.pid = $1",
            )
            .bind(i64::from(pid))
            .fetch_all(&pool)
            .await
            .expect("seats")
        })
    });
    drop(victim); // SIGKILL
    let killed_at = Instant::now();
    let before = games.load(Ordering::Relaxed);
    eprintln!(
        "killed pid {pid} with {} games in progress, {before} game ends seen",
        victim_games.len()
    );
    // The others keep serving.
    wait_games(&games, before + 2 * 12, 240);
    // The victim's games are closed with a reason within 30 s.
    let closed = loop {
        let rows = games_in(&c);
        let open: Vec<&(i64, String, Option<String>)> = rows
            .iter()
            .filter(|r| victim_games.contains(&r.0) && r.1 == "running")
            .collect();
        if open.is_empty() {
            break rows;
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(30),
            "games of the killed instance still running after 30 s: {open:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    eprintln!(
        "its games closed {:.1} s after the kill",
        killed_at.elapsed().as_secs_f64()
    );
    // Closed by the survivors with the reason naming the killed instance.
    let lost_with_victim = |row: &(i64, String, Option<String>)| {
        row.1 == "aborted"
            && row.2.as_deref().is_some_and(|r| {
                r.starts_with("worker lost: serve ") && r.contains(&format!("pid {pid} "))
            })
    };
    for id in &victim_games {
        let row = closed.iter().find(|r| r.0 == *id).expect("the game's row");
        assert!(
            row.1 == "finished" || lost_with_victim(row),
            "game {id} of the killed instance: {row:?}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    let seen: Vec<Seen> = handles
        .into_iter()
        .map(|h| h.join().expect("bot thread"))
        .collect();
    // Every game a bot saw end is in the database, finished or (if its
    // instance died) closed with the reason; none is left running.
    let rows = games_in(&c);
    for s in &seen {
        for id in &s.ended {
            let row = rows
                .iter()
                .find(|r| r.0 == *id)
                .expect("a row per game seen");
            // A game the victim dealt between the look at its seats and
            // the kill is not in `victim_games`, but is closed the same way.
            assert!(
                row.1 == "finished" || victim_games.contains(id) || lost_with_victim(row),
                "game {id}: {row:?}"
            );
        }
    }
}

/// An instance alone answers from memory and writes no views; instances
/// that join while its games run must see every move of them: the bots'
/// `status` polls, now spread over three instances, never show a stale
/// turn (a stale one would make a bot play out of turn, a failure).
#[test]
fn instances_joining_while_games_run_see_every_move() {
    if !have_everything() {
        return;
    }
    let mut c = Cluster::start_some(1);
    let stop = Arc::new(AtomicBool::new(false));
    let games = Arc::new(AtomicUsize::new(0));
    let handles = bots(&c.base, 8, "jj", &stop, &games);
    wait_games(&games, 8, 240);
    let alone_games = games.load(Ordering::Relaxed);
    // Alone, its bots wait in its list only: no row is written or taken
    // (unless a late heartbeat let "alone" lapse for a moment: then the
    // instance logs it, and a row or two is right).
    let alone = c.wait_counts(0);
    let lapsed = c.log(0).contains("alone again after a late heartbeat");
    // Nor are its games' seats written or removed.
    for kind in [
        "pg: wait",
        "pg: stop_waiting",
        "pg: take_partner",
        "pg: commit",
        "pg: seat_game",
        "pg: unseat",
    ] {
        if lapsed {
            eprintln!("'alone' lapsed for a moment: {kind} {:?}", alone.get(kind));
            continue;
        }
        assert_eq!(
            alone.get(kind),
            None,
            "the instance alone went to the waiting table ({kind}): {alone:?}"
        );
    }
    c.start_instance(1);
    c.start_instance(2);
    wait_games(&games, alone_games + 2 * 24, 240);
    // With others, bots wait in the table too, where the others take them.
    let rows_written: u64 = (0..INSTANCES)
        .map(|i| c.wait_counts(i).get("pg: wait").copied().unwrap_or(0))
        .sum();
    assert!(
        rows_written > 0,
        "no bot waited in the table after the join"
    );
    stop.store(true, Ordering::Relaxed);
    let seen: Vec<Seen> = handles
        .into_iter()
        .map(|h| h.join().expect("bot thread"))
        .collect();
    let failures: Vec<&String> = seen.iter().flat_map(|s| &s.failures).collect();
    let rows = games_in(&c);
    assert_finished(&rows, seen.iter().flat_map(|s| &s.ended));
    assert!(
        failures.is_empty(),
        "requests failed or saw a stale view: {failures:?}"
    );
    let homes = (0..INSTANCES)
        .filter(|i| c.log(*i).contains(": bot "))
        .count();
    assert!(
        homes >= 2,
        "games ran in {homes} instance(s) after the others joined"
    );
}

/// An instance alone keeps its waiting bots out of the table; its house
/// bots take them from its list instead (under their deal lock), so a lone
/// REST bot plays the house bots.
#[test]
fn a_lone_instance_pairs_its_house_bots_with_bots_in_its_list() {
    if !have_everything() {
        return;
    }
    let c = Cluster::start_with(1, "random");
    let stop = Arc::new(AtomicBool::new(false));
    let games = Arc::new(AtomicUsize::new(0));
    let handles = bots(&c.base, 1, "lone", &stop, &games);
    wait_games(&games, 3, 120);
    let counts = c.wait_counts(0);
    stop.store(true, Ordering::Relaxed);
    let seen: Vec<Seen> = handles
        .into_iter()
        .map(|h| h.join().expect("bot thread"))
        .collect();
    let rows = games_in(&c);
    assert_finished(&rows, seen.iter().flat_map(|s| &s.ended));
    let failures: Vec<&String> = seen.iter().flat_map(|s| &s.failures).collect();
    assert!(failures.is_empty(), "requests failed: {failures:?}");
    if c.log(0).contains("alone again after a late heartbeat") {
        eprintln!(
            "'alone' lapsed for a moment: pg: wait {:?}",
            counts.get("pg: wait")
        );
    } else {
        assert_eq!(
            counts.get("pg: wait"),
            None,
            "a row was written: {counts:?}"
        );
    }
    assert!(
        counts.get("pg: claim").is_some_and(|n| *n >= 3),
        "house bots took bots from the list under their deal lock: {counts:?}"
    );
}

/// Logs `name` in (registering it) on `base`: its session and id.
fn login(client: &reqwest::blocking::Client, base: &str, name: &str) -> (String, i64) {
    let creds = json!({"name": name, "password": "pw"});
    call(client, base, "register", creds.clone()).expect("register");
    let r = call(client, base, "login", creds).expect("login");
    match (r["session"].as_str(), r["id"].as_i64()) {
        (Some(s), Some(id)) => (s.to_string(), id),
        _ => panic!("login: {r}"),
    }
}

/// A bot waiting on an instance alone has no row in the waiting table;
/// when another instance comes, its poll writes one at once, and a bot of
/// the newcomer is dealt a game with it.
#[test]
fn a_bot_waiting_alone_waits_in_the_table_once_another_instance_comes() {
    if !have_everything() {
        return;
    }
    let mut c = Cluster::start_some(1);
    let client = reqwest::blocking::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client");
    let direct = |port: u16| format!("http://127.0.0.1:{port}");
    let (first, first_id) = login(&client, &direct(c.ports[0]), "early");
    let rows_of = |c: &Cluster| -> i64 {
        c.query(move |pool| -> Query<i64> {
            Box::pin(async move {
                sqlx::query_scalar("SELECT count(*) FROM hub_waiting WHERE bot = $1")
                    .bind(first_id)
                    .fetch_one(&pool)
                    .await
                    .expect("hub_waiting")
            })
        })
    };
    let poll = {
        let (client, base) = (client.clone(), direct(c.ports[0]));
        std::thread::spawn(move || call(&client, &base, "new-game", json!({"session": first})))
    };
    std::thread::sleep(Duration::from_secs(2));
    assert!(!poll.is_finished(), "the poll ended with nobody to play");
    assert_eq!(
        rows_of(&c),
        0,
        "the bot waits in the lone instance's list only"
    );
    c.start_instance(1);
    let start = Instant::now();
    while rows_of(&c) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "the waiting bot wrote no row after another instance came"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (second, _) = login(&client, &direct(c.ports[1]), "late");
    let dealt = call(
        &client,
        &direct(c.ports[1]),
        "new-game",
        json!({"session": second}),
    )
    .expect("the newcomer's new-game");
    let waited = poll
        .join()
        .expect("poll thread")
        .expect("the first bot's new-game");
    assert!(dealt["game"].is_i64(), "the newcomer's bot: {dealt}");
    assert_eq!(dealt["game"], waited["game"], "{dealt} / {waited}");
    assert_eq!(dealt["opponent"], json!(first_id), "{dealt}");
}

/// Issue 50: `croupier bot random --connect` clients behind the docs'
/// round-robin haproxy play on with no error while two instances serve
/// them, through a SIGKILL of one instance, and after its restart: each
/// retries what is safe to retry, reads the result of a game that ended
/// under it, and goes on to its next game.
#[test]
fn our_clients_play_on_through_a_kill_and_a_restart() {
    if !have_everything() {
        return;
    }
    let mut c = Cluster::start_some(2);
    let clients: Vec<(Killed, std::path::PathBuf)> = (0..8)
        .map(|i| {
            let log = c.dir.path().join(format!("client{i}.log"));
            let child = Command::new(env!("CARGO_BIN_EXE_croupier"))
                .args(["bot", "random", "--connect", &c.base])
                .args(["--name", &format!("client-{i}"), "--seed", &i.to_string()])
                .env("NO_COLOR", "1")
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).expect("client log"))
                .spawn()
                .expect("start a client");
            (Killed(child), log)
        })
        .collect();
    let games_of = |log: &Path| {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("game "))
            .count()
    };
    let all_playing = |clients: &mut Vec<(Killed, std::path::PathBuf)>, what: &str| {
        for (child, log) in clients.iter_mut() {
            let exited = child.0.try_wait().expect("client status");
            assert!(
                exited.is_none(),
                "{what}: a client stopped ({exited:?}): {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
    };
    let wait_each = |clients: &Vec<(Killed, std::path::PathBuf)>, at_least: &[usize]| {
        let start = Instant::now();
        while clients
            .iter()
            .zip(at_least)
            .any(|((_, log), n)| games_of(log) < *n)
        {
            if start.elapsed() > Duration::from_secs(120) {
                let tails: Vec<String> = clients
                    .iter()
                    .map(|(_, log)| {
                        let text = std::fs::read_to_string(log).unwrap_or_default();
                        let lines: Vec<&str> = text.lines().collect();
                        lines[lines.len().saturating_sub(6)..].join("\n")
                    })
                    .collect();
                panic!(
                    "clients stalled; their last lines:\n{}",
                    tails.join("\n--\n")
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let mut clients = clients;
    // Round robin, no instance killed: a few games each.
    wait_each(&clients, &[3; 8]);
    all_playing(&mut clients, "with both instances up");
    // Reads never go back in time: no client was shown an older state of
    // its game than one it had seen, whichever instance answered.
    for (_, log) in &clients {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        assert!(
            !text.contains("status is behind"),
            "a status went back in time with both instances up:\n{text}"
        );
    }
    // One instance killed under play, then started again.
    drop(c.instances[1].take().expect("instance two")); // SIGKILL
    std::thread::sleep(Duration::from_secs(3));
    all_playing(&mut clients, "after the kill");
    c.start_instance(1);
    let now: Vec<usize> = clients.iter().map(|(_, log)| games_of(log) + 3).collect();
    wait_each(&clients, &now);
    all_playing(&mut clients, "after the restart");
    let mut retried = 0;
    for (_, log) in &clients {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        assert!(!text.lines().any(|l| l.starts_with("error")), "{text}");
        retried +=
            usize::from(text.contains("trying again") || text.contains("whether it was taken"));
    }
    eprintln!("{retried} of 8 clients met the kill and went on");
}
