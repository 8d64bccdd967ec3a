//! A bot's moves and reads in its game (`bid`, `play`, `status`, and what
//! a house bot observes): to its game's seat in this instance, else to the
//! game's home through the relay (`cluster`).

use std::sync::Arc;

use croupier_dialects::skullwhist_rest::{self as rest, Refusal};
use croupier_rules::skullwhist::{SkullWhistAction, SkullWhistObservation};
use croupier_store::BotId;

use super::state::Hub;

impl Hub {
    /// `bid`.
    pub async fn bid(&self, bot: BotId, bid: i64) -> Result<(), Refusal> {
        let Some((game, i)) = self.current_seat(bot) else {
            return self.remote_line(bot, rest::bid_line(bid)).await;
        };
        game.request(i, rest::bid_line(bid)).await
    }

    /// `play`: plays a card; the game's record is stored before this returns
    /// when the card ends the game.
    pub async fn play(&self, bot: BotId, card: &str) -> Result<(), Refusal> {
        let card = rest::parse_card(card)?;
        let Some((game, i)) = self.current_seat(bot) else {
            return self.remote_line(bot, rest::play_line(card)).await;
        };
        game.request(i, rest::play_line(card)).await
    }

    /// `status`: the reply, as JSON text. Always the game's home's view
    /// (issue 50): a refusal if another instance's home did not answer.
    pub async fn status(&self, bot: BotId) -> Result<Arc<str>, Refusal> {
        let status = match self.current_seat(bot) {
            Some((game, i)) => game.status(i).await,
            None => self.remote_status(bot).await?,
        };
        Ok(status.unwrap_or_else(|| Arc::clone(&self.not_in_game)))
    }

    /// What a bot sees of its game and may do (for house bots, once marked
    /// with [`Hub::plays_inside`]).
    pub async fn observation(
        &self,
        bot: BotId,
    ) -> Option<(SkullWhistObservation, Vec<SkullWhistAction>)> {
        let (game, i) = self.current_seat(bot)?;
        let v = game.seats[i].view();
        if v.over {
            return None;
        }
        v.observation.clone()
    }
}
