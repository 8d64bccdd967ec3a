//! `croupier bot STRATEGY --serve ADDR`: a built-in strategy as an HTTP bot
//! server, in the `jujitsu` dialect (seed 002 documents, Goofspiel) or the
//! `croupier` dialect (croupier/1 messages POSTed one by one, any game).

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt as _;
use axum::Router;
use base64::Engine as _;
use croupier_arena::bot_side::{jujitsu_bid, CroupierBot, Handled};
use croupier_bots::{bot_rng, BotRng, Builtins, Strategy};
use croupier_dialects::DialectKind;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Game, GameKind};

use crate::error::CliError;

/// Matches remembered at once (the oldest is dropped beyond this).
const MAX_MATCHES: usize = 1024;

/// A croupier/1 bot of some game.
trait Handler: Send {
    fn handle(&mut self, line: &str) -> anyhow::Result<Handled>;
}

impl<G: Game> Handler for CroupierBot<G> {
    fn handle(&mut self, line: &str) -> anyhow::Result<Handled> {
        Ok(CroupierBot::handle(self, line)?)
    }
}

struct Served {
    strategy: String,
    dialect: DialectKind,
    game: Option<GameKind>,
    seed: u64,
    authorization: Option<String>,
    rng: Mutex<BotRng>,
    matches: Mutex<Matches>,
}

#[derive(Default)]
struct Matches {
    by_tag: HashMap<String, (u64, Box<dyn Handler>)>,
    started: u64,
}

/// Options of the bot server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Address to listen on (`127.0.0.1:8001`, `:8001`, `0.0.0.0:8001`).
    pub addr: String,
    /// Built-in strategy.
    pub strategy: String,
    /// `jujitsu` or `croupier`.
    pub dialect: DialectKind,
    /// The only game accepted, if set.
    pub game: Option<GameKind>,
    /// Seed of the strategy's random choices.
    pub seed: u64,
    /// Basic-auth credentials requests must carry (`USER:PASSWORD`).
    pub auth: Option<String>,
}

/// Serves until interrupted.
pub fn run(opts: ServeOptions) -> Result<ExitCode, CliError> {
    if !matches!(opts.dialect, DialectKind::Jujitsu | DialectKind::Croupier) {
        return Err(CliError::Usage(format!(
            "--serve speaks jujitsu or croupier, not {}",
            opts.dialect
        )));
    }
    check_strategy(&opts)?;
    let addr = if opts.addr.starts_with(':') {
        format!("127.0.0.1{}", opts.addr)
    } else {
        opts.addr.clone()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(e.into()))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| CliError::Usage(format!("cannot listen on {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| CliError::Failed(e.into()))?;
        let state = Arc::new(Served {
            strategy: opts.strategy.clone(),
            dialect: opts.dialect,
            game: opts.game,
            seed: opts.seed,
            authorization: opts.auth.as_ref().map(|a| {
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(a)
                )
            }),
            rng: Mutex::new(bot_rng(opts.seed)),
            matches: Mutex::new(Matches::default()),
        });
        let app = Router::new()
            .route("/", post(answer))
            .route("/{*path}", post(answer))
            .layer(axum::extract::DefaultBodyLimit::max(1024 * 1024))
            .with_state(state);
        println!(
            "{} bot '{}' listening on http://{local}/",
            opts.dialect, opts.strategy
        );
        let listener = listener.tap_io(|tcp| {
            // Answers go out at once, not after Nagle's 40 ms.
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| CliError::Failed(e.into()))
    })?;
    Ok(ExitCode::SUCCESS)
}

fn check_strategy(opts: &ServeOptions) -> Result<(), CliError> {
    let usage = |e: croupier_bots::UnknownBot| CliError::Usage(e.to_string());
    match (opts.dialect, opts.game) {
        (DialectKind::Jujitsu, Some(g)) if g != GameKind::Goofspiel => Err(CliError::Usage(
            "the jujitsu dialect plays goofspiel only".into(),
        )),
        (DialectKind::Jujitsu, _) | (_, Some(GameKind::Goofspiel)) => {
            Goofspiel::builtin(&opts.strategy).map(drop).map_err(usage)
        }
        (_, Some(GameKind::SkullWhist)) => {
            SkullWhist::builtin(&opts.strategy).map(drop).map_err(usage)
        }
        (_, Some(GameKind::LoveLetter)) => {
            LoveLetter::builtin(&opts.strategy).map(drop).map_err(usage)
        }
        // Any game: the strategy must exist for at least one.
        (_, None) => Goofspiel::builtin(&opts.strategy)
            .map(drop)
            .or_else(|_| SkullWhist::builtin(&opts.strategy).map(drop))
            .or_else(|_| LoveLetter::builtin(&opts.strategy).map(drop))
            .map_err(usage),
    }
}

