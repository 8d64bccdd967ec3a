//! The validation match of a new version (the compile/start gate): one
//! match against a house bot playing at random. The version becomes active
//! only if it plays the whole match without a fault; otherwise its owner
//! gets the fault and the tail of its stderr.

use std::sync::Arc;
use std::time::Duration;

use croupier_arena::live::{play_live, LiveConfig, LiveSeat};
use croupier_arena::record::MatchError;
use croupier_arena::spec::remote_seat;
use croupier_arena::transport::Link;
use croupier_bots::{Builtins, UnknownBot};
use croupier_dialects::{DialectKind, UnknownDialect};
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::record::parse_variant;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Fault, GameKind, SeatInfo, SetupError, UnknownGame};
use croupier_store::hosted::{BotVersion, ACTIVE, FAILED};
use croupier_store::BotInfo;

use super::run::HostedConnector;
use super::{lock, Hosted, HostedError};
use croupier_live::visibility::NoEntropy;

/// The house strategy a new version meets.
const OPPONENT: &str = "random";

/// Why a version failed its validation (stored as the version's reason,
/// shown to its owner).
#[derive(Debug, thiserror::Error)]
pub enum ValidationError {
    /// Its files cannot be unpacked, or its runtime cannot run here.
    #[error(transparent)]
    Start(#[from] HostedError),
    /// The bot plays a game Croupier does not know.
    #[error(transparent)]
    Game(#[from] UnknownGame),
    /// The version names a dialect Croupier does not speak.
    #[error(transparent)]
    Dialect(#[from] UnknownDialect),
    /// The standard variant does not set up (a bug).
    #[error(transparent)]
    Variant(#[from] SetupError),
    /// The house opponent does not exist (a bug).
    #[error(transparent)]
    House(#[from] UnknownBot),
    /// No seed could be drawn.
    #[error(transparent)]
    Seed(#[from] NoEntropy),
    /// The runner could not play the match.
    #[error("the validation match could not be played: {0}")]
    Match(#[from] MatchError),
    /// The version faulted in the match.
    #[error("the validation match against house-{opp} failed: {}: {}", .0.kind, .0.detail, opp = OPPONENT)]
    Fault(Fault),
}

impl Hosted {
    /// Plays version `v`'s validation match and records the verdict.
    pub async fn validate(self: Arc<Self>, bot: BotInfo, v: BotVersion) {
        let runnable = match self.command(&v) {
            Ok(argv) => self.runnable(argv).await,
            Err(e) => Err(e),
        };
        let (verdict, stderr, argv) = match runnable {
            Err(e) => (Err(ValidationError::from(e)), String::new(), Vec::new()),
            Ok(argv) => {
                let (verdict, stderr) = self.validation_match(&bot, &v, argv.clone()).await;
                (verdict, stderr, argv)
            }
        };
        let reason = verdict.as_ref().err().map(ToString::to_string);
        let status = if verdict.is_ok() { ACTIVE } else { FAILED };
        let reason = reason.as_deref();
        tracing::info!(
            "hosted bot {} version {}: {status}{}",
            bot.name,
            v.version,
            reason.map(|r| format!(" ({r})")).unwrap_or_default()
        );
        let stored = self
            .store
            .set_version_status(v.id, status, reason, Some(&stderr))
            .await;
        match stored {
            Err(e) => tracing::warn!("hosted bot {}: cannot store its validation: {e}", bot.name),
            Ok(()) if verdict.is_ok() => self.activate(v, argv),
            Ok(()) => {}
        }
    }

    async fn validation_match(
        &self,
        bot: &BotInfo,
        v: &BotVersion,
        argv: Vec<String>,
    ) -> (Result<(), ValidationError>, String) {
        let conn = HostedConnector::new(argv, self.config.sandbox.clone(), self.config.ladder_cpus);
        let log = Arc::clone(&conn.log);
        let link = Link::Custom(Arc::new(conn));
        let verdict = match bot.game.parse::<GameKind>() {
            Err(e) => Err(e.into()),
            Ok(game) => {
                let live = LiveConfig {
                    move_time: self
                        .config
                        .move_time
                        .get(&game)
                        .copied()
                        .unwrap_or(Duration::from_secs(10)),
                    ..LiveConfig::default()
                };
                match game {
                    GameKind::Goofspiel => one::<Goofspiel>(bot, v, link, &live).await,
                    GameKind::LoveLetter => one::<LoveLetter>(bot, v, link, &live).await,
                    GameKind::SkullWhist => one::<SkullWhist>(bot, v, link, &live).await,
                }
            }
        };
        let stderr = lock(&log).text();
        (verdict, stderr)
    }
}

/// One match of `G`, the new version in seat 0: `Err` says why it failed.
async fn one<G: Builtins>(
    bot: &BotInfo,
    v: &BotVersion,
    link: Link,
    live: &LiveConfig,
) -> Result<(), ValidationError> {
    let dialect: DialectKind = v.dialect.parse()?;
    let variant = parse_variant::<G>(None)?;
    let house = G::builtin(OPPONENT)?;
    let mut seats: Vec<LiveSeat<G>> = vec![
        remote_seat::<G>(SeatInfo::named(bot.name.clone()), link, dialect),
        LiveSeat::builtin(SeatInfo::named(format!("house-{OPPONENT}")), house),
    ];
    let seed = croupier_live::visibility::fresh_seed()?;
    let record = play_live::<G>(&variant, seed, &mut seats, live).await?;
    match record
        .steps
        .iter()
        .filter(|s| s.seat.index() == 0)
        .find_map(|s| s.fault.as_ref())
    {
        Some(f) => Err(ValidationError::Fault(f.clone())),
        None => Ok(()),
    }
}
