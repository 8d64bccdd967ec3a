//! The game loop of `croupier bot <strategy> --connect`, and what it does
//! when the server fails under it (issue 50), as a bot author's program
//! should:
//!
//! - **Calls that are safe to repeat** (`register`, `login`, `new-game`,
//!   `status`, `old-game`) are made again while the server cannot be
//!   reached or a connection breaks, with a growing pause, for up to
//!   [`RETRY_FOR`]: behind a proxy, another instance answers the next one.
//!   `new-game` is safe: for a bot that has not bid, it answers the same
//!   game again.
//! - **Moves** (`bid`, `play`) are not repeated blindly: a move whose reply
//!   was lost may have been taken. The client asks `status`: if it is still
//!   this bot's turn in the same trick, the same card goes again; if not,
//!   the move was taken. A second reply of "not your turn", "already bid"
//!   or "not in your hand" to a move sent again also means the first one
//!   was taken.
//! - **A game that ended under the bot** (its instance died and the game
//!   was closed, or a move's reply says "see old-game") is not an error:
//!   the client reads its result with `old-game` (waiting while it says
//!   the game is not over yet) and goes on to its next game.
//! - **A session the server forgot** ("unknown session", "session
//!   expired") is logged in again.
//! - **A status older than what the bot has seen** (an earlier trick, or
//!   its turn in a trick it has played: an instance answering from a copy
//!   that lags) is asked again, for up to [`STALE_FOR`], rather than taken
//!   for a contradiction.

use std::thread::sleep;
use std::time::{Duration, Instant};

use croupier_bots::{bot_rng, BotRng, Strategy};
use croupier_dialects::bot::skullwhist::{
    int_field, parse_cards, parse_status, required_int, GameView, Reply, ReplyError, Status, ME,
};
use croupier_rules::skullwhist::{Card, SkullWhist, SkullWhistAction, SkullWhistVariant, TRICKS};
use serde_json::{json, Map, Value};

use super::api::{parse_url, Api, RestOptions, RestSummary, POLL_INTERVAL, REPLY_TIMEOUT};
use crate::bot_side::error::{At as _, BotSideError};

/// How long a call that is safe to repeat is made again while the server
/// cannot be reached.
pub const RETRY_FOR: Duration = Duration::from_secs(60);
/// The first pause before a call is made again; it doubles up to
/// [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const MAX_PAUSE: Duration = Duration::from_secs(2);
/// How long a status that lags behind what the bot has seen is asked
/// again before it counts as a contradiction: longer than an instance
/// that died takes to be found lost and its games closed (its copies on
/// the other instances then stop answering for it).
pub const STALE_FOR: Duration = Duration::from_secs(30);
/// How long `old-game` is asked again while it says the game is not over
/// (an instance that died: the others close its games).
const RESULT_WAIT: Duration = Duration::from_secs(45);

/// Whether a failed call may go through if made again: the server could
/// not be reached, the connection broke, the reply did not come, or a
/// proxy in front answered that its instance did not (HTTP 502, 503, 504).
fn transient(e: &BotSideError) -> bool {
    match e {
        BotSideError::Unreachable(_) | BotSideError::Io(_) => true,
        BotSideError::Reply(ReplyError::Status { status, .. }) => {
            matches!(status, 502..=504)
        }
        BotSideError::Http(e) => e.is_connect() || e.is_timeout() || e.is_request() || e.is_body(),
        BotSideError::At { source, .. } => transient(source),
        _ => false,
    }
}

/// Whether a refusal says the server could not answer now, and the same
/// call may go through if made again ("the game's server did not answer:
/// try again", "internal error: try again": a server instance that died
/// under the game, a database that blinked).
fn busy(reason: &str) -> bool {
    reason.ends_with("try again")
}

/// Whether a refusal says the server does not know the session.
fn session_lost(reason: &str) -> bool {
    reason.starts_with("unknown session") || reason.starts_with("session expired")
}

