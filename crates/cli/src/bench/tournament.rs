//! `croupier bench tournament`: tournaments run on a real `croupier serve`
//! (a child process on a SQLite file), with push HTTP bots (`croupier bot
//! STRATEGY --serve`, several registered bots per bot server) and house
//! bots. Half-way through, the server is killed with SIGKILL and started
//! again on the same database; the tournament must resume and end with every
//! planned game finished exactly once. Prints the wall time, games per
//! second and the counts (`--json`: one object per tournament).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use serde::Serialize;
use serde_json::{json, Value};

use crate::bench::proc::Owned;
use crate::error::CliError;

/// One tournament to run.
#[derive(Debug, Clone)]
struct Spec {
    format: String,
    bots: usize,
    rounds: Option<i64>,
}

fn parse(spec: &str) -> Result<Spec, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "--tournament {spec}: write FORMAT:BOTS[:ROUNDS], e.g. swiss:16:7 or round-robin:12"
        ))
    };
    let mut parts = spec.split(':');
    let format = parts.next().ok_or_else(bad)?.to_string();
    let bots: usize = parts.next().and_then(|b| b.parse().ok()).ok_or_else(bad)?;
    let rounds = match parts.next() {
        Some(r) => Some(r.parse::<i64>().map_err(|_| bad())?),
        None => None,
    };
    if !(4..=64).contains(&bots) || !matches!(format.as_str(), "swiss" | "round-robin") {
        return Err(bad());
    }
    if format == "swiss" && rounds.is_none() {
        return Err(bad());
    }
    Ok(Spec {
        format,
        bots,
        rounds,
    })
}

/// What one run measured.
#[derive(Debug, Serialize)]
pub struct Figures {
    tournament: String,
    format: String,
    bots: usize,
    push_bots: usize,
    house_bots: usize,
    rounds: i64,
    planned_games: i64,
    done_at_kill: i64,
    games_finished: i64,
    games_aborted_by_kill: i64,
    repeated: i64,
    lost: i64,
    wall_secs: f64,
    down_secs: f64,
    games_per_sec: f64,
    status: String,
}

fn http() -> anyhow::Result<reqwest::blocking::Client> {
    Ok(reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?)
}

