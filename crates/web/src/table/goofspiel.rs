//! Goofspiel at the table: the prize up for bidding and the lot it joins,
//! each seat's points and bid cards (both hands are public: every bid is
//! revealed), and the bids as the cards of the hand.

use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielObservation};
use croupier_rules::Seat;

use super::Tabled;
use crate::html::Names;
use crate::html::{gs_card, html, Markup};

impl Tabled for Goofspiel {
    fn seat_facts(o: &GoofspielObservation, seat: Seat, _: &Names) -> Markup {
        let mine = seat == o.seat;
        let points = if mine { o.my_points } else { o.opponent_points };
        let bid = if mine {
            o.my_bid.map(|b| html! { "bid " (gs_card(b, "")) })
        } else if o.opponent_has_bid && o.current.is_some() {
            Some(html! { span class="muted" { "has bid" } })
        } else {
            None
        };
        html! {
            b { (points) } " points"
            @if let Some(b) = bid { " · " (b) }
        }
    }

    fn centre(o: &GoofspielObservation, names: &Names) -> Markup {
        let worth: u32 = o.lot.iter().map(|c| u32::from(*c)).sum();
        let me = o.seat;
        let them = Seat(1 - o.seat.0.min(1));
        // The last turn played, in this round or the one before.
        let last = o.history.iter().rev().find_map(|turns| turns.last());
        html! {
            @if let Some(t) = last {
                p class="last-trick" {
                    "Last turn: for " (gs_card(t.drawn, "lot")) " " (names.of(me)) " bid " (gs_card(t.bids[0], ""))
                    ", " (names.of(them)) " bid " (gs_card(t.bids[1], "")) " → "
                    @match (t.gained[0], t.gained[1]) {
                        (0, 0) => "a tie: the prize stays in the lot",
                        (g, 0) => { b { (names.of(me)) } " takes " (g) },
                        (_, g) => { b { (names.of(them)) } " takes " (g) },
                    }
                }
            }
            @if o.rounds.len() > 1 {
                p { "Round " (o.round + 1) " of " (o.rounds.len()) }
            }
            div class="prize" {
                @match o.current {
                    Some(c) => {
                        span class="label" { "Prize" } " " (gs_card(c, "lot prize"))
                    },
                    None => span class="muted" { "No prize: the round is over." },
                }
            }
            p class="lot" {
                // Tied turns leave their prizes in the lot for the next.
                @if o.lot.len() > 1 {
                    "With the tied prizes before it, the lot is worth " b { (worth) } ": "
                    @for c in &o.lot { (gs_card(*c, "lot")) }
                    " · "
                }
                @if let Some(n) = o.next { "next " (gs_card(n, "")) " · " }
                (o.undrawn.len()) " face down"
            }
        }
    }

    fn own_hand(o: &GoofspielObservation) -> Vec<Markup> {
        o.hand.iter().map(|c| gs_card(*c, "")).collect()
    }

    fn public_hands(o: &GoofspielObservation) -> Vec<Option<Vec<Markup>>> {
        let cards = |h: &[u8]| Some(h.iter().map(|c| gs_card(*c, "")).collect());
        let mut hands = vec![None, None];
        let me = o.seat.index().min(1);
        hands[me] = cards(&o.hand);
        hands[1 - me] = cards(&o.opponent_hand);
        hands
    }

    fn moves(o: &GoofspielObservation, legal: &[(Bid, String)], _: &Names) -> Markup {
        html! {
            p class="hint" { "Bid one of your cards for the prize:" }
            span class="hand" {
                @for c in &o.hand {
                    @match legal.iter().find(|(a, _)| *a == Bid(*c)) {
                        Some((_, text)) => button type="submit" name="action" value=(text) class="move card-move" title={ "bid " (c) } { (gs_card(*c, "")) },
                        None => span class="unplayable" { (gs_card(*c, "")) },
                    }
                }
            }
        }
    }
}
