//! Goofspiel's sparring panel: simple bots of the kinds people write first,
//! to measure `strong` against and to test a bot against.
//!
//! | name | bids |
//! |---|---|
//! | `prize` | the card of the prize's value |
//! | `near-prize` | the prize's value plus a random offset in [-1, 2] |
//! | `table` | from a prize-to-card table drawn at random once per match |
//! | `copy` | the card the opponent bid last this round (the prize's value first) |
//! | `highest` | its highest card |
//! | `lowest` | its lowest card |
//!
//! A wanted card that is no longer in the hand is replaced by the nearest
//! card held, the higher one on a tie ([`nearest`]).

use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielObservation, GoofspielVariant};
use croupier_rules::Seat;
use rand::seq::SliceRandom;
use rand::Rng;

use crate::{BotRng, Strategy};

/// The names of the panel, in the order above.
pub const PANEL: &[&str] = &["prize", "near-prize", "table", "copy", "highest", "lowest"];

/// The card of `hand` nearest to `target` (the higher on a tie), or `None`
/// for an empty hand.
pub fn nearest(hand: &[u8], target: i32) -> Option<u8> {
    hand.iter()
        .copied()
        .min_by_key(|c| ((i32::from(*c) - target).abs(), std::cmp::Reverse(*c)))
}

/// The prize's value this turn (the card just drawn; 1 if none is shown).
fn prize(obs: &GoofspielObservation) -> i32 {
    i32::from(obs.current.unwrap_or(1))
}

/// One bot of the panel.
#[derive(Debug, Clone)]
pub enum Panel {
    /// Bids the card of the prize's value.
    Prize,
    /// Bids the prize's value plus an offset drawn from [-1, 2].
    NearPrize,
    /// Bids by a prize-to-card table drawn once per match (index: prize).
    Table(Option<Vec<u8>>),
    /// Bids the opponent's last bid of this round.
    Copy,
    /// Bids its highest card.
    Highest,
    /// Bids its lowest card.
    Lowest,
}

impl Panel {
    /// The panel bot of this name.
    pub fn named(name: &str) -> Option<Panel> {
        Some(match name {
            "prize" => Panel::Prize,
            "near-prize" => Panel::NearPrize,
            "table" => Panel::Table(None),
            "copy" => Panel::Copy,
            "highest" => Panel::Highest,
            "lowest" => Panel::Lowest,
            _ => return None,
        })
    }

    /// The card this bot wants for `obs` before it is matched to its hand.
    fn target(&mut self, obs: &GoofspielObservation, rng: &mut BotRng) -> i32 {
        match self {
            Panel::Prize => prize(obs),
            Panel::NearPrize => prize(obs) + rng.random_range(-1..=2),
            Panel::Table(table) => {
                let t = table.get_or_insert_with(|| {
                    let top = obs.rounds.iter().copied().max().unwrap_or(13).max(1);
                    let mut cards: Vec<u8> = (1..=top).collect();
                    cards.shuffle(rng);
                    cards
                });
                let p = usize::try_from(prize(obs) - 1).unwrap_or(0);
                t.get(p).map_or(prize(obs), |c| i32::from(*c))
            }
            Panel::Copy => obs
                .history
                .get(obs.round)
                .and_then(|turns| turns.last())
                .map_or(prize(obs), |t| i32::from(t.bids[1])),
            Panel::Highest => i32::MAX / 2,
            Panel::Lowest => i32::MIN / 2,
        }
    }
}

impl Strategy<Goofspiel> for Panel {
    fn new_game(&mut self, _seat: Seat, _variant: &GoofspielVariant, _seats: usize) {
        if let Panel::Table(t) = self {
            *t = None;
        }
    }

