//! What the store keeps, as its callers see it: the ids, the rows of bots,
//! owners and games, how a game ended, how a bot connects ([`BotKind`]).

use serde::Serialize;

/// A bot's id.
pub type BotId = i64;
/// An owner's id.
pub type OwnerId = i64;
/// A game's id.
pub type GameId = i64;

/// A registered bot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct BotRow {
    /// Id.
    pub id: BotId,
    /// Unique name.
    pub name: String,
    /// PHC-format password hash (argon2id).
    #[serde(skip)]
    pub password_hash: String,
    /// Whether this is a house bot.
    pub house: bool,
}

/// A stored game.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct GameRow {
    /// Id.
    pub id: GameId,
    /// Game name.
    pub game: String,
    /// `running`, `finished` or `aborted`.
    pub status: String,
    /// Seat 0's bot.
    pub bot1: BotId,
    /// Seat 1's bot.
    pub bot2: BotId,
    /// The deal's seed.
    pub seed: i64,
    /// Start time (RFC 3339).
    pub started: String,
    /// End time (RFC 3339).
    pub finished: Option<String>,
    /// Seat 0's score.
    pub score1: Option<i64>,
    /// Seat 1's score.
    pub score2: Option<i64>,
    /// The bot that forfeited, if any.
    pub forfeited_by: Option<BotId>,
    /// Why the game was aborted.
    pub reason: Option<String>,
    /// The game record (JSON), once finished.
    pub record: Option<String>,
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq)]
pub struct GameEnd {
    /// End time (RFC 3339).
    pub finished: String,
    /// Scores by seat (`None` where the game scores nobody, e.g. a
    /// SkullWhist forfeit).
    pub scores: Vec<Option<i64>>,
    /// Ranks by seat (1 = best; equal ranks are a tie).
    pub ranks: Vec<u8>,
    /// The bot that forfeited, if any.
    pub forfeited_by: Option<BotId>,
    /// The complete record (JSON).
    pub record: String,
    /// What the website reads of the record ([`crate::facts::GameFacts`],
    /// JSON); `None` leaves the pages to read the record.
    pub facts: Option<String>,
}

/// An owner of HTTP bots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct OwnerRow {
    /// Id.
    pub id: OwnerId,
    /// Unique name.
    pub name: String,
    /// PHC-format password hash (argon2id).
    #[serde(skip)]
    pub password_hash: String,
}

/// How a bot reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BotKind {
    /// A SkullWhist bot of the 2014 REST API.
    Rest,
    /// A built-in strategy inside the server.
    House,
    /// An HTTP server that Croupier calls.
    Push,
    /// A client of the `/v1` pull API.
    Pull,
    /// A program uploaded by its owner, run by the server in the sandbox
    /// (its versions are in [`hosted`]).
    Hosted,
}

impl BotKind {
    /// The kind's name in the database and the API.
    pub fn name(self) -> &'static str {
        match self {
            BotKind::Rest => "rest",
            BotKind::House => "house",
            BotKind::Push => "push",
            BotKind::Pull => "pull",
            BotKind::Hosted => "hosted",
        }
    }

    /// Reads a kind's name.
    pub fn parse(s: &str) -> Option<BotKind> {
        [
            BotKind::Rest,
            BotKind::House,
            BotKind::Push,
            BotKind::Pull,
            BotKind::Hosted,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }
}

/// A kind name in the database that no [`BotKind`] has.
#[derive(Debug, thiserror::Error)]
#[error("unknown bot kind {0:?} in the database")]
pub struct UnknownBotKind(String);

impl TryFrom<String> for BotKind {
    type Error = UnknownBotKind;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        BotKind::parse(&s).ok_or(UnknownBotKind(s))
    }
}

/// A new bot registered by an owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBot {
    /// Unique name.
    pub name: String,
    /// The game it plays.
    pub game: String,
    /// Push or pull.
    pub kind: BotKind,
    /// Its owner.
    pub owner: OwnerId,
    /// A push bot's URL.
    pub endpoint: Option<String>,
    /// Its dialect.
    pub dialect: String,
    /// Basic-auth user name Croupier sends to a push bot.
    pub auth_user: Option<String>,
    /// Basic-auth password Croupier sends to a push bot.
    pub auth_password: Option<String>,
    /// SHA-256 (hex) of a pull bot's bearer token.
    pub token_hash: Option<String>,
}

/// A bot as the ladder and the owner API see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct BotInfo {
    /// Id.
    pub id: BotId,
    /// Unique name.
    pub name: String,
    /// The game it plays.
    pub game: String,
    /// How it connects.
    #[sqlx(try_from = "String")]
    pub kind: BotKind,
    /// Its owner, if registered by one.
    pub owner: Option<OwnerId>,
    /// A push bot's URL.
    pub endpoint: Option<String>,
    /// Its dialect (push and pull bots).
    pub dialect: Option<String>,
    /// Basic-auth user name Croupier sends.
    pub auth_user: Option<String>,
    /// Basic-auth password Croupier sends.
    #[serde(skip)]
    pub auth_password: Option<String>,
    /// Consecutive faulty matches.
    pub strikes: i64,
    /// Paused until this time (unix seconds).
    pub paused_until: Option<i64>,
    /// Why it was paused.
    pub pause_reason: Option<String>,
    /// Whether its owner has it switched on.
    pub enabled: bool,
    /// Why it is banned (its own ban, or its owner's), if it is (issue 49):
    /// a banned bot gets no new games.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub banned: Option<String>,
}

/// Seconds since the epoch, the creation stamp of bots and owners.
pub(crate) fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    secs.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_kind_reads_back_and_an_unknown_one_is_an_error() {
        for kind in [
            BotKind::Rest,
            BotKind::House,
            BotKind::Push,
            BotKind::Pull,
            BotKind::Hosted,
        ] {
            assert_eq!(BotKind::try_from(kind.name().to_string()).ok(), Some(kind));
        }
        let err = BotKind::try_from("robot".to_string()).err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some("unknown bot kind \"robot\" in the database")
        );
    }
}
