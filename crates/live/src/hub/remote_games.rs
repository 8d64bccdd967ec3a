//! What this instance knows of the REST games other instances run, from
//! their notifications ([`Notice`]): where a game runs and which bot sits
//! in which seat (facts that never change while the game runs), so that a
//! bot's `bid`, `play` and `status` are relayed to the game's home without
//! reading the rows first. A stale entry is answered "gone" by the home,
//! and the rows are read.
//!
//! Nothing a bot reads is answered from here (issue 50): a `status`
//! answered from a copy of another instance's views could be older than
//! what the bot was already shown by the home, so every `status` is the
//! home's answer (`cluster`). A view notice (sent with the seats of a game
//! written after its deal, see `views`) only says whether the game is over
//! for a seat; a lost listener connection empties the cache, and a view or
//! end notice that does not parse forgets its game.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use croupier_store::postgres::cluster::Notice;
use croupier_store::{BotId, GameId};
use tokio::time::Instant;

/// Entries not touched for this long are dropped (their game's end was
/// not heard: a lost notification).
const FORGET_AFTER: Duration = Duration::from_secs(600);

/// Where a bot plays, as the cache knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Placed {
    pub(super) game: GameId,
    pub(super) seat: usize,
    pub(super) home: i64,
}

/// A seat's view as far as this cache keeps it: whether the game is over
/// for the seat.
#[derive(Debug)]
struct View {
    over: bool,
}

#[derive(Debug)]
struct Entry {
    home: i64,
    bots: Vec<BotId>,
    version: u64,
    views: Vec<View>,
    /// When the views were last sent (or the game dealt).
    at: Instant,
}

#[derive(Debug, Default)]
struct Games {
    games: HashMap<GameId, Entry>,
    game_of: HashMap<BotId, GameId>,
    dealt: u64,
}

/// The other instances' games (see the module's documentation).
#[derive(Debug, Default)]
pub(in crate::hub) struct RemoteGames {
    games: Mutex<Games>,
    /// Woken by every game's end (any home's).
    ended: tokio::sync::Notify,
}

impl RemoteGames {
    fn lock(&self) -> MutexGuard<'_, Games> {
        self.games.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a notice; `me` is this instance (its own games are not kept:
    /// it answers for them itself).
    pub(super) fn take(&self, notice: Notice, me: i64) {
        let mut g = self.lock();
        match notice {
            Notice::Dealt { game, home, bots } => {
                if home == me {
                    // This instance's own game: its bots are looked up
                    // here no more (an older game of theirs that ended
                    // unheard would place them there).
                    for b in &bots {
                        g.game_of.remove(b);
                    }
                    return;
                }
                for b in &bots {
                    g.game_of.insert(*b, game);
                }
                g.games.insert(
                    game,
                    Entry {
                        home,
                        bots,
                        version: 0,
                        views: Vec::new(),
                        at: Instant::now(),
                    },
                );
                g.dealt += 1;
                if g.dealt.is_multiple_of(1024) {
                    g.prune(FORGET_AFTER);
                }
            }
            Notice::Views {
                game,
                version,
                views,
            } => {
                let Some(e) = g.games.get_mut(&game) else {
                    return;
                };
                if version <= e.version {
                    return;
                }
                e.version = version;
                e.at = Instant::now();
                e.views = if views.len() == e.bots.len() {
                    views
                        .into_iter()
                        .map(|(_, _, over)| View { over })
                        .collect()
                } else {
                    // Not sent whole.
                    Vec::new()
                };
            }
            Notice::Ended { game } => {
                g.remove(game);
                drop(g);
                self.ended.notify_waiters();
            }
        }
    }

    /// Wakes at the next end of a game heard.
    pub(super) fn ended(&self) -> &tokio::sync::Notify {
        &self.ended
    }

    /// Forgets a game (its home said it is gone).
    pub(super) fn forget(&self, game: GameId) {
        self.lock().remove(game);
    }

    /// Whether `game` is kept here.
    pub(super) fn knows(&self, game: GameId) -> bool {
        self.lock().games.contains_key(&game)
    }

    /// Where `bot` plays, if the cache knows it.
    pub(super) fn placed(&self, bot: BotId) -> Option<Placed> {
        let g = self.lock();
        let (game, e, seat) = g.seat_of(bot)?;
        if e.views.get(seat).is_some_and(|v| v.over) {
            return None;
        }
        Some(Placed {
            game,
            seat,
            home: e.home,
        })
    }

    /// Forgets every game: notifications were lost (the listener's
    /// connection), so what was heard of them may be stale. Games dealt
    /// from now on are kept again.
    pub(super) fn clear(&self) {
        let mut g = self.lock();
        g.games.clear();
        g.game_of.clear();
    }

    /// How many games are kept (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().games.len()
    }
}

impl Games {
    /// `bot`'s game, its entry and the bot's seat, if kept.
    fn seat_of(&self, bot: BotId) -> Option<(GameId, &Entry, usize)> {
        let game = *self.game_of.get(&bot)?;
        let e = self.games.get(&game)?;
        let seat = e.bots.iter().position(|b| *b == bot)?;
        Some((game, e, seat))
    }