fn text(status: StatusCode, body: impl Into<String>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.into(),
    )
        .into_response()
}

async fn answer(State(s): State<Arc<Served>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(expected) = &s.authorization {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if given != Some(expected.as_str()) {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Basic realm=\"bot\"")],
                "wrong or missing credentials\n",
            )
                .into_response();
        }
    }
    let Ok(body) = std::str::from_utf8(&body) else {
        return text(StatusCode::BAD_REQUEST, "the body is not UTF-8\n");
    };
    match s.dialect {
        DialectKind::Jujitsu => jujitsu(&s, body),
        DialectKind::Croupier
        | DialectKind::Gops
        | DialectKind::LoveLetter
        | DialectKind::LoveLetterPostman
        | DialectKind::SkullWhistRest => {
            let tag = headers
                .get("x-croupier-match")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            croupier(&s, &tag, body)
        }
    }
}

fn jujitsu(s: &Served, body: &str) -> Response {
    let ended = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("gameEnded").and_then(serde_json::Value::as_bool));
    if ended == Some(true) {
        return text(StatusCode::OK, "ok");
    }
    let mut strategy = match Goofspiel::builtin(&s.strategy) {
        Ok(st) => st,
        Err(e) => return text(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    let Ok(mut rng) = s.rng.lock() else {
        return text(StatusCode::INTERNAL_SERVER_ERROR, "poisoned");
    };
    match jujitsu_bid(strategy.as_mut(), body, &mut rng) {
        Ok(bid) => text(StatusCode::OK, bid.to_string()),
        Err(e) => text(StatusCode::BAD_REQUEST, format!("{e:#}\n")),
    }
}

fn new_handler(s: &Served, body: &str) -> anyhow::Result<Box<dyn Handler>> {
    let v: serde_json::Value = serde_json::from_str(body)?;
    let game: GameKind = v
        .get("game")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
        .parse()?;
    if s.game.is_some_and(|g| g != game) {
        anyhow::bail!("this bot does not play {game}");
    }
    let seed = s.seed ^ rand::random::<u64>();
    fn make<G: Builtins>(name: &str, seed: u64) -> anyhow::Result<Box<dyn Handler>> {
        let strategy: Box<dyn Strategy<G>> = G::builtin(name)?;
        Ok(Box::new(CroupierBot::new(strategy, seed)))
    }
    match game {
        GameKind::SkullWhist => make::<SkullWhist>(&s.strategy, seed),
        GameKind::LoveLetter => make::<LoveLetter>(&s.strategy, seed),
        GameKind::Goofspiel => make::<Goofspiel>(&s.strategy, seed),
    }
}

fn croupier(s: &Served, tag: &str, body: &str) -> Response {
    let Ok(mut m) = s.matches.lock() else {
        return text(StatusCode::INTERNAL_SERVER_ERROR, "poisoned");
    };
    let is_start = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .is_some_and(|v| v.get("type").and_then(serde_json::Value::as_str) == Some("start"));
    if is_start {
        let handler = match new_handler(s, body) {
            Ok(h) => h,
            Err(e) => return text(StatusCode::BAD_REQUEST, format!("{e:#}\n")),
        };
        if m.by_tag.len() >= MAX_MATCHES {
            // Forget the match started longest ago.
            if let Some(oldest) = m
                .by_tag
                .iter()
                .min_by_key(|(_, (n, _))| *n)
                .map(|(t, _)| t.clone())
            {
                m.by_tag.remove(&oldest);
            }
        }
        m.started += 1;
        let n = m.started;
        m.by_tag.insert(tag.to_string(), (n, handler));
    }
    let Some((_, handler)) = m.by_tag.get_mut(tag) else {
        return text(
            StatusCode::CONFLICT,
            "no match of this X-Croupier-Match has started\n",
        );
    };
    match handler.handle(body) {
        Ok(Handled::Quiet) => StatusCode::NO_CONTENT.into_response(),
        Ok(Handled::Answer(line)) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            line,
        )
            .into_response(),
        Ok(Handled::End) => {
            m.by_tag.remove(tag);
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => text(StatusCode::BAD_REQUEST, format!("{e:#}\n")),
    }
}