/// Starts a process and waits for the stdout/stderr line containing
/// `marker`, returning the URL that follows it.
fn start(mut cmd: Command, marker: &'static str, stderr: bool) -> anyhow::Result<(Owned, String)> {
    if stderr {
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    } else {
        cmd.stdout(Stdio::piped()).stderr(Stdio::null());
    }
    let mut child = cmd
        .env("NO_COLOR", "1")
        .spawn()
        .context("starting a process")?;
    let out: Box<dyn std::io::Read + Send> = if stderr {
        Box::new(child.stderr.take().ok_or_else(|| anyhow!("no stderr"))?)
    } else {
        Box::new(child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?)
    };
    let proc = Owned(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.split(marker).nth(1) {
                let url: String = rest
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != ',')
                    .collect();
                if let Some(tx) = tx.take() {
                    let _ = tx.send(url.trim_end_matches('/').to_string());
                }
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .map_err(|_| anyhow!("the process did not say where it listens"))?;
    Ok((proc, url))
}

fn serve(exe: &Path, dir: &Path) -> anyhow::Result<(Owned, String)> {
    let mut cmd = Command::new(exe);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--house-bots", ""])
        .args([
            "--sandbox",
            "off",
            "--allow-private-bot-urls",
            "--admin",
            "org",
        ])
        .arg("--ladder")
        .arg(dir.join("ladder.toml"))
        .arg("--database")
        .arg(format!("sqlite://{}", dir.join("db").display()));
    start(cmd, "serving SkullWhist on ", true)
}

fn post(
    c: &reqwest::blocking::Client,
    url: &str,
    auth: bool,
    body: Value,
) -> anyhow::Result<Value> {
    let mut req = c.post(url).json(&body);
    if auth {
        req = req.basic_auth("org", Some("organiser-pw"));
    }
    let resp = req.send()?;
    let status = resp.status();
    let v: Value = resp.json()?;
    if !status.is_success() {
        bail!("{url}: HTTP {status}: {v}");
    }
    Ok(v)
}

fn run_one(exe: &Path, spec: &Spec, n: usize) -> anyhow::Result<Figures> {
    let dir = tempfile::tempdir()?;
    let dir: PathBuf = dir.path().to_path_buf();
    // House bots: two; the rest are push bots on two bot servers.
    std::fs::write(
        dir.join("ladder.toml"),
        "tournament_share = 0.75\n[goofspiel]\nvariant = \"jujitsu\"\nmove_time = \"2s\"\nhouse = [\"random\", \"planner\"]\nhouse_games = false\n[loveletter]\nenabled = false\n[skullwhist]\nenabled = false\n",
    )?;
    let mut bot_servers = Vec::new();
    let mut urls = Vec::new();
    for strategy in ["random", "planner"] {
        let mut cmd = Command::new(exe);
        cmd.args([
            "bot",
            strategy,
            "--serve",
            "127.0.0.1:0",
            "--dialect",
            "croupier",
        ]);
        let (p, url) = start(cmd, "listening on ", false)?;
        bot_servers.push(p);
        urls.push(format!("{url}/"));
    }
    let (server, base) = serve(exe, &dir)?;
    let mut server = Some(server);
    let c = http()?;
    post(
        &c,
        &format!("{base}/v1/owners"),
        false,
        json!({"name": "org", "password": "organiser-pw"}),
    )?;
    let house = ["house-random-goofspiel", "house-planner-goofspiel"];
    let push = spec.bots - house.len();
    let mut entries: Vec<String> = house.iter().map(|s| s.to_string()).collect();
    for i in 0..push {
        let name = format!("push{i:02}");
        post(
            &c,
            &format!("{base}/v1/bots"),
            true,
            json!({"name": name, "game": "goofspiel", "kind": "push", "url": urls[i % urls.len()], "dialect": "croupier"}),
        )?;
        entries.push(name);
    }
    let name = format!("{}-{}-{n}", spec.format, spec.bots);
    let mut body = json!({
        "name": name, "game": "goofspiel", "variant": "jujitsu", "format": spec.format,
        "games_per_pairing": 1, "duplicate": true, "move_time_ms": 2000, "entries": entries,
    });
    if let Some(r) = spec.rounds {
        body["rounds"] = json!(r);
    }
    let started = Instant::now();
    post(&c, &format!("{base}/v1/tournaments"), true, body)?;
    let show = |base: &str| -> anyhow::Result<Value> {
        Ok(c.get(format!("{base}/v1/tournaments/{name}"))
            .send()?
            .json()?)
    };
    // Half-way (by the planned total), SIGKILL the server.
    let done_at_kill = loop {
        let v = show(&base)?;
        let (done, total) = (
            v["progress"]["done"].as_i64().unwrap_or(0),
            v["progress"]["total"].as_i64().unwrap_or(1),
        );
        if v["tournament"]["status"] != "running" && v["tournament"]["status"] != "scheduled" {
            bail!("the tournament ended before the kill: {}", v["tournament"]);
        }
        if done > 0 && done * 2 >= total {
            break done;
        }
        if started.elapsed() > Duration::from_secs(1800) {
            bail!("no progress: {done} of {total} games after 30 minutes");
        }
        // A small tournament of fast bots is over within 100 ms here (CI
        // once saw 18 games in 81 ms): a slower look can miss its middle.
        std::thread::sleep(Duration::from_millis(5));
    };
    let killed = Instant::now();
    // SIGKILL, not a drop (which stops it cleanly): the crash is the test.
    if let Some(mut crashed) = server.take() {
        crashed.crash()?;
    }
    let (server2, base) = serve(exe, &dir)?;
    let down = killed.elapsed();
    let _server2 = server2;
    let final_view = loop {
        let v = show(&base)?;
        let status = v["tournament"]["status"].as_str().unwrap_or("").to_string();
        if status == "finished" || status == "cancelled" {
            break v;
        }
        if started.elapsed() > Duration::from_secs(3600) {
            bail!("the tournament did not finish within an hour");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let wall = started.elapsed();
    let games = final_view["games"].as_array().cloned().unwrap_or_default();
    let planned = games.iter().filter(|g| g["status"] != "void").count() as i64;
    let done = games.iter().filter(|g| g["status"] == "done").count() as i64;
    // The stored games marked with the tournament, read from the database.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (finished, aborted, _running) = rt.block_on(async {
        let store = croupier_store::open(&format!("sqlite://{}", dir.join("db").display())).await?;
        let t = store
            .tournaments()
            .tournament_by_name(&name)
            .await?
            .ok_or_else(|| anyhow!("tournament not stored"))?;
        Ok::<_, anyhow::Error>(store.tournaments().tournament_game_counts(t.id).await?)
    })?;
    drop(bot_servers);
    Ok(Figures {
        tournament: name,
        format: spec.format.clone(),
        bots: spec.bots,
        push_bots: push,
        house_bots: house.len(),
        rounds: final_view["tournament"]["rounds"].as_i64().unwrap_or(0),
        planned_games: planned,
        done_at_kill,
        games_finished: finished,
        games_aborted_by_kill: aborted,
        repeated: finished - done,
        lost: planned - done,
        wall_secs: wall.as_secs_f64(),
        down_secs: down.as_secs_f64(),
        games_per_sec: finished as f64 / wall.as_secs_f64(),
        status: final_view["tournament"]["status"]
            .as_str()
            .unwrap_or("?")
            .into(),
    })
}

/// Runs `croupier bench tournament`.
pub fn run(specs: &[String], json: bool, exe: &Path) -> Result<(), CliError> {
    let specs: Vec<Spec> = if specs.is_empty() {
        vec![
            Spec {
                format: "swiss".into(),
                bots: 16,
                rounds: Some(7),
            },
            Spec {
                format: "round-robin".into(),
                bots: 12,
                rounds: None,
            },
        ]
    } else {
        specs.iter().map(|s| parse(s)).collect::<Result<_, _>>()?
    };
    if !json {
        println!("tournaments on croupier serve (Goofspiel jujitsu, 1 duplicate deal per pairing = 2 games; 2 house bots, the rest push HTTP bots), SIGKILL half-way and restart:");
    }
    for (n, spec) in specs.iter().enumerate() {
        let f = run_one(exe, spec, n).map_err(CliError::Failed)?;
        if json {
            println!(
                "{}",
                serde_json::to_string(&f).map_err(|e| CliError::Failed(e.into()))?
            );
        } else {
            println!(
                "{:<14} {:>2} bots ({} push, {} house), {} rounds: {} games in {:.1} s ({:.1} games/s, restart down {:.1} s); killed at {} done; after: {} finished, {} aborted by the kill, {} repeated, {} lost; {}",
                f.format, f.bots, f.push_bots, f.house_bots, f.rounds, f.planned_games, f.wall_secs, f.games_per_sec,
                f.down_secs, f.done_at_kill, f.games_finished, f.games_aborted_by_kill, f.repeated, f.lost, f.status
            );
        }
    }
    Ok(())
}
