//! Which other players know the card a seat holds, read from the events
//! that seat may see: a Clown aimed at it, a Knight duel it took part in,
//! a General swap. The observation shows only what the seat itself knows;
//! the search needs the converse so that the other players in its
//! determinizations aim their Soldiers and Knights as well as they can.

use croupier_rules::loveletter::{Card, LoveLetterEvent, LoveLetterObservation};
use croupier_rules::Seat;

/// Most seats at a Love Letter table.
const SEATS: usize = 4;

/// What the other seats know of one seat's hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposure {
    me: Seat,
    /// This seat's hand, as its events show it.
    hand: Vec<Card>,
    /// `known_by[o]`: the card seat `o` knows this seat holds.
    known_by: [Option<Card>; SEATS],
    /// The last card aimed at this seat (or played by it at another), with
    /// what the other seat knew before, until a `NoEffect` may undo it.
    undo: Option<(usize, Option<Card>)>,
    /// The other side of a General played by or at this seat.
    swap_with: Option<Seat>,
}

impl Exposure {
    /// Nothing known, for `me`.
    pub fn new(me: Seat) -> Self {
        Exposure {
            me,
            hand: vec![],
            known_by: [None; SEATS],
            undo: None,
            swap_with: None,
        }
    }

    /// The seat whose hand this is about.
    pub fn me(&self) -> Seat {
        self.me
    }

    /// The card seat `o` knows this seat holds.
    pub fn known_by(&self, o: Seat) -> Option<Card> {
        self.known_by.get(o.index()).copied().flatten()
    }

    /// Drops what does not fit the observation (events that never came: a
    /// transport that does not pass them on), and takes its hand.
    pub fn sync(&mut self, obs: &LoveLetterObservation) {
        self.hand.clone_from(&obs.hand);
        for k in &mut self.known_by {
            if k.is_some_and(|c| !obs.hand.contains(&c)) {
                *k = None;
            }
        }
    }

    fn only_card(&self) -> Option<Card> {
        match self.hand.as_slice() {
            [c] => Some(*c),
            _ => None,
        }
    }

    fn learn(&mut self, o: Seat, card: Option<Card>) {
        if let Some(k) = self.known_by.get_mut(o.index()) {
            self.undo = Some((o.index(), *k));
            *k = card;
        }
    }

    /// Reads one event the seat may see.
    pub fn notify(&mut self, e: &LoveLetterEvent) {
        let me = self.me;
        match e {
            LoveLetterEvent::RoundStart { .. } => {
                self.hand.clear();
                self.known_by = [None; SEATS];
                self.undo = None;
            }
            LoveLetterEvent::Draw { seat, card } if *seat == me => self.hand.push(*card),
            LoveLetterEvent::Played {
                seat, card, target, ..
            } => {
                self.undo = None;
                self.swap_with = match (card, target) {
                    (Card::General, Some(t)) if *seat == me => Some(*t),
                    (Card::General, Some(t)) if *t == me => Some(*seat),
                    _ => None,
                };
                if *seat == me {
                    if let Some(i) = self.hand.iter().position(|c| c == card) {
                        self.hand.remove(i);
                    }
                    // Nobody can tell which copy went.
                    for k in &mut self.known_by {
                        if *k == Some(*card) {
                            *k = None;
                        }
                    }
                    if let (Card::Knight, Some(t)) = (card, target) {
                        if *t != me {
                            self.learn(*t, self.only_card());
                        }
                    }
                } else if *target == Some(me) && matches!(card, Card::Clown | Card::Knight) {
                    self.learn(*seat, self.only_card());
                }
            }
            LoveLetterEvent::NoEffect { seat, target, .. } if *seat == me || *target == me => {
                if let Some((o, before)) = self.undo.take() {
                    self.known_by[o] = before;
                }
            }
            LoveLetterEvent::Swap { seat, card } if *seat == me => {
                // A General between this seat and another: the other knows
                // the card it gave; nobody else knows this hand any more.
                self.hand = vec![*card];
                self.known_by = [None; SEATS];
                if let Some(k) = self
                    .swap_with
                    .and_then(|o| self.known_by.get_mut(o.index()))
                {
                    *k = Some(*card);
                }
            }
            LoveLetterEvent::Discard { seat, card } if *seat == me => {
                if let Some(i) = self.hand.iter().position(|c| c == card) {
                    self.hand.remove(i);
                }
                self.known_by = [None; SEATS];
            }
            LoveLetterEvent::Out { seat, .. } if *seat == me => {
                self.hand.clear();
                self.known_by = [None; SEATS];
            }
            LoveLetterEvent::Turn { .. }
            | LoveLetterEvent::Draw { .. }
            | LoveLetterEvent::NoEffect { .. }
            | LoveLetterEvent::Swap { .. }
            | LoveLetterEvent::Reveal { .. }
            | LoveLetterEvent::Discard { .. }
            | LoveLetterEvent::SetAsideTaken { .. }
            | LoveLetterEvent::Forfeit { .. }
            | LoveLetterEvent::Out { .. }
            | LoveLetterEvent::RoundEnd { .. }
            | LoveLetterEvent::MatchEnd { .. } => {}
        }
    }
}

