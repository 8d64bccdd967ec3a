//! What this instance knows of the REST games other instances run, from
//! their notifications ([`Notice`]): where a game runs and which bot sits
//! in which seat (facts that never change while the game runs), and the
//! seats' latest views as their home sent them.
//!
//! Only what cannot mislead a bot is answered from here:
//! - a bot's seat and its game's home, for relaying its `bid`/`play` (a
//!   stale entry is answered "gone" by the home, and the rows are read);
//! - a `status` that leaves the bot nothing to do (it has bid, it is not
//!   its turn, the game is not over), at most [`PASSIVE_FRESH`] after the
//!   home sent it, at once;
//! - but not a view of the last trick that way: the game's end comes
//!   next, and a bot that heard of it from another instance (whose rows
//!   are gone) and went on to a new game must not read the old game here
//!   while the end's notice is still on its way (seen under load after an
//!   instance's restart);
//! - any other `status` once a fence has passed (`hub::fence`): every
//!   view and end committed before the request arrived has been heard by
//!   then, so the cache is as fresh as the rows, which the home writes
//!   (with the views' notice) before it answers a move: a bot never reads
//!   that it must act on a view older than its own last move. A fence is
//!   sent only if the cache has a view of the bot's seat: a game whose
//!   first views were not sent yet, or were too long to send, and a view
//!   that says the game is over, are read from the rows at once. A fence
//!   that fails is read from the rows too; a lost listener connection, or
//!   a fence that does not come back within a second, empties the cache,
//!   and a view or end notice that does not parse forgets its game.
//!
//! A view is kept for its own seat only: a status is looked up by the
//! bot's seat, never by the game alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use croupier_store::postgres::cluster::Notice;
use croupier_store::{BotId, GameId};
use tokio::time::Instant;

/// How long a view that leaves the bot nothing to do is answered from the
/// cache (a lost notification delays a bot at most this long).
pub(super) const PASSIVE_FRESH: Duration = Duration::from_millis(300);

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

