//! An exact belief over the opponent's card at a two-player table, carried
//! from one decision to the next (a forward filter, as in a hidden Markov
//! model whose hidden state is the card the opponent holds).
//!
//! Between two decisions of this seat the round goes: this seat's play,
//! the opponent's draw (and any Wizard's), the opponent's play, this
//! seat's draw. For every card the opponent may have held at the earlier
//! decision and every card it may have drawn since, the filter rebuilds
//! the round with the rules themselves ([`LoveLetter::from_observation`]),
//! replays both plays and keeps the hypothesis only if this seat would then
//! see exactly what it sees now. Each one kept is weighted by how likely
//! its draws were and by whether the opponent model (the card-counting
//! heuristic, on the opponent's own view of the rebuilt round, with what
//! it knew of this seat's hand) makes the play the opponent made:
//! 1 if it does, [`MISPLAY`] if not. Bayesian inference over an assumed
//! policy, as in Ponsen et al.'s Monte Carlo search with opponent models;
//! unlike a look at the last play or two alone, every play of the round
//! counts, each judged on the view the opponent really had.

use croupier_rules::loveletter::{
    Card, LoveLetter, LoveLetterEvent, LoveLetterObservation, LoveLetterVariant, Play,
};
use croupier_rules::{Game, Seat};

use crate::loveletter::{unseen_counts, Heuristic};
use crate::Strategy;

/// Likelihood of a play the card-counting heuristic would not have made
/// (beside 1 for the play it would make): other bots are not the heuristic.
pub const MISPLAY: f64 = 0.1;

/// The filter of one seat at a two-player table.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// This seat's last decision this round and the play it made.
    last: Option<(LoveLetterObservation, Play)>,
    /// The events this seat saw since.
    events: Vec<LoveLetterEvent>,
    /// What the opponent knew of this seat's hand when it last played.
    opp_knew: Option<Card>,
    /// Belief over the opponent's card (by value) at the last decision.
    alpha: Option<[f64; 9]>,
}