/// What the public events say about each seat's hand, beyond its
/// observation: Soldier guesses that missed it (it did not hold the card
/// named then), and how many plays it has made since its hand last came
/// from outside (a Wizard's discard and draw, a General's swap), when the
/// card it kept is no evidence of what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clues {
    /// Plays each seat made this round.
    plays: [usize; SEATS],
    /// Plays each seat made since its hand was replaced (a large number
    /// when the events never said).
    since_fresh: [usize; SEATS],
    /// Cards named at each seat by a Soldier that missed, with the number
    /// of plays it had made then.
    misses: [Vec<(Card, usize)>; SEATS],
    /// The last Soldier or General aimed at a seat, until a `NoEffect`
    /// may undo it: the target and its `since_fresh` before.
    pending: Option<(usize, Card, usize)>,
}

/// `since_fresh` of a seat whose events were not seen.
const UNSEEN: usize = usize::MAX / 2;

impl Default for Clues {
    fn default() -> Self {
        Clues {
            plays: [0; SEATS],
            since_fresh: [UNSEEN; SEATS],
            misses: Default::default(),
            pending: None,
        }
    }
}

impl Clues {
    /// Plays seat `i` made since its hand last came from outside.
    pub fn since_fresh(&self, i: usize) -> usize {
        self.since_fresh.get(i).copied().unwrap_or(UNSEEN)
    }

    /// Multiplies `lik` (by card value) by what missed Soldiers say of seat
    /// `i`: a card named since its last play is ruled out; named before
    /// it, `after_one` as likely as before (it may have drawn it since).
    pub fn weigh_misses(&self, i: usize, lik: &mut [f64; 9], after_one: f64) {
        let Some(misses) = self.misses.get(i) else {
            return;
        };
        for (g, at) in misses {
            let v = usize::from(g.value());
            match self.plays[i].checked_sub(*at) {
                Some(0) => lik[v] = 0.0,
                Some(1) => lik[v] *= after_one,
                _ => {}
            }
        }
    }

