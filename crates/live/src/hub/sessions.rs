//! Sessions: a login starts one (replacing the bot's old one and forfeiting
//! the game it was playing, at once); every request marks its session used;
//! idle sessions expire (the sweep, every 100 ms).

use std::time::Duration;

use croupier_store::BotId;
use tokio::time::Instant;

use croupier_dialects::skullwhist_rest::Refusal;

use super::game::LiveGame;
use super::state::{refuse, Hub, Session};

/// Forfeits `bot`'s seat in `game` (a login replaced its session): the
/// runner rules the abandoned seat at once, whoever's turn it is; returns
/// once the forfeited game is stored.
pub(super) async fn forfeit(game: &LiveGame, bot: BotId) {
    if let Some(i) = game.seat_of(bot) {
        game.seats[i].abandon().await;
    }
    game.wait_stored().await;
}

impl Hub {
    /// Starts a session for `bot`, replacing its old one; a game it was
    /// playing is forfeited.
    pub async fn login(&self, bot: BotId, token: String) -> Result<(), Refusal> {
        if let Some(relay) = self.relay.get() {
            return self.cluster_login(relay, bot, &token).await;
        }
        let game = {
            let mut inner = self.lock();
            if let Some(old) = inner.session_of.insert(bot, token.clone()) {
                inner.sessions.remove(&old);
            }
            inner.sessions.insert(
                token,
                Session {
                    bot,
                    last_seen: Instant::now(),
                },
            );
            inner.waiting.retain(|w| w.bot != bot);
            inner
                .game_of
                .get(&bot)
                .and_then(|g| inner.games.get(g))
                .cloned()
        };
        if let Some(game) = game {
            forfeit(&game, bot).await;
        }
        Ok(())
    }

    /// Ends idle sessions. Called periodically; move clocks are the match
    /// runner's.
    pub async fn sweep(&self) {
        self.expire_sessions();
    }

    /// The bot of a live session (and marks the session used).
    pub fn session_bot(&self, token: &str) -> Result<BotId, Refusal> {
        let mut inner = self.lock();
        let idle = self.config.session_idle;
        match inner.sessions.get_mut(token) {
            Some(s) if s.last_seen.elapsed() <= idle => {
                s.last_seen = Instant::now();
                Ok(s.bot)
            }
            Some(_) => {
                let bot = inner.sessions.remove(token).map(|s| s.bot);
                if let Some(bot) = bot {
                    inner.session_of.remove(&bot);
                }
                refuse("session expired: log in again")
            }
            None => refuse("unknown session: log in first"),
        }
    }

    /// Ends idle sessions (called by the sweep).
    pub(super) fn expire_sessions(&self) {
        // Expired sessions are kept an hour longer, so that a bot using one
        // is told it expired rather than that it is unknown; a waiting bot
        // whose session expired stops waiting at once.
        let idle = self.config.session_idle;
        let forget = idle + Duration::from_secs(3600);
        let mut inner = self.lock();
        let lapsed: Vec<BotId> = inner
            .sessions
            .values()
            .filter(|s| s.last_seen.elapsed() > idle)
            .map(|s| s.bot)
            .collect();
        inner.waiting.retain(|w| !lapsed.contains(&w.bot));
        let expired: Vec<String> = inner
            .sessions
            .iter()
            .filter(|(_, s)| s.last_seen.elapsed() > forget)
            .map(|(t, _)| t.clone())
            .collect();
        for t in expired {
            if let Some(s) = inner.sessions.remove(&t) {
                if inner.session_of.get(&s.bot) == Some(&t) {
                    inner.session_of.remove(&s.bot);
                }
            }
        }
    }
}