#[derive(Debug)]
struct View {
    status: Arc<str>,
    has_bid: bool,
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

/// Whether a `status` reply says it is the bot's turn to play.
fn says_your_turn(status: &str) -> bool {
    status.contains("\"your-turn\":true")
}

/// Whether a `status` reply is of the game's last trick (its end is next).
fn says_last_trick(status: &str) -> bool {
    status.contains("\"round\":13")
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
                        .map(|(status, has_bid, over)| View {
                            status: Arc::from(status),
                            has_bid,
                            over,
                        })
                        .collect()
                } else {
                    // Not sent whole: nothing is answered from here.
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

    /// `bot`'s `status` if it leaves the bot nothing to do and was sent
    /// less than `fresh` ago.
    pub(super) fn passive_status(&self, bot: BotId, fresh: Duration) -> Option<Arc<str>> {
        let g = self.lock();
        let (_, e, seat) = g.seat_of(bot)?;
        if e.at.elapsed() >= fresh {
            return None;
        }
        let v = e.views.get(seat)?;
        let passive =
            v.has_bid && !v.over && !says_your_turn(&v.status) && !says_last_trick(&v.status);
        passive.then(|| Arc::clone(&v.status))
    }

    /// `bot`'s `status` as last heard, unless it says the game is over
    /// (that one is read from the rows, which wait for the bot's release).
    /// Current only once a fence has passed (see `hub::fence`): every
    /// view committed before it was heard.
    pub(super) fn heard_status(&self, bot: BotId) -> Option<Arc<str>> {
        let g = self.lock();
        let (_, e, seat) = g.seat_of(bot)?;
        let v = e.views.get(seat)?;
        (!v.over).then(|| Arc::clone(&v.status))
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

    const FRESH: Duration = Duration::from_secs(60);

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

    fn in_round(game: i64, opponent: i64, round: u8) -> String {
        Status {
            game: Some(game),
            round: Some(round),
            your_turn: Some(false),
            opponent: Some(opponent),
            ..Status::default()
        }
        .reply()
        .to_string()
    }

    #[test]
    fn the_status_detector_reads_the_replies_the_dialect_writes() {
        assert!(says_your_turn(&status(1, 2, true)));
        assert!(!says_your_turn(&status(1, 2, false)));
        assert!(says_last_trick(&in_round(1, 2, 13)));
        for round in [1, 3, 12] {
            assert!(!says_last_trick(&in_round(1, 2, round)));
        }
    }

    #[test]
    fn a_view_of_the_last_trick_is_read_from_the_rows() {
        let c = RemoteGames::default();
        c.take(dealt(7, 2, [10, 20]), 1);
        let view = |round| (in_round(7, 20, round), true, false);
        c.take(views(7, 1, [view(12), view(12)]), 1);
        assert_eq!(
            c.passive_status(10, FRESH).as_deref(),
            Some(in_round(7, 20, 12).as_str())
        );
        // The game ends next: a bot may have heard of its end elsewhere.
        c.take(views(7, 2, [view(13), view(13)]), 1);
        assert_eq!(c.passive_status(10, FRESH), None);
    }

    #[test]
    fn each_bot_reads_its_own_seat_and_never_the_other() {
        let c = RemoteGames::default();
        c.take(dealt(7, 2, [10, 20]), 1);
        let mine = status(7, 20, false);
        let theirs = status(7, 10, false);
        c.take(
            views(
                7,
                1,
                [(mine.clone(), true, false), (theirs.clone(), true, false)],
            ),
            1,
        );
        assert_eq!(c.passive_status(10, FRESH).as_deref(), Some(mine.as_str()));
        assert_eq!(
            c.passive_status(20, FRESH).as_deref(),
            Some(theirs.as_str())
        );
        // A bot in no game known here reads nothing.
        assert_eq!(c.passive_status(30, FRESH), None);
        assert_eq!(
            c.placed(20),
            Some(Placed {
                game: 7,
                seat: 1,
                home: 2
            })
        );
    }

    #[test]
    fn only_a_view_that_leaves_nothing_to_do_is_answered() {
        let c = RemoteGames::default();
        c.take(dealt(7, 2, [10, 20]), 1);
        // Before any view: nothing.
        assert_eq!(c.passive_status(10, FRESH), None);
        // Its turn, not bid yet, over: read the rows.
        c.take(
            views(
                7,
                1,
                [
                    (status(7, 20, true), true, false),
                    (status(7, 10, false), false, false),
                ],
            ),
            1,
        );
        assert_eq!(c.passive_status(10, FRESH), None);
        assert_eq!(c.passive_status(20, FRESH), None);
        c.take(
            views(
                7,
                2,
                [
                    (status(7, 20, false), true, true),
                    (status(7, 10, false), true, true),
                ],
            ),
            1,
        );
        assert_eq!(c.passive_status(10, FRESH), None);
        assert_eq!(c.placed(10), None);
        // Stale: not fresh any more.
        let c = RemoteGames::default();
        c.take(dealt(8, 2, [10, 20]), 1);
        c.take(
            views(
                8,
                1,
                [
                    (status(8, 20, false), true, false),
                    (status(8, 10, false), true, false),
                ],
            ),
            1,
        );
        assert!(c.passive_status(10, FRESH).is_some());
        assert_eq!(c.passive_status(10, Duration::ZERO), None);
    }

    #[test]
    fn older_views_never_replace_newer_ones_and_ends_forget_the_game() {
        let c = RemoteGames::default();
        c.take(dealt(7, 2, [10, 20]), 1);
        let new = status(7, 20, false);
        c.take(
            views(
                7,
                5,
                [(new.clone(), true, false), (new.clone(), true, false)],
            ),
            1,
        );
        c.take(
            views(
                7,
                4,
                [
                    (status(7, 20, true), true, false),
                    (new.clone(), true, false),
                ],
            ),
            1,
        );
        assert_eq!(c.passive_status(10, FRESH).as_deref(), Some(new.as_str()));
        // Views too long to send: nothing answered from here.
        c.take(views7_empty(6), 1);
        assert_eq!(c.passive_status(10, FRESH), None);
        assert!(c.placed(10).is_some());
        assert!(c.knows(7));
        c.take(Notice::Ended { game: 7 }, 1);
        assert_eq!(c.placed(10), None);
        assert!(!c.knows(7));
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