    /// Reads one event.
    pub fn notify(&mut self, e: &LoveLetterEvent) {
        match e {
            LoveLetterEvent::RoundStart { .. } => *self = Clues::default(),
            LoveLetterEvent::Played {
                seat,
                card,
                target,
                guess,
            } => {
                let s = seat.index().min(SEATS - 1);
                self.plays[s] += 1;
                self.since_fresh[s] = self.since_fresh[s].saturating_add(1).min(UNSEEN);
                self.pending = None;
                let Some(t) = target.map(|t| t.index()).filter(|t| *t < SEATS && *t != s) else {
                    return;
                };
                match (card, guess) {
                    (Card::Soldier, Some(g)) => {
                        self.misses[t].push((*g, self.plays[t]));
                        self.pending = Some((t, *card, self.since_fresh[t]));
                    }
                    (Card::General, _) => {
                        self.pending = Some((t, *card, self.since_fresh[t]));
                        self.since_fresh[t] = 0;
                        self.misses[t].clear();
                        self.misses[s].clear();
                    }
                    _ => {}
                }
            }
            LoveLetterEvent::NoEffect { .. } => match self.pending.take() {
                Some((t, Card::Soldier, _)) => {
                    self.misses[t].pop();
                }
                Some((t, _, before)) => self.since_fresh[t] = before,
                None => {}
            },
            LoveLetterEvent::Discard { seat, .. } | LoveLetterEvent::Out { seat, .. } => {
                let t = seat.index().min(SEATS - 1);
                self.since_fresh[t] = 0;
                self.misses[t].clear();
            }
            LoveLetterEvent::Turn { .. }
            | LoveLetterEvent::Draw { .. }
            | LoveLetterEvent::Swap { .. }
            | LoveLetterEvent::Reveal { .. }
            | LoveLetterEvent::SetAsideTaken { .. }
            | LoveLetterEvent::Forfeit { .. }
            | LoveLetterEvent::RoundEnd { .. }
            | LoveLetterEvent::MatchEnd { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loveletter::{Heuristic, Random};
    use crate::Strategy;
    use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
    use croupier_rules::{Event, Game};

    /// Fed the events each seat may see, every seat's tracker claims only
    /// what the other seats really know of its hand (their observations
    /// say so), and at a two-seat table it misses nothing they know.
    #[test]
    fn the_tracker_matches_what_the_others_know() {
        let (mut claims, mut missed_2p) = (0, 0);
        for (seats, postman) in [(2, false), (2, true), (3, false), (4, true), (4, false)] {
            let variant = if postman {
                LoveLetterVariant::postman()
            } else {
                LoveLetterVariant::standard()
            };
            for seed in 0..40u64 {
                let mut g = LoveLetter::new(&variant, seats, seed).unwrap();
                let mut rng = crate::bot_rng(seed);
                let mut bots: Vec<Box<dyn Strategy<LoveLetter>>> = (0..seats)
                    .map(|s| -> Box<dyn Strategy<LoveLetter>> {
                        if (s + seed as usize).is_multiple_of(2) {
                            Box::new(Heuristic::default())
                        } else {
                            Box::new(Random::default())
                        }
                    })
                    .collect();
                for (s, b) in bots.iter_mut().enumerate() {
                    b.new_game(Seat(s as u8), &variant, seats);
                }
                let mut tracks: Vec<Exposure> =
                    (0..seats).map(|s| Exposure::new(Seat(s as u8))).collect();
                let mut seen = 0;
                while let Some(seat) = g.to_act().first() {
                    for e in &g.events()[seen..] {
                        for (s, t) in tracks.iter_mut().enumerate() {
                            if e.visible_to(Seat(s as u8)) {
                                t.notify(e);
                            }
                        }
                    }
                    seen = g.events().len();
                    for (me, t) in tracks.iter().enumerate() {
                        for o in 0..seats {
                            if o == me {
                                continue;
                            }
                            let truth = g
                                .observation(Seat(o as u8))
                                .known
                                .iter()
                                .find(|(s, _)| s.index() == me)
                                .map(|(_, c)| *c);
                            let claim = t.known_by(Seat(o as u8));
                            if claim.is_some() {
                                assert_eq!(claim, truth, "seed {seed}, {seats} seats: {t:?}");
                                claims += 1;
                            } else if truth.is_some() && seats == 2 {
                                missed_2p += 1;
                            }
                        }
                    }
                    let obs = g.observation(seat);
                    let legal = g.legal_vec(seat);
                    let a = bots[seat.index()].act(&obs, &legal, &mut rng);
                    g.apply(seat, a).unwrap();
                }
            }
        }
        assert!(claims > 100, "{claims}");
        assert_eq!(missed_2p, 0);
    }
}