/// Whether a move's refusal says its game is over.
fn game_gone(reason: &str) -> bool {
    reason.contains("see old-game") || reason == "you are not in a game"
}

/// Whether a refusal of a move sent again says the first one was taken.
fn already_taken(reason: &str) -> bool {
    reason == "you have already bid"
        || reason == "not your turn"
        || reason.ends_with("is not in your hand")
}

fn deliver(strategy: &mut dyn Strategy<SkullWhist>, view: &mut GameView) {
    for e in view.take_events() {
        strategy.notify(&e);
    }
}

/// What became of a move.
enum Moved {
    /// The server took it.
    Taken,
    /// The game is over (the move may have ended it).
    Ended,
}

/// A logged-in bot and its way of calling.
struct Client<'a, L: FnMut(&str)> {
    api: Api,
    opts: &'a RestOptions,
    session: String,
    me: i64,
    log: L,
}

impl<L: FnMut(&str)> Client<'_, L> {
    /// Calls `method`, again while the server cannot be reached or says
    /// to try again (up to [`RETRY_FOR`]). Only for calls that are safe to
    /// repeat.
    fn again(&mut self, method: &str, body: &Value) -> Result<Reply, BotSideError> {
        let start = Instant::now();
        let mut pause = FIRST_PAUSE;
        let mut told = false;
        loop {
            let why = match self.api.call(method, body) {
                Err(e) if transient(&e) => e.report(),
                Ok(Reply::Failure(r)) if busy(&r) => r,
                reply => {
                    if told && reply.is_ok() {
                        (self.log)(&format!("{method}: the server answers again"));
                    }
                    return reply;
                }
            };
            if start.elapsed() >= RETRY_FOR {
                return Err(BotSideError::Unreachable(format!(
                    "{method}: {why} (for {} s)",
                    RETRY_FOR.as_secs()
                )));
            }
            if !told {
                (self.log)(&format!(
                    "{method}: {why}; trying again for up to {} s",
                    RETRY_FOR.as_secs()
                ));
                told = true;
            }
            sleep(pause);
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }

    /// The body of a call of this session's, with `extra` fields.
    fn body(&self, extra: &[(&str, Value)]) -> Value {
        let mut body = json!({ "session": self.session });
        for (k, v) in extra {
            body[*k] = v.clone();
        }
        body
    }

    /// A call of this session's that is safe to repeat: made again while
    /// the server cannot be reached, and after logging in again if the
    /// server forgot the session.
    fn call(&mut self, method: &str, extra: &[(&str, Value)]) -> Result<Reply, BotSideError> {
        let reply = self.again(method, &self.body(extra))?;
        match reply {
            Reply::Failure(reason) if session_lost(&reason) => {
                (self.log)(&format!("{method}: {reason}; logging in again"));
                self.log_in(None)?;
                self.again(method, &self.body(extra))
            }
            reply => Ok(reply),
        }
    }

    /// `status`, whatever the server had to say before it answered.
    fn status(&mut self) -> Result<Status, BotSideError> {
        let start = Instant::now();
        loop {
            match self.call("status", &[])? {
                Reply::Success(fields) => return Ok(parse_status(&fields)?),
                Reply::Retry(_) if start.elapsed() < RETRY_FOR => sleep(POLL_INTERVAL),
                Reply::Failure(reason) | Reply::Retry(reason) => {
                    return Err(BotSideError::protocol(format!(
                        "the server refused status: {reason}"
                    )))
                }
            }
        }
    }

    /// Registers the bot (a refusal is fine: the name may be its own).
    fn register(&mut self) -> Result<Option<String>, BotSideError> {
        let credentials = json!({ "name": self.opts.name, "password": self.opts.password });
        match self.again("register", &credentials)? {
            Reply::Success(fields) => {
                let id = int_field(&fields, "id")?
                    .map_or_else(|| "with no id".to_string(), |id| format!("as bot {id}"));
                (self.log)(&format!("registered '{}' {id}", self.opts.name));
                Ok(None)
            }
            Reply::Failure(reason) | Reply::Retry(reason) => {
                (self.log)(&format!("register: {reason} (logging in anyway)"));
                Ok(Some(reason))
            }
        }
    }

    /// Logs in; a refusal ends the run (with why registering failed, if it
    /// did).
    fn log_in(&mut self, refused: Option<&str>) -> Result<(), BotSideError> {
        let credentials = json!({ "name": self.opts.name, "password": self.opts.password });
        let fields = match self.again("login", &credentials)? {
            Reply::Success(fields) => fields,
            Reply::Failure(reason) | Reply::Retry(reason) => {
                let also = refused
                    .map(|why| format!(" (registering it failed too: {why})"))
                    .unwrap_or_default();
                return Err(BotSideError::protocol(format!(
                    "cannot log in as '{}': {reason}{also}",
                    self.opts.name
                )));
            }
        };
        self.session = match fields.get("session") {
            Some(Value::String(s)) => s.clone(),
            _ => return Err(BotSideError::protocol("the login reply has no session")),
        };
        self.me = required_int(&fields, "id")?;
        (self.log)(&format!(
            "logged in as '{}' (bot {})",
            self.opts.name, self.me
        ));
        Ok(())
    }

    /// Joins a game: `new-game` until the server answers with one.
    fn new_game(&mut self) -> Result<Map<String, Value>, BotSideError> {
        loop {
            match self.call("new-game", &[])? {
                Reply::Success(fields) => return Ok(fields),
                Reply::Retry(_) => {}
                Reply::Failure(reason) => {
                    return Err(BotSideError::protocol(format!(
                        "the server refused new-game: {reason}"
                    )))
                }
            }
        }
    }

    /// Sends a move once (never blindly again: it may have been taken);
    /// `None` when its reply was lost.
    fn send_move(
        &mut self,
        method: &str,
        extra: &[(&str, Value)],
    ) -> Result<Option<Reply>, BotSideError> {
        match self.api.call(method, &self.body(extra)) {
            Ok(reply) => Ok(Some(reply)),
            Err(e) if transient(&e) => {
                (self.log)(&format!(
                    "{method}: {}; asking whether it was taken",
                    e.report()
                ));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Sends a move until the server has it (or the game is over). When a
    /// reply is lost, `lost` says whether the move was taken (`Some`) or
    /// must go again (`None`); a move sent again and refused as already
    /// made was taken the first time.
    fn make_move(
        &mut self,
        method: &str,
        extra: &[(&str, Value)],
        mut lost: impl FnMut(&mut Self) -> Result<Option<Moved>, BotSideError>,
    ) -> Result<Moved, BotSideError> {
        let start = Instant::now();
        let mut uncertain = false;
        let mut first = true;
        loop {
            // One deadline for every way round (retry answers, sessions
            // lost again, replies lost), after at least one try.
            if !first && start.elapsed() >= RETRY_FOR {
                return Err(BotSideError::Unreachable(format!(
                    "{method}: not taken within {} s",
                    RETRY_FOR.as_secs()
                )));
            }
            first = false;
            match self.send_move(method, extra)? {
                Some(Reply::Success(_)) => return Ok(Moved::Taken),
                Some(Reply::Failure(r)) if uncertain && already_taken(&r) => {
                    return Ok(Moved::Taken)
                }
                Some(Reply::Failure(r)) if game_gone(&r) => return Ok(Moved::Ended),
                Some(Reply::Failure(r)) if session_lost(&r) => self.log_in(None)?,
                // The server could not say whether the move was taken (its
                // game's instance did not answer): as a lost reply.
                Some(Reply::Failure(r)) if busy(&r) => {
                    (self.log)(&format!("{method}: {r}; asking whether it was taken"));
                    uncertain = true;
                    sleep(POLL_INTERVAL);
                    if let Some(moved) = lost(self)? {
                        return Ok(moved);
                    }
                }
                Some(Reply::Failure(r)) => {
                    return Err(BotSideError::protocol(format!(
                        "the server refused {method}: {r}"
                    )))
                }
                Some(Reply::Retry(_)) => sleep(POLL_INTERVAL),
                // Whether it was taken is asked even after the deadline.
                None => {
                    uncertain = true;
                    if let Some(moved) = lost(self)? {
                        return Ok(moved);
                    }
                }
            }
        }
    }

    /// Bids `bid` until the server has it (or the game is over): a bid
    /// sent again is refused if the first was taken.
    fn bid(&mut self, bid: u8) -> Result<Moved, BotSideError> {
        self.make_move("bid", &[("bid", json!(bid))], |_| {
            sleep(FIRST_PAUSE);
            Ok(None)
        })
    }

    /// Plays `card` in trick `round` of `game` until the server has it (or
    /// the game is over).
    fn play(&mut self, game: i64, round: u8, card: Card) -> Result<Moved, BotSideError> {
        self.make_move("play", &[("card", json!(card.to_string()))], |c| {
            let status = c.status()?;
            if status.game != Some(game) {
                return Ok(Some(Moved::Ended));
            }
            // Still this bot's turn in this trick: the card went nowhere
            // (or the status lags; then the server says so when it comes
            // again).
            Ok((!(status.your_turn && status.round == Some(round))).then_some(Moved::Taken))
        })
    }

    /// The result of `game`, once it is stored.
    fn result(&mut self, game: i64) -> Result<Result<Map<String, Value>, String>, BotSideError> {
        let start = Instant::now();
        loop {
            match self.call("old-game", &[("game", json!(game))])? {
                Reply::Success(record) => return Ok(Ok(record)),
                Reply::Failure(r) | Reply::Retry(r)
                    if r.ends_with("is not over") && start.elapsed() < RESULT_WAIT =>
                {
                    sleep(Duration::from_millis(500));
                }
                Reply::Failure(r) | Reply::Retry(r) => return Ok(Err(r)),
            }
        }
    }
}

/// Plays `strategy` through the REST API at `opts.url` as the bot
/// `opts.name`: registers it (a taken name is fine: it may be this bot's),
/// logs in, and plays `opts.games` games (or until an error). `log` gets one
/// line per game and a few about the session and the server's failures.
pub fn play_rest(
    mut strategy: Box<dyn Strategy<SkullWhist>>,
    opts: &RestOptions,
    log: impl FnMut(&str),
) -> Result<RestSummary, BotSideError> {
    let mut c = Client {
        api: Api::new(parse_url(&opts.url)?, REPLY_TIMEOUT)?,
        opts,
        session: String::new(),
        me: 0,
        log,
    };
    let refused = c.register()?;
    c.log_in(refused.as_deref())?;
    let mut rng = bot_rng(opts.seed);
    let mut summary = RestSummary::default();
    while opts.games.is_none_or(|n| summary.games < n) {
        let fields = c.new_game()?;
        let game = required_int(&fields, "game")?;
        let opponent = required_int(&fields, "opponent")?;
        let mut view = GameView::new(parse_cards(&fields)?);
        strategy.new_game(ME, &SkullWhistVariant {}, 2);
        deliver(strategy.as_mut(), &mut view);
        let bid = play_game(&mut c, strategy.as_mut(), &mut rng, game, &mut view)?;
        summary.games += 1;

        // The result, from the game's record.
        let head = format!(
            "game {game} against bot {opponent}: bid {bid}, opponent bid {}",
            view.opponent_bid()
                .map_or_else(|| "unknown".to_string(), |b| b.to_string())
        );
        match c.result(game)? {
            Ok(record) => {
                let result = view.finish(&record, c.me)?;
                summary.count(result);
                deliver(strategy.as_mut(), &mut view);
                (c.log)(&format!("{head}; {result}"));
            }
            Err(reason) => (c.log)(&format!("{head}; no result: {reason}")),
        }
    }
    Ok(summary)
}

/// Plays game `game` until `status` shows it over; returns the bid.
fn play_game<L: FnMut(&str)>(
    c: &mut Client<'_, L>,
    strategy: &mut dyn Strategy<SkullWhist>,
    rng: &mut BotRng,
    game: i64,
    view: &mut GameView,
) -> Result<u8, BotSideError> {
    let (obs, legal) = view.bid_turn();
    let bid = match strategy.act(&obs, &legal, rng) {
        SkullWhistAction::Bid(n) if (1..=TRICKS).contains(&n) => n,
        other => {
            return Err(BotSideError::protocol(format!(
                "the strategy answered '{other}' when asked for a bid"
            )))
        }
    };
    match c.bid(bid).at(|| format!("game {game}"))? {
        Moved::Ended => return Ok(bid),
        Moved::Taken => view.record_bid(bid),
    }
    let mut behind_since: Option<Instant> = None;
    loop {
        let status = c.status()?;
        if status.game != Some(game) {
            return Ok(bid);
        }
        if view.is_behind(&status) {
            if behind_since.is_none() {
                // Counted by the soak (scripts/soak-clients.sh): a server
                // whose reads go back in time shows here.
                (c.log)(&format!(
                    "game {game}: status is behind what this bot has seen; asking again"
                ));
            }
            let since = *behind_since.get_or_insert_with(Instant::now);
            if since.elapsed() < STALE_FOR {
                sleep(POLL_INTERVAL);
                continue;
            }
        }
        behind_since = None;
        view.update(&status)
            .at(|| format!("game {game}: the server's status disagrees"))?;
        if !status.your_turn {
            sleep(POLL_INTERVAL);
            continue;
        }
        deliver(strategy, view);
        let (obs, legal) = view.play_turn();
        let action = strategy.act(&obs, &legal, rng);
        let card = match action {
            SkullWhistAction::Play(c) if legal.contains(&action) => c,
            other => {
                return Err(BotSideError::protocol(format!(
                    "game {game}: the strategy answered '{other}', which is not legal in round {}",
                    obs.trick
                )))
            }
        };
        let round = view.round();
        match c
            .play(game, round, card)
            .at(|| format!("game {game}, round {}", obs.trick))?
        {
            Moved::Ended => return Ok(bid),
            Moved::Taken => view.record_play(card)?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_read_for_what_they_mean() {
        assert!(session_lost("unknown session: log in first"));
        assert!(session_lost("session expired: log in again"));
        assert!(!session_lost("not your turn"));
        assert!(game_gone(
            "game 7 ended before its server answered this move (the move may be the one that ended it): see old-game"
        ));
        assert!(game_gone("you are not in a game"));
        assert!(!game_gone("not your turn"));
        for taken in [
            "you have already bid",
            "not your turn",
            "AS is not in your hand",
        ] {
            assert!(already_taken(taken), "{taken}");
        }
        assert!(!already_taken("play begins when both players have bid"));
        assert!(busy("the game's server did not answer: try again"));
        assert!(busy("internal error: try again"));
        assert!(!busy("not your turn") && !busy("you are not in a game"));
    }

    #[test]
    fn broken_connections_are_transient_and_refusals_are_not() {
        let broken: Result<(), _> = Err(BotSideError::Unreachable("cannot connect".into()));
        assert!(transient(&broken.at(|| "POST /api/status/").unwrap_err()));
        let gateway = |status| {
            BotSideError::Reply(ReplyError::Status {
                method: "status".into(),
                status,
                snippet: "<html>".into(),
            })
        };
        assert!(transient(&gateway(502)) && transient(&gateway(504)));
        assert!(!transient(&gateway(500)) && !transient(&gateway(404)));
        assert!(!transient(&BotSideError::protocol(
            "the server refused status: x"
        )));
    }
}
