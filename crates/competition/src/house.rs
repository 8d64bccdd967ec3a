//! House bots: built-in strategies inside the server that join matchmaking
//! like any bot, so a lone bot always finds an opponent (like the NPC bots of
//! the original event).

use std::sync::Arc;
use std::time::Duration;

use croupier_bots::{bot_rng, Builtins};
use croupier_rules::skullwhist::{SkullWhist, SkullWhistAction, SkullWhistVariant};
use croupier_rules::Seat;
use croupier_store::{BotId, StoreError};

use croupier_live::hub::{Hub, NewGame};

/// A strategy spec as part of a bot name: options become plain words
/// (`strong?think-ms=50` → `strong-think-ms-50`).
pub fn name_part(strategy: &str) -> String {
    strategy
        .split(['?', '&', '='])
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// Registers (or finds) the house bot `house-<strategy>` and returns its id.
pub async fn ensure_bot(hub: &Hub, strategy: &str) -> Result<BotId, StoreError> {
    let name = format!("house-{}", name_part(strategy));
    if let Some(row) = hub.store().bot_by_name(&name).await? {
        return Ok(row.id);
    }
    // House bots cannot log in: their "hash" is no valid PHC string.
    hub.store().create_bot(&name, "!house", true).await
}

/// Plays forever as `bot` with `strategy`, waiting `pause` between moves so
/// that games between house bots go at a watchable pace.
pub async fn run(hub: Arc<Hub>, bot: BotId, strategy: String, pause: Duration) {
    let Ok(mut s) = SkullWhist::builtin(&strategy) else {
        tracing::error!("unknown house strategy {strategy}");
        return;
    };
    let mut rng = bot_rng(bot as u64 ^ 0x4055E);
    hub.plays_inside(bot);
    loop {
        match hub.new_game(bot).await {
            Ok(NewGame::Game { .. }) => {}
            Ok(NewGame::Retry) => continue,
            Err(e) => {
                tracing::warn!("house bot {bot}: {}", e.0);
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        }
        s.new_game(Seat(0), &SkullWhistVariant {}, 2);
        while let Some((obs, legal)) = hub.observation(bot).await {
            if !obs.to_act || legal.is_empty() {
                tokio::time::sleep(pause.max(Duration::from_millis(5))).await;
                continue;
            }
            tokio::time::sleep(pause).await;
            // A searching strategy thinks for a while: off the async workers.
            let (back, action) = match tokio::task::spawn_blocking(move || {
                let a = s.act(&obs, &legal, &mut rng);
                ((s, rng), a)
            })
            .await
            {
                Ok(done) => done,
                Err(e) => {
                    tracing::error!("house bot {bot} failed to choose: {e}");
                    return;
                }
            };
            (s, rng) = back;
            let result = match action {
                SkullWhistAction::Bid(n) => hub.bid(bot, i64::from(n)).await,
                SkullWhistAction::Play(c) => hub.play(bot, &c.to_string()).await,
            };
            if let Err(e) = result {
                tracing::warn!("house bot {bot} refused: {}", e.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn options_make_plain_names() {
        assert_eq!(super::name_part("strong"), "strong");
        assert_eq!(
            super::name_part("strong?think-ms=50&threads=2"),
            "strong-think-ms-50-threads-2"
        );
    }
}