impl Filter {
    /// Reads one event this seat sees; `opp_knew` is the card the player
    /// of a `Played` event knew this seat holds, before the event.
    pub fn notify(&mut self, e: &LoveLetterEvent, opp_knew: Option<Card>) {
        match e {
            LoveLetterEvent::RoundStart { .. } => *self = Filter::default(),
            LoveLetterEvent::Played { .. } => {
                self.opp_knew = opp_knew;
                self.events.push(*e);
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
            | LoveLetterEvent::MatchEnd { .. } => self.events.push(*e),
        }
    }

    /// Remembers this seat's decision and its play.
    pub fn record(&mut self, obs: &LoveLetterObservation, play: Play) {
        self.last = Some((obs.clone(), play));
        self.events.clear();
    }

    /// The belief over the opponent's card at `obs` as likelihoods by value
    /// (to be multiplied by the copies unseen), for a two-player table;
    /// `fallback` gives those likelihoods when the filter has nothing to
    /// carry on from (the round's first decision, or events it cannot
    /// follow). `None` at other table sizes.
    pub fn belief(
        &mut self,
        obs: &LoveLetterObservation,
        rules: &LoveLetterVariant,
        fallback: impl FnOnce() -> [f64; 9],
    ) -> Option<[f64; 9]> {
        if obs.players.len() != 2 {
            return None;
        }
        let opp = 1 - obs.seat.index().min(1);
        let counts = unseen_counts(obs);
        let stepped = match (&self.last, &self.alpha) {
            (Some((prev, play)), Some(alpha)) if prev.round == obs.round => {
                step(prev, *play, &self.events, self.opp_knew, alpha, obs, rules)
            }
            _ if self.last.as_ref().is_none_or(|(p, _)| p.round != obs.round) => {
                first_step(&self.events, obs, rules)
            }
            _ => None,
        };
        let alpha = stepped.unwrap_or_else(|| {
            let lik = fallback();
            let mut a = [0.0; 9];
            for v in 1..=8 {
                a[v] = f64::from(counts[v]) * lik[v];
            }
            a
        });
        let mut alpha = normalised(alpha).unwrap_or_else(|| {
            let mut a = [0.0; 9];
            for v in 1..=8 {
                a[v] = f64::from(counts[v]);
            }
            a
        });
        if let Some((_, c)) = obs.known.iter().find(|(s, _)| s.index() == opp) {
            alpha = [0.0; 9];
            alpha[usize::from(c.value())] = 1.0;
        }
        self.alpha = Some(alpha);
        let mut lik = [0.0; 9];
        for v in 1..=8 {
            if counts[v] > 0 {
                lik[v] = alpha[v] / f64::from(counts[v]);
            }
        }
        Some(lik)
    }
}

fn normalised(mut a: [f64; 9]) -> Option<[f64; 9]> {
    let total: f64 = a.iter().sum();
    if !(total > 0.0 && total.is_finite()) {
        return None;
    }
    for x in &mut a {
        *x /= total;
    }
    Some(a)
}

/// The draws between two decisions, in order: `Some` for this seat's own
/// (it saw the card), `None` for the opponent's; with the opponent's play.
/// `None` when the events do not fit one play of each side (a set-aside
/// card taken, a round's end).
fn draws(events: &[LoveLetterEvent], me: Seat) -> Option<(Vec<Option<Card>>, Play)> {
    let mut seq = vec![];
    let mut their_play = None;
    for e in events {
        match e {
            LoveLetterEvent::Turn { seat } if *seat != me => seq.push(None),
            LoveLetterEvent::Discard { seat, .. } if *seat != me => seq.push(None),
            LoveLetterEvent::Draw { seat, card } if *seat == me => seq.push(Some(*card)),
            LoveLetterEvent::Played {
                seat,
                card,
                target,
                guess,
            } if *seat != me => {
                if their_play.is_some() {
                    return None;
                }
                their_play = Some(Play::Play {
                    card: *card,
                    target: *target,
                    guess: *guess,
                });
            }
            LoveLetterEvent::SetAsideTaken { .. }
            | LoveLetterEvent::RoundEnd { .. }
            | LoveLetterEvent::RoundStart { .. }
            | LoveLetterEvent::Forfeit { .. }
            | LoveLetterEvent::MatchEnd { .. } => return None,
            LoveLetterEvent::Turn { .. }
            | LoveLetterEvent::Draw { .. }
            | LoveLetterEvent::Played { .. }
            | LoveLetterEvent::NoEffect { .. }
            | LoveLetterEvent::Swap { .. }
            | LoveLetterEvent::Reveal { .. }
            | LoveLetterEvent::Discard { .. }
            | LoveLetterEvent::Out { .. } => {}
        }
    }
    Some((seq, their_play?))
}

/// The parts of an observation the filter compares.
fn same_view(a: &LoveLetterObservation, b: &LoveLetterObservation) -> bool {
    let sorted = |o: &LoveLetterObservation| {
        let mut h = o.hand.clone();
        h.sort_unstable();
        let mut k = o.known.clone();
        k.sort_unstable();
        (h, k)
    };
    a.players == b.players && a.deck == b.deck && a.to_act == b.to_act && sorted(a) == sorted(b)
}

/// Every assignment of `hidden` draws from `pool` (copies by value), with
/// its probability.
fn fills(pool: &[i32; 9], hidden: usize) -> Vec<(Vec<usize>, f64)> {
    let mut fills: Vec<(Vec<usize>, f64)> = vec![(vec![], 1.0)];
    for _ in 0..hidden {
        let mut next = vec![];
        for (f, p) in &fills {
            let mut left = *pool;
            for h in f {
                left[*h] -= 1;
            }
            let total: i32 = left.iter().sum();
            for (h, n) in left.iter().enumerate() {
                if *n > 0 && total > 0 {
                    let mut g = f.clone();
                    g.push(h);
                    next.push((g, p * f64::from(*n) / f64::from(total)));
                }
            }
        }
        fills = next;
    }
    fills
}

/// The belief after the opponent's first play of the round, made before
/// this seat's first decision: every card it may have been dealt and drawn
/// is replayed from the round's start ([`LoveLetter::with_top_cards_under`]).
fn first_step(
    events: &[LoveLetterEvent],
    now: &LoveLetterObservation,
    rules: &LoveLetterVariant,
) -> Option<[f64; 9]> {
    let me = now.seat;
    let opp = Seat(1 - me.0.min(1));
    if now.first != opp
        || now.players[opp.index()].played.len() != 1
        || !now.players[me.index()].played.is_empty()
    {
        return None;
    }
    let (mut seq, their_play) = draws(events, me)?;
    // The opponent's deal comes before this seat's, which it did not see.
    seq.insert(0, None);
    let hidden = seq.iter().filter(|d| d.is_none()).count();
    if hidden > 3 {
        return None;
    }
    let mut pool = [0i32; 9];
    for c in croupier_rules::loveletter::DECK {
        pool[usize::from(c.value())] += 1;
    }
    for c in seq.iter().flatten() {
        pool[usize::from(c.value())] -= 1;
    }
    if pool.iter().any(|c| *c < 0) {
        return None;
    }
    let mut heuristic = Heuristic::default();
    heuristic.new_game(opp, rules, 2);
    let mut rng = crate::bot_rng(0);
    let mut out = [0.0; 9];
    let mut any = false;
    for (fill, p) in fills(&pool, hidden) {
        let card = |x: usize| Card::from_value(x as u8);
        let mut rest = pool;
        for h in &fill {
            rest[*h] -= 1;
        }
        let Some(set_aside) = (1..=8).find(|x| rest[*x] > 0).and_then(card) else {
            continue;
        };
        let mut top = vec![set_aside];
        let mut fill = fill.into_iter();
        for d in &seq {
            match d {
                Some(c) => top.push(*c),
                None => top.extend(fill.next().and_then(card)),
            }
        }
        let Ok(mut g) = LoveLetter::with_top_cards_under(rules, 2, opp, &top, 0) else {
            continue;
        };
        if g.to_act().first() != Some(opp) {
            continue;
        }
        let mut view = g.observation(opp);
        view.wins.clone_from(&now.wins);
        view.round = now.round;
        view.wins_needed = now.wins_needed;
        let legal = g.legal_vec(opp);
        let lik = if heuristic.act(&view, &legal, &mut rng) == their_play {
            1.0
        } else {
            MISPLAY
        };
        if g.apply(opp, their_play).is_err() || g.to_act().first() != Some(me) {
            continue;
        }
        if !same_view(&g.observation(me), now) {
            continue;
        }
        if let [k] = g.observation(opp).hand.as_slice() {
            out[usize::from(k.value())] += p * lik;
            any = true;
        }
    }
    any.then_some(out)
}

/// One filter step from `prev` (this seat's last decision, where the
/// opponent's card had belief `alpha`, then its `play`) to `now`.
fn step(
    prev: &LoveLetterObservation,
    play: Play,
    events: &[LoveLetterEvent],
    opp_knew: Option<Card>,
    alpha: &[f64; 9],
    now: &LoveLetterObservation,
    rules: &LoveLetterVariant,
) -> Option<[f64; 9]> {
    let me = prev.seat;
    let opp = Seat(1 - me.0.min(1));
    let (seq, their_play) = draws(events, me)?;
    let hidden = seq.iter().filter(|d| d.is_none()).count();
    if hidden == 0 || hidden > 2 {
        return None;
    }
    let mut pool = unseen_counts(prev).map(i32::from);
    for c in seq.iter().flatten() {
        pool[usize::from(c.value())] -= 1;
    }
    if pool.iter().any(|c| *c < 0) {
        return None;
    }
    let mut heuristic = Heuristic::default();
    heuristic.new_game(opp, rules, 2);
    let mut rng = crate::bot_rng(0);
    let mut out = [0.0; 9];
    let mut any = false;
    for v in 1..=8usize {
        if alpha[v] <= 0.0 || pool[v] <= 0 {
            continue;
        }
        let mut pool = pool;
        pool[v] -= 1;
        let fills = fills(&pool, hidden);
        for (fill, p) in fills {
            let card = |x: usize| Card::from_value(x as u8);
            let mut rest = pool;
            for h in &fill {
                rest[*h] -= 1;
            }
            let mut cards: Vec<Card> = vec![];
            for (x, n) in rest.iter().enumerate() {
                for _ in 0..(*n).max(0) {
                    cards.extend(card(x));
                }
            }
            let Some(set_aside) = cards.pop() else {
                continue;
            };
            let mut fill = fill.into_iter();
            let mut top: Vec<Card> = vec![];
            for d in &seq {
                match d {
                    Some(c) => top.push(*c),
                    None => top.extend(fill.next().and_then(card)),
                }
            }
            top.reverse();
            cards.extend(top);
            let Some(held) = card(v) else { continue };
            let others = {
                let mut o = vec![None; 2];
                o[opp.index()] = Some(held);
                o
            };
            let Ok(mut g) =
                LoveLetter::from_observation(rules, prev, &others, &cards, set_aside, 0)
            else {
                continue;
            };
            if g.apply(me, play).is_err() || g.to_act().first() != Some(opp) {
                continue;
            }
            let mut view = g.observation(opp);
            if let Some(c) = opp_knew {
                if !view.known.iter().any(|(s, _)| *s == me) {
                    view.known.push((me, c));
                }
            }
            let legal = g.legal_vec(opp);
            let lik = if heuristic.act(&view, &legal, &mut rng) == their_play {
                1.0
            } else {
                MISPLAY
            };
            if g.apply(opp, their_play).is_err() || g.to_act().first() != Some(me) {
                continue;
            }
            if !same_view(&g.observation(me), now) {
                continue;
            }
            let kept = g.observation(opp).hand;
            if let [k] = kept.as_slice() {
                out[usize::from(k.value())] += alpha[v] * p * lik;
                any = true;
            }
        }
    }
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In heuristic-against-heuristic games the filter never rules out the
    /// card the opponent really holds, and it puts more weight on it than
    /// the count of unseen cards alone does.
    #[test]
    fn the_filter_keeps_the_true_card_and_sharpens_on_it() {
        let (mut steps, mut sharper, mut flat_sum, mut filter_sum) = (0, 0, 0.0, 0.0);
        for rules in [LoveLetterVariant::standard(), LoveLetterVariant::postman()] {
            for seed in 0..30u64 {
                let mut g = LoveLetter::new(&rules, 2, seed).unwrap();
                let mut rng = crate::bot_rng(seed);
                let mut bots = [Heuristic::default(), Heuristic::default()];
                for (s, b) in bots.iter_mut().enumerate() {
                    b.new_game(Seat(s as u8), &rules, 2);
                }
                let mut filter = Filter::default();
                let mut exposure = super::super::exposure::Exposure::new(Seat(0));
                let mut seen = 0;
                while let Some(seat) = g.to_act().first() {
                    for e in &g.events()[seen..] {
                        if croupier_rules::Event::visible_to(e, Seat(0)) {
                            let knew = match e {
                                LoveLetterEvent::Played { seat, .. } => exposure.known_by(*seat),
                                _ => None,
                            };
                            filter.notify(e, knew);
                            exposure.notify(e);
                        }
                    }
                    seen = g.events().len();
                    let obs = g.observation(seat);
                    let legal = g.legal_vec(seat);
                    if seat == Seat(0) {
                        exposure.sync(&obs);
                        let counts = unseen_counts(&obs);
                        let lik = filter.belief(&obs, &rules, || [1.0; 9]).unwrap();
                        let truth = g.observation(Seat(1)).hand;
                        if let [t] = truth.as_slice() {
                            let t = usize::from(t.value());
                            let total: f64 = (1..=8).map(|v| f64::from(counts[v]) * lik[v]).sum();
                            let p = f64::from(counts[t]) * lik[t] / total;
                            let flat = f64::from(counts[t])
                                / f64::from(counts.iter().map(|c| u32::from(*c)).sum::<u32>());
                            assert!(p > 0.0, "seed {seed}: the true card ruled out");
                            steps += 1;
                            flat_sum += flat;
                            filter_sum += p;
                            if p > flat + 1e-9 {
                                sharper += 1;
                            }
                        }
                    }
                    let a = bots[seat.index()].act(&obs, &legal, &mut rng);
                    if seat == Seat(0) {
                        filter.record(&obs, a);
                    }
                    g.apply(seat, a).unwrap();
                }
            }
        }
        assert!(steps > 200, "{steps}");
        assert!(sharper * 2 > steps, "{sharper} of {steps}");
        assert!(filter_sum > flat_sum * 1.3, "{filter_sum} vs {flat_sum}");
    }
}
