//! Love Letter strategies: uniform random and a card-counting heuristic.
//! Both aim a targeting card at a player it can affect whenever there is
//! one ([`preferred`]), under the rules of the game they play.

use croupier_rules::loveletter::{
    Card, LoveLetter, LoveLetterObservation, LoveLetterVariant, Play, DECK,
};
use croupier_rules::Seat;
use rand::seq::IndexedRandom;

use crate::{BotRng, Strategy};

/// The plays worth choosing among: the legal plays, less those that aim a
/// card at a player it cannot affect (protected; under Postman's rules also
/// out, or the player itself) when the same card has a play that can
/// affect someone, or no target at all. A card with nothing else keeps them
/// (Postman's rules want a target even then). The order is kept.
pub fn preferred(
    obs: &LoveLetterObservation,
    legal: &[Play],
    rules: &LoveLetterVariant,
) -> Vec<Play> {
    let aimless = |p: &Play| obs.no_effect(rules, *p).is_some();
    legal
        .iter()
        .copied()
        .filter(|p| {
            !aimless(p)
                || !legal
                    .iter()
                    .any(|q| q.played_card() == p.played_card() && !aimless(q))
        })
        .collect()
}

/// Plays a uniformly random play among the [`preferred`] ones (the seeds'
/// example AIs do the same: a random card, at a player it can affect).
#[derive(Debug, Default, Clone)]
pub struct Random {
    rules: LoveLetterVariant,
}

impl Strategy<LoveLetter> for Random {
    fn new_game(&mut self, _seat: Seat, variant: &LoveLetterVariant, _seats: usize) {
        self.rules = variant.clone();
    }

    fn act(&mut self, obs: &LoveLetterObservation, legal: &[Play], rng: &mut BotRng) -> Play {
        let pool = preferred(obs, legal, &self.rules);
        *pool.choose(rng).unwrap_or(&legal[0])
    }
}

/// Counts the cards it has not seen, then scores each [`preferred`] play:
/// keep the higher card, guess the likeliest card with the Soldier, duel
/// with the Knight only when likely to win, use what Clown and Knight
/// revealed, never play the Princess, and be rid of the Minister before it
/// bites.
#[derive(Debug, Default, Clone)]
pub struct Heuristic {
    rules: LoveLetterVariant,
}

/// Copies of each card (by value 1..=8) that this seat has not seen: the
/// deck minus its hand and every card shown face up this round.
pub fn unseen_counts(obs: &LoveLetterObservation) -> [u8; 9] {
    let mut counts = [0u8; 9];
    for c in DECK {
        counts[usize::from(c.value())] += 1;
    }
    let seen = obs.hand.iter().chain(
        obs.players
            .iter()
            .flat_map(|p| p.played.iter().chain(p.out_hand.iter())),
    );
    for c in seen {
        let v = usize::from(c.value());
        counts[v] = counts[v].saturating_sub(1);
    }
    counts
}

/// Probability distribution of the card `target` holds, as this seat knows it.
fn belief(obs: &LoveLetterObservation, target: Seat, unseen: &[u8; 9]) -> [f64; 9] {
    let mut p = [0.0; 9];
    if let Some((_, c)) = obs.known.iter().find(|(s, _)| *s == target) {
        p[usize::from(c.value())] = 1.0;
        return p;
    }
    let total: u32 = unseen.iter().map(|c| u32::from(*c)).sum();
    if total == 0 {
        return p;
    }
    for v in 1..=8 {
        p[v] = f64::from(unseen[v]) / f64::from(total);
    }
    p
}

/// The heuristic's score of `play` (higher is better), as [`Heuristic`]
/// weighs it.
pub(crate) fn score(
    obs: &LoveLetterObservation,
    play: Play,
    unseen: &[u8; 9],
    rules: &LoveLetterVariant,
) -> f64 {
    let (card, target, guess) = match play {
        Play::Play {
            card,
            target,
            guess,
        } => (card, target, guess),
        Play::Forfeit => return f64::NEG_INFINITY,
    };
    // The card kept is the other one in hand.
    let mut hand = obs.hand.clone();
    if let Some(i) = hand.iter().position(|c| *c == card) {
        hand.remove(i);
    }
    let kept = hand.first().copied().unwrap_or(card);
    let late = obs.deck <= 2;
    let mut s = f64::from(kept.value()) * if late { 1.5 } else { 0.6 };
    if kept == Card::Minister && obs.deck > 0 {
        // Holding the Minister: any Wizard, General or Princess drawn is fatal.
        s -= 3.0;
    }
    if kept == Card::Princess {
        s += 2.0;
    }
    // A card that cannot affect its target is scored as having no target.
    let b = target
        .filter(|_| obs.no_effect(rules, play).is_none())
        .map(|t| belief(obs, t, unseen));
    s += match (card, b) {
        (Card::Princess, _) => -1000.0,
        (Card::Soldier, Some(b)) => guess.map_or(0.0, |g| 10.0 * b[usize::from(g.value())]),
        (Card::Knight, Some(b)) => {
            let mine = usize::from(kept.value());
            let win: f64 = b[..mine].iter().sum();
            let lose: f64 = b[mine + 1..].iter().sum();
            9.0 * win - 11.0 * lose
        }
        (Card::Wizard, Some(_)) if target == Some(obs.seat) => {
            if kept == Card::Princess {
                -1000.0
            } else {
                // Trading a low card for a random one.
                0.5 * (4.5 - f64::from(kept.value()))
            }
        }
        (Card::Wizard, Some(b)) => 10.0 * b[8] + 0.5,
        (Card::General, Some(b)) => {
            let theirs: f64 = (1..=8).map(|v| v as f64 * b[v]).sum();
            let gain = theirs - f64::from(kept.value());
            // We give away our card, and they learn it.
            gain * if late { 1.5 } else { 0.6 } - 0.5
        }
        (Card::Priestess, _) => 2.5,
        (Card::Clown, Some(_)) => 1.0,
        (Card::Minister, _) => 1.0,
        // Without a target (everyone else protected) these do nothing.
        (Card::Soldier | Card::Clown | Card::Knight | Card::Wizard | Card::General, None) => 0.0,
    };
    // Prefer to hit whoever leads the match.
    if let Some(t) = target {
        if t != obs.seat {
            s += 0.1 * f64::from(obs.wins.get(t.index()).copied().unwrap_or(0));
        }
    }
    s
}

impl Strategy<LoveLetter> for Heuristic {
    fn new_game(&mut self, _seat: Seat, variant: &LoveLetterVariant, _seats: usize) {
        self.rules = variant.clone();
    }

    fn act(&mut self, obs: &LoveLetterObservation, legal: &[Play], _rng: &mut BotRng) -> Play {
        let unseen = unseen_counts(obs);
        preferred(obs, legal, &self.rules)
            .into_iter()
            .map(|p| (score(obs, p, &unseen, &self.rules), p))
            .fold(None, |best: Option<(f64, Play)>, (s, p)| match best {
                Some((bs, _)) if bs >= s => best,
                _ => Some((s, p)),
            })
            .map_or(legal[0], |(_, p)| p)
    }
}