    fn remove(&mut self, game: GameId) {
        if let Some(e) = self.games.remove(&game) {
            for b in e.bots {
                if self.game_of.get(&b) == Some(&game) {
                    self.game_of.remove(&b);
                }
            }
        }
    }

    fn prune(&mut self, older: Duration) {
        let old: Vec<GameId> = self
            .games
            .iter()
            .filter(|(_, e)| e.at.elapsed() >= older)
            .map(|(id, _)| *id)
            .collect();
        for id in old {
            self.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_dialects::skullwhist_rest::Status;

    fn status(game: i64, opponent: i64, your_turn: bool) -> String {
        Status {
            game: Some(game),
            your_turn: Some(your_turn),
            opponent: Some(opponent),
            ..Status::default()
        }
        .reply()
        .to_string()
    }

    fn dealt(game: GameId, home: i64, bots: [BotId; 2]) -> Notice {
        Notice::Dealt {
            game,
            home,
            bots: bots.to_vec(),
        }
    }

    fn views(game: GameId, version: u64, v: [(String, bool, bool); 2]) -> Notice {
        Notice::Views {
            game,
            version,
            views: v.to_vec(),
        }
    }

    #[test]
    fn each_bot_is_placed_in_its_own_seat() {
        let c = RemoteGames::default();
        c.take(dealt(7, 2, [10, 20]), 1);
        assert_eq!(
            c.placed(10),
            Some(Placed {
                game: 7,
                seat: 0,
                home: 2
            })
        );
        assert_eq!(
            c.placed(20),
            Some(Placed {
                game: 7,
                seat: 1,
                home: 2
            })
        );
        // A bot in no game known here is not placed.
        assert_eq!(c.placed(30), None);
    }

    #[test]
    fn a_seat_whose_game_is_over_is_not_placed_and_older_views_are_ignored() {
        let c = RemoteGames::default();
        c.take(dealt(7, 2, [10, 20]), 1);
        let running = (status(7, 20, false), true, false);
        let over = (status(7, 20, false), true, true);
        c.take(views(7, 5, [over.clone(), running.clone()]), 1);
        assert_eq!(c.placed(10), None, "over for seat 0");
        assert!(c.placed(20).is_some());
        // An older notice arriving late changes nothing.
        c.take(views(7, 4, [running.clone(), running]), 1);
        assert_eq!(c.placed(10), None, "an older view replaced a newer one");
        // Views too long to send: the game stays placed.
        c.take(views7_empty(6), 1);
        assert!(c.placed(10).is_some());
        assert!(c.knows(7));
        c.take(Notice::Ended { game: 7 }, 1);
        assert_eq!(c.placed(10), None);
        assert!(!c.knows(7));
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn a_lost_listener_forgets_every_game() {
        let c = RemoteGames::default();
        c.take(dealt(7, 2, [10, 20]), 1);
        c.take(dealt(8, 3, [30, 40]), 1);
        c.clear();
        assert_eq!(c.placed(10), None);
        assert_eq!(c.placed(40), None);
        assert_eq!(c.len(), 0);
    }

    fn views7_empty(version: u64) -> Notice {
        Notice::Views {
            game: 7,
            version,
            views: Vec::new(),
        }
    }

    #[test]
    fn a_new_game_replaces_the_old_one_and_own_games_are_not_kept() {
        let c = RemoteGames::default();
        c.take(dealt(7, 2, [10, 20]), 1);
        c.take(dealt(9, 3, [10, 30]), 1);
        assert_eq!(c.placed(10).map(|p| (p.game, p.home)), Some((9, 3)));
        // The end of the old game does not forget the bot's new one.
        c.take(Notice::Ended { game: 7 }, 1);
        assert_eq!(c.placed(10).map(|p| p.game), Some(9));
        assert_eq!(c.placed(20), None);
        // This instance's own games are answered by the games themselves.
        c.take(dealt(11, 1, [40, 50]), 1);
        assert_eq!(c.placed(40), None);
        // A bot dealt one of them is no longer placed in its older game
        // elsewhere (whose end this instance may not have heard).
        c.take(dealt(12, 1, [20, 30]), 1);
        assert_eq!(c.placed(30), None, "placed in the game it left");
        c.forget(9);
        assert_eq!(c.placed(10), None);
    }

    #[test]
    fn notices_round_trip_through_their_payloads() {
        for n in [
            dealt(7, 2, [10, 20]),
            views(
                7,
                3,
                [
                    (status(7, 20, true), true, false),
                    (status(7, 10, false), false, true),
                ],
            ),
            views7_empty(4),
            Notice::Ended { game: 7 },
        ] {
            let p = n.payload();
            let (kind, rest) = p.split_once(' ').unwrap_or((&p, ""));
            assert_eq!(Notice::parse(kind, rest), Some(n));
        }
        assert_eq!(Notice::parse("d", "x 1 2"), None);
        assert_eq!(Notice::parse("q", "1"), None);
    }
}