    fn act(&mut self, obs: &GoofspielObservation, legal: &[Bid], rng: &mut BotRng) -> Bid {
        let target = self.target(obs, rng);
        nearest(&obs.hand, target)
            .map(Bid)
            .filter(|b| legal.contains(b))
            .unwrap_or(legal[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::Game;

    /// Plays `a` against `b` on one GOPS deal; returns both seats' bids.
    fn play(a: &str, b: &str, seed: u64) -> Vec<[u8; 2]> {
        let v = GoofspielVariant::gops();
        let mut g = Goofspiel::new(&v, 2, seed).expect("a game");
        let mut bots = [Panel::named(a).unwrap(), Panel::named(b).unwrap()];
        let mut rngs = [crate::bot_rng(seed), crate::bot_rng(seed + 1)];
        for (i, bot) in bots.iter_mut().enumerate() {
            bot.new_game(Seat(i as u8), &v, 2);
        }
        while !g.is_over() {
            for i in 0..2 {
                let seat = Seat(i as u8);
                let legal = g.legal_vec(seat);
                let bid = bots[i].act(&g.observation(seat), &legal, &mut rngs[i]);
                g.apply(seat, bid).expect("a legal bid");
            }
        }
        let obs = g.observation(Seat(0));
        obs.history[0].iter().map(|t| t.bids).collect()
    }

    #[test]
    fn nearest_prefers_the_higher_card_on_a_tie() {
        assert_eq!(nearest(&[2, 4, 9], 3), Some(4));
        assert_eq!(nearest(&[2, 4, 9], 20), Some(9));
        assert_eq!(nearest(&[2, 4, 9], -3), Some(2));
        assert_eq!(nearest(&[], 3), None);
    }

    #[test]
    fn each_panel_bot_bids_as_its_name_says() {
        for seed in 0..5 {
            let turns = play("prize", "copy", seed);
            let mut drawn = vec![];
            let v = GoofspielVariant::gops();
            let mut g = Goofspiel::new(&v, 2, seed).unwrap();
            for t in &turns {
                drawn.push(g.observation(Seat(0)).current.unwrap());
                g.apply(Seat(0), Bid(t[0])).unwrap();
                g.apply(Seat(1), Bid(t[1])).unwrap();
            }
            for (k, t) in turns.iter().enumerate() {
                assert_eq!(t[0], drawn[k], "prize bids the prize, seed {seed}");
                // The copier bids the last bid while it still holds it.
                let spent = turns[..k].iter().any(|u| u[1] == turns[k.max(1) - 1][0]);
                if k > 0 && !spent {
                    assert_eq!(t[1], turns[k - 1][0], "copy bids the last bid");
                }
            }
            let hl = play("highest", "lowest", seed);
            for (k, t) in hl.iter().enumerate() {
                assert_eq!(t[0] as usize, 13 - k);
                assert_eq!(t[1] as usize, k + 1);
            }
        }
    }

    #[test]
    fn near_prize_stays_within_its_offsets_and_table_is_one_table_per_match() {
        let mut offsets = std::collections::BTreeSet::new();
        for seed in 0..20 {
            let v = GoofspielVariant::gops();
            let mut g = Goofspiel::new(&v, 2, seed).unwrap();
            let mut bot = Panel::named("near-prize").unwrap();
            let mut rng = crate::bot_rng(seed);
            let obs = g.observation(Seat(0));
            let bid = bot.act(&obs, &g.legal_vec(Seat(0)), &mut rng);
            let d = i32::from(bid.0) - i32::from(obs.current.unwrap());
            offsets.insert(d.clamp(-1, 2));
            assert!((-1..=2).contains(&d) || bid.0 == 1 || bid.0 == 13, "{d}");
            g.apply(Seat(0), bid).unwrap();
        }
        assert_eq!(offsets.len(), 4, "every offset drawn: {offsets:?}");
        // The table answers one prize with one card for the whole match.
        let mut bot = Panel::named("table").unwrap();
        let mut rng = crate::bot_rng(7);
        let v = GoofspielVariant::gops();
        let g = Goofspiel::new(&v, 2, 3).unwrap();
        let obs = g.observation(Seat(0));
        let first = bot.act(&obs, &g.legal_vec(Seat(0)), &mut rng);
        for _ in 0..5 {
            assert_eq!(bot.act(&obs, &g.legal_vec(Seat(0)), &mut rng), first);
        }
        let turns = play("table", "table", 11);
        let mut cards: Vec<u8> = turns.iter().map(|t| t[0]).collect();
        cards.sort_unstable();
        assert_eq!(cards, (1..=13).collect::<Vec<u8>>(), "a permutation");
    }
}
