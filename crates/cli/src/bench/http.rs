//! `croupier bench http`: what calling HTTP bots costs. Plays Psychological
//! Jujitsu matches (13 cards) against a bot server on loopback and prints
//! JSON lines:
//!
//! * `in_process_decision_us`: both seats built-in (the baseline);
//! * `push_decision_us`: one seat a keep-alive HTTP bot server answering at
//!   once (TCP_NODELAY on both sides), per decision, with p50/p99;
//! * `nagle_*`: a bot server that writes its headers and its body in two
//!   writes, without and with TCP_NODELAY on its socket: the first waits
//!   for the client's delayed ACK on every move (Nagle's algorithm).

use std::sync::Arc;
use std::time::{Duration, Instant};

use croupier_arena::live::{play_live, LiveConfig, LiveSeat};
use croupier_arena::spec::remote_seat;
use croupier_arena::transport::http::{HttpClient, HttpEndpoint, HttpLimits};
use croupier_arena::transport::Link;
use croupier_bots::{bot_rng, Builtins};
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use croupier_rules::{Record, SeatInfo};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::bench::proc::percentile;
use crate::error::CliError;

fn failed(e: impl std::fmt::Display) -> CliError {
    CliError::Failed(anyhow::anyhow!("{e}"))
}

/// A minimal keep-alive HTTP/1.1 jujitsu bot: reads a request, answers the
/// planner's bid. `split` writes headers and body separately; `nodelay`
/// sets TCP_NODELAY on the accepted socket.
async fn bot_server(split: bool, nodelay: bool) -> Result<String, CliError> {
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(failed)?;
    let addr = listener.local_addr().map_err(failed)?;
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let _ = sock.set_nodelay(nodelay);
            tokio::spawn(serve(sock, split));
        }
    });
    Ok(format!("http://{addr}/"))
}

async fn serve(mut sock: TcpStream, split: bool) {
    let mut rng = bot_rng(5);
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    loop {
        // Headers, then Content-Length bytes of body.
        let (head_end, length) = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..i]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                break (i + 4, length);
            }
            let mut chunk = [0u8; 8192];
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        while buf.len() < head_end + length {
            let mut chunk = [0u8; 8192];
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned();
        buf.drain(..head_end + length);
        // Documents carry the whole match: a fresh strategy per request, as
        // `croupier bot --serve` does.
        let answer = Goofspiel::builtin("planner")
            .map_err(|e| anyhow::anyhow!("{e}"))
            .and_then(|mut s| {
                Ok(croupier_arena::bot_side::jujitsu_bid(
                    s.as_mut(),
                    &body,
                    &mut rng,
                )?)
            })
            .map_or_else(|_| "ok".to_string(), |b| b.to_string());
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
            answer.len()
        );
        let written = if split {
            match sock.write_all(head.as_bytes()).await {
                Ok(()) => sock.write_all(answer.as_bytes()).await,
                Err(e) => Err(e),
            }
        } else {
            sock.write_all(format!("{head}{answer}").as_bytes()).await
        };
        if written.is_err() {
            return;
        }
    }
}

struct Run {
    decisions: Vec<f64>,
    elapsed: Duration,
    games: u64,
}

async fn play(url: Option<&str>, games: u64, http: &Arc<HttpClient>) -> Result<Run, CliError> {
    let variant = GoofspielVariant::jujitsu(vec![13]);
    let config = LiveConfig::default();
    let mut decisions = Vec::new();
    let start = Instant::now();
    for g in 0..games {
        let first: LiveSeat<Goofspiel> = match url {
            None => LiveSeat::builtin(
                SeatInfo::named("builtin:planner"),
                Goofspiel::builtin("planner").map_err(failed)?,
            ),
            Some(u) => remote_seat(
                SeatInfo::named(u),
                Link::Http(
                    Arc::clone(http),
                    HttpEndpoint::parse(u, None).map_err(failed)?,
                ),
                DialectKind::Jujitsu,
            ),
        };
        let second = LiveSeat::builtin(
            SeatInfo::named("builtin:random"),
            Goofspiel::builtin("random").map_err(failed)?,
        );
        let mut seats = vec![first, second];
        let record: Record = play_live(&variant, g, &mut seats, &config)
            .await
            .map_err(failed)?;
        if record.steps.iter().any(|s| s.fault.is_some()) {
            let f = record.steps.iter().find_map(|s| s.fault.as_ref());
            return Err(failed(format!("the benchmark bot faulted: {f:?}")));
        }
        decisions.extend(
            record
                .steps
                .iter()
                .filter(|s| s.seat.index() == 0)
                .filter_map(|s| s.ms),
        );
    }
    Ok(Run {
        decisions,
        elapsed: start.elapsed(),
        games,
    })
}

fn report(what: &str, run: &mut Run, baseline_us: Option<f64>) {
    run.decisions.sort_by(f64::total_cmp);
    let n = run.decisions.len().max(1) as f64;
    let mean_us = run.decisions.iter().sum::<f64>() / n * 1000.0;
    let round = |v: f64| (v * 10.0).round() / 10.0;
    let mut line = json!({
        "bench": "http",
        "what": what,
        "decision_us": round(mean_us),
        "p50_us": round(percentile(&run.decisions, 0.5) * 1000.0),
        "p99_us": round(percentile(&run.decisions, 0.99) * 1000.0),
        "games_per_sec": round(run.games as f64 / run.elapsed.as_secs_f64()),
        "decisions": run.decisions.len(),
    });
    if let Some(b) = baseline_us {
        line["overhead_us"] = json!(round(mean_us - b));
    }
    println!("{line}");
}

/// Runs the benchmark for about `seconds` per part.
pub fn run(seconds: f64) -> Result<(), CliError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(failed)?;
    rt.block_on(async {
        let http = Arc::new(HttpClient::new(HttpLimits::default()).map_err(failed)?);
        // Size the runs from a short trial so each part takes about `seconds`.
        let fast = bot_server(false, true).await?;
        let trial = play(Some(&fast), 5, &http).await?;
        let per_game = trial.elapsed.as_secs_f64() / 5.0;
        let games = ((seconds / per_game) as u64).clamp(10, 100_000);
        let mut base = play(None, games * 20, &http).await?;
        report("in_process_decision_us", &mut base, None);
        let base_us =
            base.decisions.iter().sum::<f64>() / base.decisions.len().max(1) as f64 * 1000.0;
        let mut push = play(Some(&fast), games, &http).await?;
        report("push_decision_us", &mut push, Some(base_us));
        // Nagle: a few games are enough to see 40 ms stalls.
        let nagle = bot_server(true, false).await?;
        let mut slow = play(Some(&nagle), 2, &http).await?;
        report(
            "nagle_split_writes_without_nodelay_us",
            &mut slow,
            Some(base_us),
        );
        let fixed = bot_server(true, true).await?;
        let mut quick = play(Some(&fixed), games.min(200), &http).await?;
        report(
            "nagle_split_writes_with_nodelay_us",
            &mut quick,
            Some(base_us),
        );
        Ok(())
    })
}
