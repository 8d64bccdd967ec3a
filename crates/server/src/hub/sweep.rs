//! The sweep, every 100 ms: a bot that stayed silent past the move timeout
//! (measured from when it became due, whatever else it requested
//! meanwhile) forfeits; idle sessions end.

use croupier_rules::{Fault, Seat};

use super::Hub;

impl Hub {
    /// Forfeits games whose due bot has been silent too long, and ends idle
    /// sessions. Called periodically.
    pub async fn sweep(&self) {
        let limit = self.config.move_timeout;
        let games: Vec<_> = self.lock().games.values().cloned().collect();
        let mut closings = Vec::new();
        for game in games {
            let mut g = game.lock().await;
            if g.over {
                continue;
            }
            let late = (0..2).find(|i| g.due[*i].is_some_and(|t| t.elapsed() > limit));
            if let Some(i) = late {
                let what = if g.engine.bids()[i].is_none() {
                    "bid"
                } else {
                    "play"
                };
                let fault = Fault {
                    kind: "timeout".into(),
                    detail: format!("no {what} within {} s of becoming due", limit.as_secs_f64()),
                };
                g.forfeit(Seat(i as u8), fault);
                closings.push(self.close(&mut g));
            }
        }
        // Stored together, in one group commit.
        futures::future::join_all(closings.into_iter().map(|c| self.closed(c))).await;
        self.expire_sessions();
    }
}
